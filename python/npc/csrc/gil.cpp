// Taking and giving back the GIL safely while the interpreter finalizes.
#include <cxxabi.h>

#include <chrono>
#include <thread>

#include "bindings.hpp"

namespace npc::py_bind {

// Note [GIL at exit]
// When the interpreter finalizes, CPython 3.12 ends any other thread that tries to take the
// GIL (PyEval_RestoreThread, PyGILState_Ensure) by calling pthread_exit, which unwinds the
// thread's stack with a "forced unwind". A daemon thread inside an npc kernel (GIL
// released) meets this when its kernel ends: either it sees the interpreter finalizing
// before it asks for the GIL, or it is already waiting for the GIL when finalization
// starts. The forced unwind must not cross a noexcept frame (ReleaseGil's destructor, a
// Storage's release callback): std::terminate would abort the process ("terminate called
// without an active exception"). Letting it unwind through npc's frames is no better: the
// destructors of Python objects on the way would run without the GIL. So both cases park
// the thread for good instead, in the function that asks for the GIL (never in a
// destructor's own frame): before asking, when finalization has begun, and by catching the
// forced unwind, when it began while the thread waited. A parked daemon thread holds no
// lock and ends with the process, which is what CPython 3.14 itself does with such threads.

namespace {
bool finalizing() {
#if PY_VERSION_HEX >= 0x030D0000
  return Py_IsFinalizing();
#else
  return _Py_IsFinalizing();
#endif
}

[[noreturn]] void park() {
  for (;;) std::this_thread::sleep_for(std::chrono::hours(1));
}

// Not inlined into the destructors, so the handler lives in a frame that may unwind.
[[gnu::noinline]] void restore_thread(PyThreadState* state) {
  if (finalizing()) park();
  try {
    PyEval_RestoreThread(state);
  } catch (abi::__forced_unwind&) {
    park();  // finalization began while this thread waited for the GIL
  }
}

[[gnu::noinline]] PyGILState_STATE ensure_gil() {
  if (!PyGILState_Check() && finalizing()) park();
  try {
    return PyGILState_Ensure();
  } catch (abi::__forced_unwind&) {
    park();
  }
}
}  // namespace

ReleaseGil::~ReleaseGil() { restore_thread(state_); }

AcquireGil::AcquireGil() : state_(ensure_gil()) {}

void warn_write(PyArray& a) {
  a.warn_on_write = false;
  // Attributed to the user's line (the first frame outside npc), as NumPy's warning is.
  static py::object* warn = new py::object(py::module_::import("npc._ndarray_ext").attr("_warn_write"));
  (*warn)();
}

}  // namespace npc::py_bind
