// npc::ndarray: storage, geometry, flags, views, copies and casts.
#include "npc/ndarray.hpp"

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <numeric>
#include <sstream>
#include <unordered_map>
#include <vector>

#include <sys/mman.h>

#include "core/cast.hpp"
#include "core/dispatch.hpp"
#include "core/strided.hpp"
#include "npc/creation.hpp"
#include "npc/fperror.hpp"

namespace npc {

// ---------------------------------------------------------------- storage + memory stats
namespace {
std::atomic<int64_t> g_current{0}, g_peak{0};

void account(int64_t delta) {
  int64_t now = g_current.fetch_add(delta) + delta;
  int64_t peak = g_peak.load();
  while (now > peak && !g_peak.compare_exchange_weak(peak, now)) {}
}

std::string human_bytes(size_t n) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  double v = static_cast<double>(n);
  int u = 0;
  while (v >= 1024 && u < 6) { v /= 1024; ++u; }
  std::ostringstream os;
  os.precision(3);
  os << v << " " << units[u];
  return os.str();
}
}  // namespace

MemoryStats memory_stats() { return {g_current.load(), g_peak.load()}; }
void reset_peak_memory_stats() { g_peak.store(g_current.load()); }

// Note [large block cache]
// A new large array costs page faults on first touch (the kernel maps and zeroes every page),
// which for a 10M-element float64 result is about as much work as the arithmetic itself.
// Freed npc-owned blocks of at least kCacheMin bytes are kept (up to kCacheMaxBlocks blocks
// and kCacheMaxBytes bytes, oldest dropped first) and handed to the next allocation of the
// same size class or a little larger (Note [block size classes]), already mapped: the common
// `c = a + b` in a loop then writes into warm memory, as a caching allocator (PyTorch's, for
// instance) does. Zeroed allocations (calloc)
// never use it. memory_stats() counts live arrays only, not the cache.
// The bound is 256 KiB, not only arrays glibc maps on their own: eager expressions on
// mid-size arrays (a 300x300 stencil step, five temporaries of 700 KiB) otherwise make glibc
// trim its heap when the temporaries die and fault the pages in again at the next step,
// which took half the time of the step.
//
// Note [block size classes]
// Blocks of at least kCacheMin bytes are allocated in size classes, eight per power of two
// (at most 12.5% more than asked for, as PyTorch's caching allocator rounds), and a request
// takes the best-fitting cached block of its class or up to a quarter larger. So arrays
// whose sizes change from one step to the next (the shrinking masked arrays of an iteration
// that drops the points it is done with, a varying number of selected elements) reuse the
// blocks of the previous step instead of faulting in fresh pages: Mandelbrot's escape loop
// faulted four times as many pages as NumPy's before.
namespace {
constexpr size_t kCacheMin = size_t{1} << 18;
constexpr size_t kCacheMaxBlocks = 8;
constexpr size_t kCacheMaxBytes = size_t{1} << 30;

// The size of the block that holds `nbytes` (Note [block size classes]).
size_t block_size(size_t nbytes) {
  const size_t r = (std::max<size_t>(nbytes, 1) + 63) / 64 * 64;
  if (r < kCacheMin || r > kCacheMaxBytes) return r;  // never cached: no class
  const int lg = 63 - __builtin_clzll(r);
  const size_t step = size_t{1} << (lg - 3);
  return (r + step - 1) / step * step;
}

struct BlockCache {
  std::mutex mu;
  std::vector<std::pair<size_t, void*>> blocks;  // (block size, block), oldest first
  size_t bytes = 0;
  // Blocks handed out for a smaller size class than their own, with their own size: the
  // storage that dies knows only the size it asked for.
  std::unordered_map<void*, size_t> larger;

  // A cached block of `rounded` bytes or up to two classes more (the best fit), or null.
  void* take(size_t rounded) {
    std::lock_guard<std::mutex> lock(mu);
    const size_t limit = rounded + rounded / 4;
    size_t best = blocks.size();
    for (size_t i = blocks.size(); i-- > 0;) {
      const size_t sz = blocks[i].first;
      if (sz >= rounded && sz <= limit && (best == blocks.size() || sz < blocks[best].first)) best = i;
      if (sz == rounded) break;
    }
    if (best == blocks.size()) return nullptr;
    const auto [size, p] = blocks[best];
    bytes -= size;
    blocks.erase(blocks.begin() + static_cast<std::ptrdiff_t>(best));
    if (size != rounded) larger.emplace(p, size);
    return p;
  }
  // Keeps the dead block `p` of an array that asked for a block of `rounded` bytes, or frees it.
  void give_back(size_t rounded, void* p) {
    std::vector<void*> drop;
    {
      std::lock_guard<std::mutex> lock(mu);
      if (!larger.empty()) {
        if (auto it = larger.find(p); it != larger.end()) {
          rounded = it->second;
          larger.erase(it);
        }
      }
      if (rounded > kCacheMaxBytes) {
        drop.push_back(p);
      } else {
        while (!blocks.empty() && (blocks.size() >= kCacheMaxBlocks || bytes + rounded > kCacheMaxBytes)) {
          drop.push_back(blocks.front().second);
          bytes -= blocks.front().first;
          blocks.erase(blocks.begin());
        }
        blocks.emplace_back(rounded, p);
        bytes += rounded;
      }
    }
    for (void* d : drop) std::free(d);
  }
  ~BlockCache() {
    for (auto& b : blocks) std::free(b.second);
  }
};

BlockCache& block_cache() {
  static BlockCache* cache = new BlockCache();  // leaked: storages may die after static destructors
  return *cache;
}
}  // namespace

// Note [poisoned allocations]
// NPC_POISON_EMPTY=1 fills every allocation made without zeroing (np.empty, kernel outputs
// and temporaries) with the byte 0xA5, as glibc's MALLOC_PERTURB_ does for malloc: code
// that reads memory it never wrote gives garbage at once instead of the zeros a fresh
// process's pages happen to hold (the test suite runs a check with it set).
static bool poison_empty() {
  static const bool on = [] {
    const char* v = std::getenv("NPC_POISON_EMPTY");
    return v && *v && std::string_view(v) != "0";
  }();
  return on;
}

std::shared_ptr<Storage> Storage::allocate(size_t nbytes, bool zero) {
  auto s = std::shared_ptr<Storage>(new Storage());
  const size_t rounded = block_size(nbytes);
  void* p = nullptr;
  if (!zero && rounded >= kCacheMin) {
    if (void* cached = block_cache().take(rounded)) {
      s->data_ = static_cast<std::byte*>(cached);
      s->nbytes_ = nbytes;
      account(static_cast<int64_t>(nbytes));
      if (poison_empty()) std::memset(cached, 0xA5, rounded);
      return s;
    }
  }
  if (zero) {
    // calloc lets the kernel hand out zero pages lazily, as NumPy's zeros does.
    p = std::calloc(rounded, 1);
    if (p && reinterpret_cast<uintptr_t>(p) % 16 != 0) { std::free(p); p = nullptr; }
  } else if (rounded < kCacheMin) {
    // Note [small blocks]
    // Blocks below the cache's bound come from malloc (16-byte aligned, as NumPy's data):
    // glibc's aligned_alloc carves an aligned block out of a larger one and frees the rest,
    // 120-230 ns per call against malloc's 6-50 ns, and a small eager op allocates once
    // (a 256-element add took 1.5x NumPy's time). No loop needs more than the element's
    // alignment; the block cache takes only 64-byte-aligned blocks.
    p = std::malloc(rounded);
    if (p && reinterpret_cast<uintptr_t>(p) % 16 != 0) {
      std::free(p);
      p = std::aligned_alloc(16, (rounded + 15) / 16 * 16);
    }
  } else {
    p = std::aligned_alloc(rounded >= (size_t{1} << 22) ? 4096 : 64, rounded);
  }
  if (!p) throw MemoryError("Unable to allocate " + human_bytes(nbytes));
  if (rounded >= (size_t{1} << 22)) {
    // Large arrays on transparent huge pages (as NumPy does): far fewer page faults on first touch.
    uintptr_t start = (reinterpret_cast<uintptr_t>(p) + 4095) & ~uintptr_t{4095};
    uintptr_t end = reinterpret_cast<uintptr_t>(p) + rounded;
    if (end > start) madvise(reinterpret_cast<void*>(start), end - start, MADV_HUGEPAGE);
  }
  s->data_ = static_cast<std::byte*>(p);
  s->nbytes_ = nbytes;
  s->owns_ = true;
  account(static_cast<int64_t>(nbytes));
  if (!zero && poison_empty()) std::memset(p, 0xA5, rounded);
  return s;
}

std::shared_ptr<Storage> Storage::borrow(void* data, size_t nbytes, std::function<void()> release) {
  auto s = std::shared_ptr<Storage>(new Storage());
  s->data_ = static_cast<std::byte*>(data);
  s->nbytes_ = nbytes;
  s->release_ = release ? std::move(release) : [] {};
  return s;
}

const std::shared_ptr<Storage>& Storage::placeholder() {
  static const std::shared_ptr<Storage> s = [] {
    auto p = allocate(64, true);
    p->placeholder_ = true;
    return p;
  }();
  return s;
}

std::shared_ptr<Storage> Storage::adopt(void* data, size_t nbytes, std::function<void()> release) {
  auto s = borrow(data, nbytes, std::move(release));
  s->owns_ = true;
  return s;
}

Storage::~Storage() {
  if (release_) {
    release_();
  } else {
    const size_t rounded = block_size(nbytes_);
    // Only blocks that allocate() made with aligned_alloc (calloc'd ones may be less aligned).
    const bool cacheable = rounded >= kCacheMin && reinterpret_cast<uintptr_t>(data_) % 64 == 0;
    if (cacheable) block_cache().give_back(rounded, data_);
    else std::free(data_);
    account(-static_cast<int64_t>(nbytes_));
  }
}

// ---------------------------------------------------------------- helpers
Order order_from_name(std::string_view s) {
  if (s.size() == 1) {
    switch (s[0]) {
      case 'C': case 'c': return Order::C;
      case 'F': case 'f': return Order::F;
      case 'A': case 'a': return Order::A;
      case 'K': case 'k': return Order::K;
    }
  }
  throw ValueError("order must be one of 'C', 'F', 'A', or 'K' (got '" + std::string(s) + "')");
}

int64_t shape_size(std::span<const int64_t> shape, size_t itemsize) {
  // NumPy's NPY_MAXDIMS; every array goes through here (ndarray's constructor).
  if (shape.size() > 64)
    throw ValueError("maximum supported dimension for an ndarray is currently 64, found " +
                     std::to_string(shape.size()));
  int64_t n = 1, nonzero = 1;
  bool overflow = false;
  for (int64_t d : shape) {
    if (d < 0) throw ValueError("negative dimensions are not allowed");
    if (__builtin_mul_overflow(n, d, &n)) overflow = true;
    // NumPy rejects shapes whose nonzero dims overflow even when another dim is 0.
    if (d != 0 && __builtin_mul_overflow(nonzero, d, &nonzero)) overflow = true;
  }
  int64_t bytes;
  if (overflow || __builtin_mul_overflow(n, static_cast<int64_t>(std::max<size_t>(itemsize, 1)), &bytes))
    throw ValueError("array is too big; `arr.size * arr.dtype.itemsize` is larger than the maximum possible size.");
  return n;
}

Strides contiguous_strides(std::span<const int64_t> shape, size_t itemsize, Order order) {
  Strides s(shape.size(), 0);
  // NumPy gives every axis of a zero-size array stride 0.
  for (int64_t d : shape)
    if (d == 0) return s;
  int64_t acc = static_cast<int64_t>(itemsize);
  if (order == Order::F) {
    for (size_t d = 0; d < shape.size(); ++d) { s[d] = acc; acc *= std::max<int64_t>(shape[d], 1); }
  } else {
    for (size_t d = shape.size(); d-- > 0;) { s[d] = acc; acc *= std::max<int64_t>(shape[d], 1); }
  }
  return s;
}

int64_t normalize_axis(int64_t axis, int64_t ndim) {
  if (axis < -ndim || axis >= ndim)
    throw AxisError("axis " + std::to_string(axis) + " is out of bounds for array of dimension " + std::to_string(ndim));
  return axis < 0 ? axis + ndim : axis;
}

std::string shape_str(std::span<const int64_t> shape) {
  std::string s = "(";
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i) s += ", ";
    s += std::to_string(shape[i]);
  }
  if (shape.size() == 1) s += ",";
  return s + ")";
}

// ---------------------------------------------------------------- Scalar
namespace {
// Casts that can set overflow/invalid: from floats (to narrower floats or to integers) and
// from wide integers to float16.
bool cast_may_raise(DType from, DType to) {
  if (from == to) return false;
  if (is_inexact(from)) return true;
  return to == DType::Float16 && is_integer(from);
}
}  // namespace

Scalar Scalar::from_bool(bool v) { Scalar s; s.dtype = DType::Bool; s.b = v; return s; }
Scalar Scalar::from_int(int64_t v) { Scalar s; s.dtype = DType::Int64; s.i = v; return s; }
Scalar Scalar::from_uint(uint64_t v) { Scalar s; s.dtype = DType::UInt64; s.u = v; return s; }
Scalar Scalar::from_double(double v) { Scalar s; s.dtype = DType::Float64; s.f = v; return s; }
Scalar Scalar::from_complex(std::complex<double> v) { Scalar s; s.dtype = DType::Complex128; s.c = v; return s; }

namespace {
// The widest representation of a scalar's kind, as a raw element of that dtype.
DType carrier(Kind k) {
  switch (k) {
    case Kind::Bool: return DType::Bool;
    case Kind::Signed: return DType::Int64;
    case Kind::Unsigned: return DType::UInt64;
    case Kind::Float: return DType::Float64;
    default: return DType::Complex128;
  }
}
const void* carrier_ptr(const Scalar& s) {
  switch (kind(s.dtype)) {
    case Kind::Bool: return &s.b;
    case Kind::Signed: return &s.i;
    case Kind::Unsigned: return &s.u;
    case Kind::Float: return &s.f;
    default: return &s.c;
  }
}
}  // namespace

void Scalar::store(DType t, void* dst) const {
  // A float16/float32 value held as double converts exactly back (round trip), so casting
  // from the float64 carrier equals casting from the original dtype.
  const bool checked = cast_may_raise(dtype, t);
  if (checked) clear_hw_fp_flags();
  detail::get_cast(carrier(kind(dtype)), t)(static_cast<const std::byte*>(carrier_ptr(*this)), 0,
                                            static_cast<std::byte*>(dst), 0, 1);
  // A Python scalar converted into a dtype warns overflow and invalid, never underflow
  // (np.float16(1e-320), np.add(float16_array, 1e-320) are silent; array casts are not).
  if (checked) add_fp_flags(read_and_clear_hw_fp_flags() & (kFpOverflow | kFpInvalid));
}

Scalar Scalar::load(DType t, const void* src) {
  Scalar s;
  s.dtype = t;
  DType c = carrier(kind(t));
  void* dst = const_cast<void*>(carrier_ptr(s));
  detail::get_cast(t, c)(static_cast<const std::byte*>(src), 0, static_cast<std::byte*>(dst), 0, 1);
  return s;
}

Scalar Scalar::cast(DType t) const {
  alignas(16) std::byte buf[16];
  store(t, buf);
  return load(t, buf);
}
double Scalar::as_double() const { return cast(DType::Float64).f; }
int64_t Scalar::as_int() const { return cast(DType::Int64).i; }
std::complex<double> Scalar::as_complex() const { return cast(DType::Complex128).c; }
bool Scalar::as_bool() const { return cast(DType::Bool).b; }

// ---------------------------------------------------------------- ndarray
namespace {
// Note [view bounds]
// An ndarray is a view (offset, shape, byte strides) of a Storage; every element it covers
// must lie inside the storage, or kernels read and write outside it. The constructor checks
// this once (O(ndim)), with overflow-safe arithmetic, so an array made from a storage
// (from_memory, a C++ caller's own storage, every new array) never reaches outside its
// memory. The placeholder storage of traced arrays is exempt: it is never read.
// with_geometry, the low-level view maker, checks the same (check_fits): a storage over a
// NumPy array's memory spans its owner's whole block (Note [storages of NumPy arrays] in
// python/npc/csrc/bind_interop.cpp), so the tracer's covering views of strided NumPy
// arguments, which read the owner's memory around the argument's elements, fit it too.
void check_fits(const Storage* st, int64_t offset, int64_t isz, int64_t n, std::span<const int64_t> shape,
                std::span<const int64_t> strides);

int64_t check_view(const Storage* st, int64_t offset, DType dtype, const Shape& shape, const Strides& strides) {
  const int64_t isz = static_cast<int64_t>(itemsize(dtype));  // TypeError for a bad DType
  if (!st) throw ValueError("ndarray: storage is null");
  if (strides.size() != shape.size()) throw ValueError("strides and shape must have the same length");
  const int64_t n = shape_size(shape, static_cast<size_t>(isz));
  if (st->is_placeholder()) return n;
  check_fits(st, offset, isz, n, shape, strides);
  return n;
}

void check_fits(const Storage* st, int64_t offset, int64_t isz, int64_t n, std::span<const int64_t> shape,
                std::span<const int64_t> strides) {
  const int64_t nbytes = static_cast<int64_t>(st->nbytes());
  if (offset < 0 || offset > nbytes)
    throw ValueError("ndarray: offset " + std::to_string(offset) + " is outside the storage of " +
                     std::to_string(nbytes) + " bytes");
  if (n == 0) return;
  if (!st->data()) throw ValueError("ndarray: storage has no data");
  // Lowest and highest byte (exclusive) the view reaches, relative to `offset`.
  int64_t lo = 0, hi = isz;
  bool overflow = false;
  for (size_t d = 0; d < shape.size(); ++d) {
    int64_t span;
    overflow |= __builtin_mul_overflow(strides[d], shape[d] - 1, &span);
    overflow |= __builtin_add_overflow(span < 0 ? lo : hi, span, span < 0 ? &lo : &hi);
  }
  int64_t first, last;
  overflow |= __builtin_add_overflow(offset, lo, &first);
  overflow |= __builtin_add_overflow(offset, hi, &last);
  if (overflow || first < 0 || last > nbytes)
    throw ValueError("ndarray: a view of shape " + shape_str(shape) + " and strides " + shape_str(strides) +
                     " at offset " + std::to_string(offset) + " does not fit its storage of " +
                     std::to_string(nbytes) + " bytes");
}
}  // namespace

ndarray::ndarray() : ndarray(Storage::allocate(8, true), 0, DType::Float64, {}, {}) {}

ndarray::ndarray(std::shared_ptr<Storage> storage, int64_t offset, DType dtype, Shape shape, Strides strides,
                 bool writeable) {
  size_ = check_view(storage.get(), offset, dtype, shape, strides);
  storage_ = std::move(storage);
  offset_ = offset;
  dtype_ = dtype;
  shape_ = std::move(shape);
  strides_ = std::move(strides);
  writeable_ = writeable;
  update_flags();
  // Views made through with_geometry() clear this; a fresh array covering all its storage owns it.
  owndata_ = storage_->owned() && offset_ == 0 && nbytes() == static_cast<int64_t>(storage_->nbytes());
}

int64_t ndarray::shape(int axis) const { return shape_[normalize_axis(axis, ndim())]; }

namespace {
ndarray::RealizeHook g_realize_hook = nullptr;
ndarray::TraceHooks g_trace_hooks;
}

void ndarray::set_realize_hook(RealizeHook hook) { g_realize_hook = hook; }
void ndarray::set_trace_hooks(const TraceHooks& hooks) { g_trace_hooks = hooks; }
const ndarray::TraceHooks& ndarray::trace_hooks() { return g_trace_hooks; }

void ndarray::realize() const {
  if (!trace_) return;
  if (!g_realize_hook) throw ValueError("a traced array has no value outside tracing");
  ndarray v = g_realize_hook(*this);
  storage_ = v.storage_;
  offset_ = v.offset_;
  strides_ = v.strides_;
  trace_.reset();
  const_cast<ndarray*>(this)->update_flags();
}

void ndarray::update_flags() {
  // NumPy's rule: axes of length 1 do not affect contiguity; empty arrays are both.
  auto check = [&](bool fortran) {
    if (size_ == 0) return true;
    int64_t acc = static_cast<int64_t>(itemsize());
    for (int i = 0; i < ndim(); ++i) {
      int d = fortran ? i : ndim() - 1 - i;
      if (shape_[d] == 1) continue;
      if (strides_[d] != acc) return false;
      acc *= shape_[d];
    }
    return true;
  };
  c_contig_ = check(false);
  f_contig_ = check(true);
  if (size_ == 0) {  // NumPy: an empty array is aligned, whatever its pointer
    aligned_ = true;
    return;
  }
  // Item sizes are powers of two: alignment is a mask test, not a division.
  const size_t align = is_complex(dtype_) ? itemsize() / 2 : itemsize();
  const auto mask = static_cast<uint64_t>(align - 1);
  uint64_t bits = reinterpret_cast<uintptr_t>(storage_ ? storage_->data() + offset_ : nullptr);
  for (int d = 0; d < ndim(); ++d)
    if (shape_[d] > 1) bits |= static_cast<uint64_t>(strides_[d]);
  aligned_ = (bits & mask) == 0;
}

Flags ndarray::flags() const { return {c_contig_, f_contig_, aligned_, writeable_, owndata_}; }

void ndarray::set_writeable(bool w) { writeable_ = w; }

void ndarray::assign_geometry(const ndarray& view) {
  const bool own = owndata_, writeable = writeable_;
  *this = view;
  owndata_ = own;
  writeable_ = writeable;
}

void ndarray::set_strides(std::span<const int64_t> strides) {
  if (static_cast<int>(strides.size()) != ndim())
    throw ValueError("strides must be  same length as shape (" + std::to_string(ndim()) + ")");
  if (trace_) realize();
  // Every element must lie inside the storage (NumPy checks against its base's memory).
  if (size_ > 0) {
    int64_t lo = 0, hi = static_cast<int64_t>(itemsize());
    for (int d = 0; d < ndim(); ++d) (strides[d] < 0 ? lo : hi) += strides[d] * (shape_[d] - 1);
    if (offset_ + lo < 0 || offset_ + hi > static_cast<int64_t>(storage_->nbytes()))
      throw ValueError("strides is not compatible with available memory");
  }
  assign_geometry(with_geometry(offset_, dtype_, shape_, Strides(strides.begin(), strides.end())));
}

void ndarray::resize(std::span<const int64_t> shape) {
  if (trace_) realize();
  if (!c_contig_ && !f_contig_) throw ValueError("resize only works on single-segment arrays");
  Shape ns(shape.begin(), shape.end());
  for (int64_t d : ns)
    if (d < 0) throw ValueError("negative dimensions not allowed");
  int64_t n;
  try {
    n = shape_size(ns, itemsize());
  } catch (const ValueError&) {
    throw MemoryError("");  // NumPy reports a size overflow here as a bare MemoryError
  }
  // NumPy's strides for a resized array: contiguous, zero-length axes skipped in the product
  // (unlike a new empty array's all-zero strides).
  const bool fortran = f_contig_ && !c_contig_;
  Strides st(ns.size());
  int64_t acc = static_cast<int64_t>(itemsize());
  for (size_t k = 0; k < ns.size(); ++k) {
    size_t d = fortran ? k : ns.size() - 1 - k;
    st[d] = acc;
    if (ns[d]) acc *= ns[d];
  }
  if (n == size_) {
    assign_geometry(with_geometry(offset_, dtype_, ns, st));
    return;
  }
  if (!owndata_) throw ValueError("cannot resize this array: it does not own its data");
  const size_t nbytes = static_cast<size_t>(n) * itemsize();
  auto storage = Storage::allocate(nbytes, true);
  // A contiguous array's first element is its lowest address: the kept bytes are a prefix.
  if (const size_t keep = std::min(nbytes, static_cast<size_t>(this->nbytes())))
    std::memcpy(storage->data(), data(), keep);
  *this = ndarray(std::move(storage), 0, dtype_, std::move(ns), std::move(st), writeable_);
}

ndarray ndarray::with_geometry(int64_t offset, DType dtype, Shape shape, Strides strides) const {
  // Note [view bounds]: the view must lie inside the storage, as for the constructor
  // (placeholders of traced arrays and empty views, which reach no memory, excepted).
  const int64_t isz = static_cast<int64_t>(npc::itemsize(dtype));  // TypeError for a DType outside the enum
  if (strides.size() != shape.size()) throw ValueError("strides and shape must have the same length");
  const int64_t n = shape_size(shape, static_cast<size_t>(isz));
  if (n > 0 && storage_ && !storage_->is_placeholder()) [[likely]]
    check_fits(storage_.get(), offset, isz, n, shape, strides);
  // Member by member, not `r = *this`: a copy of this array's shape and strides would be
  // allocated only to be replaced (views are made on every slice of every loop).
  ndarray r(NoInit{});
  r.storage_ = storage_;
  r.offset_ = offset;
  r.dtype_ = dtype;
  r.shape_ = std::move(shape);
  r.strides_ = std::move(strides);
  r.size_ = n;
  r.writeable_ = writeable_;
  r.update_flags();
  r.owndata_ = false;
  if (trace_) [[unlikely]] {  // Note [traced views and writes]
    if (g_trace_hooks.view) r.trace_ = g_trace_hooks.view(*this, r);
    if (!r.trace_) {
      // The tracer realizes a traced array at the geometry it was traced with, so the
      // view's offset and strides stay valid over the realized storage.
      const int64_t before = offset_;
      realize();
      return with_geometry(offset - before + offset_, dtype, r.shape_, r.strides_);
    }
  }
  return r;
}

void ndarray::view_into(ndarray& dst, int64_t offset, std::span<const int64_t> shape,
                        std::span<const int64_t> strides) const {
  if (trace_ || &dst == this) [[unlikely]] {
    dst = with_geometry(offset, dtype_, Shape(shape.begin(), shape.end()), Strides(strides.begin(), strides.end()));
    return;
  }
  // As with_geometry (Note [view bounds]).
  const int64_t isz = static_cast<int64_t>(npc::itemsize(dtype_));
  if (strides.size() != shape.size()) throw ValueError("strides and shape must have the same length");
  const int64_t n = shape_size(shape, static_cast<size_t>(isz));
  if (n > 0 && storage_ && !storage_->is_placeholder()) [[likely]]
    check_fits(storage_.get(), offset, isz, n, shape, strides);
  dst.storage_ = storage_;
  dst.offset_ = offset;
  dst.dtype_ = dtype_;
  dst.shape_.assign(shape.begin(), shape.end());
  dst.strides_.assign(strides.begin(), strides.end());
  dst.size_ = n;
  dst.writeable_ = writeable_;
  dst.trace_.reset();
  dst.update_flags();
  dst.owndata_ = false;
}

Scalar ndarray::item(std::span<const int64_t> index) const {
  if (static_cast<int>(index.size()) != ndim()) throw IndexError("incorrect number of indices for array");
  int64_t off = 0;
  for (int d = 0; d < ndim(); ++d) {
    int64_t i = index[d];
    if (i < -shape_[d] || i >= shape_[d])
      throw IndexError("index " + std::to_string(i) + " is out of bounds for axis " + std::to_string(d) +
                       " with size " + std::to_string(shape_[d]));
    if (i < 0) i += shape_[d];
    off += i * strides_[d];
  }
  return Scalar::load(dtype_, data() + off);
}

Scalar ndarray::item() const {
  if (size_ != 1) throw ValueError("can only convert an array of size 1 to a Python scalar");
  return Scalar::load(dtype_, data());
}

namespace {
struct Elem16 {  // a complex128 element, moved as two words
  uint64_t lo, hi;
};
}  // namespace

void ndarray::fill(const Scalar& v) {
  if (!writeable_) throw ValueError("assignment destination is read-only");
  if (trace_ && g_trace_hooks.write) [[unlikely]] {  // Note [traced views and writes]
    g_trace_hooks.write(*this, scalar_array(v));
    return;
  }
  alignas(16) std::byte elem[16];
  v.store(dtype_, elem);
  std::array<std::span<const int64_t>, 1> st{strides_};
  // The element size as a constant of each loop: a memcpy of a run-time size per element is a
  // library call per element (np.ones(160000) took 10x NumPy's time).
  auto fill_as = [&]<typename T>(detail::TypeTag<T>) {
    T x;
    std::memcpy(&x, elem, sizeof(T));
    detail::strided_loop<1>(shape_, {data()}, st, [x](auto p, auto s, int64_t count) {
      std::byte* d = p[0];
      const int64_t step = s[0];
      if (step == static_cast<int64_t>(sizeof(T))) {
        T* t = reinterpret_cast<T*>(d);
        for (int64_t i = 0; i < count; ++i) std::memcpy(t + i, &x, sizeof(T));
      } else {
        for (int64_t i = 0; i < count; ++i) std::memcpy(d + i * step, &x, sizeof(T));
      }
    });
  };
  switch (itemsize()) {
    case 1: fill_as(detail::TypeTag<uint8_t>{}); break;
    case 2: fill_as(detail::TypeTag<uint16_t>{}); break;
    case 4: fill_as(detail::TypeTag<uint32_t>{}); break;
    case 8: fill_as(detail::TypeTag<uint64_t>{}); break;
    default: fill_as(detail::TypeTag<Elem16>{}); break;
  }
}

ndarray ndarray::copy(Order order) const {
  if (trace_ && g_trace_hooks.copy) [[unlikely]] return g_trace_hooks.copy(*this, dtype_, order);  // Note [traced views and writes]
  if (order == Order::A) order = (f_contig_ && !c_contig_) ? Order::F : Order::C;
  ndarray r = empty_like(*this, std::nullopt, order);
  copy_into(r, *this);
  return r;
}

ndarray ndarray::astype(DType t, Order order, Casting casting, bool copy) const {
  if (!can_cast(dtype_, t, casting))
    throw TypeError("Cannot cast array data from dtype('" + std::string(name(dtype_)) + "') to dtype('" +
                    std::string(name(t)) + "') according to the rule '" + detail::casting_name(casting) + "'");
  // A traced value has the strides the trace gave it (an F-ordered argument keeps its own):
  // order='C' without a copy is the value itself only where those are C's (C++ callers such
  // as searchsorted read the data of astype(t, Order::C, .., false) as C-ordered).
  const bool same = !copy && t == dtype_ &&
                    (order == Order::K || (order == Order::A && (c_contig_ || f_contig_)) ||
                     (order == Order::C && c_contig_) || (order == Order::F && f_contig_));
  if (trace_ && g_trace_hooks.copy) [[unlikely]] {  // Note [traced views and writes]
    if (same) return *this;
    return g_trace_hooks.copy(*this, t, order);
  }
  if (same) return *this;
  if (order == Order::A) order = (f_contig_ && !c_contig_) ? Order::F : Order::C;
  ndarray r = empty_like(*this, t, order);
  copy_into(r, *this);
  return r;
}

ndarray ndarray::view(DType t) const {
  size_t old_size = itemsize(), new_size = npc::itemsize(t);
  if (old_size == new_size) return with_geometry(offset_, t, shape_, strides_);
  if (ndim() == 0)
    throw ValueError("Changing the dtype of a 0d array is only supported if the itemsize is unchanged");
  int last = ndim() - 1;
  if (strides_[last] != static_cast<int64_t>(old_size) && shape_[last] != 1 && size_ != 0)
    throw ValueError("To change to a dtype of a different size, the last axis must be contiguous");
  int64_t bytes = shape_[last] * static_cast<int64_t>(old_size);
  if (bytes % static_cast<int64_t>(new_size) != 0)
    throw ValueError("When changing to a " + std::string(new_size > old_size ? "larger" : "smaller") +
                     " dtype, its size must be a divisor of the total size in bytes of the last axis of the array.");
  Shape sh = shape_;
  Strides st = strides_;
  sh[last] = bytes / static_cast<int64_t>(new_size);
  st[last] = static_cast<int64_t>(new_size);
  return with_geometry(offset_, t, sh, st);
}

ndarray ndarray::T() const {
  Shape sh(shape_.rbegin(), shape_.rend());
  Strides st(strides_.rbegin(), strides_.rend());
  return with_geometry(offset_, dtype_, sh, st);
}

ndarray ndarray::transpose(std::span<const int64_t> axes) const {
  if (static_cast<int>(axes.size()) != ndim()) throw ValueError("axes don't match array");
  Shape sh(ndim());
  Strides st(ndim());
  std::vector<bool> seen(ndim(), false);
  for (int i = 0; i < ndim(); ++i) {
    int64_t a = normalize_axis(axes[i], ndim());
    if (seen[a]) throw ValueError("repeated axis in transpose");
    seen[a] = true;
    sh[i] = shape_[a];
    st[i] = strides_[a];
  }
  return with_geometry(offset_, dtype_, sh, st);
}

namespace {
// Strides for viewing (shape, strides) as `newshape` without copying, in C order; false
// when impossible (NumPy's _attempt_nocopy_reshape, restated).
bool nocopy_reshape(const Shape& shape, const Strides& strides, const Shape& newshape, Strides& out, bool fortran) {
  Shape os;
  Strides ost;
  for (size_t i = 0; i < shape.size(); ++i)
    if (shape[i] != 1) { os.push_back(shape[i]); ost.push_back(strides[i]); }
  out.assign(newshape.size(), 0);
  size_t oi = 0, oj = 1, ni = 0, nj = 1;
  const size_t oldnd = os.size(), newnd = newshape.size();
  while (ni < newnd && oi < oldnd) {
    int64_t np = newshape[ni], op = os[oi];
    while (np != op) {
      if (np < op) np *= newshape[nj++];
      else op *= os[oj++];
    }
    for (size_t ok = oi; ok < oj - 1; ++ok) {
      if (fortran) { if (ost[ok + 1] != os[ok] * ost[ok]) return false; }
      else if (ost[ok] != os[ok + 1] * ost[ok + 1]) return false;
    }
    if (fortran) {
      out[ni] = ost[oi];
      for (size_t nk = ni + 1; nk < nj; ++nk) out[nk] = out[nk - 1] * newshape[nk - 1];
    } else {
      out[nj - 1] = ost[oj - 1];
      for (size_t nk = nj - 1; nk > ni; --nk) out[nk - 1] = out[nk] * newshape[nk];
    }
    ni = nj++;
    oi = oj++;
  }
  // Trailing ones of the new shape (NumPy gives them the last stride's spacing).
  int64_t last = ni >= 1 ? out[ni - 1] : 1;
  for (size_t nk = ni; nk < newnd; ++nk) out[nk] = last;
  return true;
}
}  // namespace

ndarray ndarray::reshape(std::span<const int64_t> newshape_in, Order order) const {
  Shape ns(newshape_in.begin(), newshape_in.end());
  int unknown = -1;
  int64_t known = 1;
  for (size_t i = 0; i < ns.size(); ++i) {
    if (ns[i] < 0) {  // NumPy takes any negative size as the unknown dimension
      if (unknown >= 0) throw ValueError("can only specify one unknown dimension");
      unknown = static_cast<int>(i);
    } else {
      known *= ns[i];
    }
  }
  auto fail = [&] {
    // NumPy spells this one "(5,5)", the unknown dimension as "newaxis".
    std::string s = "(";
    for (size_t i = 0; i < newshape_in.size(); ++i)
      s += (i ? "," : "") + (newshape_in[i] < 0 ? std::string("newaxis") : std::to_string(newshape_in[i]));
    s += newshape_in.size() == 1 ? ",)" : ")";
    throw ValueError("cannot reshape array of size " + std::to_string(size_) + " into shape " + s);
  };
  if (unknown >= 0) {
    if (known == 0 || size_ % known != 0) fail();
    ns[unknown] = size_ / known;
  }
  if (shape_size(ns, itemsize()) != size_) fail();
  if (order == Order::A) order = (f_contig_ && !c_contig_) ? Order::F : Order::C;
  bool fortran = order == Order::F;
  if (size_ == 0 || (fortran ? f_contig_ : c_contig_))
    return with_geometry(offset_, dtype_, ns, contiguous_strides(ns, itemsize(), fortran ? Order::F : Order::C));
  Strides st;
  if (nocopy_reshape(shape_, strides_, ns, st, fortran)) return with_geometry(offset_, dtype_, ns, st);
  ndarray c = copy(fortran ? Order::F : Order::C);
  ndarray r = c.with_geometry(0, dtype_, ns, contiguous_strides(ns, itemsize(), fortran ? Order::F : Order::C));
  r.owndata_ = false;
  return r;
}

ndarray ndarray::real() const {
  if (!is_complex(dtype_)) return *this;
  return with_geometry(offset_, real_dtype(dtype_), shape_, strides_);
}

ndarray ndarray::imag() const {
  if (is_complex(dtype_))
    return with_geometry(offset_ + static_cast<int64_t>(itemsize() / 2), real_dtype(dtype_), shape_, strides_);
  if (trace_ && g_trace_hooks.copy && g_trace_hooks.write) [[unlikely]] {  // Note [traced views and writes]
    // Zeros of the traced shape (symbolic sizes included): a concrete array would keep
    // the sizes of the trace on every replay.
    ndarray z = g_trace_hooks.copy(*this, dtype_, Order::K);
    z.fill(Scalar::from_int(0));
    z.set_writeable(false);
    return z;
  }
  ndarray z = zeros_like(*this);
  z.set_writeable(false);
  return z;
}

std::string ndarray::tobytes(Order order) const {
  if (order == Order::A) order = (f_contig_ && !c_contig_) ? Order::F : Order::C;
  if (order == Order::K) order = Order::C;
  bool direct = order == Order::F ? f_contig_ : c_contig_;
  if (direct) return std::string(reinterpret_cast<const char*>(data()), static_cast<size_t>(nbytes()));
  ndarray c = copy(order);
  return std::string(reinterpret_cast<const char*>(c.data()), static_cast<size_t>(c.nbytes()));
}

// ---------------------------------------------------------------- copy with conversion
namespace {
bool overlaps(const ndarray& a, const ndarray& b) {
  if (a.storage() != b.storage() || a.size() == 0 || b.size() == 0) return false;
  auto extent = [](const ndarray& x, int64_t& lo, int64_t& hi) {
    lo = hi = x.offset();
    for (int d = 0; d < x.ndim(); ++d) {
      int64_t span = (x.shape()[d] - 1) * x.strides()[d];
      if (span < 0) lo += span; else hi += span;
    }
    hi += static_cast<int64_t>(x.itemsize());
  };
  int64_t alo, ahi, blo, bhi;
  extent(a, alo, ahi);
  extent(b, blo, bhi);
  return alo < bhi && blo < ahi;
}
}  // namespace

void copy_into(const ndarray& dst, const ndarray& src) {
  if (dst.shape() != src.shape())
    throw ValueError("could not broadcast input array from shape " + shape_str(src.shape()) + " into shape " +
                     shape_str(dst.shape()));
  if (!dst.writeable()) throw ValueError("assignment destination is read-only");
  // A traced value written into a concrete array too: the tracer makes it a graph input.
  if ((dst.is_traced() || src.is_traced()) && ndarray::trace_hooks().write) [[unlikely]] {  // Note [traced views and writes]
    ndarray::trace_hooks().write(dst, src);
    return;
  }
  if (overlaps(dst, src) && !(dst.offset() == src.offset() && dst.strides() == src.strides() &&
                              dst.dtype() == src.dtype())) {
    copy_into(dst, src.copy(Order::K));
    return;
  }
  auto fn = detail::get_cast(src.dtype(), dst.dtype());
  std::array<std::span<const int64_t>, 2> st{dst.strides(), src.strides()};
  // Casts report overflow/invalid like NumPy's ("overflow encountered in cast").
  const bool checked = cast_may_raise(src.dtype(), dst.dtype());
  if (checked) clear_hw_fp_flags();
  detail::strided_loop<2>(dst.shape(), {dst.data(), src.data()}, st, [&](auto p, auto s, int64_t n) {
    fn(p[1], s[1], p[0], s[0], n);
  });
  // NumPy reports overflow, underflow (a tiny inexact result: 1e-46 into float32, 1e-8 into
  // float16) and invalid from casts, not inexact.
  if (checked) add_fp_flags(read_and_clear_hw_fp_flags() & (kFpOverflow | kFpUnderflow | kFpInvalid));
}

}  // namespace npc
