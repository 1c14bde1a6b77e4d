//===- Cost.h - Cycle costs of the ipu21 simulator -----------------*- C++ -*-===//
//
// The cycles each step of a checked program costs (Simulator.h states the
// model). Every constant is a field of Facts; none is spelled here. A step's
// cost depends only on the program, never on the values, so the simulator
// computes each compute set's and exchange's cost once.
//
//===----------------------------------------------------------------------===//
#ifndef SYNPL_LIB_TARGET_IPU21_SIM_COST_H
#define SYNPL_LIB_TARGET_IPU21_SIM_COST_H

#include "Layout.h"

#include "synpl/Target/IPU21/Facts.h"
#include "synpl/Target/IPU21/Program.h"

#include <cstdint>
#include <vector>

namespace synpl::ipu21::sim {

/// Cycles of one vertex of codelet `c` on one tile.
int64_t vertexCycles(const Codelet &c, const Vertex &v, const Facts &facts);

struct StepCost {
  int64_t cycles = 0;
  /// The tile-cycles the tiles are busy (the sum over tiles of their cost);
  /// utilisation is busy / (tiles × cycles).
  double busy = 0;
};

/// A compute set costs its slowest tile; a tile the sum of its vertices.
StepCost computeSetCost(const Program &p, const ComputeSet &cs, const Facts &facts);

/// An exchange costs ceil(max over tiles of max(sent, received) bytes /
/// Facts::exchangeBytesPerCycle), a send paid once by its source and split
/// between the tiles of a bus that all receive it. `run` is the run of the
/// innermost Repeat around the Copy (it moves an advancing source).
int64_t exchangeCycles(const Program &p, const std::vector<TensorLayout> &layouts,
                       const Exchange &x, const Facts &facts, int64_t run = 0);

/// Whether any send of `x` advances with its Repeat's runs.
bool advances(const Exchange &x);

/// Moving `bytes` over the host link: ceil(bytes × target.clockHz /
/// Facts::hostBytesPerSecond).
int64_t streamCycles(int64_t bytes, const Program &p, const Facts &facts);

} // namespace synpl::ipu21::sim

#endif // SYNPL_LIB_TARGET_IPU21_SIM_COST_H
