//===- ExchangeSchedule.h - When each transfer of an exchange runs -*- C++ -*-===//
//
// An exchange phase moves data between tiles over a statically timed fabric:
// in any one cycle a tile sends at most one word stream and its receive mux
// selects one source. The program file therefore carries, for every exchange,
// a schedule: its sends cut into transfers (one source tile to one set of
// destination tiles) and each transfer's round. The rounds run one after
// another; a round lasts as long as its largest transfer takes at
// Facts::exchangeBytesPerCycle, and within a round
//   - a tile sends at most one transfer, and
//   - a tile receives at most tilesPerExchangeBus "slots" worth: a transfer
//     that reaches every tile of the receiver's bus (a pair broadcast) takes
//     one slot, any other transfer takes the whole bus. So a pair receives
//     two broadcasts at once (the doubled receive rate of Facts), but only
//     one transfer meant for it alone.
//
// The translation to a program file builds the schedule with
// scheduleExchanges (an incremental DSATUR colouring, below); the simulator
// checks it (checkSchedule) and charges its rounds. Plain C++, no MLIR.
//
//===----------------------------------------------------------------------===//
#ifndef SYNPL_TARGET_IPU21_EXCHANGESCHEDULE_H
#define SYNPL_TARGET_IPU21_EXCHANGESCHEDULE_H

#include "synpl/Target/IPU21/Facts.h"
#include "synpl/Target/IPU21/Program.h"

#include <cstdint>
#include <string>
#include <vector>

namespace synpl::ipu21::sim {

/// `bytes` from tile `src` to every tile of `dst` (ascending, distinct).
/// `shared[i]` says whether dst[i]'s whole exchange bus receives it (the
/// transfer then takes one receive slot of dst[i], not the whole bus).
struct Transfer {
  int64_t src = 0;
  std::vector<int64_t> dst;
  std::vector<bool> shared;
  int64_t bytes = 0;
};

/// Colours `transfers` into rounds: DSATUR with a priority queue. The
/// transfer with the most rounds already closed to it goes next (then the
/// largest, then the first), and takes the open round it lengthens least
/// -- the shortest round that already fits it, else a new round when that
/// costs less than stretching one. Closing a round to the transfers that
/// share a tile with the one just placed is the only update, so a transfer
/// is looked at once per change on its tiles, not once per step (the
/// quadratic scan of a plain DSATUR). Returns each transfer's round.
std::vector<int32_t> colourTransfers(const std::vector<Transfer> &transfers, int64_t busTiles);

/// Why `rounds` is not a schedule of `transfers` (a round is negative, a
/// tile sends twice in one round, or receives more than its bus holds);
/// empty when it is one.
std::string checkSchedule(const std::vector<Transfer> &transfers,
                          const std::vector<int32_t> &rounds, int64_t busTiles);

/// The rounds' cycles: the sum over rounds of ceil(largest transfer's
/// bytes / exchangeBytesPerCycle). `rounds` must pass checkSchedule.
int64_t scheduleCycles(const std::vector<Transfer> &transfers,
                       const std::vector<int32_t> &rounds, const Facts &facts);

/// The bound no schedule beats: ceil(the most bytes one tile sends, or
/// receives counting a bus-shared transfer at 1/busTiles, over
/// exchangeBytesPerCycle).
int64_t lowerBoundCycles(const std::vector<Transfer> &transfers, const Facts &facts);

/// The most packets the schedule cuts the busiest tile's load into: a
/// transfer longer than lowerBound / kPacketsPerBusiestTile bytes (whole
/// words) runs as several packets of near-equal whole words, each placed
/// in a round of its own. A round lasts as long as its longest transfer,
/// so rounds of mixed lengths waste time; cut into packets they pack
/// tighter. (This project's choice, measured on the spec's Fashion-MNIST
/// step: docs/ipu21.md.)
inline constexpr int64_t kPacketsPerBusiestTile = 24;
/// No packet is cut shorter than 8 words: smaller ones would only multiply
/// the transfers of a small exchange.
inline constexpr int64_t kMinPacketBytes = 32;

/// The transfers of exchange `x` of a program that passed checkProgram, in
/// run `run` of the innermost Repeat around its Copy (advancing sends move
/// with it): every send cut at its source's and destination's home tiles,
/// the pieces from one tile to the same tiles merged, in the order of
/// their first piece, then each cut into packets (kPacketsPerBusiestTile).
/// This order is the one the schedule's rounds follow.
std::vector<Transfer> exchangeTransfers(const Program &p, const Exchange &x, int64_t run,
                                        const Facts &facts);

/// Fills every exchange's `schedule` of a program that passed
/// checkProgram: one round list per run when a send advances (copyRuns),
/// else one. False, with `error`, when the facts of the program's target
/// are unknown.
bool scheduleExchanges(Program &p, std::string &error);

} // namespace synpl::ipu21::sim

#endif // SYNPL_TARGET_IPU21_EXCHANGESCHEDULE_H
