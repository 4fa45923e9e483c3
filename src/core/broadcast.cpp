// numpy.broadcast_shapes and numpy.broadcast_to (declared in npc/ops.hpp).
#include <string>

#include "npc/ops.hpp"

namespace npc {

Shape broadcast_shapes(std::span<const Shape> shapes) {
  size_t nd = 0;
  for (const Shape& s : shapes) nd = std::max(nd, s.size());
  Shape out(nd, 1);
  for (size_t k = 0; k < shapes.size(); ++k) {
    const Shape& s = shapes[k];
    for (size_t i = 0; i < s.size(); ++i) {
      int64_t& o = out[nd - s.size() + i];
      int64_t d = s[i];
      if (d == o || d == 1) continue;
      if (o == 1) { o = d; continue; }
      std::string msg = "shape mismatch: objects cannot be broadcast to a single shape.  Mismatch is between arg ";
      // Name the first earlier argument that disagrees, as NumPy does.
      size_t j = 0;
      for (; j < k; ++j) {
        const Shape& t = shapes[j];
        int64_t pos = static_cast<int64_t>(i) - static_cast<int64_t>(s.size()) + static_cast<int64_t>(t.size());
        if (pos >= 0 && t[pos] != 1 && t[pos] != d) break;
      }
      throw ValueError(msg + std::to_string(j) + " with shape " + shape_str(shapes[j]) + " and arg " +
                       std::to_string(k) + " with shape " + shape_str(s) + ".");
    }
  }
  return out;
}

ndarray broadcast_to(const ndarray& a, std::span<const int64_t> shape) {
  const int nd = static_cast<int>(shape.size());
  for (int64_t d : shape)
    if (d < 0) throw ValueError("all elements of broadcast shape must be non-negative");
  bool ok = a.ndim() <= nd;
  Strides st(nd, 0);
  for (int i = 0; ok && i < a.ndim(); ++i) {
    int o = nd - a.ndim() + i;
    int64_t d = a.shape()[i];
    if (d == shape[o]) st[o] = d == 1 ? 0 : a.strides()[i];
    else if (d == 1) st[o] = 0;
    else ok = false;
  }
  if (!ok) {
    std::string msg = a.ndim() > nd ? "input operand has more dimensions than allowed by the axis remapping"
                                    : "operands could not be broadcast together with remapped shapes [original->remapped]: " +
                                          shape_str(a.shape()) + "  and requested shape " + shape_str(shape);
    throw ValueError(msg);
  }
  ndarray r = a.with_geometry(a.offset(), a.dtype(), Shape(shape.begin(), shape.end()), st);
  r.set_writeable(false);
  return r;
}

}  // namespace npc
