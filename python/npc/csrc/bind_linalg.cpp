// Bindings of the linear algebra and random layers (npc/linalg.hpp, npc/random.hpp).
#include <pybind11/pybind11.h>

#include "bindings.hpp"
#include "npc/linalg.hpp"
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
