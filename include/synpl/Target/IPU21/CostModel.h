//===- CostModel.h - Cycles of the IPU's units, from its facts -------*- C++ -*-===//
//
// The cycle formulas of the ipu21 sink, one definition each, shared by the
// planner that chooses a tile plan (lib/Conversion/L0ToIPU21) and the BSP
// simulator that charges a program (lib/Target/IPU21/Sim). Plain C++ over
// Facts: every constant is a fact (Facts.h cites its source); the formulas
// are this project's model of how the units combine. Arithmetic saturates at
// INT64_MAX so that no size a file or a search can produce overflows.
//
//===----------------------------------------------------------------------===//
#ifndef SYNPL_TARGET_IPU21_COSTMODEL_H
#define SYNPL_TARGET_IPU21_COSTMODEL_H

#include "synpl/Target/IPU21/Facts.h"

#include <algorithm>
#include <cmath>
#include <cstdint>

namespace synpl::ipu21::cost {

inline int64_t satAdd(int64_t a, int64_t b) {
  int64_t r;
  return __builtin_add_overflow(a, b, &r) ? INT64_MAX : r;
}
inline int64_t satMul(int64_t a, int64_t b) {
  int64_t r;
  return __builtin_mul_overflow(a, b, &r) ? INT64_MAX : r;
}
/// ceil(a / b) for a >= 0; a divisor that is not positive counts as 1.
inline int64_t ceilDiv(int64_t a, int64_t b) {
  b = b > 0 ? b : 1;
  return a / b + (a % b != 0);
}

/// The input channels the AMP takes per pass: ampInChansF32 for f32 inputs,
/// ampInChansF16 for f16 and FP8 (FP8's own rate is not public).
inline int64_t ampInChans(const Facts &f, bool f32Inputs) {
  return std::max<int64_t>(1, f32Inputs ? f.ampInChansF32 : f.ampInChansF16);
}

/// One AMP vertex computing [m, k] x [k, n]: blocks = ceil(k / inChans) x
/// ceil(n / ampOutChans); ampCallOverheadCycles + (blocks - 1) x
/// ampBlockReloadCycles + blocks x rowCycles x m, where rowCycles is
/// ampCyclesPer16x16Row (f16, FP8) or inChans x ampOutChans /
/// ampF32MacsPerCycle (f32). For k = n = 16 in f16: 331 + 4 m, the fit of
/// the all-tile ConvPartial1x1 microbenchmark.
inline int64_t ampCycles(const Facts &f, bool f32Inputs, int64_t m, int64_t n, int64_t k) {
  int64_t inChans = ampInChans(f, f32Inputs);
  int64_t blocks = satMul(ceilDiv(k, inChans), ceilDiv(n, f.ampOutChans));
  int64_t rowCycles = f32Inputs ? ceilDiv(satMul(inChans, f.ampOutChans), f.ampF32MacsPerCycle)
                                : f.ampCyclesPer16x16Row;
  int64_t reloads = satMul(std::max<int64_t>(blocks - 1, 0), f.ampBlockReloadCycles);
  return satAdd(satAdd(f.ampCallOverheadCycles, reloads), satMul(satMul(blocks, rowCycles), m));
}

/// `elements` elements of `elemBytes` bytes through the vector unit, one
/// 64-bit op per element group: the six workers issue round-robin, together
/// one op per cycle, plus the supervisor's overhead.
inline int64_t vectorCycles(const Facts &f, int64_t elements, int64_t elemBytes) {
  int64_t lanes = std::max<int64_t>(1, f.vectorBytes / std::max<int64_t>(1, elemBytes));
  int64_t workers = std::max<int64_t>(1, f.workers);
  return satAdd(f.supervisorOverheadCycles,
                satMul(workers, ceilDiv(elements, satMul(lanes, workers))));
}

/// The worker parts of the generic UOp codelet's vertices sharing one tile
/// in one compute set. Each UOp vertex is a MultiVertex: its slice of the
/// parallel ranges is cut into up to `workers` worker parts (docs/ipu21.md,
/// "Generic (UOp) codelets"), and the tile's `workers` contexts run all the
/// parts of all its UOp vertices. They issue round-robin, one instruction
/// per cycle in all, so one worker issues one instruction every `workers`
/// cycles: a part of n instructions running alone takes n × workers
/// cycles, and parts of n_1 .. n_p instructions run up to `workers` at
/// once: max(max_i n_i × workers, sum_i n_i) cycles. `longest` is max_i n_i
/// and `total` sum_i n_i over all the tile's parts (the instructions each
/// part issued, counted as it ran). No supervisor overhead is added: the
/// vertex launch is not modelled.
inline int64_t workerCycles(const Facts &f, int64_t longest, int64_t total) {
  int64_t workers = std::max<int64_t>(1, f.workers);
  return std::max(satMul(longest, workers), total);
}

/// Issue slots of one transcendental UOp (EXP2, LOG2, SIN, SQRT,
/// RECIPROCAL) in a generic codelet: this project's estimate, not a fact
/// (the IPU's per-instruction cycles for them are not public); 4 stands for
/// a short sequence, a range reduction and the function's instruction. The
/// other UOps issue one slot each, but a CONST (hoisted) and an ENDIF none,
/// and an INDEX two per dimension (a multiply-add each).
inline constexpr int64_t kTranscendentalIssueSlots = 4;

/// Copying or filling `bytes` bytes on a tile: memcpy rate plus overhead.
inline int64_t memcpyCycles(const Facts &f, int64_t bytes) {
  return satAdd(f.supervisorOverheadCycles, ceilDiv(bytes, f.memcpyBytesPerCycle));
}

/// An exchange whose busiest tile sends or receives `bytes`: ceil(bytes /
/// exchangeBytesPerCycle). (A tile receiving a send together with the
/// other tiles of its bus pays 1 / tilesPerExchangeBus of it.)
inline int64_t exchangeCycles(const Facts &f, int64_t bytes) {
  return ceilDiv(bytes, f.exchangeBytesPerCycle);
}

/// `bytes` over the host link at `clockHz`.
inline int64_t streamCycles(const Facts &f, int64_t bytes, double clockHz) {
  double cycles =
      std::ceil(double(bytes) * clockHz / (f.hostBytesPerSecond > 0 ? f.hostBytesPerSecond : 1));
  return cycles >= 9.2e18 ? INT64_MAX : cycles <= 0 ? 0 : int64_t(cycles);
}

} // namespace synpl::ipu21::cost

#endif // SYNPL_TARGET_IPU21_COSTMODEL_H
