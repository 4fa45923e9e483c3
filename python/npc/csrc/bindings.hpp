#pragma once
// Shared helpers of the Python bindings.
#include <pybind11/pybind11.h>

#include "npc/fperror.hpp"
#include "npc/npc.hpp"

namespace npc::py_bind {
namespace py = pybind11;

/// The shape and strides (as Py_ssize_t) that npc.ndarray's buffer exports point at: one
/// block per array, shared by the exports alive and rewritten only when none is
/// (Note [buffer exports] in bind_ndarray.cpp). A copied array starts with no block.
struct BufferGeometry {
  Py_ssize_t* block = nullptr;  // shape[0..ndim) then strides[0..ndim)
  int capacity = 0;             // dimensions the block has room for
  int ndim = -1;                // dimensions it describes now (-1: none yet)
  int exports = 0;              // buffer exports now reading it
  BufferGeometry() = default;
  BufferGeometry(const BufferGeometry&) {}
  BufferGeometry& operator=(const BufferGeometry&) { return *this; }
  ~BufferGeometry() { delete[] block; }
};

/// The bound array type: an ndarray plus NumPy's `base` (the object that owns the memory).
struct PyArray : ndarray {
  using ndarray::ndarray;
  PyArray(ndarray a) : ndarray(std::move(a)) {}
  py::object base = py::none();
  /// NumPy's WARN_ON_WRITE flag (views made by broadcast_arrays): writeable, but the first
  /// write warns (warn_write). Views inherit it (wrap); setting WRITEABLE clears it.
  bool warn_on_write = false;
  /// Shape/strides block of the buffer protocol (fast_getbuffer).
  BufferGeometry buffer_geometry;
};

/// The DeprecationWarning NumPy gives on the first write to a WARN_ON_WRITE array ("Numpy has
/// detected that you (may be) writing to an array with overlapping memory from
/// np.broadcast_arrays. ..."); clears the flag. Throws py::error_already_set when warnings are errors.
void warn_write(PyArray& a);

/// Releases the GIL around a kernel, like py::gil_scoped_release, except that a daemon
/// thread that would re-acquire the GIL while the interpreter finalizes parks for good
/// instead (Note [GIL at exit] in gil.cpp).
class ReleaseGil {
 public:
  ReleaseGil() : state_(PyEval_SaveThread()) {}
  ~ReleaseGil();
  ReleaseGil(const ReleaseGil&) = delete;
  ReleaseGil& operator=(const ReleaseGil&) = delete;

 private:
  PyThreadState* state_;
};

/// Holds the GIL on any thread (storage release callbacks, hooks called from kernels), like
/// py::gil_scoped_acquire, parking a daemon thread that would have to wait for it while the
/// interpreter finalizes (Note [GIL at exit] in gil.cpp).
class AcquireGil {
 public:
  AcquireGil();
  ~AcquireGil() { PyGILState_Release(state_); }
  AcquireGil(const AcquireGil&) = delete;
  AcquireGil& operator=(const AcquireGil&) = delete;

 private:
  PyGILState_STATE state_;
};

/// npc.ndarray's Python type object (set when the class is bound).
extern PyTypeObject* g_array_type;

/// The PyArray held by an npc.ndarray object (or an instance of a subclass), or null for any
/// other object. No pybind11 type lookup: this runs on every operator and ufunc call.
inline PyArray* array_ptr(PyObject* o) {
  PyTypeObject* t = Py_TYPE(o);
  // npc.ndarray is a heap type, so a static type (float, numpy.float64, numpy.ndarray) is
  // never it nor a subclass of it: no walk along the MRO for the common scalar operands.
  if (t != g_array_type &&
      (!g_array_type || !PyType_HasFeature(t, Py_TPFLAGS_HEAPTYPE) || !PyType_IsSubtype(t, g_array_type)))
    return nullptr;
  auto* inst = reinterpret_cast<py::detail::instance*>(o);
  void* v = inst->simple_layout ? inst->simple_value_holder[0] : inst->get_value_and_holder().value_ptr();
  return static_cast<PyArray*>(v);
}
inline PyArray* array_ptr(py::handle o) { return array_ptr(o.ptr()); }

/// A new npc.ndarray object owning `a` (its `base` set to `base`), made without pybind11's
/// per-call type lookups.
py::object new_array_object(ndarray a, py::object base = py::none());
/// A new npc.ndarray object for the view of the untraced `src` at `offset` with `shape` and
/// `strides` (its base set to `base`): new_array_object(src.with_geometry(...)).
py::object new_view_object(const ndarray& src, int64_t offset, std::span<const int64_t> shape,
                           std::span<const int64_t> strides, py::object base);
/// `result` (a new npc.ndarray made from `self`) as an instance of self's class when that is a
/// Python subclass of npc.ndarray, with `__array_finalize__(self)` called as NumPy does
/// (Note [ndarray subclasses] in python/npc/_array.py); `result` itself otherwise.
py::object finalize_like(py::object result, py::handle self);
/// Results of a ufunc or operator whose operands include instances of Python subclasses of
/// npc.ndarray: wrapped by the operand of highest __array_priority__ (its __array_wrap__),
/// as NumPy does; `result` itself otherwise.
py::object wrap_ufunc_result(py::object result, PyObject* const* inputs, Py_ssize_t n);

/// Zero-copy npc array over a numpy.ndarray of a native dtype (aligned, native byte order),
/// else None (bind_interop.cpp).
py::object npc_view_of_numpy(py::handle o);
/// The same view as a bare ndarray (no Python object), or nullopt.
std::optional<ndarray> ndarray_view_of_numpy(py::handle o);
/// The block of valid memory of the numpy.ndarray `arr`'s owner (the last ndarray along
/// `.base`) that npc's storage over `arr` spans; empty: `arr`'s own bytes (Note [storages of
/// NumPy arrays] in bind_interop.cpp).
std::span<std::byte> numpy_valid_block(PyObject* arr);

/// The NumPy scalar (numpy.float64(...) etc.) for the element of dtype `t` at `p`.
py::object numpy_scalar(DType t, const void* p);

/// The name of NumPy's scalar type of dtype `t` ("numpy.float64"), as Python's errors name it.
std::string numpy_scalar_type_name(DType t);

/// Whether `a` is a scalar result of the function being traced (Note [scalar results] in
/// src/tracer/trace.hpp), which a write must not change (Note [writes into scalar results]
/// in bind_ndarray.cpp). Callers test `a.ndim() == 0` first: one branch for other arrays.
bool written_scalar_result(const ndarray& a);
/// NumPy's TypeError for an item assignment to a NumPy scalar of dtype `t`
/// ("'numpy.float64' object does not support item assignment").
[[noreturn]] void raise_scalar_item_assignment(DType t);

/// The value (and dtype) of a NumPy scalar of a native dtype (numpy.float64(...),
/// numpy.int32(...), numpy.bool_ ...: exact types, not subclasses), read straight from the
/// object (Note [fast NumPy scalars] in bind_ndarray.cpp); nullopt for any other object.
std::optional<Scalar> native_numpy_scalar(PyObject* o);
/// The same, as the address of the value inside the object and its dtype in `*t`; null
/// for any other object.
const void* numpy_scalar_data(PyObject* o, DType* t);

/// Runs `f` (which returns a new reference or null with a Python error set) for a raw
/// CPython slot: C++ exceptions become Python exceptions exactly as in pybind11's dispatcher.
template <class F>
PyObject* guarded(F&& f) noexcept {
  try {
    return f();
  } catch (py::error_already_set& e) {
    e.restore();
  } catch (...) {
    py::detail::try_translate_exceptions();
  }
  return nullptr;
}

/// Wraps `result` as a Python object; when it views the memory of `self`, its base is
/// self's base (or self, when self owns its memory), as NumPy collapses bases.
py::object wrap(ndarray result, py::handle self = py::handle());
/// Reports this thread's pending floating-point error flags (npc/fperror.hpp) through
/// numpy.errstate: RuntimeWarning "<kind> encountered in <where>", FloatingPointError, etc.
void report_fp(const char* where);
/// The Python scalar for an element (bool, int, float, complex), as numpy.ndarray.item().
py::object to_python(const Scalar& s);
/// The NumPy scalar (numpy.float32(...) etc.) for an element.
py::object to_numpy_scalar(const Scalar& s);
/// Converts a Python/NumPy scalar to a Scalar (its own dtype; Python values as carriers).
Scalar from_python(py::handle o);
/// Shape from an int or a sequence of ints (TypeError otherwise; ValueError "Maximum allowed
/// dimension exceeded" for an int beyond int64, as NumPy).
Shape to_shape(py::handle o);
/// A Python integer argument (anything with __index__) as int64, converted as NumPy converts
/// axes and counts: TypeError "'str' object cannot be interpreted as an integer" for other
/// objects, OverflowError "Python int too large to convert to C long" beyond int64
/// (Note [integer arguments]).
int64_t index_arg(py::handle o);
/// A sequence of integer arguments (or one integer) as int64 values, as index_arg.
std::vector<int64_t> index_list(py::handle o);

// Note [fast slots]
// The hottest entry points (operators, ufunc calls, scalar indexing, shape/dtype/ndim/size,
// len, a.sum()/max()/min()) are installed as CPython type slots and getset/method
// descriptors at the end of `import npc` (_core._install_fast_paths), so a call goes from the
// interpreter straight to C++ instead of through a bound method and pybind11's dispatcher.
// Each one handles the common case itself and otherwise runs the same code as the
// pybind11-bound method of the same name, which stays in the class for explicit calls.
void install_fast_ndarray(PyTypeObject* type);   // bind_ndarray.cpp: attributes, len
void install_fast_indexing(PyTypeObject* type);  // bind_indexing.cpp: __getitem__/__setitem__
void install_fast_products(PyTypeObject* type);  // bind_linalg.cpp: `@` (Note [fast products])
/// A public function's fast path (vectorcall arguments): a new reference, or null with a
/// Python error, or null with none set when it declines (the function itself then runs).
using FastCall = PyObject* (*)(PyObject* const* args, Py_ssize_t nargs, PyObject* kwnames);
/// The fast path of the public function `name` ("npc.dot"), or null (bind_linalg.cpp).
FastCall fast_call_of(const std::string& name);
/// numpy.bool_, numpy.int8, ... numpy.complex128 (the scalar types of the native dtypes).
bool is_native_numpy_scalar_type(PyTypeObject* t);

void register_errors(py::module_& m);
void bind_ndarray(py::module_& m);
void bind_creation(py::module_& m);
void bind_ops(py::module_& m);       // src/ops: ufuncs, reductions
void bind_indexing(py::module_& m);  // indexing, shapes, sorting
void bind_interop(py::module_& m);   // DLPack and other protocols
void bind_tracer(py::module_& m);    // src/tracer: graph IR, capture
void bind_fusion(py::module_& m);    // src/fusion: codegen, JIT
void bind_linalg(py::module_& m);    // src/ops linalg, matmul, random
}  // namespace npc::py_bind
