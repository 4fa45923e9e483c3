// Bindings of the ops layer: one generic entry point per ufunc method (call, reduce,
// accumulate, outer, at) keyed by op id, not one function per op.
#include <pybind11/numpy.h>
#include <pybind11/stl.h>
#include <structmember.h>

#include <array>
#include <utility>

#if defined(__GLIBC__)
#include <dlfcn.h>
#include <execinfo.h>
#endif

#include "bindings.hpp"
#include "npc/creation.hpp"
#include "npc/fusion.hpp"
#include "npc/ops.hpp"
#include "ops/exec.hpp"
#include "ops/loops.hpp"
#include "ops/op_rows.hpp"
#include "tracer/trace.hpp"

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

// Raised (as a Python exception) when an operand is not native to npc: the Python layer
// then runs the call on NumPy.
struct NotNative {};

// A Python int outside int64 and uint64 (Note [big Python ints]): the call runs in Python
// (npc._ufunc._big_int_call), which converts it as NumPy does for the loop chosen.
struct BigPyInt : OverflowError {
  BigPyInt() : OverflowError("Python int too large to convert to C long") {}
};

PyArray* as_array(py::handle o) { return array_ptr(o.ptr()); }

// The type of a float argument while tracing (Note [runtime scalars] in src/tracer/trace_nodes.cpp).
PyTypeObject* g_runtime_float = nullptr;
// The type of an int argument while tracing (Note [runtime ints] in src/tracer/trace_nodes.cpp).
PyTypeObject* g_runtime_int = nullptr;

// The weak operand of a runtime int: the 0-d array of its value (as for a Python int), noted
// in the trace so that it becomes the argument's Scalar node. `_k` < 0: none (outside a trace).
Operand runtime_int_operand(py::handle o) {
  PyObject* v = py::getattr(o, "_v").ptr();
  const int k = py::getattr(o, "_k").cast<int>();
  int overflow = 0;
  long long i = PyLong_AsLongLongAndOverflow(v, &overflow);
  Scalar s = Scalar::from_int(i);
  if (overflow) {
    unsigned long long u = PyLong_AsUnsignedLongLong(v);
    if (PyErr_Occurred()) {
      PyErr_Clear();
      throw BigPyInt{};  // never: runtime ints are within int64 and uint64 (_api.py)
    }
    s = Scalar::from_uint(u);
  }
  ndarray a = scalar_array(s);
  tracer::Context* c = tracer::current();
  if (c && k >= 0) c->note_runtime_operand(a, k);
  return {a, true};
}

// One ufunc operand: npc arrays as they are, Python scalars weak (NEP 50), NumPy scalars
// and array-likes strong.
Operand to_operand(py::handle o, std::vector<py::object>& keep) {
  if (PyArray* a = as_array(o)) return {*a, false};
  PyObject* p = o.ptr();
  if (PyBool_Check(p)) return {scalar_array(Scalar::from_bool(p == Py_True)), false};
  if (PyLong_CheckExact(p)) {  // NumPy: only exact ints are weak (an int subclass is an int64 array)
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
  if (g_runtime_float && Py_TYPE(p) == g_runtime_float)  // a weak Python float standing for an argument
    return {scalar_array(Scalar::from_double(tracer::runtime_operand(PyFloat_AS_DOUBLE(p)))), true};
  if (g_runtime_int && Py_TYPE(p) == g_runtime_int) return runtime_int_operand(o);  // a weak Python int, likewise
  if (PyComplex_CheckExact(p)) {
    Py_complex c = PyComplex_AsCComplex(p);
    return {scalar_array(Scalar::from_complex({c.real, c.imag})), true};
  }
  // NumPy scalars of native dtypes: strong 0-d operands, read directly.
  if (std::optional<Scalar> s = native_numpy_scalar(p)) return {scalar_array(*s), false};
  // Other NumPy scalars, NumPy arrays, lists: through numpy.asarray, adopted zero-copy.
  // Subclasses of numpy.ndarray run on NumPy (Note [NumPy subclasses] in npc/_array.py).
  auto& api = py::detail::npy_api::get();
  if (api.PyArray_Check_(p) && Py_TYPE(p) != reinterpret_cast<PyTypeObject*>(api.PyArray_Type_)) throw NotNative{};
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
  if (unwrap && r.ndim() == 0 && !r.is_traced()) {
    report_fp("cast");
    return numpy_scalar(r.dtype(), r.data());
  }
  if (unwrap && r.ndim() == 0) tracer::mark_scalar(r);  // Note [scalar results]
  return wrap(std::move(r));
}

// Floating-point error flags `f` raised by `op`: NumPy's error state decides (Python side).
void report_flags(OpId op, int f) {
  static py::object* handler = new py::object(py::module_::import("npc._ufunc").attr("_fp_error"));
  (*handler)(f, std::string(op_info(op).name));
}

// Adds cast flags to the pending errors of the op channel (reported by report_fpe_in).
void add_fp_report_flags(int f) { ops::note_fpe(f); }

// Floating-point errors of a ufunc method, reported where NumPy names them ("reduce",
// "accumulate") instead of under the ufunc's name.
void report_fpe_in(const char* where) {
  int f = take_fp_errors();
  if (!f) return;
  static py::object* handler = new py::object(py::module_::import("npc._ufunc").attr("_fp_error"));
  (*handler)(f, std::string(where));
}

// Named floating-point errors an eager op recorded (add_fp_report), in their order.
void report_named_fp() {
  auto errs = take_named_fp_flags();
  if (errs.empty()) return;
  py::object report = py::module_::import("npc._errstate").attr("report");
  for (auto& [bit, where] : errs) report(bit, where);
}

// Floating-point errors of the last call.
void report_fpe(OpId op) {
  int f = take_fp_errors();
  if (f) report_flags(op, f);
}

// The fast path of ufunc.__call__ and the operators: arrays and weak Python scalars (Note
// [weak integers] applies), no keywords, one output, no copies (ops::call_ufunc_fast says
// when). Returns a null object when the general path must run.
// With `numpy_views`, numpy.ndarray operands of native dtypes are taken as zero-copy views
// (the __array_ufunc__ path: numpy_array + npc_array).
py::object fast_ufunc_call(OpId op, PyObject* const* args, Py_ssize_t n, bool numpy_views = false,
                           const ndarray* reuse = nullptr) {
  if (n > 3 || tracer::g_scalar_math) return {};  // Note [realized scalar math]
  // Only the n inputs are initialised: zeroing the whole array (Scalars of 64 bytes each)
  // is a measurable part of a call on NumPy scalars.
  union Inputs {
    ops::FastInput v[3];
    Inputs() {}
  } inputs;
  static_assert(std::is_trivially_destructible_v<ops::FastInput>);
  ops::FastInput* fin = inputs.v;
  for (Py_ssize_t i = 0; i < n; ++i) new (&fin[i]) ops::FastInput();
  // Views of numpy.ndarray operands (numpy_views), made on demand: an array of them on the
  // stack would be zeroed on every call.
  std::unique_ptr<std::optional<ndarray>[]> views;
  int64_t size = 0;
  for (Py_ssize_t i = 0; i < n; ++i) {
    PyObject* p = args[i];
    if (PyArray* a = array_ptr(p)) {
      fin[i].array = a;
      size = std::max(size, a->size());
    } else if (numpy_views && Py_TYPE(p) == reinterpret_cast<PyTypeObject*>(py::detail::npy_api::get().PyArray_Type_)) {
      if (!views) views = std::make_unique<std::optional<ndarray>[]>(3);
      views[i] = ndarray_view_of_numpy(p);
      if (!views[i]) return {};
      if (views[i]->ndim() == 0) {
        // A 0-d array is a strong operand as a NumPy scalar is (NEP 50): `np.float64(r) <= a`
        // reaches here as less_equal(0-d numpy array, a) through NumPy's scalar operators.
        fin[i].scalar = Scalar::load(views[i]->dtype(), views[i]->data());
        fin[i].strong = true;
        continue;
      }
      fin[i].array = &*views[i];
      size = std::max(size, views[i]->size());
    } else if (PyFloat_CheckExact(p)) {
      fin[i].scalar = Scalar::from_double(PyFloat_AS_DOUBLE(p));
    } else if (PyLong_CheckExact(p)) {
      int overflow = 0;
      long long v = PyLong_AsLongLongAndOverflow(p, &overflow);
      if (overflow) return {};
      fin[i].scalar = Scalar::from_int(v);
    } else if (PyComplex_CheckExact(p)) {
      Py_complex c = PyComplex_AsCComplex(p);
      fin[i].scalar = Scalar::from_complex({c.real, c.imag});
    } else if (std::optional<Scalar> s = native_numpy_scalar(p)) {
      fin[i].scalar = *s;  // a NumPy scalar: a strong 0-d operand of its own dtype
      fin[i].strong = true;
    } else {
      return {};
    }
  }
  int flags = 0;
  std::optional<ndarray> r;
  alignas(16) std::byte scalar_buf[16];
  DType scalar_dtype = DType::Bool;
  bool scalar = false;
  if (size >= kReleaseGil) {
    ReleaseGil nogil;
    r = ops::call_ufunc_fast(op, fin, static_cast<int>(n), &flags, nullptr, nullptr, reuse);
  } else {
    constexpr auto kUnset = static_cast<DType>(255);
    scalar_dtype = kUnset;
    r = ops::call_ufunc_fast(op, fin, static_cast<int>(n), &flags, scalar_buf, &scalar_dtype);
    scalar = !r && scalar_dtype != kUnset;
  }
  if (!r && !scalar) return {};
  report_fp("cast");  // a weak scalar cast into the loop dtype (1e300 -> float32) warns first, as NumPy
  if (flags) report_flags(op, flags);
  if (scalar) return numpy_scalar(scalar_dtype, scalar_buf);
  if (r->ndim() == 0) return numpy_scalar(r->dtype(), r->data());
  return new_array_object(std::move(*r));
}

// Note [complex input casts]
// NumPy warns ComplexWarning "Casting complex values to real discards the imaginary part"
// once for each operand of a ufunc call whose cast drops an imaginary part: a complex input
// cast to a real or integer loop (dtype=, casting='unsafe'), a complex result cast into a real
// or integer out= (to bool: no warning). The casts are set up before the loop runs, so the
// warnings come first; a call whose casts the casting rule forbids raises instead.
void warn_complex_casts(OpId op, const std::vector<Operand>& ins, const UfuncOptions& opts) {
  std::vector<DType> dts;
  bool weak[ops::kMaxOperands] = {};
  bool any = false;
  for (size_t i = 0; i < ins.size() && i < static_cast<size_t>(ops::kMaxOperands); ++i) {
    dts.push_back(ins[i].array.dtype());
    weak[i] = ins[i].weak;
    any |= is_complex(dts.back());
  }
  if (!any || dts.size() != ins.size()) return;
  LoopTypes lt;
  try {
    lt = resolve_loop(op, dts, std::span<const bool>(weak, dts.size()), opts.dtype);
  } catch (const std::exception&) {
    return;  // the call itself reports it
  }
  auto drops_imag = [](DType from, DType to) { return is_complex(from) && !is_complex(to) && to != DType::Bool; };
  int count = 0;
  for (size_t i = 0; i < dts.size() && i < lt.in.size(); ++i) {
    if (!can_cast(dts[i], lt.in[i], opts.casting)) return;
    count += drops_imag(dts[i], lt.in[i]);
  }
  for (size_t k = 0; k < opts.out.size() && k < lt.out.size(); ++k) {
    if (!opts.out[k]) continue;
    if (!can_cast(lt.out[k], opts.out[k]->dtype(), opts.casting)) return;
    count += drops_imag(lt.out[k], opts.out[k]->dtype());
  }
  static py::object* cw = new py::object(py::module_::import("numpy.exceptions").attr("ComplexWarning"));
  for (int c = 0; c < count; ++c)
    if (PyErr_WarnEx(cw->ptr(), "Casting complex values to real discards the imaginary part", 1) < 0)
      throw py::error_already_set();
}

// Note [per-operand input casts]
// Where NumPy casts a ufunc's inputs decides how their floating-point errors read:
// - a 0-d input is cast on its own up front: ComplexWarning, then "... encountered in cast";
// - when every other operand is 1-d of one length (0-d inputs aside), there is no where= and
//   each input to cast has at most 8192 elements (the buffer), NumPy's trivial path casts each
//   input on its own, in order, the same way (two overflowing inputs warn twice); an out= of
//   another dtype does not matter here (its cast's flags are the loop's);
// - otherwise the buffered iterator casts them: all ComplexWarnings first, and the casts'
//   flags join the loop's own, reported under the ufunc's name ("overflow encountered in add").
// npc casts the inputs of the first two kinds here and hands the call the loop they resolved;
// the call casts the rest (UfuncOptions::input_cast_flags_to_loop). (Weak Python scalars are
// converted by the call itself, "cast", as NumPy's.)
void cast_inputs_like_numpy(OpId op, std::vector<Operand>& ins, UfuncOptions& opts) {
  // (Comparisons and logical ops: their casts raise no flags, and the call looks at the
  // operands' own dtypes beside Python ints.)
  if (is_logical_binary(op) || is_comparison_op(op) || ins.size() > static_cast<size_t>(ops::kMaxOperands)) return;
  std::vector<DType> dts;
  bool weak[ops::kMaxOperands] = {};
  for (size_t i = 0; i < ins.size(); ++i) {
    if (ins[i].array.is_traced()) return;
    dts.push_back(ins[i].array.dtype());
    weak[i] = ins[i].weak;
  }
  LoopTypes lt;
  try {
    lt = resolve_loop(op, dts, std::span<const bool>(weak, dts.size()), opts.dtype);
  } catch (const std::exception&) {
    return;  // the call itself raises
  }
  auto needs_cast = [&](size_t i) { return !ins[i].weak && dts[i] != lt.in[i]; };
  bool any_cast = false;
  for (size_t i = 0; i < ins.size(); ++i) {
    if (!needs_cast(i)) continue;
    if (!can_cast(dts[i], lt.in[i], opts.casting)) return;  // the call raises before any cast
    any_cast = true;
  }
  if (!any_cast) return;
  for (size_t k = 0; k < opts.out.size() && k < lt.out.size(); ++k)
    if (opts.out[k] && !can_cast(lt.out[k], opts.out[k]->dtype(), opts.casting)) return;
  bool trivial = !opts.where;
  int64_t len = -1;
  for (size_t i = 0; i < ins.size() + opts.out.size() && trivial; ++i) {
    const ndarray* a = i < ins.size() ? &ins[i].array : (opts.out[i - ins.size()] ? &*opts.out[i - ins.size()] : nullptr);
    if (!a || (i < ins.size() && a->ndim() == 0)) continue;
    if (a->ndim() != 1 || (len >= 0 && a->shape()[0] != len)) trivial = false;
    else len = a->shape()[0];
    if (i < ins.size() && needs_cast(i) && a->size() > 8192) trivial = false;
  }
  static py::object* cw = new py::object(py::module_::import("numpy.exceptions").attr("ComplexWarning"));
  auto complex_warning = [&](size_t i) {
    if (is_complex(dts[i]) && !is_complex(lt.in[i]) && lt.in[i] != DType::Bool &&
        PyErr_WarnEx(cw->ptr(), "Casting complex values to real discards the imaginary part", 1) < 0)
      throw py::error_already_set();
  };
  // Pending flags (a fast path's attempt at a weak scalar) are the call's own "cast" report.
  const int pending = take_fp_flags();
  opts.loop = lt;  // the cast inputs keep the operands' loop (ldexp(bool array, 2**40, dtype=f4) is "fl->f")
  bool done[ops::kMaxOperands] = {};
  for (size_t i = 0; i < ins.size(); ++i) {  // casts of their own
    if (!needs_cast(i) || !(trivial || ins[i].array.ndim() == 0)) continue;
    complex_warning(i);
    ins[i].array = ins[i].array.astype(lt.in[i], Order::K);
    done[i] = true;
    report_fp("cast");
  }
  add_fp_flags(pending);
  // The buffered iterator's casts stay with the call (their layout decides order='A'/'K'
  // results); warn_complex_casts warns for them, and their flags join the loop's.
  for (size_t i = 0; i < ins.size(); ++i)
    if (needs_cast(i) && !done[i]) opts.input_cast_flags_to_loop = true;
}

py::object not_native() {
  static py::object* sentinel = new py::object(py::module_::import("npc._ufunc").attr("_NOT_NATIVE"));
  return *sentinel;
}

// A complex ordering comparison (<, <=, >, >=) of two realized scalar results (Note [realized
// scalar math]) as NumPy's scalar arithmetic computes it: quietly, over the parts in the
// loop's dtype, xr > yr || (xr == yr && xi >= yi) (Note [quiet scalar complex comparisons] in
// src/tracer/trace_hooks.cpp). Null for other calls.
std::optional<py::object> quiet_complex_order(OpId op, const std::vector<Operand>& ins) {
  if (!(op == OpId::less || op == OpId::less_equal || op == OpId::greater || op == OpId::greater_equal) ||
      ins.size() != 2 || ins[0].array.ndim() != 0 || ins[1].array.ndim() != 0)
    return std::nullopt;
  const DType dts[2] = {ins[0].array.dtype(), ins[1].array.dtype()};
  const bool weak[2] = {ins[0].weak, ins[1].weak};
  if (!is_complex(dts[0]) && !is_complex(dts[1])) return std::nullopt;
  const LoopTypes lt = resolve_loop(op, std::vector<DType>(dts, dts + 2), std::span<const bool>(weak, 2), std::nullopt);
  if (!is_complex(lt.in[0])) return std::nullopt;
  std::complex<double> v[2];
  for (int i = 0; i < 2; ++i) {
    ndarray c = ins[i].array.astype(lt.in[0], Order::C, Casting::Unsafe).astype(DType::Complex128, Order::C, Casting::Unsafe);
    v[i] = *reinterpret_cast<const std::complex<double>*>(c.data());
  }
  report_fp("cast");  // a weak operand's conversion to the loop dtype, as the call reports it
  const bool strict = op == OpId::less || op == OpId::less_equal ? v[0].real() < v[1].real() : v[0].real() > v[1].real();
  const double xi = v[0].imag(), yi = v[1].imag();
  const bool parts = op == OpId::less ? xi < yi : op == OpId::less_equal ? xi <= yi : op == OpId::greater ? xi > yi : xi >= yi;
  const bool r = strict || (v[0].real() == v[1].real() && parts);
  return numpy_scalar(DType::Bool, &r);
}

// ufunc.__call__ for the bindings and the operators.
py::object ufunc_call_impl(int op_id, py::tuple args, py::object out, py::object where, int dtype, int casting,
                           const std::string& order) {
    OpId op = static_cast<OpId>(op_id);
    if (out.is_none() && where.is_none() && dtype < 0 && casting == 3 && order == "K") {
      py::object r = fast_ufunc_call(op, &PySequence_Fast_ITEMS(args.ptr())[0], PyTuple_GET_SIZE(args.ptr()));
      if (r) return r;
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
          if (oa->warn_on_write) warn_write(*oa);
          opts.out.emplace_back(*oa);
          unwrap = false;
        }
      }
      if (!where.is_none() && !(PyBool_Check(where.ptr()) && where.ptr() == Py_True)) {
        std::vector<py::object> k2;
        Operand w = to_operand(where, k2);
        keep.insert(keep.end(), k2.begin(), k2.end());
        // NumPy converts a mask that is not an array (a list, a Python bool or int) to bool;
        // _ufunc.py has rejected array masks of other dtypes (call_ufunc wants bool).
        opts.where = w.array.dtype() == DType::Bool ? w.array : w.array.astype(DType::Bool);
      }
    } catch (const NotNative&) {
      return not_native();
    } catch (const BigPyInt&) {
      static py::object* big = new py::object(py::module_::import("npc._ufunc").attr("_big_int_call"));
      return (*big)(op_id, args, out, where, dtype, casting, order);
    }
    // A lone Python int is an array to NumPy (numpy.asarray): beyond int64 it is uint64,
    // not a weak int that overflows the int64 loop (numpy.negative(2**63) is uint64).
    // Its dtype is numpy.ulonglong's ('Q', discover_descriptor_from_pyint), which on LP64 is
    // another scalar type than numpy.uint64 ('L'): a uint64 result comes back as ulonglong.
    const bool lone_big_int = ins.size() == 1 && ins[0].weak && ins[0].array.dtype() == DType::UInt64;
    if (lone_big_int) ins[0].weak = false;
    opts.dtype = dtype_arg(dtype);
    opts.casting = static_cast<Casting>(casting);
    opts.order = order_from_name(order);
    // Note [realized scalar math]
    // A Python operator on scalar results that a graph break realized (Note [scalar results]
    // in src/tracer/trace.hpp: they stand for NumPy scalars) runs here, eagerly, with the
    // Note [scalar math] flag set as for traced ones: it computes as the marked graph nodes
    // do (NumPy's scalar loops, integer overflow checks) and names its errors "scalar <op>".
    // (Traced operands go to the trace hook, which reads the flag itself.)
    bool scalar_math = tracer::g_scalar_math;
    for (const Operand& o : ins) scalar_math = scalar_math && !o.array.is_traced();
    if (scalar_math) {
      if (std::optional<py::object> r = quiet_complex_order(op, ins)) return *r;
      opts.scalar_math = true;
      opts.scalar_loop = true;
    }
    cast_inputs_like_numpy(op, ins, opts);  // Note [per-operand input casts]
    if (opts.casting == Casting::Unsafe && (opts.dtype || !opts.out.empty())) warn_complex_casts(op, ins, opts);
    int64_t size = 0;
    for (const auto& o : ins) size = std::max(size, o.array.size());
    std::vector<ndarray> res;
    try {
      if (size >= kReleaseGil) {
        ReleaseGil nogil;
        res = call_ufunc(op, ins, opts);
      } else {
        res = call_ufunc(op, ins, opts);
      }
    } catch (...) {
      take_fp_errors();  // a call that raises reports no loop errors (nor leaves them for the next)
      throw;
    }
    report_fp("cast");  // casts of the inputs (weak scalars, dtype=) before the loop's own errors
    if (scalar_math) report_fpe_in(("scalar " + std::string(op_info(op).name)).c_str());
    else report_fpe(op);
    if (res.size() == 1) {
      if (!opts.out.empty() && opts.out[0]) return py::reinterpret_borrow<py::object>(py::tuple(out)[0]);
      const bool ulonglong = lone_big_int && unwrap && res[0].ndim() == 0 && res[0].dtype() == DType::UInt64;
      py::object r = result_object(std::move(res[0]), unwrap);
      if (ulonglong) {
        static py::object* ull = new py::object(py::module_::import("numpy").attr("ulonglong"));
        r = (*ull)(r);
      }
      return r;
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
  if (PyFloat_CheckExact(o) || PyLong_CheckExact(o) || PyComplex_CheckExact(o) || PyBool_Check(o) || array_ptr(o) ||
      is_native_numpy_scalar_type(Py_TYPE(o)))
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

// Note [foreign ufunc overrides]
// An operand of a type that overrides ufuncs (an __array_ufunc__ other than None that is not
// NumPy's own: Dask arrays, xarray and pandas objects, ...) decides what an operator gives, as it
// does with numpy.ndarray: the operator calls NumPy's ufunc, whose override dispatch asks npc's
// __array_ufunc__ (NotImplemented for such operands, python/npc/_interop.py) and then the other
// type's. Without this, `npc_array + dask_array` converted the Dask array with __array__
// (computing it whole) instead of giving a Dask array.
bool overrides_ufuncs(PyObject* o) {
  if (PyFloat_CheckExact(o) || PyLong_CheckExact(o) || PyComplex_CheckExact(o) || PyBool_Check(o) || array_ptr(o) ||
      PyUnicode_Check(o) || PyList_Check(o) || PyTuple_Check(o) || o == Py_None)
    return false;
  if (py::detail::npy_api::get().PyArray_Check_(o)) return false;  // NumPy arrays and their subclasses
  PyObject* au = PyObject_GetAttrString(reinterpret_cast<PyObject*>(Py_TYPE(o)), "__array_ufunc__");
  if (!au) {
    PyErr_Clear();
    return false;
  }
  bool r = au != Py_None;
  Py_DECREF(au);
  return r;
}

// a <op> b through NumPy's ufunc (Note [foreign ufunc overrides]).
py::object foreign_operator(int op_id, py::handle a, py::handle b) {
  static py::object* fn = new py::object(py::module_::import("npc._ufunc").attr("_foreign_operator"));
  return (*fn)(op_id, a, b);
}

py::object operator_fallback(int op_id, py::tuple args, py::object out) {
  static py::object* fb = new py::object(py::module_::import("npc._ufunc").attr("_operator_fallback"));
  return (*fb)(op_id, args, out);
}

// Whether NumPy would run a Python operator on these operands with its scalar arithmetic
// (Note [scalar math] in src/tracer/trace.hpp): while tracing, every operand is a traced
// scalar result, a NumPy scalar or a Python number, one at least a traced scalar result, and
// for two typed operands one type casts safely to the other (else NumPy promotes through
// the ufunc: float32 / intp says "in divide"); a Python float needs an inexact partner, a
// Python complex a complex one, a Python int a numeric one.
bool scalar_math(PyObject* const* ops, int n) {
  if (!tracer::current()) return false;
  bool traced = false;
  std::optional<DType> typed[2];
  int weak[2] = {-1, -1};  // 0 bool, 1 int, 2 float, 3 complex
  for (int i = 0; i < n; ++i) {
    PyObject* o = ops[i];
    if (PyArray* a = array_ptr(o)) {
      if (!tracer::is_scalar_result(*a)) return false;
      traced = true;
      typed[i] = a->dtype();
    } else if (PyBool_Check(o)) {
      weak[i] = 0;
    } else if (PyLong_CheckExact(o) || (g_runtime_int && Py_TYPE(o) == g_runtime_int)) {
      weak[i] = 1;  // a runtime int argument is a Python int (Note [runtime ints])
    } else if (PyFloat_CheckExact(o) || (g_runtime_float && Py_TYPE(o) == g_runtime_float)) {
      weak[i] = 2;  // a runtime float argument is a Python float (Note [runtime scalars])
    } else if (PyComplex_CheckExact(o)) {
      weak[i] = 3;
    } else if (is_native_numpy_scalar_type(Py_TYPE(o))) {
      typed[i] = from_python(o).dtype;
    } else {
      return false;
    }
  }
  if (!traced) return false;
  if (n == 1) return typed[0] != DType::Bool;
  // A bool scalar has no arithmetic of its own: an operator whose own slot is the bool
  // scalar's (it is on the left, or on the right of a Python number) runs the ufunc
  // (np.bool_(True) // np.uint32(0) warns "in floor_divide"); on the right of another NumPy
  // scalar type, that type's scalar arithmetic takes it ("in scalar floor_divide").
  if (typed[0] == DType::Bool || (typed[1] == DType::Bool && !typed[0])) return false;
  if (typed[0] && typed[1]) {
    if (*typed[0] == DType::Bool && *typed[1] == DType::Bool) return false;
    return can_cast(*typed[0], *typed[1], Casting::Safe) || can_cast(*typed[1], *typed[0], Casting::Safe);
  }
  const DType t = typed[0] ? *typed[0] : *typed[1];
  switch (weak[typed[0] ? 1 : 0]) {
    case 0: return true;
    case 1: return t != DType::Bool;
    case 2: return is_inexact(t);
    case 3: return is_complex(t);
  }
  return false;
}

// Note [operators NumPy scalars lack]
// NumPy's complex scalars have no //, % or divmod. When the complex scalar's type owns the
// operation (Note [scalar math] in src/tracer/trace.hpp: the other operand is a Python number
// or a NumPy scalar whose type casts safely to it, or the other way round), its method
// returns NotImplemented, so does the other operand's reflected one, and Python raises
// "unsupported operand type(s) for //: 'numpy.complex64' and 'int'" (with "//=" for `x //= 2`,
// the statement's operator); a NumPy bool scalar on either side runs the ufunc instead, whose
// error names the ufunc, and so does an operation that promotes (complex64 // float64).
// While tracing, the operands are scalar results standing for NumPy scalars, so the
// operator raises Python's error itself, naming each scalar result by its NumPy scalar type.
// Called only where scalar_math() holds; false when the operation exists.
bool lacks_scalar_operator(OpId op, PyObject* const* args) {
  if (op != OpId::floor_divide && op != OpId::remainder && op != OpId::divmod) return false;
  bool complex = false;
  for (int i = 0; i < 2; ++i) {
    DType t;
    if (const PyArray* a = array_ptr(args[i])) t = a->dtype();
    else if (!numpy_scalar_data(args[i], &t)) {
      complex |= PyComplex_Check(args[i]);
      continue;
    }
    if (t == DType::Bool) return false;
    complex |= is_complex(t);
  }
  return complex;
}

// Whether the statement being run is an augmented assignment (`x //= y`): the current
// instruction of the innermost Python frame outside npc's package (npc's own Python code can
// stand between it and this operator: Note [reflected scalar operators] in _interop.py) is
// BINARY_OP with an in-place operator (NB_INPLACE_ADD .. NB_INPLACE_XOR: 13 .. 25 in
// CPython's opcode.h since 3.11).
bool in_augmented_assignment() {
  static const int binary_op = py::module_::import("dis").attr("opmap")["BINARY_OP"].cast<int>();
  static const std::string package = py::module_::import("os.path").attr("dirname")(
      py::module_::import("npc").attr("__file__")).cast<std::string>() + "/";
  PyFrameObject* f = PyEval_GetFrame();
  py::object hold;  // the reference PyFrame_GetBack returns
  while (f) {
    py::object code = py::reinterpret_steal<py::object>(reinterpret_cast<PyObject*>(PyFrame_GetCode(f)));
    const std::string file = code.attr("co_filename").cast<std::string>();
    if (!file.starts_with(package)) {
      py::bytes co = py::reinterpret_steal<py::bytes>(PyCode_GetCode(reinterpret_cast<PyCodeObject*>(code.ptr())));
      if (!co) throw py::error_already_set();
      const std::string_view bytes = co;
      const int i = PyFrame_GetLasti(f);
      if (i < 0 || static_cast<size_t>(i) + 1 >= bytes.size()) return false;
      const auto arg = static_cast<unsigned char>(bytes[static_cast<size_t>(i) + 1]);
      return static_cast<unsigned char>(bytes[static_cast<size_t>(i)]) == binary_op && arg >= 13 && arg <= 25;
    }
    hold = py::reinterpret_steal<py::object>(reinterpret_cast<PyObject*>(PyFrame_GetBack(f)));
    f = reinterpret_cast<PyFrameObject*>(hold.ptr());
  }
  return false;
}

// Python's TypeError for an operator that neither NumPy scalar operand has (Note [operators
// NumPy scalars lack]).
[[noreturn]] void raise_lacking_scalar_operator(OpId op, PyObject* const* args) {
  const bool aug = op != OpId::divmod && in_augmented_assignment();
  const char* sym = op == OpId::divmod         ? "divmod()"
                    : op == OpId::floor_divide ? (aug ? "//=" : "//")
                                               : (aug ? "%=" : "%");
  std::string names[2];
  for (int i = 0; i < 2; ++i) {
    if (const PyArray* a = array_ptr(args[i])) {
      names[i] = numpy_scalar_type_name(a->dtype());
    } else {
      names[i] = Py_TYPE(args[i])->tp_name;
    }
  }
  throw py::type_error("unsupported operand type(s) for " + std::string(sym) + ": '" + names[0] + "' and '" +
                       names[1] + "'");
}

// Note [in-place operators of scalar results]
// A NumPy scalar is immutable and has no in-place operators: `x = a[1]; x /= 2` is
// `x = x / 2` (NumPy's scalar arithmetic: an int64 element divided is a float64 0.5), and
// another name for the old scalar (`t = x`) keeps its value. While tracing, a scalar result
// is a 0-d npc array marked to act as a NumPy scalar (Note [scalar results] in
// src/tracer/trace.hpp), whose in-place operators would write into it with the array rules
// (`/=` on an int64 0-d array is a casting error; after `t = s; s += 1`, t has changed too).
// So the in-place operators of a scalar result return NotImplemented, and Python runs the
// binary operator and rebinds the name, exactly as for a NumPy scalar (binary_iop1 in
// CPython's abstract.c): the result, its dtype, warnings and errors are those of `x / 2` of
// the scalar result, whose reflected operand is tried too. Only a scalar result takes this
// branch (marked ones exist only while a function is traced); the check sits after the
// fast in-place path, which never takes a 0-d array, and is a null test in eager code.
bool inplace_of_scalar_result(PyObject* a) {
  const PyArray* p = array_ptr(a);
  return p && p->ndim() == 0 && tracer::current() && tracer::is_scalar_result(*p);
}

// Note [sequences times scalar results]
// A NumPy integer scalar times a Python sequence (list, tuple, str, bytes: a type with
// sq_repeat that is not an array) repeats the sequence: the scalar's multiply returns
// NotImplemented and Python repeats by the scalar's __index__ (`[0] * a[1]` is [0, 0] for
// a[1] == 2; `x *= [3]` rebinds x to [3, 3]); a float, complex or bool scalar has no
// __index__, and Python's "can't multiply sequence by non-int of type 'numpy.float64'"
// follows. While tracing, a scalar result (a 0-d array standing for that scalar) does the
// same instead of broadcasting the sequence as an array. `x *= seq` of a scalar result is
// repeated here (`repeat`): Python would try the left operand's own sq_repeat, which a NumPy
// scalar lacks and an npc array has not, and then fail instead of trying the sequence's.
// Null when that case does not apply.
PyObject* scalar_result_times_sequence(PyObject* a, PyObject* b, bool repeat = false) {
  if (!tracer::current()) return nullptr;
  const PyArray* x = array_ptr(a);
  PyObject* seq = b;
  if (!x) {
    x = array_ptr(b);
    seq = a;
  }
  if (!x || x->ndim() != 0 || !tracer::is_scalar_result(*x) || array_ptr(seq)) return nullptr;
  PyTypeObject* t = Py_TYPE(seq);
  if (!t->tp_as_sequence || !t->tp_as_sequence->sq_repeat || py::detail::npy_api::get().PyArray_Check_(seq))
    return nullptr;
  if (is_integer(x->dtype())) {
    if (!repeat) return Py_NewRef(Py_NotImplemented);
    const Py_ssize_t n = PyNumber_AsSsize_t(const_cast<PyObject*>(x == array_ptr(a) ? a : b), PyExc_OverflowError);
    if (n == -1 && PyErr_Occurred()) throw py::error_already_set();
    PyObject* r = PySequence_Repeat(seq, n);
    if (!r) throw py::error_already_set();
    return r;
  }
  throw py::type_error("can't multiply sequence by non-int of type '" + numpy_scalar_type_name(x->dtype()) + "'");
}

// a <op> b as an ndarray operator: fast path, then the general ufunc call.
py::object binary_operator(int op_id, py::handle a, py::handle b, bool inplace) {
  if (defers(b)) return py::reinterpret_borrow<py::object>(Py_NotImplemented);
  // Note [in-place operators of scalar results]
  if (inplace && inplace_of_scalar_result(a.ptr())) {
    if (op_id == static_cast<int>(OpId::multiply))  // Note [sequences times scalar results]
      if (PyObject* r = scalar_result_times_sequence(a.ptr(), b.ptr(), true)) return py::reinterpret_steal<py::object>(r);
    return py::reinterpret_borrow<py::object>(Py_NotImplemented);
  }
  if (!inplace && overrides_ufuncs(b.ptr())) return foreign_operator(op_id, a, b);
  PyObject* both[2] = {a.ptr(), b.ptr()};
  const bool scalar = scalar_math(both, 2);
  if (scalar && lacks_scalar_operator(static_cast<OpId>(op_id), both))  // Note [operators NumPy scalars lack]
    raise_lacking_scalar_operator(static_cast<OpId>(op_id), both);
  tracer::ScalarMath sm(scalar);
  py::tuple args = py::make_tuple(a, b);
  py::object out = inplace ? py::object(py::make_tuple(a)) : py::object(py::none());
  py::object r = ufunc_call_impl(op_id, args, out, py::none(), -1, 3, "K");
  if (r.is(not_native())) r = operator_fallback(op_id, args, out);
  if (inplace) return py::reinterpret_borrow<py::object>(a);
  PyObject* operands[2] = {a.ptr(), b.ptr()};
  return wrap_ufunc_result(std::move(r), operands, 2);
}

// ---------------------------------------------------------------- temporary elision
// Note [temporary elision]
// In `0.33 * (a[:-2] + a[1:-1] + a[2:])` each intermediate result is read once, by the next
// operator, and then dropped. NumPy writes such an operator's result into the memory of the
// temporary operand instead of a new array (temp_elide.c) once it holds 256 KiB: a large
// expression then streams through one buffer, not one fresh buffer per operator, and
// memory-bound chains of operators ran up to 1.25x faster than with new results. npc does
// the same, on the same conditions:
// - the operand is a plain npc array whose only reference is the interpreter's value stack
//   (reference count 1): no name, container or view (a view holds its base) can see it;
// - it owns all of its storage and nothing else shares that storage (a C++-level view, an
//   exported buffer), is writeable, concrete (not traced), C-contiguous, and of the result's
//   dtype and shape (call_ufunc_fast checks the last two against the resolved loop);
// - the operator was called by the interpreter itself: C code that calls PyNumber_Add on an
//   object it owns with one reference may use the object afterwards, so the C stack between
//   this slot and the interpreter's frame evaluation must run only in libpython (NumPy's
//   check_callers, with backtrace and dladdr; its cost is below 1% of a 256 KiB operator).
// Free-threaded builds and Python 3.14 (whose value stack may hold borrowed references)
// never elide. Values, dtypes and floating-point errors are those of a new result: the
// elementwise loops read each element at the very position they write.
constexpr int64_t kElideBytes = int64_t{256} << 10;

#if defined(__GLIBC__) && !defined(Py_GIL_DISABLED) && PY_VERSION_HEX < 0x030E0000
bool called_by_interpreter() {
  static void* const self_base = [] {
    Dl_info i;
    return dladdr(reinterpret_cast<void*>(&called_by_interpreter), &i) ? i.dli_fbase : nullptr;
  }();
  static void* const py_base = [] {
    Dl_info i;
    return dladdr(reinterpret_cast<void*>(&PyNumber_Add), &i) ? i.dli_fbase : nullptr;
  }();
  static void* const eval = dlsym(RTLD_DEFAULT, "_PyEval_EvalFrameDefault");
  if (!self_base || !py_base || !eval) return false;
  void* frames[24];
  const int n = backtrace(frames, 24);
  int i = 1;
  Dl_info info;
  for (; i < n; ++i) {  // this module's frames (the slot, pybind11's glue)
    if (!dladdr(frames[i], &info)) return false;
    if (info.dli_fbase != self_base) break;
  }
  for (; i < n; ++i) {  // then libpython only, up to the frame evaluator
    if (!dladdr(frames[i], &info) || info.dli_fbase != py_base) return false;
    if (info.dli_saddr == eval) return true;
  }
  return false;
}
#else
bool called_by_interpreter() { return false; }
#endif

// The array operand of `args` that an operator may write its result into, or null.
const ndarray* elidable_temporary(PyObject* const* args, int n) {
  for (int k = 0; k < n; ++k) {
    PyObject* o = args[k];
    if (Py_TYPE(o) != g_array_type || Py_REFCNT(o) != 1) continue;
    PyArray* a = array_ptr(o);
    if (!a || a->is_traced() || !a->writeable() || a->warn_on_write || !a->owndata() || !a->is_c_contiguous() ||
        !a->base.is_none() || a->nbytes() < kElideBytes || a->storage().use_count() != 1 ||
        !a->storage()->owned())
      continue;
    return called_by_interpreter() ? a : nullptr;
  }
  return nullptr;
}

// ---------------------------------------------------------------- fast slots (Note [fast slots])
// a <op> b from the interpreter: the type's number slots call this with the operands in
// expression order, whichever of them is the npc array (a reflected operation has the array
// on the right), so the ufunc always sees (a, b).
PyObject* binary_slot(OpId op, PyObject* a, PyObject* b) {
  return guarded([&]() -> PyObject* {
    PyObject* other = array_ptr(a) ? b : a;
    if (defers(other)) return Py_NewRef(Py_NotImplemented);
    if (op == OpId::multiply)  // Note [sequences times scalar results]
      if (PyObject* r = scalar_result_times_sequence(a, b)) return r;
    PyObject* args[2] = {a, b};
    const bool scalar = scalar_math(args, 2);
    // Note [operators NumPy scalars lack]
    if (scalar && lacks_scalar_operator(op, args)) raise_lacking_scalar_operator(op, args);
    tracer::ScalarMath sm(scalar);
    // Note [temporary elision]
    if (py::object r = fast_ufunc_call(op, args, 2, false, elidable_temporary(args, 2)))
      return wrap_ufunc_result(std::move(r), args, 2).release().ptr();
    if (overrides_ufuncs(other)) return foreign_operator(static_cast<int>(op), a, b).release().ptr();
    py::tuple t = py::make_tuple(py::handle(a), py::handle(b));
    py::object r = ufunc_call_impl(static_cast<int>(op), t, py::none(), py::none(), -1, 3, "K");
    if (r.is(not_native())) r = operator_fallback(static_cast<int>(op), t, py::none());
    return wrap_ufunc_result(std::move(r), args, 2).release().ptr();
  });
}

template <OpId Op>
PyObject* nb_binary(PyObject* a, PyObject* b) { return binary_slot(Op, a, b); }

// Note [fast in-place operators]
// `a += b` (-=, *=, /=) on a small plain npc array of an inexact dtype, with `b` an npc
// array of a's dtype and shape, a Python number that keeps a's dtype, or a NumPy scalar of
// a's dtype: the result's dtype and shape are a's, so the fast ufunc path computes it and
// it is copied into `a` (the temporary costs less than the general path's set-up for small
// arrays; large ones keep the general, in-place path). Null when that case does not apply.
PyObject* fast_inplace(OpId op, PyObject* a, PyObject* b) {
  if (op != OpId::add && op != OpId::subtract && op != OpId::multiply && op != OpId::divide) return nullptr;
  PyArray* pa = array_ptr(a);
  if (!pa || Py_TYPE(a) != g_array_type || !pa->writeable() || pa->warn_on_write || pa->is_traced() ||
      pa->ndim() == 0 || pa->size() > 8192)
    return nullptr;
  const DType t = pa->dtype();
  if (!(t == DType::Float64 || t == DType::Float32 || t == DType::Complex128 || t == DType::Complex64)) return nullptr;
  // One element: NumPy's iterator runs the scalar complex product (Note [one-element loops]
  // in src/ops/one_element_loops.hpp), which the general in-place path picks.
  if (op == OpId::multiply && is_complex(t) && pa->size() == 1) return nullptr;
  // A reversed `a`: NumPy's in-place product walks input and output backwards, with its SIMD
  // loop; computed into a fresh (forward) result it would take the scalar loop (Note [loops
  // by stride sign] in src/ops/kernels_arith.cpp), whose overflow and NaNs differ.
  if (op == OpId::multiply && is_complex(t) &&
      std::ranges::any_of(pa->strides(), [](int64_t s) { return s < 0; }))
    return nullptr;
  if (PyArray* pb = array_ptr(b)) {
    if (Py_TYPE(b) != g_array_type || pb->dtype() != t || pb->shape() != pa->shape()) return nullptr;
  } else if (PyComplex_CheckExact(b)) {
    if (!is_complex(t)) return nullptr;
  } else if (!PyFloat_CheckExact(b) && !PyLong_CheckExact(b)) {
    DType bt;
    if (!numpy_scalar_data(b, &bt) || bt != t) return nullptr;
  }
  PyObject* args[2] = {a, b};
  py::object r = fast_ufunc_call(op, args, 2);
  if (!r) return nullptr;
  assign_array(*pa, *array_ptr(r));
  return Py_NewRef(a);
}

template <OpId Op>
PyObject* nb_inplace(PyObject* a, PyObject* b) {
  return guarded([&]() -> PyObject* {
    if (PyObject* r = fast_inplace(Op, a, b)) return r;
    return binary_operator(static_cast<int>(Op), a, b, true).release().ptr();
  });
}

// Note [operator slots are never patched]
// While tracing, a unary operator of a scalar result (`-a[1]`, `abs(s)`, `~a[1]`, `+s`) is a
// scalar result too, as a NumPy scalar's operator returns a NumPy scalar: the ufunc's 0-d
// result is marked where the general path would have unwrapped it (result_object, Note
// [scalar results] in src/tracer/trace.hpp), here in the number slot and in the method alike,
// and scalar_math() gives it NumPy's scalar warnings. So compiled code needs no Python
// wrapper of the operator dunders, and must not install one: setting `__neg__` on the type
// (and setting the original back afterwards) makes CPython's update_slot replace the C++
// slot below by its generic slot_nb_negative, which looks the method up and calls it on
// every `-a`, for good (install_fast_operators fills the slots only once, at import). Eager
// unary operators on small arrays then take about twice as long after the first compile.
template <OpId Op>
PyObject* nb_unary(PyObject* a) {
  return guarded([&]() -> PyObject* {
    tracer::ScalarMath sm(scalar_math(&a, 1));  // Note [operator slots are never patched]
    if (py::object r = fast_ufunc_call(Op, &a, 1, false, elidable_temporary(&a, 1)))  // Note [temporary elision]
      return wrap_ufunc_result(std::move(r), &a, 1).release().ptr();
    return wrap_ufunc_result(
               ufunc_call_impl(static_cast<int>(Op), py::make_tuple(py::handle(a)), py::none(), py::none(), -1, 3, "K"),
               &a, 1)
        .release()
        .ptr();
  });
}

OpId g_compare[6] = {};  // Py_LT .. Py_GE: the ops whose dunders are __lt__ .. __ge__ (install_fast_operators)

PyObject* richcompare(PyObject* a, PyObject* b, int cmp) {
  if (cmp < Py_LT || cmp > Py_GE) return Py_NewRef(Py_NotImplemented);
  return binary_slot(g_compare[cmp], a, b);
}

// npc.ufunc's base type: __call__ without keywords runs here (vectorcall), everything else
// in the Python subclass's `_call` (python/npc/_ufunc.py).
struct UfuncObject {
  PyObject_HEAD
  vectorcallfunc vectorcall;
  int op;   // OpId, -1 until _bind
  int nin;
};

PyObject* ufunc_vectorcall(PyObject* self, PyObject* const* args, size_t nargsf, PyObject* kwnames) {
  auto* u = reinterpret_cast<UfuncObject*>(self);
  const Py_ssize_t n = PyVectorcall_NARGS(nargsf);
  const Py_ssize_t nkw = kwnames ? PyTuple_GET_SIZE(kwnames) : 0;
  if (u->op >= 0 && n == u->nin && nkw == 0) {
    return guarded([&]() -> PyObject* {
      const auto op = static_cast<OpId>(u->op);
      if (py::object r = fast_ufunc_call(op, args, n)) return wrap_ufunc_result(std::move(r), args, n).release().ptr();
      py::tuple t(n);
      for (Py_ssize_t i = 0; i < n; ++i) t[i] = py::handle(args[i]);
      py::object r = ufunc_call_impl(u->op, t, py::none(), py::none(), -1, 3, "K");
      if (r.is(not_native())) r = py::handle(self).attr("_fallback")("__call__", t, py::dict());
      return wrap_ufunc_result(std::move(r), args, n).release().ptr();
    });
  }
  // self._call(*args, **kwargs): the keyword handling of python/npc/_ufunc.py.
  static PyObject* name = PyUnicode_InternFromString("_call");
  std::vector<PyObject*> full(static_cast<size_t>(n + nkw + 1));
  full[0] = self;
  for (Py_ssize_t i = 0; i < n + nkw; ++i) full[static_cast<size_t>(i + 1)] = args[i];
  return PyObject_VectorcallMethod(name, full.data(), static_cast<size_t>(n + 1), kwnames);
}

PyObject* ufunc_new(PyTypeObject* type, PyObject*, PyObject*) {
  auto* u = reinterpret_cast<UfuncObject*>(type->tp_alloc(type, 0));
  if (!u) return nullptr;
  u->vectorcall = ufunc_vectorcall;
  u->op = -1;
  u->nin = 0;
  return reinterpret_cast<PyObject*>(u);
}

PyObject* ufunc_bind(PyObject* self, PyObject* args) {
  int op = 0, nin = 0;
  if (!PyArg_ParseTuple(args, "ii", &op, &nin)) return nullptr;
  if (op < 0 || op >= kNumOps || op_info(static_cast<OpId>(op)).nin != nin) {
    PyErr_SetString(PyExc_ValueError, "npc: bad ufunc binding");
    return nullptr;
  }
  auto* u = reinterpret_cast<UfuncObject*>(self);
  u->op = op;
  u->nin = nin;
  Py_RETURN_NONE;
}

PyMemberDef g_ufunc_members[] = {
    {"__vectorcalloffset__", T_PYSSIZET, static_cast<Py_ssize_t>(offsetof(UfuncObject, vectorcall)), READONLY, nullptr},
    {nullptr, 0, 0, 0, nullptr}};
PyMethodDef g_ufunc_methods[] = {
    {"_bind", ufunc_bind, METH_VARARGS, "_bind(op_id, nin): the op table row this ufunc calls."},
    {nullptr, nullptr, 0, nullptr}};
PyType_Slot g_ufunc_slots[] = {
    {Py_tp_new, reinterpret_cast<void*>(ufunc_new)},
    {Py_tp_call, reinterpret_cast<void*>(PyVectorcall_Call)},
    {Py_tp_members, g_ufunc_members},
    {Py_tp_methods, g_ufunc_methods},
    {Py_tp_doc, const_cast<char*>("Base of npc.ufunc: the keyword-free call path in C++.")},
    {0, nullptr}};
PyType_Spec g_ufunc_spec = {"npc._core._UfuncBase", sizeof(UfuncObject), 0,
                            Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE | Py_TPFLAGS_HAVE_VECTORCALL, g_ufunc_slots};

PyTypeObject* g_ufunc_base = nullptr;

// ---- ndarray.__array_ufunc__ (NEP 13): numpy.sin(npc_array), numpy_array + npc_array,
// numpy.add.reduce(npc_array) reach npc's native ufunc here; everything else (keywords,
// other methods, operands of other types) goes to the Python hook in python/npc/_interop.py,
// which routes the same way (Note [routing by name] there).
PyObject* g_ns = nullptr;               // npc's module dict
PyObject* g_array_ufunc_py = nullptr;   // _interop.__array_ufunc__
PyObject* g_ufunc_names = nullptr;      // numpy ufunc -> its __name__ (immutable)

// The native npc ufunc that npc's namespace binds to NumPy ufunc `uf`'s name, or null.
UfuncObject* native_ufunc_for(PyObject* uf) {
  PyObject* name = PyDict_GetItemWithError(g_ufunc_names, uf);
  if (!name) {
    if (PyErr_Occurred()) return nullptr;
    PyObject* n = PyObject_GetAttrString(uf, "__name__");
    if (!n || !PyUnicode_Check(n) || PyDict_SetItem(g_ufunc_names, uf, n) < 0) {
      Py_XDECREF(n);
      PyErr_Clear();
      return nullptr;
    }
    Py_DECREF(n);
    name = n;  // held by the cache
  }
  PyObject* impl = PyDict_GetItemWithError(g_ns, name);
  if (!impl) {
    PyErr_Clear();
    return nullptr;
  }
  if (!PyObject_TypeCheck(impl, g_ufunc_base)) return nullptr;
  auto* u = reinterpret_cast<UfuncObject*>(impl);
  return u->op >= 0 ? u : nullptr;
}

bool method_is(PyObject* method, const char* name) {
  return PyUnicode_Check(method) && PyUnicode_CompareWithASCIIString(method, name) == 0;
}

PyObject* fast_array_ufunc(PyObject* self, PyObject* const* args, Py_ssize_t nargs, PyObject* kwnames) {
  const Py_ssize_t nkw = kwnames ? PyTuple_GET_SIZE(kwnames) : 0;
  if (nargs >= 2 && nkw == 0) {
    PyObject* method = args[1];
    const Py_ssize_t nin = nargs - 2;
    PyObject* const* inputs = args + 2;
    UfuncObject* u = nullptr;
    // Note [reflected scalar operators] in python/npc/_interop.py: a NumPy scalar's operator
    // on a scalar result is told from a ufunc call by the Python hook.
    PyArray* second = nin == 2 ? array_ptr(inputs[1]) : nullptr;
    const bool reflected = second && inputs[1] == self && is_native_numpy_scalar_type(Py_TYPE(inputs[0])) &&
                           tracer::is_scalar_result(*second);
    if (method_is(method, "__call__") && !reflected) {
      u = native_ufunc_for(args[0]);
      if (u && u->nin == nin && nin <= 3) {
        PyObject* fast = guarded([&]() -> PyObject* {
          py::object r = fast_ufunc_call(static_cast<OpId>(u->op), inputs, nin, true);
          return r ? r.release().ptr() : Py_NewRef(Py_None);
        });
        if (!fast) return nullptr;
        if (fast != Py_None) return fast;
        Py_DECREF(fast);
        // Operands a native ufunc takes as they are; NumPy arrays of native dtypes as npc views.
        py::object keep[3];
        PyObject* conv[3];
        bool ok = true;
        for (Py_ssize_t i = 0; i < nin && ok; ++i) {
          PyObject* x = inputs[i];
          PyTypeObject* t = Py_TYPE(x);
          if (array_ptr(x) || t == &PyFloat_Type || t == &PyLong_Type || t == &PyComplex_Type || t == &PyBool_Type ||
              is_native_numpy_scalar_type(t)) {
            conv[i] = x;
          } else if (t == reinterpret_cast<PyTypeObject*>(py::detail::npy_api::get().PyArray_Type_)) {
            PyObject* r = guarded([&]() -> PyObject* { return npc_view_of_numpy(x).release().ptr(); });
            if (!r) return nullptr;
            keep[i] = py::reinterpret_steal<py::object>(r);
            if (r == Py_None) ok = false;
            conv[i] = r;
          } else {
            ok = false;
          }
        }
        if (ok) return ufunc_vectorcall(reinterpret_cast<PyObject*>(u), conv, static_cast<size_t>(nin), nullptr);
      }
    } else if (method_is(method, "reduce") && nin == 1) {
      u = native_ufunc_for(args[0]);
      PyArray* a = array_ptr(inputs[0]);
      if (u && a && op_info(static_cast<OpId>(u->op)).nin == 2 && op_info(static_cast<OpId>(u->op)).nout == 1) {
        // ufunc.reduce(a): axis 0, no other options (as npc.<ufunc>.reduce with its defaults).
        const auto op = static_cast<OpId>(u->op);
        return guarded([&]() -> PyObject* {
          ReduceOptions o;
          o.axes = std::vector<int64_t>{0};
          ndarray r;
          if (a->size() >= kReleaseGil) {
            ReleaseGil nogil;
            r = reduce(op, *a, o);
          } else {
            r = reduce(op, *a, o);
          }
          report_fpe_in("reduce");
          return result_object(std::move(r), true).release().ptr();
        });
      }
    }
  }
  // The general hook: __array_ufunc__(self, ufunc, method, *inputs, **kwargs).
  std::vector<PyObject*> full(static_cast<size_t>(nargs + nkw + 1));
  full[0] = self;
  for (Py_ssize_t i = 0; i < nargs + nkw; ++i) full[static_cast<size_t>(i + 1)] = args[i];
  return PyObject_Vectorcall(g_array_ufunc_py, full.data(), static_cast<size_t>(nargs + 1), kwnames);
}

PyMethodDef g_array_ufunc_def = {"__array_ufunc__", reinterpret_cast<PyCFunction>(reinterpret_cast<void*>(fast_array_ufunc)),
                                 METH_FASTCALL | METH_KEYWORDS,
                                 "NEP 13 hook: a NumPy ufunc called with npc arrays runs npc's native ufunc of the "
                                 "same name (python/npc/_interop.py)."};

// ---- ndarray.__array_function__ (NEP 18): numpy.concatenate([...]), numpy.where(...) on
// npc arrays call npc's function of the same name here when the routing of
// python/npc/_interop.py finds a native one (Note [routing by name] there); errors that
// mean "not native after all" and every other case go back to Python.
PyObject* g_array_function_py = nullptr;  // _interop.__array_function__
PyObject* g_func_routes = nullptr;        // func -> (module dict, name, qualified name)
PyObject* g_route_fn = nullptr;           // _interop._route
PyObject* g_fallback_ids = nullptr;       // ids of fallback wrappers (a set)
PyObject* g_function_failed = nullptr;    // _interop._array_function_failed

PyObject* fast_array_function(PyObject* self, PyObject* const* args, Py_ssize_t nargs, PyObject* kwnames) {
  if (nargs == 4 && !kwnames && g_func_routes && PyTuple_CheckExact(args[2]) && PyDict_CheckExact(args[3])) {
    PyObject *func = args[0], *types = args[1], *fargs = args[2], *fkwargs = args[3];
    PyObject* route = PyDict_GetItemWithError(g_func_routes, func);  // borrowed
    if (!route && !PyErr_Occurred()) {
      PyObject* r = PyObject_CallOneArg(g_route_fn, func);
      if (!r) return nullptr;
      Py_DECREF(r);  // held by the routes dict
      route = PyDict_GetItemWithError(g_func_routes, func);
    }
    if (!route) return nullptr;
    PyObject* impl = PyTuple_Check(route) && PyTuple_GET_SIZE(route) >= 2
                         ? PyDict_GetItemWithError(PyTuple_GET_ITEM(route, 0), PyTuple_GET_ITEM(route, 1))
                         : nullptr;
    if (!impl && PyErr_Occurred()) return nullptr;
    bool plain = impl && impl != func && (PyTuple_Check(types) || PyList_Check(types));
    if (plain) {
      PyObject* id = PyLong_FromVoidPtr(impl);
      if (!id) return nullptr;
      const int fb = PySet_Contains(g_fallback_ids, id);
      Py_DECREF(id);
      if (fb < 0) return nullptr;
      plain = fb == 0;
    }
    if (plain) {
      PyObject* seq = PySequence_Fast(types, "types");
      if (!seq) return nullptr;
      auto* np_type = reinterpret_cast<PyObject*>(py::detail::npy_api::get().PyArray_Type_);
      for (Py_ssize_t i = 0; i < PySequence_Fast_GET_SIZE(seq) && plain; ++i) {
        PyObject* t = PySequence_Fast_GET_ITEM(seq, i);
        plain = t == reinterpret_cast<PyObject*>(g_array_type) || t == np_type;
      }
      Py_DECREF(seq);
    }
    if (plain) {
      PyObject* r = PyObject_Call(impl, fargs, PyDict_GET_SIZE(fkwargs) ? fkwargs : nullptr);
      if (r) return r;
#if PY_VERSION_HEX >= 0x030C0000
      PyObject* err = PyErr_GetRaisedException();
#else
      PyObject *etype, *err, *etb;
      PyErr_Fetch(&etype, &err, &etb);
      PyErr_NormalizeException(&etype, &err, &etb);
      if (etb) PyException_SetTraceback(err, etb);
      Py_XDECREF(etype);
      Py_XDECREF(etb);
#endif
      PyObject* call[8] = {self, func, types, fargs, fkwargs, route, impl, err};
      r = PyObject_Vectorcall(g_function_failed, call, 8, nullptr);
      Py_DECREF(err);
      return r;
    }
  }
  std::vector<PyObject*> full(static_cast<size_t>(nargs + (kwnames ? PyTuple_GET_SIZE(kwnames) : 0) + 1));
  full[0] = self;
  for (size_t i = 1; i < full.size(); ++i) full[i] = args[i - 1];
  return PyObject_Vectorcall(g_array_function_py, full.data(), static_cast<size_t>(nargs + 1), kwnames);
}

PyMethodDef g_array_function_def = {
    "__array_function__", reinterpret_cast<PyCFunction>(reinterpret_cast<void*>(fast_array_function)),
    METH_FASTCALL | METH_KEYWORDS,
    "NEP 18 hook: a NumPy function called with npc arrays runs npc's function of the same name "
    "(python/npc/_interop.py)."};

// ---- a.sum(), a.max(), ... without arguments: the full reduction in C++; with arguments,
// the Python method they replace (python/npc/_reductions.py).
struct FastReduction {
  const char* name;
  OpId op;
  PyObject* python = nullptr;  // the replaced method
};
// One per reduction row of ops.def (the method's name is the row's).
FastReduction g_reductions[] = {
#define NPC_UFUNC(name, ...)
#define NPC_REDUCE(name, ufunc, ...) {#name, OpId::ufunc},
#define NPC_PRIM(name, ...)
#include "npc/ops.def"
};

template <size_t K>
PyObject* fast_reduction(PyObject* self, PyObject* const* args, Py_ssize_t nargs, PyObject* kwnames) {
  FastReduction& fr = g_reductions[K];
  PyArray* a = array_ptr(self);
  // Instances of Python subclasses take the Python method: their 0-d result is an instance of
  // the class (Note [ndarray subclasses] in python/npc/_array.py).
  if (a && Py_TYPE(self) == g_array_type && nargs == 0 && (!kwnames || PyTuple_GET_SIZE(kwnames) == 0)) {
    return guarded([&]() -> PyObject* {
      ndarray r;
      if (a->size() >= kReleaseGil) {
        ReleaseGil nogil;
        r = reduce(fr.op, *a);
      } else {
        r = reduce(fr.op, *a);
      }
      report_fpe_in("reduce");
      return result_object(std::move(r), true).release().ptr();
    });
  }
  const Py_ssize_t nkw = kwnames ? PyTuple_GET_SIZE(kwnames) : 0;
  std::vector<PyObject*> full(static_cast<size_t>(nargs + nkw + 1));
  full[0] = self;
  for (Py_ssize_t i = 0; i < nargs + nkw; ++i) full[static_cast<size_t>(i + 1)] = args[i];
  return PyObject_Vectorcall(fr.python, full.data(), static_cast<size_t>(nargs + 1), kwnames);
}

template <size_t... K>
std::array<PyMethodDef, sizeof...(K)> reduction_defs(std::index_sequence<K...>) {
  return {PyMethodDef{g_reductions[K].name, reinterpret_cast<PyCFunction>(reinterpret_cast<void*>(fast_reduction<K>)),
                      METH_FASTCALL | METH_KEYWORDS, nullptr}...};
}
std::array<PyMethodDef, std::size(g_reductions)> g_reduction_defs =
    reduction_defs(std::make_index_sequence<std::size(g_reductions)>());

// Replaces type.<def.name> (a Python function, kept in *saved) by a method descriptor for def.
void install_method(PyTypeObject* type, PyMethodDef& def, PyObject** saved) {
  PyObject* old = PyDict_GetItemString(type->tp_dict, def.ml_name);
  if (!old || Py_TYPE(old) == &PyMethodDescr_Type) return;  // missing, or installed already
  Py_INCREF(old);
  Py_XDECREF(*saved);
  *saved = old;
  if (!def.ml_doc) {
    PyObject* doc = PyObject_GetAttrString(old, "__doc__");
    if (doc && PyUnicode_Check(doc)) def.ml_doc = PyUnicode_AsUTF8(doc);  // kept alive by `old`
    Py_XDECREF(doc);
    PyErr_Clear();
  }
  PyObject* d = PyDescr_NewMethod(type, &def);
  if (!d || PyDict_SetItemString(type->tp_dict, def.ml_name, d) < 0) {
    Py_XDECREF(d);
    throw py::error_already_set();
  }
  Py_DECREF(d);
}

void install_fast_methods(PyTypeObject* type, py::dict ns) {
  for (size_t k = 0; k < std::size(g_reductions); ++k) install_method(type, g_reduction_defs[k], &g_reductions[k].python);
  Py_XDECREF(g_ns);
  g_ns = ns.inc_ref().ptr();
  if (!g_ufunc_names) g_ufunc_names = PyDict_New();
  install_method(type, g_array_ufunc_def, &g_array_ufunc_py);
  install_method(type, g_array_function_def, &g_array_function_py);
}


// CPython's number-protocol slot of each operator name that npc fills in C++ (__pow__ takes
// a modulo and stays a Python method, python/npc/_ufunc.py).
constexpr std::pair<std::string_view, binaryfunc PyNumberMethods::*> kBinarySlots[] = {
    {"__add__", &PyNumberMethods::nb_add}, {"__sub__", &PyNumberMethods::nb_subtract},
    {"__mul__", &PyNumberMethods::nb_multiply}, {"__truediv__", &PyNumberMethods::nb_true_divide},
    {"__floordiv__", &PyNumberMethods::nb_floor_divide}, {"__mod__", &PyNumberMethods::nb_remainder},
    {"__divmod__", &PyNumberMethods::nb_divmod}, {"__and__", &PyNumberMethods::nb_and},
    {"__or__", &PyNumberMethods::nb_or}, {"__xor__", &PyNumberMethods::nb_xor},
    {"__lshift__", &PyNumberMethods::nb_lshift}, {"__rshift__", &PyNumberMethods::nb_rshift}};
constexpr std::pair<std::string_view, binaryfunc PyNumberMethods::*> kInplaceSlots[] = {
    {"__iadd__", &PyNumberMethods::nb_inplace_add}, {"__isub__", &PyNumberMethods::nb_inplace_subtract},
    {"__imul__", &PyNumberMethods::nb_inplace_multiply}, {"__itruediv__", &PyNumberMethods::nb_inplace_true_divide},
    {"__ifloordiv__", &PyNumberMethods::nb_inplace_floor_divide}, {"__imod__", &PyNumberMethods::nb_inplace_remainder},
    {"__iand__", &PyNumberMethods::nb_inplace_and}, {"__ior__", &PyNumberMethods::nb_inplace_or},
    {"__ixor__", &PyNumberMethods::nb_inplace_xor}, {"__ilshift__", &PyNumberMethods::nb_inplace_lshift},
    {"__irshift__", &PyNumberMethods::nb_inplace_rshift}};
constexpr std::pair<std::string_view, unaryfunc PyNumberMethods::*> kUnarySlots[] = {
    {"__neg__", &PyNumberMethods::nb_negative}, {"__pos__", &PyNumberMethods::nb_positive},
    {"__abs__", &PyNumberMethods::nb_absolute}, {"__invert__", &PyNumberMethods::nb_invert}};
constexpr std::string_view kCompareNames[] = {"__lt__", "__le__", "__eq__", "__ne__", "__gt__", "__ge__"};

// Fills the slots of the operators in row Op's dunders column.
template <OpId Op>
void install_row(PyNumberMethods* nb) {
  // The dunders column of ops.def, as a constant (src/ops/op_rows.hpp).
  constexpr std::string_view dunders = ops::op_row(Op).dunders;
  if constexpr (!dunders.empty()) {
    size_t pos = 0;
    while (pos < dunders.size()) {
      size_t end = dunders.find(' ', pos);
      if (end == std::string_view::npos) end = dunders.size();
      const std::string_view name = dunders.substr(pos, end - pos);
      pos = end + 1;
      if constexpr (ops::op_row(Op).nin == 1) {
        for (auto [n, slot] : kUnarySlots)
          if (n == name) nb->*slot = nb_unary<Op>;
      } else {
        for (auto [n, slot] : kBinarySlots)
          if (n == name) nb->*slot = nb_binary<Op>;
        for (auto [n, slot] : kInplaceSlots)
          if (n == name) nb->*slot = nb_inplace<Op>;
        for (int c = 0; c < 6; ++c)
          if (kCompareNames[c] == name) g_compare[c] = Op;
      }
    }
  }
}

void install_fast_operators(PyTypeObject* type) {
  PyNumberMethods* nb = type->tp_as_number;
#define NPC_UFUNC(name, ...) install_row<OpId::name>(nb);
#define NPC_REDUCE(name, ...)
#define NPC_PRIM(name, ...)
#include "npc/ops.def"
  type->tp_richcompare = richcompare;
}

}  // namespace

// NumPy's abstract DType class of a Python int (0), float (1) or complex (2), which numpy
// does not export by name: taken once from the error NumPy itself raises for gcd(complex, x).
static py::object python_scalar_dtype_class(int k) {
  static PyObject* cache[3] = {nullptr, nullptr, nullptr};
  if (!cache[k]) {
    py::module_ np = py::module_::import("numpy");
    py::object v = k == 0 ? py::object(py::int_(1)) : k == 1 ? py::object(py::float_(1.0))
                                                             : py::reinterpret_steal<py::object>(PyComplex_FromDoubles(0, 1));
    try {
      np.attr("gcd")(np.attr("ones")(1, "c16"), v);
    } catch (py::error_already_set& err) {
      cache[k] = py::object(err.value().attr("dtypes")[py::int_(1)]).release().ptr();
    }
  }
  return py::reinterpret_borrow<py::object>(cache[k]);
}

void bind_ops(py::module_& m) {
  // NumPy's abstract DTypes of Python scalars are learnt from one of its errors, at import:
  // inside a trace numpy.gcd is npc's patched function, which raises another error.
  for (int k = 0; k < 3; ++k) python_scalar_dtype_class(k);
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
      for (size_t i = 0; i < e.in.size(); ++i) {
        const bool weak = i < e.weak.size() && e.weak[i];
        if (weak)  // a Python scalar: NumPy names its abstract DType
          types[i] = python_scalar_dtype_class(is_complex(e.in[i]) ? 2 : kind(e.in[i]) == Kind::Float ? 1 : 0);
        else
          types[i] = py::type::of(dts[py::int_(static_cast<int>(e.in[i]))]);
      }
      for (int k = 0; k < info.nout; ++k) types[e.in.size() + k] = py::none();
      if (!e.all.empty()) {  // every operand given, None where NumPy has none
        types = py::tuple(e.all.size());
        for (size_t i = 0; i < e.all.size(); ++i) {
          if (i < e.weak.size() && e.weak[i] && e.all[i])
            types[i] = python_scalar_dtype_class(is_complex(*e.all[i]) ? 2 : kind(*e.all[i]) == Kind::Float ? 1 : 0);
          else
            types[i] = e.all[i] ? py::object(py::type::of(dts[py::int_(static_cast<int>(*e.all[i]))])) : py::none();
        }
      }
      py::object uf = py::module_::import("numpy").attr(std::string(info.name).c_str());
      py::object err = exc(uf, types);
      PyErr_SetObject(exc.ptr(), err.ptr());
    }
  });

  m.def("op_table", [] {
    static const char* const kResolver[] = {"Default", "Uniform", "TrueDivide", "Absolute", "Comparison", "Logical"};
    static const char* const kEmit[] = {"missing", "pattern", "unsupported"};
    py::object row_type = py::module_::import("collections").attr("namedtuple")(
        "OpRow", py::make_tuple("name", "kind", "nin", "nout", "identity", "differentiable", "loops", "resolver",
                                "fpe_check", "fpe", "at", "dunders", "vmath", "fused", "emit"));
    py::list rows;
    for (int i = 0; i < kNumOps; ++i) {
      const OpInfo& o = op_info(static_cast<OpId>(i));
      py::list dunders;
      for (size_t pos = 0; pos < o.dunders.size();) {
        size_t end = std::min(o.dunders.find(' ', pos), o.dunders.size());
        dunders.append(std::string(o.dunders.substr(pos, end - pos)));
        pos = end + 1;
      }
      const fusion::EmitRule cpp = fusion::cpp_emit_rule(static_cast<OpId>(i));
      py::dict emit;
      py::dict overrides;
      if (!cpp.complex_text.empty()) overrides["complex"] = std::string(cpp.complex_text);
      emit["cpp"] = py::make_tuple(kEmit[static_cast<int>(cpp.status)], std::string(cpp.text), std::string(cpp.kinds),
                                   overrides);
      rows.append(row_type(std::string(o.name), static_cast<int>(o.kind), o.nin, o.nout, static_cast<int>(o.identity),
                           o.differentiable, std::string(o.loops), kResolver[static_cast<int>(o.resolver)],
                           o.fpe_check, std::string(o.fpe), std::string(o.at), py::tuple(dunders),
                           std::string(o.vmath), std::string(o.fused), emit));
    }
    return rows;
  }, "Rows of ops.def as named tuples (name, kind 0=ufunc 1=reduce 2=prim, nin, nout, identity, differentiable, "
     "loops, resolver, fpe_check, fpe, at, dunders, vmath, fused, emit): every column (include/npc/ops.def), and the "
     "emitter tables' rows per target {target: (status 'pattern'/'unsupported'/'missing', pattern or reason, kinds, "
     "{'complex': the pattern of those loops when it differs})}.");

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

  m.def("_set_runtime_float_type", [](py::type t) {
    Py_INCREF(t.ptr());
    g_runtime_float = reinterpret_cast<PyTypeObject*>(t.ptr());
  });
  // Note [classes of traced values] in python/npc/_array.py: a `__class__` property goes
  // into the type's own dict (assigning it through the type would change the type's class).
  m.def("_set_class_property", [](py::type t, py::object prop) {
    auto* tp = reinterpret_cast<PyTypeObject*>(t.ptr());
    if (!(tp->tp_flags & Py_TPFLAGS_HEAPTYPE)) throw TypeError("_set_class_property: a heap type is needed");
    if (PyDict_SetItemString(tp->tp_dict, "__class__", prop.ptr()) != 0) throw py::error_already_set();
    PyType_Modified(tp);
  });
  m.def("_set_runtime_int_type", [](py::type t) {
    Py_INCREF(t.ptr());
    g_runtime_int = reinterpret_cast<PyTypeObject*>(t.ptr());
  });
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
    if (!axes.is_none()) o.axes = index_list(axes);
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
    // The start values NumPy casts into out= first warn as "cast" (Note [reduce through a
    // narrower out] in reduce.cpp).
    report_named_fp();
    // NumPy casts the input (dtype=) and out= inside the reduction's buffered iterator: their
    // errors are "... encountered in reduce" too (not "cast", and not left pending for a
    // later call to report).
    if (int cf = take_fp_flags()) add_fp_report_flags(cf);
    report_fpe_in("reduce");
    if (!out.is_none()) return out;
    return result_object(std::move(r), true);
  });

  m.def("reduce_loop_dtype", [](int op_id, int in, int dtype, int out, bool accumulate) {
    return static_cast<int>(reduce_loop(static_cast<OpId>(op_id), static_cast<DType>(in), dtype_arg(dtype),
                                        dtype_arg(out), accumulate).acc);
  }, py::arg("op"), py::arg("in"), py::arg("dtype"), py::arg("out"), py::arg("accumulate") = false,
     "Code of the loop dtype of ufunc.reduce/accumulate (dtype=, out= codes or -1); NumPy's TypeError without one.");

  m.def("ufunc_accumulate", [](int op_id, const PyArray& a, int64_t axis, int dtype, py::object out) -> py::object {
    std::optional<ndarray> o;
    if (!out.is_none()) o = out.cast<PyArray&>();
    ndarray r;
    {
      ReleaseGil nogil;
      r = accumulate(static_cast<OpId>(op_id), a, axis, dtype_arg(dtype), o);
    }
    report_fp("cast");  // the casts (dtype=, into out=) first, as NumPy; none left pending
    report_fpe_in("accumulate");
    if (!out.is_none()) return out;
    return wrap(std::move(r));
  });

  m.def("arg_reduce", [](int op_id, const PyArray& a, py::object axis, bool keepdims) -> py::object {
    std::optional<int64_t> ax;
    if (!axis.is_none()) ax = index_arg(axis);
    ndarray r;
    {
      ReleaseGil nogil;
      r = arg_reduce(static_cast<OpId>(op_id), a, ax, keepdims);
    }
    return result_object(std::move(r), true);
  });

  // Returns the floating-point error flags: the caller names them (Note [ufunc.at error
  // names] in _ufunc.py).
  m.def("ufunc_at", [](int op_id, PyArray& a, const PyArray& idx, py::object b) {
    std::optional<Operand> ob;
    std::vector<py::object> keep;
    if (!b.is_none()) ob = to_operand(b, keep);
    ufunc_at(static_cast<OpId>(op_id), a, idx, ob);
    return take_fp_errors();
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

  m.def("_overrides_ufuncs", [](py::handle x) { return overrides_ufuncs(x.ptr()); },
        "True when x's type overrides ufuncs and is neither npc's nor NumPy's (Note [foreign ufunc overrides]).");

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
            if (overrides_ufuncs(other.ptr())) return foreign_operator(op, other, self);
            PyObject* both[2] = {other.ptr(), self.ptr()};
            const bool scalar = scalar_math(both, 2);
            if (scalar && lacks_scalar_operator(static_cast<OpId>(op), both))  // Note [operators NumPy scalars lack]
              raise_lacking_scalar_operator(static_cast<OpId>(op), both);
            tracer::ScalarMath sm(scalar);
            py::tuple args = py::make_tuple(other, self);
            py::object r = ufunc_call_impl(op, args, py::none(), py::none(), -1, 3, "K");
            if (r.is(not_native())) r = operator_fallback(op, args, py::none());
            PyObject* operands[2] = {other.ptr(), self.ptr()};
            return wrap_ufunc_result(std::move(r), operands, 2);
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
          [op](py::handle self) {
            PyObject* operand = self.ptr();
            tracer::ScalarMath sm(scalar_math(&operand, 1));  // Note [operator slots are never patched]
            return wrap_ufunc_result(ufunc_call_impl(op, py::make_tuple(self), py::none(), py::none(), -1, 3, "K"),
                                     &operand, 1);
          },
          py::is_method(cls), py::name(item.first.cast<std::string>().c_str()));
    }
  });

  PyObject* ufunc_base = PyType_FromSpec(&g_ufunc_spec);
  if (!ufunc_base) throw py::error_already_set();
  g_ufunc_base = reinterpret_cast<PyTypeObject*>(ufunc_base);
  m.attr("_UfuncBase") = py::reinterpret_steal<py::object>(ufunc_base);

  m.def("_set_array_function_helpers", [](py::dict routes, py::object route, py::object fallback_ids,
                                          py::object failed) {
    for (PyObject** slot : {&g_func_routes, &g_route_fn, &g_fallback_ids, &g_function_failed}) Py_XDECREF(*slot);
    g_func_routes = routes.inc_ref().ptr();
    g_route_fn = route.inc_ref().ptr();
    g_fallback_ids = fallback_ids.inc_ref().ptr();
    g_function_failed = failed.inc_ref().ptr();
  }, "Shares python/npc/_interop.py's routing state with the C++ __array_function__.");

  m.def("_install_fast_paths", [](py::object cls, py::dict ns) {
    auto* type = reinterpret_cast<PyTypeObject*>(cls.ptr());
    install_fast_operators(type);
    install_fast_methods(type, ns);
    install_fast_ndarray(type);
    install_fast_indexing(type);
    install_fast_products(type);
    PyType_Modified(type);
  }, "Installs npc.ndarray's type slots and descriptors (Note [fast slots]); call once, last.");

  m.def("set_num_threads", &set_num_threads, py::arg("n"),
        "Number of threads npc's eager kernels use (default: all cores).");
  m.def("get_num_threads", &get_num_threads, "Number of threads npc's eager kernels use.");
  m.def("set_parallel_threshold", &set_parallel_threshold, py::arg("n"),
        "Element count below which kernels stay on the calling thread.");
  m.def("get_parallel_threshold", &get_parallel_threshold);
}

}  // namespace npc::py_bind
