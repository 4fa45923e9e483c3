// The 14 x 14 cast loops, instantiated from one template (Note [casts] in dispatch.hpp).
#include "core/cast.hpp"

#include <cstring>

#include "core/dispatch.hpp"

namespace npc::detail {
namespace {

template <class From, class To>
void cast_loop(const std::byte* src, int64_t ss, std::byte* dst, int64_t ds, int64_t n) {
  if constexpr (std::is_same_v<From, To>) {
    if (ss == static_cast<int64_t>(sizeof(To)) && ds == ss) {
      std::memmove(dst, src, static_cast<size_t>(n) * sizeof(To));
      return;
    }
  }
  if (ss == 0 && ds == static_cast<int64_t>(sizeof(To)) && n > 1) {
    // One value broadcast along the row (`a[1:-1] = 0.0`, fill): converted once, then stored
    // by a loop the compiler vectorises. A bool source is read as a byte (see below).
    To r;
    if constexpr (std::is_same_v<From, To>) {
      std::memcpy(&r, src, sizeof(To));  // the bytes as they are, as the copy below
    } else if constexpr (std::is_same_v<From, bool>) {
      r = convert<To>(static_cast<uint8_t>(src[0]) != 0);
    } else {
      From v;
      std::memcpy(&v, src, sizeof(From));
      r = convert<To>(v);
    }
    To* d = reinterpret_cast<To*>(dst);
    for (int64_t i = 0; i < n; ++i) d[i] = r;
    return;
  }
  if constexpr (std::is_same_v<From, bool> && !std::is_same_v<To, bool>) {
    // A bool array viewing other bytes (x.view(bool)) may hold any byte value; NumPy reads
    // every nonzero byte as True when casting, so bytes are read as bytes, never as bool.
    for (int64_t i = 0; i < n; ++i) {
      To r = convert<To>(static_cast<uint8_t>(src[i * ss]) != 0);
      std::memcpy(dst + i * ds, &r, sizeof(To));
    }
    return;
  }
  if (ss == static_cast<int64_t>(sizeof(From)) && ds == static_cast<int64_t>(sizeof(To))) {
    const From* s = reinterpret_cast<const From*>(src);
    To* d = reinterpret_cast<To*>(dst);
    for (int64_t i = 0; i < n; ++i) d[i] = convert<To>(s[i]);
    return;
  }
  for (int64_t i = 0; i < n; ++i) {
    From v;
    std::memcpy(&v, src + i * ss, sizeof(From));
    To r = convert<To>(v);
    std::memcpy(dst + i * ds, &r, sizeof(To));
  }
}

struct CastTable {
  CastFn fn[kNumDTypes][kNumDTypes];
  CastTable() {
    for (int a = 0; a < kNumDTypes; ++a)
      for (int b = 0; b < kNumDTypes; ++b)
        fn[a][b] = visit(static_cast<DType>(a), [&](auto fa) {
          return visit(static_cast<DType>(b), [&](auto fb) -> CastFn {
            return &cast_loop<typename decltype(fa)::type, typename decltype(fb)::type>;
          });
        });
  }
};

}  // namespace

std::string casting_name(Casting c) {
  switch (c) {
    case Casting::No: return "no";
    case Casting::Equiv: return "equiv";
    case Casting::Safe: return "safe";
    case Casting::SameKind: return "same_kind";
    default: return "unsafe";
  }
}

CastFn get_cast(DType from, DType to) {
  static const CastTable table;
  (void)itemsize(from);  // TypeError for a DType outside the enum
  (void)itemsize(to);
  return table.fn[static_cast<int>(from)][static_cast<int>(to)];
}

}  // namespace npc::detail
