#pragma once
/// \file linalg.hpp
/// Matrix products on OpenBLAS (float32/64, complex64/128) and exact native loops
/// (bool, integers, float16). Mirrors numpy.matmul; the other products of numpy
/// (dot, inner, tensordot, einsum, ...) are built on it in python/npc/_linalg.py.
#include "npc/ndarray.hpp"

namespace npc {

/// numpy.matmul(a, b): (..., n, k) @ (..., k, m) -> (..., n, m) with the batch dimensions
/// broadcast; a 1-D `a` is a row (its dimension is removed from the result), a 1-D `b` a
/// column. The result dtype is promote_types(a, b); bool products are logical or-of-ands,
/// integer products wrap like NumPy's, float16 accumulates in float32.
/// Throws ValueError for 0-d operands, mismatched core dimensions and batch shapes that do
/// not broadcast (NumPy's messages).
ndarray matmul(const ndarray& a, const ndarray& b);

/// numpy.outer: the products a[i] * b[j] of the flattened inputs, shape (a.size, b.size),
/// dtype promote_types(a, b); each element is exactly NumPy's multiply (bool: and).
ndarray outer(const ndarray& a, const ndarray& b);

/// Whether npc was built with a BLAS library (matmul of floats uses it when true).
bool have_blas();

}  // namespace npc
