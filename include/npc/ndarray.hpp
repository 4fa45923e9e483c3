#pragma once
/// \file ndarray.hpp
/// npc::ndarray: a strided, dynamically typed N-d array with NumPy's memory model
/// (byte strides, views sharing refcounted storage). Mirrors numpy.ndarray.
#include <complex>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "npc/dtype.hpp"
#include "npc/errors.hpp"

namespace npc {

using Shape = std::vector<int64_t>;    ///< dimension sizes
using Strides = std::vector<int64_t>;  ///< byte strides, one per dimension

/// Memory layout requests, as NumPy's `order=`.
enum class Order : uint8_t { C, F, A, K };
/// Parses "C", "F", "A", "K" (case-insensitive); throws ValueError.
Order order_from_name(std::string_view s);

/// Refcounted buffer owned by npc (16-byte aligned, 64 from 256 KiB: Note [small blocks] in
/// src/core/ndarray.cpp), or memory borrowed from an owner
/// (a NumPy array, a DLPack tensor) that is released when the last view goes away.
class Storage {
 public:
  /// Allocates `nbytes` (zeroed when `zero`); throws MemoryError when it cannot.
  static std::shared_ptr<Storage> allocate(size_t nbytes, bool zero = false);
  /// Wraps external memory; `release` runs when the storage dies.
  static std::shared_ptr<Storage> borrow(void* data, size_t nbytes, std::function<void()> release);
  /// The storage of arrays that carry a geometry but no data (traced arrays, Note [traced
  /// views and writes]): views of it are not checked against its size, and it is never read.
  static const std::shared_ptr<Storage>& placeholder();
  /// Wraps external memory that nothing else uses any more (a private NumPy buffer npc
  /// takes over): released like borrowed memory, but arrays covering it own it (OWNDATA).
  static std::shared_ptr<Storage> adopt(void* data, size_t nbytes, std::function<void()> release);
  ~Storage();
  Storage(const Storage&) = delete;
  Storage& operator=(const Storage&) = delete;
  std::byte* data() const { return data_; }
  size_t nbytes() const { return nbytes_; }
  /// True for npc-allocated and adopted memory: an array covering all of it owns its data.
  bool owned() const { return owns_; }
  /// True for placeholder().
  bool is_placeholder() const { return placeholder_; }

 private:
  Storage() = default;
  std::byte* data_ = nullptr;
  size_t nbytes_ = 0;
  std::function<void()> release_;
  bool owns_ = false;
  bool placeholder_ = false;
};

/// Bytes currently held and the peak since the last reset, for npc-owned storage.
struct MemoryStats {
  int64_t current_bytes;
  int64_t peak_bytes;
};
MemoryStats memory_stats();
void reset_peak_memory_stats();

/// A dynamically typed scalar: the value of one element, or a fill value.
struct Scalar {
  DType dtype = DType::Float64;
  bool b = false;
  int64_t i = 0;
  uint64_t u = 0;
  double f = 0;
  std::complex<double> c{};

  static Scalar from_bool(bool v);
  static Scalar from_int(int64_t v);
  static Scalar from_uint(uint64_t v);
  static Scalar from_double(double v);
  static Scalar from_complex(std::complex<double> v);
  /// The value cast to `t` with NumPy's (unsafe) cast rules.
  Scalar cast(DType t) const;
  /// Writes the value, cast to `t`, to `dst` (which holds one element of dtype t).
  void store(DType t, void* dst) const;
  /// Reads one element of dtype `t` from `src`.
  static Scalar load(DType t, const void* src);
  double as_double() const;
  int64_t as_int() const;
  std::complex<double> as_complex() const;
  bool as_bool() const;
};

/// Flag bits, as numpy.ndarray.flags.
struct Flags {
  bool c_contiguous, f_contiguous, aligned, writeable, owndata;
};

/// An N-d array: storage + byte offset + dtype + shape + byte strides.
/// Copying an ndarray makes another view of the same memory (like Python assignment).
class ndarray {
 public:
  /// A 0-d float64 array holding 0.
  ndarray();
  /// A view on `storage` starting `offset` bytes in. Every element it covers must lie in the
  /// storage: ValueError for a null storage (or null data under a non-empty view), a
  /// negative offset or one past the end, strides of another length than the shape,
  /// negative dimensions, and a view reaching outside the storage; TypeError for a DType
  /// outside the enum.
  ndarray(std::shared_ptr<Storage> storage, int64_t offset, DType dtype, Shape shape, Strides strides,
          bool writeable = true);

  DType dtype() const { return dtype_; }
  int ndim() const { return static_cast<int>(shape_.size()); }
  const Shape& shape() const { return shape_; }
  const Strides& strides() const { return strides_; }
  int64_t shape(int axis) const;
  int64_t size() const { return size_; }
  size_t itemsize() const { return npc::itemsize(dtype_); }
  int64_t nbytes() const { return size_ * static_cast<int64_t>(itemsize()); }
  /// Pointer to the first element. For a traced array (see trace()) this first realises
  /// the value through the tracer's hook (a graph break).
  std::byte* data() const {
    if (trace_) [[unlikely]] realize();
    return storage_->data() + offset_;
  }
  int64_t offset() const { return offset_; }
  const std::shared_ptr<Storage>& storage() const { return storage_; }
  Flags flags() const;
  bool is_c_contiguous() const { return c_contig_; }
  bool is_f_contiguous() const { return f_contig_; }
  bool writeable() const { return writeable_; }
  void set_writeable(bool w);
  /// True when this view covers its whole npc-allocated storage from its start (NumPy's OWNDATA).
  bool owndata() const { return owndata_; }

  /// Element at a multi-index (negative indices count from the end); throws IndexError.
  Scalar item(std::span<const int64_t> index) const;
  /// The single element of a size-1 array; ValueError otherwise.
  Scalar item() const;
  /// Sets every element to `v` (cast with NumPy's rules).
  void fill(const Scalar& v);

  /// A new array with the same values (numpy.ndarray.copy); layout per `order`.
  ndarray copy(Order order = Order::C) const;
  /// numpy.ndarray.astype: values cast to `t`; a view of self when no copy is needed and !copy.
  ndarray astype(DType t, Order order = Order::K, Casting casting = Casting::Unsafe, bool copy = true) const;
  /// numpy.ndarray.view(dtype): reinterprets the bytes; the last axis scales by itemsize ratio.
  ndarray view(DType t) const;
  /// Reversed axes (numpy.ndarray.T).
  ndarray T() const;
  /// numpy.transpose with an axis permutation (negative axes allowed).
  ndarray transpose(std::span<const int64_t> axes) const;
  /// numpy.reshape; a view whenever the strides allow one, else a copy. One -1 allowed.
  ndarray reshape(std::span<const int64_t> shape, Order order = Order::C) const;
  /// Real part: a view for complex arrays, self otherwise.
  ndarray real() const;
  /// Imaginary part: a view for complex arrays, a read-only zero array otherwise.
  ndarray imag() const;
  /// The raw bytes in `order` (numpy.ndarray.tobytes).
  std::string tobytes(Order order = Order::C) const;

  /// Symbolic value while this array is being traced (a node of src/tracer's graph, opaque
  /// to core); null for concrete arrays. Traced arrays have shape, dtype and strides but no data.
  const std::shared_ptr<void>& trace() const { return trace_; }
  bool is_traced() const { return trace_ != nullptr; }
  void set_trace(std::shared_ptr<void> t) { trace_ = std::move(t); }
  /// Produces the concrete value of a traced array through the hook the tracer installs
  /// (runs the pending graph); afterwards the array is an ordinary array. Throws when no hook is set.
  void realize() const;
  /// The hook that computes a traced array's concrete value.
  using RealizeHook = ndarray (*)(const ndarray& traced);
  static void set_realize_hook(RealizeHook hook);

  // Note [traced views and writes] (hooks for src/tracer)
  // Views, copies and writes of traced arrays go to the tracer: with_geometry asks it for
  // the view's trace (null: the tracer cannot express the view, so the source is realized
  // first, a graph break); copy/astype and copy_into/fill into a traced array record nodes.
  struct TraceHooks {
    std::shared_ptr<void> (*view)(const ndarray& src, const ndarray& view) = nullptr;
    ndarray (*copy)(const ndarray& src, DType t, Order order) = nullptr;  ///< laid out as like_axes(src, order)
    void (*write)(const ndarray& dst, const ndarray& src) = nullptr;
    /// A fresh traced array of `shape` and `t` for functions that fill new outputs from
    /// traced inputs (concatenate), laid out over its axes in the order `axes` (outermost
    /// first): its writes are recorded instead of breaking the graph.
    ndarray (*empty)(const Shape& shape, DType t, const std::vector<int>& axes) = nullptr;
  };
  static void set_trace_hooks(const TraceHooks& hooks);
  static const TraceHooks& trace_hooks();

  /// Same storage, new geometry. ValueError for a non-empty view that reaches outside the
  /// storage (Note [view bounds] in src/core/ndarray.cpp), for strides of another length than
  /// the shape or negative dimensions; TypeError for a bad DType.
  ndarray with_geometry(int64_t offset, DType dtype, Shape shape, Strides strides) const;
  /// with_geometry(offset, dtype(), shape, strides) written into `dst`, whose shape and
  /// strides buffers are reused (no allocation when they are large enough): for code that
  /// recycles array objects. Same errors as with_geometry.
  void view_into(ndarray& dst, int64_t offset, std::span<const int64_t> shape, std::span<const int64_t> strides) const;

  // In-place changes of an array's own geometry (numpy's shape/strides/dtype setters and
  // ndarray.resize). Other views of the memory are unaffected: they keep the storage alive.
  /// Takes the geometry of `view` (a view of this array's storage), keeping OWNDATA and
  /// WRITEABLE: numpy's `a.shape = ...` (with view = a.reshape(...)) and `a.dtype = ...`.
  void assign_geometry(const ndarray& view);
  /// numpy's `a.strides = ...`: ValueError "strides must be  same length as shape (n)" or
  /// "strides is not compatible with available memory" when an element would fall outside
  /// the storage.
  void set_strides(std::span<const int64_t> strides);
  /// numpy.ndarray.resize(shape) after the Python layer's reference checks: a new
  /// zero-filled buffer of the new size holding the leading bytes of the old one, C order
  /// (F order for F- but not C-contiguous arrays). ValueError for non-contiguous arrays
  /// ("resize only works on single-segment arrays"), negative dimensions, and a change of
  /// size on an array that does not own its data; MemoryError when too big.
  void resize(std::span<const int64_t> shape);

 private:
  struct NoInit {};
  explicit ndarray(NoInit) {}  // members set by the caller (with_geometry)
  void update_flags();
  // mutable: realize() replaces a traced array's placeholder storage with the real one.
  mutable std::shared_ptr<Storage> storage_;
  mutable int64_t offset_ = 0;
  DType dtype_ = DType::Float64;
  Shape shape_;
  mutable Strides strides_;
  mutable std::shared_ptr<void> trace_;
  int64_t size_ = 1;
  bool c_contig_ = true, f_contig_ = true, aligned_ = true, writeable_ = true, owndata_ = true;
};

/// Number of elements of a shape; throws ValueError on negative dims or overflow.
int64_t shape_size(std::span<const int64_t> shape, size_t itemsize = 1);
/// Contiguous byte strides for `shape` in C or F order.
Strides contiguous_strides(std::span<const int64_t> shape, size_t itemsize, Order order = Order::C);
/// Normalises an axis against `ndim` (negative allowed); throws AxisError.
int64_t normalize_axis(int64_t axis, int64_t ndim);
/// "(2, 3)" / "(3,)" / "()": NumPy's spelling of a shape in messages.
std::string shape_str(std::span<const int64_t> shape);

/// Copies `src` into `dst` elementwise with dtype conversion; shapes must match exactly
/// (broadcast first). Handles overlapping memory like NumPy (copies through a buffer).
void copy_into(const ndarray& dst, const ndarray& src);

}  // namespace npc
