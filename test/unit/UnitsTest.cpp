#include "synpl/Support/Units.h"

#include <catch2/catch.hpp>
#include <limits>

using namespace synpl;

TEST_CASE("byte sizes parse exactly in decimal and binary units", "[units]") {
  CHECK(parseByteSize("32GB") == 32'000'000'000ull);
  CHECK(parseByteSize("24GiB") == 24ull << 30);
  CHECK(parseByteSize("512") == 512u);
  CHECK(parseByteSize("1.5KB") == 1500u);
  CHECK(parseByteSize(" 2 MB ") == 2'000'000u);
}

TEST_CASE("malformed or overflowing sizes are rejected", "[units]") {
  CHECK_FALSE(parseByteSize("GB"));
  CHECK_FALSE(parseByteSize("12XB"));
  CHECK_FALSE(parseByteSize("1.0005KB")); // not a whole number of bytes
  CHECK_FALSE(parseByteSize("1."));
  CHECK_FALSE(parseByteSize("99999999999TB")); // past 2^64
  CHECK_FALSE(parseByteSize("-1GB"));
}

TEST_CASE("bandwidths need a per-second unit", "[units]") {
  CHECK(parseBandwidth("2GB/s") == 2'000'000'000u);
  CHECK(parseBandwidth("50GB/s") == 50'000'000'000ull);
  CHECK_FALSE(parseBandwidth("2GB"));
}

TEST_CASE("durations need a unit and whole nanoseconds", "[units]") {
  CHECK(parseDuration("2us") == 2'000u);
  CHECK(parseDuration("1.5us") == 1'500u);
  CHECK(parseDuration("500ns") == 500u);
  CHECK(parseDuration("1ms") == 1'000'000u);
  CHECK(parseDuration("0.02s") == 20'000'000u);
  CHECK_FALSE(parseDuration("2"));        // no unit
  CHECK_FALSE(parseDuration("2 lightyears"));
  CHECK_FALSE(parseDuration("1.5ns"));    // not whole nanoseconds
  CHECK_FALSE(parseDuration("us"));
}

TEST_CASE("counts take K, M, G suffixes", "[units]") {
  CHECK(parseCount("500K") == 500'000u);
  CHECK(parseCount("1.2M") == 1'200'000u);
  CHECK(parseCount("7") == 7u);
  CHECK_FALSE(parseCount("5KB"));
}

TEST_CASE("capacity arithmetic saturates instead of wrapping", "[units]") {
  constexpr uint64_t max = std::numeric_limits<uint64_t>::max();
  CHECK(saturatingAdd(max - 1, 5) == max);
  CHECK(saturatingMul(1ull << 40, 1ull << 40) == max);
  CHECK(saturatingAdd(3, 4) == 7u);
  CHECK(saturatingMul(3, 4) == 12u);
}
