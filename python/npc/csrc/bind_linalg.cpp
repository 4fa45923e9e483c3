// Bindings of the linear algebra and random layers (npc/linalg.hpp, npc/random.hpp).
#include <pybind11/pybind11.h>

#include "bindings.hpp"
#include "npc/linalg.hpp"
#include "npc/ops.hpp"
#include "npc/random.hpp"

namespace npc::py_bind {
namespace {

// The bitgen_t* of a NumPy BitGenerator's `capsule` attribute.
random::BitGen* bitgen_of(py::handle capsule) {
  void* p = PyCapsule_GetPointer(capsule.ptr(), "BitGenerator");
  if (!p) throw py::error_already_set();
  return static_cast<random::BitGen*>(p);
}

}  // namespace

void bind_linalg(py::module_& m) {
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const LinAlgError& e) {
      py::object cls = py::module_::import("numpy.linalg").attr("LinAlgError");
      PyErr_SetString(cls.ptr(), e.what());
    }
  });
  // numpy.linalg on LAPACKE: arrays arrive validated and of a LAPACK dtype (python/npc/linalg).
  m.def("_lapack_available", &lapack::available);
  m.def("_la_broadcast_to", [](const PyArray& a, py::handle shape) { return wrap(broadcast_to(a, to_shape(shape))); });
  m.def("_la_solve", [](const PyArray& a, const PyArray& b) { return wrap(lapack::solve(a, b)); });
  m.def("_la_inv", [](const PyArray& a) { return wrap(lapack::inv(a)); });
  m.def("_la_det", [](const PyArray& a) { return wrap(lapack::det(a)); });
  m.def("_la_slogdet", [](const PyArray& a) {
    auto [s, l] = lapack::slogdet(a);
    return py::make_tuple(wrap(s), wrap(l));
  });
  m.def("_la_cholesky", [](const PyArray& a, bool upper) { return wrap(lapack::cholesky(a, upper)); });
  m.def("_la_eigh", [](const PyArray& a, bool lower, bool vectors) {
    auto [w, v] = lapack::eigh(a, lower, vectors);
    return vectors ? py::object(py::make_tuple(wrap(w), wrap(v))) : wrap(w);
  });
  m.def("_la_svd", [](const PyArray& a, bool full, bool vectors) {
    auto [u, s, vh] = lapack::svd(a, full, vectors);
    return vectors ? py::object(py::make_tuple(wrap(u), wrap(s), wrap(vh))) : wrap(s);
  });
  m.def("_la_qr", [](const PyArray& a, const std::string& mode) {
    auto [q, r] = lapack::qr(a, mode);
    return mode == "r" ? wrap(r) : py::object(py::make_tuple(wrap(q), wrap(r)));
  });
  m.def("_la_eig", [](const PyArray& a, bool vectors) {
    auto [w, v] = lapack::eig(a, vectors);
    return vectors ? py::object(py::make_tuple(wrap(w), wrap(v))) : wrap(w);
  });
  m.def("_la_lstsq", [](const PyArray& a, const PyArray& b, double rcond) {
    auto [x, resid, s, rank] = lapack::lstsq(a, b, rcond);
    return py::make_tuple(wrap(x), wrap(resid), rank, wrap(s));
  });
  m.def("_matmul", [](const PyArray& a, const PyArray& b) { return wrap(matmul(a, b)); },
        "numpy.matmul on two npc arrays (promotion, 1-D and batch rules); see npc/linalg.hpp.");
  m.def("_outer", [](const PyArray& a, const PyArray& b) { return wrap(outer(a, b)); },
        "numpy.outer on two npc arrays (exact elementwise products).");
  m.def("_have_blas", &have_blas);
  m.def("_random_available", &random::available);
  // Samplers: (capsule, ..., out) fill `out` in place with the GIL released; the caller holds
  // the bit generator's lock, as NumPy does.
  m.def("_rand_uniform01", [](py::handle cap, PyArray& out) {
    auto* bg = bitgen_of(cap);
    py::gil_scoped_release nogil;
    random::standard_uniform(bg, out);
  });
  m.def("_rand_uniform", [](py::handle cap, double low, double high, PyArray& out) {
    auto* bg = bitgen_of(cap);
    py::gil_scoped_release nogil;
    random::uniform(bg, low, high, out);
  });
  m.def("_rand_standard_normal", [](py::handle cap, PyArray& out) {
    auto* bg = bitgen_of(cap);
    py::gil_scoped_release nogil;
    random::standard_normal(bg, out);
  });
  m.def("_rand_normal", [](py::handle cap, double loc, double scale, PyArray& out) {
    auto* bg = bitgen_of(cap);
    py::gil_scoped_release nogil;
    random::normal(bg, loc, scale, out);
  });
  m.def("_rand_standard_exponential", [](py::handle cap, bool inverse, PyArray& out) {
    auto* bg = bitgen_of(cap);
    py::gil_scoped_release nogil;
    random::standard_exponential(bg, inverse, out);
  });
  m.def("_rand_exponential", [](py::handle cap, double scale, PyArray& out) {
    auto* bg = bitgen_of(cap);
    py::gil_scoped_release nogil;
    random::exponential(bg, scale, out);
  });
  m.def("_rand_bounded", [](py::handle cap, uint64_t off, uint64_t rng, bool masked, PyArray& out) {
    auto* bg = bitgen_of(cap);
    py::gil_scoped_release nogil;
    random::bounded_integers(bg, off, rng, masked, out);
  });
  m.def("_rand_shuffle", [](py::handle cap, PyArray& x) {
    auto* bg = bitgen_of(cap);
    py::gil_scoped_release nogil;
    random::shuffle(bg, x);
  });
  m.def("_rand_legacy_normal", [](py::handle cap, double loc, double scale, int has_gauss, double gauss, PyArray& out) {
    auto* bg = bitgen_of(cap);
    {
      py::gil_scoped_release nogil;
      random::legacy_normal(bg, loc, scale, has_gauss, gauss, out);
    }
    return py::make_tuple(has_gauss, gauss);
  });
}

}  // namespace npc::py_bind
