//===- Report.cpp - The simulator's report as text or JSON ----------------===//
#include "Layout.h"

#include "synpl/Target/IPU21/Simulator.h"

#include <cstdarg>
#include <cstdio>
#include <string>

namespace synpl::ipu21::sim {

const char *stepKindName(StepKind k) {
  switch (k) {
  case StepKind::Sequence:
    return "sequence";
  case StepKind::Repeat:
    return "repeat";
  case StepKind::Execute:
    return "execute";
  case StepKind::Copy:
    return "copy";
  case StepKind::Sync:
    return "sync";
  case StepKind::If:
    return "if";
  case StepKind::StreamIn:
    return "stream-in";
  case StepKind::StreamOut:
    return "stream-out";
  }
  return "?";
}

namespace {

std::string format(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
std::string format(const char *fmt, ...) {
  char buf[512];
  va_list args;
  va_start(args, fmt);
  std::vsnprintf(buf, sizeof(buf), fmt, args);
  va_end(args);
  return buf;
}

std::string jsonString(const std::string &s) {
  std::string out = "\"";
  for (unsigned char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += char(c);
    } else if (c < 0x20) {
      out += format("\\u%04x", c);
    } else {
      out += char(c);
    }
  }
  return out + "\"";
}

/// A name for a text table: control characters shown as '?'.
std::string plain(const std::string &s) {
  std::string out;
  for (unsigned char c : s)
    out += c < 0x20 || c == 0x7f ? '?' : char(c);
  return out;
}

} // namespace

std::string formatReport(const SimReport &r, const Program &p, bool json) {
  const double clock = double(p.target.clockHz);
  const double perRun = r.runs > 0 ? double(r.totalCycles) / double(r.runs) : 0;
  const double seconds = clock > 0 ? perRun / clock : 0;
  const double total = double(r.totalCycles);
  std::string s;
  if (json) {
    s += "{\"program\": " + jsonString(p.name) + ", \"arch\": " + jsonString(p.target.arch);
    s += format(", \"tiles\": %lld, \"clockHz\": %lld, \"bytesPerTile\": %lld",
                (long long)p.target.tiles, (long long)p.target.clockHz,
                (long long)p.target.bytesPerTile);
    s += format(", \"runs\": %lld, \"totalCycles\": %lld, \"cyclesPerRun\": %.17g"
                ", \"secondsPerRun\": %.17g",
                (long long)r.runs, (long long)r.totalCycles, perRun, seconds);
    s += format(", \"syncs\": %lld, \"syncCycles\": %lld, \"syncCyclesPlaceholder\": true",
                (long long)r.syncs, (long long)r.syncCycles);
    s += format(", \"maxTile\": %lld, \"maxTileBytes\": %lld, \"phases\": [",
                (long long)r.maxTile, (long long)r.maxTileBytes);
    for (size_t i = 0; i < r.phases.size(); ++i) {
      const PhaseCost &ph = r.phases[i];
      s += i ? ", " : "";
      s += "{\"name\": " + jsonString(ph.name) + ", \"kind\": \"" + stepKindName(ph.kind) + "\"";
      s += format(", \"runs\": %lld, \"cycles\": %lld, \"utilisation\": %.17g",
                  (long long)ph.runs, (long long)ph.cycles, ph.utilisation);
      if (ph.kind == StepKind::Copy)
        s += format(", \"boundCycles\": %lld", (long long)ph.boundCycles);
      s += "}";
    }
    return s + "]}\n";
  }
  s += "program " + plain(p.name) + " on " + plain(p.target.arch) +
       format(": %lld tiles at %.4g GHz\n", (long long)p.target.tiles, clock / 1e9);
  s += format("runs of main: %lld\n", (long long)r.runs);
  s += format("total cycles: %lld (%.17g per run of main, %.6g s per run)\n",
              (long long)r.totalCycles, perRun, seconds);
  s += format("syncs: %lld at %lld cycles each (a placeholder: the chip's sync cost is not "
              "public)\n",
              (long long)r.syncs, (long long)r.syncCycles);
  s += format("busiest tile: %lld, %lld of %lld bytes\n", (long long)r.maxTile,
              (long long)r.maxTileBytes, (long long)p.target.bytesPerTile);
  int64_t exchanged = 0, bound = 0;
  for (const PhaseCost &ph : r.phases)
    if (ph.kind == StepKind::Copy) {
      exchanged = satAdd(exchanged, ph.cycles);
      bound = satAdd(bound, ph.boundCycles);
    }
  if (exchanged > 0)
    s += format("exchanges: %lld cycles as scheduled, %lld at the bound no schedule beats "
                "(%.1f%%)\n",
                (long long)exchanged, (long long)bound, 100 * double(bound) / double(exchanged));
  s += format("%-32s %-10s %10s %16s %7s %12s %12s\n", "phase", "kind", "runs", "cycles", "share",
              "utilisation", "bound");
  for (const PhaseCost &ph : r.phases) {
    std::string util = ph.kind == StepKind::Execute ? format("%.1f%%", 100 * ph.utilisation) : "-";
    std::string low = ph.kind == StepKind::Copy ? format("%lld", (long long)ph.boundCycles) : "-";
    s += format("%-32s %-10s %10lld %16lld %6.1f%% %12s %12s\n", plain(ph.name).c_str(),
                stepKindName(ph.kind), (long long)ph.runs, (long long)ph.cycles,
                total > 0 ? 100 * double(ph.cycles) / total : 0.0, util.c_str(), low.c_str());
  }
  return s;
}

} // namespace synpl::ipu21::sim
