// Bindings of the ops layer: one generic entry point per ufunc method (call, reduce,
// accumulate, outer, at) keyed by op id, not one function per op.
#include <pybind11/stl.h>

#include "bindings.hpp"
#include "npc/creation.hpp"
#include "npc/ops.hpp"
#include "ops/exec.hpp"
#include "ops/loops.hpp"

namespace npc::py_bind {

namespace {

// Arrays at least this big run their kernels with the GIL released.
constexpr int64_t kReleaseGil = 4096;

py::object& py_from_numpy() {
  static py::object* f = new py::object(py::module_::import("npc._array").attr("_from_numpy"));  // leaked: outlives interpreter shutdown
  return *f;
}
py::object& np_asarray() {
  static py::object* f = new py::object(py::module_::import("numpy").attr("asarray"));  // leaked: outlives interpreter shutdown
  return *f;
}
py::object& np_generic() {
  static py::object* f = new py::object(py::module_::import("numpy").attr("generic"));  // leaked: outlives interpreter shutdown
  return *f;
}

// Raised (as a Python exception) when an operand is not native to npc: the Python layer
// then runs the call on NumPy.
struct NotNative {};

// A Python int outside int64 and uint64 (Note [big Python ints]): the call runs in Python
// (npc._ufunc._big_int_call), which converts it as NumPy does for the loop chosen.
struct BigPyInt : OverflowError {
  BigPyInt() : OverflowError("Python int too large to convert to C long") {}
};

PyArray* as_array(py::handle o) {
  if (py::isinstance<PyArray>(o)) return &o.cast<PyArray&>();
  return nullptr;
}

// One ufunc operand: npc arrays as they are, Python scalars weak (NEP 50), NumPy scalars
// and array-likes strong.
Operand to_operand(py::handle o, std::vector<py::object>& keep) {
  if (PyArray* a = as_array(o)) return {*a, false};
  PyObject* p = o.ptr();
  if (PyBool_Check(p)) return {scalar_array(Scalar::from_bool(p == Py_True)), false};
  if (PyLong_CheckExact(p) || (PyLong_Check(p) && !PyObject_IsInstance(p, np_generic().ptr()))) {
    int overflow = 0;
    long long v = PyLong_AsLongLongAndOverflow(p, &overflow);
    if (!overflow) return {scalar_array(Scalar::from_int(v)), true};
    unsigned long long u = PyLong_AsUnsignedLongLong(p);
    if (PyErr_Occurred()) {
      PyErr_Clear();
      throw BigPyInt{};
    }
    return {scalar_array(Scalar::from_uint(u)), true};
  }
  if (PyFloat_CheckExact(p)) return {scalar_array(Scalar::from_double(PyFloat_AS_DOUBLE(p))), true};
  if (PyComplex_CheckExact(p)) {
    Py_complex c = PyComplex_AsCComplex(p);
    return {scalar_array(Scalar::from_complex({c.real, c.imag})), true};
  }
  // NumPy scalars, NumPy arrays, lists: through numpy.asarray, adopted zero-copy.
  py::object arr = np_asarray()(o);
  py::object conv = py_from_numpy()(arr);
  if (PyArray* a = as_array(conv)) {
    keep.push_back(conv);
    return {*a, false};
  }
  throw NotNative{};
}

std::optional<DType> dtype_arg(int code) {
  if (code < 0) return std::nullopt;
  return static_cast<DType>(code);
}

py::object result_object(ndarray r, bool unwrap) {
  // Traced results stay 0-d arrays (DESIGN.md: results of tracing are not unwrapped).
  if (unwrap && r.ndim() == 0 && !r.is_traced()) return to_numpy_scalar(r.item());
  return wrap(std::move(r));
}

// Floating-point errors of the last call: NumPy's error state decides (Python side).
void report_fpe(OpId op) {
  int f = take_fp_errors();
  if (!f) return;
  static py::object* handler = new py::object(py::module_::import("npc._ufunc").attr("_fp_error"));
  (*handler)(f, std::string(op_info(op).name));
}

// Floating-point errors of a ufunc method, reported where NumPy names them ("reduce",
// "accumulate") instead of under the ufunc's name.
void report_fpe_in(const char* where) {
  int f = take_fp_errors();
  if (!f) return;
  static py::object* handler = new py::object(py::module_::import("npc._ufunc").attr("_fp_error"));
  (*handler)(f, std::string(where));
}

py::object not_native() {
  static py::object* sentinel = new py::object(py::module_::import("npc._ufunc").attr("_NOT_NATIVE"));
  return *sentinel;
}

// ufunc.__call__ for the bindings and the operators.
py::object ufunc_call_impl(int op_id, py::tuple args, py::object out, py::object where, int dtype, int casting,
                           const std::string& order) {
    OpId op = static_cast<OpId>(op_id);
    if (out.is_none() && where.is_none() && dtype < 0 && casting == 3 && order == "K" && args.size() <= 3) {
      // Fast path: arrays and Python scalars, no keywords (Note [weak integers] applies).
      ops::FastInput fin[ops::kMaxOperands];
      bool ok = true;
      int64_t size = 0;
      for (size_t i = 0; i < args.size() && ok; ++i) {
        PyObject* p = args[i].ptr();
        if (PyArray* a = as_array(p)) {
          fin[i].array = a;
          size = std::max(size, a->size());
        } else if (PyFloat_CheckExact(p)) {
          fin[i].scalar = Scalar::from_double(PyFloat_AS_DOUBLE(p));
        } else if (PyLong_CheckExact(p)) {
          int overflow = 0;
          long long v = PyLong_AsLongLongAndOverflow(p, &overflow);
          if (overflow) ok = false;
          else fin[i].scalar = Scalar::from_int(v);
        } else if (PyComplex_CheckExact(p)) {
          Py_complex c = PyComplex_AsCComplex(p);
          fin[i].scalar = Scalar::from_complex({c.real, c.imag});
        } else {
          ok = false;
        }
      }
      if (ok) {
        std::optional<ndarray> r;
        if (size >= kReleaseGil) {
          ReleaseGil nogil;
          r = ops::call_ufunc_fast(op, fin, static_cast<int>(args.size()));
        } else {
          r = ops::call_ufunc_fast(op, fin, static_cast<int>(args.size()));
        }
        if (r) {
          report_fpe(op);
          return result_object(std::move(*r), true);
        }
      }
    }
    std::vector<py::object> keep;
    std::vector<Operand> ins;
    UfuncOptions opts;
    bool unwrap = true;
    try {
      ins.reserve(args.size());
      for (auto a : args) ins.push_back(to_operand(a, keep));
      if (!out.is_none()) {
        for (auto o : py::reinterpret_borrow<py::tuple>(out)) {
          if (o.is_none()) { opts.out.emplace_back(); continue; }
          PyArray* oa = as_array(o);
          if (!oa) throw NotNative{};
          opts.out.emplace_back(*oa);
          unwrap = false;
        }
      }
      if (!where.is_none() && !(PyBool_Check(where.ptr()) && where.ptr() == Py_True)) {
        std::vector<py::object> k2;
        Operand w = to_operand(where, k2);
        keep.insert(keep.end(), k2.begin(), k2.end());
        opts.where = w.array;
      }
    } catch (const NotNative&) {
      return not_native();
    } catch (const BigPyInt&) {
      static py::object* big = new py::object(py::module_::import("npc._ufunc").attr("_big_int_call"));
      return (*big)(op_id, args, out, where, dtype, casting, order);
    }
    opts.dtype = dtype_arg(dtype);
    opts.casting = static_cast<Casting>(casting);
    opts.order = order_from_name(order);
    int64_t size = 0;
    for (const auto& o : ins) size = std::max(size, o.array.size());
    std::vector<ndarray> res;
    if (size >= kReleaseGil) {
      ReleaseGil nogil;
      res = call_ufunc(op, ins, opts);
    } else {
      res = call_ufunc(op, ins, opts);
    }
    report_fpe(op);
    if (res.size() == 1) {
      if (!opts.out.empty() && opts.out[0]) return py::reinterpret_borrow<py::object>(py::tuple(out)[0]);
      return result_object(std::move(res[0]), unwrap);
    }
    py::tuple t(res.size());
    for (size_t k = 0; k < res.size(); ++k) {
      if (k < opts.out.size() && opts.out[k]) t[k] = py::tuple(out)[k];
      else t[k] = result_object(std::move(res[k]), unwrap && (opts.out.empty()));
    }
    return t;
}

// NumPy's binop deferral: operands whose type sets __array_ufunc__ = None get NotImplemented.
bool defers(py::handle other) {
  PyObject* o = other.ptr();
  if (PyFloat_CheckExact(o) || PyLong_CheckExact(o) || PyComplex_CheckExact(o) || PyBool_Check(o) ||
      py::isinstance<PyArray>(other))
    return false;
  PyObject* au = PyObject_GetAttrString(reinterpret_cast<PyObject*>(Py_TYPE(o)), "__array_ufunc__");
  if (!au) {
    PyErr_Clear();
    return false;
  }
  bool none = au == Py_None;
  Py_DECREF(au);
  return none;
}

py::object operator_fallback(int op_id, py::tuple args, py::object out) {
  static py::object* fb = new py::object(py::module_::import("npc._ufunc").attr("_operator_fallback"));
  return (*fb)(op_id, args, out);
}

// a <op> b as an ndarray operator: fast path, then the general ufunc call.
py::object binary_operator(int op_id, py::handle a, py::handle b, bool inplace) {
  if (defers(b)) return py::reinterpret_borrow<py::object>(Py_NotImplemented);
  py::tuple args = py::make_tuple(a, b);
  py::object out = inplace ? py::object(py::make_tuple(a)) : py::object(py::none());
  py::object r = ufunc_call_impl(op_id, args, out, py::none(), -1, 3, "K");
  if (r.is(not_native())) r = operator_fallback(op_id, args, out);
  if (inplace) return py::reinterpret_borrow<py::object>(a);
  return r;
}

}  // namespace

void bind_ops(py::module_& m) {
  // UfuncCastingError -> NumPy's own _UFuncInputCastingError / _UFuncOutputCastingError.
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const UfuncCastingError& e) {
      py::object exc = py::module_::import("numpy._core._exceptions")
                           .attr(e.output ? "_UFuncOutputCastingError" : "_UFuncInputCastingError");
      py::object dts = py::module_::import("npc._dtypes").attr("DTYPES");
      py::object uf = py::module_::import("numpy").attr(std::string(op_info(e.op).name).c_str());
      py::object err = exc(uf, casting_rule_name(e.casting), dts[py::int_(static_cast<int>(e.from))],
                           dts[py::int_(static_cast<int>(e.to))], e.index);
      PyErr_SetObject(exc.ptr(), err.ptr());
    } catch (const UfuncNoLoopError& e) {
      py::object exc = py::module_::import("numpy._core._exceptions").attr("_UFuncNoLoopError");
      py::object dts = py::module_::import("npc._dtypes").attr("DTYPES");
      const OpInfo& info = op_info(e.op);
      py::tuple types(e.in.size() + info.nout);
      for (size_t i = 0; i < e.in.size(); ++i) types[i] = py::type::of(dts[py::int_(static_cast<int>(e.in[i]))]);
      for (int k = 0; k < info.nout; ++k) types[e.in.size() + k] = py::none();
      py::object uf = py::module_::import("numpy").attr(std::string(info.name).c_str());
      py::object err = exc(uf, types);
      PyErr_SetObject(exc.ptr(), err.ptr());
    }
  });

  m.def("op_table", [] {
    py::list rows;
    for (int i = 0; i < kNumOps; ++i) {
      const OpInfo& o = op_info(static_cast<OpId>(i));
      rows.append(py::make_tuple(std::string(o.name), static_cast<int>(o.kind), o.nin, o.nout,
                                 static_cast<int>(o.identity), o.differentiable, std::string(o.loops)));
    }
    return rows;
  }, "Rows of ops.def: (name, kind 0=ufunc 1=reduce 2=prim, nin, nout, identity, differentiable, loops).");

  m.def("op_kernels", [](int op) {
    py::list out;
    for (const auto& l : ops::loops_of(static_cast<OpId>(op))) {
      std::string sig;
      for (DType t : l.in) sig += ops::char_from_dtype(t);
      sig += "->";
      for (DType t : l.out) sig += ops::char_from_dtype(t);
      out.append(py::make_tuple(sig, l.fn != nullptr));
    }
    return out;
  }, "Loops of a ufunc row and whether each has an eager kernel: [(signature, bool)].");

  m.def("resolve_loop", [](int op, std::vector<int> in, std::vector<bool> weak, int dtype) {
    std::vector<DType> dts;
    for (int c : in) dts.push_back(static_cast<DType>(c));
    std::unique_ptr<bool[]> w(new bool[weak.size()]);
    for (size_t i = 0; i < weak.size(); ++i) w[i] = weak[i];
    LoopTypes lt = resolve_loop(static_cast<OpId>(op), dts, std::span<const bool>(w.get(), weak.size()), dtype_arg(dtype));
    std::vector<int> a, b;
    for (DType t : lt.in) a.push_back(static_cast<int>(t));
    for (DType t : lt.out) b.push_back(static_cast<int>(t));
    return py::make_tuple(a, b);
  });

  m.def("ufunc_call_simple", [](int op_id, py::tuple args) {
    return ufunc_call_impl(op_id, std::move(args), py::none(), py::none(), -1, 3, "K");
  }, "ufunc.__call__ without keywords: (op, inputs).");
  m.def("reduce_all", [](int op_id, const PyArray& a) -> py::object {
    ndarray r;
    if (a.size() >= kReleaseGil) {
      ReleaseGil nogil;
      r = reduce(static_cast<OpId>(op_id), a);
    } else {
      r = reduce(static_cast<OpId>(op_id), a);
    }
    report_fpe_in("reduce");
    return result_object(std::move(r), true);
  }, "Full reduction with default options (a.sum(), a.max(), ...).");
  m.def("ufunc_call", &ufunc_call_impl,
        "Generic ufunc.__call__: (op, inputs, out tuple|None, where|None, dtype code|-1, casting code, order).");

  m.def("ufunc_outer", [](int op_id, py::object a, py::object b, int dtype) -> py::object {
    std::vector<py::object> keep;
    Operand x, y;
    try {
      x = to_operand(a, keep);
      y = to_operand(b, keep);
    } catch (const NotNative&) {
      return not_native();
    }
    UfuncOptions opts;
    opts.dtype = dtype_arg(dtype);
    auto res = outer(static_cast<OpId>(op_id), x, y, opts);
    report_fpe(static_cast<OpId>(op_id));
    if (res.size() == 1) return result_object(res[0], true);
    py::tuple t(res.size());
    for (size_t k = 0; k < res.size(); ++k) t[k] = result_object(res[k], true);
    return t;
  });

  m.def("ufunc_reduce", [](int op_id, const PyArray& a, py::object axes, bool keepdims, int dtype, py::object out,
                           py::object initial, py::object where) -> py::object {
    ReduceOptions o;
    if (!axes.is_none()) o.axes = axes.cast<std::vector<int64_t>>();
    o.keepdims = keepdims;
    o.dtype = dtype_arg(dtype);
    if (!out.is_none()) o.out = out.cast<PyArray&>();
    if (!initial.is_none()) o.initial = from_python(initial);
    if (!where.is_none()) o.where = where.cast<PyArray&>();
    ndarray r;
    if (a.size() >= kReleaseGil) {
      ReleaseGil nogil;
      r = reduce(static_cast<OpId>(op_id), a, o);
    } else {
      r = reduce(static_cast<OpId>(op_id), a, o);
    }
    report_fpe_in("reduce");
    if (!out.is_none()) return out;
    return result_object(std::move(r), true);
  });

  m.def("ufunc_accumulate", [](int op_id, const PyArray& a, int64_t axis, int dtype, py::object out) -> py::object {
    std::optional<ndarray> o;
    if (!out.is_none()) o = out.cast<PyArray&>();
    ndarray r;
    {
      ReleaseGil nogil;
      r = accumulate(static_cast<OpId>(op_id), a, axis, dtype_arg(dtype), o);
    }
    report_fpe_in("accumulate");
    if (!out.is_none()) return out;
    return wrap(std::move(r));
  });

  m.def("arg_reduce", [](int op_id, const PyArray& a, py::object axis, bool keepdims) -> py::object {
    std::optional<int64_t> ax;
    if (!axis.is_none()) ax = axis.cast<int64_t>();
    ndarray r;
    {
      ReleaseGil nogil;
      r = arg_reduce(static_cast<OpId>(op_id), a, ax, keepdims);
    }
    return result_object(std::move(r), true);
  });

  m.def("ufunc_at", [](int op_id, PyArray& a, const PyArray& idx, py::object b) {
    std::optional<Operand> ob;
    std::vector<py::object> keep;
    if (!b.is_none()) ob = to_operand(b, keep);
    ufunc_at(static_cast<OpId>(op_id), a, idx, ob);
    report_fpe_in("at");
  });

  m.def("where3", [](py::object c, py::object x, py::object y) -> py::object {
    std::vector<py::object> keep;
    Operand oc, ox, oy;
    try {
      oc = to_operand(c, keep);
      ox = to_operand(x, keep);
      oy = to_operand(y, keep);
    } catch (const NotNative&) {
      return not_native();
    } catch (const BigPyInt&) {
      static py::object* big = new py::object(py::module_::import("npc._ufunc").attr("_big_int_where"));
      return (*big)(c, x, y);
    }
    // numpy.where treats a Python bool condition as an array, and returns an array (never a scalar).
    return wrap(where(oc.array, ox, oy));
  }, "numpy.where(cond, x, y).");

  // Installs the arithmetic operators of npc.ndarray as C++ methods (no Python frame per call).
  m.def("_install_operators", [](py::object cls, py::dict binary, py::dict reflected, py::dict inplace, py::dict unary) {
    for (auto item : binary) {
      int op = item.second.cast<int>();
      cls.attr(item.first) = py::cpp_function(
          [op](py::handle self, py::handle other) { return binary_operator(op, self, other, false); },
          py::is_method(cls), py::name(item.first.cast<std::string>().c_str()));
    }
    for (auto item : reflected) {
      int op = item.second.cast<int>();
      cls.attr(item.first) = py::cpp_function(
          [op](py::handle self, py::handle other) -> py::object {
            if (defers(other)) return py::reinterpret_borrow<py::object>(Py_NotImplemented);
            py::tuple args = py::make_tuple(other, self);
            py::object r = ufunc_call_impl(op, args, py::none(), py::none(), -1, 3, "K");
            if (r.is(not_native())) r = operator_fallback(op, args, py::none());
            return r;
          },
          py::is_method(cls), py::name(item.first.cast<std::string>().c_str()));
    }
    for (auto item : inplace) {
      int op = item.second.cast<int>();
      cls.attr(item.first) = py::cpp_function(
          [op](py::handle self, py::handle other) { return binary_operator(op, self, other, true); },
          py::is_method(cls), py::name(item.first.cast<std::string>().c_str()));
    }
    for (auto item : unary) {
      int op = item.second.cast<int>();
      cls.attr(item.first) = py::cpp_function(
          [op](py::handle self) { return ufunc_call_impl(op, py::make_tuple(self), py::none(), py::none(), -1, 3, "K"); },
          py::is_method(cls), py::name(item.first.cast<std::string>().c_str()));
    }
  });

  m.def("set_num_threads", &set_num_threads, py::arg("n"),
        "Number of threads npc's eager kernels use (default: all cores).");
  m.def("get_num_threads", &get_num_threads, "Number of threads npc's eager kernels use.");
  m.def("set_parallel_threshold", &set_parallel_threshold, py::arg("n"),
        "Element count below which kernels stay on the calling thread.");
  m.def("get_parallel_threshold", &get_parallel_threshold);
}

}  // namespace npc::py_bind
