// Bindings for promotion (NEP 50) and array creation. DTypes travel as their integer codes;
// npc._dtypes converts numpy.dtype objects to codes.
#include <pybind11/stl.h>

#include "bindings.hpp"

namespace npc::py_bind {

namespace {
std::optional<Shape> opt_shape(py::handle o) {
  if (o.is_none()) return std::nullopt;
  return to_shape(o);
}
std::optional<DType> opt_dtype(int code) {
  if (code < 0) return std::nullopt;
  return static_cast<DType>(code);
}

// Byte extent [lo, hi) of the elements of (shape, strides) relative to the first element;
// empty arrays span nothing (numpy's offset_bounds_from_strides).
std::pair<int64_t, int64_t> extent(const Shape& shape, const Strides& strides, int64_t itemsize) {
  int64_t lo = 0, hi = 0;
  for (size_t d = 0; d < shape.size(); ++d) {
    if (shape[d] == 0) return {0, 0};
    (strides[d] < 0 ? lo : hi) += strides[d] * (shape[d] - 1);
  }
  return {lo, hi + itemsize};
}

// Contiguous strides as NumPy computes them for memory it is given: zero-length axes are
// skipped in the running product (a new allocation gets all-zero strides instead).
Strides given_memory_strides(const Shape& shape, int64_t itemsize, Order order) {
  Strides st(shape.size());
  int64_t acc = itemsize;
  for (size_t k = 0; k < shape.size(); ++k) {
    size_t d = order == Order::F ? k : shape.size() - 1 - k;
    st[d] = acc;
    if (shape[d]) acc *= shape[d];
  }
  return st;
}

[[noreturn]] void bad_strides() {
  throw ValueError("strides is incompatible with shape of requested array and size of buffer");
}

// numpy.ndarray(shape, dtype, buffer, offset, strides, order) for a native dtype (Note
// [ndarray constructor] in python/npc/_ndarray_ext.py). Returns None when the requested
// view of the buffer is unaligned (the caller makes a NumPy array then).
py::object ndarray_new(py::handle shape_in, int code, py::handle buffer, int64_t offset, py::handle strides_in,
                       const std::string& order_name) {
  const auto dtype = static_cast<DType>(code);
  const auto isz = static_cast<int64_t>(itemsize(dtype));
  Order order = order_from_name(order_name);
  order = order == Order::F ? Order::F : Order::C;
  Shape shape = to_shape(shape_in);
  std::optional<Strides> strides;
  if (!strides_in.is_none()) {
    strides = to_shape(strides_in);
    if (strides->size() != shape.size()) throw ValueError("strides, if given, must be the same length as shape");
  }
  if (buffer.is_none()) {
    int64_t n = shape_size(shape, isz);
    if (!strides) return wrap(empty(shape, dtype, order));
    // Without a buffer NumPy allocates size * itemsize bytes and checks the strides against them.
    auto [lo, hi] = extent(shape, *strides, isz);
    if (n > 0 && (lo < 0 || hi > n * isz)) bad_strides();
    return wrap(ndarray(Storage::allocate(static_cast<size_t>(n * isz)), 0, dtype, shape, *strides));
  }
  // The buffer stays exported (and its owner alive) while any view of it exists, so a
  // bytearray cannot be reallocated under the array (NumPy releases it at once).
  auto view = std::make_unique<Py_buffer>();
  bool readonly = false;
  if (PyObject_GetBuffer(buffer.ptr(), view.get(), PyBUF_WRITABLE | PyBUF_ANY_CONTIGUOUS) != 0) {
    PyErr_Clear();
    readonly = true;
    if (PyObject_GetBuffer(buffer.ptr(), view.get(), PyBUF_ANY_CONTIGUOUS) != 0) throw py::error_already_set();
  }
  Py_buffer* held = view.release();
  auto release_now = [held] {
    PyBuffer_Release(held);
    delete held;
  };
  try {
    // Some exporters (pybind11's) ignore the contiguity request.
    if (!PyBuffer_IsContiguous(held, 'A')) throw ValueError("ndarray is not contiguous");
    const int64_t len = held->len;
    if (offset < 0)
      throw ValueError("offset must be non-negative and no greater than buffer length (" + std::to_string(len) + ")");
    if (strides) {
      for (int64_t d : shape)
        if (d < 0) bad_strides();
      shape_size(shape, isz);
      auto [lo, hi] = extent(shape, *strides, isz);
      if (offset + lo < 0 || offset + hi > len) bad_strides();
    } else {
      if (shape.size() == 1 && shape[0] == -1) shape[0] = (len - offset) / isz;
      int64_t n = shape_size(shape, isz);
      if (offset > len || n * isz > len - offset) throw TypeError("buffer is too small for requested array");
      strides = given_memory_strides(shape, isz, order);
    }
    auto storage = Storage::borrow(held->buf, static_cast<size_t>(len), [held] {
      AcquireGil gil;
      PyBuffer_Release(held);
      delete held;
    });
    PyArray r(ndarray(std::move(storage), offset, dtype, std::move(shape), std::move(*strides), !readonly));
    if (!r.flags().aligned && r.size() > 0) return py::none();
    // NumPy's base: the buffer's exporter (a memoryview's underlying object).
    r.base = PyMemoryView_Check(buffer.ptr()) ? py::reinterpret_borrow<py::object>(buffer).attr("obj")
                                              : py::reinterpret_borrow<py::object>(buffer);
    return py::cast(std::move(r));
  } catch (...) {
    release_now();
    throw;
  }
}
// Note [resize refcheck]
// numpy.ndarray.resize refuses (refcheck=True) when more than two references to the array
// exist: the caller's and the one the call itself holds. That count depends on how the
// method is called (a bound-method object holds one more), so npc's resize is a true
// method descriptor taking `self` the same way NumPy's does; it reads the count on entry
// and hands it to the Python implementation (npc._ndarray_ext._resize_impl).
PyObject* g_resize_impl = nullptr;  // owned; never released (lives until exit)

PyObject* resize_entry(PyObject* self, PyObject* const* args, Py_ssize_t nargsf, PyObject* kwnames) {
  const Py_ssize_t refs = Py_REFCNT(self);
  const Py_ssize_t nargs = PyVectorcall_NARGS(nargsf);
  const Py_ssize_t nkw = kwnames ? PyTuple_GET_SIZE(kwnames) : 0;
  PyObject* count = PyLong_FromSsize_t(refs);
  if (!count) return nullptr;
  std::vector<PyObject*> v(static_cast<size_t>(2 + nargs + nkw));
  v[0] = self;
  v[1] = count;
  for (Py_ssize_t i = 0; i < nargs + nkw; ++i) v[static_cast<size_t>(2 + i)] = args[i];
  PyObject* r = PyObject_Vectorcall(g_resize_impl, v.data(), static_cast<size_t>(2 + nargs), kwnames);
  Py_DECREF(count);
  return r;
}

PyMethodDef g_resize_def = {"resize", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(&resize_entry)),
                            METH_FASTCALL | METH_KEYWORDS, nullptr};
}  // namespace

void bind_creation(py::module_& m) {
  m.def("_install_resize", [](py::object cls, py::object impl, py::object doc) {
    if (!g_resize_impl) g_resize_impl = impl.release().ptr();
    static std::string doc_text = doc.cast<std::string>();
    g_resize_def.ml_doc = doc_text.c_str();
    py::object descr = py::reinterpret_steal<py::object>(
        PyDescr_NewMethod(reinterpret_cast<PyTypeObject*>(cls.ptr()), &g_resize_def));
    if (!descr) throw py::error_already_set();
    cls.attr("resize") = descr;
  });
  m.def("_ndarray_new", &ndarray_new);
  // A NumPy array nothing else references, taken over by npc: OWNDATA, no base.
  m.def("_adopt_numpy", [](py::object arr, int code, uintptr_t ptr, py::handle shape, py::handle strides, bool readonly) {
    Shape sh = to_shape(shape);
    Strides st = to_shape(strides);
    const auto dtype = static_cast<DType>(code);
    const int64_t n = shape_size(sh, itemsize(dtype));
    PyObject* raw = arr.release().ptr();
    auto storage = Storage::adopt(reinterpret_cast<void*>(ptr), static_cast<size_t>(n) * itemsize(dtype), [raw] {
      AcquireGil gil;
      Py_DECREF(raw);
    });
    return wrap(ndarray(std::move(storage), 0, dtype, std::move(sh), std::move(st), !readonly));
  });
  // NumPy's WARN_ON_WRITE flag of broadcast_arrays' views (Note in python/npc/_shape.py).
  m.def("_set_warn_on_write", [](PyArray& a) {
    a.set_writeable(true);
    a.warn_on_write = true;
  });
  m.def("_warn_on_write", [](const PyArray& a) { return a.warn_on_write; });
  m.def("_assign_geometry", [](PyArray& a, const PyArray& view) { a.assign_geometry(view); });
  m.def("_take_over", [](PyArray& a, const PyArray& src) {
    // numpy.ndarray.__setstate__: `a` becomes `src` in place (memory, geometry, flags, base).
    if (a.buffer_geometry.exports > 0) throw ValueError("cannot set state of an array whose buffer is exported");
    static_cast<ndarray&>(a) = static_cast<const ndarray&>(src);
    a.base = src.base;
    a.warn_on_write = false;
  });
  m.def("_set_strides", [](PyArray& a, py::handle strides) { a.set_strides(to_shape(strides)); });
  m.def("_resize", [](PyArray& a, py::handle shape) { a.resize(to_shape(shape)); });
  m.def("promote_types", [](int a, int b) {
    return static_cast<int>(promote_types(static_cast<DType>(a), static_cast<DType>(b)));
  });
  m.def("result_type", [](std::vector<int> strong, std::vector<int> weak) {
    std::vector<DType> s;
    std::vector<WeakKind> w;
    for (int c : strong) s.push_back(static_cast<DType>(c));
    for (int c : weak) w.push_back(static_cast<WeakKind>(c));
    return static_cast<int>(result_type(s, w));
  });
  m.def("can_cast", [](int from, int to, const std::string& casting) {
    return can_cast(static_cast<DType>(from), static_cast<DType>(to), casting_from_name(casting));
  });
  m.def("empty", [](py::handle shape, int code, const std::string& order) {
    return wrap(empty(to_shape(shape), static_cast<DType>(code), order_from_name(order)));
  });
  m.def("zeros", [](py::handle shape, int code, const std::string& order) {
    return wrap(zeros(to_shape(shape), static_cast<DType>(code), order_from_name(order)));
  });
  m.def("full", [](py::handle shape, py::handle value, int code, const std::string& order) {
    return wrap(full(to_shape(shape), from_python(value), static_cast<DType>(code), order_from_name(order)));
  });
  m.def("empty_like", [](const PyArray& p, int code, const std::string& order, py::handle shape) {
    return wrap(empty_like(p, opt_dtype(code), order_from_name(order), opt_shape(shape)));
  });
  m.def("zeros_like", [](const PyArray& p, int code, const std::string& order, py::handle shape) {
    return wrap(zeros_like(p, opt_dtype(code), order_from_name(order), opt_shape(shape)));
  });
  m.def("full_like", [](const PyArray& p, py::handle value, int code, const std::string& order, py::handle shape) {
    return wrap(full_like(p, from_python(value), opt_dtype(code), order_from_name(order), opt_shape(shape)));
  });
  m.def("arange", [](py::handle start, py::handle stop, py::handle step, int code) {
    return wrap(arange(from_python(start), from_python(stop), from_python(step), static_cast<DType>(code)));
  });
  m.def("linspace", [](double start, double stop, int64_t num, bool endpoint, int code) {
    return wrap(linspace(start, stop, num, endpoint, static_cast<DType>(code)));
  });
  m.def("logspace", [](double start, double stop, int64_t num, bool endpoint, double base, int code) {
    return wrap(logspace(start, stop, num, endpoint, base, static_cast<DType>(code)));
  });
  m.def("eye", [](int64_t n, std::optional<int64_t> mm, int64_t k, int code, const std::string& order) {
    return wrap(eye(n, mm, k, static_cast<DType>(code), order_from_name(order)));
  });
}

}  // namespace npc::py_bind
