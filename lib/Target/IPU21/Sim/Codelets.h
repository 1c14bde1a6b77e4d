//===- Codelets.h - What each ipu21 codelet computes ---------------*- C++ -*-===//
#ifndef SYNPL_LIB_TARGET_IPU21_SIM_CODELETS_H
#define SYNPL_LIB_TARGET_IPU21_SIM_CODELETS_H

#include "UOp.h"

#include "synpl/Target/IPU21/Facts.h"
#include "synpl/Target/IPU21/Program.h"

#include <cstdint>
#include <string>
#include <vector>

namespace synpl::ipu21::sim {

/// Runs one vertex of codelet `c` (with its checked `params`) on the values
/// of its fields, in field order, each the exact value of its stored
/// element. The fixed kinds' last field is their output; a UOp codelet's
/// outputs are its UOpFields marked `output`. Outputs are updated in place,
/// already rounded the way the hardware rounds partial results (the caller
/// rounds them to the output type once more when storing, which changes
/// nothing for the float outputs).
///
/// UOp codelets only: `shared[f]` is the field whose vector field f uses --
/// f itself, or an earlier field bound to the same elements, whose vector
/// then holds both (empty: every field its own); the vertex runs as a
/// MultiVertex on `workers` workers (runUOpVertex: its slice cut into worker
/// parts, each part's issue slots in run.parts); `run` counts what the body
/// executed; past `maxSteps` UOps (all parts together), or on a fault, it
/// returns false and sets `error`. The fixed kinds always succeed.
bool runCodelet(const Codelet &c, const std::vector<int64_t> &params,
                std::vector<std::vector<double>> &fields, const Facts &facts, UOpRun &run,
                std::string &error, const std::vector<int32_t> &shared = {},
                int64_t maxSteps = INT64_MAX, int64_t workers = 1);

} // namespace synpl::ipu21::sim

#endif // SYNPL_LIB_TARGET_IPU21_SIM_CODELETS_H
