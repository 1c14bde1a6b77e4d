//===- IPU21Ops.cpp - The ipu21 dialect's operations ------------------------===//
//
// The custom syntax (addresses, tile ranges, mappings, fields, parameters)
// and the checks each op makes on its own. The checks that need the graph's
// symbols and the whole memory map are in IPU21Graph.cpp; the programs' in
// IPU21Programs.cpp.
//
//===----------------------------------------------------------------------===//
#include "synpl/Dialect/IPU21/IPU21Codelets.h"
#include "synpl/Dialect/IPU21/IPU21Ops.h"
#include "synpl/Support/Property.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/OpImplementation.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/Format.h"

using namespace mlir;
using namespace synpl;
using namespace synpl::ipu21;

//===----------------------------------------------------------------------===//
// Custom syntax
//===----------------------------------------------------------------------===//

/// An address, printed in hex: `0x4C000`.
static ParseResult parseAddress(OpAsmParser &parser, IntegerAttr &attr) {
  int64_t value = 0;
  if (parser.parseInteger(value))
    return failure();
  attr = parser.getBuilder().getI64IntegerAttr(value);
  return success();
}
static void printAddress(OpAsmPrinter &p, Operation *, IntegerAttr attr) {
  int64_t value = attr.getValue().getSExtValue();
  if (value < 0)
    p << value;
  else
    p << llvm::format("0x%llX", static_cast<unsigned long long>(value));
}

/// A codelet's kind and types: `amp_matmul(f16 -> f32)`; the generic
/// codelet is `uop` alone (its types are its body's; both attributes hold
/// `none`).
static ParseResult parseKindTypes(OpAsmParser &parser, CodeletKindAttr &kind, TypeAttr &in,
                                  TypeAttr &out) {
  StringRef word;
  SMLoc loc = parser.getCurrentLocation();
  if (parser.parseKeyword(&word))
    return failure();
  std::optional<CodeletKind> k = symbolizeCodeletKind(word);
  if (!k)
    return parser.emitError(loc) << "unknown codelet kind '" << word << "'";
  kind = CodeletKindAttr::get(parser.getContext(), *k);
  if (*k == CodeletKind::uop) {
    in = out = TypeAttr::get(parser.getBuilder().getNoneType());
    return success();
  }
  Type inType, outType;
  if (parser.parseLParen() || parser.parseType(inType) || parser.parseArrow() ||
      parser.parseType(outType) || parser.parseRParen())
    return failure();
  in = TypeAttr::get(inType);
  out = TypeAttr::get(outType);
  return success();
}
static void printKindTypes(OpAsmPrinter &p, Operation *, CodeletKindAttr kind, TypeAttr in,
                           TypeAttr out) {
  p << stringifyCodeletKind(kind.getValue());
  if (kind.getValue() != CodeletKind::uop)
    p << '(' << in.getValue() << " -> " << out.getValue() << ')';
}

/// `a, b)` after its `[`: a half-open range of two integers.
static ParseResult parseHalfOpenTail(OpAsmParser &parser, int64_t &lo, int64_t &hi) {
  if (parser.parseInteger(lo) || parser.parseComma() || parser.parseInteger(hi) ||
      parser.parseRParen())
    return failure();
  return success();
}

/// `[a, b) [c, d) ...` (at least one), appended to `flat` as pairs.
static ParseResult parseHalfOpenList(OpAsmParser &parser, SmallVectorImpl<int64_t> &flat) {
  if (parser.parseLSquare())
    return failure();
  do {
    int64_t lo = 0, hi = 0;
    if (parseHalfOpenTail(parser, lo, hi))
      return failure();
    flat.append({lo, hi});
  } while (succeeded(parser.parseOptionalLSquare()));
  return success();
}

static void printHalfOpenList(OpAsmPrinter &p, ArrayRef<int64_t> flat) {
  for (size_t i = 0; i + 1 < flat.size(); i += 2)
    p << (i ? " [" : "[") << flat[i] << ", " << flat[i + 1] << ")";
}

/// `[0, 8) [16, 24)`: tile ranges, stored as flat (first, end) pairs.
static ParseResult parseTileRanges(OpAsmParser &parser, DenseI64ArrayAttr &attr) {
  SmallVector<int64_t> flat;
  if (parseHalfOpenList(parser, flat))
    return failure();
  attr = parser.getBuilder().getDenseI64ArrayAttr(flat);
  return success();
}
static void printTileRanges(OpAsmPrinter &p, Operation *, DenseI64ArrayAttr attr) {
  printHalfOpenList(p, attr.asArrayRef());
}

/// `blocked(first_tile = T, per_tile = P)`, `grid(first_tile = T, rows = R,
/// cols = C[, column_major])` or `{tile: [a, b) [c, d), ...}`.
static ParseResult parseMapping(OpAsmParser &parser, DenseI64ArrayAttr &intervals,
                                DenseI64ArrayAttr &blocked, DenseI64ArrayAttr &grid) {
  Builder &b = parser.getBuilder();
  if (succeeded(parser.parseOptionalKeyword("grid"))) {
    int64_t first = 0, rows = 0, cols = 0, columnMajor = 0;
    if (parser.parseLParen() || parser.parseKeyword("first_tile") || parser.parseEqual() ||
        parser.parseInteger(first) || parser.parseComma() || parser.parseKeyword("rows") ||
        parser.parseEqual() || parser.parseInteger(rows) || parser.parseComma() ||
        parser.parseKeyword("cols") || parser.parseEqual() || parser.parseInteger(cols))
      return failure();
    if (succeeded(parser.parseOptionalComma())) {
      if (parser.parseKeyword("column_major"))
        return failure();
      columnMajor = 1;
    }
    if (parser.parseRParen())
      return failure();
    grid = b.getDenseI64ArrayAttr({first, rows, cols, columnMajor});
    return success();
  }
  if (succeeded(parser.parseOptionalKeyword("blocked"))) {
    int64_t first = 0, perTile = 0;
    if (parser.parseLParen() || parser.parseKeyword("first_tile") || parser.parseEqual() ||
        parser.parseInteger(first) || parser.parseComma() || parser.parseKeyword("per_tile") ||
        parser.parseEqual() || parser.parseInteger(perTile) || parser.parseRParen())
      return failure();
    blocked = b.getDenseI64ArrayAttr({first, perTile});
    return success();
  }
  SmallVector<int64_t> flat;
  auto parseTile = [&]() -> ParseResult {
    int64_t tile = 0;
    SmallVector<int64_t> ranges;
    if (parser.parseInteger(tile) || parser.parseColon() || parseHalfOpenList(parser, ranges))
      return failure();
    for (size_t i = 0; i < ranges.size(); i += 2)
      flat.append({tile, ranges[i], ranges[i + 1]});
    return success();
  };
  if (parser.parseCommaSeparatedList(OpAsmParser::Delimiter::Braces, parseTile))
    return failure();
  intervals = b.getDenseI64ArrayAttr(flat);
  return success();
}
static void printMapping(OpAsmPrinter &p, Operation *, DenseI64ArrayAttr intervals,
                         DenseI64ArrayAttr blocked, DenseI64ArrayAttr grid) {
  if (grid && grid.size() == 4) {
    p << "grid(first_tile = " << grid[0] << ", rows = " << grid[1] << ", cols = " << grid[2]
      << (grid[3] ? ", column_major)" : ")");
    return;
  }
  if (blocked && blocked.size() == 2) {
    p << "blocked(first_tile = " << blocked[0] << ", per_tile = " << blocked[1] << ")";
    return;
  }
  p << "{";
  ArrayRef<int64_t> flat = intervals ? intervals.asArrayRef() : ArrayRef<int64_t>();
  for (size_t i = 0; i + 2 < flat.size(); i += 3) {
    if (i && flat[i] == flat[i - 3])
      p << " ";
    else
      p << (i ? ", " : "") << flat[i] << ": ";
    p << "[" << flat[i + 1] << ", " << flat[i + 2] << ")";
  }
  p << "}";
}

/// `(name = @object[b, e), ...)`.
static ParseResult parseFields(OpAsmParser &parser, ArrayAttr &names, ArrayAttr &objects,
                               DenseI64ArrayAttr &ranges) {
  Builder &b = parser.getBuilder();
  SmallVector<Attribute> nameList, objectList;
  SmallVector<int64_t> flat;
  auto parseField = [&]() -> ParseResult {
    std::string name;
    FlatSymbolRefAttr object;
    int64_t lo = 0, hi = 0;
    if (parser.parseKeywordOrString(&name) || parser.parseEqual() ||
        parser.parseAttribute(object) || parser.parseLSquare() ||
        parseHalfOpenTail(parser, lo, hi))
      return failure();
    nameList.push_back(b.getStringAttr(name));
    objectList.push_back(object);
    flat.append({lo, hi});
    return success();
  };
  if (parser.parseCommaSeparatedList(OpAsmParser::Delimiter::Paren, parseField))
    return failure();
  names = b.getArrayAttr(nameList);
  objects = b.getArrayAttr(objectList);
  ranges = b.getDenseI64ArrayAttr(flat);
  return success();
}
static void printFields(OpAsmPrinter &p, Operation *, ArrayAttr names, ArrayAttr objects,
                        DenseI64ArrayAttr ranges) {
  p << "(";
  for (unsigned i = 0; i < names.size(); ++i) {
    if (i)
      p << ", ";
    p << cast<StringAttr>(names[i]).getValue() << " = ";
    p.printAttribute(objects[i]);
    if (2 * i + 1 < static_cast<unsigned>(ranges.size()))
      p << "[" << ranges[2 * i] << ", " << ranges[2 * i + 1] << ")";
  }
  p << ")";
}

/// `(name = value, ...)`: integer or float parameters.
static ParseResult parseParams(OpAsmParser &parser, DictionaryAttr &params) {
  Builder &b = parser.getBuilder();
  SmallVector<NamedAttribute> list;
  auto parseParam = [&]() -> ParseResult {
    std::string name;
    Attribute value;
    if (parser.parseKeywordOrString(&name) || parser.parseEqual() ||
        parser.parseAttribute(value))
      return failure();
    if (!isa<IntegerAttr, FloatAttr>(value))
      return parser.emitError(parser.getCurrentLocation(),
                              "a parameter is an integer or a float");
    list.push_back(b.getNamedAttr(name, value));
    return success();
  };
  if (parser.parseCommaSeparatedList(OpAsmParser::Delimiter::Paren, parseParam))
    return failure();
  params = b.getDictionaryAttr(list);
  return success();
}
static void printParams(OpAsmPrinter &p, Operation *, DictionaryAttr params) {
  p << "(";
  llvm::interleaveComma(params, p, [&](NamedAttribute named) {
    p << named.getName().getValue() << " = ";
    if (auto i = dyn_cast<IntegerAttr>(named.getValue()); i && i.getType().isInteger(64))
      p << i.getValue().getSExtValue();
    else
      p.printAttribute(named.getValue());
  });
  p << ")";
}

#define GET_OP_CLASSES
#include "synpl/Dialect/IPU21/IPU21Ops.cpp.inc"

//===----------------------------------------------------------------------===//
// Shared checks
//===----------------------------------------------------------------------===//

static TargetAttr targetOf(Operation *op) {
  auto graph = op->getParentOfType<GraphOp>();
  return graph ? graph.getTarget() : TargetAttr();
}

/// Tile ranges: pairs, each non-empty, sorted and disjoint, on existing tiles.
static LogicalResult checkTileRanges(Operation *op, ArrayRef<int64_t> flat, StringRef what,
                                     Property kind, StringRef row) {
  if (flat.empty() || flat.size() % 2)
    return op->emitOpError() << what << " needs at least one [first, end) range";
  TargetAttr target = targetOf(op);
  for (size_t i = 0; i < flat.size(); i += 2) {
    if (flat[i] < 0 || flat[i] >= flat[i + 1])
      return op->emitOpError() << what << " range [" << flat[i] << ", " << flat[i + 1]
                               << ") is empty or negative";
    if (i && flat[i] < flat[i - 1])
      return op->emitOpError() << what << " ranges must be sorted and disjoint";
    if (target && flat[i + 1] > target.getTiles())
      return emitCheckError(op, kind, row)
             << what << " [" << flat[i] << ", " << flat[i + 1] << ") names tile "
             << flat[i + 1] - 1 << ", but the target has " << target.getTiles() << " tiles";
  }
  return success();
}

static LogicalResult checkElementType(Operation *op, Type type) {
  if (!elementBytes(type))
    return op->emitOpError() << "element type " << type
                             << " is not one an IPU tile holds (f32, f16, f8E4M3FN, f8E5M2, "
                                "i32, i8, ui8)";
  return success();
}

//===----------------------------------------------------------------------===//
// ipu21.tensor
//===----------------------------------------------------------------------===//

std::pair<int64_t, int64_t> TensorOp::getMatrixShape() {
  ArrayRef<int64_t> shape = getTensorType().getShape();
  int64_t cols = shape.empty() ? 1 : shape.back();
  return {cols > 0 ? getNumElements() / cols : 0, cols};
}

SmallVector<MappedInterval> TensorOp::getMapping() {
  SmallVector<MappedInterval> out;
  int64_t numel = getNumElements();
  if (auto grid = getGrid(); grid && grid->size() == 4) {
    auto [rows, cols] = getMatrixShape();
    int64_t first = (*grid)[0], br = (*grid)[1], bc = (*grid)[2];
    bool columnMajor = (*grid)[3] != 0;
    if (br <= 0 || bc <= 0)
      return out;
    int64_t mBlocks = (rows + br - 1) / br, nBlocks = (cols + bc - 1) / bc;
    for (int64_t t = 0; t < mBlocks * nBlocks; ++t) {
      int64_t bi = columnMajor ? t % mBlocks : t / nBlocks;
      int64_t bj = columnMajor ? t / mBlocks : t % nBlocks;
      int64_t c0 = bj * bc, c1 = std::min(cols, c0 + bc);
      for (int64_t r = bi * br; r < std::min(rows, (bi + 1) * br); ++r)
        out.push_back({first + t, r * cols + c0, r * cols + c1});
    }
    return out;
  }
  if (auto blocked = getBlocked(); blocked && blocked->size() == 2) {
    int64_t first = (*blocked)[0], perTile = (*blocked)[1];
    if (perTile <= 0)
      return out;
    for (int64_t begin = 0, tile = first; begin < numel; begin += perTile, ++tile)
      out.push_back({tile, begin, std::min(numel, begin + perTile)});
    return out;
  }
  if (auto flat = getIntervals())
    for (size_t i = 0; i + 2 < flat->size(); i += 3)
      out.push_back({(*flat)[i], (*flat)[i + 1], (*flat)[i + 2]});
  llvm::stable_sort(out, [](const MappedInterval &a, const MappedInterval &b) {
    return a.tile < b.tile || (a.tile == b.tile && a.begin < b.begin);
  });
  return out;
}

LogicalResult TensorOp::verify() {
  if (failed(checkElementType(*this, getElementType())))
    return failure();
  int64_t numel = getNumElements();
  if (numel <= 0)
    return emitOpError() << "a tensor holds at least one element";
  if (int(static_cast<bool>(getIntervals())) + int(static_cast<bool>(getBlocked())) +
          int(static_cast<bool>(getGrid())) !=
      1)
    return emitOpError() << "needs exactly one mapping: intervals, blocked or grid";
  int64_t tiles = targetOf(*this) ? targetOf(*this).getTiles() : INT64_MAX;
  if (auto grid = getGrid()) {
    if (grid->size() != 4 || (*grid)[0] < 0 || (*grid)[1] <= 0 || (*grid)[2] <= 0)
      return emitOpError() << "grid mapping needs first_tile >= 0 and positive rows and cols";
    auto [rows, cols] = getMatrixShape();
    int64_t used = ((rows + (*grid)[1] - 1) / (*grid)[1]) * ((cols + (*grid)[2] - 1) / (*grid)[2]);
    if ((*grid)[0] > tiles - used)
      return emitCheckError(*this, Property::Consistency, "IPU.4")
             << "the grid mapping's " << used << " blocks of " << (*grid)[1] << "x" << (*grid)[2]
             << " from tile " << (*grid)[0] << " reach tile " << (*grid)[0] + used - 1
             << ", but the target has " << tiles << " tiles";
    return success();
  }
  if (auto blocked = getBlocked()) {
    if (blocked->size() != 2 || (*blocked)[0] < 0 || (*blocked)[1] <= 0)
      return emitOpError() << "blocked mapping needs first_tile >= 0 and per_tile > 0";
    int64_t first = (*blocked)[0], perTile = (*blocked)[1];
    int64_t used = (numel + perTile - 1) / perTile;
    if (first > tiles - used)
      return emitCheckError(*this, Property::Consistency, "IPU.4")
             << "the blocked mapping puts " << numel << " elements, " << perTile
             << " per tile from tile " << first << ", on tiles up to " << first + used - 1
             << ", but the target has " << tiles << " tiles";
    return success();
  }
  if (getIntervals()->size() % 3)
    return emitOpError() << "intervals are (tile, begin, end) triples";
  SmallVector<MappedInterval> intervals = getMapping();
  for (const MappedInterval &iv : intervals) {
    if (iv.tile < 0 || iv.tile >= tiles)
      return emitCheckError(*this, Property::Consistency, "IPU.4")
             << "elements [" << iv.begin << ", " << iv.end << ") are mapped to tile " << iv.tile
             << ", but the target has " << tiles << " tiles";
    if (iv.begin < 0 || iv.begin >= iv.end || iv.end > numel)
      return emitCheckError(*this, Property::Consistency, "IPU.4")
             << "interval [" << iv.begin << ", " << iv.end << ") on tile " << iv.tile
             << " is empty or outside the tensor's " << numel << " elements";
  }
  llvm::sort(intervals, [](const MappedInterval &a, const MappedInterval &b) {
    return a.begin < b.begin;
  });
  int64_t covered = 0;
  for (size_t i = 0; i < intervals.size(); ++i) {
    const MappedInterval &iv = intervals[i];
    if (iv.begin > covered)
      return emitCheckError(*this, Property::Consistency, "IPU.4")
             << "elements [" << covered << ", " << iv.begin << ") are mapped to no tile";
    if (iv.begin < covered)
      return emitCheckError(*this, Property::Consistency, "IPU.4")
             << "element " << iv.begin << " is mapped to tile " << intervals[i - 1].tile
             << " and to tile " << iv.tile << "; each element has exactly one home";
    covered = iv.end;
  }
  if (covered < numel)
    return emitCheckError(*this, Property::Consistency, "IPU.4")
           << "elements [" << covered << ", " << numel << ") are mapped to no tile";
  return success();
}

//===----------------------------------------------------------------------===//
// ipu21.buffer, ipu21.codelet
//===----------------------------------------------------------------------===//

LogicalResult BufferOp::verify() {
  if (failed(checkElementType(*this, getElemType())))
    return failure();
  if (getElements() <= 0)
    return emitOpError() << "a buffer holds at least one element per tile";
  return checkTileRanges(*this, getTiles(), "buffer tiles", Property::Consistency, "IPU.4");
}

LogicalResult CodeletOp::verify() {
  if (getCodeBytes() <= 0)
    return emitOpError() << "code_bytes must be positive";
  bool generic = getKind() == CodeletKind::uop;
  if (generic != static_cast<bool>(getFieldNames()) ||
      generic != static_cast<bool>(getNumInputs()) || generic == getBody().empty())
    return emitOpError() << (generic ? "a uop codelet has fields, inputs and a body"
                                     : "only a uop codelet has fields, inputs and a body");
  if (generic)
    return success(); // the body's checks are the region verifier's
  Type in = getInType(), out = getOutType();
  if (failed(checkElementType(*this, in)) || failed(checkElementType(*this, out)))
    return failure();
  auto isFloat = [](Type t) { return t.isF32() || t.isF16(); };
  switch (getKind()) {
  case CodeletKind::amp_matmul:
    if (!(in.isF16() || in.isF32() || isFP8(in)) || !isFloat(out) || (in.isF32() && !out.isF32()))
      return emitOpError() << "amp_matmul takes f16, f32 or FP8 inputs and f32 or f16 partials "
                              "(f32 partials for f32 inputs), not "
                           << in << " -> " << out;
    if (isFP8(in)) {
      TargetAttr target = targetOf(*this);
      if (target && target.getArch() != "ipu21")
        return emitCheckError(*this, Property::Consistency, "IPU.7")
               << "FP8 AMP (" << in << ") exists only on ipu21, and the target is "
               << target.getArch();
    }
    break;
  case CodeletKind::reduce_add:
    if (!isFloat(in) || !isFloat(out))
      return emitOpError() << "reduce_add sums f32 or f16 partials, not " << in << " -> " << out;
    break;
  case CodeletKind::copy:
    break;
  case CodeletKind::fill:
    if (in != out)
      return emitOpError() << "fill writes one type: in_type and out_type must agree";
    break;
  case CodeletKind::uop:
    break;
  }
  return success();
}

LogicalResult CodeletOp::verifyRegions() {
  return getKind() == CodeletKind::uop ? verifyUOpCodeletBody(*this) : success();
}

//===----------------------------------------------------------------------===//
// ipu21.vertex
//===----------------------------------------------------------------------===//

int64_t VertexOp::getStateBytes() {
  int64_t bytes = 4 + 8 * static_cast<int64_t>(getFieldNames().size()) +
                  4 * static_cast<int64_t>(getParams().size());
  return (bytes + 7) / 8 * 8;
}

int VertexOp::getFieldIndex(StringRef name) {
  for (auto [i, attr] : llvm::enumerate(getFieldNames()))
    if (cast<StringAttr>(attr).getValue() == name)
      return static_cast<int>(i);
  return -1;
}

std::pair<int64_t, int64_t> VertexOp::getFieldRange(unsigned i) {
  return {getFieldRanges()[2 * i], getFieldRanges()[2 * i + 1]};
}

FlatSymbolRefAttr VertexOp::getFieldObject(unsigned i) {
  return cast<FlatSymbolRefAttr>(getFieldObjects()[i]);
}

int64_t VertexOp::getParam(StringRef name) {
  if (auto attr = dyn_cast_or_null<IntegerAttr>(getParams().get(name)))
    return attr.getValue().getSExtValue();
  return 0;
}

LogicalResult VertexOp::verify() {
  if (failed(checkTileRanges(*this, getTiles(), "vertex tiles", Property::Consistency, "IPU.9")))
    return failure();
  size_t n = getFieldNames().size();
  if (getFieldObjects().size() != n || getFieldRanges().size() != 2 * n)
    return emitOpError() << "fields need a name, an object and a range each";
  for (unsigned i = 0; i < n; ++i) {
    auto [lo, hi] = getFieldRange(i);
    if (lo < 0 || lo >= hi)
      return emitCheckError(*this, Property::Safety, "IPU.3")
             << "field '" << cast<StringAttr>(getFieldNames()[i]).getValue() << "' binds ["
             << lo << ", " << hi << "), an empty or negative range";
  }
  if (getStateAddress() < 0)
    return emitOpError() << "the state address is negative";
  return success();
}

//===----------------------------------------------------------------------===//
// ipu21.send, ipu21.repeat
//===----------------------------------------------------------------------===//

LogicalResult SendOp::verify() {
  if (getSrcBegin() < 0 || getSrcBegin() >= getSrcEnd() || getDstBegin() < 0 ||
      getDstBegin() >= getDstEnd())
    return emitCheckError(*this, Property::Consistency, "IPU.5")
           << "a send moves a non-empty, non-negative range";
  if (getRows() && (*getRows() < 1 || *getRowStride() < getRowLength()))
    return emitCheckError(*this, Property::Consistency, "IPU.5")
           << "a block of " << *getRows() << " rows of " << getRowLength()
           << " elements needs at least one row and a stride of at least the row";
  if (getAdvance() && *getAdvance() < 0)
    return emitCheckError(*this, Property::Consistency, "IPU.5")
           << "advance " << *getAdvance() << " is negative";
  if (getCount() != getDstEnd() - getDstBegin())
    return emitCheckError(*this, Property::Consistency, "IPU.5")
           << "the source has " << getCount() << " elements and the destination "
           << getDstEnd() - getDstBegin();
  if (auto tile = getSrcTile()) {
    TargetAttr target = targetOf(*this);
    if (*tile < 0 || (target && *tile >= target.getTiles()))
      return emitCheckError(*this, Property::Consistency, "IPU.5")
             << "sends from tile " << *tile << ", which the target does not have";
    if (getRows() || getAdvance())
      return emitCheckError(*this, Property::Consistency, "IPU.5")
             << "rows and advance read tensors; a buffer source is one range on one tile";
  }
  if (auto tiles = getDstTiles())
    return checkTileRanges(*this, *tiles, "destination tiles", Property::Consistency, "IPU.5");
  return success();
}

LogicalResult RepeatOp::verify() {
  if (getCount() < 1)
    return emitOpError() << "repeats its body at least once, not " << getCount() << " times";
  return success();
}
