//===- IPU21UOpCodelet.cpp - The generic codelet's body (row IPU.11) ------===//
//
// A `uop` codelet runs a UOp body on a tile: the same scalar language as an
// l0uop.kernel's body, over windows of its buffers. Its body must pass row
// L0.1's structural checks (l0uop::verifyUOpBody) and hold only what a tile
// runs: scalar UOps on types a tile computes in, buffers of types a tile
// stores, no block-level cooperation (BARRIER, shared buffers) and no
// escape hatch (CUSTOM). A REDUCE's init must be defined before its RANGE:
// a tile starts the fold with it, so that the sum is `init + v0 + v1 ...`
// in that order, as the host's kernels fold.
//
//===----------------------------------------------------------------------===//
#include "synpl/Dialect/IPU21/IPU21Codelets.h"
#include "synpl/Support/Property.h"

#include "mlir/IR/BuiltinTypes.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/ADT/StringExtras.h"

using namespace mlir;
using namespace synpl;
using namespace synpl::ipu21;

SmallVector<l0uop::RangeOp> synpl::ipu21::parallelRanges(CodeletOp codelet) {
  SmallVector<l0uop::RangeOp> ranges;
  if (Block *body = codelet.getUOpBody())
    for (auto range : body->getOps<l0uop::RangeOp>())
      if (range.getKind() != l0uop::RangeKind::loop)
        ranges.push_back(range);
  return ranges;
}

SmallVector<std::string> synpl::ipu21::uopParamNames(CodeletOp codelet) {
  SmallVector<std::string> names;
  for (size_t i = 0, e = parallelRanges(codelet).size(); i < e; ++i) {
    names.push_back("p" + std::to_string(i) + "_lo");
    names.push_back("p" + std::to_string(i) + "_hi");
  }
  Block *body = codelet.getUOpBody();
  if (!body || !codelet.getFieldNames())
    return names;
  for (auto [name, arg] : llvm::zip(*codelet.getFieldNames(), body->getArguments())) {
    StringRef field = cast<StringAttr>(name).getValue();
    auto buf = dyn_cast<l0uop::BufType>(arg.getType());
    for (int64_t d = 0, rank = buf ? buf.getRank() : 0; d < rank; ++d) {
      names.push_back((field + "_lo" + Twine(d)).str());
      names.push_back((field + "_ext" + Twine(d)).str());
    }
  }
  return names;
}

bool synpl::ipu21::fieldStorageMatches(Type field, Type object) {
  return field.isInteger(1) ? object.isInteger(8) : field == object;
}

bool synpl::ipu21::isTileValueType(Type t) {
  return t.isF32() || t.isF16() || t.isIndex() || t.isInteger(1) || t.isInteger(8) ||
         t.isInteger(32) || t.isInteger(64);
}
bool synpl::ipu21::isTileBufferElement(Type t) {
  return t.isF32() || t.isF16() || t.isInteger(1) || t.isInteger(8) || t.isInteger(32);
}

bool synpl::ipu21::isNonTileUOp(Operation &op) {
  return isa<l0uop::BarrierOp, l0uop::CustomOp, l0uop::WmmaOp, l0uop::VectorizeOp,
             l0uop::GepOp>(op);
}

static bool isIdentifier(StringRef name) {
  if (name.empty() || !(llvm::isAlpha(name.front()) || name.front() == '_'))
    return false;
  return llvm::all_of(name, [](char c) { return llvm::isAlnum(c) || c == '_'; });
}

LogicalResult synpl::ipu21::verifyUOpCodeletBody(CodeletOp codelet) {
  auto error = [&](Operation *at) {
    return emitCheckError(at, Property::Consistency, "IPU.11");
  };
  Block &body = *codelet.getUOpBody();
  ArrayAttr names = *codelet.getFieldNames();
  int64_t numInputs = *codelet.getNumInputs();
  if (body.getNumArguments() != names.size())
    return error(codelet) << "the body takes " << body.getNumArguments()
                          << " buffers but `fields` names " << names.size();
  if (numInputs < 0 || numInputs > static_cast<int64_t>(names.size()))
    return error(codelet) << "inputs " << numInputs << " is not a count of the "
                          << names.size() << " fields";
  llvm::StringSet<> seen;
  for (auto [name, arg] : llvm::zip(names, body.getArguments())) {
    StringRef field = cast<StringAttr>(name).getValue();
    if (!isIdentifier(field) || !seen.insert(field).second)
      return error(codelet) << "field name '" << field
                            << "' is not a fresh identifier (parameters are named after it)";
    auto buf = dyn_cast<l0uop::BufType>(arg.getType());
    if (!buf)
      return error(codelet) << "field '" << field << "' has type " << arg.getType()
                            << "; fields are !l0uop.buf";
    if (!isTileBufferElement(buf.getElementType()))
      return error(codelet) << "field '" << field << "' holds " << buf.getElementType()
                            << ", which a tile does not store (f32, f16, i32, 8-bit, i1)";
  }

  auto limit = [](l0uop::RangeKind) -> std::optional<int64_t> { return std::nullopt; };
  auto describeLimit = [](InFlightDiagnostic &) {};
  auto describeInput = [&](InFlightDiagnostic &diag, unsigned i) {
    diag << "field '" << cast<StringAttr>(names[i]).getValue() << "'";
  };
  if (failed(l0uop::verifyUOpBody(
          body, l0uop::UOpBodyContract{static_cast<unsigned>(numInputs), limit,
                                       describeLimit, describeInput})))
    return failure();

  for (Operation &op : body) {
    if (isNonTileUOp(op))
      return error(&op) << "'" << op.getName()
                        << "' does not run in a generic codelet: it runs scalar UOps, one "
                           "worker each, without block-level cooperation or escapes";
    for (Type t : llvm::concat<Type>(op.getOperandTypes(), op.getResultTypes()))
      if (!isa<l0uop::BufType, l0uop::PtrType>(t) && !isTileValueType(t))
        return error(&op) << "computes in " << t
                          << ", which a tile does not (f32, f16, i1, i8, i32, i64, index)";
    if (auto reduce = dyn_cast<l0uop::ReduceOp>(op)) {
      Operation *init = reduce.getInit().getDefiningOp();
      Operation *range = reduce.getRange().getDefiningOp();
      if (!init || !range || !init->isBeforeInBlock(range))
        return error(&op) << "REDUCE's init is defined after its RANGE starts; a tile starts "
                             "the fold with it";
    }
  }
  return success();
}
