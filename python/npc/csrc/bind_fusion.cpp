// Bindings of the fusion layer (owned by that layer; filled in as it lands).
#include "bindings.hpp"

namespace npc::py_bind {
void bind_fusion(py::module_& m) { (void)m; }
}  // namespace npc::py_bind
