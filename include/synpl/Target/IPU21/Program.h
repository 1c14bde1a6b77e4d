//===- Program.h - An ipu21 program as plain data ------------------*- C++ -*-===//
//
// What the ipu21 program file holds and the BSP simulator runs: plain C++
// data, no MLIR (the simulator is linked without it, as the host runtime
// is). `--synpl-ipu21-to-program` (lib/Target/IPU21/Translate.cpp) fills it
// from an `ipu21.graph` after the dialect's verifiers passed, so every
// size, address and count here is one the verifier already checked; the
// reader (ProgramFile.cpp) checks again only what a corrupt or hostile file
// could break (ranges, indices, the checksum).
//
// Memory model: every tile has its own SRAM and runs its own code. An object
// (a tensor's home piece, a buffer, a codelet's code, a vertex's state, an
// exchange's descriptors) sits at ONE address on every tile that holds it;
// a tensor's elements on a tile are stored contiguously there in the order
// of that tile's intervals (its "tile-local" index space).
//
// Namespace synpl::ipu21::sim: the plain-data program, its file and the
// simulator. synpl::ipu21 itself is the MLIR dialect's (whose ops have the
// same names: a codelet kind, an interval).
//
//===----------------------------------------------------------------------===//
#ifndef SYNPL_TARGET_IPU21_PROGRAM_H
#define SYNPL_TARGET_IPU21_PROGRAM_H

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace synpl::ipu21::sim {

/// Element types of tensors and buffers.
enum class ElemType : uint8_t { F32 = 0, F16 = 1, F8E4M3 = 2, F8E5M2 = 3, I32 = 4, U8 = 5 };
/// Bytes of one element.
int64_t elemBytes(ElemType t);
/// "f32", "f16", "f8E4M3FN", "f8E5M2", "i32", "ui8" (MLIR's spelling).
const char *elemName(ElemType t);

/// A set of tiles as sorted, disjoint half-open ranges [first, second).
struct TileSet {
  std::vector<std::pair<int64_t, int64_t>> ranges;
  bool contains(int64_t tile) const;
  int64_t count() const;
};

/// Elements [begin, end) of a tensor (row-major flat index) on `tile`.
struct Interval {
  int64_t tile = 0, begin = 0, end = 0;
};

/// The machine the program was compiled for (the `#ipu21.target` attribute).
struct Target {
  std::string arch;             ///< "ipu21" or "ipu2"
  int64_t tiles = 0, bytesPerTile = 0, elementBytes = 0, workers = 0;
  int64_t clockHz = 0;
  int64_t sramBase = 0, execEnd = 0, interleavedBegin = 0, sramEnd = 0;
  int64_t rptCountMax = 0;
};

/// A tensor: each element lives on exactly one tile (its home).
struct Tensor {
  std::string name;
  ElemType type = ElemType::F32;
  std::vector<int64_t> shape;
  /// Sorted by tile, then begin; tile-local order is this order.
  std::vector<Interval> mapping;
  int64_t address = 0;
  /// Elements of the tensor on `tile` (0 when it holds none).
  int64_t elementsOn(int64_t tile) const;
};

/// A buffer: `elements` elements on every tile of `tiles` (exchange
/// landing zones, partial sums, scratch).
struct Buffer {
  std::string name;
  ElemType type = ElemType::F32;
  TileSet tiles;
  int64_t elements = 0;
  int64_t address = 0;
};

/// What a codelet computes. Fields and params, in this order:
///  - AmpMatmul (poplibs' ConvPartial1x1Out on the AMP): fields in [m×k],
///    weights [k×n], out [m×n], all row-major; params m, n, k, accumulate
///    (0: out = in·weights, 1: out += in·weights). Products of `inType`
///    are summed in `outType` (f32: f16/f32 inputs; f16: half partials).
///  - ReduceAdd: fields partials [p×n], out [n]; params p, n, accumulate.
///    out (+)= the column sums of partials, in `outType`.
///  - Copy: fields src [count], dst [count]; params count. Converts from
///    inType to outType.
///  - Fill: fields dst [count]; params count, value (the f64 bits of the
///    value, rounded to outType).
///  - UOp: the generic codelet, an L0 kernel's UOp body (`uop`, below) run
///    over one tile's slice of the kernel's parallel ranges. Its fields are
///    `uopFields`; each binds a window of that field's buffer: a box of the
///    buffer's index space, stored row-major. Params, in this order: for
///    each parallel RANGE (UInst::par = 0, 1, ...) the [lo, hi) of the
///    values it takes on this vertex; then for each field, for each of its
///    dimensions, the window's first index and extent (lo, ext).
///    inType/outType are unused (f32).
enum class CodeletKind : uint8_t { AmpMatmul = 0, ReduceAdd = 1, Copy = 2, Fill = 3, UOp = 4 };

/// The type of a UOp register: what a UOp computes in. Floats are kept in
/// a double rounded to their type after every operation; i1, the integers
/// and index in an int64 wrapped to their width (index: 64 bits; ui64 as
/// its bit pattern). i1, ui8, ui32 and ui64 are unsigned: division,
/// remainder, comparison, maximum and conversion to a float read them so.
enum class UType : uint8_t {
  F32 = 0, F16 = 1, I1 = 2, I8 = 3, U8 = 4, I32 = 5, I64 = 6, Index = 7, U32 = 8, U64 = 9
};

/// The UOps of a generic codelet (the l0uop dialect's, one for one).
enum class UOpcode : uint8_t {
  Const = 0,      ///< r = imm (fimm for a float type, iimm otherwise)
  Range = 1,      ///< loop r over [lo, hi) by step; a parallel range (par >= 0)
                  ///< takes the vertex's params' [lo, hi) instead (same step)
  End = 2,        ///< closes the Range at instruction a
  If = 3,         ///< runs up to the matching EndIf when register a != 0
  EndIf = 4,
  Index = 5,      ///< r = the element of field `field` at per-dimension
                  ///< indices `indices` (registers), as an offset in the
                  ///< field's window; outside the window is a fault
  Load = 6,       ///< r = field `field`'s element at offset register a
  Store = 7,      ///< field `field`'s element at offset register a = b
  Add = 8, Mul = 9,
  MulAcc = 10,    ///< a * b + c, one rounding
  Neg = 11, Reciprocal = 12, Max = 13,
  Mod = 14, Div = 15, ///< integers: C's % and / (toward zero)
  CmpLt = 16, CmpNe = 17, ///< r (i1) = a < b, a != b in srcType
  Where = 18,     ///< r = a ? b : c
  Exp2 = 19,      ///< 2^a, a result below the smallest normal flushed to 0
  Log2 = 20, Sin = 21, Sqrt = 22,
  Cast = 23,      ///< a from srcType to type (float to int truncates)
  Bitcast = 24,   ///< a's bits from srcType as type (same width)
  Reduce = 25,    ///< r = c op a(k0) op a(k1) ... over the Range at
                  ///< instruction b; op: iimm (0 add, 1 mul, 2 max)
};

/// One UOp. Its result is register `i` for the instruction at index i
/// (SSA: every register is written by one instruction).
struct UInst {
  UOpcode op = UOpcode::Const;
  UType type = UType::F32;    ///< the result's type (Store: the value's)
  UType srcType = UType::F32; ///< Cast, Bitcast, CmpLt, CmpNe: the operands'
  int32_t a = -1, b = -1, c = -1;
  int32_t field = -1;           ///< Index, Load, Store
  std::vector<int32_t> indices; ///< Index
  int64_t lo = 0, hi = 0, step = 1; ///< Range
  int32_t par = -1;             ///< Range: its parallel slot, or -1 (a loop)
  double fimm = 0;              ///< Const of a float type
  int64_t iimm = 0;             ///< Const otherwise; Reduce: the op
};

/// A field of a generic codelet: a buffer of `shape` elements of `type`.
struct UOpField {
  std::string name;
  ElemType type = ElemType::F32;
  std::vector<int64_t> shape;
  bool output = false; ///< written by the codelet (it may also read it)
};

struct Codelet {
  std::string name;
  CodeletKind kind = CodeletKind::AmpMatmul;
  ElemType inType = ElemType::F32, outType = ElemType::F32;
  int64_t codeBytes = 0;
  int64_t address = 0;
  /// CodeletKind::UOp only.
  std::vector<UOpField> uopFields;
  std::vector<UInst> uop;
};

/// Tile-local elements [offset, offset + count) of a tensor's home piece
/// (isTensor) or of a buffer, on the tile the vertex runs on.
struct FieldRef {
  bool isTensor = false;
  int32_t object = 0; ///< index into Program::tensors or Program::buffers
  int64_t offset = 0, count = 0;
};

/// One vertex of `codelet`, instantiated on every tile of `tiles` with the
/// same tile-local fields and params.
struct Vertex {
  int32_t codelet = 0;
  TileSet tiles;
  std::vector<FieldRef> fields;
  std::vector<int64_t> params;
  int64_t stateAddress = 0, stateBytes = 0;
};

struct ComputeSet {
  std::string name;
  std::vector<Vertex> vertices;
};

/// One endpoint of a send. A tensor endpoint names logical elements
/// [begin, begin + count) (the tiles are their homes); a buffer endpoint
/// names tile-local elements [begin, begin + count) on every tile of
/// `tiles` (a source buffer names exactly one tile).
struct Endpoint {
  bool isTensor = false;
  int32_t object = 0;
  int64_t begin = 0;
  TileSet tiles; ///< buffers only
};

/// `count` elements from `src` to `dst` (a tensor range or the same offset
/// on every destination tile: one send serves every tile muxing it).
///
/// A tensor source may be a block of `rows` rows of count / rows elements,
/// row r starting at src.begin + r × rowStride (rowStride >= the row's
/// length); the rows land one after another at the destination. In run k
/// (from 0) of the innermost Repeat around the Copy step that runs the
/// exchange, the source starts advance × k elements further on.
struct Send {
  Endpoint src, dst;
  int64_t count = 0;
  int64_t rows = 1, rowStride = 0, advance = 0;
};

struct Exchange {
  std::string name;
  std::vector<Send> sends;
  /// Descriptors on each participating tile: at one address, `descriptorBytes`
  /// per tile (the most any tile needs).
  int64_t descriptorAddress = 0, descriptorBytes = 0;
  /// When each transfer runs (ExchangeSchedule.h): for each run of the
  /// innermost Repeat around the Copy when a send advances (copyRuns), else
  /// for the one run, the round of every transfer of exchangeTransfers.
  std::vector<std::vector<int32_t>> schedule;
};

/// The control program: a tree of steps.
enum class StepKind : uint8_t {
  Sequence = 0, ///< body in order
  Repeat = 1,   ///< body `count` times
  Execute = 2,  ///< compute set `ref`
  Copy = 3,     ///< exchange `ref`
  Sync = 4,     ///< all tiles meet (BSP)
  If = 5,       ///< body if element 0 of tensor `ref` is nonzero, else elseBody
  StreamIn = 6, ///< host stream `stream` into tensor `ref`
  StreamOut = 7 ///< tensor `ref` to host stream `stream`
};

struct Step {
  StepKind kind = StepKind::Sequence;
  int64_t count = 0;
  int32_t ref = -1;
  std::string stream;
  std::vector<Step> body, elseBody;
};

struct Program;

/// For each exchange, the most runs of the innermost Repeat around a Copy
/// of it (1 for a Copy outside any Repeat, or none): how far its sends'
/// advance carries them. Steps nested deeper than `maxDepth` are not
/// walked.
std::vector<int64_t> copyRuns(const Program &program, int maxDepth);

/// The elements a send's source reaches from its begin, in its last run
/// `runs - 1`: its last row's end plus the advance (saturating).
int64_t sourceExtent(const Send &send, int64_t runs);

struct Program {
  std::string name;
  Target target;
  std::vector<Tensor> tensors;
  std::vector<Buffer> buffers;
  std::vector<Codelet> codelets;
  std::vector<ComputeSet> computeSets;
  std::vector<Exchange> exchanges;
  Step main; ///< a Sequence
  /// A training program's host side (both empty: none): the runtime's plan
  /// tables (synpl/Runtime/PlanFormat.h) of its pools, slots, inits,
  /// ingests and reports, which the executor (synpl_rt_main_device) binds
  /// to drive main step by step. Slot S is tensor S; an ingest's slot is
  /// streamed in under its own name at the head of main, a report's
  /// streamed out under its own name at the end; kTrainingStream gives
  /// each step its mode. The simulator itself never reads them.
  std::vector<int64_t> hostTable; ///< int64 words
  std::string hostStrings;        ///< NUL-terminated names; ends with a NUL
};

/// The stream a training program's main reads its mode from before each
/// step: one value, 1 for a training step, 0 for an evaluation step (the
/// state-writing and training-only kernels run under an If on it).
inline constexpr const char *kTrainingStream = "synpl.training";

} // namespace synpl::ipu21::sim

#endif // SYNPL_TARGET_IPU21_PROGRAM_H
