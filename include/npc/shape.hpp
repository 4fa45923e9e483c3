#pragma once
/// \file shape.hpp
/// Shape manipulation and joining with NumPy's names and rules: views where NumPy returns
/// views (squeeze, expand_dims, swapaxes, moveaxis, flip, diagonal, ravel of contiguous
/// arrays), copies where it copies (concatenate, stack, repeat, roll).
#include <optional>
#include <span>
#include <vector>

#include "npc/ndarray.hpp"

namespace npc {

/// numpy.squeeze: drops the given length-1 axes (all of them when `axes` is empty and
/// `all` is true). View. ValueError "cannot select an axis to squeeze out which has size not
/// equal to one"; AxisError for bad axes.
ndarray squeeze(const ndarray& a, std::optional<std::vector<int64_t>> axes = std::nullopt);
/// numpy.expand_dims: inserts length-1 axes at `axes` (positions in the result). View.
/// AxisError for out-of-range axes, ValueError "repeated axis".
ndarray expand_dims(const ndarray& a, std::span<const int64_t> axes);
/// numpy.swapaxes. View.
ndarray swapaxes(const ndarray& a, int64_t axis1, int64_t axis2);
/// numpy.moveaxis: source axes moved to destination positions, others keep their order.
/// View. ValueError when the lists differ in length or repeat an axis.
ndarray moveaxis(const ndarray& a, std::span<const int64_t> source, std::span<const int64_t> destination);
/// numpy.flip along `axes` (all axes when nullopt). View with negated strides.
ndarray flip(const ndarray& a, std::optional<std::vector<int64_t>> axes = std::nullopt);
/// numpy.diagonal(a, offset, axis1, axis2): the diagonals as the last axis. A read-only view
/// (as NumPy). ValueError for ndim < 2 or equal axes.
ndarray diagonal(const ndarray& a, int64_t offset = 0, int64_t axis1 = 0, int64_t axis2 = 1);
/// numpy.ravel: 1-d, a view when the layout allows (order C, F, A or K), else a copy.
ndarray ravel(const ndarray& a, Order order = Order::C);

/// numpy.concatenate(arrays, axis, dtype, casting): axis nullopt flattens every input first.
/// The result dtype is numpy.result_type of the inputs unless `dtype` is given; inputs are
/// cast with `casting` (TypeError when forbidden). ValueError for an empty list, 0-d inputs,
/// mismatched ndim ("all the input array dimensions except for the concatenation axis must
/// match exactly ...") ; AxisError for bad axes. When `out` is given the result is written
/// there and returned.
ndarray concatenate(std::span<const ndarray> arrays, std::optional<int64_t> axis = 0,
                    std::optional<DType> dtype = std::nullopt, Casting casting = Casting::SameKind,
                    const ndarray* out = nullptr);
/// numpy.stack: joins equal-shaped arrays along a new axis. ValueError "all input arrays must
/// have the same shape".
ndarray stack(std::span<const ndarray> arrays, int64_t axis = 0, std::optional<DType> dtype = std::nullopt,
              Casting casting = Casting::SameKind, const ndarray* out = nullptr);
/// numpy.repeat(a, repeats, axis): `repeats` is an integer array broadcast to the axis
/// length; axis nullopt flattens. ValueError for negative repeats.
ndarray repeat(const ndarray& a, const ndarray& repeats, std::optional<int64_t> axis = std::nullopt);
/// numpy.roll(a, shifts, axes): elements shifted cyclically (flattened when `axes` empty).
/// `shifts` and `axes` broadcast against each other as NumPy broadcasts them (ValueError when
/// their lengths differ and neither is 1); AxisError for bad axes.
ndarray roll(const ndarray& a, std::span<const int64_t> shifts, std::span<const int64_t> axes);
/// numpy.tril / numpy.triu on the last two axes (k-th diagonal); a copy with zeros outside.
ndarray tril(const ndarray& a, int64_t k = 0);
ndarray triu(const ndarray& a, int64_t k = 0);

}  // namespace npc
