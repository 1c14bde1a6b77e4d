//===- Cost.h - Cycle costs of the ipu21 simulator -----------------*- C++ -*-===//
//
// The cycles each step of a checked program costs (Simulator.h states the
// model). Every hardware constant is a field of Facts; the issue slots of
// the generic codelet's UOps are this project's estimates (Cost.cpp). A
// step's cost depends only on the program, never on the values, so the
// simulator computes each compute set's and exchange's cost once -- except
// for UOp vertices, whose cost is the instructions they issued as they ran
// (an If may skip its body): a compute set holding one is costed after each
// run (computeSetCost with `issued`).
//
//===----------------------------------------------------------------------===//
#ifndef SYNPL_LIB_TARGET_IPU21_SIM_COST_H
#define SYNPL_LIB_TARGET_IPU21_SIM_COST_H

#include "Layout.h"

#include "synpl/Target/IPU21/ExchangeSchedule.h"
#include "synpl/Target/IPU21/Facts.h"
#include "synpl/Target/IPU21/Program.h"

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace synpl::ipu21::sim {

/// Cycles of one vertex of codelet `c` on one tile; 0 for a UOp codelet,
/// whose cost comes from its run (workerCycles over its worker parts' issue
/// slots).
int64_t vertexCycles(const Codelet &c, const Vertex &v, const Facts &facts);

/// The issue slots one execution of `u` takes on a worker: 1 for most
/// UOps; 0 for Const (hoisted out of the loops) and EndIf (a branch
/// target, no instruction); End 1 per iteration (the loop's branch; an
/// `rpt` loop could remove it, which is not modelled); Index 2 per
/// dimension (a multiply-add each); the transcendental ones (Exp2, Log2,
/// Sin, Sqrt, Reciprocal) kTranscendentalIssueSlots. A Reduce takes 1 for
/// itself plus 1 per iteration of its range (the fold, charged at the End).
int64_t uopIssueSlots(const UInst &u);

struct StepCost {
  int64_t cycles = 0;
  /// The tile-cycles the tiles are busy (the sum over tiles of their cost);
  /// utilisation is busy / (tiles × cycles).
  double busy = 0;
};

/// A compute set costs its slowest tile; a tile the sum of its vertices'
/// costs, plus workerCycles(max, sum) over the issue slots of all the
/// worker parts of all its UOp vertices (each a MultiVertex, its slice cut
/// into worker parts: UOp.h, uopWorkerParts). `issued`, when given, holds
/// for each vertex of `cs`, on each of its tiles in forEachTile order, the
/// slots each worker part of its UOp body issued (empty for the other
/// kinds); without it UOp vertices cost nothing.
/// `used`, when given, is computeSetTiles(cs) (a compute set that runs
/// again and again need not work it out each time).
StepCost computeSetCost(const Program &p, const ComputeSet &cs, const Facts &facts,
                        const std::vector<std::vector<std::vector<int64_t>>> *issued = nullptr,
                        const TileSet *used = nullptr);
/// The tiles some vertex of `cs` runs on.
TileSet computeSetTiles(const ComputeSet &cs);

/// exchangeTransfers (ExchangeSchedule.h) with every tensor's layout built.
std::vector<Transfer> exchangeTransfers(const Program &p, const std::vector<TensorLayout> &layouts,
                                        const Exchange &x, int64_t run, int64_t busTiles);

/// The first run of exchange `x` whose round list (x.schedule, one per
/// run) is not a schedule of that run's transfers on buses of `busTiles`
/// tiles, and checkSchedule's reason; {-1, ""} when every one is.
std::pair<int64_t, std::string> firstBadRun(const Program &p,
                                            const std::vector<TensorLayout> &layouts,
                                            const Exchange &x, int64_t busTiles);

/// What exchange `x` costs in run `run` of the innermost Repeat around its
/// Copy: its schedule's rounds (scheduleCycles), and the bound no schedule
/// beats (lowerBoundCycles).
struct ExchangeCost {
  int64_t cycles = 0, bound = 0;
};
ExchangeCost exchangeCost(const Program &p, const std::vector<TensorLayout> &layouts,
                          const Exchange &x, const Facts &facts, int64_t run = 0);

/// Whether any send of `x` advances with its Repeat's runs.
bool advances(const Exchange &x);

/// Moving `bytes` over the host link: ceil(bytes × target.clockHz /
/// Facts::hostBytesPerSecond).
int64_t streamCycles(int64_t bytes, const Program &p, const Facts &facts);

} // namespace synpl::ipu21::sim

#endif // SYNPL_LIB_TARGET_IPU21_SIM_COST_H
