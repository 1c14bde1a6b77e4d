//===- UOp.h - The generic (UOp) codelet: its rules and interpreter -*- C++ -*-===//
//
// A CodeletKind::UOp codelet carries its own code: a list of UOps
// (Program.h) in SSA form, run by an interpreter over the values of its
// fields. checkUOpCodelet (UOpCheck.cpp) holds a body to the rules the
// interpreter relies on -- operands defined earlier and still in scope,
// matching Range/End and If/EndIf, types that fit each op -- so that no
// file can make the interpreter read a register that was never written or
// jump outside the body. runUOp (UOpInterp.cpp) then runs a checked body,
// and runUOpVertex runs a vertex as its tile's workers do: a MultiVertex,
// its slice of the parallel ranges cut among them (uopWorkerParts).
//
//===----------------------------------------------------------------------===//
#ifndef SYNPL_LIB_TARGET_IPU21_SIM_UOP_H
#define SYNPL_LIB_TARGET_IPU21_SIM_UOP_H

#include "synpl/Target/IPU21/Program.h"

#include <cstdint>
#include <string>
#include <vector>

namespace synpl::ipu21::sim {

/// Whether `t` is f32 or f16 (the other UTypes are integers).
inline bool isFloatUType(UType t) { return t == UType::F32 || t == UType::F16; }
/// The values an integer register of type `t` holds: i1 and ui8 are
/// unsigned (0..1, 0..255), the others two's complement of their width.
void intRange(UType t, int64_t &lo, int64_t &hi);
/// "f32", "f16", "i1", "i8", "ui8", "i32", "i64", "index".
const char *utypeName(UType t);
/// "const", "range", ..., "reduce" (the l0uop op's name).
const char *uopName(UOpcode op);

/// Checks a UOp codelet's fields and body (ProgramFile.h lists the rules);
/// on failure sets `error` to one line without the codelet's name (the
/// caller prefixes it). A codelet of another kind must have neither.
bool checkUOpCodelet(const Codelet &c, std::string &error);

/// The Range instructions of a checked UOp body's parallel slots, in slot
/// order (UInst::par = 0, 1, ...).
std::vector<int32_t> uopParallelRanges(const Codelet &c);

/// What one run of a UOp vertex did (all its worker parts together).
struct UOpRun {
  /// Issue slots of the instructions it executed (Cost.h: uopIssueSlots).
  int64_t issued = 0;
  /// UOps it executed, each counted once, whatever its slots.
  int64_t executed = 0;
  /// UOps executed plus their issue slots: what `maxSteps` bounds.
  int64_t steps = 0;
  /// runUOpVertex: the issue slots of each worker part, in part order.
  std::vector<int64_t> parts;
};

/// How a UOp vertex's slice is cut among its tile's `workers` workers (a
/// MultiVertex; the compiler's planner cuts by the same rule): of the
/// parallel slots i = 0..P-1, with [lo_i, hi_i) from `params` and step s_i
/// from their Range, n_i = ceil((hi_i - lo_i) / s_i) iterations (0 when
/// hi_i <= lo_i), the slot w with the most (the lowest index on ties) is
/// cut: parts = max(1, min(workers, n_w)), each = ceil(n_w / parts), and
/// part k = 0, 1, ... takes [lo_w + k·each·s_w, min(hi_w, lo_w +
/// (k+1)·each·s_w)) while lo_w + k·each·s_w < hi_w, the other slots whole.
/// P == 0: one part, the whole body. n_w == 0: no part at all.
struct UOpWorkerParts {
  /// -1 when P == 0 (one part, `params` unchanged).
  int32_t slot = -1;
  int64_t lo = 0, hi = 0, step = 1;
  /// n_w and each, as above (n_w may pass INT64_MAX for an int64 range).
  uint64_t iterations = 0, each = 0;
  /// How many parts the rule gives (at most `workers`).
  uint64_t count() const;
  /// Part k's [lo, hi) of `slot` (k < count()).
  void part(uint64_t k, int64_t &partLo, int64_t &partHi) const;
};
UOpWorkerParts uopWorkerParts(const Codelet &c, const std::vector<int64_t> &params,
                              int64_t workers);

/// Runs the checked UOp codelet `c` once, with its vertex's checked
/// `params` (or one worker part's: the same params with one parallel
/// range narrowed) on its fields' values, field i being *fields[i] (the
/// window box of field i, row-major, each value exact in the field's
/// element type). Two entries may point at one vector: fields bound to the
/// same elements see each other's stores. Stores update the vectors in
/// place, already rounded to the field's element type. Adds what it did to
/// `run` (not to run.parts). Returns false and sets `error` (naming the
/// UOp, and the field, dimension, index and window of a window fault) on a
/// fault: an index outside its window, an offset outside its field, an
/// integer division by zero, or run.steps (UOps executed and issue slots
/// taken together, from what `run` held before: an Index's work grows with
/// its rank) passing `maxSteps`.
bool runUOp(const Codelet &c, const std::vector<int64_t> &params,
            const std::vector<std::vector<double> *> &fields, int64_t maxSteps, UOpRun &run,
            std::string &error);

/// Runs one UOp vertex as a MultiVertex: every worker part of
/// uopWorkerParts(c, params, workers), one after another in part order, on
/// the same field vectors (the parts write apart, as parallel iterations
/// do), appending each part's issue slots to run.parts. `maxSteps` bounds
/// the vertex (all its parts together), as runUOp does one part.
bool runUOpVertex(const Codelet &c, const std::vector<int64_t> &params,
                  const std::vector<std::vector<double> *> &fields, int64_t workers,
                  int64_t maxSteps, UOpRun &run, std::string &error);

} // namespace synpl::ipu21::sim

#endif // SYNPL_LIB_TARGET_IPU21_SIM_UOP_H
