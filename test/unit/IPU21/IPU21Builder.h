//===- IPU21Builder.h - Building ipu21 programs in tests -----------*- C++ -*-===//
//
// Small helpers that fill a Program (Program.h) directly, as the
// translation from the ipu21 dialect would; and a few that patch a program
// file's bytes, damage them, read one back, or read a simulator's tensors
// and phases.
//
//===----------------------------------------------------------------------===//
#ifndef SYNPL_TEST_UNIT_IPU21_BUILDER_H
#define SYNPL_TEST_UNIT_IPU21_BUILDER_H

#include "synpl/Target/IPU21/ExchangeSchedule.h"
#include "synpl/Target/IPU21/Facts.h"
#include "synpl/Target/IPU21/Program.h"
#include "synpl/Target/IPU21/ProgramFile.h"
#include "synpl/Target/IPU21/Simulator.h"

#include <catch2/catch.hpp>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <random>
#include <string>
#include <utility>
#include <vector>

namespace ipu21test {

using namespace synpl::ipu21;
using namespace synpl::ipu21::sim;

/// A program for the ipu21 chip of `facts` (every tile, its memory map).
inline Program makeProgram(const std::string &name = "test", const Facts &facts = ipu21Facts()) {
  Program p;
  p.name = name;
  p.target.arch = facts.arch;
  p.target.tiles = facts.tiles;
  p.target.bytesPerTile = facts.bytesPerTile;
  p.target.elementBytes = facts.elementBytes;
  p.target.workers = facts.workers;
  p.target.clockHz = int64_t(facts.clockHz);
  p.target.sramBase = facts.sramBase;
  p.target.execEnd = facts.execEnd;
  p.target.interleavedBegin = facts.interleavedBegin;
  p.target.sramEnd = facts.sramEnd;
  p.target.rptCountMax = facts.rptCountMax;
  p.main.kind = StepKind::Sequence;
  return p;
}

inline TileSet tiles(int64_t first, int64_t end) { return TileSet{{{first, end}}}; }
inline TileSet tileList(std::initializer_list<int64_t> ts) {
  TileSet s;
  for (int64_t t : ts)
    s.ranges.push_back({t, t + 1});
  return s;
}

/// A tensor of `shape` whose elements are dealt out in consecutive blocks of
/// `perTile` to tiles firstTile, firstTile + 1, ...
inline int32_t addTensor(Program &p, const std::string &name, ElemType type,
                         std::vector<int64_t> shape, int64_t firstTile, int64_t perTile,
                         int64_t address = 0x80000) {
  Tensor t;
  t.name = name;
  t.type = type;
  t.shape = std::move(shape);
  int64_t n = 1;
  for (int64_t d : t.shape)
    n *= d;
  for (int64_t b = 0, tile = firstTile; b < n; b += perTile, ++tile)
    t.mapping.push_back({tile, b, std::min(n, b + perTile)});
  t.address = address;
  p.tensors.push_back(std::move(t));
  return int32_t(p.tensors.size() - 1);
}

inline int32_t addBuffer(Program &p, const std::string &name, ElemType type, TileSet on,
                         int64_t elements, int64_t address = 0x90000) {
  Buffer b;
  b.name = name;
  b.type = type;
  b.tiles = std::move(on);
  b.elements = elements;
  b.address = address;
  p.buffers.push_back(std::move(b));
  return int32_t(p.buffers.size() - 1);
}

inline int32_t addCodelet(Program &p, const std::string &name, CodeletKind kind, ElemType in,
                          ElemType out, int64_t codeBytes = 512, int64_t address = 0x4C000) {
  Codelet c;
  c.name = name;
  c.kind = kind;
  c.inType = in;
  c.outType = out;
  c.codeBytes = codeBytes;
  c.address = address;
  p.codelets.push_back(std::move(c));
  return int32_t(p.codelets.size() - 1);
}

inline FieldRef tensorField(int32_t t, int64_t offset, int64_t count) {
  return FieldRef{true, t, offset, count};
}
inline FieldRef bufferField(int32_t b, int64_t offset, int64_t count) {
  return FieldRef{false, b, offset, count};
}

inline int32_t addComputeSet(Program &p, const std::string &name, std::vector<Vertex> vertices) {
  p.computeSets.push_back({name, std::move(vertices)});
  return int32_t(p.computeSets.size() - 1);
}

inline Vertex vertex(int32_t codelet, TileSet on, std::vector<FieldRef> fields,
                     std::vector<int64_t> params, int64_t stateAddress = 0x7F000,
                     int64_t stateBytes = 32) {
  Vertex v;
  v.codelet = codelet;
  v.tiles = std::move(on);
  v.fields = std::move(fields);
  v.params = std::move(params);
  v.stateAddress = stateAddress;
  v.stateBytes = stateBytes;
  return v;
}

/// The params of a Fill of `count` elements with `value`.
inline std::vector<int64_t> fillParams(int64_t count, double value) {
  int64_t bits;
  std::memcpy(&bits, &value, sizeof(bits));
  return {count, bits};
}

inline Endpoint tensorEnd(int32_t t, int64_t begin) { return Endpoint{true, t, begin, {}}; }
inline Endpoint bufferEnd(int32_t b, int64_t begin, TileSet on) {
  return Endpoint{false, b, begin, std::move(on)};
}

inline int32_t addExchange(Program &p, const std::string &name, std::vector<Send> sends,
                           int64_t descriptorAddress = 0x7E000, int64_t descriptorBytes = 64) {
  Exchange x;
  x.name = name;
  x.sends = std::move(sends);
  x.descriptorAddress = descriptorAddress;
  x.descriptorBytes = descriptorBytes;
  p.exchanges.push_back(std::move(x));
  return int32_t(p.exchanges.size() - 1);
}

/// Schedules `p`'s exchanges, as the translation to a program file does
/// (the simulator runs only scheduled exchanges); returns `p`.
inline Program &scheduled(Program &p) {
  std::string error;
  INFO(error);
  REQUIRE(checkProgram(p, error, CheckSchedules::No));
  REQUIRE(scheduleExchanges(p, error));
  return p;
}

inline Step leaf(StepKind kind, int32_t ref = -1) {
  Step s;
  s.kind = kind;
  s.ref = ref;
  return s;
}
inline Step executeStep(int32_t cs) { return leaf(StepKind::Execute, cs); }
inline Step copyStep(int32_t ex) { return leaf(StepKind::Copy, ex); }
inline Step syncStep() { return leaf(StepKind::Sync); }
inline Step repeatStep(int64_t count, std::vector<Step> body) {
  Step s = leaf(StepKind::Repeat);
  s.count = count;
  s.body = std::move(body);
  return s;
}
inline Step ifStep(int32_t flag, std::vector<Step> body, std::vector<Step> elseBody) {
  Step s = leaf(StepKind::If, flag);
  s.body = std::move(body);
  s.elseBody = std::move(elseBody);
  return s;
}
inline Step streamStep(StepKind kind, int32_t tensor, const std::string &stream) {
  Step s = leaf(kind, tensor);
  s.stream = stream;
  return s;
}

/// Sets the checksum in the header of program file `bytes` to its payload's.
inline void fixChecksum(std::string &bytes) {
  uint64_t sum = fnv1a64(bytes.data() + kProgramHeaderBytes, bytes.size() - kProgramHeaderBytes);
  for (int i = 0; i < 8; ++i)
    bytes[24 + i] = char(uint8_t(sum >> (8 * i)));
}

/// Writes `v` little-endian at byte `at` of `bytes`.
inline void setU64(std::string &bytes, size_t at, uint64_t v) {
  for (int i = 0; i < 8; ++i)
    bytes[at + i] = char(uint8_t(v >> (8 * i)));
}

/// The error readProgram gives for `bytes`, or "" when it reads them.
inline std::string readError(const std::string &bytes) {
  Program out;
  std::string error;
  if (readProgram(bytes.data(), bytes.size(), out, error))
    return "";
  return error;
}

/// Damages 1 .. `maxEdits` payload bytes of program file `bytes` at random
/// (a random byte, one flipped bit, or 0x00 / 0xFF): what the reader must
/// refuse or read without crashing.
inline void damagePayload(std::string &bytes, std::mt19937 &rng, int maxEdits) {
  int edits = 1 + int(rng() % maxEdits);
  for (int e = 0; e < edits; ++e) {
    size_t at = kProgramHeaderBytes + rng() % (bytes.size() - kProgramHeaderBytes);
    switch (rng() % 3) {
    case 0:
      bytes[at] = char(rng());
      break;
    case 1:
      bytes[at] = char(uint8_t(bytes[at]) ^ (1u << (rng() % 8)));
      break;
    default:
      bytes[at] = char(rng() % 2 ? 0xFF : 0);
      break;
    }
  }
}

/// The cycles of `sim`'s phase `name` (a test failure when it has none).
inline int64_t phaseCycles(const Simulator &sim, const std::string &name) {
  for (const PhaseCost &ph : sim.report().phases)
    if (ph.name == name)
      return ph.cycles;
  FAIL("no phase " << name);
  return -1;
}

/// The values of `sim`'s tensor `name`.
inline std::vector<double> get(const Simulator &sim, const std::string &name) {
  std::vector<double> v;
  std::string error;
  INFO(error);
  REQUIRE(sim.getTensor(name, v, error));
  return v;
}

/// Sets `sim`'s tensor `name` to `v`.
inline void set(Simulator &sim, const std::string &name, const std::vector<double> &v) {
  std::string error;
  INFO(error);
  REQUIRE(sim.setTensor(name, v, error));
}

} // namespace ipu21test

#endif // SYNPL_TEST_UNIT_IPU21_BUILDER_H
