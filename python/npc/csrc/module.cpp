// The Python extension npc._core: the ndarray type, creation, promotion. Ops reach C++
// through generic dispatch entry points, not one binding per op.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include "bindings.hpp"

namespace py = pybind11;

PYBIND11_MODULE(_core, m) {
  m.doc() = "npc C++ core: ndarray, dtypes and NEP 50 promotion, creation";
  npc::py_bind::register_errors(m);
  npc::py_bind::bind_ndarray(m);
  npc::py_bind::bind_creation(m);
  npc::py_bind::bind_ops(m);
  npc::py_bind::bind_indexing(m);
  npc::py_bind::bind_interop(m);
  npc::py_bind::bind_tracer(m);
  npc::py_bind::bind_fusion(m);
  npc::py_bind::bind_linalg(m);
}
