#pragma once
// Internal: typed cast loops (NumPy's astype semantics), one per (from, to) dtype pair.
#include <cstddef>
#include <cstdint>
#include <string>

#include "npc/dtype.hpp"

namespace npc::detail {
/// Copies n elements from src (stride ss bytes) to dst (stride ds bytes), converting.
using CastFn = void (*)(const std::byte* src, int64_t ss, std::byte* dst, int64_t ds, int64_t n);
CastFn get_cast(DType from, DType to);
/// NumPy's spelling of a casting level ("same_kind"), for error messages.
std::string casting_name(Casting c);
}  // namespace npc::detail
