//===- Units.cpp - Sizes, rates and counts ---------------------------------===//
#include "synpl/Support/Units.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringSwitch.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/raw_ostream.h"
#include <limits>

using namespace synpl;

uint64_t synpl::saturatingAdd(uint64_t a, uint64_t b) {
  uint64_t r;
  return __builtin_add_overflow(a, b, &r) ? std::numeric_limits<uint64_t>::max()
                                          : r;
}

uint64_t synpl::saturatingMul(uint64_t a, uint64_t b) {
  uint64_t r;
  return __builtin_mul_overflow(a, b, &r) ? std::numeric_limits<uint64_t>::max()
                                          : r;
}

/// Parses `<digits>[.<digits>]` then scales by `multiplier`, exactly: the
/// fraction must resolve to a whole number of units (1.5KB is fine, 1.0005KB
/// is not a whole byte count and is rejected).
static std::optional<uint64_t> scaleDecimal(llvm::StringRef number,
                                            uint64_t multiplier) {
  auto [whole, frac] = number.split('.');
  if (whole.empty() || !llvm::all_of(whole, llvm::isDigit) ||
      !llvm::all_of(frac, llvm::isDigit) ||
      (number.contains('.') && frac.empty()))
    return std::nullopt;
  uint64_t w;
  if (whole.getAsInteger(10, w))
    return std::nullopt;
  uint64_t value;
  if (__builtin_mul_overflow(w, multiplier, &value))
    return std::nullopt;
  if (frac.empty())
    return value;
  // value += frac * multiplier / 10^len(frac), exactly.
  uint64_t f, denom = 1;
  if (frac.size() > 18 || frac.getAsInteger(10, f))
    return std::nullopt;
  for (size_t i = 0; i < frac.size(); ++i)
    denom *= 10;
  uint64_t scaled;
  if (__builtin_mul_overflow(f, multiplier, &scaled) || scaled % denom != 0)
    return std::nullopt;
  if (__builtin_add_overflow(value, scaled / denom, &value))
    return std::nullopt;
  return value;
}

static std::optional<uint64_t> parseWithSuffix(llvm::StringRef text,
                                               bool bytes) {
  text = text.trim();
  size_t split = text.find_if([](char c) { return !llvm::isDigit(c) && c != '.'; });
  llvm::StringRef number = text.substr(0, split);
  llvm::StringRef unit = split == llvm::StringRef::npos ? "" : text.substr(split).trim();
  constexpr uint64_t K = 1000, Ki = 1024;
  std::optional<uint64_t> mult;
  if (bytes)
    mult = llvm::StringSwitch<std::optional<uint64_t>>(unit)
               .Case("", 1)
               .Case("B", 1)
               .Case("KB", K)
               .Case("MB", K * K)
               .Case("GB", K * K * K)
               .Case("TB", K * K * K * K)
               .Case("KiB", Ki)
               .Case("MiB", Ki * Ki)
               .Case("GiB", Ki * Ki * Ki)
               .Case("TiB", Ki * Ki * Ki * Ki)
               .Default(std::nullopt);
  else
    mult = llvm::StringSwitch<std::optional<uint64_t>>(unit)
               .Case("", 1)
               .Case("K", K)
               .Case("M", K * K)
               .Case("G", K * K * K)
               .Default(std::nullopt);
  if (!mult)
    return std::nullopt;
  return scaleDecimal(number, *mult);
}

std::optional<uint64_t> synpl::parseByteSize(llvm::StringRef text) {
  return parseWithSuffix(text, /*bytes=*/true);
}

std::optional<uint64_t> synpl::parseBandwidth(llvm::StringRef text) {
  text = text.trim();
  if (!text.consume_back("/s"))
    return std::nullopt;
  return parseByteSize(text);
}

std::optional<uint64_t> synpl::parseDuration(llvm::StringRef text) {
  text = text.trim();
  size_t split = text.find_if([](char c) { return !llvm::isDigit(c) && c != '.'; });
  if (split == llvm::StringRef::npos)
    return std::nullopt; // a bare number has no unit
  std::optional<uint64_t> mult = llvm::StringSwitch<std::optional<uint64_t>>(
                                     text.substr(split))
                                     .Case("ns", 1)
                                     .Case("us", 1000)
                                     .Case("ms", 1000 * 1000)
                                     .Case("s", 1000 * 1000 * 1000)
                                     .Default(std::nullopt);
  if (!mult)
    return std::nullopt;
  return scaleDecimal(text.substr(0, split), *mult);
}

std::optional<uint64_t> synpl::parseCount(llvm::StringRef text) {
  return parseWithSuffix(text, /*bytes=*/false);
}

std::string synpl::formatBytes(uint64_t bytes) {
  std::string s;
  llvm::raw_string_ostream os(s);
  static const char *units[] = {"B", "KB", "MB", "GB", "TB", "PB", "EB"};
  double v = static_cast<double>(bytes);
  int u = 0;
  while (v >= 1000.0 && u < 6) {
    v /= 1000.0;
    ++u;
  }
  if (u == 0)
    os << bytes << " B";
  else
    os << llvm::format("%.1f", v) << " " << units[u] << " (" << bytes
       << " bytes)";
  return s;
}
