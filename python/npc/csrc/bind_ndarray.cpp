// Binding of npc::ndarray as npc._core.ndarray (Python's npc.ndarray).
#include <pybind11/numpy.h>
#include <pybind11/stl.h>

#include <algorithm>
#include <cstring>
#include <new>

#include "bindings.hpp"
#include "tracer/trace.hpp"

namespace npc::py_bind {

namespace {
std::vector<py::object>& dtype_objects() {
  static std::vector<py::object> v;  // numpy.dtype objects by DType code, set at import
  return v;
}
std::vector<py::object>& scalar_types() {
  static std::vector<py::object> v;  // numpy scalar types by DType code
  return v;
}

const char* buffer_format(DType t) {
  switch (t) {
    case DType::Bool: return "?";
    case DType::Int8: return "b";
    case DType::UInt8: return "B";
    case DType::Int16: return "h";
    case DType::UInt16: return "H";
    case DType::Int32: return "i";
    case DType::UInt32: return "I";
    case DType::Int64: return "l";
    case DType::UInt64: return "L";
    case DType::Float16: return "e";
    case DType::Float32: return "f";
    case DType::Float64: return "d";
    case DType::Complex64: return "Zf";
    default: return "Zd";
  }
}

py::tuple to_tuple(const std::vector<int64_t>& v) {
  py::tuple t(v.size());
  for (size_t i = 0; i < v.size(); ++i) t[i] = py::int_(v[i]);
  return t;
}

std::string typestr(DType t) {
  return std::string(t == DType::Bool || itemsize(t) == 1 ? "|" : "<") + kind_char(t) + std::to_string(itemsize(t));
}
}  // namespace

PyTypeObject* g_array_type = nullptr;

namespace {
const py::detail::type_info* g_array_tinfo = nullptr;

// Note [fast NumPy scalars]
// NumPy's scalar objects of the native dtypes are laid out as {PyObject_HEAD; T obval}
// (numpy/arrayscalars.h), so a scalar is made by the type's tp_alloc and a copy of the
// element, instead of a call to the type with a Python number (which parses arguments and
// goes through a Python int/float first). Each dtype's layout is checked against NumPy's own
// constructor once at import; a dtype that fails the check is made through the constructor.
// numpy.bool_ values are NumPy's two singletons.
constexpr size_t kScalarValueOffset = sizeof(PyObject);
bool g_fast_scalar[kNumDTypes] = {};
PyObject* g_bool_scalars[2] = {nullptr, nullptr};

void check_fast_scalars() {
  for (int c = 0; c < kNumDTypes; ++c) {
    g_fast_scalar[c] = false;
    if (c >= static_cast<int>(scalar_types().size())) continue;
    auto t = static_cast<DType>(c);
    py::object type = scalar_types()[c];
    if (t == DType::Bool) {
      g_bool_scalars[0] = type(false).release().ptr();  // leaked: NumPy's immortal singletons
      g_bool_scalars[1] = type(true).release().ptr();
      continue;
    }
    auto* tp = reinterpret_cast<PyTypeObject*>(type.ptr());
    if (tp->tp_itemsize != 0 || tp->tp_basicsize < static_cast<Py_ssize_t>(kScalarValueOffset + itemsize(t)) ||
        !tp->tp_alloc)
      continue;
    // One value per kind, made both ways.
    const Kind k = kind(t);
    Scalar v = k == Kind::Signed ? Scalar::from_int(-2) : k == Kind::Unsigned ? Scalar::from_int(3) : Scalar::from_double(-2.5);
    py::object ref = k == Kind::Signed ? type(py::int_(-2)) : k == Kind::Unsigned ? type(py::int_(3)) : type(py::float_(-2.5));
    alignas(16) std::byte buf[16] = {};
    v.store(t, buf);
    PyObject* fast = tp->tp_alloc(tp, 0);
    if (!fast) { PyErr_Clear(); continue; }
    std::memcpy(reinterpret_cast<char*>(fast) + kScalarValueOffset, buf, itemsize(t));
    py::object fast_obj = py::reinterpret_steal<py::object>(fast);
    int eq = PyObject_RichCompareBool(fast_obj.ptr(), ref.ptr(), Py_EQ);
    if (eq < 0) { PyErr_Clear(); continue; }
    g_fast_scalar[c] = eq == 1 && Py_TYPE(fast_obj.ptr()) == Py_TYPE(ref.ptr()) &&
                       py::repr(fast_obj).cast<std::string>() == py::repr(ref).cast<std::string>();
  }
}
}  // namespace

py::object numpy_scalar(DType t, const void* p) {
  const int c = static_cast<int>(t);
  if (t == DType::Bool && g_bool_scalars[0])
    return py::reinterpret_borrow<py::object>(g_bool_scalars[*static_cast<const unsigned char*>(p) != 0 ? 1 : 0]);
  if (g_fast_scalar[c]) {
    auto* tp = reinterpret_cast<PyTypeObject*>(scalar_types()[c].ptr());
    PyObject* o = tp->tp_alloc(tp, 0);
    if (!o) throw py::error_already_set();
    std::memcpy(reinterpret_cast<char*>(o) + kScalarValueOffset, p, itemsize(t));
    return py::reinterpret_steal<py::object>(o);
  }
  return scalar_types().at(c)(to_python(Scalar::load(t, p)));
}

std::string numpy_scalar_type_name(DType t) {
  const std::byte zero[16] = {};
  return Py_TYPE(numpy_scalar(t, zero).ptr())->tp_name;
}

// Note [writes into scalar results]
// While tracing, a scalar result (`x = a[1]`, `s = a.sum()`) is a 0-d npc array marked to
// act as a NumPy scalar (Note [scalar results] in src/tracer/trace.hpp). A NumPy scalar is
// immutable: what would write into an array raises, or writes into a temporary copy and
// leaves the scalar alone, and so every other name bound to it keeps its value. Writes into
// a scalar result do the same, with NumPy's exception types and messages:
// - item assignment (`x[...] = 5`, `x[()] = 5`, `x[0] = 5`): TypeError "'numpy.float64'
//   object does not support item assignment" (setitem and its fast slot, bind_indexing.cpp);
// - out= of a ufunc, of ufunc.reduce/accumulate and of the reductions built on them
//   (`np.add(x, 1, out=x)`, `a.sum(out=x)`): TypeError "return arrays must be of ArrayType";
//   out= of the other functions NumPy implements in C (cumsum, argmax, take, round, dot):
//   their "output must be an array" / "'out' must be an array";
// - np.copyto, np.place, np.putmask: their TypeErrors for a first argument that is not an
//   array;
// - attributes (`x.shape = ...`, dtype, strides, real, imag, flat): AttributeError "attribute
//   'shape' of 'numpy.generic' objects is not writable"; `x.flags.writeable = ...`:
//   ValueError "Cannot set flags on array scalars."; `x.setfield(...)`, `x.byteswap(True)`:
//   their errors (a NumPy method that npc runs on NumPy runs on the NumPy scalar itself);
// - the methods NumPy's scalars run on a temporary array (`x.fill(0)`, `x.put(...)` and
//   np.put, `x.resize(...)`, `x.setflags(...)`, `x.flat[0] = 9`): run on a copy, whose
//   errors they raise and whose changes nobody sees.
// - a native function that rejects a scalar result as a destination keeps its error: the
//   retry on NumPy (Note [argument errors] in bind_interop.cpp) would write into a 0-d view.
// Not yet: np.putmask (a NumPy fallback) and out= of np.einsum and np.median write into the
// scalar result; np.concatenate's out= raises ValueError (docs/compile.md lists them).
// A 0-d array that is not a scalar result (`a[1, ...]`, `np.zeros(())`, `np.array(a[1])`)
// is written in place as NumPy's 0-d arrays are. Only marked values exist while tracing, so
// each check sits behind `ndim() == 0` (setitem) or on a path that eager code with no write
// into a 0-d array never takes: eager code pays one branch at most.
bool written_scalar_result(const ndarray& a) {
  return a.ndim() == 0 && tracer::current() && tracer::is_scalar_result(a);
}

void raise_scalar_item_assignment(DType t) {
  throw py::type_error("'" + numpy_scalar_type_name(t) + "' object does not support item assignment");
}

const void* numpy_scalar_data(PyObject* o, DType* t) {
  static const unsigned char bools[2] = {0, 1};
  PyTypeObject* tp = Py_TYPE(o);
  const auto& types = scalar_types();
  for (size_t c = 0; c < types.size(); ++c) {
    if (reinterpret_cast<PyObject*>(tp) != types[c].ptr()) continue;
    *t = static_cast<DType>(c);
    if (*t == DType::Bool) {
      if (o == g_bool_scalars[1]) return &bools[1];
      if (o == g_bool_scalars[0]) return &bools[0];
      return nullptr;
    }
    if (!g_fast_scalar[c]) return nullptr;
    return reinterpret_cast<const char*>(o) + kScalarValueOffset;
  }
  return nullptr;
}

std::optional<Scalar> native_numpy_scalar(PyObject* o) {
  DType t;
  const void* p = numpy_scalar_data(o, &t);
  if (!p) return std::nullopt;
  return Scalar::load(t, p);
}

bool is_native_numpy_scalar_type(PyTypeObject* t) {
  for (const auto& st : scalar_types())
    if (reinterpret_cast<PyObject*>(t) == st.ptr()) return true;
  return false;
}

// Note [unregistered instances]
// pybind11 registers every instance it creates in a global pointer -> object map, which it
// consults only to return the existing Python object when C++ hands back a reference to an
// already-wrapped object. npc's bindings return arrays by value (a new object each time), so
// new result arrays skip the map (and the per-call type lookups around it): the object is
// allocated by the type, given pybind11's simple layout (value pointer + unique_ptr holder),
// and left unregistered, which pybind11's deallocation handles. Whether the bound type has
// that simple layout is checked once at import (else the ordinary pybind11 cast runs).
bool g_fast_instances = false;

void check_fast_instances() {
  PyObject* probe = py::detail::make_new_instance(g_array_type);
  if (!probe) { PyErr_Clear(); return; }
  auto* inst = reinterpret_cast<py::detail::instance*>(probe);
  g_fast_instances = inst->simple_layout && g_array_tinfo && g_array_tinfo->simple_type &&
                     g_array_tinfo->holder_size_in_ptrs <= py::detail::instance_simple_holder_in_ptrs();
  Py_DECREF(probe);
}

// Note [array object cache]
// Eager code makes and drops an array object for nearly every operation (a view `A[:, j]`,
// a temporary `a * s`); allocating the Python object and its PyArray, and freeing them
// again, is a good part of what a small op costs. So
// fast_dealloc parks up to kCachedArrays dead arrays of the plain kind (Note [fast dealloc])
// here instead of freeing them: their storage, trace and base are dropped at once (so no
// memory is kept alive), the object and its PyArray are kept. A new array takes a parked
// object (its reference count set back to one, as CPython's own free lists do) and moves
// its value in. Only the GIL holder touches the cache. Parked objects still hold their
// reference to the type, as live instances do.
constexpr int kCachedArrays = 32;
PyObject* g_cached_arrays[kCachedArrays];
int g_num_cached = 0;

// A parked array object revived with reference count 1, or null when none is parked.
PyObject* take_cached_array() {
  if (g_num_cached == 0) return nullptr;
  PyObject* o = g_cached_arrays[--g_num_cached];
  Py_SET_REFCNT(o, 1);
  return o;
}

PyArray* cached_payload(PyObject* o) {
  return static_cast<PyArray*>(reinterpret_cast<py::detail::instance*>(o)->simple_value_holder[0]);
}

py::object new_array_object(ndarray a, py::object base) {
  if (PyObject* o = take_cached_array()) {
    PyArray* pa = cached_payload(o);
    static_cast<ndarray&>(*pa) = std::move(a);
    pa->base = std::move(base);
    return py::reinterpret_steal<py::object>(o);
  }
  auto heap = std::make_unique<PyArray>(std::move(a));
  heap->base = std::move(base);
  if (g_fast_instances) {
    PyObject* o = g_array_type->tp_alloc(g_array_type, 0);  // zero-filled
    if (!o) throw py::error_already_set();
    auto* inst = reinterpret_cast<py::detail::instance*>(o);
    inst->simple_layout = true;
    inst->owned = true;
    inst->simple_value_holder[0] = heap.get();
    new (&inst->simple_value_holder[1]) std::unique_ptr<PyArray>(heap.release());
    inst->simple_holder_constructed = true;
    return py::reinterpret_steal<py::object>(o);
  }
  py::handle h = py::detail::type_caster_generic::cast(heap.get(), py::return_value_policy::take_ownership,
                                                       py::handle(), g_array_tinfo, nullptr, nullptr);
  if (!h) throw py::error_already_set();
  heap.release();
  return py::reinterpret_steal<py::object>(h);
}

py::object new_view_object(const ndarray& src, int64_t offset, std::span<const int64_t> shape,
                           std::span<const int64_t> strides, py::object base) {
  if (!src.is_traced()) {
    if (PyObject* o = take_cached_array()) {
      // The recycled object's shape and strides buffers are reused (views are made on every
      // slice of every loop); on an error, releasing it parks it again.
      py::object r = py::reinterpret_steal<py::object>(o);
      PyArray* pa = cached_payload(o);
      src.view_into(*pa, offset, shape, strides);
      pa->base = std::move(base);
      return r;
    }
  }
  return new_array_object(src.with_geometry(offset, src.dtype(), Shape(shape.begin(), shape.end()),
                                            Strides(strides.begin(), strides.end())),
                          std::move(base));
}

void report_fp(const char* where) {
  int flags = take_fp_flags();
  if (flags) py::module_::import("npc._errstate").attr("report")(flags, where);
}

namespace {
bool is_array_subclass_instance(PyObject* o) {
  PyTypeObject* t = Py_TYPE(o);
  // Static types are never subclasses of the heap type npc.ndarray (array_ptr).
  return t != g_array_type && g_array_type && PyType_HasFeature(t, Py_TPFLAGS_HEAPTYPE) && PyType_IsSubtype(t, g_array_type);
}
}  // namespace

py::object finalize_like(py::object result, py::handle self) {
  if (!self || !is_array_subclass_instance(self.ptr()) || !array_ptr(result)) return result;
  static py::object* hook = new py::object(py::module_::import("npc._array").attr("_finalize_like"));
  return (*hook)(result, self);
}

py::object wrap_ufunc_result(py::object result, PyObject* const* inputs, Py_ssize_t n) {
  bool any = false;
  for (Py_ssize_t i = 0; i < n && !any; ++i) any = is_array_subclass_instance(inputs[i]);
  if (!any) return result;
  static py::object* hook = new py::object(py::module_::import("npc._array").attr("_wrap_ufunc_result"));
  py::tuple t(n);
  for (Py_ssize_t i = 0; i < n; ++i) t[i] = py::handle(inputs[i]);
  return (*hook)(result, t);
}

py::object wrap(ndarray result, py::handle self) {
  report_fp("cast");
  py::object base = py::none();
  if (self && !self.is_none()) {
    PyArray* s = array_ptr(self);
    if (!s) s = &self.cast<PyArray&>();
    if (s->storage() == result.storage()) {
      base = s->base.is_none() ? py::reinterpret_borrow<py::object>(self) : s->base;
      if (s->warn_on_write) {  // views of a broadcast_arrays view inherit WARN_ON_WRITE
        py::object r = new_array_object(std::move(result), std::move(base));
        array_ptr(r)->warn_on_write = true;
        return finalize_like(std::move(r), self);
      }
    }
    return finalize_like(new_array_object(std::move(result), std::move(base)), self);
  }
  return new_array_object(std::move(result), std::move(base));
}

py::object to_python(const Scalar& s) {
  switch (kind(s.dtype)) {
    case Kind::Bool: return py::bool_(s.b);
    case Kind::Signed: return py::int_(s.i);
    case Kind::Unsigned: return py::int_(s.u);
    case Kind::Float: return py::float_(s.f);
    default: return py::reinterpret_steal<py::object>(PyComplex_FromDoubles(s.c.real(), s.c.imag()));
  }
}

py::object to_numpy_scalar(const Scalar& s) {
  alignas(16) std::byte buf[16];
  s.store(s.dtype, buf);
  return numpy_scalar(s.dtype, buf);
}

Scalar from_python(py::handle o) {
  if (PyBool_Check(o.ptr())) return Scalar::from_bool(o.ptr() == Py_True);
  if (PyLong_Check(o.ptr())) {
    int overflow = 0;
    long long v = PyLong_AsLongLongAndOverflow(o.ptr(), &overflow);
    if (!overflow) return Scalar::from_int(v);
    unsigned long long u = PyLong_AsUnsignedLongLong(o.ptr());
    if (PyErr_Occurred()) {
      PyErr_Clear();
      throw OverflowError("Python integer " + py::str(o).cast<std::string>() + " out of bounds for uint64");
    }
    return Scalar::from_uint(u);
  }
  if (PyFloat_Check(o.ptr())) return Scalar::from_double(PyFloat_AS_DOUBLE(o.ptr()));
  if (PyComplex_Check(o.ptr())) {
    Py_complex c = PyComplex_AsCComplex(o.ptr());
    return Scalar::from_complex({c.real, c.imag});
  }
  // NumPy scalars and 0-d arrays: read through their dtype code (set by Python).
  py::object code = py::module_::import("npc._dtypes").attr("_scalar_code")(o);
  if (code.is_none()) throw TypeError("expected a number, got " + py::str(py::type::of(o)).cast<std::string>());
  auto t = static_cast<DType>(code.cast<int>());
  py::object item = o.attr("item")();
  Scalar s = from_python(item);
  return s.cast(t);
}

// Note [integer arguments]
// Integer arguments reach the core as int64. pybind11's own conversion of a Python int beyond
// int64 throws cast_error, which would surface as RuntimeError "Unable to cast Python
// instance..."; NumPy raises OverflowError for axes and counts and ValueError "Maximum
// allowed dimension exceeded" for dimensions. index_arg/index_list/to_shape convert as NumPy
// does; cast errors left anywhere else become TypeError (register_errors), and a public
// function whose arguments pybind11 cannot convert runs NumPy's function, which raises
// NumPy's own error (Note [subclass guard] in bind_interop.cpp).
namespace {
[[noreturn]] void not_an_integer(py::handle o) {
  throw TypeError("'" + py::str(py::type::of(o).attr("__name__")).cast<std::string>() +
                  "' object cannot be interpreted as an integer");
}

// int64 value of `o`; `overflow` set (and 0 returned) when it is an int beyond int64.
int64_t index_value(py::handle o, bool& overflow) {
  PyObject* idx = PyNumber_Index(o.ptr());
  if (!idx) {
    if (!PyErr_ExceptionMatches(PyExc_TypeError)) throw py::error_already_set();
    PyErr_Clear();
    not_an_integer(o);
  }
  int of = 0;
  long long v = PyLong_AsLongLongAndOverflow(idx, &of);
  Py_DECREF(idx);
  if (v == -1 && PyErr_Occurred()) throw py::error_already_set();
  overflow = of != 0;
  return overflow ? 0 : static_cast<int64_t>(v);
}
}  // namespace

int64_t index_arg(py::handle o) {
  bool overflow = false;
  int64_t v = index_value(o, overflow);
  if (overflow) throw OverflowError("Python int too large to convert to C long");
  return v;
}

std::vector<int64_t> index_list(py::handle o) {
  std::vector<int64_t> r;
  if (!PyTuple_Check(o.ptr()) && !PyList_Check(o.ptr())) {
    if (!py::hasattr(o, "__index__") && py::isinstance<py::sequence>(o) && !py::isinstance<py::str>(o)) {
      for (auto item : py::reinterpret_borrow<py::sequence>(o)) r.push_back(index_arg(item));
      return r;
    }
    r.push_back(index_arg(o));
    return r;
  }
  for (auto item : py::reinterpret_borrow<py::sequence>(o)) r.push_back(index_arg(item));
  return r;
}

Shape to_shape(py::handle o) {
  Shape sh;
  auto dim = [&](py::handle item) {
    bool overflow = false;
    int64_t v = index_value(item, overflow);
    if (overflow) throw ValueError("Maximum allowed dimension exceeded");
    sh.push_back(v);
  };
  if (PyLong_Check(o.ptr()) || py::hasattr(o, "__index__")) {
    if (!PyTuple_Check(o.ptr()) && !PyList_Check(o.ptr())) {
      dim(o);
      return sh;
    }
  }
  if (!py::isinstance<py::sequence>(o) || py::isinstance<py::str>(o)) not_an_integer(o);
  for (auto item : py::reinterpret_borrow<py::sequence>(o)) dim(item);
  return sh;
}

void register_errors(py::module_& m) {
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const AxisError& e) {
      py::object axis_error = py::module_::import("numpy.exceptions").attr("AxisError");
      PyErr_SetObject(axis_error.ptr(), py::str(e.what()).ptr());
    } catch (const ValueError& e) {
      PyErr_SetString(PyExc_ValueError, e.what());
    } catch (const TypeError& e) {
      PyErr_SetString(PyExc_TypeError, e.what());
    } catch (const IndexError& e) {
      PyErr_SetString(PyExc_IndexError, e.what());
    } catch (const OverflowError& e) {
      PyErr_SetString(PyExc_OverflowError, e.what());
    } catch (const ArrayMemoryError& e) {
      py::object cls = py::module_::import("numpy._core._exceptions").attr("_ArrayMemoryError");
      py::object exc = cls(to_tuple(e.shape), dtype_objects().at(e.dtype_code));
      PyErr_SetObject(cls.ptr(), exc.ptr());
    } catch (const MemoryError& e) {
      PyErr_SetString(PyExc_MemoryError, e.what());
    } catch (const CastingError& e) {
      PyErr_SetString(PyExc_TypeError, e.what());
    } catch (const FloatingPointError& e) {
      PyErr_SetString(PyExc_FloatingPointError, e.what());
    } catch (const std::invalid_argument& e) {
      PyErr_SetString(PyExc_TypeError, e.what());
    } catch (const py::cast_error& e) {
      // A Python object pybind11 could not convert is a wrong argument type, as NumPy
      // reports it (Note [integer arguments]), never a RuntimeError.
      PyErr_SetString(PyExc_TypeError, e.what());
    }
  });
}

void bind_ndarray(py::module_& m) {
  m.def("_set_dtype_objects", [](py::list dtypes, py::list types) {
    dtype_objects().clear();
    scalar_types().clear();
    for (auto d : dtypes) dtype_objects().push_back(py::reinterpret_borrow<py::object>(d));
    for (auto t : types) scalar_types().push_back(py::reinterpret_borrow<py::object>(t));
    check_fast_scalars();
  });

  m.def("_view_as", [](py::handle a, py::handle cls) -> py::object {
    // The array `a` as an instance of `cls` (npc.ndarray or a Python subclass), sharing its
    // memory, base and flags; __array_finalize__ is the caller's (python/npc/_array.py).
    PyArray* s = array_ptr(a);
    auto* t = reinterpret_cast<PyTypeObject*>(cls.ptr());
    if (!s || !PyType_Check(cls.ptr()) || !PyType_IsSubtype(t, g_array_type))
      throw TypeError("_view_as expects an npc array and a subclass of npc.ndarray");
    auto heap = std::make_unique<PyArray>(static_cast<const ndarray&>(*s));
    heap->base = s->base.is_none() ? py::reinterpret_borrow<py::object>(a) : s->base;
    heap->warn_on_write = s->warn_on_write;
    PyObject* o = py::detail::make_new_instance(t);
    if (!o) throw py::error_already_set();
    auto* inst = reinterpret_cast<py::detail::instance*>(o);
    auto v_h = inst->get_value_and_holder(g_array_tinfo);
    v_h.value_ptr() = heap.get();
    new (&v_h.holder<std::unique_ptr<PyArray>>()) std::unique_ptr<PyArray>(heap.release());
    v_h.set_holder_constructed();
    inst->owned = true;
    return py::reinterpret_steal<py::object>(o);
  });

  auto cls = py::class_<PyArray>(m, "ndarray", py::buffer_protocol(), py::module_local(false));
  g_array_type = reinterpret_cast<PyTypeObject*>(cls.ptr());
  g_array_tinfo = py::detail::get_type_info(typeid(PyArray));
  check_fast_instances();
  cls
      .def_buffer([](PyArray& a) -> py::buffer_info {
        std::vector<py::ssize_t> shape(a.shape().begin(), a.shape().end());
        std::vector<py::ssize_t> strides(a.strides().begin(), a.strides().end());
        return py::buffer_info(a.data(), static_cast<py::ssize_t>(a.itemsize()), buffer_format(a.dtype()),
                               a.ndim(), shape, strides, !a.writeable() || a.warn_on_write);
      })
      .def_property_readonly("shape", [](const PyArray& a) { return to_tuple(a.shape()); })
      .def_property_readonly("strides", [](const PyArray& a) { return to_tuple(a.strides()); })
      .def_property_readonly("ndim", [](const PyArray& a) { return a.ndim(); })
      .def_property_readonly("size", [](const PyArray& a) { return a.size(); })
      .def_property_readonly("itemsize", [](const PyArray& a) { return a.itemsize(); })
      .def_property_readonly("nbytes", [](const PyArray& a) { return a.nbytes(); })
      .def_property_readonly("dtype", [](const PyArray& a) { return dtype_objects().at(static_cast<int>(a.dtype())); })
      .def_property_readonly("_code", [](const PyArray& a) { return static_cast<int>(a.dtype()); })
      .def_property_readonly("base", [](const PyArray& a) { return a.base; })
      .def_property_readonly("_data_ptr", [](const PyArray& a) { return reinterpret_cast<uintptr_t>(a.data()); })
      .def_property_readonly("_storage_id", [](const PyArray& a) { return reinterpret_cast<uintptr_t>(a.storage().get()); })
      .def_property_readonly("_flags", [](const PyArray& a) {
        auto f = a.flags();
        return py::make_tuple(f.c_contiguous, f.f_contiguous, f.aligned, f.writeable, f.owndata);
      })
      .def("_set_writeable", [](PyArray& a, bool w) {
        if (w && !a.writeable() && !a.base.is_none()) {
          // NumPy allows re-enabling writes only when the base is writeable.
          py::object b = a.base;
          if (py::hasattr(b, "flags") && !b.attr("flags").attr("writeable").cast<bool>())
            throw ValueError("cannot set WRITEABLE flag to True of this array");
        }
        a.set_writeable(w);
        a.warn_on_write = false;
      })
      .def_property_readonly("__array_interface__", [](py::object self) {
        auto& a = self.cast<PyArray&>();
        py::dict d;
        d["shape"] = to_tuple(a.shape());
        d["typestr"] = typestr(a.dtype());
        d["data"] = py::make_tuple(reinterpret_cast<uintptr_t>(a.data()), !a.writeable());
        d["strides"] = a.is_c_contiguous() ? py::object(py::none()) : py::object(to_tuple(a.strides()));
        d["version"] = 3;
        return d;
      })
      .def_property_readonly("T", [](py::object self) { return wrap(self.cast<PyArray&>().T(), self); })
      .def("_real", [](py::object self) { return wrap(self.cast<PyArray&>().real(), self); })
      .def("_imag", [](py::object self) { return wrap(self.cast<PyArray&>().imag(), self); })
      .def("_astype", [](py::object self, int code, const std::string& order, const std::string& casting, bool copy) {
        auto& a = self.cast<PyArray&>();
        ndarray r = a.astype(static_cast<DType>(code), order_from_name(order), casting_from_name(casting), copy);
        // The same array (copy=False, nothing to convert). Traced arrays all point at one
        // placeholder storage: only the same traced value is the same array.
        if (r.storage() == a.storage() && r.trace() == a.trace() && r.offset() == a.offset() && r.dtype() == a.dtype() &&
            r.strides() == a.strides())
          return self;
        return wrap(std::move(r), self);
      })
      .def("_copy", [](const PyArray& a, const std::string& order) { return wrap(a.copy(order_from_name(order))); })
      .def("_fill", [](PyArray& a, py::handle v) {
        if (a.warn_on_write) warn_write(a);
        a.fill(from_python(v));
        report_fp("cast");
      })
      .def("_view", [](py::object self, int code) { return wrap(self.cast<PyArray&>().view(static_cast<DType>(code)), self); })
      .def("_reshape", [](py::object self, py::handle shape, const std::string& order) {
        Shape sh = to_shape(shape);
        return wrap(self.cast<PyArray&>().reshape(sh, order_from_name(order)), self);
      })
      .def("_transpose", [](py::object self, std::vector<int64_t> axes) {
        return wrap(self.cast<PyArray&>().transpose(axes), self);
      })
      .def("_tobytes", [](const PyArray& a, const std::string& order) {
        std::string s = a.tobytes(order_from_name(order));
        return py::bytes(s);
      })
      .def("_item", [](const PyArray& a) { return to_python(a.item()); })
      .def("_item_at", [](const PyArray& a, std::vector<int64_t> idx) { return to_python(a.item(idx)); })
      .def("_scalar", [](const PyArray& a) { return to_numpy_scalar(a.item()); })
      .def("_copy_from", [](PyArray& a, const PyArray& src) {
        if (a.warn_on_write) warn_write(a);
        copy_into(a, src);
        report_fp("cast");
      });

  m.def("_from_buffer", [](py::object owner, int code, uintptr_t ptr, py::handle shape, py::handle strides,
                           bool readonly) {
    Shape sh = to_shape(shape);
    Strides st = to_shape(strides);
    PyObject* raw = owner.ptr();
    // The storage spans the owner's valid memory (Note [storages of NumPy arrays]).
    std::span<std::byte> block;
    if (py::detail::npy_api::get().PyArray_Check_(raw) && py::detail::array_proxy(raw)->data == reinterpret_cast<char*>(ptr))
      block = numpy_valid_block(raw);
    Py_INCREF(raw);
    ndarray a = from_memory(reinterpret_cast<void*>(ptr), static_cast<DType>(code), sh, st,
                            [raw] {
                              AcquireGil g;
                              Py_DECREF(raw);
                            },
                            !readonly, block);
    PyArray r(std::move(a));
    r.base = owner;
    return py::cast(std::move(r));
  });
  m.def("_copy_into", [](PyArray& dst, const PyArray& src) {
    if (dst.warn_on_write) warn_write(dst);
    copy_into(dst, src);
    report_fp("cast");
  });
  m.def("_shares_storage", [](const PyArray& a, const PyArray& b) { return a.storage() == b.storage(); });
  m.def("memory_stats", [] {
    auto s = memory_stats();
    py::dict d;
    d["current_bytes"] = s.current_bytes;
    d["peak_bytes"] = s.peak_bytes;
    return d;
  }, "Bytes held by npc's allocator now and at peak (dict: current_bytes, peak_bytes).");
  m.def("reset_peak_memory_stats", &reset_peak_memory_stats, "Resets the peak of memory_stats() to the current value.");
}

// ---------------------------------------------------------------- fast slots (Note [fast slots])
namespace {
PyObject* tuple_of(const std::vector<int64_t>& v) {
  PyObject* t = PyTuple_New(static_cast<Py_ssize_t>(v.size()));
  if (!t) return nullptr;
  for (size_t i = 0; i < v.size(); ++i) {
    PyObject* x = PyLong_FromLongLong(v[i]);
    if (!x) { Py_DECREF(t); return nullptr; }
    PyTuple_SET_ITEM(t, static_cast<Py_ssize_t>(i), x);
  }
  return t;
}

// The attributes served by getset descriptors; the descriptors they replace stay reachable
// for setting (a property another layer gives a setter keeps it).
enum FastAttr { kShape, kDtype, kNdim, kSize, kStrides, kItemsize, kNbytes, kNumFastAttrs };
PyObject* g_replaced_attr[kNumFastAttrs] = {};

PyObject* fast_get(PyObject* self, void* closure) {
  PyArray* a = array_ptr(self);
  if (!a) {  // not reachable through the type's own descriptors; kept for safety
    PyErr_SetString(PyExc_TypeError, "expected an npc.ndarray");
    return nullptr;
  }
  const auto attr = static_cast<FastAttr>(reinterpret_cast<intptr_t>(closure));
  if (a->is_traced() && (attr == kShape || attr == kSize || attr == kStrides || attr == kNbytes)) [[unlikely]]
    tracer::specialise_shape(*a);  // Note [shapes read in Python] in src/tracer/trace_inputs.cpp
  switch (attr) {
    case kShape: return tuple_of(a->shape());
    case kDtype: return py::object(dtype_objects().at(static_cast<int>(a->dtype()))).release().ptr();
    case kNdim: return PyLong_FromLong(a->ndim());
    case kSize: return PyLong_FromLongLong(a->size());
    case kStrides: return tuple_of(a->strides());
    case kItemsize: return PyLong_FromSize_t(a->itemsize());
    case kNbytes: return PyLong_FromLongLong(a->nbytes());
    default: break;
  }
  PyErr_SetString(PyExc_SystemError, "npc: unknown fast attribute");
  return nullptr;
}

int fast_set(PyObject* self, PyObject* value, void* closure) {
  PyObject* old = g_replaced_attr[reinterpret_cast<intptr_t>(closure)];
  descrsetfunc set = old ? Py_TYPE(old)->tp_descr_set : nullptr;
  if (!set) {
    PyErr_SetString(PyExc_AttributeError, "attribute is not writable");
    return -1;
  }
  return set(old, self, value);
}

PyGetSetDef g_fast_getsets[] = {
    {"shape", fast_get, fast_set, "Tuple of array dimensions (numpy.ndarray.shape).", reinterpret_cast<void*>(kShape)},
    {"dtype", fast_get, fast_set, "Data type of the elements (numpy.ndarray.dtype).", reinterpret_cast<void*>(kDtype)},
    {"ndim", fast_get, fast_set, "Number of dimensions (numpy.ndarray.ndim).", reinterpret_cast<void*>(kNdim)},
    {"size", fast_get, fast_set, "Number of elements (numpy.ndarray.size).", reinterpret_cast<void*>(kSize)},
    {"strides", fast_get, fast_set, "Byte steps per dimension (numpy.ndarray.strides).", reinterpret_cast<void*>(kStrides)},
    {"itemsize", fast_get, fast_set, "Bytes per element (numpy.ndarray.itemsize).", reinterpret_cast<void*>(kItemsize)},
    {"nbytes", fast_get, fast_set, "Bytes of all elements (numpy.ndarray.nbytes).", reinterpret_cast<void*>(kNbytes)},
};

Py_ssize_t fast_len(PyObject* self) {
  PyArray* a = array_ptr(self);
  if (!a) {
    PyErr_SetString(PyExc_TypeError, "expected an npc.ndarray");
    return -1;
  }
  if (a->ndim() == 0) {
    PyErr_SetString(PyExc_TypeError, "len() of unsized object");
    return -1;
  }
  return static_cast<Py_ssize_t>(a->shape()[0]);
}
// Note [buffer exports]
// numpy.asarray(npc_array) goes through the buffer protocol first (NumPy's array coercion
// tries it before __array_struct__/__array_interface__/__array__, wrapping the export in a
// memoryview that becomes the new array's base, so the npc array stays alive as long as the
// NumPy view does). The export itself is kept cheap: no Python objects, and no allocation in
// the common case. The shape and strides live in a block owned by the array
// (PyArray::buffer_geometry) that every export alive shares; since an array's own geometry
// can change in place (a.shape = ..., a.strides = ..., resize) while a buffer is held, the
// block is rewritten only when no export reads it, and an export made while others hold a
// block of a different geometry gets a private block of its own (freed at release).
int fast_getbuffer(PyObject* self, Py_buffer* view, int flags) {
  view->obj = nullptr;
  PyArray* a = array_ptr(self);
  if (!a) {
    PyErr_SetString(PyExc_BufferError, "expected an npc.ndarray");
    return -1;
  }
  // NumPy's checks, order, exception type and messages (array_getbuffer): the layout first,
  // then writability.
  const bool c = a->is_c_contiguous(), f = a->is_f_contiguous();
  const char* layout = nullptr;
  if ((flags & PyBUF_C_CONTIGUOUS) == PyBUF_C_CONTIGUOUS && !c) layout = "ndarray is not C-contiguous";
  else if ((flags & PyBUF_F_CONTIGUOUS) == PyBUF_F_CONTIGUOUS && !f) layout = "ndarray is not Fortran contiguous";
  else if ((flags & PyBUF_ANY_CONTIGUOUS) == PyBUF_ANY_CONTIGUOUS && !c && !f) layout = "ndarray is not contiguous";
  else if ((flags & PyBUF_STRIDES) != PyBUF_STRIDES && !c) layout = "ndarray is not C-contiguous";
  if (layout) {
    PyErr_SetString(PyExc_ValueError, layout);
    return -1;
  }
  if ((flags & PyBUF_WRITABLE) == PyBUF_WRITABLE) {
    if (!a->writeable()) {
      PyErr_SetString(PyExc_ValueError, "buffer source array is read-only");
      return -1;
    }
    if (a->warn_on_write) {  // a writable export of a broadcast_arrays view: NumPy's DeprecationWarning
      PyObject* ok = guarded([&]() -> PyObject* {
        warn_write(*a);
        return Py_NewRef(Py_None);
      });
      if (!ok) return -1;
      Py_DECREF(ok);
    }
  }
  // A read-only request of a broadcast_arrays view with WARN_ON_WRITE exports read-only, as
  // NumPy does.
  const bool readonly = !a->writeable() || a->warn_on_write;
  if (a->is_traced()) {  // realises a traced array first (a graph break)
    PyObject* ok = guarded([&]() -> PyObject* {
      a->realize();
      return Py_NewRef(Py_None);
    });
    if (!ok) return -1;
    Py_DECREF(ok);
  }
  const int nd = a->ndim();
  const Shape& shape = a->shape();
  const Strides& strides = a->strides();
  BufferGeometry& g = a->buffer_geometry;
  auto same_geometry = [&] {
    if (g.ndim != nd) return false;
    for (int d = 0; d < nd; ++d)
      if (g.block[d] != shape[d] || g.block[nd + d] != strides[d]) return false;
    return true;
  };
  Py_ssize_t* geometry;
  if (g.exports == 0 || same_geometry()) {
    if (g.exports == 0) {
      if (g.capacity < nd || !g.block) {
        const int cap = std::max(nd, 4);
        auto* block = new (std::nothrow) Py_ssize_t[static_cast<size_t>(2 * cap)];
        if (!block) {
          PyErr_NoMemory();
          return -1;
        }
        delete[] g.block;
        g.block = block;
        g.capacity = cap;
      }
      for (int d = 0; d < nd; ++d) {
        g.block[d] = static_cast<Py_ssize_t>(shape[d]);
        g.block[nd + d] = static_cast<Py_ssize_t>(strides[d]);
      }
      g.ndim = nd;
    }
    ++g.exports;
    geometry = g.block;
    view->internal = nullptr;  // the shared block
  } else {
    geometry = new (std::nothrow) Py_ssize_t[static_cast<size_t>(2 * nd + 1)];
    if (!geometry) {
      PyErr_NoMemory();
      return -1;
    }
    for (int d = 0; d < nd; ++d) {
      geometry[d] = static_cast<Py_ssize_t>(shape[d]);
      geometry[nd + d] = static_cast<Py_ssize_t>(strides[d]);
    }
    view->internal = geometry;  // a private block, freed at release
  }
  view->buf = a->data();
  view->obj = Py_NewRef(self);
  view->len = static_cast<Py_ssize_t>(a->nbytes());
  view->itemsize = static_cast<Py_ssize_t>(a->itemsize());
  view->readonly = readonly;
  view->ndim = (flags & PyBUF_ND) == PyBUF_ND ? nd : 0;  // as NumPy: no shape, no dimensions
  view->format = (flags & PyBUF_FORMAT) == PyBUF_FORMAT ? const_cast<char*>(buffer_format(a->dtype())) : nullptr;
  view->shape = (flags & PyBUF_ND) == PyBUF_ND ? geometry : nullptr;
  view->strides = (flags & PyBUF_STRIDES) == PyBUF_STRIDES ? geometry + nd : nullptr;
  view->suboffsets = nullptr;
  return 0;
}

// Note [fast dealloc]
// The arrays new_array_object makes (Note [unregistered instances]) are freed here instead of
// through pybind11's generic instance destructor, which walks the value/holder layout, looks
// for a registration and saves and restores the Python error indicator around every C++
// destructor. For such an instance (exact npc.ndarray type, simple layout, holder built, not
// registered, no keep-alive patients) only the holder dies: the PyArray it owns and with it
// the storage reference, the geometry and the base. The error indicator is saved only when
// set (the destructor's Py_DECREF of the base may run arbitrary Python code). Every other
// instance goes to pybind11's destructor unchanged.
destructor g_pybind_dealloc = nullptr;

void fast_dealloc(PyObject* self) {
  PyTypeObject* type = Py_TYPE(self);
  auto* inst = reinterpret_cast<py::detail::instance*>(self);
  if (type != g_array_type || !g_fast_instances || !inst->simple_layout || !inst->simple_holder_constructed ||
      inst->simple_instance_registered || inst->has_patients) {
    g_pybind_dealloc(self);
    return;
  }
  if (inst->weakrefs) PyObject_ClearWeakRefs(self);
  PyObject *err_type = nullptr, *err_value = nullptr, *err_tb = nullptr;
  const bool had_error = PyErr_Occurred() != nullptr;
  if (had_error) PyErr_Fetch(&err_type, &err_value, &err_tb);
  if (g_num_cached < kCachedArrays && !inst->weakrefs) {  // Note [array object cache]
    // Releasing the storage and the base may run Python code (which may make and drop
    // arrays): the object is parked only once it is reset, if there is still room.
    PyArray* pa = cached_payload(self);
    static const ndarray* parked = new ndarray(Storage::allocate(8), 0, DType::Float64, {}, {});  // leaked, as the cache
    static_cast<ndarray&>(*pa) = *parked;  // drops the storage and trace
    pa->base = py::none();
    pa->warn_on_write = false;
    if (g_num_cached < kCachedArrays) {
      g_cached_arrays[g_num_cached++] = self;
      if (had_error) PyErr_Restore(err_type, err_value, err_tb);
      return;
    }
  }
  using Holder = std::unique_ptr<PyArray>;
  reinterpret_cast<Holder*>(&inst->simple_value_holder[1])->~Holder();
  inst->simple_holder_constructed = false;
  inst->simple_value_holder[0] = nullptr;
  if (had_error) PyErr_Restore(err_type, err_value, err_tb);
  type->tp_free(self);
  Py_DECREF(type);  // heap types: each instance holds a reference to its type (as pybind11)
}

void fast_releasebuffer(PyObject* self, Py_buffer* view) {
  if (view->internal) {
    delete[] static_cast<Py_ssize_t*>(view->internal);
  } else if (PyArray* a = array_ptr(self)) {
    --a->buffer_geometry.exports;
  }
}
}  // namespace

void install_fast_ndarray(PyTypeObject* type) {
  PyObject* dict = type->tp_dict;
  for (auto& def : g_fast_getsets) {
    const auto idx = reinterpret_cast<intptr_t>(def.closure);
    PyObject* old = PyDict_GetItemString(dict, def.name);  // borrowed
    if (old && Py_TYPE(old) == &PyGetSetDescr_Type) continue;  // installed already
    Py_XINCREF(old);
    Py_XDECREF(g_replaced_attr[idx]);
    g_replaced_attr[idx] = old;
    PyObject* d = PyDescr_NewGetSet(type, &def);
    if (!d) throw py::error_already_set();
    int rc = PyDict_SetItemString(dict, def.name, d);
    Py_DECREF(d);
    if (rc < 0) throw py::error_already_set();
  }
  if (type->tp_dealloc != fast_dealloc) {
    g_pybind_dealloc = type->tp_dealloc;
    type->tp_dealloc = fast_dealloc;
  }
  type->tp_as_buffer->bf_getbuffer = fast_getbuffer;
  type->tp_as_buffer->bf_releasebuffer = fast_releasebuffer;
  type->tp_as_mapping->mp_length = fast_len;
  type->tp_as_sequence->sq_length = fast_len;
  PyType_Modified(type);
}

}  // namespace npc::py_bind
