// Bindings of the indexing layer: ndarray.__getitem__/__setitem__ (Python keys parsed into
// npc::IndexItem here, with NumPy's rules for what a key means) and the generic entry
// points of python/npc/_indexing.py and _shape.py.
#include <pybind11/stl.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <unordered_map>

#include "bindings.hpp"
#include "npc/creation.hpp"
#include "npc/ops.hpp"
#include "tracer/trace.hpp"

namespace npc::py_bind {

namespace {
constexpr const char* kValidIndices =
    "only integers, slices (`:`), ellipsis (`...`), numpy.newaxis (`None`) and integer or boolean arrays are "
    "valid indices";

py::object& numpy_module() {
  // Leaked on purpose: destroying Python objects after interpreter shutdown crashes.
  static py::object& np = *new py::object(py::module_::import("numpy"));
  return np;
}

// numpy.ndarray, numpy.integer, ...: looked up once (a module attribute lookup by name costs
// more than the rest of a small setitem). Leaked, see numpy_module().
py::handle numpy_type(const char* name) {
  static std::unordered_map<std::string, py::handle>& types = *new std::unordered_map<std::string, py::handle>();
  auto it = types.find(name);
  if (it == types.end()) it = types.emplace(name, py::object(numpy_module().attr(name)).release()).first;
  return it->second;
}

// Python helpers (python/npc/_indexing.py), looked up once.
py::object py_helper(const char* name) {
  return py::module_::import("npc._indexing").attr(name);
}

bool is_npc_array(py::handle o) { return array_ptr(o) != nullptr; }

// An npc array for a NumPy array or nested sequence used as an index.
IndexItem array_item(py::handle o, bool from_sequence) {
  static py::object& conv = *new py::object(py_helper("_index_array"));  // leaked, see numpy_module()
  py::object r = conv(o, from_sequence);
  if (!is_npc_array(r)) throw IndexError("arrays used as indices must be of integer (or boolean) type");
  return IndexItem(static_cast<ndarray>(r.cast<PyArray&>()));
}

// NumPy reads a 0-d integer array used as an index as a Python int: a uint64 value of
// 2**63 and above raises its OverflowError instead of wrapping to a negative index.
const ndarray& scalar_u64_checked(const ndarray& a) {
  if (a.ndim() == 0 && a.dtype() == DType::UInt64) {
    uint64_t v;
    std::memcpy(&v, a.data(), sizeof v);
    if (v > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()))
      throw OverflowError("Python int too large to convert to C long");
  }
  return a;
}

IndexItem parse_item(py::handle o) {
  PyObject* p = o.ptr();
  if (p == Py_None) return IndexItem::newaxis();
  if (p == Py_Ellipsis) return IndexItem::ellipsis();
  if (PySlice_Check(p)) {
    Py_ssize_t start, stop, step;
    if (PySlice_Unpack(p, &start, &stop, &step) < 0) throw py::error_already_set();
    // PySlice_Unpack maps None to values that clamp to NumPy's defaults.
    return IndexItem(Slice{start, stop, step});
  }
  if (PyBool_Check(p)) return IndexItem(scalar_array(Scalar::from_bool(p == Py_True)));
  if (PyLong_Check(p)) {
    int overflow = 0;
    long long v = PyLong_AsLongLongAndOverflow(p, &overflow);
    // NumPy: OverflowError for [2**63, 2**64) (its index conversion goes through an unsigned
    // 64-bit value first), the invalid-index IndexError from 2**64 up and below -2**63.
    if (overflow > 0) {
      PyLong_AsUnsignedLongLong(p);
      if (!PyErr_Occurred()) throw OverflowError("Python int too large to convert to C long");
      PyErr_Clear();
      throw IndexError(kValidIndices);
    }
    if (overflow < 0) throw IndexError(kValidIndices);
    return IndexItem(static_cast<int64_t>(v));
  }
  if (PyArray* ia = array_ptr(o)) return IndexItem(scalar_u64_checked(static_cast<const ndarray&>(*ia)));
  if (py::isinstance(o, numpy_type("ndarray")) || py::isinstance(o, numpy_type("bool_"))) {
    if (py::isinstance(o, numpy_type("ndarray")) && o.attr("ndim").cast<int>() == 0 &&
        o.attr("dtype").attr("kind").cast<std::string>() == "u" &&
        py::int_(py::reinterpret_borrow<py::object>(o)) > py::int_(std::numeric_limits<int64_t>::max()))
      throw OverflowError("Python int too large to convert to C long");
    return array_item(o, false);
  }
  if (PyList_Check(p) || PyTuple_Check(p) || PyRange_Check(p)) return array_item(o, true);
  if (PyIndex_Check(p) && !PyFloat_Check(p)) {
    py::object i = py::reinterpret_steal<py::object>(PyNumber_Index(p));
    if (!i) {  // NumPy: whatever __index__ raised (or a non-int result) becomes the invalid-index error
      PyErr_Clear();
      throw IndexError(kValidIndices);
    }
    // NumPy integers convert like Python ints ([2**63, 2**64): OverflowError); other
    // __index__ objects beyond int64 give the invalid-index IndexError.
    if (!py::isinstance(o, numpy_type("integer"))) {
      int overflow = 0;
      PyLong_AsLongLongAndOverflow(i.ptr(), &overflow);
      if (overflow) throw IndexError(kValidIndices);
    }
    return parse_item(i);
  }
  // Other sequence-like objects (e.g. array-likes with __array__) become index arrays.
  if (!PyFloat_Check(p) && !PyUnicode_Check(p) && !PyBytes_Check(p) &&
      (py::hasattr(o, "__array__") || py::hasattr(o, "__array_interface__")))
    return array_item(o, false);
  throw IndexError(kValidIndices);
}

std::vector<IndexItem> parse_key(py::handle key) {
  std::vector<IndexItem> idx;
  if (PyTuple_Check(key.ptr())) {
    Py_ssize_t n = PyTuple_GET_SIZE(key.ptr());
    idx.reserve(static_cast<size_t>(n));
    for (Py_ssize_t i = 0; i < n; ++i) idx.push_back(parse_item(PyTuple_GET_ITEM(key.ptr(), i)));
  } else {
    idx.push_back(parse_item(key));
  }
  return idx;
}

void warn_complex_discard() {
  static py::object& cw = *new py::object(py::module_::import("numpy.exceptions").attr("ComplexWarning"));
  if (PyErr_WarnEx(cw.ptr(), "Casting complex values to real discards the imaginary part", 1) < 0)
    throw py::error_already_set();
}

// The value of `a[key] = value` as an npc array (any dtype; index_assign casts unsafely).
// `advanced`: the key holds an index array or a mask (Note [float into integer setitem]).
ndarray setitem_value(py::handle value, DType target, bool advanced = false) {
  PyObject* p = value.ptr();
  if (is_npc_array(value)) {
    const ndarray& v = *array_ptr(value);
    // A traced value that stands for a NumPy scalar (Note [scalar results] in trace.hpp) goes
    // into a signed integer array through int() (Note [float into integer setitem]): its
    // errors depend on the value, so it is realized (a graph break) and stored as the NumPy
    // scalar it is. Integers that always fit the target need no check.
    if (v.is_traced() && v.ndim() == 0 && !advanced && kind(target) == Kind::Signed && tracer::is_scalar_result(v) &&
        (is_inexact(v.dtype()) || (is_integer(v.dtype()) && !can_cast(v.dtype(), target, Casting::Safe)))) {
      v.realize();
      return setitem_value(numpy_scalar(v.dtype(), v.data()), target, advanced);
    }
    if (is_complex(v.dtype()) && !is_complex(target) && target != DType::Bool) warn_complex_discard();
    return v;
  }
  if (PyBool_Check(p)) return scalar_array(Scalar::from_bool(p == Py_True));
  if (PyLong_CheckExact(p) && kind(target) != Kind::Bool) {
    int overflow = 0;
    long long v = PyLong_AsLongLongAndOverflow(p, &overflow);
    if (!overflow) {
      if (is_integer(target)) {
        // NEP 50: a Python int must fit the array's integer dtype.
        Scalar s = Scalar::from_int(v);
        if (s.cast(target).as_int() != v || (v < 0 && kind(target) == Kind::Unsigned))
          throw OverflowError("Python integer " + std::to_string(v) + " out of bounds for " +
                              std::string(name(target)));
      }
      // A Python int goes into a float array converted to its dtype up front, as NumPy's
      // scalar setter does: "overflow encountered in cast" even when nothing is selected.
      if (is_inexact(target)) return scalar_array(Scalar::from_int(v).cast(target));
      return scalar_array(Scalar::from_int(v));
    }
  }
  // Note [float into integer setitem]
  // NumPy stores a Python float (and, for signed integer arrays, any NumPy float scalar)
  // into an integer array through int(value): NaN raises ValueError, infinities and values
  // beyond a C long raise OverflowError, and the integer must then fit the dtype. NumPy float
  // scalars into unsigned arrays are cast unsafely (handled by the generic path below).
  // The same int() path takes NumPy integer scalars into signed integer arrays. With an
  // index array or a mask (advanced indexing), NumPy scalars are cast like arrays instead
  // (unsafely: NaN warns "invalid value encountered in cast"); Python floats still go
  // through int().
  if (kind(target) == Kind::Signed && !advanced && !PyBool_Check(p) &&
      py::isinstance(value, numpy_type("integer"))) {
    int overflow = 0;
    py::object i = py::reinterpret_steal<py::object>(PyNumber_Index(p));
    if (!i) throw py::error_already_set();
    const long long v = PyLong_AsLongLongAndOverflow(i.ptr(), &overflow);
    if (overflow) throw OverflowError("Python int too large to convert to C long");
    Scalar s = Scalar::from_int(v);
    if (s.cast(target).as_int() != v)
      throw OverflowError("Python integer " + std::to_string(v) + " out of bounds for " + std::string(name(target)));
    return scalar_array(s);
  }
  // A NumPy complex scalar goes into a signed integer array through int() too: its real
  // part, after the ComplexWarning.
  if (kind(target) == Kind::Signed && !advanced && py::isinstance(value, numpy_type("complexfloating"))) {
    warn_complex_discard();
    return setitem_value(value.attr("real"), target, advanced);
  }
  if (is_integer(target) &&
      (PyFloat_CheckExact(p) ||
       (kind(target) == Kind::Signed && !advanced && py::isinstance(value, numpy_type("floating"))))) {
    const double d = PyFloat_AsDouble(p);
    if (d == -1.0 && PyErr_Occurred()) throw py::error_already_set();
    if (std::isnan(d)) throw ValueError("cannot convert float NaN to integer");
    if (std::isinf(d)) throw OverflowError("cannot convert float infinity to integer");
    const double t = std::trunc(d);
    if (target == DType::UInt64 && t >= 9223372036854775808.0 && t < 18446744073709551616.0)
      return scalar_array(Scalar::from_uint(static_cast<uint64_t>(t)));
    if (target == DType::UInt32 && t >= 9223372036854775808.0 && t < 18446744073709551616.0)
      throw OverflowError("Python integer " + std::to_string(static_cast<uint64_t>(t)) + " out of bounds for uint32");
    if (t >= 9223372036854775808.0 || t < -9223372036854775808.0)
      throw OverflowError("Python int too large to convert to C long");
    const auto v = static_cast<long long>(t);
    Scalar s = Scalar::from_int(v);
    if (s.cast(target).as_int() != v || (v < 0 && kind(target) == Kind::Unsigned))
      throw OverflowError("Python integer " + std::to_string(v) + " out of bounds for " + std::string(name(target)));
    return scalar_array(s);
  }
  if (PyFloat_CheckExact(p) && is_inexact(target))
    // Converted as a Python scalar (overflow warns, underflow does not: `a[:] = 1e-46` into
    // float32 is silent in NumPy, an array cast would say "underflow encountered in cast").
    return scalar_array(Scalar::from_double(PyFloat_AS_DOUBLE(p)).cast(target));
  if (PyFloat_CheckExact(p) && std::isfinite(PyFloat_AS_DOUBLE(p)))
    return scalar_array(Scalar::from_double(PyFloat_AS_DOUBLE(p)));
  if (PyComplex_CheckExact(p) && is_complex(target)) {
    Py_complex c = PyComplex_AsCComplex(p);
    return scalar_array(Scalar::from_complex({c.real, c.imag}));
  }
  if (std::optional<Scalar> s = native_numpy_scalar(p)) {  // keeps its dtype, cast by index_assign
    if (is_complex(s->dtype) && !is_complex(target) && target != DType::Bool) warn_complex_discard();
    // NumPy's scalar setter converts a real scalar for a float/complex array first: "overflow
    // encountered in cast" even when the index selects nothing (as _setitem_value does).
    if (is_inexact(target) && !is_complex(s->dtype)) return scalar_array(s->cast(target));
    // Into an integer or bool array too (Note [index before value]): "invalid value encountered
    // in cast" for NaN even when the index selects nothing; the eager cast's values and flags.
    if (s->dtype != target && !is_inexact(target)) return scalar_array(*s).astype(target);
    return scalar_array(*s);
  }
  static py::object& conv = *new py::object(py_helper("_setitem_value"));
  py::object r = conv(value, static_cast<int>(target));
  return static_cast<ndarray>(r.cast<PyArray&>());
}

// Note [setitem value shapes]
// NumPy stores into a single element (an all-integer index) through the dtype's scalar
// setter, so a sequence there is an error: TypeError from int()/complex() for integer and
// complex arrays, ValueError for floats, ValueError for any array with dimensions. For a
// basic (view) index, a nested sequence deeper than the destination is a ValueError before
// any broadcasting (arrays may still drop leading length-1 dimensions).
// Returns the value to store: `value` itself, or its truth value for a bool element.
py::object check_setitem_shape(const ndarray& a, const std::vector<IndexItem>& idx, py::handle value) {
  PyObject* p = value.ptr();
  const bool seq = PyList_Check(p) || PyTuple_Check(p);
  const bool array = is_npc_array(value) || py::isinstance(value, numpy_type("ndarray"));
  py::object same = py::reinterpret_borrow<py::object>(value);
  if (!seq && !array) return same;
  bool basic = true;
  int64_t nd = a.ndim();
  for (const IndexItem& it : idx) {
    if (it.kind == IndexItem::Kind::Array) basic = false;
    else if (it.kind == IndexItem::Kind::Integer) --nd;
    else if (it.kind == IndexItem::Kind::NewAxis) ++nd;
  }
  if (!basic || nd < 0) return same;  // index errors are reported by index_assign
  const std::string seq_msg = "setting an array element with a sequence.";
  const bool element = nd == 0 && index_is_scalar(a, idx);
  if (element && a.dtype() == DType::Bool) {
    // NumPy's bool setter takes the truth value of whatever it is given.
    const int truth = PyObject_IsTrue(p);
    if (truth < 0) throw py::error_already_set();
    return py::bool_(truth != 0);
  }
  if (array) {
    if (element && py::len(value.attr("shape")) > 0) {
      if (is_complex(a.dtype())) throw TypeError("only 0-dimensional arrays can be converted to Python scalars");
      throw ValueError(seq_msg);
    }
    // An array that does not broadcast to the view: NumPy's ValueError comes before the
    // value's cast is set up (no ComplexWarning), also for an empty view.
    if (!element) {
      const Shape vs = value.attr("shape").cast<Shape>();
      const Shape ts = index(a, idx).shape();
      size_t lead = 0;  // leading length-1 dimensions beyond the view's are dropped
      while (vs.size() - lead > ts.size() && vs[lead] == 1) ++lead;
      bool fits = vs.size() - lead <= ts.size();
      for (size_t k = lead; fits && k < vs.size(); ++k) {
        const int64_t t = ts[ts.size() - (vs.size() - k)];
        fits = vs[k] == t || vs[k] == 1;
      }
      if (!fits) {
        auto str = [](const Shape& s) {
          std::string r = "(";
          for (size_t k = 0; k < s.size(); ++k) r += (k ? "," : "") + std::to_string(s[k]);
          return r + (s.size() == 1 ? ",)" : ")");
        };
        throw ValueError("could not broadcast input array from shape " + str(vs) + " into shape " + str(ts));
      }
    }
    return same;
  }
  if (element) {
    const std::string tname = Py_TYPE(p)->tp_name;
    const Kind k = kind(a.dtype());
    if (k == Kind::Signed || k == Kind::Unsigned)
      throw TypeError("int() argument must be a string, a bytes-like object or a real number, not '" + tname + "'");
    if (k == Kind::Complex) throw TypeError("must be real number, not " + tname);
    throw ValueError(seq_msg);  // floats
  }
  // Nesting depth of the sequence (first elements only; ragged input fails later anyway).
  int64_t depth = 0;
  py::handle cur = value;
  while (PyList_Check(cur.ptr()) || PyTuple_Check(cur.ptr())) {
    ++depth;
    if (PySequence_Size(cur.ptr()) == 0) break;
    cur = PyList_Check(cur.ptr()) ? PyList_GET_ITEM(cur.ptr(), 0) : PyTuple_GET_ITEM(cur.ptr(), 0);
  }
  if (depth > nd)
    throw ValueError(seq_msg + " The requested array would exceed the maximum number of dimension of " +
                     std::to_string(nd) + ".");
  return same;
}

ClipMode clip_mode(const std::string& m) {
  if (m == "raise") return ClipMode::Raise;
  if (m == "wrap") return ClipMode::Wrap;
  if (m == "clip") return ClipMode::Clip;
  throw ValueError("clipmode must be one of 'clip', 'raise', or 'wrap' (got '" + m + "')");
}

// numpy.broadcast_shapes' own message, naming the first two arguments that disagree.
std::string broadcast_shapes_message(const std::vector<Shape>& shapes) {
  size_t nd = 0;
  for (const Shape& s : shapes) nd = std::max(nd, s.size());
  for (size_t k = 1; k < shapes.size(); ++k) {
    for (size_t j = 0; j < k; ++j) {
      const Shape &a = shapes[j], &b = shapes[k];
      for (size_t i = 0; i < nd; ++i) {
        int64_t x = i + a.size() >= nd ? a[i + a.size() - nd] : 1;
        int64_t y = i + b.size() >= nd ? b[i + b.size() - nd] : 1;
        if (x != y && x != 1 && y != 1)
          return "shape mismatch: objects cannot be broadcast to a single shape.  Mismatch is between arg " +
                 std::to_string(j) + " with shape " + shape_str(a) + " and arg " + std::to_string(k) +
                 " with shape " + shape_str(b) + ".";
      }
    }
  }
  return "shape mismatch: objects cannot be broadcast to a single shape.";
}

const ndarray& arr(py::handle o) {
  PyArray* a = array_ptr(o);
  if (!a) throw TypeError("expected an npc array");
  return *a;
}

std::vector<ndarray> arrays(py::handle seq) {
  std::vector<ndarray> r;
  for (auto o : seq) r.push_back(arr(o));
  return r;
}

std::optional<int64_t> opt_axis(py::handle axis) {
  if (axis.is_none()) return std::nullopt;
  return index_arg(axis);
}
}  // namespace

namespace {
py::object getitem(py::object self, py::handle key) {
  PyArray* ap = array_ptr(self);
  auto& a = ap ? *ap : self.cast<PyArray&>();
  std::vector<IndexItem> idx = parse_key(key);
  ndarray r = index(a, idx);
  if (r.ndim() == 0 && index_is_scalar(a, idx)) {
    if (!r.is_traced()) return numpy_scalar(r.dtype(), r.data());
    // A NumPy scalar is a value, not a view: later writes into `a` must not show in it.
    r = r.copy();
    tracer::mark_scalar(r);  // Note [scalar results]
  }
  return wrap(std::move(r), self);
}

// NumPy parses and bounds-checks the index before it converts the value: an invalid index
// is its IndexError even when the value cannot be converted either (`a0[0, None] = 2**64-1`
// on a 0-d integer array). Called when the conversion failed; returns when the index is valid.
void check_index_first(const ndarray& a, const std::vector<IndexItem>& idx) {
  for (const IndexItem& it : idx)
    if (it.kind == IndexItem::Kind::Array && it.array.is_traced()) return;
  tracer::Suspend untraced;
  (void)index(npc::empty(a.shape(), DType::Bool), idx);
}

// Note [partial sequence assignment] (python/npc/_indexing.py): after a sequence's conversion
// failed, the elements NumPy stores before the failing one are stored (basic indexes only;
// an element's setter converts nothing of a sequence). A traced destination gets them too.
void store_partial_sequence(py::object self, const ndarray& a, const std::vector<IndexItem>& idx, py::handle v) {
  if (!(PyList_Check(v.ptr()) || PyTuple_Check(v.ptr()))) return;
  for (const IndexItem& it : idx)
    if (it.kind == IndexItem::Kind::Array) return;
  ndarray view = index(a, idx);
  if (view.ndim() == 0 && index_is_scalar(a, idx)) return;
  static py::object& partial = *new py::object(py_helper("_setitem_partial"));
  partial(wrap(std::move(view), self), v);
}

// Note [index before value]
// NumPy's a[key] = value prepares the index first (too many indices, integers out of bounds,
// boolean arrays that do not fit their axes: IndexError, and no warning of the value's
// conversion), then converts a value that is not an array to a's dtype up front ("invalid value
// encountered in cast" for NaN into an integer array even when nothing is selected), then
// assigns, casting an array value element by element while it stores:
// - through a view (basic index), the cast is set up (ComplexWarning) but casts no element of
//   an empty selection;
// - through one boolean mask of a's shape, nothing at all happens when the mask selects
//   nothing (no ComplexWarning, no cast);
// - through index arrays that leave no axis to a subspace, a 0-d value is cast up front (its
//   warning also comes when nothing is selected, or before the IndexError of an index array's
//   value out of bounds); any other value is cast while it stores.
// An index array's values are checked while assigning, after the value's warnings.
bool leaves_no_subspace(const ndarray& a, const std::vector<IndexItem>& idx) {
  int consumed = 0;
  bool arrays = false;
  for (const IndexItem& it : idx) {
    if (it.kind == IndexItem::Kind::Integer) ++consumed;
    else if (it.kind == IndexItem::Kind::Array) {
      arrays = true;
      consumed += it.array.dtype() == DType::Bool ? it.array.ndim() : 1;
    } else {
      return false;
    }
  }
  return arrays && consumed == a.ndim();
}

void setitem(py::object self, py::handle key, py::handle value) {
  PyArray* ap = array_ptr(self);
  auto& a = ap ? *ap : self.cast<PyArray&>();
  if (a.ndim() == 0 && written_scalar_result(a)) raise_scalar_item_assignment(a.dtype());  // Note [writes into scalar results]
  std::vector<IndexItem> idx = parse_key(key);
  if (!a.writeable()) throw ValueError("assignment destination is read-only");
  if (a.warn_on_write) warn_write(a);
  bool traced_index = false;
  for (const IndexItem& it : idx) traced_index = traced_index || (it.kind == IndexItem::Kind::Array && it.array.is_traced());
  const bool traced = traced_index || a.is_traced();
  if (!traced_index) check_index_items(a, idx);  // Note [index before value]
  py::object v = check_setitem_shape(a, idx, value);
  ndarray val;
  bool advanced = false;
  for (const IndexItem& it : idx) advanced = advanced || it.kind == IndexItem::Kind::Array;
  const bool array_value = is_npc_array(v) || py::isinstance(v, numpy_type("ndarray"));
  // A mask of a's shape that selects nothing: the value is neither converted nor cast.
  if (!traced && array_value && idx.size() == 1 && idx[0].kind == IndexItem::Kind::Array &&
      idx[0].array.dtype() == DType::Bool && idx[0].array.shape() == a.shape() && count_nonzero(idx[0].array) == 0) {
    {
      py::object catcher = py::module_::import("warnings").attr("catch_warnings")();
      catcher.attr("__enter__")();
      py::module_::import("warnings").attr("simplefilter")("ignore");
      try {
        val = setitem_value(v, a.dtype(), advanced);
      } catch (py::error_already_set& e) {
        catcher.attr("__exit__")(py::none(), py::none(), py::none());
        // A value array NumPy would convert element by element (strings): none is converted.
        if (!(e.matches(PyExc_ValueError) || e.matches(PyExc_TypeError)) || !py::isinstance(v, numpy_type("ndarray")))
          throw;
        val = npc::zeros(v.attr("shape").cast<Shape>(), a.dtype());
        catcher = py::none();
      } catch (...) {
        catcher.attr("__exit__")(py::none(), py::none(), py::none());
        throw;
      }
      if (!catcher.is_none()) catcher.attr("__exit__")(py::none(), py::none(), py::none());
    }
    take_fp_flags();
    index_assign(a, idx, val);  // its checks of the value's size
    take_fp_flags();
    return;
  }
  try {
    val = setitem_value(v, a.dtype(), advanced);
    if (array_value && val.ndim() == 0 && val.dtype() != a.dtype() && leaves_no_subspace(a, idx))
      val = val.astype(a.dtype());
  } catch (py::error_already_set& e) {
    check_index_first(a, idx);
    store_partial_sequence(self, a, idx, v);
    // NumPy converts a value array of another kind (strings) element by element while it
    // assigns: an index that selects nothing converts nothing, and only the shapes are
    // checked. Zeros of the value's shape stand in for it then.
    if (!e.matches(PyExc_ValueError) && !e.matches(PyExc_TypeError)) throw;
    if (!py::isinstance(v, numpy_type("ndarray"))) throw;
    for (const IndexItem& it : idx)
      if (it.kind == IndexItem::Kind::Array && it.array.is_traced()) throw;
    ndarray selected;
    {
      tracer::Suspend untraced;
      selected = index(npc::empty(a.shape(), DType::Bool), idx);
    }
    if (selected.size() != 0) throw;
    val = npc::zeros(v.attr("shape").cast<Shape>(), a.dtype());
  } catch (const std::exception&) {
    check_index_first(a, idx);
    store_partial_sequence(self, a, idx, v);
    throw;
  }
  try {
    index_assign(a, idx, val);
  } catch (const IndexError&) {
    report_fp("cast");  // the value's cast came first (Note [index before value])
    throw;
  }
  report_fp("cast");  // a cast in the assignment warns here, not at the next operation
}

// ---------------------------------------------------------------- fast slots (Note [fast slots])
// a[i] with a Python int, a[i] = x with a Python number stored exactly (float64, int64,
// complex128 arrays), and a[start:stop:step]; everything else (and every error) goes through
// getitem/setitem above.
// PySlice_Unpack for the usual slice (bounds and step exact Python ints or None, step not
// zero): reads the ints directly instead of through __index__. False: use PySlice_Unpack.
bool unpack_plain_slice(PyObject* key, Py_ssize_t* start, Py_ssize_t* stop, Py_ssize_t* step) {
  auto* s = reinterpret_cast<PySliceObject*>(key);
  auto read = [](PyObject* v, Py_ssize_t none_value, Py_ssize_t* out) {
    if (v == Py_None) {
      *out = none_value;
      return true;
    }
    if (!PyLong_CheckExact(v)) return false;
    const Py_ssize_t x = PyLong_AsSsize_t(v);
    if (x == -1 && PyErr_Occurred()) {  // beyond Py_ssize_t: PySlice_Unpack clamps
      PyErr_Clear();
      return false;
    }
    *out = x;
    return true;
  };
  if (!read(s->step, 1, step) || *step == 0 || *step == PY_SSIZE_T_MIN) return false;
  const bool back = *step < 0;
  return read(s->start, back ? PY_SSIZE_T_MAX : 0, start) &&
         read(s->stop, back ? PY_SSIZE_T_MIN : PY_SSIZE_T_MAX, stop);
}

// The element a[key] addresses when `key` is an exact Python int (1-D `a`) or a tuple of
// a->ndim() exact Python ints, all in range; null otherwise (the general path then runs and
// reports any error).
std::byte* element_ptr(const PyArray& a, PyObject* key) {
  const int64_t nd = a.ndim();
  PyObject* const* items;
  Py_ssize_t n;
  if (PyLong_CheckExact(key)) {
    items = &key;
    n = 1;
  } else if (PyTuple_CheckExact(key)) {
    items = &PyTuple_GET_ITEM(key, 0);
    n = PyTuple_GET_SIZE(key);
  } else {
    return nullptr;
  }
  if (n != nd || nd == 0) return nullptr;
  int64_t off = 0;
  for (Py_ssize_t d = 0; d < n; ++d) {
    if (!PyLong_CheckExact(items[d])) return nullptr;
    int overflow = 0;
    long long i = PyLong_AsLongLongAndOverflow(items[d], &overflow);
    const int64_t len = a.shape()[d];
    if (overflow || i < -len || i >= len) return nullptr;
    if (i < 0) i += len;
    off += i * a.strides()[d];
  }
  return a.data() + off;
}

DType g_probe_dtype;  // written by dtype probes whose answer is not needed

// The geometry of the basic view a[key] for `key` a slice, an exact Python int (a >= 2-D)
// or a tuple of slices, exact Python ints and Nones (at least one slice or None, or fewer
// ints than dimensions), no more indices than dimensions; false otherwise (the general path
// runs).
// The geometry of a view, on the stack (no allocation on the hot path).
struct ViewGeometry {
  int64_t offset = 0;
  int ndim = 0;
  int64_t shape[64];  // NumPy's maximum number of dimensions
  int64_t strides[64];
  std::span<const int64_t> shape_span() const { return {shape, static_cast<size_t>(ndim)}; }
  std::span<const int64_t> strides_span() const { return {strides, static_cast<size_t>(ndim)}; }
};

bool basic_view_geometry(const PyArray& a, PyObject* key, ViewGeometry* g) {
  PyObject* const* items;
  Py_ssize_t n;
  if (PySlice_Check(key) || PyLong_CheckExact(key)) {
    items = &key;
    n = 1;
  } else if (PyTuple_CheckExact(key)) {
    items = &PyTuple_GET_ITEM(key, 0);
    n = PyTuple_GET_SIZE(key);
  } else {
    return false;
  }
  const int64_t nd = a.ndim();
  if (n == 0 || nd > 64) return false;
  int64_t* offset = &g->offset;
  g->ndim = 0;
  *offset = a.offset();
  bool any_slice = false, any_new = false;
  int64_t ax = 0;  // the next axis of `a`
  for (Py_ssize_t d = 0; d < n; ++d) {
    PyObject* it = items[d];
    if (it == Py_None) {  // numpy.newaxis: a new axis of length 1
      if (g->ndim >= 64) return false;
      g->shape[g->ndim] = 1;
      g->strides[g->ndim++] = 0;
      any_new = true;
      continue;
    }
    if (ax >= nd) return false;  // too many indices: the general path raises
    const int64_t len = a.shape()[ax], st = a.strides()[ax];
    ++ax;
    if (PyLong_CheckExact(it)) {
      int overflow = 0;
      long long i = PyLong_AsLongLongAndOverflow(it, &overflow);
      if (overflow || i < -len || i >= len) return false;
      if (i < 0) i += len;
      *offset += i * st;
    } else if (PySlice_Check(it)) {
      Py_ssize_t start, stop, step;
      if (!unpack_plain_slice(it, &start, &stop, &step)) return false;
      const Py_ssize_t m = PySlice_AdjustIndices(static_cast<Py_ssize_t>(len), &start, &stop, step);
      if (m > 0) *offset += start * st;
      int64_t stride;
      if (__builtin_mul_overflow(st, static_cast<int64_t>(step), &stride)) return false;
      if (g->ndim >= 64) return false;
      g->shape[g->ndim] = m;
      g->strides[g->ndim++] = stride;
      any_slice = true;
    } else {
      return false;
    }
  }
  if (!any_slice && !any_new && ax == nd) return false;  // an element: a NumPy scalar (element_ptr)
  if (g->ndim + (nd - ax) > 64) return false;  // beyond NumPy's dimensions: the general path raises
  for (int64_t d = ax; d < nd; ++d) {
    g->shape[g->ndim] = a.shape()[d];
    g->strides[g->ndim++] = a.strides()[d];
  }
  return true;
}

// The basic view a[key] as a new npc.ndarray (basic_view_geometry), or a null object.
py::object fast_view(PyObject* self, PyArray& a, PyObject* key) {
  if (a.warn_on_write) return {};
  ViewGeometry g;
  if (!basic_view_geometry(a, key, &g)) return {};
  // A view: its base is self's base, or self when self owns its memory (as wrap()).
  py::object base = a.base.is_none() ? py::reinterpret_borrow<py::object>(self) : a.base;
  return finalize_like(new_view_object(a, g.offset, g.shape_span(), g.strides_span(), std::move(base)), self);
}

bool exact_scalar_bytes(DType dt, PyObject* value, std::byte* p);
struct Bytes16 {
  uint64_t lo, hi;
};

// Note [direct view assignment]
// `p[1:-1, j] = t` and `u[1:-1, 0] = 1.0` in a loop over grid lines: the view's geometry is
// walked directly, without the view, value and broadcast arrays of the general assignment,
// when nothing can differ from it: a value of the array's dtype and the view's shape in
// memory disjoint from the view's (no cast, no overlap order), or a Python number or NumPy
// scalar stored exactly (exact_scalar_bytes). That halved such a store (NumPy's took half
// the time of npc's).
template <class T>
void walk_view(std::byte* dst, const ViewGeometry& g, const std::byte* src, const int64_t* sst) {
  const int nd = g.ndim;
  const int64_t inner = g.shape[nd - 1], ds = g.strides[nd - 1], ss = sst ? sst[nd - 1] : 0;
  int64_t idx[64] = {};
  int64_t rows = 1;
  for (int d = 0; d + 1 < nd; ++d) rows *= g.shape[d];
  T one;
  if (!sst) std::memcpy(&one, src, sizeof(T));
  for (int64_t r = 0; r < rows; ++r) {
    if (sst && ds == sizeof(T) && ss == sizeof(T)) {
      std::memcpy(dst, src, static_cast<size_t>(inner) * sizeof(T));
    } else if (sst) {
      for (int64_t i = 0; i < inner; ++i) std::memcpy(dst + i * ds, src + i * ss, sizeof(T));
    } else {
      for (int64_t i = 0; i < inner; ++i) std::memcpy(dst + i * ds, &one, sizeof(T));
    }
    for (int d = nd - 2; d >= 0; --d) {  // the next row
      dst += g.strides[d];
      if (sst) src += sst[d];
      if (++idx[d] < g.shape[d]) break;
      dst -= g.strides[d] * g.shape[d];
      if (sst) src -= sst[d] * g.shape[d];
      idx[d] = 0;
    }
  }
}

// The byte range [lo, hi) that an operand of `nd` axes spans.
void byte_extent(const std::byte* p, const int64_t* shape, const int64_t* strides, int nd, size_t isz,
                 const std::byte** lo, const std::byte** hi) {
  *lo = *hi = p;
  for (int d = 0; d < nd; ++d) {
    const int64_t span = (shape[d] - 1) * strides[d];
    if (span < 0) *lo += span;
    else *hi += span;
  }
  *hi += isz;
}

bool direct_assign_view(PyArray& a, const ViewGeometry& g, PyArray* va, PyObject* value) {
  if (g.ndim == 0 || g.ndim > 8) return false;
  int64_t n = 1;
  for (int d = 0; d < g.ndim; ++d) n *= g.shape[d];
  if (n == 0) return false;
  const size_t isz = a.itemsize();
  std::byte* dst = a.storage()->data() + g.offset;
  alignas(16) std::byte buf[16];
  const std::byte* src = buf;
  const int64_t* sst = nullptr;
  if (va) {
    // (bool: the general copy reads any nonzero byte as True, Note [bool bytes])
    if (va->dtype() != a.dtype() || va->dtype() == DType::Bool || va->ndim() != g.ndim || !std::ranges::equal(va->shape(), g.shape_span()) ||
        va->size() == 0)
      return false;
    const std::byte *vlo, *vhi, *dlo, *dhi;
    byte_extent(va->data(), va->shape().data(), va->strides().data(), g.ndim, isz, &vlo, &vhi);
    byte_extent(dst, g.shape, g.strides, g.ndim, isz, &dlo, &dhi);
    if (vlo < dhi && dlo < vhi) return false;  // overlapping memory: the general path's order
    src = va->data();
    sst = va->strides().data();
  } else if (!exact_scalar_bytes(a.dtype(), value, buf)) {
    return false;
  }
  switch (isz) {
    case 1: walk_view<uint8_t>(dst, g, src, sst); break;
    case 2: walk_view<uint16_t>(dst, g, src, sst); break;
    case 4: walk_view<uint32_t>(dst, g, src, sst); break;
    case 8: walk_view<uint64_t>(dst, g, src, sst); break;
    case 16: walk_view<Bytes16>(dst, g, src, sst); break;
    default: return false;
  }
  return true;
}

// a[key] = value for a basic `key` (basic_view_geometry) and a value that is an npc array of
// no more dimensions than the view, a Python number or a NumPy scalar: the view is assigned
// as index_assign assigns it (broadcast, unsafe cast, overlap-safe). False when the general
// path must run (any other case, and every error).
bool fast_assign_view(PyArray& a, PyObject* key, PyObject* value) {
  PyArray* va = array_ptr(value);
  if (va ? (Py_TYPE(value) != g_array_type || va->is_traced())
         : !(PyFloat_CheckExact(value) || PyLong_CheckExact(value) || PyComplex_CheckExact(value) ||
             numpy_scalar_data(value, &g_probe_dtype)))
    return false;
  ViewGeometry g;
  if (!basic_view_geometry(a, key, &g)) return false;
  // `a[key] op= b` stores the view it updated in place back into itself (Python's augmented
  // assignment): a copy of the memory onto itself, with nothing to cast. Nothing to do.
  if (va && va->storage() == a.storage() && va->offset() == g.offset && va->dtype() == a.dtype() &&
      std::ranges::equal(va->shape(), g.shape_span()) && std::ranges::equal(va->strides(), g.strides_span()))
    return true;
  if (direct_assign_view(a, g, va, value)) return true;
  const Shape shape(g.shape, g.shape + g.ndim);
  if (va && va->ndim() > g.ndim) return false;
  if (va) {  // broadcastable to the view's shape
    const int off = g.ndim - va->ndim();
    for (int d = 0; d < va->ndim(); ++d)
      if (va->shape()[d] != 1 && va->shape()[d] != shape[off + d]) return false;
  }
  ndarray view = a.with_geometry(g.offset, a.dtype(), shape, Strides(g.strides, g.strides + g.ndim));
  ndarray v = setitem_value(value, a.dtype());
  assign_array(view, v.shape() == shape ? v : broadcast_to(v, shape));
  report_fp("cast");
  return true;
}

PyObject* traced_getitem(PyObject* self, PyObject* key);

PyObject* fast_getitem(PyObject* self, PyObject* key) {
  return guarded([&]() -> PyObject* {
    PyArray* a = array_ptr(self);
    if (a && !a->is_traced() && a->ndim() >= 1) {
      if (std::byte* p = element_ptr(*a, key)) return numpy_scalar(a->dtype(), p).release().ptr();
      if (a->ndim() >= 2 || PyTuple_CheckExact(key)) {
        if (py::object v = fast_view(self, *a, key)) return v.release().ptr();
      } else if (PySlice_Check(key)) {
        Py_ssize_t start, stop, step;
        if (!unpack_plain_slice(key, &start, &stop, &step) && PySlice_Unpack(key, &start, &stop, &step) < 0)
          return nullptr;
        const Py_ssize_t len = PySlice_AdjustIndices(static_cast<Py_ssize_t>(a->shape()[0]), &start, &stop, step);
        const int64_t offset = a->offset() + (len > 0 ? start * a->strides()[0] : 0);
        const int64_t shape[1] = {len};
        // A huge step selects at most one element, and the product may not fit: it wraps as
        // NumPy's does (its stride is then never used), without signed-overflow UB.
        int64_t strides[1];
        __builtin_mul_overflow(a->strides()[0], static_cast<int64_t>(step), &strides[0]);
        // A view: its base is self's base, or self when self owns its memory (as wrap()).
        py::object base = a->base.is_none() ? py::reinterpret_borrow<py::object>(self) : a->base;
        return finalize_like(new_view_object(*a, offset, shape, strides, std::move(base)), self).release().ptr();
      }
    }
    if (tracer::current()) return traced_getitem(self, key);  // Note [subscripts while tracing]
    return getitem(py::reinterpret_borrow<py::object>(self), key).release().ptr();
  });
}

// Note [traced element reads in C++]
// While tracing, an element read with int keys of a traced array is a copy marked as a
// NumPy scalar (getitem below gives that), or a _ScalarRMW when the read is the load of an
// augmented subscript assignment (`a[i, j] -= v`; python/npc/compiler/_capture.py, Note
// [traced scalar elements]), which the caller's instruction tells. A scalar loop does that
// once per element, so it is done here: plain ints (one per dimension) into a traced npc
// array from the user's code; the augmented-assignment sites and whether the code is npc's
// or NumPy's own come from the capture layer's _code_sites, asked once per code object (the
// code objects stay referenced: their addresses are the keys). Anything else (NumPy integer
// keys, internal callers) declines (NotImplemented).
//
// Note [subscripts while tracing]
// Subscripts of npc arrays while tracing need the capture layer only for some keys: element
// reads (above), boolean masks in `a[mask] op= v` (Note [masked read-modify-write] in
// _capture.py), NumPy integer keys, and stores of a masked read-modify-write's result. The
// type's C slots (fast_getitem, fast_setitem) take those cases to the capture layer's Python
// hooks when the calling thread traces (tracer::current()), and everything else (ints,
// slices, None, Ellipsis and tuples of them) straight to the C++ subscript, as the Python
// hooks would have. ndarray.__getitem__/__setitem__ are never replaced: replacing a dunder
// swaps the type's C slots for CPython's generic ones (a lookup and a Python call per
// subscript: a fifth of a row loop's tracing), and eager code after a compile would keep
// them. The hooks run after the eager fast paths (which never take traced arrays), so eager
// subscripts pay nothing; the slow path pays one thread-local read.
struct ElementReadHooks {
  py::object code_sites, scalar_rmw;
  py::object getitem, setitem;  // Note [subscripts while tracing]
  PyTypeObject* masked_result = nullptr;  // the values setitem takes
  py::object keep_type;  // holds masked_result
  struct Sites {
    std::vector<int> offsets;  // sorted
    bool internal = false;
  };
  std::unordered_map<PyCodeObject*, Sites> by_code;
};
ElementReadHooks* g_element_reads = nullptr;

// `caller`: the frame of the code that subscripts (borrowed).
PyObject* traced_element_read(PyObject* self, PyObject* key, PyFrameObject* caller) {
  PyArray* a = array_ptr(self);
  if (!g_element_reads || !a || !a->is_traced() || !tracer::current()) Py_RETURN_NOTIMPLEMENTED;
  Py_ssize_t n = 1;
  if (PyTuple_CheckExact(key)) {
    n = PyTuple_GET_SIZE(key);
    for (Py_ssize_t i = 0; i < n; ++i)
      if (!PyLong_CheckExact(PyTuple_GET_ITEM(key, i))) Py_RETURN_NOTIMPLEMENTED;
  } else if (!PyLong_CheckExact(key)) {
    Py_RETURN_NOTIMPLEMENTED;
  }
  if (n != a->ndim()) Py_RETURN_NOTIMPLEMENTED;
  if (!caller) Py_RETURN_NOTIMPLEMENTED;
  PyCodeObject* code = PyFrame_GetCode(caller);
  const int lasti = PyFrame_GetLasti(caller);
  auto it = g_element_reads->by_code.find(code);
  if (it == g_element_reads->by_code.end()) {
    PyObject* entry = PyObject_CallOneArg(g_element_reads->code_sites.ptr(), reinterpret_cast<PyObject*>(code));
    if (!entry) {
      Py_DECREF(code);
      return nullptr;
    }
    ElementReadHooks::Sites sites;
    sites.internal = PyObject_IsTrue(PyTuple_GET_ITEM(entry, 2)) == 1;
    PyObject* iter = PyObject_GetIter(PyTuple_GET_ITEM(entry, 1));
    while (PyObject* o = iter ? PyIter_Next(iter) : nullptr) {
      sites.offsets.push_back(static_cast<int>(PyLong_AsLong(o)));
      Py_DECREF(o);
    }
    Py_XDECREF(iter);
    Py_DECREF(entry);
    if (PyErr_Occurred()) {
      Py_DECREF(code);
      return nullptr;
    }
    std::sort(sites.offsets.begin(), sites.offsets.end());
    it = g_element_reads->by_code.emplace(code, std::move(sites)).first;  // keeps the reference
  } else {
    Py_DECREF(code);
  }
  if (it->second.internal) Py_RETURN_NOTIMPLEMENTED;
  return guarded([&]() -> PyObject* {
    py::object r = getitem(py::reinterpret_borrow<py::object>(self), key);  // a marked copy
    if (std::binary_search(it->second.offsets.begin(), it->second.offsets.end(), lasti))
      return g_element_reads->scalar_rmw(r).release().ptr();
    return r.release().ptr();
  });
}

// An int, slice, None or Ellipsis: a key whose subscript the capture layer leaves alone.
bool plain_key_item(PyObject* k) {
  return PyLong_CheckExact(k) || PySlice_Check(k) || k == Py_None || k == Py_Ellipsis;
}

bool plain_key(PyObject* key) {
  if (!PyTuple_CheckExact(key)) return plain_key_item(key);
  for (Py_ssize_t i = 0, n = PyTuple_GET_SIZE(key); i < n; ++i)
    if (!plain_key_item(PyTuple_GET_ITEM(key, i))) return false;
  return true;
}

// self[key] while this thread traces (Note [subscripts while tracing]).
PyObject* traced_getitem(PyObject* self, PyObject* key) {
  if (!g_element_reads) return getitem(py::reinterpret_borrow<py::object>(self), key).release().ptr();
  if (PyLong_CheckExact(key) || PyTuple_CheckExact(key)) {
    PyObject* r = traced_element_read(self, key, PyEval_GetFrame());
    if (r != Py_NotImplemented) return r;
    Py_DECREF(r);
  }
  if (!plain_key(key))
    return PyObject_CallFunctionObjArgs(g_element_reads->getitem.ptr(), self, key, nullptr);
  return getitem(py::reinterpret_borrow<py::object>(self), key).release().ptr();
}

// Writes `value` (a Python float, int or complex, or a NumPy scalar of dtype `dt`) to `p` as
// an element of dtype `dt` where that needs no cast that could warn or raise (float64, int64
// and complex128 arrays); false otherwise, with nothing written.
bool exact_scalar_bytes(DType dt, PyObject* value, std::byte* p) {
  int overflow = 0;
  if (!PyFloat_CheckExact(value) && !PyLong_CheckExact(value) && !PyComplex_CheckExact(value)) {
    // A NumPy scalar of the array's own dtype is stored as it is (no cast, nothing to warn).
    DType t;
    const void* v = numpy_scalar_data(value, &t);
    if (!v || t != dt || t == DType::Bool) return false;
    std::memcpy(p, v, itemsize(t));
    return true;
  }
  switch (dt) {
    case DType::Float64:
      if (PyFloat_CheckExact(value)) {
        const double v = PyFloat_AS_DOUBLE(value);
        std::memcpy(p, &v, sizeof v);
        return true;
      }
      if (PyLong_CheckExact(value)) {
        long long iv = PyLong_AsLongLongAndOverflow(value, &overflow);
        if (overflow) return false;
        const auto v = static_cast<double>(iv);
        std::memcpy(p, &v, sizeof v);
        return true;
      }
      return false;
    case DType::Int64:
      if (PyLong_CheckExact(value)) {
        const long long v = PyLong_AsLongLongAndOverflow(value, &overflow);
        if (overflow) return false;
        const auto v64 = static_cast<int64_t>(v);
        std::memcpy(p, &v64, sizeof v64);
        return true;
      }
      return false;
    case DType::Complex128:
      if (PyComplex_CheckExact(value) || PyFloat_CheckExact(value)) {
        const Py_complex c = PyComplex_AsCComplex(value);
        const double v[2] = {c.real, c.imag};
        std::memcpy(p, v, sizeof v);
        return true;
      }
      return false;
    default:
      return false;
  }
}

bool fast_store(PyArray& a, PyObject* key, PyObject* value) {
  if (!a.writeable() || a.warn_on_write || a.is_traced()) return false;
  std::byte* p = element_ptr(a, key);
  if (!p) return false;
  return exact_scalar_bytes(a.dtype(), value, p);
}

int fast_setitem(PyObject* self, PyObject* key, PyObject* value) {
  if (!value) {
    PyErr_SetString(PyExc_ValueError, "cannot delete array elements");
    return -1;
  }
  PyObject* r = guarded([&]() -> PyObject* {
    PyArray* a = array_ptr(self);
    if (a && fast_store(*a, key, value)) return Py_NewRef(Py_None);  // never a 0-d array
    // Note [writes into scalar results] (a scalar result that a graph break realized is
    // concrete, and would take the view path below)
    if (a && a->ndim() == 0 && written_scalar_result(*a)) raise_scalar_item_assignment(a->dtype());
    if (Py_TYPE(value) == (g_element_reads ? g_element_reads->masked_result : nullptr) && tracer::current())
      return PyObject_CallFunctionObjArgs(g_element_reads->setitem.ptr(), self, key, value, nullptr);
    if (!(a && a->writeable() && !a->warn_on_write && !a->is_traced() && fast_assign_view(*a, key, value)))
      setitem(py::reinterpret_borrow<py::object>(self), key, value);
    return Py_NewRef(Py_None);
  });
  if (!r) return -1;
  Py_DECREF(r);
  return 0;
}

PyObject* fast_sq_item(PyObject* self, Py_ssize_t i) {
  PyObject* key = PyLong_FromSsize_t(i);
  if (!key) return nullptr;
  PyObject* r = fast_getitem(self, key);
  Py_DECREF(key);
  return r;
}
}  // namespace

void install_fast_indexing(PyTypeObject* type) {
  type->tp_as_mapping->mp_subscript = fast_getitem;
  type->tp_as_mapping->mp_ass_subscript = fast_setitem;
  type->tp_as_sequence->sq_item = fast_sq_item;
}

void bind_indexing(py::module_& m) {
  auto cls = py::reinterpret_borrow<py::class_<PyArray>>(m.attr("ndarray"));
  cls.def("__getitem__", &getitem, "numpy.ndarray.__getitem__: views for basic indices, copies for index arrays.");
  cls.def("__setitem__", &setitem, "numpy.ndarray.__setitem__: broadcasting, unsafe casting, overlap-safe.");

  m.def("_nonzero", [](const PyArray& a) {
    py::tuple t(a.ndim());
    auto r = nonzero(a);
    for (size_t i = 0; i < r.size(); ++i) t[i] = wrap(std::move(r[i]));
    return t;
  });
  m.def("_count_nonzero", [](const PyArray& a) { return count_nonzero(a); });
  m.def("_take", [](const PyArray& a, const PyArray& ind, py::handle axis, const std::string& mode) {
    return wrap(take(a, ind, opt_axis(axis), clip_mode(mode)));
  });
  m.def("_put", [](PyArray& a, const PyArray& ind, const PyArray& vals, const std::string& mode) {
    put(a, ind, vals, clip_mode(mode));
  });
  m.def("_compress", [](const PyArray& c, const PyArray& a, py::handle axis) {
    return wrap(compress(c, a, opt_axis(axis)));
  });
  // Note [shape dispatch]
  // The functions of python/npc/_shape.py and _indexing.py reach C++ through one entry point,
  // _core._shape_op(name, *args), keyed by name: one binding instead of one per function
  // keeps the extension small and its build fast. Python normalises the arguments (axes as
  // ints or lists, arrays as npc arrays, dtypes as codes) before the call.
  m.def("_shape_op", [](const std::string& op, py::args args) -> py::object {
    using Fn = py::object (*)(py::tuple&);
    static const std::unordered_map<std::string, Fn> table = {
        {"squeeze", +[](py::tuple& x) -> py::object {
           std::optional<std::vector<int64_t>> ax;
           if (!x[2].is_none()) ax = index_list(x[2]);
           return wrap(squeeze(arr(x[1]), ax), x[1]);
         }},
        {"expand_dims", +[](py::tuple& x) -> py::object { return wrap(expand_dims(arr(x[1]), index_list(x[2])), x[1]); }},
        {"swapaxes", +[](py::tuple& x) -> py::object { return wrap(swapaxes(arr(x[1]), index_arg(x[2]), index_arg(x[3])), x[1]); }},
        {"moveaxis", +[](py::tuple& x) -> py::object {
           return wrap(moveaxis(arr(x[1]), index_list(x[2]), index_list(x[3])), x[1]);
         }},
        {"flip", +[](py::tuple& x) -> py::object {
           std::optional<std::vector<int64_t>> ax;
           if (!x[2].is_none()) ax = index_list(x[2]);
           return wrap(flip(arr(x[1]), ax), x[1]);
         }},
        {"diagonal", +[](py::tuple& x) -> py::object {
           return wrap(diagonal(arr(x[1]), index_arg(x[2]), index_arg(x[3]), index_arg(x[4])), x[1]);
         }},
        {"ravel", +[](py::tuple& x) -> py::object { return wrap(ravel(arr(x[1]), order_from_name(x[2].cast<std::string>())), x[1]); }},
        {"concatenate", +[](py::tuple& x) -> py::object {
           std::vector<ndarray> in = arrays(x[1]);
           std::optional<DType> dt;
           if (x[3].cast<int>() >= 0) dt = static_cast<DType>(x[3].cast<int>());
           if (!x[5].is_none()) {
             ndarray o = arr(x[5]);
             concatenate(in, opt_axis(x[2]), dt, casting_from_name(x[4].cast<std::string>()), &o);
             return py::reinterpret_borrow<py::object>(x[5]);
           }
           return wrap(concatenate(in, opt_axis(x[2]), dt, casting_from_name(x[4].cast<std::string>())));
         }},
        {"stack", +[](py::tuple& x) -> py::object {
           std::vector<ndarray> in = arrays(x[1]);
           std::optional<DType> dt;
           if (x[3].cast<int>() >= 0) dt = static_cast<DType>(x[3].cast<int>());
           if (!x[5].is_none()) {
             ndarray o = arr(x[5]);
             stack(in, index_arg(x[2]), dt, casting_from_name(x[4].cast<std::string>()), &o);
             return py::reinterpret_borrow<py::object>(x[5]);
           }
           return wrap(stack(in, index_arg(x[2]), dt, casting_from_name(x[4].cast<std::string>())));
         }},
        {"repeat", +[](py::tuple& x) -> py::object { return wrap(repeat(arr(x[1]), arr(x[2]), opt_axis(x[3]))); }},
        {"roll", +[](py::tuple& x) -> py::object {
           return wrap(roll(arr(x[1]), index_list(x[2]), index_list(x[3])));
         }},
        {"tril", +[](py::tuple& x) -> py::object { return wrap(tril(arr(x[1]), index_arg(x[2]))); }},
        {"triu", +[](py::tuple& x) -> py::object { return wrap(triu(arr(x[1]), index_arg(x[2]))); }},
        {"broadcast_to", +[](py::tuple& x) -> py::object { return wrap(broadcast_to(arr(x[1]), to_shape(x[2])), x[1]); }},
        {"broadcast_shapes", +[](py::tuple& x) -> py::object {
           std::vector<Shape> shapes;
           for (auto s : x[1]) shapes.push_back(to_shape(s));
           Shape r;
           try {
             r = broadcast_shapes(shapes);
           } catch (const ValueError&) {
             throw ValueError(broadcast_shapes_message(shapes));
           }
           py::tuple t(r.size());
           for (size_t i = 0; i < r.size(); ++i) t[i] = py::int_(r[i]);
           return py::object(t);
         }},
        {"sort", +[](py::tuple& x) -> py::object {
           return wrap(sort(arr(x[1]), opt_axis(x[2]), x.size() > 3 && x[3].cast<bool>()));
         }},
        {"argsort", +[](py::tuple& x) -> py::object {
           return wrap(argsort(arr(x[1]), opt_axis(x[2]), x.size() > 3 && x[3].cast<bool>()));
         }},
        {"partition", +[](py::tuple& x) -> py::object {
           return wrap(partition(arr(x[1]), index_list(x[2]), opt_axis(x[3])));
         }},
        {"argpartition", +[](py::tuple& x) -> py::object {
           return wrap(argpartition(arr(x[1]), index_list(x[2]), opt_axis(x[3])));
         }},
        {"lexsort", +[](py::tuple& x) -> py::object { return wrap(lexsort(arrays(x[1]), index_arg(x[2]))); }},
        {"searchsorted", +[](py::tuple& x) -> py::object {
           std::optional<ndarray> sorter;
           if (!x[4].is_none()) sorter = arr(x[4]);
           return wrap(searchsorted(arr(x[1]), arr(x[2]), x[3].cast<bool>(), sorter));
         }},
        {"unique", +[](py::tuple& x) -> py::object {
           UniqueResult u = unique(arr(x[1]), x[2].cast<bool>());
           return py::object(py::make_tuple(wrap(u.values), wrap(u.index), wrap(u.inverse), wrap(u.counts)));
         }},
        {"isin", +[](py::tuple& x) -> py::object { return wrap(isin(arr(x[1]), arr(x[2]), x[3].cast<bool>())); }},
        {"bincount", +[](py::tuple& x) -> py::object {
           std::optional<ndarray> w;
           if (!x[2].is_none()) w = arr(x[2]);
           return wrap(bincount(arr(x[1]), w, index_arg(x[3])));
         }},
        {"histogram", +[](py::tuple& x) -> py::object {
           std::optional<ndarray> w;
           if (!x[3].is_none()) w = arr(x[3]);
           const int64_t block = x.size() > 5 ? index_arg(x[5]) : 0;
           return wrap(histogram_counts(arrays(x[1]), arrays(x[2]), w, x[4].cast<bool>(), block));
         }},
        {"monotonic", +[](py::tuple& x) -> py::object { return py::int_(monotonic(arr(x[1]))); }},
        {"value_range", +[](py::tuple& x) -> py::object {
           auto [lo, hi] = value_range(arr(x[1]));
           return py::make_tuple(lo, hi);
         }},
        {"assign", +[](py::tuple& x) -> py::object {
           assign_array(arr(x[1]), arr(x[2]));
           return py::object(py::none());
         }},
    };
    auto it = table.find(op);
    if (it == table.end()) throw ValueError("unknown shape op '" + op + "'");
    py::tuple full(args.size() + 1);
    full[0] = py::str(op);
    for (size_t i = 0; i < args.size(); ++i) full[i + 1] = args[i];
    return it->second(full);
  });
  m.def("_concatenate_fast", [](py::handle arrays, py::handle axis) -> py::object {
    // numpy.concatenate(arrays, axis) without out/dtype/casting for a list or tuple of npc
    // arrays; None for anything else (python/npc/_shape.py then takes the general path).
    PyObject* seq = arrays.ptr();
    if (!PyList_CheckExact(seq) && !PyTuple_CheckExact(seq)) return py::none();
    std::optional<int64_t> ax;
    if (!axis.is_none()) {
      if (!PyLong_CheckExact(axis.ptr())) return py::none();
      ax = index_arg(axis);
    }
    const Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
    std::vector<ndarray> in;
    in.reserve(static_cast<size_t>(n));
    for (Py_ssize_t i = 0; i < n; ++i) {
      PyArray* a = array_ptr(PySequence_Fast_GET_ITEM(seq, i));
      if (!a) return py::none();
      in.push_back(*a);
    }
    return wrap(concatenate(in, ax, std::nullopt, Casting::SameKind));
  }, "numpy.concatenate for a list/tuple of npc arrays with default options; None otherwise.");
  m.def("_set_subscript_hooks", [](py::object code_sites, py::object scalar_rmw, py::object getitem_hook,
                                   py::object setitem_hook, py::object masked_result) {
    if (!PyType_Check(masked_result.ptr())) throw py::type_error("_set_subscript_hooks: masked_result must be a type");
    if (!g_element_reads) g_element_reads = new ElementReadHooks();  // lives as long as the module
    g_element_reads->code_sites = std::move(code_sites);
    g_element_reads->scalar_rmw = std::move(scalar_rmw);
    g_element_reads->getitem = std::move(getitem_hook);
    g_element_reads->setitem = std::move(setitem_hook);
    g_element_reads->masked_result = reinterpret_cast<PyTypeObject*>(masked_result.ptr());
    g_element_reads->keep_type = std::move(masked_result);
  }, "Note [subscripts while tracing]: the capture layer's _code_sites, _ScalarRMW, its subscript hooks "
     "and the type of a masked read-modify-write's result.");
  m.def("_plain_getitem", [](py::object self, py::handle key) { return getitem(self, key); },
        "self[key] without the tracing hooks (Note [subscripts while tracing]).");
  m.def("_plain_setitem", [](py::object self, py::handle key, py::handle value) { setitem(self, key, value); },
        "self[key] = value without the tracing hooks (Note [subscripts while tracing]).");
  m.def("_index", [](py::object self, py::handle key) {
    // a[key] as an array (never a scalar): used by functions that index internally.
    auto& a = self.cast<PyArray&>();
    return wrap(index(a, parse_key(key)), self);
  });
}

}  // namespace npc::py_bind
