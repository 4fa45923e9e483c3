// Matrix-vector products of one compiled graph that share their matrix, run as one
// matrix-matrix product (Note [merged products] in merged_products.cpp).
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
  int64_t vstride = 0;
  // The length of v and of the product.
  int64_t len() const { return side == 0 ? cols : rows; }
  int64_t out_len() const { return side == 0 ? rows : cols; }
};

// Groups of two or more launches (indices, ascending) that compute matrix-vector products
// with one matrix (the same view of the same buffer, on the same side) whose matrix and
// vectors hold at the group's first launch what they hold at each member's: no launch from
// the first member to a member writes its matrix's or vector's buffer. `writes[b]`: the
// launches that write buffer b, ascending (a buffer holds one value after another when the
// values are written in place).
std::vector<std::vector<int>> group_products(std::span<const MatVec> launches,
                                             std::span<const std::vector<int>> writes);

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

}  // namespace npc::fusion
