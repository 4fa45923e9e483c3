#pragma once
/// \file random.hpp
/// Random streams bit-identical to NumPy's: the samplers run on a bit generator that is
/// laid out like NumPy's `bitgen_t` (numpy/random/bitgen.h), so a NumPy BitGenerator
/// (PCG64, MT19937, Philox, SFC64) drives them through its C-level interface and its
/// state stays shared with NumPy. Mirrors numpy.random.Generator and numpy.random.RandomState.
#include <cstdint>

#include "npc/ndarray.hpp"

namespace npc::random {

/// Layout-compatible with NumPy's bitgen_t: an opaque state and its next-value functions.
struct BitGen {
  void* state;
  uint64_t (*next_uint64)(void* st);
  uint32_t (*next_uint32)(void* st);
  double (*next_double)(void* st);
  uint64_t (*next_raw)(void* st);
};

/// Every function below throws ValueError for a null `bg` or one with a null state or
/// next-value function, before it draws.

/// Whether the samplers were built (NumPy's distributions library was found at build
/// time); when false every function below throws NotImplementedError-like RuntimeError.
bool available();

/// Generator.random: uniform [0, 1) into `out` (float32 or float64, C-contiguous).
/// `pcg64`: the caller guarantees `bg` is NumPy's PCG64 (its state is then stepped inline,
/// Note [inline PCG64]).
void standard_uniform(BitGen* bg, const ndarray& out, bool pcg64 = false);
/// Generator.uniform with scalar bounds: low + (high - low) * U, float64 `out`.
void uniform(BitGen* bg, double low, double high, const ndarray& out, bool pcg64 = false);
/// Generator.standard_normal (ziggurat): float32 or float64 `out`.
void standard_normal(BitGen* bg, const ndarray& out);
/// Generator.normal with scalar loc/scale: loc + scale * Z, float64 `out`.
void normal(BitGen* bg, double loc, double scale, const ndarray& out);
/// Generator.standard_exponential: ziggurat (`inverse` false) or -log1p(-U); float32/64 `out`.
void standard_exponential(BitGen* bg, bool inverse, const ndarray& out);
/// Generator.exponential with a scalar scale: scale * E, float64 `out`.
void exponential(BitGen* bg, double scale, const ndarray& out);
/// Bounded integers off + [0, rng] into an integer or bool `out` (the bits of `off` and
/// `rng` are taken as unsigned of out's width). `masked`: RandomState's masked rejection;
/// otherwise Lemire's method (Generator).
void bounded_integers(BitGen* bg, uint64_t off, uint64_t rng, bool masked, const ndarray& out);
/// Fisher-Yates shuffle along axis 0 of `x` in place, drawing j = interval(i) for
/// i = n-1 .. 1 as NumPy's Generator.shuffle and RandomState.shuffle do.
void shuffle(BitGen* bg, const ndarray& x);
/// RandomState's polar-method normals; `has_gauss`/`gauss` are the cached second value
/// of NumPy's legacy state, read and updated. float64 `out`; result loc + scale * Z.
void legacy_normal(BitGen* bg, double loc, double scale, int& has_gauss, double& gauss, const ndarray& out);

}  // namespace npc::random
