#pragma once
// The hash of byte strings for checksums and file names of npc's binary formats and disk
// cache (Note [hashing bytes]).
#include <cstdint>
#include <cstring>

namespace npc {

// Note [hashing bytes]
// Every entry of the disk cache is checksummed when read and written (Note [disk cache] in
// src/fusion/jit.cpp), graphs and plans carry a checksum of their own (Note [graph
// serialization]), and a lowered program's name hashes its graph (Note [lowered-program
// cache]); a loop's plan holds tens of megabytes of graphs, so a hash that reads one byte per
// multiply chain (FNV-1a: about 0.2 GB/s) was a visible part of loading one. This one reads
// 32 bytes per round into four independent 64-bit lanes (so the multiplies of one round
// overlap): a lane takes its word times an odd constant, rotates and multiplies by another
// (the round of the xxHash family, Yann Collet). The last partial block is zero-padded and the
// length is mixed into both results, so strings that differ only by trailing zeros differ.
// The two 64-bit results are folded from the lanes differently and finished with the
// MurmurHash3 finalizer; `lo` alone is the 64-bit checksum. Not a cryptographic hash: a
// checksum against damage, and a name whose clashes a reader resolves by comparing what the
// entry holds (the disk cache's trust rests on the directory's ownership, Note [cache trust]).
// tests/python/_serialization.py has the same function in Python (tests seal bytes they edit).
struct Hash128 {
  uint64_t lo, hi;
};

namespace hash_detail {
constexpr uint64_t kP1 = 0x9E3779B185EBCA87ull, kP2 = 0xC2B2AE3D27D4EB4Full, kP3 = 0x165667B19E3779F9ull,
                   kP4 = 0x85EBCA77C2B2AE63ull;
inline uint64_t rotl(uint64_t x, int r) { return (x << r) | (x >> (64 - r)); }
inline uint64_t round(uint64_t lane, uint64_t w) { return rotl(lane + w * kP2, 31) * kP1; }
inline uint64_t fmix(uint64_t h) {
  h ^= h >> 33;
  h *= 0xff51afd7ed558ccdull;
  h ^= h >> 33;
  h *= 0xc4ceb9fe1a85ec53ull;
  return h ^ (h >> 33);
}
inline void block(uint64_t (&v)[4], const unsigned char* p) {
  for (int k = 0; k < 4; ++k) {
    uint64_t w;
    std::memcpy(&w, p + 8 * k, 8);  // little-endian hosts only (as npc's formats)
    v[k] = round(v[k], w);
  }
}
}  // namespace hash_detail

inline Hash128 hash128(const void* data, size_t n, uint64_t seed = 0) {
  using namespace hash_detail;
  const auto* p = static_cast<const unsigned char*>(data);
  uint64_t v[4] = {seed + kP1, seed ^ kP2, seed + kP3, seed ^ kP4};
  size_t i = 0;
  for (; i + 32 <= n; i += 32) block(v, p + i);
  if (i < n) {
    unsigned char last[32] = {};
    std::memcpy(last, p + i, n - i);
    block(v, last);
  }
  const uint64_t len = static_cast<uint64_t>(n) * kP3;
  const uint64_t lo = v[0] + rotl(v[1], 7) + rotl(v[2], 12) + rotl(v[3], 18);
  const uint64_t hi = (v[0] ^ rotl(v[1], 23)) + (v[2] ^ rotl(v[3], 41));
  return {fmix(lo ^ len), fmix(hi + len + kP4)};
}

inline uint64_t hash64(const void* data, size_t n, uint64_t seed = 0) { return hash128(data, n, seed).lo; }

}  // namespace npc
