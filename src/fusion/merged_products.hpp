// Matrix-vector products of one compiled graph that share their matrix, run as one
// matrix-matrix product (Note [merged products] in merged_products.cpp) or in one pass over
// the matrix's rows (Note [row passes] in ops/matvec_pass.cpp).
#pragma once
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "npc/dtype.hpp"
#include "npc/ndarray.hpp"

namespace npc::fusion {

// One launch of a lowered graph as a matrix-vector product: `S @ v` (side 0: S is the
// matmul's first operand) or `v @ S` (side 1), S a rows x cols view of buffer `matrix_buf`
// (byte offset `matrix_off`, byte strides mrs, mcs), v a view of buffer `vector_buf` with byte
// stride `vstride`. !ok: any other launch.
struct MatVec {
  bool ok = false;
  int side = 0;
  DType t = DType::Float64;
  int matrix_buf = -1;
  int64_t matrix_off = 0, mrs = 0, mcs = 0, rows = 0, cols = 0;
  int vector_buf = -1;
  int64_t vector_off = 0, vstride = 0;  // v's byte offset in its buffer and byte stride
  int result_buf = -1;                  // the buffer the launch writes its product into
  // The length of v and of the product.
  int64_t len() const { return side == 0 ? cols : rows; }
  int64_t out_len() const { return side == 0 ? rows : cols; }
};

// A group of two or more launches (ascending) whose products run together. `pass` false: one
// matrix-matrix product, the members on one side of the same matrix (Note [merged products]).
// `pass` true: one pass over the rows of a matrix with contiguous rows, the members on both
// sides of it (Note [row passes]); from[j] >= 0 when member j's vector is the product of
// member from[j] (an `S @ v` whose result an `r @ S` of the group reads whole), else -1.
struct ProductGroup {
  std::vector<int> members;
  bool pass = false;
  std::vector<int> from;
};

// The groups of `launches`: launches that compute matrix-vector products with one matrix (the
// same view of the same buffer) whose matrix and vectors hold at the group's first launch
// what they hold at each member's: no launch from the first member to a member writes its
// matrix's or vector's buffer, except, in a row pass, the member whose product the vector is.
// `writes[b]`: the launches that write buffer b, ascending (a buffer holds one value after
// another when the values are written in place). Sorted by first member.
std::vector<ProductGroup> group_products(std::span<const MatVec> launches, std::span<const std::vector<int>> writes);

// Computes the products of one group, whose members have the description `mv` (the matrix
// and side equal), from the matrix's address in each member (`matrices`) and each member's
// vector (`vectors`, byte strides `strides`): `results[j]` is member j's 1-D product. As views
// of one array when `views`, else arrays of their own. Returns false, storing no results,
// when the addresses do not allow it (a matrix address that differs between members, a
// misaligned address) or a product is not finite (Note [merged products]): the members then
// run one by one.
bool run_product_group(const MatVec& mv, std::span<const std::byte* const> matrices,
                       std::span<const std::byte* const> vectors, std::span<const int64_t> strides, bool views,
                       std::vector<ndarray>& results);

// Computes the products of row-pass group `g` (launches[m] describes member m; each
// launches[g.members[j]] has the same matrix view) with the matrix at `matrix` and member j's
// vector at vectors[j] (ignored when g.from[j] >= 0): results[j] is member j's product, an
// array of its own. Returns false, storing no results, for a dtype the pass does not compute,
// a misaligned address, or a product that is not finite (Note [merged products]).
bool run_row_pass(const ProductGroup& g, std::span<const MatVec> launches, const std::byte* matrix,
                  std::span<const std::byte* const> vectors, std::vector<ndarray>& results);

}  // namespace npc::fusion
