//===- Simulator.h - The ipu21 BSP simulator -----------------------*- C++ -*-===//
//
// Runs an ipu21 Program (Program.h) the way the chip runs it, superstep by
// superstep, and charges each step the cycles the hardware facts (Facts.h)
// give it. Plain C++, no MLIR.
//
// UOp vertices run their codelet's body in an interpreter (UOp.h in the
// library): registers typed by UInst::type, floats rounded to their type
// after every op, integers wrapped to their width. Fields of one vertex
// bound to exactly the same elements share one copy (a store through one
// is seen by loads through the other); every output field is written back
// after the vertex ran, input fields never. An index outside its window, an
// offset outside its field or an integer division by zero stops the run
// with an error naming the compute set, vertex, tile, codelet and UOp.
//
// Values: every tensor is kept as its logical flat array and every buffer as
// one row of `elements` per tile of its set, each element stored in its own
// type (f32, f16, f8E4M3FN, f8E5M2, i32, ui8) and converted on every write
// (roundToElem). A vertex field's tile-local elements map to a tensor's
// logical elements through that tile's intervals. The simulator never
// allocates the chip's whole memory: only the bytes the objects hold.
//
// Cycles (the constants all come from Facts):
//  - Execute: a compute set costs its slowest tile; a tile costs the sum of
//    its vertices' costs. AmpMatmul: blocks = ceil(k / inChans) ×
//    ceil(n / ampOutChans), inChans = ampInChansF16 (f16, f8 inputs) or
//    ampInChansF32 (f32); cycles = ampCallOverheadCycles + (blocks − 1) ×
//    ampBlockReloadCycles + blocks × rowCycles × m, where rowCycles is
//    ampCyclesPer16x16Row for f16/f8 and ampInChansF32 × ampOutChans /
//    ampF32MacsPerCycle for f32. ReduceAdd: supervisorOverheadCycles +
//    workers × ceil(p·n / (lanes × workers)), lanes = vectorBytes / the
//    output element's bytes. Copy, Fill: supervisorOverheadCycles +
//    ceil(bytes / memcpyBytesPerCycle), bytes = count × the wider element.
//    UOp (the generic codelet): a MultiVertex, run by all the tile's
//    program.target.workers workers, its slice of the parallel ranges cut
//    into worker parts (docs/ipu21.md; sim::uopWorkerParts), each part's
//    issue slots counted as it ran (Cost.h's uopIssueSlots); all the worker
//    parts of a tile's UOp vertices together cost cost::workerCycles
//    (CostModel.h, with Facts::workers): max(max_i n_i × workers, sum_i
//    n_i) for parts of n_i slots, added to its other vertices' costs. Such
//    a compute set is charged after each run (an If may skip work), so it
//    needs values: a program running one is refused in timing-only mode.
//  - Copy (an exchange): its schedule (ExchangeSchedule.h), the rounds of
//    the run's transfers one after another, each ceil(its largest
//    transfer's bytes / exchangeBytesPerCycle). A send is one transfer
//    however many tiles receive it; a tile sends one transfer per round and
//    receives one, or two bus-shared ones (tilesPerExchangeBus, a pair).
//    Bytes a tile sends to itself are charged like any other. The report
//    also gives the bound no schedule beats (PhaseCost::boundCycles).
//  - Sync: syncCycles, a placeholder: the chip's sync cost is not public.
//  - StreamIn / StreamOut: ceil(bytes × target.clockHz / hostBytesPerSecond).
//
//===----------------------------------------------------------------------===//
#ifndef SYNPL_TARGET_IPU21_SIMULATOR_H
#define SYNPL_TARGET_IPU21_SIMULATOR_H

#include "synpl/Target/IPU21/Facts.h"
#include "synpl/Target/IPU21/Program.h"

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace synpl::ipu21::sim {

/// `value` rounded to element type `t` as the simulator stores it: floats
/// round to nearest, ties to even, with subnormals; f32, f16 and f8E5M2
/// overflow to ±inf; f8E4M3FN has no inf (its largest finite value is 448)
/// and overflows to NaN, as MLIR's Float8E4M3FN does; i32 and ui8 truncate
/// toward zero and saturate, NaN becoming 0 (as arith.fptosi/fptoui with
/// saturation).
double roundToElem(ElemType t, double value);
/// The element of type `t` at `p` (little-endian) as a double (exact for
/// every type).
double decodeElem(ElemType t, const uint8_t *p);
/// `value` rounded to `t` (as roundToElem), written at `p` (elemBytes(t)
/// bytes, little-endian).
void encodeElem(ElemType t, double value, uint8_t *p);

/// The cost of one named phase of the program, over every time it ran.
struct PhaseCost {
  std::string name;      ///< compute set, exchange, "sync" or "stream <name>"
  StepKind kind = StepKind::Execute;
  int64_t runs = 0;      ///< times the phase ran
  int64_t cycles = 0;    ///< total over its runs
  /// Compute sets only: the tiles' busy cycles / (target.tiles × cycles),
  /// over all its runs; 0 for the other kinds.
  double utilisation = 0;
  /// Exchanges only: the cycles no schedule could beat over its runs
  /// (lowerBoundCycles, ExchangeSchedule.h); `cycles` are its schedule's.
  int64_t boundCycles = 0;
};

struct SimReport {
  int64_t runs = 0;        ///< runs of main
  int64_t totalCycles = 0;
  int64_t syncs = 0;
  int64_t syncCycles = 0;  ///< charged per sync (Facts::syncCycles, a placeholder)
  std::vector<PhaseCost> phases; ///< in the order each first ran
  /// The tile whose objects occupy the most bytes (the union of their
  /// address ranges: objects sharing memory count once) and those bytes.
  int64_t maxTile = 0, maxTileBytes = 0;
};

/// One object in a tile's memory.
enum class MemoryKind : uint8_t { Tensor, Buffer, Code, VertexState, Descriptors };
const char *memoryKindName(MemoryKind k); // "tensor", "buffer", "code", "vertex", "exchange"

struct MemoryObject {
  MemoryKind kind = MemoryKind::Tensor;
  std::string name; ///< vertices: "<compute set>[<index>] <codelet>"
  int64_t address = 0, bytes = 0;
};

struct SimOptions {
  /// false: charge cycles only; keep no values (setTensor, getTensor, streams
  /// and vertex arithmetic are skipped; an If step is an error, and a
  /// program with UOp vertices is refused: their cycles come from running
  /// them).
  bool values = true;
  /// The most bytes the simulator may hold for the program: its tensor and
  /// buffer values and its index of the objects on each tile.
  int64_t maxBytes = int64_t(8) << 30;
  /// The most UOps one UOp vertex may execute on one tile in one run (all
  /// its worker parts together), each counted as 1 plus its issue slots;
  /// past it the run stops with an error (a kernel whose loops do not end,
  /// or a hostile file's, cannot hang the simulator).
  int64_t maxUOpSteps = int64_t(1) << 36;
};

class Simulator {
public:
  /// Simulates `program` (copied) with the cost constants of `facts`; the
  /// machine's shape comes from program.target. A program that breaks
  /// checkProgram's rules (ProgramFile.h), or needs more than
  /// options.maxBytes, makes every call below fail with that error.
  Simulator(const Program &program, const Facts &facts, SimOptions options = {});
  ~Simulator();
  Simulator(const Simulator &) = delete;
  Simulator &operator=(const Simulator &) = delete;

  /// Whether the program can run; otherwise `error` says why.
  bool valid(std::string &error) const;

  /// The tensor named `name` (numel values, row-major), rounded to its type.
  bool setTensor(std::string_view name, const std::vector<double> &values, std::string &error);
  bool getTensor(std::string_view name, std::vector<double> &values, std::string &error) const;

  /// A StreamIn step asks `source` for the next values of its stream; it
  /// must give exactly the tensor's element count (false: no more data).
  using StreamSource = std::function<bool(std::string_view stream, std::vector<double> &out)>;
  void setStreamSource(StreamSource source);
  /// A StreamOut step hands the tensor's values to `sink` (dropped if none).
  using StreamSink = std::function<void(std::string_view stream, const std::vector<double> &)>;
  void setStreamSink(StreamSink sink);

  /// Runs Program::main once, adding its cycles to the report.
  bool run(std::string &error);
  const SimReport &report() const;

  /// The objects in `tile`'s memory, sorted by address (empty for a tile the
  /// target does not have).
  std::vector<MemoryObject> memoryMap(int64_t tile) const;

  struct Impl;

private:
  std::unique_ptr<Impl> impl;
};

/// The report as text (a table of phases) or as one JSON object.
std::string formatReport(const SimReport &report, const Program &program, bool json);
/// "sequence", "repeat", "execute", "copy", "sync", "if", "stream-in", "stream-out".
const char *stepKindName(StepKind k);

} // namespace synpl::ipu21::sim

#endif // SYNPL_TARGET_IPU21_SIMULATOR_H
