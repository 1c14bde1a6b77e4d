//===- Units.h - Sizes, rates and counts written in the spec's units -*- C++ -*-===//
//
// The spec writes quantities with units: `capacity: 32GB`, `bandwidth 2GB/s`,
// `param_budget(500K)`. These helpers parse them exactly (integers, with
// overflow detection) and do the capacity arithmetic the resource checks need,
// saturating instead of wrapping.
//
//===----------------------------------------------------------------------===//
#ifndef SYNPL_SUPPORT_UNITS_H
#define SYNPL_SUPPORT_UNITS_H

#include "llvm/ADT/StringRef.h"
#include <cstdint>
#include <optional>
#include <string>

namespace synpl {

/// Parses a byte size: an integer or decimal followed by B, KB, MB, GB, TB
/// (powers of 1000) or KiB, MiB, GiB, TiB (powers of 1024). `32GB` =
/// 32'000'000'000. Returns std::nullopt on malformed input or overflow.
std::optional<uint64_t> parseByteSize(llvm::StringRef text);

/// Parses a rate in bytes per second: a byte size followed by `/s`.
std::optional<uint64_t> parseBandwidth(llvm::StringRef text);

/// Parses a duration in nanoseconds: a number followed by ns, us, ms or s
/// (`2us` = 2000, `1.5us` = 1500). The fraction must resolve to whole
/// nanoseconds. Returns std::nullopt on malformed input or overflow.
std::optional<uint64_t> parseDuration(llvm::StringRef text);

/// Parses a count with an optional K/M/G suffix (powers of 1000): `500K`.
std::optional<uint64_t> parseCount(llvm::StringRef text);

/// Formats a byte count for diagnostics: `3.2 MB (3211264 bytes)`.
std::string formatBytes(uint64_t bytes);

/// Saturating arithmetic for capacity sums: a sum past UINT64_MAX stays there,
/// so it still compares as "larger than any capacity".
uint64_t saturatingAdd(uint64_t a, uint64_t b);
uint64_t saturatingMul(uint64_t a, uint64_t b);

} // namespace synpl

#endif // SYNPL_SUPPORT_UNITS_H
