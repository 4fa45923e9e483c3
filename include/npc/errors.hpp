#pragma once
/// \file errors.hpp
/// Exceptions with NumPy's meaning; the Python bindings raise the Python exception of the same name.
#include <stdexcept>
#include <cstdint>
#include <string>
#include <vector>

namespace npc {
/// Raised where NumPy raises ValueError (bad shapes, ragged input, negative dimensions).
struct ValueError : std::runtime_error { using std::runtime_error::runtime_error; };
/// Raised where NumPy raises TypeError (unknown dtype, impossible cast).
struct TypeError : std::runtime_error { using std::runtime_error::runtime_error; };
/// Raised where NumPy raises IndexError.
struct IndexError : std::runtime_error { using std::runtime_error::runtime_error; };
/// Raised where NumPy raises numpy.exceptions.AxisError (a ValueError and IndexError).
struct AxisError : std::runtime_error { using std::runtime_error::runtime_error; };
/// Raised where NumPy raises OverflowError (Python int out of range for a dtype).
struct OverflowError : std::runtime_error { using std::runtime_error::runtime_error; };
/// Raised where NumPy raises MemoryError ("Unable to allocate ...").
struct MemoryError : std::runtime_error { using std::runtime_error::runtime_error; };
/// An allocation for an array failed (NumPy's _ArrayMemoryError, a MemoryError subclass).
struct ArrayMemoryError : MemoryError {
  ArrayMemoryError(const std::string& what, std::vector<int64_t> shape, int dtype_code)
      : MemoryError(what), shape(std::move(shape)), dtype_code(dtype_code) {}
  std::vector<int64_t> shape;
  int dtype_code;
};
/// Raised where NumPy raises numpy._core._exceptions._UFuncOutputCastingError and friends.
struct CastingError : std::runtime_error { using std::runtime_error::runtime_error; };
/// Raised where NumPy raises FloatingPointError (numpy.errstate's "raise": "divide by zero
/// encountered in divide").
struct FloatingPointError : std::runtime_error { using std::runtime_error::runtime_error; };
/// Raised where numpy.linalg raises numpy.linalg.LinAlgError ("Singular matrix", "Last 2
/// dimensions of the array must be square", ...); the bindings raise numpy.linalg.LinAlgError.
struct LinAlgError : std::runtime_error { using std::runtime_error::runtime_error; };
}  // namespace npc
