//===- Numbers.cpp - Element encodings of the ipu21 simulator -------------===//
//
// The binary floating-point formats share one encoder: a format has E
// exponent bits, M mantissa bits and a bias of 2^(E-1) - 1. The IEEE-like
// ones (f32, f16, f8E5M2) reserve the top exponent for inf and NaN;
// f8E4M3FN ("finite, NaN") has no inf, uses the top exponent for numbers
// too and only S.1111.111 for NaN, so its largest value is 1.75 × 2^8 = 448.
//
// A double is rounded once, directly to the format (never through float),
// to nearest with ties to even, on the format's grid extended past its
// largest exponent; a result above the largest finite value overflows to
// inf (IEEE-like) or NaN (f8E4M3FN, as APFloat does for Float8E4M3FN).
//
//===----------------------------------------------------------------------===//
#include "Numbers.h"

#include "synpl/Target/IPU21/Simulator.h"

#include <cmath>
#include <cstdint>

namespace synpl::ipu21::sim {
namespace {

struct Format {
  int expBits, manBits;
  bool finiteOnly; // f8E4M3FN: no inf, only all-ones is NaN
};

constexpr Format kF32{8, 23, false}, kF16{5, 10, false}, kF8E5M2{5, 2, false},
    kF8E4M3FN{4, 3, true};

uint32_t encodeFloat(const Format &f, double v) {
  const int bias = (1 << (f.expBits - 1)) - 1;
  const uint32_t expAll = (1u << f.expBits) - 1, manAll = (1u << f.manBits) - 1;
  const uint32_t sign = std::signbit(v) ? 1u << (f.expBits + f.manBits) : 0u;
  const uint32_t nan = f.finiteOnly ? sign | (expAll << f.manBits) | manAll
                                    : sign | (expAll << f.manBits) | (1u << (f.manBits - 1));
  const uint32_t overflow = f.finiteOnly ? nan : sign | (expAll << f.manBits);
  if (std::isnan(v))
    return nan;
  double a = std::fabs(v);
  if (std::isinf(a))
    return overflow;
  if (a == 0)
    return sign;
  int e2 = 0;
  std::frexp(a, &e2); // a = frac × 2^e2, frac in [0.5, 1)
  const int exp = e2 - 1, minExp = 1 - bias;
  // The exponent of one unit in the last place at this exponent (subnormals
  // share the smallest normal exponent's).
  int quantum = (exp < minExp ? minExp : exp) - f.manBits;
  if (exp > bias + 2) // far beyond the largest finite value
    return overflow;
  double q = std::ldexp(a, -quantum); // < 2^(manBits+1): exact
  double lo = std::floor(q), frac = q - lo;
  uint64_t sig = static_cast<uint64_t>(lo);
  if (frac > 0.5 || (frac == 0.5 && (sig & 1)))
    ++sig;
  if (sig == (uint64_t(2) << f.manBits)) { // rounded up into the next binade
    sig >>= 1;
    ++quantum;
  }
  if (sig < (uint64_t(1) << f.manBits)) // subnormal (or zero)
    return sign | static_cast<uint32_t>(sig);
  int64_t expField = int64_t(quantum) + f.manBits + bias;
  uint32_t man = static_cast<uint32_t>(sig) & manAll;
  const int64_t top = int64_t(expAll);
  bool tooBig = f.finiteOnly ? (expField > top || (expField == top && man == manAll))
                             : expField >= top;
  if (tooBig)
    return overflow;
  return sign | (static_cast<uint32_t>(expField) << f.manBits) | man;
}

double decodeFloat(const Format &f, uint32_t bits) {
  const int bias = (1 << (f.expBits - 1)) - 1;
  const uint32_t expAll = (1u << f.expBits) - 1, manAll = (1u << f.manBits) - 1;
  bool neg = (bits >> (f.expBits + f.manBits)) & 1;
  uint32_t exp = (bits >> f.manBits) & expAll, man = bits & manAll;
  double v;
  if (exp == expAll && (!f.finiteOnly || man == manAll))
    v = (f.finiteOnly || man) ? std::nan("") : INFINITY;
  else if (exp == 0)
    v = std::ldexp(double(man), 1 - bias - f.manBits);
  else
    v = std::ldexp(double(man | (1u << f.manBits)), int(exp) - bias - f.manBits);
  return neg ? -v : v;
}

// Truncation toward zero with saturation; NaN becomes 0.
int64_t toInt(double v, int64_t lo, int64_t hi) {
  if (std::isnan(v))
    return 0;
  if (v <= double(lo))
    return lo;
  if (v >= double(hi))
    return hi;
  return static_cast<int64_t>(std::trunc(v));
}

uint32_t load(const uint8_t *p, int bytes) {
  uint32_t v = 0;
  for (int i = 0; i < bytes; ++i)
    v |= uint32_t(p[i]) << (8 * i);
  return v;
}

void store(uint8_t *p, uint32_t v, int bytes) {
  for (int i = 0; i < bytes; ++i)
    p[i] = uint8_t(v >> (8 * i));
}

} // namespace

double decodeElem(ElemType t, const uint8_t *p) {
  switch (t) {
  case ElemType::F32:
    return decodeFloat(kF32, load(p, 4));
  case ElemType::F16:
    return decodeFloat(kF16, load(p, 2));
  case ElemType::F8E4M3:
    return decodeFloat(kF8E4M3FN, p[0]);
  case ElemType::F8E5M2:
    return decodeFloat(kF8E5M2, p[0]);
  case ElemType::I32:
    return double(int32_t(load(p, 4)));
  case ElemType::U8:
    return double(p[0]);
  }
  return 0;
}

void encodeElem(ElemType t, double value, uint8_t *p) {
  switch (t) {
  case ElemType::F32:
    return store(p, encodeFloat(kF32, value), 4);
  case ElemType::F16:
    return store(p, encodeFloat(kF16, value), 2);
  case ElemType::F8E4M3:
    p[0] = uint8_t(encodeFloat(kF8E4M3FN, value));
    return;
  case ElemType::F8E5M2:
    p[0] = uint8_t(encodeFloat(kF8E5M2, value));
    return;
  case ElemType::I32:
    return store(p, uint32_t(int32_t(toInt(value, INT32_MIN, INT32_MAX))), 4);
  case ElemType::U8:
    p[0] = uint8_t(toInt(value, 0, 255));
    return;
  }
}

float roundToHalf(float value) {
  return float(decodeFloat(kF16, encodeFloat(kF16, value)));
}

double roundToElem(ElemType t, double value) {
  uint8_t bytes[8] = {};
  encodeElem(t, value, bytes);
  return decodeElem(t, bytes);
}

} // namespace synpl::ipu21::sim

