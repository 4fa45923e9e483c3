#pragma once
/// \file creation.hpp
/// Array creation with NumPy's names and rules (numpy.zeros, numpy.arange, numpy.linspace, ...).
#include <cstddef>
#include <initializer_list>
#include <optional>
#include <span>
#include <vector>

#include "npc/ndarray.hpp"

namespace npc {

/// numpy.empty: uninitialised array of `shape`; ValueError for negative dims, MemoryError when too big.
ndarray empty(std::span<const int64_t> shape, DType dtype = DType::Float64, Order order = Order::C);
/// numpy.zeros.
ndarray zeros(std::span<const int64_t> shape, DType dtype = DType::Float64, Order order = Order::C);
/// numpy.ones.
ndarray ones(std::span<const int64_t> shape, DType dtype = DType::Float64, Order order = Order::C);
/// numpy.full: every element `value` cast to `dtype`.
ndarray full(std::span<const int64_t> shape, const Scalar& value, DType dtype, Order order = Order::C);

/// The axis order, outermost first, of a new array laid out like `proto` with `order`
/// (numpy.empty_like, ndarray.copy, astype): C order is the identity; Order::K ranks the axes
/// by |stride| (C- and F-contiguous prototypes: C and F order).
std::vector<int> like_axes(const ndarray& proto, Order order);
/// The axis order, outermost first, of numpy.concatenate's new result over `arrays` (of one
/// rank): NumPy's PyArray_CreateMultiSortedStridePerm (Note [concatenate layout]).
std::vector<int> concat_axes(std::span<const ndarray> arrays);
/// An uninitialised array of `shape`, C-contiguous over its axes in the order `axes`
/// (outermost first; an identity order gives a C-ordered array).
ndarray empty_in_axes(std::span<const int64_t> shape, DType dtype, const std::vector<int>& axes);
/// numpy.empty_like; Order::K keeps the prototype's memory layout; `dtype`/`shape` override.
ndarray empty_like(const ndarray& proto, std::optional<DType> dtype = {}, Order order = Order::K,
                   std::optional<Shape> shape = {});
ndarray zeros_like(const ndarray& proto, std::optional<DType> dtype = {}, Order order = Order::K,
                   std::optional<Shape> shape = {});
ndarray ones_like(const ndarray& proto, std::optional<DType> dtype = {}, Order order = Order::K,
                  std::optional<Shape> shape = {});
ndarray full_like(const ndarray& proto, const Scalar& value, std::optional<DType> dtype = {},
                  Order order = Order::K, std::optional<Shape> shape = {});

/// numpy.arange(start, stop, step, dtype): length ceil((stop - start) / step); values
/// start + i * delta with delta computed in `dtype` like NumPy's fill. ZeroDivisionError-like
/// ValueError for step 0 ("Maximum allowed size exceeded" for huge lengths).
ndarray arange(const Scalar& start, const Scalar& stop, const Scalar& step, DType dtype);
/// numpy.linspace for scalar endpoints (NumPy's formula: i * step + start, last = stop).
ndarray linspace(double start, double stop, int64_t num, bool endpoint = true, DType dtype = DType::Float64);
/// numpy.logspace: base ** linspace(start, stop).
ndarray logspace(double start, double stop, int64_t num, bool endpoint = true, double base = 10.0,
                 DType dtype = DType::Float64);
/// numpy.eye(N, M, k): ones on the k-th diagonal.
ndarray eye(int64_t n, std::optional<int64_t> m = {}, int64_t k = 0, DType dtype = DType::Float64,
            Order order = Order::C);
/// numpy.identity.
ndarray identity(int64_t n, DType dtype = DType::Float64);
/// A 1-D array holding a copy of `values`.
template <class T>
ndarray array(std::initializer_list<T> values);
/// A 1-D array of `dtype` from doubles (cast with NumPy's rules).
ndarray array(std::span<const double> values, DType dtype);
/// A 0-d array holding `v`.
ndarray scalar_array(const Scalar& v);
/// Wraps caller memory without copying (numpy.frombuffer-like): `data` is the first element,
/// the view covers the bytes its shape and (possibly negative) byte strides reach from there;
/// `release` runs when the last view dies. `valid`, when not empty, is the whole block of
/// valid memory the array lies in (its owner's, such as a NumPy base array's): the storage
/// spans it, so views of that memory beyond the array's own elements are in bounds
/// (Note [view bounds]); empty: the storage is the bytes the array reaches. ValueError for
/// null `data` under a non-empty shape, for strides of another length than the shape and
/// for an array that reaches outside `valid`.
ndarray from_memory(void* data, DType dtype, Shape shape, Strides strides, std::function<void()> release = {},
                    bool writeable = true, std::span<std::byte> valid = {});

}  // namespace npc
