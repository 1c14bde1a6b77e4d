//===- IPU21Codelets.cpp - What each codelet kind declares ------------------===//
#include "synpl/Dialect/IPU21/IPU21Codelets.h"

#include "mlir/IR/BuiltinTypes.h"

using namespace mlir;
using namespace synpl::ipu21;

namespace {
// amp_matmul: poplibs' ConvPartial1x1Out declares its output 16-byte aligned
// and interleaved, the weights loaded with ld128putcs (interleaved, 16-byte
// aligned), the input 8-byte aligned, and elem(**in) != elem(**out).
constexpr FieldSpec kAmpFields[] = {{"in", false, false, 8, false},
                                    {"weights", false, false, 16, true},
                                    {"out", true, true, 16, true}};
constexpr llvm::StringLiteral kAmpParams[] = {"m", "n", "k", "accumulate"};
constexpr std::pair<unsigned, unsigned> kAmpDistinct[] = {{0, 2}};

// reduce_add: partials read two at a time (ld128 needs interleaved memory).
constexpr FieldSpec kReduceFields[] = {{"partials", false, false, 8, true},
                                       {"out", true, true, 8, false}};
constexpr llvm::StringLiteral kReduceParams[] = {"p", "n", "accumulate"};

constexpr FieldSpec kCopyFields[] = {{"src", false, false, 0, false},
                                     {"dst", true, true, 0, false}};
constexpr llvm::StringLiteral kCopyParams[] = {"count"};

constexpr FieldSpec kFillFields[] = {{"dst", true, true, 0, false}};
constexpr llvm::StringLiteral kFillParams[] = {"count", "value"};

const CodeletSpec kSpecs[] = {
    {kAmpFields, kAmpParams, kAmpDistinct},
    {kReduceFields, kReduceParams, {}},
    {kCopyFields, kCopyParams, {}},
    {kFillFields, kFillParams, {}},
    {{}, {}, {}}, // uop: its fields and parameters are its body's
};
} // namespace

const CodeletSpec &synpl::ipu21::codeletSpec(CodeletKind kind) {
  return kSpecs[static_cast<unsigned>(kind)];
}

int64_t synpl::ipu21::expectedFieldElements(CodeletKind kind, unsigned field,
                                            function_ref<int64_t(StringRef)> param) {
  switch (kind) {
  case CodeletKind::amp_matmul: {
    int64_t m = param("m"), n = param("n"), k = param("k");
    return field == 0 ? m * k : field == 1 ? k * n : m * n;
  }
  case CodeletKind::reduce_add:
    return field == 0 ? param("p") * param("n") : param("n");
  case CodeletKind::copy:
  case CodeletKind::fill:
    return param("count");
  case CodeletKind::uop:
    break;
  }
  return 0;
}

int64_t synpl::ipu21::rptTripCount(CodeletKind kind, function_ref<int64_t(StringRef)> param,
                                   int64_t vectorLanes) {
  auto ceilDiv = [](int64_t a, int64_t b) { return (a + b - 1) / b; };
  switch (kind) {
  case CodeletKind::amp_matmul:
    return param("m"); // one AMP row per iteration
  case CodeletKind::reduce_add:
    return ceilDiv(param("n"), vectorLanes);
  case CodeletKind::copy:
  case CodeletKind::fill:
    return ceilDiv(param("count"), vectorLanes);
  case CodeletKind::uop:
    break; // loops of UOps, not one rpt loop
  }
  return 0;
}

std::optional<int64_t> synpl::ipu21::elementBytes(Type type) {
  if (type.isF32() || type.isInteger(32))
    return 4;
  if (type.isF16())
    return 2;
  if (isFP8(type) || type.isInteger(8))
    return 1;
  return std::nullopt;
}

bool synpl::ipu21::isFP8(Type type) {
  return isa<Float8E4M3FNType, Float8E5M2Type>(type);
}
