// NumPy indexing: basic indexing as views, advanced indexing as gather/scatter copies.
#include "npc/indexing.hpp"

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <string>

#include "core/cast.hpp"
#include "core/dispatch.hpp"
#include "core/parallel.hpp"
#include "npc/creation.hpp"
#include "npc/ops.hpp"

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#endif

namespace npc {

namespace {
IndexTraceHook g_get_hook = nullptr;
IndexAssignTraceHook g_set_hook = nullptr;

constexpr const char* kValidIndices =
    "only integers, slices (`:`), ellipsis (`...`), numpy.newaxis (`None`) and integer or boolean arrays are "
    "valid indices";

struct SliceRange {
  int64_t start, step, count;
};

// Python's slice.indices(n) followed by the slice length (PySlice_AdjustIndices).
SliceRange slice_range(const Slice& s, int64_t n) {
  int64_t step = s.step.value_or(1);
  if (step == 0) throw ValueError("slice step cannot be zero");
  step = std::max(step, -std::numeric_limits<int64_t>::max());
  auto clamp = [&](std::optional<int64_t> v, int64_t dflt) {
    if (!v) return dflt;
    int64_t x = *v;
    if (x < 0) {
      x += n;
      if (x < 0) x = step < 0 ? -1 : 0;
    } else if (x >= n) {
      x = step < 0 ? n - 1 : n;
    }
    return x;
  };
  int64_t start = clamp(s.start, step < 0 ? n - 1 : 0);
  int64_t stop = clamp(s.stop, step < 0 ? -1 : n);
  int64_t count = 0;
  if (step < 0) {
    if (stop < start) count = (start - stop - 1) / (-step) + 1;
  } else if (start < stop) {
    count = (stop - start - 1) / step + 1;
  }
  return {start, step, count};
}

// NumPy's spelling in advanced-assignment messages: "(2,3)", "(2,)".
std::string compact_shape(const Shape& s) {
  std::string r = "(";
  for (size_t i = 0; i < s.size(); ++i) r += (i ? "," : "") + std::to_string(s[i]);
  return r + (s.size() == 1 ? ",)" : ")");
}

bool is_bool_array(const IndexItem& it) { return it.kind == IndexItem::Kind::Array && it.array.dtype() == DType::Bool; }

// An index array that behaves like an integer (0-d, integer dtype).
bool is_int_scalar_array(const IndexItem& it) {
  return it.kind == IndexItem::Kind::Array && it.array.ndim() == 0 && is_integer(it.array.dtype());
}

bool is_advanced(const IndexItem& it) { return it.kind == IndexItem::Kind::Array && !is_int_scalar_array(it); }

// The index after basic indexing: a view geometry whose dims are either plain (kept in the
// result) or advanced (indexed by one of `arrays`).
struct Prepared {
  int64_t offset = 0;
  Shape shape;
  Strides strides;
  std::vector<bool> adv;          // per view dim: indexed by an array
  std::vector<ndarray> arrays;    // int64 index arrays, one per advanced view dim (in order)
  std::vector<int> array_dim;     // the view dim of each array
  std::vector<int> array_axis;    // the axis of `a` it indexes (for messages)
  bool adjacent = true;           // advanced items consecutive in the key
  bool scalar = false;            // integers only, one per dimension
  bool any_adv = false;
};

void check_index_array_dtype(const ndarray& arr) {
  if (!is_integer(arr.dtype()) && arr.dtype() != DType::Bool)
    throw IndexError("arrays used as indices must be of integer (or boolean) type");
}

int64_t item_int(const ndarray& arr) { return arr.item().as_int(); }

Prepared prepare(const ndarray& a, std::span<const IndexItem> idx) {
  Prepared p;
  const int nd = a.ndim();
  int ellipses = 0, consumed = 0, new_axes = 0, ints = 0;
  bool only_ints = true;
  for (const IndexItem& it : idx) {
    switch (it.kind) {
      case IndexItem::Kind::Ellipsis: ++ellipses; only_ints = false; break;
      case IndexItem::Kind::NewAxis: ++new_axes; only_ints = false; break;
      case IndexItem::Kind::Integer: ++consumed; ++ints; break;
      case IndexItem::Kind::Slice: ++consumed; only_ints = false; break;
      case IndexItem::Kind::Array:
        check_index_array_dtype(it.array);
        if (is_int_scalar_array(it)) { ++consumed; break; }
        only_ints = false;
        p.any_adv = true;
        consumed += it.array.dtype() == DType::Bool ? it.array.ndim() : 1;
        break;
    }
  }
  if (ellipses > 1) throw IndexError("an index can only have a single ellipsis ('...')");
  if (consumed > nd)
    throw IndexError("too many indices for array: array is " + std::to_string(nd) + "-dimensional, but " +
                     std::to_string(consumed) + " were indexed");
  // NumPy's NPY_MAXDIMS, checked before any view is made.
  if (nd - ints + new_axes > 64)
    throw IndexError("number of dimensions must be within [0, 64], indexing result would have " +
                     std::to_string(nd - ints + new_axes));
  p.scalar = only_ints && consumed == nd;
  p.offset = a.offset();
  int d = 0;                     // next axis of `a`
  int first_adv = -1, last_adv = -1, n_adv_items = 0;
  auto push = [&](int64_t n, int64_t stride, bool adv) {
    p.shape.push_back(n);
    p.strides.push_back(stride);
    p.adv.push_back(adv);
  };
  auto push_array = [&](ndarray arr, int axis) {
    p.arrays.push_back(std::move(arr));
    p.array_dim.push_back(static_cast<int>(p.shape.size()) - 1);
    p.array_axis.push_back(axis);
  };
  for (size_t pos = 0; pos < idx.size(); ++pos) {
    const IndexItem& it = idx[pos];
    const bool int_like = it.kind == IndexItem::Kind::Integer || is_int_scalar_array(it);
    const bool adv = is_advanced(it) || (p.any_adv && int_like);
    if (adv) {
      if (first_adv < 0) first_adv = static_cast<int>(pos);
      last_adv = static_cast<int>(pos);
      ++n_adv_items;
    }
    if (int_like) {
      int64_t i = it.kind == IndexItem::Kind::Integer ? it.integer : item_int(it.array);
      const int64_t n = a.shape()[d];
      if (i < -n || i >= n)
        throw IndexError("index " + std::to_string(i) + " is out of bounds for axis " + std::to_string(d) +
                         " with size " + std::to_string(n));
      if (adv) {
        push(a.shape()[d], a.strides()[d], true);
        push_array(scalar_array(Scalar::from_int(i)), d);
      } else {
        if (i < 0) i += n;
        p.offset += i * a.strides()[d];
      }
      ++d;
      continue;
    }
    switch (it.kind) {
      case IndexItem::Kind::Slice: {
        SliceRange r = slice_range(it.slice, a.shape()[d]);
        if (r.count > 0) p.offset += r.start * a.strides()[d];
        // A huge step selects at most one element; its stride product may not fit and then
        // wraps as NumPy's does (the stride is never used), without signed-overflow UB.
        int64_t stride;
        __builtin_mul_overflow(r.step, a.strides()[d], &stride);
        push(r.count, stride, false);
        ++d;
        break;
      }
      case IndexItem::Kind::Ellipsis:
        for (int k = 0; k < nd - consumed; ++k, ++d) push(a.shape()[d], a.strides()[d], false);
        break;
      case IndexItem::Kind::NewAxis: push(1, 0, false); break;
      case IndexItem::Kind::Array: {
        const ndarray& arr = it.array;
        if (arr.dtype() == DType::Bool) {
          if (arr.ndim() == 0) {
            // A scalar boolean adds an axis of length 1, selected (True) or not (False).
            push(1, 0, true);
            int64_t n = arr.item().as_bool() ? 1 : 0;
            push_array(zeros(std::vector<int64_t>{n}, DType::Int64), d);
            break;
          }
          for (int k = 0; k < arr.ndim(); ++k) {
            // A zero-length mask axis matches any axis (NumPy accepts it).
            if (arr.shape()[k] != a.shape()[d + k] && arr.shape()[k] != 0)
              throw IndexError("boolean index did not match indexed array along axis " + std::to_string(d + k) +
                               "; size of axis is " + std::to_string(a.shape()[d + k]) +
                               " but size of corresponding boolean axis is " + std::to_string(arr.shape()[k]));
          }
          std::vector<ndarray> nz = nonzero(arr);
          for (int k = 0; k < arr.ndim(); ++k, ++d) {
            push(a.shape()[d], a.strides()[d], true);
            push_array(nz[k], d);
          }
        } else {
          push(a.shape()[d], a.strides()[d], true);
          push_array(arr.dtype() == DType::Int64 ? arr : arr.astype(DType::Int64), d);
          ++d;
        }
        break;
      }
      default: break;
    }
  }
  for (; d < nd; ++d) push(a.shape()[d], a.strides()[d], false);
  p.adjacent = n_adv_items == 0 || last_adv - first_adv + 1 == n_adv_items;
  return p;
}

bool any_traced(const ndarray& a, std::span<const IndexItem> idx) {
  if (a.is_traced()) return true;
  for (const IndexItem& it : idx)
    if (it.kind == IndexItem::Kind::Array && it.array.is_traced()) return true;
  return false;
}

// Byte offsets, relative to the view start, of the elements the broadcast index arrays
// select (in C order over the broadcast shape B).
struct Gather {
  Shape bshape;                    // B
  std::vector<int64_t> boff;       // one offset per element of B
  Shape out_shape;                 // the result's shape
  std::vector<int64_t> poff, qoff; // offsets of the plain dims before (P) and after (Q) B
  int64_t qn = 1;
  bool q_contig = true;            // Q is one contiguous run of qn elements
};

// Offsets of all elements of (shape, strides) in C order.
std::vector<int64_t> offsets_c_order(const Shape& shape, const Strides& strides) {
  int64_t n = 1;
  for (int64_t s : shape) n *= s;
  std::vector<int64_t> out(static_cast<size_t>(n));
  if (n == 0) return out;
  std::vector<int64_t> idx(shape.size(), 0);
  int64_t cur = 0;
  for (int64_t k = 0; k < n; ++k) {
    out[k] = cur;
    for (int d = static_cast<int>(shape.size()) - 1; d >= 0; --d) {
      cur += strides[d];
      if (++idx[d] < shape[d]) break;
      cur -= strides[d] * shape[d];
      idx[d] = 0;
    }
  }
  return out;
}

// The first index of `arr` (int64) out of [-n, n) in memory order, as NumPy checks an index
// array (an iterator in K order over the array itself, before broadcasting): for a transposed
// or broadcast index array, NumPy names another bad index than a C-order scan finds.
int64_t first_bad_in_memory_order(const ndarray& arr, int64_t n, int64_t fallback) {
  const ndarray k = arr.copy(Order::K);  // laid out in arr's memory order
  const int64_t* v = reinterpret_cast<const int64_t*>(k.data());
  for (int64_t j = 0; j < k.size(); ++j)
    if (v[j] < -n || v[j] >= n) return v[j];
  return fallback;
}

Gather plan_gather(const ndarray& a, const Prepared& p) {
  Gather g;
  std::vector<Shape> shapes;
  for (const ndarray& arr : p.arrays) shapes.push_back(arr.shape());
  try {
    g.bshape = broadcast_shapes(shapes);
  } catch (const ValueError&) {
    std::string msg = "shape mismatch: indexing arrays could not be broadcast together with shapes ";
    for (const Shape& s : shapes) msg += shape_str(s) + " ";
    throw IndexError(msg);
  }
  int64_t nb = shape_size(g.bshape);
  g.boff.assign(static_cast<size_t>(nb), 0);
  for (size_t k = 0; k < p.arrays.size(); ++k) {
    // An empty broadcast checks no index array (integers were checked in prepare()).
    if (nb == 0) break;
    ndarray b = broadcast_to(p.arrays[k], g.bshape);
    const int64_t cnt = nb;
    if (!b.is_c_contiguous()) b = b.copy(Order::C);
    const int64_t* v = reinterpret_cast<const int64_t*>(b.data());
    const int dim = p.array_dim[k];
    const int64_t n = p.shape[dim], stride = p.strides[dim];
    int64_t* off = g.boff.data();
    int64_t bad = 0;
    bool fail = false;
    for (int64_t j = 0; j < cnt; ++j) {
      int64_t i = v[j];
      int64_t w = i < 0 ? i + n : i;
      if (static_cast<uint64_t>(w) >= static_cast<uint64_t>(n)) { fail = true; bad = i; break; }
      if (nb) off[j] += w * stride;
    }
    if (fail) {
      bad = first_bad_in_memory_order(p.arrays[k], n, bad);
      throw IndexError("index " + std::to_string(bad) + " is out of bounds for axis " +
                       std::to_string(p.array_axis[k]) + " with size " + std::to_string(n));
    }
  }
  // Plain dims: P (before B, only when the advanced dims are adjacent) and Q (after).
  Shape ps, qs;
  Strides pst, qst;
  int first = -1;
  for (size_t d = 0; d < p.shape.size(); ++d)
    if (p.adv[d]) { first = static_cast<int>(d); break; }
  for (size_t d = 0; d < p.shape.size(); ++d) {
    if (p.adv[d]) continue;
    if (p.adjacent && static_cast<int>(d) < first) { ps.push_back(p.shape[d]); pst.push_back(p.strides[d]); }
    else { qs.push_back(p.shape[d]); qst.push_back(p.strides[d]); }
  }
  g.out_shape = ps;
  g.out_shape.insert(g.out_shape.end(), g.bshape.begin(), g.bshape.end());
  g.out_shape.insert(g.out_shape.end(), qs.begin(), qs.end());
  shape_size(g.out_shape, a.itemsize());
  g.poff = offsets_c_order(ps, pst);
  g.qoff = offsets_c_order(qs, qst);
  g.qn = static_cast<int64_t>(g.qoff.size());
  // Q is contiguous when its C-order offsets step by one element.
  int64_t expect = static_cast<int64_t>(a.itemsize());
  for (int d = static_cast<int>(qs.size()) - 1; d >= 0; --d) {
    if (qs[d] != 1 && qst[d] != expect) { g.q_contig = false; break; }
    expect *= qs[d];
  }
  return g;
}

// dst (contiguous, out_shape) <- src elements; N is the element size in bytes.
// Note [parallel gathers]
// Gathers, single-index gathers and masked fills split over threads only from 2M elements,
// as memory-bound eager loops do (Note [memory-bound threads] in src/ops/registry.cpp): with
// OpenMP regions, which wait for their slowest thread, on two cores shared with other
// processes a 300,000-element x[indices] took 6.2 ms on two threads against NumPy's 0.8 ms on
// one. They run on the thread pool (Note [thread pool] in src/core/parallel.cpp).
// (Note [no idle parallel regions]: below that, no region is entered at all.)
constexpr int64_t kParallelCopy = int64_t{1} << 21;

template <size_t N>
void gather_loop(std::byte* dst, const std::byte* base, const Gather& g) {
  const int64_t nb = static_cast<int64_t>(g.boff.size());
  const int64_t* boff = g.boff.data();
  if (g.qn == 1) {
    const int64_t q0 = g.qoff.empty() ? 0 : g.qoff[0];
    for (int64_t p : g.poff) {
      const std::byte* src = base + p + q0;
      if (nb > kParallelCopy) {  // Note [parallel gathers]
        const int nt = parallel::threads_for(nb);
        parallel::for_ranges(nt, nb, 8 * int64_t{nt}, [&](int64_t lo, int64_t hi) {
          for (int64_t j = lo; j < hi; ++j) std::memcpy(dst + j * N, src + boff[j], N);
        });
      } else {
        for (int64_t j = 0; j < nb; ++j) std::memcpy(dst + j * N, src + boff[j], N);
      }
      dst += nb * N;
    }
    return;
  }
  const size_t row = static_cast<size_t>(g.qn) * N;
  for (int64_t p : g.poff) {
    for (int64_t j = 0; j < nb; ++j) {
      const std::byte* src = base + p + boff[j];
      if (g.q_contig && g.qn > 0) {
        std::memcpy(dst, src + g.qoff[0], row);
      } else {
        for (int64_t q = 0; q < g.qn; ++q) std::memcpy(dst + q * N, src + g.qoff[q], N);
      }
      dst += row;
    }
  }
}

// The inverse: elements of `src` (contiguous, out_shape) written to their places. Sequential,
// so with repeated indices the last write wins (NumPy's behaviour).
template <size_t N>
void scatter_loop(std::byte* base, const std::byte* src, const Gather& g) {
  const int64_t nb = static_cast<int64_t>(g.boff.size());
  for (int64_t p : g.poff) {
    for (int64_t j = 0; j < nb; ++j) {
      std::byte* dst = base + p + g.boff[j];
      for (int64_t q = 0; q < g.qn; ++q) {
        std::memcpy(dst + g.qoff[q], src, N);
        src += N;
      }
    }
  }
}

template <template <size_t> class F, class... Args>
void by_itemsize(size_t n, Args&&... args) {
  switch (n) {
    case 1: F<1>::run(args...); break;
    case 2: F<2>::run(args...); break;
    case 4: F<4>::run(args...); break;
    case 8: F<8>::run(args...); break;
    default: F<16>::run(args...); break;
  }
}
template <size_t N> struct GatherF { static void run(std::byte* d, const std::byte* s, const Gather& g) { gather_loop<N>(d, s, g); } };
template <size_t N> struct ScatterF { static void run(std::byte* d, const std::byte* s, const Gather& g) { scatter_loop<N>(d, s, g); } };

// Fast path for a[mask] with a C-contiguous `a` and a C-contiguous mask over its leading axes.
// A 16-byte element (complex128) moved as two 8-byte words, not through memcpy per element.
struct Bytes16 {
  uint64_t lo, hi;
};

// Note [vector mask compress]
// With AVX-512 (F, BW, VL), 8- and 16-byte elements are compressed eight mask bytes at a
// time: the mask bytes' truth bits select lanes of a 512-bit load (vpcompressq into a
// register; its memory form is slow on some CPUs), stored whole while at least eight output
// slots remain: a[mask] of 62,500 int64 values took 1.5x NumPy's time with the byte loop.
// Returns the input and output positions reached; the byte loop finishes.
#if defined(__x86_64__) && defined(__GNUC__)
#define NPC_MASK_COMPRESS 1
bool has_avx512_compress() {
  static const bool has = [] {
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
           __builtin_cpu_supports("avx512vl");
  }();
  return has;
}

__attribute__((target("avx512f,avx512bw,avx512vl,popcnt"))) void compress_avx512(const std::byte* src, const uint8_t* mk,
                                                                                int64_t n, std::byte* dst, int64_t cnt,
                                                                                size_t isz, int64_t* pi, int64_t* pj) {
  static constexpr uint8_t kPairs[16] = {0x00, 0x03, 0x0c, 0x0f, 0x30, 0x33, 0x3c, 0x3f,
                                         0xc0, 0xc3, 0xcc, 0xcf, 0xf0, 0xf3, 0xfc, 0xff};
  const auto* s = reinterpret_cast<const int64_t*>(src);
  auto* d = reinterpret_cast<int64_t*>(dst);
  int64_t i = 0, j = 0;
  for (; i + 8 <= n && j + 8 <= cnt; i += 8) {
    const __m128i bytes = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(mk + i));
    const auto k = static_cast<unsigned>(_mm_test_epi8_mask(bytes, bytes)) & 0xffu;
    if (k == 0) continue;
    if (isz == 8) {
      _mm512_storeu_si512(d + j, _mm512_maskz_compress_epi64(static_cast<__mmask8>(k), _mm512_loadu_si512(s + i)));
      j += __builtin_popcount(k);
    } else {  // 16 bytes: four elements (eight words) per vector, each mask bit taken twice
      const unsigned k0 = k & 0xf, k1 = k >> 4;
      _mm512_storeu_si512(d + 2 * j, _mm512_maskz_compress_epi64(kPairs[k0], _mm512_loadu_si512(s + 2 * i)));
      j += __builtin_popcount(k0);
      _mm512_storeu_si512(d + 2 * j, _mm512_maskz_compress_epi64(kPairs[k1], _mm512_loadu_si512(s + 2 * i + 8)));
      j += __builtin_popcount(k1);
    }
  }
  *pi = i;
  *pj = j;
}
#else
#define NPC_MASK_COMPRESS 0
#endif

// Whether the 64 bytes at p are all zero.
inline bool zero64(const uint8_t* p) {
  uint64_t w[8];
  std::memcpy(w, p, sizeof w);
  return ((w[0] | w[1]) | (w[2] | w[3]) | ((w[4] | w[5]) | (w[6] | w[7]))) == 0;
}

// The number of nonzero bytes among mk[0, n) (any nonzero byte is true, Note [bool bytes]).
// Note [sparse masks]
// A mask that selects a ring or a band of an image is mostly zero bytes; the count and the
// selection skip 64 zero bytes at a time (one OR of eight words). The count of other blocks
// is branch-free, eight bytes per word: the high bit of each byte of `t` is set exactly when
// that byte is nonzero, the words' truth bits add up bytewise (at most 8 per byte), and a
// multiply sums the bytes (no popcount: a library call in a baseline x86-64 build). A
// byte-at-a-time loop counted a 490,000-element mask at a tenth of NumPy's speed, and a
// branch per word mispredicts on masks of scattered elements.
int64_t count_true_bytes(const uint8_t* mk, int64_t n) {
  constexpr uint64_t kLow7 = 0x7f7f7f7f7f7f7f7full, kHigh = 0x8080808080808080ull;
  constexpr uint64_t kOnes = 0x0101010101010101ull;
  auto truth = [&](uint64_t w) { return ((((w & kLow7) + kLow7) | w) & kHigh) >> 7; };
  int64_t cnt = 0, i = 0;
  for (; i + 64 <= n; i += 64) {
    uint64_t w[8];
    std::memcpy(w, mk + i, sizeof w);
    if (((w[0] | w[1]) | (w[2] | w[3]) | ((w[4] | w[5]) | (w[6] | w[7]))) == 0) continue;
    uint64_t acc = 0;
    for (int k = 0; k < 8; ++k) acc += truth(w[k]);
    cnt += static_cast<int64_t>((acc * kOnes) >> 56);
  }
  for (; i + 8 <= n; i += 8) {
    uint64_t w;
    std::memcpy(&w, mk + i, sizeof w);
    cnt += static_cast<int64_t>((truth(w) * kOnes) >> 56);
  }
  for (; i < n; ++i) cnt += mk[i] != 0;
  return cnt;
}

bool try_mask_select(const ndarray& a, std::span<const IndexItem> idx, ndarray& out) {
  if (idx.empty() || idx.size() > 2 || !is_bool_array(idx[0]) || idx[0].array.ndim() == 0) return false;
  if (idx.size() == 2 && idx[1].kind != IndexItem::Kind::Ellipsis) return false;
  const ndarray& m = idx[0].array;
  if (m.ndim() > a.ndim() || !a.is_c_contiguous() || !m.is_c_contiguous()) return false;
  for (int k = 0; k < m.ndim(); ++k)
    if (m.shape()[k] != a.shape()[k] || m.shape()[k] == 0) return false;
  const int64_t n = m.size();
  const uint8_t* mk = reinterpret_cast<const uint8_t*>(m.data());
  const int64_t cnt = count_true_bytes(mk, n);
  Shape os{cnt};
  os.insert(os.end(), a.shape().begin() + m.ndim(), a.shape().end());
  out = empty(os, a.dtype());
  const size_t row = static_cast<size_t>(shape_size(std::span(a.shape()).subspan(m.ndim()))) * a.itemsize();
  const std::byte* src = a.data();
  std::byte* dst = out.data();
  auto compress = [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* s = reinterpret_cast<const T*>(src);
    T* d = reinterpret_cast<T*>(dst);
    int64_t j = 0, i = 0;
#if NPC_MASK_COMPRESS
    if constexpr (sizeof(T) == 8 || sizeof(T) == 16) {  // Note [vector mask compress]
      if (has_avx512_compress()) compress_avx512(src, mk, n, dst, cnt, sizeof(T), &i, &j);
    }
#endif
    // Eight mask bytes at a time: runs of unselected elements are skipped whole; otherwise
    // branch-free (write every element, advance only past selected ones) while at least
    // eight slots remain in the output.
    for (; i + 8 <= n && j < cnt; i += 8) {
      if ((i & 63) == 0 && i + 64 <= n && zero64(mk + i)) {
        i += 56;
        continue;
      }
      uint64_t w;
      std::memcpy(&w, mk + i, sizeof w);
      if (w == 0) continue;
      if (j + 8 <= cnt) {
        for (int k = 0; k < 8; ++k) {
          d[j] = s[i + k];
          j += mk[i + k] != 0;
        }
      } else {
        for (int k = 0; k < 8; ++k)
          if (mk[i + k]) d[j++] = s[i + k];
      }
    }
    for (; i < n && j < cnt; ++i)
      if (mk[i]) d[j++] = s[i];
  };
  if (row == 16) compress(detail::TypeTag<Bytes16>{});  // complex128
  else if (row == 8) compress(detail::TypeTag<uint64_t>{});
  else if (row == 4) compress(detail::TypeTag<uint32_t>{});
  else if (row == 2) compress(detail::TypeTag<uint16_t>{});
  else if (row == 1) compress(detail::TypeTag<uint8_t>{});
  else {
    for (int64_t i = 0; i < n; ++i)
      if (mk[i]) { std::memcpy(dst, src + i * row, row); dst += row; }
  }
  return true;
}

// a[idx] with one index array over a 1-d view (take, a[idx]): bounds check and gather in
// one pass, without the offset table of the general path. The loop keeps its pointers and
// bounds in registers (no lambda capturing them by reference: a store through std::byte*
// may alias anything whose address is taken, so those would be reloaded per element) and
// checks each index by one predictable branch. Returns the position of the first index out
// of bounds, or `hi` (the output may then be partly written: it is discarded).
template <size_t N>
int64_t gather_range(std::byte* __restrict dst, const std::byte* __restrict src, const int64_t* __restrict idx,
                     int64_t lo, int64_t hi, int64_t n, int64_t stride) {
  for (int64_t j = lo; j < hi; ++j) {
    int64_t i = idx[j];
    i += i < 0 ? n : 0;
    if (static_cast<uint64_t>(i) >= static_cast<uint64_t>(n)) [[unlikely]] return j;
    std::memcpy(dst + j * static_cast<int64_t>(N), src + i * stride, N);
  }
  return hi;
}

template <size_t N>
struct SingleGatherF {
  static void run(std::byte* dst, const std::byte* src, const int64_t* idx, int64_t m, int64_t n, int64_t stride,
                  int64_t* bad) {
    int64_t first_bad = m;
    if (m > kParallelCopy) {  // Note [parallel gathers]
      std::atomic<int64_t> bad_at{m};
      parallel::for_ranges(parallel::threads_for(m), m, 64, [&](int64_t lo, int64_t hi) {
        const int64_t j = gather_range<N>(dst, src, idx, lo, hi, n, stride);
        if (j < hi) {
          int64_t cur = bad_at.load();
          while (j < cur && !bad_at.compare_exchange_weak(cur, j)) {}
        }
      });
      first_bad = bad_at.load();
    } else {
      first_bad = gather_range<N>(dst, src, idx, 0, m, n, stride);
    }
    *bad = first_bad < m ? first_bad : -1;
  }
};

bool try_single_gather(const ndarray& a, const Prepared& p, ndarray& out) {
  if (p.arrays.size() != 1 || p.shape.size() != 1) return false;
  const ndarray& ind = p.arrays[0];
  if (ind.dtype() != DType::Int64 || !ind.is_c_contiguous()) return false;
  out = empty(ind.shape(), a.dtype());
  const int64_t m = ind.size();
  if (m == 0) return true;
  int64_t bad = -1;
  const int64_t* iv = reinterpret_cast<const int64_t*>(ind.data());
  const std::byte* src = a.storage()->data() + p.offset;
  std::byte* dst = out.data();
  switch (a.itemsize()) {
    case 1: SingleGatherF<1>::run(dst, src, iv, m, p.shape[0], p.strides[0], &bad); break;
    case 2: SingleGatherF<2>::run(dst, src, iv, m, p.shape[0], p.strides[0], &bad); break;
    case 4: SingleGatherF<4>::run(dst, src, iv, m, p.shape[0], p.strides[0], &bad); break;
    case 8: SingleGatherF<8>::run(dst, src, iv, m, p.shape[0], p.strides[0], &bad); break;
    default: SingleGatherF<16>::run(dst, src, iv, m, p.shape[0], p.strides[0], &bad); break;
  }
  if (bad >= 0)
    throw IndexError("index " + std::to_string(iv[bad]) + " is out of bounds for axis " +
                     std::to_string(p.array_axis[0]) + " with size " + std::to_string(p.shape[0]));
  return true;
}

// a[idx] = value for a 1-d `a`, one int64 index array and a value of a's dtype that is one
// element or one per index (contiguous, of the index's shape, not a's memory): every index
// is checked first (nothing is written when one is out of bounds, as the general path), then
// the elements are stored in index order (a repeated index keeps the last value). Without
// the offset tables, broadcast value and copy of the general path.
template <size_t N>
void single_scatter(std::byte* dst, int64_t stride, int64_t n, const int64_t* iv, int64_t m, const std::byte* v,
                    bool one) {
  for (int64_t j = 0; j < m; ++j) {
    const int64_t i = iv[j] + (iv[j] < 0 ? n : 0);
    std::memcpy(dst + i * stride, one ? v : v + j * static_cast<int64_t>(N), N);
  }
}

bool try_single_scatter(const ndarray& a, std::span<const IndexItem> idx, const ndarray& value) {
  if (idx.size() != 1 || idx[0].kind != IndexItem::Kind::Array || a.ndim() != 1) return false;
  const ndarray& ind = idx[0].array;
  if (ind.dtype() != DType::Int64 || ind.ndim() == 0 || !ind.is_c_contiguous() || ind.storage() == a.storage())
    return false;
  if (value.dtype() != a.dtype()) return false;
  const bool one = value.size() == 1;
  if (!one && (value.shape() != ind.shape() || !value.is_c_contiguous() || value.storage() == a.storage())) return false;
  const int64_t n = a.shape()[0], m = ind.size();
  const int64_t* iv = reinterpret_cast<const int64_t*>(ind.data());
  bool ok = true;
  for (int64_t j = 0; j < m; ++j) ok &= (iv[j] >= -n) & (iv[j] < n);
  if (!ok) {
    for (int64_t j = 0; j < m; ++j)
      if (iv[j] < -n || iv[j] >= n)
        throw IndexError("index " + std::to_string(iv[j]) + " is out of bounds for axis 0 with size " + std::to_string(n));
  }
  std::byte* dst = a.data();
  const std::byte* v = value.data();
  const int64_t st = a.strides()[0];
  switch (a.itemsize()) {
    case 1: single_scatter<1>(dst, st, n, iv, m, v, one); break;
    case 2: single_scatter<2>(dst, st, n, iv, m, v, one); break;
    case 4: single_scatter<4>(dst, st, n, iv, m, v, one); break;
    case 8: single_scatter<8>(dst, st, n, iv, m, v, one); break;
    case 16: single_scatter<16>(dst, st, n, iv, m, v, one); break;
    default: return false;
  }
  return true;
}

// a[mask] = value for a C-contiguous `a`, a C-contiguous mask of a's shape and a value that is
// one element or one per selected element (already in a's dtype, contiguous).
bool try_mask_assign(const ndarray& a, std::span<const IndexItem> idx, const ndarray& value) {
  if (idx.size() != 1 || !is_bool_array(idx[0])) return false;
  const ndarray& m = idx[0].array;
  if (m.shape() != a.shape() || !a.is_c_contiguous() || !m.is_c_contiguous() || a.ndim() == 0) return false;
  if (value.dtype() != a.dtype() || !value.is_c_contiguous() || value.ndim() > 1) return false;
  if (value.storage() == a.storage()) return false;
  const int64_t n = a.size();
  const uint8_t* mk = reinterpret_cast<const uint8_t*>(m.data());
  const size_t isz = a.itemsize();
  std::byte* dst = a.data();
  const std::byte* v = value.data();
  if (value.size() == 1) {
    auto fill = [&](auto tag) {
      using T = typename decltype(tag)::type;
      T x;
      std::memcpy(&x, v, sizeof(T));
      T* d = reinterpret_cast<T*>(dst);
      if (n > kParallelCopy) {  // Note [parallel gathers]
        const int nt = parallel::threads_for(n);
        parallel::for_ranges(nt, n, 8 * int64_t{nt}, [&](int64_t lo, int64_t hi) {
#pragma omp simd
          for (int64_t i = lo; i < hi; ++i)
            if (mk[i]) d[i] = x;
        });
      } else {
        // Eight mask bytes at a time: a mask that selects a few elements (or none) is mostly
        // zero words, skipped whole.
        int64_t i = 0;
        for (; i + 8 <= n; i += 8) {
          uint64_t w;
          std::memcpy(&w, mk + i, sizeof w);
          if (w == 0) continue;
          for (int k = 0; k < 8; ++k)
            if (mk[i + k]) d[i + k] = x;
        }
        for (; i < n; ++i)
          if (mk[i]) d[i] = x;
      }
    };
    switch (isz) {
      case 1: fill(detail::TypeTag<uint8_t>{}); break;
      case 2: fill(detail::TypeTag<uint16_t>{}); break;
      case 4: fill(detail::TypeTag<uint32_t>{}); break;
      case 8: fill(detail::TypeTag<uint64_t>{}); break;
      default:
        for (int64_t i = 0; i < n; ++i)
          if (mk[i]) std::memcpy(dst + i * static_cast<int64_t>(isz), v, isz);
    }
    return true;
  }
  int64_t j = 0;
  for (int64_t i = 0; i < n; ++i)
    if (mk[i]) std::memcpy(dst + i * static_cast<int64_t>(isz), v + (j++) * static_cast<int64_t>(isz), isz);
  return true;
}

}  // namespace

// Note [assignment overlap]
// NumPy (PyArray_AssignArray) copies an overlapping source first, except when the
// destination is 1-d and the strides point the same way: then it copies element by element,
// walking backwards when the source starts below the destination (memmove's rule applied to
// strided data). With different strides that differs from a buffered copy
// (a[::2] = a[:3] reads a[2] after writing it), and npc reproduces it.
void assign_array(const ndarray& dst, const ndarray& src) {
  if (dst.is_traced() || src.is_traced() || dst.ndim() != 1 || src.ndim() != 1 || dst.storage() != src.storage() || dst.size() <= 1 ||
      dst.strides()[0] * src.strides()[0] < 0) {
    copy_into(dst, src);
    return;
  }
  if (!dst.writeable()) throw ValueError("assignment destination is read-only");
  if (dst.shape() != src.shape()) {
    copy_into(dst, src);  // raises NumPy's broadcast error
    return;
  }
  const int64_t n = dst.size();
  int64_t ds = dst.strides()[0], ss = src.strides()[0];
  std::byte* d = dst.data();
  const std::byte* sp = src.data();
  if (ds < 0) {
    d += (n - 1) * ds;
    sp += (n - 1) * ss;
    ds = -ds;
    ss = -ss;
  }
  if (sp < d && sp + n * ss > d) {
    d += (n - 1) * ds;
    sp += (n - 1) * ss;
    ds = -ds;
    ss = -ss;
  }
  auto fn = detail::get_cast(src.dtype(), dst.dtype());
  if (ds == ss && src.dtype() == dst.dtype() && std::abs(ds) == static_cast<int64_t>(dst.itemsize())) {
    // Contiguous same-type copy: memmove in the chosen direction is the same element order.
    std::memmove(ds > 0 ? d : d + (n - 1) * ds, ds > 0 ? sp : sp + (n - 1) * ss, static_cast<size_t>(n) * dst.itemsize());
    return;
  }
  for (int64_t i = 0; i < n; ++i) fn(sp + i * ss, 0, d + i * ds, 0, 1);
}

void set_index_trace_hooks(IndexTraceHook get, IndexAssignTraceHook set) {
  g_get_hook = get;
  g_set_hook = set;
}

bool index_is_basic(std::span<const IndexItem> idx) {
  for (const IndexItem& it : idx)
    if (is_advanced(it)) return false;
  return true;
}

void check_index_items(const ndarray& a, std::span<const IndexItem> idx) {
  const int nd = a.ndim();
  int consumed = 0, ellipses = 0;
  for (const IndexItem& it : idx) {
    if (it.kind == IndexItem::Kind::Ellipsis) ++ellipses;
    else if (it.kind == IndexItem::Kind::Integer || it.kind == IndexItem::Kind::Slice) ++consumed;
    else if (it.kind == IndexItem::Kind::Array) {
      check_index_array_dtype(it.array);
      consumed += is_int_scalar_array(it) || it.array.dtype() != DType::Bool ? 1 : it.array.ndim();
    }
  }
  if (ellipses > 1 || consumed > nd) {
    (void)prepare(a, idx);  // raises before it looks at any array
    return;
  }
  int d = 0;
  for (const IndexItem& it : idx) {
    if (it.kind == IndexItem::Kind::Integer || is_int_scalar_array(it)) {
      const int64_t i = it.kind == IndexItem::Kind::Integer ? it.integer : item_int(it.array);
      const int64_t n = a.shape()[d];
      if (i < -n || i >= n)
        throw IndexError("index " + std::to_string(i) + " is out of bounds for axis " + std::to_string(d) +
                         " with size " + std::to_string(n));
      ++d;
    } else if (it.kind == IndexItem::Kind::Slice) {
      ++d;
    } else if (it.kind == IndexItem::Kind::Ellipsis) {
      d += nd - consumed;
    } else if (it.kind == IndexItem::Kind::Array) {
      const ndarray& arr = it.array;
      if (arr.dtype() != DType::Bool) { ++d; continue; }
      for (int k = 0; k < arr.ndim(); ++k)
        if (arr.shape()[k] != a.shape()[d + k] && arr.shape()[k] != 0)
          throw IndexError("boolean index did not match indexed array along axis " + std::to_string(d + k) +
                           "; size of axis is " + std::to_string(a.shape()[d + k]) +
                           " but size of corresponding boolean axis is " + std::to_string(arr.shape()[k]));
      d += arr.ndim();
    }
  }
}

bool index_is_scalar(const ndarray& a, std::span<const IndexItem> idx) {
  int n = 0;
  for (const IndexItem& it : idx) {
    if (it.kind == IndexItem::Kind::Integer || is_int_scalar_array(it)) ++n;
    else return false;
  }
  return n == a.ndim();
}

ndarray index(const ndarray& a, std::span<const IndexItem> idx) {
  if (any_traced(a, idx)) {
    if (!g_get_hook) throw ValueError("indexing a traced array needs the tracer");
    return g_get_hook(a, idx);
  }
  ndarray fast;
  if (try_mask_select(a, idx, fast)) return fast;
  Prepared p = prepare(a, idx);
  if (!p.any_adv) {
    ndarray view = a.with_geometry(p.offset, a.dtype(), p.shape, p.strides);
    // A 0-d integer array indexes like an integer but, as in NumPy, makes the result a copy.
    bool has_array = false;
    for (const IndexItem& it : idx) has_array = has_array || it.kind == IndexItem::Kind::Array;
    return has_array && !p.scalar ? view.copy() : view;
  }
  ndarray direct;
  if (try_single_gather(a, p, direct)) return direct;
  Gather g = plan_gather(a, p);
  ndarray out = empty(g.out_shape, a.dtype());
  if (out.size() == 0) return out;
  by_itemsize<GatherF>(a.itemsize(), out.data(), a.storage()->data() + p.offset, g);
  return out;
}

void index_assign(const ndarray& a, std::span<const IndexItem> idx, const ndarray& value) {
  if (any_traced(a, idx) || value.is_traced()) {
    if (!g_set_hook) throw ValueError("assigning into a traced array needs the tracer");
    g_set_hook(a, idx, value);
    return;
  }
  if (!a.writeable()) throw ValueError("assignment destination is read-only");
  if (idx.size() == 1 && is_bool_array(idx[0]) && idx[0].array.ndim() == a.ndim() && a.ndim() > 0) {
    // NumPy's boolean-mask assignment (a mask of the array's shape) takes 0-d or 1-d values of
    // the selected size only; another mask (an empty one) is an index array, whose checks follow.
    bool shape_ok = true;
    for (int k = 0; k < a.ndim(); ++k) shape_ok = shape_ok && idx[0].array.shape()[k] == a.shape()[k];
    if (shape_ok && value.ndim() > 1)
      throw TypeError("NumPy boolean array indexing assignment requires a 0 or 1-dimensional input, input has " +
                      std::to_string(value.ndim()) + " dimensions");
    if (shape_ok && value.size() != 1) {
      int64_t cnt = count_nonzero(idx[0].array);
      if (value.size() != cnt)
        throw ValueError("NumPy boolean array indexing assignment cannot assign " + std::to_string(value.size()) +
                         " input values to the " + std::to_string(cnt) + " output values where the mask is true");
    }
  }
  if (value.dtype() == a.dtype() && try_mask_assign(a, idx, value)) return;
  // (A mask of a's shape only, which try_mask_assign takes: NumPy casts the value of another
  // mask, an index array with a subspace, while it assigns: nothing when nothing is selected.)
  if (value.size() == 1 && value.dtype() != a.dtype() && idx.size() == 1 && is_bool_array(idx[0]) &&
      idx[0].array.shape() == a.shape() && try_mask_assign(a, idx, value.astype(a.dtype()))) return;
  if (try_single_scatter(a, idx, value)) return;
  Prepared p = prepare(a, idx);
  Shape target;
  Gather g;
  if (p.any_adv) {
    g = plan_gather(a, p);
    target = g.out_shape;
  } else {
    target = p.shape;
  }
  // NumPy drops leading length-1 axes of the value that the target does not have.
  ndarray v = value;
  if (v.ndim() > static_cast<int>(target.size())) {
    int extra = v.ndim() - static_cast<int>(target.size());
    bool ones = true;
    for (int k = 0; k < extra; ++k) ones = ones && v.shape()[k] == 1;
    if (ones)
      v = v.with_geometry(v.offset(), v.dtype(), Shape(v.shape().begin() + extra, v.shape().end()),
                          Strides(v.strides().begin() + extra, v.strides().end()));
  }
  ndarray bv;
  try {
    bv = broadcast_to(v, target);
  } catch (const ValueError&) {
    if (p.any_adv)
      throw ValueError("shape mismatch: value array of shape " + compact_shape(value.shape()) +
                       " could not be broadcast to indexing result of shape " + compact_shape(target));
    throw ValueError("could not broadcast input array from shape " + compact_shape(value.shape()) + " into shape " +
                     compact_shape(target));  // NumPy's "(2,4)", as a[...] = v says it
  }
  if (!p.any_adv) {
    assign_array(a.with_geometry(p.offset, a.dtype(), p.shape, p.strides), bv);
    return;
  }
  // Materialise the value in a's dtype first: it may alias `a`.
  ndarray src = empty(target, a.dtype());
  copy_into(src, bv);
  if (src.size() == 0) return;
  by_itemsize<ScatterF>(a.itemsize(), a.storage()->data() + p.offset, src.data(), g);
}

int64_t count_nonzero(const ndarray& a) {
  ndarray m = a.dtype() == DType::Bool && a.is_c_contiguous() ? a : a.astype(DType::Bool, Order::C);
  return count_true_bytes(reinterpret_cast<const uint8_t*>(m.data()), m.size());
}

std::vector<ndarray> nonzero(const ndarray& a) {
  if (a.ndim() == 0)
    throw ValueError("Calling nonzero on 0d arrays is not allowed. Use np.atleast_1d(scalar).nonzero() instead. "
                     "If the context of this error is of the form `arr[nonzero(cond)]`, just use `arr[cond]`.");
  ndarray m = a.dtype() == DType::Bool && a.is_c_contiguous() ? a : a.astype(DType::Bool, Order::C);
  const uint8_t* mk = reinterpret_cast<const uint8_t*>(m.data());
  const int64_t cnt = count_nonzero(m);
  const int nd = a.ndim();
  std::vector<ndarray> out;
  std::vector<int64_t*> ptr;
  for (int d = 0; d < nd; ++d) {
    out.push_back(empty(std::vector<int64_t>{cnt}, DType::Int64));
    ptr.push_back(reinterpret_cast<int64_t*>(out.back().data()));
  }
  const int64_t n = m.size();
  if (nd == 1) {
    int64_t j = 0;
    for (int64_t i = 0; i < n && j < cnt; ++i) {
      ptr[0][j] = i;
      j += mk[i] != 0;
    }
    return out;
  }
  std::vector<int64_t> idx(nd, 0);
  int64_t j = 0;
  for (int64_t i = 0; i < n; ++i) {
    if (mk[i]) {
      for (int d = 0; d < nd; ++d) ptr[d][j] = idx[d];
      ++j;
    }
    for (int d = nd - 1; d >= 0; --d) {
      if (++idx[d] < a.shape()[d]) break;
      idx[d] = 0;
    }
  }
  return out;
}

namespace {
ndarray wrap_indices(const ndarray& indices, int64_t n, ClipMode mode) {
  ndarray ind = indices.astype(DType::Int64, Order::C);  // always a fresh, writable copy
  if (mode == ClipMode::Raise) return ind;
  int64_t* v = reinterpret_cast<int64_t*>(ind.data());
  for (int64_t i = 0; i < ind.size(); ++i) {
    if (mode == ClipMode::Clip) {
      v[i] = v[i] < 0 ? 0 : (v[i] >= n ? n - 1 : v[i]);
    } else if (n > 0) {
      v[i] %= n;
      if (v[i] < 0) v[i] += n;
    }
  }
  return ind;
}

void check_take_indices(const ndarray& indices) {
  if (!is_integer(indices.dtype()) && indices.dtype() != DType::Bool)
    throw TypeError("Cannot cast array data from dtype('" + std::string(name(indices.dtype())) +
                    "') to dtype('int64') according to the rule 'safe'");
}
}  // namespace

ndarray take(const ndarray& a, const ndarray& indices, std::optional<int64_t> axis, ClipMode mode) {
  check_take_indices(indices);
  // A 0-d array takes as a 1-d one (axis 0 or -1), as NumPy.
  ndarray src = axis && a.ndim() > 0 ? a : a.reshape(std::vector<int64_t>{-1});
  int64_t ax = axis ? normalize_axis(*axis, std::max(a.ndim(), 1)) : 0;
  int64_t n = src.shape()[ax];
  if (n == 0 && indices.size() > 0 && mode != ClipMode::Raise)
    throw IndexError("cannot do a non-empty take from an empty axes.");
  ndarray ind = mode == ClipMode::Raise && indices.dtype() == DType::Int64 ? indices : wrap_indices(indices, n, mode);
  std::vector<IndexItem> key;
  for (int64_t d = 0; d < ax; ++d) key.emplace_back(Slice{});
  // A 0-d index array must stay an array here (take keeps its 0-d shape, not a scalar).
  if (ind.ndim() == 0) {
    ndarray r = index(src, [&] {
      std::vector<IndexItem> k = key;
      k.emplace_back(ind.reshape(std::vector<int64_t>{1}));
      return k;
    }());
    Shape s = r.shape();
    s.erase(s.begin() + ax);
    return r.reshape(s);
  }
  key.emplace_back(ind);
  return index(src, key);
}

void put(const ndarray& a, const ndarray& indices, const ndarray& values, ClipMode mode) {
  check_take_indices(indices);
  if (!a.writeable()) throw ValueError("put: output array is read-only");
  const int64_t n = a.size();
  if (n == 0 && indices.size() > 0) throw IndexError("cannot replace in an empty array");
  if (indices.size() == 0 || values.size() == 0) return;
  ndarray ind = wrap_indices(indices, n, mode);
  ndarray vals = empty(std::vector<int64_t>{values.size()}, a.dtype());
  copy_into(vals, values.reshape(std::vector<int64_t>{-1}));
  const int64_t* iv = reinterpret_cast<const int64_t*>(ind.data());
  const size_t isz = a.itemsize();
  std::byte* base = a.data();
  const std::byte* vp = vals.data();
  const int64_t nv = vals.size();
  for (int64_t k = 0; k < ind.size(); ++k) {
    int64_t i = iv[k];
    int64_t w = i < 0 ? i + n : i;
    if (w < 0 || w >= n)
      throw IndexError("index " + std::to_string(i) + " is out of bounds for axis 0 with size " + std::to_string(n));
    // Flat (C-order) index -> byte offset; one multiply for contiguous arrays.
    int64_t off = 0;
    if (a.is_c_contiguous()) {
      off = w * static_cast<int64_t>(isz);
    } else {
      for (int d = a.ndim() - 1; d >= 0; --d) {
        off += (w % a.shape()[d]) * a.strides()[d];
        w /= a.shape()[d];
      }
    }
    std::memcpy(base + off, vp + (k % nv) * static_cast<int64_t>(isz), isz);
  }
}

ndarray compress(const ndarray& condition, const ndarray& a, std::optional<int64_t> axis) {
  if (condition.ndim() != 1) throw ValueError("condition must be a 1-d array");
  ndarray src = axis ? a : a.reshape(std::vector<int64_t>{-1});
  int64_t ax = axis ? normalize_axis(*axis, a.ndim()) : 0;
  ndarray c = condition.astype(DType::Bool, Order::C);
  int64_t n = src.shape()[ax];
  if (c.size() > n)
    throw IndexError("index " + std::to_string(n) + " is out of bounds for axis " + std::to_string(ax) +
                     " with size " + std::to_string(n));
  // Only the first len(condition) entries of the axis take part.
  std::vector<ndarray> nz = nonzero(c);
  std::vector<IndexItem> key;
  for (int64_t d = 0; d < ax; ++d) key.emplace_back(Slice{});
  key.emplace_back(nz[0]);
  return index(src, key);
}

}  // namespace npc
