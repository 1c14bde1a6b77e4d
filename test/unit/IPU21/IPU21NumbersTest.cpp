// The ipu21 simulator's element types: every f16 and f8 value survives a
// round trip, rounding is to nearest-even (checked against the compiler's
// own _Float16 and float conversions), and overflow, subnormals and the
// integer types behave as roundToElem documents.
#include "Numbers.h"

#include "synpl/Target/IPU21/Simulator.h"

#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>

using namespace synpl::ipu21::sim;

namespace {

double decode16(uint16_t bits) {
  uint8_t b[2] = {uint8_t(bits), uint8_t(bits >> 8)};
  return decodeElem(ElemType::F16, b);
}
uint16_t encode16(double v) {
  uint8_t b[2];
  encodeElem(ElemType::F16, v, b);
  return uint16_t(b[0] | (b[1] << 8));
}
double decode8(ElemType t, uint8_t bits) { return decodeElem(t, &bits); }
uint8_t encode8(ElemType t, double v) {
  uint8_t b;
  encodeElem(t, v, &b);
  return b;
}

} // namespace

TEST_CASE("ipu21 f16: every value round-trips and rounding matches _Float16") {
  for (uint32_t bits = 0; bits < 0x10000; ++bits) {
    double v = decode16(uint16_t(bits));
    if (std::isnan(v)) {
      CHECK(std::isnan(decode16(encode16(v))));
      continue;
    }
    REQUIRE(encode16(v) == bits);
    REQUIRE(double(_Float16(v)) == v);
  }
  // Random doubles across f16's range and beyond, including the subnormals.
  std::mt19937_64 rng(11);
  std::uniform_real_distribution<double> mant(1.0, 2.0);
  std::uniform_int_distribution<int> exp(-30, 18);
  for (int i = 0; i < 200000; ++i) {
    double v = std::ldexp(mant(rng), exp(rng)) * (i % 2 ? -1 : 1);
    REQUIRE(roundToElem(ElemType::F16, v) == double(_Float16(v)));
  }
  CHECK(roundToElem(ElemType::F16, 1.0 / 3.0) == 0.333251953125);
  CHECK(roundToElem(ElemType::F16, 65504) == 65504);
  CHECK(roundToElem(ElemType::F16, 65519.99) == 65504);
  CHECK(std::isinf(roundToElem(ElemType::F16, 65520)));
  CHECK(roundToElem(ElemType::F16, std::ldexp(1.0, -24)) == std::ldexp(1.0, -24));
  CHECK(roundToElem(ElemType::F16, std::ldexp(1.0, -25)) == 0);               // tie to even: 0
  CHECK(roundToElem(ElemType::F16, std::ldexp(3.0, -26)) == std::ldexp(1.0, -24));
  CHECK(std::signbit(roundToElem(ElemType::F16, -0.0)));
  CHECK(roundToElem(ElemType::F16, 1 + std::ldexp(1.0, -11)) == 1.0);          // tie to even
  CHECK(roundToElem(ElemType::F16, 1 + 3 * std::ldexp(1.0, -11)) == 1 + std::ldexp(1.0, -9));
}

TEST_CASE("ipu21 f32 rounding matches the float conversion") {
  std::mt19937_64 rng(5);
  std::uniform_real_distribution<double> mant(1.0, 2.0);
  std::uniform_int_distribution<int> exp(-160, 130);
  for (int i = 0; i < 200000; ++i) {
    double v = std::ldexp(mant(rng), exp(rng)) * (i % 2 ? -1 : 1);
    // At or past FLT_MAX + half an ulp a float conversion overflows.
    bool over = std::fabs(v) >= std::ldexp(1.0, 128) - std::ldexp(1.0, 103);
    double expect = over ? std::copysign(INFINITY, v) : double(float(v));
    REQUIRE(roundToElem(ElemType::F32, v) == expect);
  }
  CHECK(std::isinf(roundToElem(ElemType::F32, 1e300)));
  CHECK(std::isnan(roundToElem(ElemType::F32, NAN)));
}

TEST_CASE("ipu21 f8E4M3FN and f8E5M2") {
  for (ElemType t : {ElemType::F8E4M3, ElemType::F8E5M2})
    for (uint32_t bits = 0; bits < 0x100; ++bits) {
      double v = decode8(t, uint8_t(bits));
      if (std::isnan(v))
        CHECK(std::isnan(decode8(t, encode8(t, v))));
      else
        CHECK(encode8(t, v) == bits);
    }
  // E4M3FN: no inf; 448 is the largest value; S.1111.111 is NaN.
  const ElemType e4 = ElemType::F8E4M3;
  CHECK(decode8(e4, 0x7E) == 448);
  CHECK(std::isnan(decode8(e4, 0x7F)));
  CHECK(decode8(e4, 0x78) == 256); // exponent all ones is a number
  CHECK(roundToElem(e4, 460) == 448);
  CHECK(roundToElem(e4, 464) == 448); // the tie goes to the even 448
  CHECK(std::isnan(roundToElem(e4, 465)));
  CHECK(std::isnan(roundToElem(e4, INFINITY)));
  CHECK(roundToElem(e4, std::ldexp(1.0, -9)) == std::ldexp(1.0, -9)); // smallest subnormal
  CHECK(roundToElem(e4, 0.3) == 0.3125);
  CHECK(roundToElem(e4, -1.0625) == -1.0); // tie to even
  // E5M2: IEEE-like, 57344 the largest finite value.
  const ElemType e5 = ElemType::F8E5M2;
  CHECK(roundToElem(e5, 57344) == 57344);
  CHECK(roundToElem(e5, 61439) == 57344);
  CHECK(std::isinf(roundToElem(e5, 61440)));
  CHECK(roundToElem(e5, std::ldexp(1.0, -16)) == std::ldexp(1.0, -16));
}

TEST_CASE("ipu21 integer elements truncate and saturate") {
  CHECK(roundToElem(ElemType::I32, 3.7) == 3);
  CHECK(roundToElem(ElemType::I32, -3.7) == -3);
  CHECK(roundToElem(ElemType::I32, 1e20) == 2147483647.0);
  CHECK(roundToElem(ElemType::I32, -1e20) == -2147483648.0);
  CHECK(roundToElem(ElemType::I32, NAN) == 0);
  CHECK(roundToElem(ElemType::I32, -123456789) == -123456789);
  CHECK(roundToElem(ElemType::U8, 300) == 255);
  CHECK(roundToElem(ElemType::U8, -5) == 0);
  CHECK(roundToElem(ElemType::U8, 17.9) == 17);
  CHECK(elemBytes(ElemType::F16) == 2);
  CHECK(std::string(elemName(ElemType::F8E4M3)) == "f8E4M3FN");
}
