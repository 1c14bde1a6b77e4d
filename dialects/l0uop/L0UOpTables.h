//===- L0UOpTables.h - A plan's records in the runtime's tables -*- C++ -*-===//
//
// The runtime reads a plan as the tables of synpl/Runtime/PlanFormat.h:
// int64 records in sections, names in one string blob. Each record is an
// l0uop op's attributes (the format's enums are the dialect's), so the
// dialect writes them: the host binary's lowering
// (--synpl-convert-l0-plan-to-llvm) adds its kernels, streams and control
// programs to the same writer; the ipu21 program file carries the host's
// side alone (pools, slots, inits, ingests, reports) for the executor that
// drives the simulator.
//
//===----------------------------------------------------------------------===//
#ifndef SYNPL_DIALECT_L0UOP_L0UOPTABLES_H
#define SYNPL_DIALECT_L0UOP_L0UOPTABLES_H

#include "synpl/Dialect/L0UOp/L0UOpOps.h"
#include "synpl/Runtime/PlanFormat.h"

#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/Twine.h"

#include <string>
#include <vector>

namespace synpl::l0uop {

/// The runtime's element code of `t` (SYNPL_PLAN_F32, ...);
/// SYNPL_PLAN_OTHER for a type it has none for.
int64_t planElementCode(mlir::Type t);

/// The tables of one plan, built up record by record.
class PlanTableWriter {
public:
  /// Hears of an item the format cannot hold, and why.
  using FailFn = llvm::function_ref<void(mlir::Operation *, const llvm::Twine &)>;

  /// The offset of `s` in the string blob (each distinct string once).
  int64_t str(llvm::StringRef s);
  /// Appends one record to a section (sections are written in order).
  template <typename Record> void add(int section, const Record &r) {
    static_assert(sizeof(Record) % sizeof(int64_t) == 0, "int64 records");
    const int64_t *w = reinterpret_cast<const int64_t *>(&r);
    sections[section].insert(sections[section].end(), w, w + sizeof(Record) / sizeof(int64_t));
    ++counts[section];
  }
  int64_t count(int section) const { return counts[section]; }
  /// Record `i` of a section, to fill in a field known only later.
  template <typename Record> Record &at(int section, int64_t i) {
    return reinterpret_cast<Record *>(sections[section].data())[i];
  }

  /// The plan's pools and slots, in order; returns how many items.
  int64_t addMemory(PlanOp plan, FailFn fail);
  /// The plan's inits, ingests and reports, in order (after addMemory:
  /// they name slots by index); returns how many items.
  int64_t addHostIO(PlanOp plan, FailFn fail);
  /// The index of slot `name`'s record (-1: none).
  int64_t slotIndex(llvm::StringRef name) const;
  int64_t poolIndex(llvm::StringRef name) const;

  /// The header's fields the plan gives: its name, pipeline depth and the
  /// training loop's defaults (epochs, checkpoint interval, steps,
  /// evaluation prefix).
  synpl_plan_header headerOf(PlanOp plan);
  /// The table: `head` (its magic, version and section table filled in
  /// here) followed by the sections.
  std::vector<int64_t> finish(synpl_plan_header head);
  /// The string blob; it ends with a NUL, as the runtime requires.
  std::string takeStrings();

private:
  std::string strings;
  llvm::StringMap<int64_t> offsets, slots, pools;
  std::vector<int64_t> sections[SYNPL_PLAN_NUM_SECTIONS];
  int64_t counts[SYNPL_PLAN_NUM_SECTIONS] = {};
};

} // namespace synpl::l0uop

#endif // SYNPL_DIALECT_L0UOP_L0UOPTABLES_H
