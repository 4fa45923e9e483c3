// Bindings of the linear algebra and random layers (npc/linalg.hpp, npc/random.hpp).
#include <pybind11/pybind11.h>

#include <cmath>
#include <string>
#include <unordered_map>

#include "bindings.hpp"
#include "npc/linalg.hpp"
#include "npc/ops.hpp"
#include "npc/random.hpp"
#include "npc/graph.hpp"
#include "ops/blas.hpp"
#include "tracer/trace.hpp"

namespace npc::py_bind {
namespace {

// The bitgen_t* of a NumPy BitGenerator's `capsule` attribute.
const PyArray& arr(py::handle h) { return h.cast<const PyArray&>(); }

random::BitGen* bitgen_of(py::handle capsule) {
  void* p = PyCapsule_GetPointer(capsule.ptr(), "BitGenerator");
  if (!p) throw py::error_already_set();
  return static_cast<random::BitGen*>(p);
}

py::object uniform01(py::args& x, bool pcg64) {
  auto* bg = bitgen_of(x[1]);
  auto& out = x[2].cast<PyArray&>();
  ReleaseGil nogil;
  random::standard_uniform(bg, out, pcg64);
  return py::none();
}

py::object uniform(py::args& x, bool pcg64) {
  auto* bg = bitgen_of(x[1]);
  const double lo = x[2].cast<double>(), hi = x[3].cast<double>();
  auto& out = x[4].cast<PyArray&>();
  ReleaseGil nogil;
  random::uniform(bg, lo, hi, out, pcg64);
  return py::none();
}

// Note [products of dynamic sizes]
// Once a compiled function has seen two sizes of an argument, its dims are symbols
// (automatic dynamic shapes), one per input dim: `A @ x` pairs A's column symbol with x's
// length symbol, which are not the same Dim although every call passes equal sizes (NumPy
// raises otherwise). Tracing saw the sizes equal, so b's core dim (and, for matmul, its batch
// dims, where a has as many) is renamed to a's and the assumption becomes a size constraint
// (Context::align_dims, Note [specialised symbols] in src/tracer/trace_nodes.cpp): the graph
// holds the product as a node for every size that keeps them equal, and other sizes trace
// again. Before, such a product was not recorded: every call of the function broke its graph
// at the product and ran NumPy's.
ir::NodeRef same_core_dims(tracer::Context& c, ir::NodeRef na, ir::NodeRef nb, bool va, bool vb, bool batch) {
  const ir::SymShape &sa = na->shape, &sb = nb->shape;
  if (sa.empty() || sb.empty()) return nb;
  ir::SymShape want = sb;
  want[vb ? 0 : sb.size() - 2] = sa.back();
  const size_t batch_a = sa.size() - (va ? 1 : 2), batch_b = sb.size() - (vb ? 1 : 2);
  if (batch && batch_a == batch_b)
    for (size_t d = 0; d < batch_b; ++d) want[d] = sa[d];
  return want == sb ? nb : c.align_dims(nb, want);
}

// Note [matmul in traces]
// Inside npc.compile a product with a traced operand is recorded as a Prim matmul node (the
// operands cast to the result dtype first: promotion at the boundary) instead of breaking
// the graph, so the fused backend runs it as a library call between fused producer and
// epilogue kernels (docs/fusion.md, "Library calls"). Shapes that cannot be checked while
// tracing (core dimensions that are not the same Dim, batch shapes that differ) are not
// recorded: the eager call runs and raises NumPy's error, or breaks the graph.
// The node's params name the product's floating-point errors as NumPy does: none for
// "matmul", [1] for "dot" (np.dot, np.inner), [2] for none reported (np.vdot).
py::object traced_matmul(const ndarray& a, const ndarray& b, const std::string& where) {
  tracer::Context* c = tracer::current();
  if (!c || !(a.is_traced() || b.is_traced()) || a.ndim() == 0 || b.ndim() == 0) return py::none();
  ir::NodeRef na = c->node_of(a), nb = c->node_of(b);
  const bool va = na->shape.size() == 1, vb = nb->shape.size() == 1;
  nb = same_core_dims(*c, na, nb, va, vb, true);
  const ir::SymShape &sa = na->shape, &sb = nb->shape;
  if (!(sa.back() == (vb ? sb[0] : sb[sb.size() - 2]))) return py::none();
  ir::SymShape ba(sa.begin(), sa.end() - (va ? 1 : 2)), bb(sb.begin(), sb.end() - (vb ? 1 : 2));
  if (!ba.empty() && !bb.empty() && ba != bb) return py::none();
  const Shape &ha = a.shape(), &hb = b.shape();
  ir::SymShape out = ba.size() >= bb.size() ? ba : bb;
  Shape hint(ba.size() >= bb.size() ? ha.begin() : hb.begin(),
             ba.size() >= bb.size() ? ha.end() - (va ? 1 : 2) : hb.end() - (vb ? 1 : 2));
  if (!va) { out.push_back(sa[sa.size() - 2]); hint.push_back(ha[ha.size() - 2]); }
  if (!vb) { out.push_back(sb.back()); hint.push_back(hb.back()); }
  const DType t = promote_types(a.dtype(), b.dtype());
  ir::Graph& g = c->graph();
  std::vector<ir::NodeRef> args{g.cast(na, t), g.cast(nb, t)};
  std::vector<int64_t> params;
  if (where == "dot") params = {1};
  else if (where.empty()) params = {2};
  return wrap(c->new_value(g.prim(OpId::matmul, args, t, std::move(out), params), std::move(hint)));
}

// Note [N-D dot in traces]
// numpy.dot with an operand of more than two dimensions (and numpy.inner, which is dot(a,
// b.swapaxes(-1, -2)) there) is not a matmul: NumPy computes every output element as its
// own vector dot over a's last axis and b's second-to-last (PyArray_MatrixProduct2, the
// dtype's dot loop: BLAS dotu or a plain loop by strides), while a 2-D matmul of the
// reshaped operands runs a BLAS gemm or the complex product in another order; the
// non-finite combinations differ (nan+infj against nan+nanj). A traced N-D dot is recorded
// as a Prim matmul node with params {1} and dot's result shape, a.shape[:-1] +
// b.shape[:-2] + b.shape[-1:]; the node runs npc::dot (eager npc's routine) on the
// operands as views, in both backends (ir::run_node_eagerly, Note [library calls]).
py::object traced_dot(const ndarray& a, const ndarray& b) {
  tracer::Context* c = tracer::current();
  if (!c || !(a.is_traced() || b.is_traced()) || a.ndim() == 0 || b.ndim() == 0) return py::none();
  if (a.ndim() <= 2 && b.ndim() <= 2) return traced_matmul(a, b, "dot");
  ir::NodeRef na = c->node_of(a), nb = c->node_of(b);
  const bool vb = nb->shape.size() == 1;
  nb = same_core_dims(*c, na, nb, false, vb, false);
  const ir::SymShape &sa = na->shape, &sb = nb->shape;
  if (!(sa.back() == (vb ? sb[0] : sb[sb.size() - 2]))) return py::none();
  const Shape &ha = a.shape(), &hb = b.shape();
  ir::SymShape out(sa.begin(), sa.end() - 1);
  Shape hint(ha.begin(), ha.end() - 1);
  if (!vb) {
    out.insert(out.end(), sb.begin(), sb.end() - 2);
    out.push_back(sb.back());
    hint.insert(hint.end(), hb.begin(), hb.end() - 2);
    hint.push_back(hb.back());
  }
  const DType t = promote_types(a.dtype(), b.dtype());
  ir::Graph& g = c->graph();
  std::vector<ir::NodeRef> args{g.cast(na, t), g.cast(nb, t)};
  const std::vector<int64_t> params{1};
  return wrap(c->new_value(g.prim(OpId::matmul, args, t, std::move(out), params), std::move(hint)));
}

// The floating-point flags of the product just computed, reported as NumPy names them
// ("matmul", "dot"), or dropped for `where` "" (Note [product FP errors] in _linalg.py).
void report_product_flags(const std::string& where) {
  const int f = take_product_fp_flags();
  if (!f || where.empty()) return;
  static py::object* handler = new py::object(py::module_::import("npc._ufunc").attr("_fp_error"));
  (*handler)(f, where);
}

// A product the tracer did not record runs on concrete operands. They are realized (the
// graph break runs the pending graph) before the product clears and reads the floating-point
// flags, so that the flags of the graph's own ops ("divide by zero" of an `x / 0` before
// `v @ v.T`) are not reported as the product's.
void realize_operands(const ndarray& a, const ndarray& b) {
  a.realize();
  b.realize();
}

// Note [fast products]
// Loops over rows call products of short vectors and small matrices (`np.dot(A[i, :j],
// A[j, :j])`, `A[i, :i] @ A[:i, j]`) thousands of times, so the common case skips Python:
// `a @ b` (the nb_matrix_multiply slot), `npc.dot(a, b)` and `npc.matmul(a, b)` (through
// their SubclassGuard's fast call, Note [subclass guard] in bind_interop.cpp) with two plain
// npc arrays of 1 or 2 dimensions, one inexact dtype, matching core dimensions and no other
// argument run npc::matmul (npc::dot) here. A product that raised floating-point flags goes
// back to the general path, which computes and reports them (Note [product FP errors] in
// python/npc/_linalg.py). While tracing, such a product of traced operands records its node
// here as the general path would (traced_matmul; a 0-d result marked as the NumPy scalar
// the general path's `r[()]` gives: Note [scalar results]). Anything else (other shapes,
// dtypes, subclasses, errors) declines: a null result with no Python error set.
PyObject* fast_product(PyObject* x, PyObject* y, bool is_dot = false) {
  if (Py_TYPE(x) != g_array_type || Py_TYPE(y) != g_array_type) return nullptr;
  const PyArray& a = *array_ptr(x);
  const PyArray& b = *array_ptr(y);
  const DType t = a.dtype();
  if (t != b.dtype() || !(t == DType::Float64 || t == DType::Float32 || t == DType::Complex128 || t == DType::Complex64))
    return nullptr;
  if (a.ndim() < 1 || a.ndim() > 2 || b.ndim() < 1 || b.ndim() > 2) return nullptr;
  if (a.shape().back() != (b.ndim() == 1 ? b.shape()[0] : b.shape()[0])) return nullptr;
  if (a.is_traced() || b.is_traced()) {
    if (!tracer::current()) return nullptr;
    // Whatever fails here fails again on the general path, with its own message.
    PyObject* r = guarded([&]() -> PyObject* {
      py::object v = traced_matmul(a, b, is_dot ? "dot" : "matmul");
      if (v.is_none()) return nullptr;
      if (const PyArray* p = array_ptr(v.ptr()); p && p->ndim() == 0) tracer::mark_scalar(*p);
      return v.release().ptr();
    });
    if (!r) PyErr_Clear();
    return r;
  }
  return guarded([&]() -> PyObject* {
    ndarray r = is_dot ? dot(a, b) : matmul(a, b);
    if (take_product_fp_flags()) return nullptr;
    if (r.ndim() == 0) return numpy_scalar(r.dtype(), r.data()).release().ptr();
    return new_array_object(std::move(r)).release().ptr();
  });
}

// npc.dot(a, b) and npc.matmul(a, b): two positional arguments, no keywords.
PyObject* fast_matmul_call(PyObject* const* args, Py_ssize_t nargs, PyObject* kwnames) {
  if (nargs != 2 || (kwnames && PyTuple_GET_SIZE(kwnames) > 0)) return nullptr;
  return fast_product(args[0], args[1]);
}

PyObject* fast_dot_call(PyObject* const* args, Py_ssize_t nargs, PyObject* kwnames) {
  if (nargs != 2 || (kwnames && PyTuple_GET_SIZE(kwnames) > 0)) return nullptr;
  return fast_product(args[0], args[1], true);
}

// type(self).<name>(self, other), or NotImplemented when the type has no such method.
PyObject* call_special(PyObject* self, PyObject* name, PyObject* other) {
  PyObject* f = _PyType_Lookup(Py_TYPE(self), name);  // borrowed
  if (!f) Py_RETURN_NOTIMPLEMENTED;
  return PyObject_CallFunctionObjArgs(f, self, other, nullptr);
}

// Otherwise the slot runs __matmul__/__rmatmul__ as CPython's own slot for Python methods
// does: a subclass operand on the right that overrides __rmatmul__ goes first.
PyObject* nb_matmul(PyObject* x, PyObject* y) {
  if (PyObject* r = fast_product(x, y)) return r;
  if (PyErr_Occurred()) return nullptr;
  static PyObject* mm = PyUnicode_InternFromString("__matmul__");
  static PyObject* rmm = PyUnicode_InternFromString("__rmatmul__");
  const bool do_other = Py_TYPE(x) != Py_TYPE(y) && array_ptr(y);
  if (array_ptr(x)) {
    if (do_other && PyType_IsSubtype(Py_TYPE(y), Py_TYPE(x)) &&
        _PyType_Lookup(Py_TYPE(y), rmm) != _PyType_Lookup(Py_TYPE(x), rmm)) {
      PyObject* r = call_special(y, rmm, x);
      if (r != Py_NotImplemented) return r;
      Py_DECREF(r);
      return call_special(x, mm, y);
    }
    PyObject* r = call_special(x, mm, y);
    if (r != Py_NotImplemented || !do_other) return r;
    Py_DECREF(r);
  }
  return array_ptr(y) ? call_special(y, rmm, x) : Py_NewRef(Py_NotImplemented);
}
}  // namespace

FastCall fast_call_of(const std::string& name) {
  if (name == "npc.dot") return fast_dot_call;
  if (name == "npc.matmul") return fast_matmul_call;
  return nullptr;
}

void install_fast_products(PyTypeObject* type) { type->tp_as_number->nb_matrix_multiply = nb_matmul; }

void bind_linalg(py::module_& m) {
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const LinAlgError& e) {
      py::object cls = py::module_::import("numpy.linalg").attr("LinAlgError");
      PyErr_SetString(cls.ptr(), e.what());
    }
  });
  m.def("_fast_product", [](py::handle a, py::handle b, bool is_dot) -> py::object {
    if (PyObject* r = fast_product(a.ptr(), b.ptr(), is_dot)) return py::reinterpret_steal<py::object>(r);
    if (PyErr_Occurred()) throw py::error_already_set();
    return py::none();
  }, py::arg("a"), py::arg("b"), py::arg("is_dot") = false,
     "a @ b (numpy.dot with is_dot) for two plain npc arrays in the common case (Note [fast products]), else None.");
  m.def("_have_blas", &have_blas);
  m.def("_use_numpy_blas", &ops::blas::use_loaded_numpy_blas,
        "Routes npc's BLAS calls to the OpenBLAS NumPy loaded (Note [one BLAS per process]); its path or ''.");
  m.def("_blas_library", &ops::blas::current, "The BLAS npc calls: 'system', 'none' or a library path.");
  m.def("_lapack_available", &lapack::available);
  m.def("_random_available", &random::available);

  // One generic entry point per layer: _linalg(name, *args). Arrays arrive validated and,
  // for the LAPACK drivers, of a LAPACK dtype (python/npc/linalg chooses it).
  using Fn = py::object (*)(py::args&);
  static const std::unordered_map<std::string, Fn> linalg_ops = {
      // _linalg("matmul", a, b, where) and _linalg("dot", a, b): the product's floating-point
      // errors are reported under `where` ("matmul" by default, "" for none).
      {"matmul", +[](py::args& x) -> py::object {
         const std::string where = x.size() > 3 ? x[3].cast<std::string>() : "matmul";
         if (tracer::current())
           if (py::object t = traced_matmul(arr(x[1]), arr(x[2]), where); !t.is_none()) return t;
         realize_operands(arr(x[1]), arr(x[2]));
         ndarray r = matmul(arr(x[1]), arr(x[2]));
         report_product_flags(where);
         return wrap(std::move(r));
       }},
      {"dot", +[](py::args& x) -> py::object {
         if (tracer::current())
           if (py::object t = traced_dot(arr(x[1]), arr(x[2])); !t.is_none()) return t;
         realize_operands(arr(x[1]), arr(x[2]));
         ndarray r = dot(arr(x[1]), arr(x[2]));
         report_product_flags("dot");
         return wrap(std::move(r));
       }},
      {"outer", +[](py::args& x) -> py::object { return wrap(outer(arr(x[1]), arr(x[2]))); }},
      // _linalg("einsum_pair", a, a_labels, b, b_labels, out_labels): the result, or None when
      // einsum_pair does not take the operands.
      {"einsum_pair", +[](py::args& x) -> py::object {
         std::optional<ndarray> r;
         {
           const ndarray &a = arr(x[1]), &b = arr(x[3]);
           const std::string la = x[2].cast<std::string>(), lb = x[4].cast<std::string>(), lo = x[5].cast<std::string>();
           ReleaseGil nogil;
           r = einsum_pair(a, la, b, lb, lo);
         }
         return r ? wrap(std::move(*r)) : py::none();
       }},
      {"broadcast_to",
       +[](py::args& x) -> py::object { return wrap(broadcast_to(arr(x[1]), to_shape(x[2])), x[1]); }},
      {"solve", +[](py::args& x) -> py::object { return wrap(lapack::solve(arr(x[1]), arr(x[2]))); }},
      {"inv", +[](py::args& x) -> py::object { return wrap(lapack::inv(arr(x[1]))); }},
      {"det", +[](py::args& x) -> py::object { return wrap(lapack::det(arr(x[1]))); }},
      {"slogdet", +[](py::args& x) -> py::object {
         auto [s, l] = lapack::slogdet(arr(x[1]));
         return py::make_tuple(wrap(s), wrap(l));
       }},
      {"cholesky", +[](py::args& x) -> py::object { return wrap(lapack::cholesky(arr(x[1]), x[2].cast<bool>())); }},
      {"eigh", +[](py::args& x) -> py::object {
         const bool vectors = x[3].cast<bool>();
         auto [w, v] = lapack::eigh(arr(x[1]), x[2].cast<bool>(), vectors);
         return vectors ? py::object(py::make_tuple(wrap(w), wrap(v))) : wrap(w);
       }},
      {"svd", +[](py::args& x) -> py::object {
         const bool vectors = x[3].cast<bool>();
         auto [u, s, vh] = lapack::svd(arr(x[1]), x[2].cast<bool>(), vectors);
         return vectors ? py::object(py::make_tuple(wrap(u), wrap(s), wrap(vh))) : wrap(s);
       }},
      {"qr", +[](py::args& x) -> py::object {
         const std::string mode = x[2].cast<std::string>();
         auto [q, r] = lapack::qr(arr(x[1]), mode);
         return mode == "r" ? wrap(r) : py::object(py::make_tuple(wrap(q), wrap(r)));
       }},
      {"eig", +[](py::args& x) -> py::object {
         const bool vectors = x[2].cast<bool>();
         auto [w, v] = lapack::eig(arr(x[1]), vectors);
         return vectors ? py::object(py::make_tuple(wrap(w), wrap(v))) : wrap(w);
       }},
      {"lstsq", +[](py::args& x) -> py::object {
         auto [sol, resid, s, rank] = lapack::lstsq(arr(x[1]), arr(x[2]), x[3].cast<double>());
         return py::make_tuple(wrap(sol), wrap(resid), rank, wrap(s));
       }},
  };
  m.def("_linalg", [](py::args args) -> py::object {
    auto it = linalg_ops.find(args[0].cast<std::string>());
    if (it == linalg_ops.end()) throw ValueError("npc._core._linalg: unknown operation");
    return it->second(args);
  }, "_linalg(name, *args): products and LAPACK drivers of npc/linalg.hpp (see python/npc/_linalg.py).");

  // Samplers: _random(name, capsule, *params, out) fills `out` in place with the GIL released;
  // the caller holds the bit generator's lock, as NumPy does.
  static const std::unordered_map<std::string, Fn> random_ops = {
      // "*_pcg64": the caller checked that the bit generator is NumPy's PCG64 (Note [inline PCG64]).
      {"uniform01", +[](py::args& x) -> py::object { return uniform01(x, false); }},
      {"uniform01_pcg64", +[](py::args& x) -> py::object { return uniform01(x, true); }},
      {"uniform", +[](py::args& x) -> py::object { return uniform(x, false); }},
      {"uniform_pcg64", +[](py::args& x) -> py::object { return uniform(x, true); }},
      {"standard_normal", +[](py::args& x) -> py::object {
         auto* bg = bitgen_of(x[1]);
         auto& out = x[2].cast<PyArray&>();
         ReleaseGil nogil;
         random::standard_normal(bg, out);
         return py::none();
       }},
      {"normal", +[](py::args& x) -> py::object {
         auto* bg = bitgen_of(x[1]);
         const double loc = x[2].cast<double>(), scale = x[3].cast<double>();
         auto& out = x[4].cast<PyArray&>();
         ReleaseGil nogil;
         random::normal(bg, loc, scale, out);
         return py::none();
       }},
      {"standard_exponential", +[](py::args& x) -> py::object {
         auto* bg = bitgen_of(x[1]);
         const bool inverse = x[2].cast<bool>();
         auto& out = x[3].cast<PyArray&>();
         ReleaseGil nogil;
         random::standard_exponential(bg, inverse, out);
         return py::none();
       }},
      {"exponential", +[](py::args& x) -> py::object {
         auto* bg = bitgen_of(x[1]);
         const double scale = x[2].cast<double>();
         auto& out = x[3].cast<PyArray&>();
         ReleaseGil nogil;
         random::exponential(bg, scale, out);
         return py::none();
       }},
      {"bounded", +[](py::args& x) -> py::object {
         auto* bg = bitgen_of(x[1]);
         const uint64_t off = x[2].cast<uint64_t>(), rng = x[3].cast<uint64_t>();
         const bool masked = x[4].cast<bool>();
         auto& out = x[5].cast<PyArray&>();
         ReleaseGil nogil;
         random::bounded_integers(bg, off, rng, masked, out);
         return py::none();
       }},
      {"shuffle", +[](py::args& x) -> py::object {
         auto* bg = bitgen_of(x[1]);
         auto& a = x[2].cast<PyArray&>();
         ReleaseGil nogil;
         random::shuffle(bg, a);
         return py::none();
       }},
      {"legacy_normal", +[](py::args& x) -> py::object {
         auto* bg = bitgen_of(x[1]);
         const double loc = x[2].cast<double>(), scale = x[3].cast<double>();
         int has_gauss = x[4].cast<int>();
         double gauss = x[5].cast<double>();
         auto& out = x[6].cast<PyArray&>();
         {
           ReleaseGil nogil;
           random::legacy_normal(bg, loc, scale, has_gauss, gauss, out);
         }
         return py::make_tuple(has_gauss, gauss);
       }},
  };
  m.def("_random", [](py::args args) -> py::object {
    auto it = random_ops.find(args[0].cast<std::string>());
    if (it == random_ops.end()) throw ValueError("npc._core._random: unknown sampler");
    return it->second(args);
  }, "_random(name, bit_generator_capsule, *params, out): samplers of npc/random.hpp (python/npc/random).");
}

}  // namespace npc::py_bind
