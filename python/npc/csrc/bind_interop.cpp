// Bindings of the interop layer: zero-copy views between npc and NumPy arrays, and DLPack.
//
// Note [DLPack in C++]
// npc produces and consumes DLPack capsules itself (the structs below follow the layout of
// the DLPack specification, v1.0: DLTensor, DLManagedTensor, DLManagedTensorVersioned)
// instead of going through NumPy's dlpack support on a view. Two reasons: a capsule made
// here keeps npc's storage alive directly (no NumPy object in between, which matters for
// device arrays later, where no NumPy view exists), and consuming one gives an npc array
// whose memory is the producer's, with the producer's deleter run when npc's storage dies.
// The manager context owns a copy of the npc::ndarray (sharing its storage) plus the shape
// and element-strides arrays the DLTensor points at.
//
// Note [zero-copy NumPy views]
// _to_numpy builds a numpy.ndarray over an npc array's memory through NumPy's C API (loaded
// by pybind11 at run time, no NumPy headers at build time) with the npc array as its base;
// _from_numpy wraps a numpy.ndarray's memory in npc storage whose release drops the
// reference to the NumPy array. Both are one C call: they are the hot path of the fallback
// and of __array_ufunc__/__array_function__.
#include <pybind11/numpy.h>
#include <pybind11/stl.h>

#include <array>
#include <cstring>

#include "bindings.hpp"
#include "tracer/trace.hpp"

namespace npc::py_bind {

namespace {

// ---- DLPack v1.0 structs (layout from the DLPack specification)
enum DLDeviceType : int32_t { kDLCPU = 1, kDLCUDA = 2, kDLCUDAHost = 3, kDLROCMHost = 11, kDLCUDAManaged = 13 };
struct DLDevice {
  int32_t device_type;
  int32_t device_id;
};
enum DLDataTypeCode : uint8_t { kDLInt = 0, kDLUInt = 1, kDLFloat = 2, kDLBfloat = 4, kDLComplex = 5, kDLBool = 6 };
struct DLDataType {
  uint8_t code;
  uint8_t bits;
  uint16_t lanes;
};
struct DLTensor {
  void* data;
  DLDevice device;
  int32_t ndim;
  DLDataType dtype;
  int64_t* shape;
  int64_t* strides;
  uint64_t byte_offset;
};
struct DLManagedTensor {
  DLTensor dl_tensor;
  void* manager_ctx;
  void (*deleter)(DLManagedTensor* self);
};
struct DLPackVersion {
  uint32_t major;
  uint32_t minor;
};
struct DLManagedTensorVersioned {
  DLPackVersion version;
  void* manager_ctx;
  void (*deleter)(DLManagedTensorVersioned* self);
  uint64_t flags;
  DLTensor dl_tensor;
};
constexpr uint64_t kDLFlagReadOnly = 1ull << 0;
constexpr uint64_t kDLFlagIsCopied = 1ull << 1;

constexpr const char* kCapsule = "dltensor";
constexpr const char* kCapsuleUsed = "used_dltensor";
constexpr const char* kCapsuleVersioned = "dltensor_versioned";
constexpr const char* kCapsuleVersionedUsed = "used_dltensor_versioned";

py::object buffer_error(const std::string& msg) {
  PyErr_SetString(PyExc_BufferError, msg.c_str());
  throw py::error_already_set();
}

// ---- dtype objects (leaked on purpose: no Python object destructors at exit)
const py::dtype& numpy_dtype(DType t) {
  static std::array<py::dtype*, kNumDTypes> cache{};
  auto*& d = cache[static_cast<int>(t)];
  if (!d) d = new py::dtype(std::string(name(t)));
  return *d;
}

/// DType of a NumPy dtype (kind + itemsize), or -1 when npc does not run it natively.
int dtype_code(const py::dtype& dt) {
  char bo = dt.byteorder();
  if (bo == '>') return -1;  // hosts are little-endian; swapped data is converted in Python
  auto size = dt.itemsize();
  switch (dt.kind()) {
    case 'b': return size == 1 ? static_cast<int>(DType::Bool) : -1;
    case 'i':
      switch (size) {
        case 1: return static_cast<int>(DType::Int8);
        case 2: return static_cast<int>(DType::Int16);
        case 4: return static_cast<int>(DType::Int32);
        case 8: return static_cast<int>(DType::Int64);
      }
      return -1;
    case 'u':
      switch (size) {
        case 1: return static_cast<int>(DType::UInt8);
        case 2: return static_cast<int>(DType::UInt16);
        case 4: return static_cast<int>(DType::UInt32);
        case 8: return static_cast<int>(DType::UInt64);
      }
      return -1;
    case 'f':
      switch (size) {
        case 2: return static_cast<int>(DType::Float16);
        case 4: return static_cast<int>(DType::Float32);
        case 8: return static_cast<int>(DType::Float64);
      }
      return -1;
    case 'c':
      switch (size) {
        case 8: return static_cast<int>(DType::Complex64);
        case 16: return static_cast<int>(DType::Complex128);
      }
      return -1;
  }
  return -1;
}

py::object to_numpy(py::handle self) {
  PyArray* ap = array_ptr(self);
  auto& a = ap ? *ap : self.cast<PyArray&>();
  auto& api = py::detail::npy_api::get();
  static_assert(sizeof(int64_t) == sizeof(Py_intptr_t), "npc shapes are passed to NumPy as they are");
  void* data = a.data();  // realises a traced array first (a graph break)
  // NumPy's C API directly (no shape/stride vectors): this runs on every fallback call.
  const py::dtype& dt = numpy_dtype(a.dtype());
  PyObject* r = api.PyArray_NewFromDescr_(
      api.PyArray_Type_, dt.inc_ref().ptr(), static_cast<int>(a.ndim()),
      reinterpret_cast<Py_intptr_t*>(const_cast<int64_t*>(a.shape().data())),
      reinterpret_cast<Py_intptr_t*>(const_cast<int64_t*>(a.strides().data())), data,
      a.writeable() ? py::detail::npy_api::NPY_ARRAY_WRITEABLE_ : 0, nullptr);
  if (!r) throw py::error_already_set();
  auto result = py::reinterpret_steal<py::object>(r);
  if (api.PyArray_SetBaseObject_(r, self.inc_ref().ptr()) != 0) throw py::error_already_set();
  return result;
}

}  // namespace

// Note [storages of NumPy arrays]
// An npc array over a NumPy array's memory is a view of a storage that spans the whole block
// of the NumPy array that owns the memory (the last numpy.ndarray along `.base`), not only
// the bytes the view reaches: the tracer's covering views of strided arguments (Note
// [strided inputs] in src/tracer/trace_inputs.cpp) read the owner's memory between and around the
// elements, and with_geometry checks every view against its storage (Note [view bounds]).
namespace {
// Lowest byte and one past the highest byte a NumPy array reaches; {0, 0} when it is empty.
std::pair<uintptr_t, uintptr_t> numpy_extent(const py::detail::PyArray_Proxy* a, int64_t isz) {
  int64_t lo = 0, hi = isz;
  for (int d = 0; d < a->nd; ++d) {
    if (a->dimensions[d] == 0) return {0, 0};
    const int64_t span = static_cast<int64_t>(a->strides[d]) * (a->dimensions[d] - 1);
    (span < 0 ? lo : hi) += span;
  }
  const auto p = reinterpret_cast<uintptr_t>(a->data);
  return {p + static_cast<uintptr_t>(lo), p + static_cast<uintptr_t>(hi)};
}
}  // namespace

std::span<std::byte> numpy_valid_block(PyObject* arr) {
  auto& api = py::detail::npy_api::get();
  const auto* x = py::detail::array_proxy(arr);
  PyObject* root = arr;
  for (PyObject* b = x->base; b && api.PyArray_Check_(b); b = py::detail::array_proxy(root)->base) root = b;
  if (root == arr) return {};  // the owner itself: its own bytes
  const auto [xlo, xhi] = numpy_extent(x, py::reinterpret_borrow<py::array>(arr).itemsize());
  const auto [rlo, rhi] = numpy_extent(py::detail::array_proxy(root), py::reinterpret_borrow<py::array>(root).itemsize());
  // An empty view, or one that is not inside its owner's block (never for NumPy's own views):
  // the view's own bytes.
  if (xlo == xhi || xlo < rlo || xhi > rhi) return {};
  return {reinterpret_cast<std::byte*>(rlo), static_cast<size_t>(rhi - rlo)};
}

namespace {

std::optional<ndarray> ndarray_of_numpy(py::handle o) {
  auto& api = py::detail::npy_api::get();
  // Exactly numpy.ndarray: subclasses (masked arrays, matrix, memmap, user classes) keep
  // their own semantics by running on NumPy (Note [NumPy subclasses] in npc/_array.py).
  if (Py_TYPE(o.ptr()) != reinterpret_cast<PyTypeObject*>(api.PyArray_Type_)) return std::nullopt;
  auto arr = py::reinterpret_borrow<py::array>(o);
  int code = dtype_code(arr.dtype());
  int flags = arr.flags();
  if (code < 0 || !(flags & py::detail::npy_api::NPY_ARRAY_ALIGNED_)) return std::nullopt;
  Shape shape(arr.shape(), arr.shape() + arr.ndim());
  Strides strides(arr.strides(), arr.strides() + arr.ndim());
  PyObject* raw = o.ptr();
  Py_INCREF(raw);
  ndarray a = from_memory(const_cast<void*>(arr.data()), static_cast<DType>(code), std::move(shape), std::move(strides),
                          [raw] {
                            if (!Py_IsInitialized()) return;  // storage outlived the interpreter
                            if (PyGILState_Check()) {  // the common case: no GIL round trip
                              Py_DECREF(raw);
                              return;
                            }
                            AcquireGil g;
                            Py_DECREF(raw);
                          },
                          (flags & py::detail::npy_api::NPY_ARRAY_WRITEABLE_) != 0, numpy_valid_block(o.ptr()));
  return a;
}

py::object from_numpy(py::handle o) {
  std::optional<ndarray> a = ndarray_of_numpy(o);
  if (!a) return py::none();
  return new_array_object(std::move(*a), py::reinterpret_borrow<py::object>(o));
}

// ---- conversion of argument trees (the fallback's hot path; see npc/_fallback.py)
PyTypeObject* npc_type() {
  static PyTypeObject* t = reinterpret_cast<PyTypeObject*>(py::type::of<PyArray>().ptr());
  return t;
}

/// `o` with npc arrays (also inside tuples, lists and dicts) replaced by NumPy views; the
/// very same object when it holds none (so NumPy can still mutate a caller's list).
py::object to_numpy_tree(py::handle o) {
  PyTypeObject* t = Py_TYPE(o.ptr());
  // Instances of Python subclasses of npc.ndarray too: NumPy would hand them back to npc
  // through __array_ufunc__/__array_function__ (an endless loop).
  if (t == npc_type() || array_ptr(o)) return to_numpy(o);
  if (t == &PyTuple_Type || t == &PyList_Type) {
    bool is_tuple = t == &PyTuple_Type;
    Py_ssize_t n = is_tuple ? PyTuple_GET_SIZE(o.ptr()) : PyList_GET_SIZE(o.ptr());
    py::object result;
    for (Py_ssize_t i = 0; i < n; ++i) {
      PyObject* item = is_tuple ? PyTuple_GET_ITEM(o.ptr(), i) : PyList_GET_ITEM(o.ptr(), i);
      py::object conv = to_numpy_tree(item);
      if (!result && conv.ptr() != item) {
        result = py::reinterpret_steal<py::object>(is_tuple ? PyTuple_New(n) : PyList_New(n));
        for (Py_ssize_t j = 0; j < i; ++j) {
          PyObject* prev = is_tuple ? PyTuple_GET_ITEM(o.ptr(), j) : PyList_GET_ITEM(o.ptr(), j);
          Py_INCREF(prev);
          if (is_tuple) PyTuple_SET_ITEM(result.ptr(), j, prev);
          else PyList_SET_ITEM(result.ptr(), j, prev);
        }
      }
      if (result) {
        if (is_tuple) PyTuple_SET_ITEM(result.ptr(), i, conv.release().ptr());
        else PyList_SET_ITEM(result.ptr(), i, conv.release().ptr());
      }
    }
    return result ? result : py::reinterpret_borrow<py::object>(o);
  }
  if (t == &PyDict_Type) {
    py::object result;
    PyObject *key, *value;
    Py_ssize_t pos = 0;
    while (PyDict_Next(o.ptr(), &pos, &key, &value)) {
      py::object conv = to_numpy_tree(value);
      if (conv.ptr() != value) {
        if (!result) result = py::reinterpret_steal<py::object>(PyDict_Copy(o.ptr()));
        PyDict_SetItem(result.ptr(), key, conv.ptr());
      }
    }
    return result ? result : py::reinterpret_borrow<py::object>(o);
  }
  return py::reinterpret_borrow<py::object>(o);
}

/// `o` with NumPy arrays of native dtypes (also inside tuples, named tuples and lists)
/// replaced by npc arrays over the same memory. Unaligned or byte-swapped arrays go to
/// npc._array._from_numpy (which copies them).
py::object from_numpy_tree(py::handle o) {
  auto& api = py::detail::npy_api::get();
  PyTypeObject* t = Py_TYPE(o.ptr());
  if (reinterpret_cast<PyObject*>(t) == reinterpret_cast<PyObject*>(api.PyArray_Type_)) {
    py::object r = from_numpy(o);
    if (!r.is_none()) {
      // While tracing: a view of a segment input's memory is a traced view of that input
      // (Note [NumPy views of inputs] in src/tracer/trace_nodes.cpp).
      if (tracer::current())
        if (auto t = tracer::adopt_view(*array_ptr(r))) return new_array_object(std::move(*t));
      return r;
    }
    // Non-native dtypes (byte-swapped ones included: '>i4' is not int32) stay NumPy;
    // unaligned arrays of native dtypes are copied into npc memory.
    if (dtype_code(py::reinterpret_borrow<py::array>(o).dtype()) < 0) return py::reinterpret_borrow<py::object>(o);
    static py::handle slow = py::object(py::module_::import("npc._array").attr("_from_numpy")).release();
    return slow(o);
  }
  if (t == &PyTuple_Type || t == &PyList_Type) {
    bool is_tuple = t == &PyTuple_Type;
    Py_ssize_t n = is_tuple ? PyTuple_GET_SIZE(o.ptr()) : PyList_GET_SIZE(o.ptr());
    py::object result = py::reinterpret_steal<py::object>(is_tuple ? PyTuple_New(n) : PyList_New(n));
    for (Py_ssize_t i = 0; i < n; ++i) {
      PyObject* item = is_tuple ? PyTuple_GET_ITEM(o.ptr(), i) : PyList_GET_ITEM(o.ptr(), i);
      py::object conv = from_numpy_tree(item);
      if (is_tuple) PyTuple_SET_ITEM(result.ptr(), i, conv.release().ptr());
      else PyList_SET_ITEM(result.ptr(), i, conv.release().ptr());
    }
    return result;
  }
  if (PyTuple_Check(o.ptr()) && PyObject_HasAttrString(o.ptr(), "_fields")) {  // named tuple
    py::tuple items(PyTuple_GET_SIZE(o.ptr()));
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(o.ptr()); ++i) items[i] = from_numpy_tree(PyTuple_GET_ITEM(o.ptr(), i));
    return py::reinterpret_borrow<py::object>(reinterpret_cast<PyObject*>(t))(*items);
  }
  return py::reinterpret_borrow<py::object>(o);
}

/// fn(*to_numpy_tree(args), **to_numpy_tree(kwargs)) with the result through from_numpy_tree.
/// When NumPy returns one of the views made for a top-level argument unchanged (e.g.
/// numpy.astype(x, x.dtype, copy=False) returns x), the caller's npc array itself is
/// returned, as NumPy would return the caller's object.
py::object call_numpy(py::handle fn, py::handle args, py::handle kwargs) {
  py::object a = to_numpy_tree(args);
  PyObject* r;
  if (kwargs.is_none() || PyDict_GET_SIZE(kwargs.ptr()) == 0) {
    r = PyObject_Call(fn.ptr(), a.ptr(), nullptr);
  } else {
    py::object k = to_numpy_tree(kwargs);
    r = PyObject_Call(fn.ptr(), a.ptr(), k.ptr());
  }
  if (!r) throw py::error_already_set();
  py::object result = py::reinterpret_steal<py::object>(r);
  if (a.ptr() != args.ptr() && PyTuple_Check(a.ptr())) {
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(a.ptr()); ++i) {
      if (PyTuple_GET_ITEM(a.ptr(), i) == r && PyTuple_GET_ITEM(args.ptr(), i) != r)
        return py::reinterpret_borrow<py::object>(PyTuple_GET_ITEM(args.ptr(), i));
    }
  }
  return from_numpy_tree(result);
}

// ---- DLPack export
struct ExportCtx {
  ndarray arr;
  std::vector<int64_t> shape, strides;
};

DLDataType dl_dtype(DType t) {
  uint8_t bits = static_cast<uint8_t>(itemsize(t) * 8);
  switch (kind(t)) {
    case Kind::Bool: return {kDLBool, 8, 1};
    case Kind::Signed: return {kDLInt, bits, 1};
    case Kind::Unsigned: return {kDLUInt, bits, 1};
    case Kind::Float: return {kDLFloat, bits, 1};
    default: return {kDLComplex, bits, 1};
  }
}

void fill_tensor(DLTensor& t, ExportCtx& ctx) {
  const ndarray& a = ctx.arr;
  auto isz = static_cast<int64_t>(a.itemsize());
  ctx.shape.assign(a.shape().begin(), a.shape().end());
  ctx.strides.resize(a.ndim());
  for (size_t i = 0; i < ctx.strides.size(); ++i) {
    if (a.strides()[i] % isz != 0)
      buffer_error("DLPack only supports strides which are a multiple of itemsize.");
    ctx.strides[i] = a.strides()[i] / isz;
  }
  t.data = a.data();
  t.device = {kDLCPU, 0};
  t.ndim = static_cast<int32_t>(a.ndim());
  t.dtype = dl_dtype(a.dtype());
  t.shape = ctx.shape.data();
  t.strides = ctx.strides.data();
  t.byte_offset = 0;
}

template <class M>
void managed_deleter(M* self) {
  delete static_cast<ExportCtx*>(self->manager_ctx);
  delete self;
}

template <class M>
void capsule_destructor(PyObject* cap, const char* name, const char* used) {
  if (PyCapsule_IsValid(cap, used)) return;  // a consumer took ownership
  PyObject *type, *value, *tb;
  PyErr_Fetch(&type, &value, &tb);
  auto* m = static_cast<M*>(PyCapsule_GetPointer(cap, name));
  if (m && m->deleter) m->deleter(m);
  else PyErr_Clear();
  PyErr_Restore(type, value, tb);
}

void legacy_capsule_destructor(PyObject* cap) { capsule_destructor<DLManagedTensor>(cap, kCapsule, kCapsuleUsed); }
void versioned_capsule_destructor(PyObject* cap) {
  capsule_destructor<DLManagedTensorVersioned>(cap, kCapsuleVersioned, kCapsuleVersionedUsed);
}

py::object to_dlpack(const PyArray& a, bool versioned, bool copy) {
  auto ctx = std::make_unique<ExportCtx>();
  ctx->arr = copy ? a.copy(Order::C) : static_cast<const ndarray&>(a);
  if (!versioned) {
    if (!a.writeable())
      buffer_error("Cannot export readonly array since signalling readonly is unsupported by DLPack "
                   "(supported by newer DLPack version).");
    auto m = std::make_unique<DLManagedTensor>();
    fill_tensor(m->dl_tensor, *ctx);
    m->manager_ctx = ctx.release();
    m->deleter = managed_deleter<DLManagedTensor>;
    PyObject* cap = PyCapsule_New(m.get(), kCapsule, legacy_capsule_destructor);
    if (!cap) {
      m->deleter(m.release());
      throw py::error_already_set();
    }
    m.release();
    return py::reinterpret_steal<py::object>(cap);
  }
  auto m = std::make_unique<DLManagedTensorVersioned>();
  m->version = {1, 0};
  m->flags = (a.writeable() || copy ? 0 : kDLFlagReadOnly) | (copy ? kDLFlagIsCopied : 0);
  fill_tensor(m->dl_tensor, *ctx);
  m->manager_ctx = ctx.release();
  m->deleter = managed_deleter<DLManagedTensorVersioned>;
  PyObject* cap = PyCapsule_New(m.get(), kCapsuleVersioned, versioned_capsule_destructor);
  if (!cap) {
    m->deleter(m.release());
    throw py::error_already_set();
  }
  m.release();
  return py::reinterpret_steal<py::object>(cap);
}

// ---- DLPack import
DType dtype_of_dl(DLDataType t) {
  if (t.lanes != 1) buffer_error("DLPack tensors with lanes != 1 are not supported");
  switch (t.code) {
    case kDLBool:
      if (t.bits == 8) return DType::Bool;
      break;
    case kDLInt:
      if (t.bits == 8) return DType::Int8;
      if (t.bits == 16) return DType::Int16;
      if (t.bits == 32) return DType::Int32;
      if (t.bits == 64) return DType::Int64;
      break;
    case kDLUInt:
      if (t.bits == 8) return DType::UInt8;
      if (t.bits == 16) return DType::UInt16;
      if (t.bits == 32) return DType::UInt32;
      if (t.bits == 64) return DType::UInt64;
      break;
    case kDLFloat:
      if (t.bits == 16) return DType::Float16;
      if (t.bits == 32) return DType::Float32;
      if (t.bits == 64) return DType::Float64;
      break;
    case kDLComplex:
      if (t.bits == 64) return DType::Complex64;
      if (t.bits == 128) return DType::Complex128;
      break;
  }
  buffer_error("DLPack data type (code " + std::to_string(t.code) + ", " + std::to_string(t.bits) +
               " bits) is not supported by npc");
  return DType::Bool;
}

template <class M>
py::object import_tensor(py::handle cap, M* m, const DLTensor& t, bool writeable, const char* used,
                         py::handle producer) {
  int32_t dev = t.device.device_type;
  if (dev != kDLCPU && dev != kDLCUDAHost && dev != kDLROCMHost && dev != kDLCUDAManaged)
    buffer_error("Unsupported device in DLTensor: npc reads CPU memory only");
  if (t.ndim < 0) buffer_error("DLTensor has negative ndim");
  DType dt = dtype_of_dl(t.dtype);
  auto isz = static_cast<int64_t>(itemsize(dt));
  Shape shape(t.shape, t.shape + t.ndim);
  Strides strides(t.ndim);
  if (t.strides) {
    for (int i = 0; i < t.ndim; ++i) strides[i] = t.strides[i] * isz;
  } else {
    int64_t s = isz;
    for (int i = t.ndim - 1; i >= 0; --i) {
      strides[i] = s;
      s *= std::max<int64_t>(shape[i], 1);
    }
  }
  auto* data = static_cast<char*>(t.data) + t.byte_offset;
  // From here the npc storage owns the tensor: the capsule must not free it (renamed
  // first, so that no path can run the producer's deleter twice).
  PyCapsule_SetName(cap.ptr(), used);
  ndarray a = from_memory(data, dt, std::move(shape), std::move(strides),
                          [m] {
                            if (!Py_IsInitialized()) return;  // storage outlived the interpreter
                            AcquireGil g;
                            if (m->deleter) m->deleter(m);
                          },
                          writeable);
  PyArray r(std::move(a));
  r.base = py::reinterpret_borrow<py::object>(producer);
  return py::cast(std::move(r));
}

py::object from_dlpack_capsule(py::handle cap, py::handle producer) {
  if (!PyCapsule_CheckExact(cap.ptr())) throw TypeError("__dlpack__ did not return a PyCapsule");
  if (PyCapsule_IsValid(cap.ptr(), kCapsuleVersioned)) {
    auto* m = static_cast<DLManagedTensorVersioned*>(PyCapsule_GetPointer(cap.ptr(), kCapsuleVersioned));
    if (m->version.major > 1)
      buffer_error("DLPack tensor is of unsupported major version " + std::to_string(m->version.major));
    return import_tensor(cap, m, m->dl_tensor, !(m->flags & kDLFlagReadOnly), kCapsuleVersionedUsed, producer);
  }
  if (PyCapsule_IsValid(cap.ptr(), kCapsule)) {
    auto* m = static_cast<DLManagedTensor*>(PyCapsule_GetPointer(cap.ptr(), kCapsule));
    return import_tensor(cap, m, m->dl_tensor, true, kCapsuleUsed, producer);
  }
  throw ValueError("A DLPack tensor object cannot be consumed multiple times (or the capsule is not a DLPack capsule)");
}


// ---- Note [subclass guard]
// npc's native functions serve numpy.ndarray, not its subclasses (Note [NumPy subclasses] in
// npc/_array.py). Public npc functions are wrapped once at import in a SubclassGuard: a call
// whose arguments (positional, keyword, and items of lists/tuples two levels deep) hold an
// instance of a proper subclass of numpy.ndarray runs NumPy's public function with the
// caller's own arguments (through `on_subclass`, the counted fallback), so the subclass's
// methods and __array_function__/__array_wrap__ decide as in NumPy; any other call goes
// straight to the native function. The check is a type comparison per argument. So does a
// call whose destination (out=, copyto's dst, put's a, ...: `dests`, positions and names) is
// a NumPy array: NumPy writes into it as the caller's memory, whatever its alignment, byte
// order or dtype.
//
// Note [argument errors]
// NumPy is the oracle for errors too: when a native function raises an argument error
// (pending_argument_error: a value it does not take, such as a Python int beyond int64 that
// pybind11 cannot convert, Note [integer arguments] in bind_ndarray.cpp, or arguments it
// rejects with another exception type than NumPy), NumPy's function runs the same call
// (`on_subclass` with the error): NumPy's exception then reaches the caller, or NumPy's result
// when NumPy accepts what npc does not handle. Only failing calls pay for this. The original
// error stays when a callable is among the arguments (NumPy would call the user's code a
// second time) and under npc.config.strict_fallback.
struct SubclassGuard {
  PyObject_HEAD
  vectorcallfunc vectorcall;
  PyObject* native;
  PyObject* numpy_fn;
  PyObject* on_subclass;  // on_subclass(numpy_fn, native, args, kwargs)
  // NumPy's rule for the class of the results when an argument is an instance of a Python
  // subclass of npc.ndarray (None: results as they are), applied by
  // on_result(rule, result, args, kwargs) (Note [subclass results of functions] in npc/_interop.py).
  PyObject* result_rule;
  PyObject* on_result;
  PyObject* dict;
  // Destination parameters (out=, copyto's dst, put's a, ...): positions and names.
  std::vector<std::pair<Py_ssize_t, PyObject*>>* dests;
  // The common case handled in C++ before anything else (Note [fast products]), or null.
  FastCall fast;
};

// A destination NumPy writes: a numpy.ndarray of any kind (also in an out= tuple).
bool is_numpy_destination(PyObject* o) {
  auto& api = py::detail::npy_api::get();
  if (api.PyArray_Check_(o)) return true;
  if (PyTuple_Check(o)) {
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(o); ++i)
      if (api.PyArray_Check_(PyTuple_GET_ITEM(o, i))) return true;
  }
  return false;
}

bool holds_numpy_subclass(PyObject* o, int depth) {
  PyTypeObject* t = Py_TYPE(o);
  if (t == npc_type() || t == &PyFloat_Type || t == &PyLong_Type || t == &PyBool_Type || o == Py_None ||
      t == &PyUnicode_Type || t == &PyComplex_Type)
    return false;
  auto& api = py::detail::npy_api::get();
  PyTypeObject* nd = reinterpret_cast<PyTypeObject*>(api.PyArray_Type_);
  if (t == nd) return false;
  if (PyType_IsSubtype(t, nd)) return true;
  if (depth > 0 && (t == &PyTuple_Type || t == &PyList_Type)) {
    Py_ssize_t n = PySequence_Fast_GET_SIZE(o);
    PyObject** items = PySequence_Fast_ITEMS(o);
    for (Py_ssize_t i = 0; i < n; ++i)
      if (holds_numpy_subclass(items[i], depth - 1)) return true;
  }
  return false;
}

// An instance of a Python subclass of npc.ndarray, also among the items of lists and tuples.
bool holds_npc_subclass(PyObject* o, int depth) {
  PyTypeObject* t = Py_TYPE(o);
  if (t == npc_type() || t == &PyFloat_Type || t == &PyLong_Type || t == &PyBool_Type || o == Py_None ||
      t == &PyUnicode_Type)
    return false;
  if (PyType_IsSubtype(t, npc_type())) return true;
  if (depth > 0 && (t == &PyTuple_Type || t == &PyList_Type)) {
    Py_ssize_t n = PySequence_Fast_GET_SIZE(o);
    PyObject** items = PySequence_Fast_ITEMS(o);
    for (Py_ssize_t i = 0; i < n; ++i)
      if (holds_npc_subclass(items[i], depth - 1)) return true;
  }
  return false;
}

// The positional arguments as a tuple and the keyword arguments as a dict (null on error).
bool pack_arguments(PyObject* const* args, Py_ssize_t n, PyObject* kwnames, PyObject** tuple, PyObject** kw) {
  Py_ssize_t nk = kwnames ? PyTuple_GET_SIZE(kwnames) : 0;
  *tuple = PyTuple_New(n);
  if (!*tuple) return false;
  for (Py_ssize_t i = 0; i < n; ++i) {
    Py_INCREF(args[i]);
    PyTuple_SET_ITEM(*tuple, i, args[i]);
  }
  *kw = PyDict_New();
  if (!*kw) {
    Py_CLEAR(*tuple);
    return false;
  }
  for (Py_ssize_t i = 0; i < nk; ++i) {
    if (PyDict_SetItem(*kw, PyTuple_GET_ITEM(kwnames, i), args[n + i]) < 0) {
      Py_CLEAR(*tuple);
      Py_CLEAR(*kw);
      return false;
    }
  }
  return true;
}

// `r` (a new reference, or null) given the class NumPy's function gives its results when an
// argument is an instance of a Python subclass of npc.ndarray (g->result_rule).
PyObject* guard_subclass_result(SubclassGuard* g, PyObject* r, PyObject* const* args, Py_ssize_t n,
                                PyObject* kwnames) {
  if (!r || g->result_rule == Py_None) return r;
  Py_ssize_t nk = kwnames ? PyTuple_GET_SIZE(kwnames) : 0;
  bool hit = false;
  for (Py_ssize_t i = 0; i < n + nk && !hit; ++i) hit = holds_npc_subclass(args[i], 2);
  if (!hit) return r;
  PyObject *tuple, *kw;
  if (!pack_arguments(args, n, kwnames, &tuple, &kw)) {
    Py_DECREF(r);
    return nullptr;
  }
  PyObject* w = PyObject_CallFunctionObjArgs(g->on_result, g->result_rule, r, tuple, kw, nullptr);
  Py_DECREF(r);
  Py_DECREF(tuple);
  Py_DECREF(kw);
  return w;
}

// NumPy's function on the caller's own arguments (through on_subclass, a counted fallback).
PyObject* guard_run_numpy(SubclassGuard* g, PyObject* const* args, Py_ssize_t n, PyObject* kwnames,
                          PyObject* error = Py_None) {
  PyObject *tuple, *kw;
  if (!pack_arguments(args, n, kwnames, &tuple, &kw)) return nullptr;
  PyObject* r = PyObject_CallFunctionObjArgs(g->on_subclass, g->numpy_fn, g->native, tuple, kw, error, nullptr);
  Py_DECREF(tuple);
  Py_DECREF(kw);
  return r;
}

// The argument errors a native function raises where NumPy's outcome decides (Note
// [argument errors]): TypeError, ValueError (AxisError), OverflowError, IndexError,
// AttributeError and NotImplementedError (npc.NotNative).
bool pending_argument_error() {
  return PyErr_ExceptionMatches(PyExc_TypeError) || PyErr_ExceptionMatches(PyExc_ValueError) ||
         PyErr_ExceptionMatches(PyExc_OverflowError) || PyErr_ExceptionMatches(PyExc_IndexError) ||
         PyErr_ExceptionMatches(PyExc_AttributeError) || PyErr_ExceptionMatches(PyExc_NotImplementedError);
}

PyObject* guard_vectorcall(PyObject* self, PyObject* const* args, size_t nargsf, PyObject* kwnames) {
  auto* g = reinterpret_cast<SubclassGuard*>(self);
  Py_ssize_t n = PyVectorcall_NARGS(nargsf);
  if (g->fast) {  // it takes plain npc arrays only: no subclass, no NumPy destination
    if (PyObject* r = g->fast(args, n, kwnames)) return r;
    if (PyErr_Occurred()) return nullptr;
  }
  Py_ssize_t nk = kwnames ? PyTuple_GET_SIZE(kwnames) : 0;
  bool hit = false;
  for (Py_ssize_t i = 0; i < n + nk && !hit; ++i) hit = holds_numpy_subclass(args[i], 2);
  // NumPy writes into NumPy destinations itself (unaligned, byte-swapped and non-native ones
  // included), as the caller's own memory.
  for (auto it = g->dests->begin(); it != g->dests->end() && !hit; ++it) {
    if (it->first >= 0 && it->first < n) {
      hit = is_numpy_destination(args[it->first]);
    } else {
      for (Py_ssize_t k = 0; k < nk && !hit; ++k) {
        PyObject* key = PyTuple_GET_ITEM(kwnames, k);
        if (key == it->second || PyUnicode_Compare(key, it->second) == 0) hit = is_numpy_destination(args[n + k]);
      }
    }
  }
  if (hit) return guard_run_numpy(g, args, n, kwnames);
  PyObject* r = PyObject_Vectorcall(g->native, args, nargsf, kwnames);
  if (r) return guard_subclass_result(g, r, args, n, kwnames);
  if (!pending_argument_error()) return r;
  PyObject *type, *error, *tb;
  PyErr_Fetch(&type, &error, &tb);
  PyErr_NormalizeException(&type, &error, &tb);
  if (tb) PyException_SetTraceback(error, tb);
  Py_XDECREF(type);
  Py_XDECREF(tb);
  r = guard_run_numpy(g, args, n, kwnames, error);
  Py_DECREF(error);
  return guard_subclass_result(g, r, args, n, kwnames);
}

void guard_dealloc(PyObject* self) {
  auto* g = reinterpret_cast<SubclassGuard*>(self);
  PyObject_GC_UnTrack(self);
  Py_CLEAR(g->native);
  Py_CLEAR(g->numpy_fn);
  Py_CLEAR(g->on_subclass);
  Py_CLEAR(g->result_rule);
  Py_CLEAR(g->on_result);
  Py_CLEAR(g->dict);
  if (g->dests) {
    for (auto& d : *g->dests) Py_XDECREF(d.second);
    delete g->dests;
    g->dests = nullptr;
  }
  Py_TYPE(self)->tp_free(self);
}

int guard_traverse(PyObject* self, visitproc visit, void* arg) {
  auto* g = reinterpret_cast<SubclassGuard*>(self);
  Py_VISIT(g->native);
  Py_VISIT(g->numpy_fn);
  Py_VISIT(g->on_subclass);
  Py_VISIT(g->result_rule);
  Py_VISIT(g->on_result);
  Py_VISIT(g->dict);
  return 0;
}

// Attributes the instance dict lacks (__signature__, __defaults__, ...) are the native function's.
PyObject* guard_getattro(PyObject* self, PyObject* name) {
  PyObject* r = PyObject_GenericGetAttr(self, name);
  if (r || !PyErr_ExceptionMatches(PyExc_AttributeError)) return r;
  PyErr_Clear();
  return PyObject_GetAttr(reinterpret_cast<SubclassGuard*>(self)->native, name);
}

PyObject* guard_repr(PyObject* self) { return PyObject_Repr(reinterpret_cast<SubclassGuard*>(self)->native); }

// Pickled by name, as a function is (its __module__/__qualname__ are the native function's).
PyObject* guard_reduce(PyObject* self, PyObject*) {
  return PyObject_GetAttrString(reinterpret_cast<SubclassGuard*>(self)->native, "__qualname__");
}

PyMethodDef g_guard_methods[] = {{"__reduce__", guard_reduce, METH_NOARGS, nullptr}, {nullptr, nullptr, 0, nullptr}};

PyTypeObject* guard_type() {
  static PyTypeObject* type = [] {
    static PyTypeObject t = {PyVarObject_HEAD_INIT(nullptr, 0)};
    t.tp_name = "npc._core.function";
    t.tp_basicsize = sizeof(SubclassGuard);
    t.tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_HAVE_VECTORCALL;
    t.tp_vectorcall_offset = offsetof(SubclassGuard, vectorcall);
    t.tp_call = PyVectorcall_Call;
    t.tp_dealloc = guard_dealloc;
    t.tp_traverse = guard_traverse;
    t.tp_getattro = guard_getattro;
    t.tp_setattro = PyObject_GenericSetAttr;
    t.tp_dictoffset = offsetof(SubclassGuard, dict);
    t.tp_repr = guard_repr;
    t.tp_methods = g_guard_methods;
    t.tp_doc = "An npc function whose calls with numpy.ndarray subclasses run on NumPy (Note [subclass guard]).";
    if (PyType_Ready(&t) < 0) throw py::error_already_set();
    return &t;
  }();
  return type;
}

py::object make_subclass_guard(py::object native, py::object numpy_fn, py::object on_subclass, py::list dests,
                               py::object result_rule, py::object on_result) {
  auto* g = PyObject_GC_New(SubclassGuard, guard_type());
  if (!g) throw py::error_already_set();
  g->dests = new std::vector<std::pair<Py_ssize_t, PyObject*>>();
  for (auto d : dests) {
    auto t = py::reinterpret_borrow<py::tuple>(d);
    g->dests->emplace_back(t[0].cast<Py_ssize_t>(), py::str(t[1]).release().ptr());
  }
  g->vectorcall = guard_vectorcall;
  g->fast = nullptr;
  g->native = native.release().ptr();
  g->numpy_fn = numpy_fn.release().ptr();
  g->on_subclass = on_subclass.release().ptr();
  g->result_rule = result_rule.release().ptr();
  g->on_result = on_result.release().ptr();
  g->dict = nullptr;
  PyObject_GC_Track(reinterpret_cast<PyObject*>(g));
  auto r = py::reinterpret_steal<py::object>(reinterpret_cast<PyObject*>(g));
  py::handle n = g->native;
  for (const char* attr : {"__name__", "__qualname__", "__module__", "__doc__"})
    if (py::hasattr(n, attr)) r.attr(attr) = n.attr(attr);
  r.attr("__wrapped__") = n;
  return r;
}

}  // namespace

py::object npc_view_of_numpy(py::handle o) { return from_numpy(o); }
std::optional<ndarray> ndarray_view_of_numpy(py::handle o) { return ndarray_of_numpy(o); }

void bind_interop(py::module_& m) {
  m.def("_to_numpy", &to_numpy, "Zero-copy numpy.ndarray view of an npc array (its base is the npc array).");
  m.def("_from_numpy", &from_numpy,
        "Zero-copy npc array over a numpy.ndarray of a native dtype (aligned, native byte order), else None.");
  m.def("_to_numpy_tree", &to_numpy_tree, "npc arrays in nested tuples/lists/dicts as NumPy views.");
  m.def("_from_numpy_tree", &from_numpy_tree, "NumPy arrays of native dtypes in nested tuples/lists as npc arrays.");
  m.def("_call_numpy", &call_numpy, py::arg("fn"), py::arg("args"), py::arg("kwargs") = py::none(),
        "fn(*args, **kwargs) on NumPy views of npc arguments, NumPy results of native dtypes as npc arrays.");
  m.def("_subclass_guard", &make_subclass_guard, py::arg("native"), py::arg("numpy_fn"), py::arg("on_subclass"),
        py::arg("dests"), py::arg("result_rule") = py::none(), py::arg("on_result") = py::none(),
        "`native` wrapped so that calls with numpy.ndarray subclasses run on NumPy (Note [subclass guard]).");
  m.def("_guard_fast_path", [](py::handle guard, const std::string& name) {
    if (Py_TYPE(guard.ptr()) != guard_type()) throw TypeError("expected a subclass guard");
    reinterpret_cast<SubclassGuard*>(guard.ptr())->fast = fast_call_of(name);
  }, py::arg("guard"), py::arg("name"),
        "Gives the guard of public function `name` ('npc.dot') its C++ fast path, if it has one (Note [fast products]).");
  m.def("_to_dlpack", &to_dlpack, py::arg("a"), py::arg("versioned"), py::arg("copy"),
        "DLPack capsule ('dltensor' or 'dltensor_versioned') sharing the array's memory (a copy when copy).");
  m.def("_from_dlpack", &from_dlpack_capsule, py::arg("capsule"), py::arg("producer"),
        "npc array over the memory of a DLPack capsule (consumes the capsule).");
}

}  // namespace npc::py_bind
