// Binding of npc::ndarray as npc._core.ndarray (Python's npc.ndarray).
#include <pybind11/stl.h>

#include <cstring>

#include "bindings.hpp"

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

void report_fp(const char* where) {
  int flags = take_fp_flags();
  if (flags) py::module_::import("npc._errstate").attr("report")(flags, where);
}

py::object wrap(ndarray result, py::handle self) {
  report_fp("cast");
  PyArray r(std::move(result));
  if (self && !self.is_none()) {
    auto& s = self.cast<PyArray&>();
    if (s.storage() == r.storage()) {
      r.base = s.base.is_none() ? py::reinterpret_borrow<py::object>(self) : s.base;
      r.warn_on_write = s.warn_on_write;
    }
  }
  return py::cast(std::move(r));
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
  return scalar_types().at(static_cast<int>(s.dtype))(to_python(s));
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

Shape to_shape(py::handle o) {
  Shape sh;
  if (PyLong_Check(o.ptr()) || py::hasattr(o, "__index__")) {
    if (!PyTuple_Check(o.ptr()) && !PyList_Check(o.ptr())) {
      sh.push_back(py::reinterpret_steal<py::object>(PyNumber_Index(o.ptr())).cast<int64_t>());
      return sh;
    }
  }
  if (!py::isinstance<py::sequence>(o) || py::isinstance<py::str>(o))
    throw TypeError("'" + py::str(py::type::of(o).attr("__name__")).cast<std::string>() +
                    "' object cannot be interpreted as an integer");
  for (auto item : py::reinterpret_borrow<py::sequence>(o)) {
    PyObject* idx = PyNumber_Index(item.ptr());
    if (!idx) {
      PyErr_Clear();
      throw TypeError("'" + py::str(py::type::of(item).attr("__name__")).cast<std::string>() +
                      "' object cannot be interpreted as an integer");
    }
    sh.push_back(py::reinterpret_steal<py::object>(idx).cast<int64_t>());
  }
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
    } catch (const std::invalid_argument& e) {
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
  });

  py::class_<PyArray>(m, "ndarray", py::buffer_protocol(), py::module_local(false))
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
        if (r.storage() == a.storage() && r.offset() == a.offset() && r.dtype() == a.dtype() && r.strides() == a.strides())
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
    Py_INCREF(raw);
    ndarray a = from_memory(reinterpret_cast<void*>(ptr), static_cast<DType>(code), sh, st,
                            [raw] {
                              AcquireGil g;
                              Py_DECREF(raw);
                            },
                            !readonly);
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

}  // namespace npc::py_bind
