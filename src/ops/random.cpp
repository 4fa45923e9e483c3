// Samplers on NumPy's bit generators, bit-identical to numpy.random.
//
// Note [random streams]
// A program moved to npc must draw the very same numbers as under NumPy. The bit
// generators are NumPy's own objects (their state lives in NumPy, shared through the
// bitgen_t interface), and the samplers are NumPy's C distributions library
// (libnpyrandom, shipped with NumPy for exactly this use), so every value and every
// consumed word matches NumPy's whichever library serves a call. RandomState's normal
// sampler (polar method with a cached second value) is not in that library and is
// written here from its definition.
#include "npc/random.hpp"

#include <cmath>
#include <cstring>
#include <stdexcept>
#include <vector>

#include "core/dispatch.hpp"

#if NPC_HAVE_NPYRANDOM
extern "C" {
// numpy/random/distributions.h (numpy's libnpyrandom.a)
void random_standard_uniform_fill(npc::random::BitGen*, intptr_t cnt, double* out);
void random_standard_uniform_fill_f(npc::random::BitGen*, intptr_t cnt, float* out);
void random_standard_normal_fill(npc::random::BitGen*, intptr_t cnt, double* out);
void random_standard_normal_fill_f(npc::random::BitGen*, intptr_t cnt, float* out);
void random_standard_exponential_fill(npc::random::BitGen*, intptr_t cnt, double* out);
void random_standard_exponential_fill_f(npc::random::BitGen*, intptr_t cnt, float* out);
void random_standard_exponential_inv_fill(npc::random::BitGen*, intptr_t cnt, double* out);
void random_standard_exponential_inv_fill_f(npc::random::BitGen*, intptr_t cnt, float* out);
double random_standard_normal(npc::random::BitGen*);
double random_standard_exponential(npc::random::BitGen*);
uint64_t random_interval(npc::random::BitGen*, uint64_t max);
void random_bounded_uint64_fill(npc::random::BitGen*, uint64_t off, uint64_t rng, intptr_t cnt, bool use_masked,
                                uint64_t* out);
void random_bounded_uint32_fill(npc::random::BitGen*, uint32_t off, uint32_t rng, intptr_t cnt, bool use_masked,
                                uint32_t* out);
void random_bounded_uint16_fill(npc::random::BitGen*, uint16_t off, uint16_t rng, intptr_t cnt, bool use_masked,
                                uint16_t* out);
void random_bounded_uint8_fill(npc::random::BitGen*, uint8_t off, uint8_t rng, intptr_t cnt, bool use_masked,
                               uint8_t* out);
void random_bounded_bool_fill(npc::random::BitGen*, bool off, bool rng, intptr_t cnt, bool use_masked, bool* out);
}
#endif

namespace npc::random {
namespace {

// Note [inline PCG64]
// NumPy's samplers fetch each word through the bit generator's function pointer. For
// NumPy's PCG64 (the default_rng generator) the doubles of random/uniform are produced here
// with the generator's step inlined: the state (NumPy's pcg64_state, whose first member
// points at the 128-bit LCG state and increment) is loaded, advanced per word exactly as
// PCG64 does (state = state * multiplier + increment; XSL-RR output), and stored back, so
// the stream and the final state are NumPy's. The buffered 32-bit half (has_uint32) is not
// used by 64-bit draws and stays as it is.
#if defined(__SIZEOF_INT128__)
struct Pcg128 {
  unsigned __int128 state, inc;
};
struct Pcg64State {
  Pcg128* pcg;
  int has_uint32;
  uint32_t uinteger;
};
constexpr unsigned __int128 kPcgMult =
    (static_cast<unsigned __int128>(2549297995355413924ULL) << 64) | 4865540595714422341ULL;

template <class F>
void pcg64_doubles(BitGen* bg, int64_t n, F&& store) {
  Pcg128* p = static_cast<Pcg64State*>(bg->state)->pcg;
  unsigned __int128 st = p->state;
  const unsigned __int128 inc = p->inc;
  for (int64_t i = 0; i < n; ++i) {
    st = st * kPcgMult + inc;
    const uint64_t x = static_cast<uint64_t>(st >> 64) ^ static_cast<uint64_t>(st);
    const unsigned rot = static_cast<unsigned>(st >> 122);
    const uint64_t w = (x >> rot) | (x << ((64 - rot) & 63));
    store(i, static_cast<double>(w >> 11) * (1.0 / 9007199254740992.0));
  }
  p->state = st;
}
#define NPC_HAVE_INLINE_PCG64 1
#endif

void check_bitgen(const BitGen* bg) {
  if (!bg || !bg->state || !bg->next_uint64 || !bg->next_uint32 || !bg->next_double)
    throw ValueError("npc.random: the bit generator is null or incomplete");
}

void require(const BitGen* bg, const ndarray& out, bool ok_dtype) {
  check_bitgen(bg);
  if (!ok_dtype) throw TypeError("npc.random: unsupported output dtype " + std::string(name(out.dtype())));
  if (!out.is_c_contiguous() || !out.writeable())
    throw ValueError("npc.random: the output must be a writeable C-contiguous array");
#if !NPC_HAVE_NPYRANDOM
  throw std::runtime_error("npc was built without NumPy's random distributions library");
#endif
}

}  // namespace

bool available() { return NPC_HAVE_NPYRANDOM != 0; }

#if NPC_HAVE_NPYRANDOM
void standard_uniform(BitGen* bg, const ndarray& out, bool pcg64) {
  require(bg, out, out.dtype() == DType::Float64 || out.dtype() == DType::Float32);
#ifdef NPC_HAVE_INLINE_PCG64
  if (pcg64 && out.dtype() == DType::Float64) {
    double* p = reinterpret_cast<double*>(out.data());
    pcg64_doubles(bg, out.size(), [p](int64_t i, double u) { p[i] = u; });
    return;
  }
#endif
  if (out.dtype() == DType::Float64)
    random_standard_uniform_fill(bg, out.size(), reinterpret_cast<double*>(out.data()));
  else
    random_standard_uniform_fill_f(bg, out.size(), reinterpret_cast<float*>(out.data()));
}

void uniform(BitGen* bg, double low, double high, const ndarray& out, bool pcg64) {
  require(bg, out, out.dtype() == DType::Float64);
  // NumPy's random_uniform: off + scale * U with scale = high - low computed once.
  const double scale = high - low;
  double* p = reinterpret_cast<double*>(out.data());
#ifdef NPC_HAVE_INLINE_PCG64
  if (pcg64) {
    pcg64_doubles(bg, out.size(), [p, low, scale](int64_t i, double u) { p[i] = low + scale * u; });
    return;
  }
#endif
  for (int64_t i = 0, n = out.size(); i < n; ++i) p[i] = low + scale * bg->next_double(bg->state);
}

void standard_normal(BitGen* bg, const ndarray& out) {
  require(bg, out, out.dtype() == DType::Float64 || out.dtype() == DType::Float32);
  if (out.dtype() == DType::Float64)
    random_standard_normal_fill(bg, out.size(), reinterpret_cast<double*>(out.data()));
  else
    random_standard_normal_fill_f(bg, out.size(), reinterpret_cast<float*>(out.data()));
}

void normal(BitGen* bg, double loc, double scale, const ndarray& out) {
  require(bg, out, out.dtype() == DType::Float64);
  double* p = reinterpret_cast<double*>(out.data());
  for (int64_t i = 0, n = out.size(); i < n; ++i) p[i] = loc + scale * random_standard_normal(bg);
}

void standard_exponential(BitGen* bg, bool inverse, const ndarray& out) {
  require(bg, out, out.dtype() == DType::Float64 || out.dtype() == DType::Float32);
  const int64_t n = out.size();
  if (out.dtype() == DType::Float64) {
    auto* p = reinterpret_cast<double*>(out.data());
    inverse ? random_standard_exponential_inv_fill(bg, n, p) : random_standard_exponential_fill(bg, n, p);
  } else {
    auto* p = reinterpret_cast<float*>(out.data());
    inverse ? random_standard_exponential_inv_fill_f(bg, n, p) : random_standard_exponential_fill_f(bg, n, p);
  }
}

void exponential(BitGen* bg, double scale, const ndarray& out) {
  require(bg, out, out.dtype() == DType::Float64);
  double* p = reinterpret_cast<double*>(out.data());
  for (int64_t i = 0, n = out.size(); i < n; ++i) p[i] = scale * random_standard_exponential(bg);
}

void bounded_integers(BitGen* bg, uint64_t off, uint64_t rng, bool masked, const ndarray& out) {
  const DType t = out.dtype();
  require(bg, out, t == DType::Bool || is_integer(t));
  const int64_t n = out.size();
  void* p = out.data();
  switch (itemsize(t)) {
    case 8:
      random_bounded_uint64_fill(bg, off, rng, n, masked, static_cast<uint64_t*>(p));
      break;
    case 4:
      random_bounded_uint32_fill(bg, static_cast<uint32_t>(off), static_cast<uint32_t>(rng), n, masked,
                                 static_cast<uint32_t*>(p));
      break;
    case 2:
      random_bounded_uint16_fill(bg, static_cast<uint16_t>(off), static_cast<uint16_t>(rng), n, masked,
                                 static_cast<uint16_t*>(p));
      break;
    default:
      if (t == DType::Bool)
        random_bounded_bool_fill(bg, off != 0, rng != 0, n, masked, static_cast<bool*>(p));
      else
        random_bounded_uint8_fill(bg, static_cast<uint8_t>(off), static_cast<uint8_t>(rng), n, masked,
                                  static_cast<uint8_t*>(p));
  }
}

void shuffle(BitGen* bg, const ndarray& x) {
  check_bitgen(bg);
  if (x.ndim() == 0) throw ValueError("shuffle: the array must have at least one dimension");
  if (!x.writeable()) throw ValueError("array is read-only");
#if !NPC_HAVE_NPYRANDOM
  throw std::runtime_error("npc was built without NumPy's random distributions library");
#endif
  const int64_t n = x.shape()[0];
  const int64_t stride = x.strides()[0];
  std::byte* base = x.data();
  if (x.ndim() == 1) {
    const size_t isz = x.itemsize();
    std::byte buf[16];
    for (int64_t i = n - 1; i >= 1; --i) {
      const int64_t j = static_cast<int64_t>(random_interval(bg, static_cast<uint64_t>(i)));
      std::memcpy(buf, base + j * stride, isz);
      std::memcpy(base + j * stride, base + i * stride, isz);
      std::memcpy(base + i * stride, buf, isz);
    }
    return;
  }
  // Sub-arrays along axis 0: swap through a contiguous buffer.
  Shape sub(x.shape().begin() + 1, x.shape().end());
  Strides subst(x.strides().begin() + 1, x.strides().end());
  ndarray buf;
  bool have_buf = false;
  for (int64_t i = n - 1; i >= 1; --i) {
    const int64_t j = static_cast<int64_t>(random_interval(bg, static_cast<uint64_t>(i)));
    if (i == j) continue;
    ndarray ri = x.with_geometry(x.offset() + i * stride, x.dtype(), sub, subst);
    ndarray rj = x.with_geometry(x.offset() + j * stride, x.dtype(), sub, subst);
    if (!have_buf) {
      buf = ri.copy();
      have_buf = true;
    } else {
      copy_into(buf, ri);
    }
    copy_into(ri, rj);
    copy_into(rj, buf);
  }
}

void legacy_normal(BitGen* bg, double loc, double scale, int& has_gauss, double& gauss, const ndarray& out) {
  require(bg, out, out.dtype() == DType::Float64);
  double* p = reinterpret_cast<double*>(out.data());
  for (int64_t i = 0, n = out.size(); i < n; ++i) {
    double z;
    if (has_gauss) {
      z = gauss;
      has_gauss = 0;
      gauss = 0.0;
    } else {
      // Polar method: draw points in the unit disc; keep one value for the next call.
      double x1, x2, r2;
      do {
        x1 = 2.0 * bg->next_double(bg->state) - 1.0;
        x2 = 2.0 * bg->next_double(bg->state) - 1.0;
        r2 = x1 * x1 + x2 * x2;
      } while (r2 >= 1.0 || r2 == 0.0);
      const double f = std::sqrt(-2.0 * std::log(r2) / r2);
      gauss = f * x1;
      has_gauss = 1;
      z = f * x2;
    }
    p[i] = loc + scale * z;
  }
}
#else
void standard_uniform(BitGen* bg, const ndarray& out, bool) { require(bg, out, true); }
void uniform(BitGen* bg, double, double, const ndarray& out, bool) { require(bg, out, true); }
void standard_normal(BitGen* bg, const ndarray& out) { require(bg, out, true); }
void normal(BitGen* bg, double, double, const ndarray& out) { require(bg, out, true); }
void standard_exponential(BitGen* bg, bool, const ndarray& out) { require(bg, out, true); }
void exponential(BitGen* bg, double, const ndarray& out) { require(bg, out, true); }
void bounded_integers(BitGen* bg, uint64_t, uint64_t, bool, const ndarray& out) { require(bg, out, true); }
void shuffle(BitGen* bg, const ndarray& x) { require(bg, x, true); }
void legacy_normal(BitGen* bg, double, double, int&, double&, const ndarray& out) { require(bg, out, true); }
#endif

}  // namespace npc::random
