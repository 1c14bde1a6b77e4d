//===- CounterRng.h - The counter-based generator of l1.random --*- C++ -*-===//
//
// One definition of the random numbers a training program draws, shared by
// the reference interpreter (the semantics) and the L1 -> L0 lowering (which
// computes keys at compile time and emits the rounds as UOps).
//
// The generator is Widynski's "Squares" (2020): a counter-based generator of
// four rounds of squaring a 64-bit value and swapping its halves. It needs
// only 64-bit wrapping multiplication and addition plus the half swap, which
// is (x div 2^32) + (x mod 2^32) * 2^32 — all of them UOps the spec already
// has (MUL, ADD, MULACC, MOD, and the index DIV), so no kernel needs a
// bitwise instruction and every target computes the same bits. Its authors
// report that it passes BigCrush and PractRand; like every counter-based
// generator, draw `i` of stream `k` at step `t` is a pure function of
// (seed, k, t, i), so any element can be computed anywhere, in any order,
// and a resumed run draws what an uninterrupted one would.
//
// Element `i` (row-major) of `l1.random %t seed s stream k` is
//
//     bits = squares32(t * 2^32 + i, key(s, k))
//     u    = (bits >> 8) * 2^-24                 in [0, 1), 24 exact bits
//
// with t the counter operand's integer value (the update step) and
// i < 2^32. Keys follow the generator's rule: 16 hex digits, each half made
// of 8 distinct non-zero digits, so the key is never sparse; the digits come
// from SplitMix64 over (seed, stream).
//
//===----------------------------------------------------------------------===//
#ifndef SYNPL_SUPPORT_COUNTERRNG_H
#define SYNPL_SUPPORT_COUNTERRNG_H

#include <cstdint>

namespace synpl::rng {

/// Elements one draw may have: the element index fills the counter's low
/// 32 bits.
inline constexpr uint64_t kMaxElements = uint64_t(1) << 32;

/// SplitMix64's output function (Steele, Lea, Flood 2014).
constexpr uint64_t splitMix64(uint64_t &state) {
  uint64_t z = (state += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

/// The Squares key of stream `stream` under `seed`: each 32-bit half is 8
/// distinct hex digits from 1..15, drawn without replacement.
constexpr uint64_t squaresKey(uint64_t seed, uint64_t stream) {
  uint64_t state = seed * 0x2545f4914f6cdd1dull + stream;
  uint64_t key = 0;
  for (int half = 0; half < 2; ++half) {
    uint8_t digits[15] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15};
    for (int i = 0; i < 8; ++i) {
      // Partial Fisher-Yates: pick digit i from the 15 - i left.
      int j = i + int(splitMix64(state) % uint64_t(15 - i));
      uint8_t d = digits[j];
      digits[j] = digits[i];
      digits[i] = d;
      key = (key << 4) | d;
    }
  }
  return key;
}

/// The 64-bit halves swapped: (x >> 32) | (x << 32).
constexpr uint64_t swapHalves(uint64_t x) { return (x >> 32) | (x << 32); }

/// Squares32: four rounds, the upper 32 bits of the last square.
constexpr uint32_t squares32(uint64_t ctr, uint64_t key) {
  uint64_t x = ctr * key, y = x, z = y + key;
  x = swapHalves(x * x + y);
  x = swapHalves(x * x + z);
  x = swapHalves(x * x + y);
  return uint32_t((x * x + z) >> 32);
}

/// The counter of element `index` at step `step`.
constexpr uint64_t counter(uint64_t step, uint64_t index) { return (step << 32) + index; }

/// The uniform draw in [0, 1) of element `index` at step `step`.
constexpr float uniform(uint64_t step, uint64_t index, uint64_t key) {
  return float(squares32(counter(step, index), key) >> 8) * 0x1p-24f;
}

} // namespace synpl::rng

#endif // SYNPL_SUPPORT_COUNTERRNG_H
