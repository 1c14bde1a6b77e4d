//===- ProgramFile.h - The ipu21 program file ----------------------*- C++ -*-===//
//
// The file an ipu21 program travels in, between the translation that fills a
// Program from the `ipu21` dialect and the BSP simulator that runs it. Plain
// C++, no MLIR.
//
// Layout (every integer little-endian):
//
//   header   8 bytes  magic "SYNIPU21"
//            u32      format version (1 to 4, below)
//            u32      reserved, 0
//            u64      payload bytes (the rest of the file, exactly)
//            u64      FNV-1a-64 checksum of the payload
//   payload  every field of Program in declaration order (Program.h):
//            integers at their declared width (int64_t as 8 bytes, int32_t
//            as 4, enums and bools as 1), strings as a u32 length and the
//            bytes, vectors (and TileSet's ranges) as a u64 count and the
//            items, a Step's body and elseBody recursively, a double
//            (UInst::fimm) as the u64 of its bits.
//
// Versions: 1 has no UOp codelet; 2 adds CodeletKind::UOp, whose codelets
// (and only theirs) carry Codelet::uopFields and Codelet::uop after their
// address: each UOpField's name, type, shape and output flag, each UInst's
// members in declaration order; 3 adds, after main, the host side of a
// training program (Program::hostTable as a u64 count and its words, then
// Program::hostStrings); 4 adds, after that (a count of 0 and no strings
// when there is no host side), every exchange's schedule (Exchange::schedule
// as a u64 count of runs, each a u64 count of rounds and the rounds as
// int32). writeProgram writes the oldest version that holds the program (4
// only with an exchange, 3 only with a host side, 2 only with a UOp
// codelet), and readProgram reads all four, refusing a version 2 file
// without a UOp codelet, a version 3 file without a host side and a version
// 4 file without an exchange: every program has exactly one file. An
// exchange needs its schedule (checkProgram), so a version 1 to 3 file
// holds no exchange.
//
// readProgram never trusts the file: it checks the header, the checksum,
// every count against the bytes left (it allocates nothing the remaining
// input cannot justify), every enum value and then checkProgram's rules. It
// reports the first problem as one line and never crashes or asserts.
//
//===----------------------------------------------------------------------===//
#ifndef SYNPL_TARGET_IPU21_PROGRAMFILE_H
#define SYNPL_TARGET_IPU21_PROGRAMFILE_H

#include "synpl/Target/IPU21/Program.h"

#include <cstddef>
#include <cstdint>
#include <string>

namespace synpl::ipu21::sim {

/// The first 8 bytes of a program file.
inline constexpr char kProgramMagic[8] = {'S', 'Y', 'N', 'I', 'P', 'U', '2', '1'};
/// The newest format version this library writes and reads (a program with
/// an exchange), and the oldest (a program with no exchange, host side or
/// UOp codelet).
inline constexpr uint32_t kProgramFormatVersion = 4;
inline constexpr uint32_t kOldestProgramFormatVersion = 1;
/// Bytes of the header before the payload.
inline constexpr size_t kProgramHeaderBytes = 32;

/// Limits of what a valid program may hold. The hardware's own limits are far
/// below these; they exist so that no count, size or address in a file can
/// overflow the arithmetic of the reader or the simulator.
inline constexpr int kMaxStepDepth = 64;               ///< main is depth 1
inline constexpr int64_t kMaxTiles = int64_t(1) << 20; ///< target.tiles
inline constexpr int64_t kMaxCount = int64_t(1) << 40; ///< elements, bytes, addresses
/// target.workers: a UOp vertex runs as up to that many worker parts, each
/// counted apart (the ipu21 has 6).
inline constexpr int64_t kMaxWorkers = 64;

/// FNV-1a, 64-bit, of `size` bytes.
uint64_t fnv1a64(const void *data, size_t size);

/// The program as the bytes of a program file.
std::string writeProgram(const Program &program);
/// Reads a program file of `size` bytes; on failure returns false and sets
/// `error` to one line (`out` is then unspecified).
bool readProgram(const void *data, size_t size, Program &out, std::string &error);

/// writeProgram into the file `path` / readProgram from it.
bool saveProgram(const std::string &path, const Program &program, std::string &error);
bool loadProgram(const std::string &path, Program &out, std::string &error);

/// The rules every program the simulator runs satisfies, checked on a Program
/// held in memory (readProgram applies them to what it read):
///  - target: 1 <= tiles <= kMaxTiles; 0 <= workers <= kMaxWorkers (0 runs
///    a UOp vertex as one part, like 1); sizes, addresses and the clock >= 0
///    (clock > 0) and <= kMaxCount (the clock at most 1e12);
///  - enum values in range; sizes, addresses, element counts, offsets and
///    counts in [0, kMaxCount]; a tensor's element count (the product of its
///    shape) at most kMaxCount;
///  - a tensor's mapping: each interval on a tile < target.tiles with
///    begin <= end <= numel, sorted by tile then begin, the intervals
///    disjoint and covering every element once;
///  - a TileSet: ranges non-empty, sorted, disjoint, within [0, tiles);
///  - codelet types: AmpMatmul reads f32 into f32, or f16/f8 into f32/f16;
///  - a UOp codelet (only it has uopFields and uop): its fields' types
///    valid, shapes positive with at most kMaxCount elements; its body in
///    SSA form: each operand (a, b, c, indices) names an earlier UOp that
///    has a value (not End, If, EndIf, Store) whose register is visible
///    (defined at this scope or an enclosing one; a Range's value only in
///    its body) and has the type the op needs; Range/End and If/EndIf
///    properly nested (End's a is the innermost open Range); Range of an
///    integer type wider than i1, step > 0, [lo, hi) fitting the type, par
///    -1 or a slot, the slots 0..P-1 each taken once; Index, Load, Store
///    name an existing field (Store an output field), Index with one index
///    per dimension; Reduce's b a closed Range in the Reduce's scope, its a
///    a value defined every iteration of that Range (its body or around
///    it), its c defined before the Range, its op 0..2; Bitcast f32 <-> i32
///    only; the float-only ops (Reciprocal, Exp2, Log2, Sin, Sqrt) in a
///    float type, Mod and Div in an integer one, CmpLt and CmpNe giving i1;
///  - a vertex: its codelet exists; its fields and params number what the
///    codelet kind needs (Program.h), each field's object exists, has the
///    codelet's type for that field, and holds offset + count elements on
///    every tile of the vertex (a buffer's tiles include the vertex's); a
///    field's count equals what the params say (m×k, k×n, m×n for
///    AmpMatmul); accumulate is 0 or 1;
///  - a UOp vertex: 2 P + 2 × (the fields' ranks summed) params; each
///    parallel range's [lo, hi) with lo <= hi inside its Range's static
///    [lo, hi); each field window's (lo, ext) with 0 <= lo, 0 <= ext,
///    lo + ext <= the dimension; each field binding as many elements as its
///    window box holds, of the field's element type; two fields binding
///    overlapping elements of one object bind exactly the same ones when
///    either is an output;
///  - a send: its objects exist, src and dst types match, a tensor range lies
///    within the tensor, a buffer range within the buffer on tiles the buffer
///    has, a source buffer names exactly one tile, a destination buffer at
///    least one;
///  - steps: main is a Sequence; nesting depth <= kMaxStepDepth; a step's
///    ref names an existing compute set (Execute), exchange (Copy) or
///    tensor (If: a tensor with at least one element, StreamIn/StreamOut);
///    Repeat's count >= 0; only Sequence, Repeat and If have a body, only If
///    an elseBody; a stream step names its stream;
///  - the host side: both hostTable and hostStrings or neither, hostStrings
///    ending with a NUL (the runtime checks the tables' records when it
///    binds them);
///  - with CheckSchedules::Yes, every exchange's schedule: a round list for
///    each run (copyRuns) when a send advances, else one, each a schedule of
///    that run's transfers (checkSchedule, ExchangeSchedule.h: every round
///    below the transfer count, no tile sending twice in a round or
///    receiving more than its bus holds). scheduleExchanges needs a program
///    that passes the other rules (CheckSchedules::No).
enum class CheckSchedules : bool { No = false, Yes = true };
bool checkProgram(const Program &program, std::string &error,
                  CheckSchedules schedules = CheckSchedules::Yes);

} // namespace synpl::ipu21::sim

#endif // SYNPL_TARGET_IPU21_PROGRAMFILE_H
