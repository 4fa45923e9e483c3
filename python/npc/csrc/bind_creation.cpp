// Bindings for promotion (NEP 50) and array creation. DTypes travel as their integer codes;
// npc._dtypes converts numpy.dtype objects to codes.
#include <pybind11/stl.h>

#include "bindings.hpp"

namespace npc::py_bind {

namespace {
std::optional<Shape> opt_shape(py::handle o) {
  if (o.is_none()) return std::nullopt;
  return to_shape(o);
}
std::optional<DType> opt_dtype(int code) {
  if (code < 0) return std::nullopt;
  return static_cast<DType>(code);
}
}  // namespace

void bind_creation(py::module_& m) {
  m.def("promote_types", [](int a, int b) {
    return static_cast<int>(promote_types(static_cast<DType>(a), static_cast<DType>(b)));
  });
  m.def("result_type", [](std::vector<int> strong, std::vector<int> weak) {
    std::vector<DType> s;
    std::vector<WeakKind> w;
    for (int c : strong) s.push_back(static_cast<DType>(c));
    for (int c : weak) w.push_back(static_cast<WeakKind>(c));
    return static_cast<int>(result_type(s, w));
  });
  m.def("can_cast", [](int from, int to, const std::string& casting) {
    return can_cast(static_cast<DType>(from), static_cast<DType>(to), casting_from_name(casting));
  });
  m.def("empty", [](py::handle shape, int code, const std::string& order) {
    return wrap(empty(to_shape(shape), static_cast<DType>(code), order_from_name(order)));
  });
  m.def("zeros", [](py::handle shape, int code, const std::string& order) {
    return wrap(zeros(to_shape(shape), static_cast<DType>(code), order_from_name(order)));
  });
  m.def("full", [](py::handle shape, py::handle value, int code, const std::string& order) {
    return wrap(full(to_shape(shape), from_python(value), static_cast<DType>(code), order_from_name(order)));
  });
  m.def("empty_like", [](const PyArray& p, int code, const std::string& order, py::handle shape) {
    return wrap(empty_like(p, opt_dtype(code), order_from_name(order), opt_shape(shape)));
  });
  m.def("zeros_like", [](const PyArray& p, int code, const std::string& order, py::handle shape) {
    return wrap(zeros_like(p, opt_dtype(code), order_from_name(order), opt_shape(shape)));
  });
  m.def("full_like", [](const PyArray& p, py::handle value, int code, const std::string& order, py::handle shape) {
    return wrap(full_like(p, from_python(value), opt_dtype(code), order_from_name(order), opt_shape(shape)));
  });
  m.def("arange", [](py::handle start, py::handle stop, py::handle step, int code) {
    return wrap(arange(from_python(start), from_python(stop), from_python(step), static_cast<DType>(code)));
  });
  m.def("linspace", [](double start, double stop, int64_t num, bool endpoint, int code) {
    return wrap(linspace(start, stop, num, endpoint, static_cast<DType>(code)));
  });
  m.def("logspace", [](double start, double stop, int64_t num, bool endpoint, double base, int code) {
    return wrap(logspace(start, stop, num, endpoint, base, static_cast<DType>(code)));
  });
  m.def("eye", [](int64_t n, std::optional<int64_t> mm, int64_t k, int code, const std::string& order) {
    return wrap(eye(n, mm, k, static_cast<DType>(code), order_from_name(order)));
  });
}

}  // namespace npc::py_bind
