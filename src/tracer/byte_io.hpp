#pragma once
// The byte level of npc's binary formats (Note [graph serialization] in graph_io.cpp, Note
// [plan serialization] in plan_io.cpp): little-endian fixed-width integers, Scalars bit for
// bit, a bounds-checked reader and the checksum of the trailers (Note [hashing bytes]).
#include <bit>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <string_view>

#include "core/hash.hpp"
#include "npc/errors.hpp"
#include "npc/ndarray.hpp"

namespace npc::ir::io {

constexpr uint64_t kFnvBasis = 0xcbf29ce484222325ull;
inline uint64_t fnv1a(uint64_t h, const void* p, size_t n) {
  const auto* b = static_cast<const unsigned char*>(p);
  for (size_t i = 0; i < n; ++i) {
    h ^= b[i];
    h *= 0x100000001b3ull;
  }
  return h;
}

// Every format ends with a trailer: the checksum of all the bytes before it. seal() writes
// it over the last 8 bytes of `s` (the serializers append a placeholder; tests re-seal bytes
// they changed, to reach the checks behind the checksum).
inline void seal(std::string& s) {
  const uint64_t h = hash64(s.data(), s.size() - 8);
  for (int i = 0; i < 8; ++i) s[s.size() - 8 + static_cast<size_t>(i)] = static_cast<char>((h >> (8 * i)) & 0xff);
}

// The hash of what gives the bytes their meaning in this build (graph_io.cpp: the op table's
// rows, the dtype names, enum sizes, node layout): every format stores it in its header.
uint64_t build_fingerprint();

class Writer {
 public:
  // `what` names the format in errors ("graph", "plan").
  explicit Writer(const char* what) : what_(what) {}
  std::string out;
  void u8(uint8_t v) { out.push_back(static_cast<char>(v)); }
  void u16(uint16_t v) { le(v, 2); }
  void u32(uint32_t v) { le(v, 4); }
  void i32(int32_t v) { le(static_cast<uint32_t>(v), 4); }
  void u64(uint64_t v) { le(v, 8); }
  void i64(int64_t v) { le(static_cast<uint64_t>(v), 8); }
  void f64(double v) { u64(std::bit_cast<uint64_t>(v)); }
  void count(size_t n) {
    if (n > std::numeric_limits<uint32_t>::max())
      throw ValueError(std::string(what_) + ": too many entries to serialize");
    u32(static_cast<uint32_t>(n));
  }
  // Every field of npc::Scalar exactly: u8 dtype, u8 bool, i64 i, u64 u, and the bit patterns
  // of f, c.real, c.imag (NaN payloads, -0.0, int64 min, uint64 max).
  void scalar(const npc::Scalar& v) {
    u8(static_cast<uint8_t>(v.dtype));
    u8(v.b ? 1 : 0);
    i64(v.i);
    u64(v.u);
    f64(v.f);
    f64(v.c.real());
    f64(v.c.imag());
  }
  static constexpr size_t kScalarSize = 2 + 5 * 8;

 private:
  void le(uint64_t v, int n) {
    for (int i = 0; i < n; ++i) out.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
  }
  const char* what_;
};

// Reads `bytes` up to `end`; anything past it, or a count the bytes left cannot hold, is a
// ValueError "<prefix>: ...": the reader never reads out of bounds nor sizes anything beyond
// the input.
class Reader {
 public:
  Reader(std::string_view bytes, size_t end, const char* prefix) : b_(bytes), end_(end), prefix_(prefix) {}
  uint8_t u8() { return static_cast<uint8_t>(le(1)); }
  uint16_t u16() { return static_cast<uint16_t>(le(2)); }
  uint32_t u32() { return static_cast<uint32_t>(le(4)); }
  int32_t i32() { return static_cast<int32_t>(u32()); }
  uint64_t u64() { return le(8); }
  int64_t i64() { return static_cast<int64_t>(u64()); }
  double f64() { return std::bit_cast<double>(u64()); }
  // A count of entries of at least `min_bytes` each: more than the bytes left can hold is
  // corrupt, so no vector is ever sized beyond the input.
  uint32_t count(size_t min_bytes, const char* what) {
    const uint32_t n = u32();
    if (n > (end_ - pos_) / min_bytes) corrupt(std::string("count of ") + what + " exceeds the data");
    return n;
  }
  npc::Scalar scalar() {
    npc::Scalar v;
    const uint8_t t = u8(), b = u8();
    if (t >= kNumDTypes) corrupt("scalar dtype " + std::to_string(t) + " out of range");
    if (b > 1) corrupt("scalar bool byte " + std::to_string(b));
    v.dtype = static_cast<DType>(t);
    v.b = b != 0;
    v.i = i64();
    v.u = u64();
    v.f = f64();
    const double re = f64(), im = f64();
    v.c = {re, im};
    return v;
  }
  // The next `n` bytes as they are.
  std::string_view bytes(size_t n) {
    need(n);
    std::string_view s = b_.substr(pos_, n);
    pos_ += n;
    return s;
  }
  size_t pos() const { return pos_; }
  size_t left() const { return end_ - pos_; }
  void skip(size_t n) {
    need(n);
    pos_ += n;
  }
  [[noreturn]] void corrupt(const std::string& why) const { throw ValueError(std::string(prefix_) + ": " + why); }

 private:
  void need(size_t n) const {
    if (end_ - pos_ < n) corrupt("truncated");
  }
  uint64_t le(int n) {
    need(static_cast<size_t>(n));
    uint64_t v = 0;
    for (int i = 0; i < n; ++i) v |= static_cast<uint64_t>(static_cast<uint8_t>(b_[pos_ + i])) << (8 * i);
    pos_ += static_cast<size_t>(n);
    return v;
  }
  std::string_view b_;
  size_t pos_ = 0, end_;
  const char* prefix_;
};

// Both formats: an 8-byte magic, a format version and the build fingerprint, then the body,
// then the trailer (seal()).
constexpr size_t kHeaderSize = 8 + 4 + 8;
constexpr size_t kTrailerSize = 8;

// A reader of `bytes`' body, past its header, once the header (magic, `version`, this
// build's fingerprint) and the trailer's checksum are checked. `prefix` names the format in
// errors ("npc graph bytes"), `kind` what the magic stands for ("graph").
inline Reader open_body(std::string_view bytes, const char (&magic)[8], uint32_t version, const char* prefix,
                        const char* kind) {
  const Reader whole(bytes, bytes.size(), prefix);
  if (bytes.size() < kHeaderSize + kTrailerSize) whole.corrupt("truncated");
  if (std::memcmp(bytes.data(), magic, sizeof(magic)) != 0) whole.corrupt(std::string("not a serialized npc ") + kind);
  const size_t body_end = bytes.size() - kTrailerSize;
  Reader r(bytes, body_end, prefix);
  r.skip(sizeof(magic));
  if (const uint32_t v = r.u32(); v != version)
    r.corrupt("format version " + std::to_string(v) + ", this npc reads version " + std::to_string(version));
  if (r.u64() != build_fingerprint()) r.corrupt("written by another build of npc (its op table or node layout differs)");
  Reader trailer(bytes.substr(body_end), kTrailerSize, prefix);
  if (trailer.u64() != hash64(bytes.data(), body_end)) r.corrupt("checksum mismatch (corrupted data)");
  return r;
}

}  // namespace npc::ir::io
