#pragma once
// Internal: fusion grouping and lowering of an ir::Graph into kernels (lower_group.cpp; the
// kernel emitter is lower_internal.hpp, lower_expr.cpp and lower_reduce.cpp).
#include <map>
#include <set>
#include <string>
#include <vector>

#include "fusion/kernel_ir.hpp"
#include "npc/fusion.hpp"
#include "npc/graph.hpp"

namespace npc::fusion {

using ir::NodeRef;
using ir::NodeKind;
using ir::ViewKind;
using ir::Dim;
using ir::SymShape;

/// A buffer of a lowered program.
struct BufInfo {
  enum Kind { Input, Scalars, Temp } kind = Temp;
  int index = -1;           ///< Input: graph input index
  DType dtype = DType::Float64;
  SymShape shape;
  bool contiguous = true;   ///< C-contiguous (element strides known from the shape)
  int stride_base = 0;      ///< non-contiguous inputs: first entry in the runtime stride table
  int scalar_slot = -1;     ///< runtime scalars: 16-byte slot in the scalar block
  NodeRef node = nullptr;   ///< Temp: the materialised value
};

/// Lowering state shared by the emitters of one graph.
struct LowerState {
  std::vector<BufInfo> bufs;
  std::map<NodeRef, int> buffer_of;        ///< value -> buffer holding it
  std::map<NodeRef, int> input_buffer_of;  ///< materialised inputs -> their input buffer
  std::set<NodeRef> materialised;
  int scalar_buffer = -1;
  bool is_input(NodeRef n) const;
  bool can_materialise(NodeRef n) const;
};

/// One kernel launch: function `fn` on global buffers `bufs`, computing `roots`. A library
/// call (Note [library calls]) has fn == -1 and one root, the library node; its operands
/// are views (args[k]: a chain of View nodes) over the buffers in `bufs`.
struct Launch {
  int fn;
  std::vector<int> bufs;
  std::vector<NodeRef> roots;
  std::vector<int64_t> params;  ///< the kernel's launch parameters (Note [generic kernels])
};

/// Whether `n` runs as a library call (matmul: BLAS) rather than in a generated kernel.
bool is_library_call(NodeRef n);
/// The node whose buffer a library operand reads: `a` without its View chain.
NodeRef library_operand_base(NodeRef a);

/// The node whose buffer holds graph output `o`: `o` itself, or for a transpose (of
/// transposes) of a value the graph computes (a result in NumPy's layout, recorded over permuted axes: Note [output
/// layout] in src/ops/ufunc.cpp) that value, whose buffer the output is a transposed view of.
NodeRef output_root(NodeRef o);

/// A lowered graph: distinct kernels (structurally identical loop nests are emitted once)
/// and the launches in program order.
struct Lowered {
  std::vector<Kernel> kernels;
  std::vector<std::string> kernel_text;  ///< C++ of each kernel, function name "@NAME@"
  std::vector<Launch> launches;
  std::vector<BufInfo> bufs;
  std::map<NodeRef, int> buffer_of, input_buffer_of;
  int scalar_buffer = -1;
  int num_strides = 0;
  int passes = 1;  ///< groupings tried (Note [materialisations found in one pass] in lower_expr.cpp)
};

/// Lowers `g`; `contiguous[i]` says whether input i is C-contiguous on this call.
Lowered lower(const ir::Graph& g, const std::vector<bool>& contiguous);
/// The translation unit for `l`, kernel functions named npc_<tag>_k<i> (returned in `names`).
std::string translation_unit(const Lowered& l, std::vector<std::string>& names, const std::string& tag);

void bump_stat(int64_t Stats::*field, int64_t by);

/// The lowered-program cache (Note [lowered-program cache] in lower_cache.cpp). The key of
/// lowering `g` with input contiguity `contiguous` ("" when `g` cannot be cached).
std::string lowering_key(const ir::Graph& g, const std::vector<bool>& contiguous);
/// Reads the lowering of `key` from cfg.cache_dir into `low` (without its kernel IR:
/// `low.kernels` stays empty) and the per-launch in-place buffers into `in_place`; false on a
/// miss or a refused entry, leaving both untouched.
bool load_lowering(const ir::Graph& g, const std::string& key, const Config& cfg, Lowered& low,
                   std::vector<int>& in_place);
/// Stores `low` and `in_place` under `key` (quietly nothing when the cache is not writable).
void store_lowering(const ir::Graph& g, const std::string& key, const Config& cfg, const Lowered& low,
                    const std::vector<int>& in_place);

}  // namespace npc::fusion
