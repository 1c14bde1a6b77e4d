//===- SimImpl.h - The state of the ipu21 simulator ----------------*- C++ -*-===//
//
// Shared by Simulator.cpp (running steps) and Memory.cpp (tile memory maps).
//
//===----------------------------------------------------------------------===//
#ifndef SYNPL_LIB_TARGET_IPU21_SIM_SIMIMPL_H
#define SYNPL_LIB_TARGET_IPU21_SIM_SIMIMPL_H

#include "Cost.h"
#include "Layout.h"

#include "synpl/Target/IPU21/Simulator.h"

#include <map>
#include <string>
#include <utility>
#include <vector>

namespace synpl::ipu21::sim {

/// One object on a tile, by index: a tensor, buffer or codelet (`a`), a
/// vertex (compute set `a`, vertex `b`) or an exchange's descriptors (`a`).
struct TileObject {
  MemoryKind kind;
  int32_t a, b;
};

struct Simulator::Impl {
  Program program;
  Facts facts;
  SimOptions options;
  /// Why the program cannot run; empty when it can.
  std::string problem;

  std::vector<sim::TensorLayout> layouts;
  std::vector<int64_t> numel;
  std::vector<sim::TileSetRank> bufferRanks;
  /// Values: each tensor's logical elements; each buffer's rows, one per
  /// tile of its set in ascending order. Raw little-endian element bytes.
  std::vector<std::vector<uint8_t>> tensorData, bufferData;

  /// Static costs, computed once (a compute set with UOp vertices: of its
  /// other vertices only; computeSetHasUOp says which).
  std::vector<sim::StepCost> computeSetCosts;
  std::vector<bool> computeSetHasUOp;
  /// A UOp compute set's tiles (it is costed again after every run).
  std::vector<sim::TileSet> computeSetTiles;
  /// Per exchange, per run (one unless a send advances): its cost, computed
  /// when the run first happens (cycles < 0 until then).
  std::vector<std::vector<sim::ExchangeCost>> exchangeCosts;

  /// The objects on each tile (Memory.cpp).
  std::vector<std::vector<TileObject>> tileObjects;

  SimReport report;
  /// Phases by (kind, name); the phase of each compute set and exchange once
  /// known; each phase's busy tile-cycles over its runs.
  std::map<std::pair<int, std::string>, size_t> phaseIndex;
  std::vector<int64_t> computeSetPhase, exchangePhase;
  std::vector<double> busySum;

  StreamSource source;
  StreamSink sink;

  /// Builds tileObjects, counting the entries it will take against `budget`
  /// bytes first; false (and `problem` set) when they do not fit.
  bool indexTileObjects(int64_t budget);
  /// The memory map of `tile` and the bytes its objects occupy.
  std::vector<MemoryObject> memoryMap(int64_t tile) const;
  int64_t occupiedBytes(int64_t tile) const;
  /// Sets report.maxTile and report.maxTileBytes.
  void findBusiestTile();
};

} // namespace synpl::ipu21::sim

#endif // SYNPL_LIB_TARGET_IPU21_SIM_SIMIMPL_H
