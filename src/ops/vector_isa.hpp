// Instruction-set tags and GCC vector types for loops written once as templates over the
// instruction set and instantiated for each (Note [vector loops] in reduce_simd.cpp).
#pragma once

#if defined(__GNUC__)
#define NPC_SIMD_VECTORS 1
#else
#define NPC_SIMD_VECTORS 0
#endif

namespace npc::ops::simd {
#if NPC_SIMD_VECTORS

// The instruction sets, by vector width in bytes (SSE2 is x86-64's baseline).
struct Sse2 { static constexpr int kBytes = 16; };
struct Avx2 { static constexpr int kBytes = 32; };
struct Avx512 { static constexpr int kBytes = 64; };

// Vector of `bytes` bytes of T.
template <class T, int bytes>
struct Vec {
  typedef T type __attribute__((vector_size(bytes)));
};

#endif
}  // namespace npc::ops::simd
