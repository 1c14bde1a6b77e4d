//===- TranslateUOp.cpp - A generic codelet's body as UOp instructions ----===//
//
// One sim::UInst per UOp, in body order, so that instruction i's result is
// register i (the body is SSA and flat: RANGE/END and IF/ENDIF bracket).
// A buffer is not a register: INDEX names its field, LOAD and STORE the
// field of the INDEX they go through.
//
//===----------------------------------------------------------------------===//
#include "TranslateUOp.h"

#include "synpl/Dialect/IPU21/IPU21Codelets.h"

#include "mlir/IR/BuiltinTypes.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace synpl;
using namespace synpl::ipu21;

sim::ElemType synpl::ipu21::elemTypeOf(Type type) {
  if (type.isF32())
    return sim::ElemType::F32;
  if (type.isF16())
    return sim::ElemType::F16;
  if (isa<Float8E4M3FNType>(type))
    return sim::ElemType::F8E4M3;
  if (isa<Float8E5M2Type>(type))
    return sim::ElemType::F8E5M2;
  if (type.isInteger(32))
    return sim::ElemType::I32;
  return sim::ElemType::U8; // i1, i8 and ui8: the verifiers admit nothing else
}

static std::optional<sim::UType> utypeOf(Type type) {
  if (type.isF32())
    return sim::UType::F32;
  if (type.isF16())
    return sim::UType::F16;
  if (type.isIndex())
    return sim::UType::Index;
  if (type.isInteger(1))
    return sim::UType::I1;
  if (type.isUnsignedInteger(8))
    return sim::UType::U8;
  if (type.isInteger(8))
    return sim::UType::I8;
  if (type.isUnsignedInteger(32))
    return sim::UType::U32;
  if (type.isInteger(32))
    return sim::UType::I32;
  if (type.isUnsignedInteger(64))
    return sim::UType::U64;
  if (type.isInteger(64))
    return sim::UType::I64;
  return std::nullopt;
}

LogicalResult synpl::ipu21::translateUOpCodelet(CodeletOp codelet, sim::Codelet &out) {
  Block &body = *codelet.getUOpBody();
  int64_t numInputs = *codelet.getNumInputs();
  for (auto [name, arg] : llvm::zip(*codelet.getFieldNames(), body.getArguments())) {
    auto buf = cast<l0uop::BufType>(arg.getType());
    sim::UOpField field;
    field.name = cast<StringAttr>(name).getValue().str();
    field.type = elemTypeOf(buf.getElementType());
    field.shape.assign(buf.getShape().begin(), buf.getShape().end());
    field.output = arg.getArgNumber() >= numInputs;
    out.uopFields.push_back(std::move(field));
  }

  llvm::DenseMap<Value, int32_t> reg;
  llvm::DenseMap<Operation *, int32_t> parallelSlot;
  for (auto [i, range] : llvm::enumerate(parallelRanges(codelet)))
    parallelSlot[range] = static_cast<int32_t>(i);
  auto r = [&](Value v) -> int32_t {
    auto it = reg.find(v);
    return it == reg.end() ? -1 : it->second;
  };
  for (Operation &op : body) {
    sim::UInst in;
    Type resultType = op.getNumResults() ? op.getResult(0).getType() : Type();
    auto typeOf = [&](Type t) -> FailureOr<sim::UType> {
      if (std::optional<sim::UType> u = utypeOf(t))
        return *u;
      return op.emitOpError() << "computes in " << t << ", which the program file has no form for";
    };
    if (resultType && !isa<l0uop::PtrType>(resultType)) {
      FailureOr<sim::UType> t = typeOf(resultType);
      if (failed(t))
        return failure();
      in.type = *t;
    }
    auto operand = [&](unsigned i) { return r(op.getOperand(i)); };
    auto unary = [&](sim::UOpcode code) { in.op = code, in.a = operand(0); };
    auto binary = [&](sim::UOpcode code) { in.op = code, in.a = operand(0), in.b = operand(1); };
    auto src = [&]() -> LogicalResult {
      FailureOr<sim::UType> t = typeOf(op.getOperand(0).getType());
      if (failed(t))
        return failure();
      in.srcType = *t;
      return success();
    };
    LogicalResult ok = llvm::TypeSwitch<Operation *, LogicalResult>(&op)
        .Case([&](l0uop::ConstOp c) -> LogicalResult {
          in.op = sim::UOpcode::Const;
          if (auto f = dyn_cast<FloatAttr>(c.getValue()))
            in.fimm = f.getValueAsDouble();
          else if (auto i = dyn_cast<IntegerAttr>(c.getValue()))
            in.iimm = i.getValue().getSExtValue();
          else
            return c.emitOpError() << "constant " << c.getValue() << " has no program-file form";
          return success();
        })
        .Case([&](l0uop::RangeOp range) -> LogicalResult {
          in.op = sim::UOpcode::Range;
          in.lo = range.getLower(), in.hi = range.getUpper(), in.step = range.getStep();
          auto slot = parallelSlot.find(range);
          in.par = slot == parallelSlot.end() ? -1 : slot->second;
          return success();
        })
        .Case([&](l0uop::EndOp end) -> LogicalResult {
          in.op = sim::UOpcode::End, in.a = r(end.getRange());
          return success();
        })
        .Case([&](l0uop::IfOp c) -> LogicalResult {
          in.op = sim::UOpcode::If, in.a = r(c.getCondition());
          return success();
        })
        .Case([&](l0uop::EndIfOp) -> LogicalResult {
          in.op = sim::UOpcode::EndIf;
          return success();
        })
        .Case([&](l0uop::IndexOp index) -> LogicalResult {
          auto arg = dyn_cast<BlockArgument>(index.getBuffer());
          if (!arg || arg.getOwner() != &body)
            return index.emitOpError() << "indexes a value that is not a field of the codelet";
          in.op = sim::UOpcode::Index;
          in.type = sim::UType::Index;
          in.field = static_cast<int32_t>(arg.getArgNumber());
          for (Value i : index.getIndices())
            in.indices.push_back(r(i));
          return success();
        })
        .Case([&](l0uop::LoadOp load) -> LogicalResult {
          auto index = load->getOperand(0).getDefiningOp<l0uop::IndexOp>();
          if (!index)
            return load.emitOpError() << "loads through a pointer that is not an INDEX";
          in.op = sim::UOpcode::Load, in.a = operand(0);
          in.field = static_cast<int32_t>(cast<BlockArgument>(index.getBuffer()).getArgNumber());
          return success();
        })
        .Case([&](l0uop::StoreOp store) -> LogicalResult {
          auto index = store->getOperand(0).getDefiningOp<l0uop::IndexOp>();
          if (store->getNumOperands() != 2 || !index)
            return store.emitOpError() << "stores through a pointer that is not an INDEX";
          FailureOr<sim::UType> t = typeOf(store->getOperand(1).getType());
          if (failed(t))
            return failure();
          in.op = sim::UOpcode::Store, in.type = *t, in.a = operand(0), in.b = operand(1);
          in.field = static_cast<int32_t>(cast<BlockArgument>(index.getBuffer()).getArgNumber());
          return success();
        })
        .Case([&](l0uop::AddOp) -> LogicalResult { return binary(sim::UOpcode::Add), success(); })
        .Case([&](l0uop::MulOp) -> LogicalResult { return binary(sim::UOpcode::Mul), success(); })
        .Case([&](l0uop::MulAccOp) -> LogicalResult {
          in.op = sim::UOpcode::MulAcc, in.a = operand(0), in.b = operand(1), in.c = operand(2);
          return success();
        })
        .Case([&](l0uop::NegOp) -> LogicalResult { return unary(sim::UOpcode::Neg), success(); })
        .Case([&](l0uop::ReciprocalOp) -> LogicalResult { return unary(sim::UOpcode::Reciprocal), success(); })
        .Case([&](l0uop::MaxOp) -> LogicalResult { return binary(sim::UOpcode::Max), success(); })
        .Case([&](l0uop::ModOp) -> LogicalResult { return binary(sim::UOpcode::Mod), success(); })
        .Case([&](l0uop::DivOp) -> LogicalResult { return binary(sim::UOpcode::Div), success(); })
        .Case([&](l0uop::CmpLtOp) -> LogicalResult { return binary(sim::UOpcode::CmpLt), src(); })
        .Case([&](l0uop::CmpNeOp) -> LogicalResult { return binary(sim::UOpcode::CmpNe), src(); })
        .Case([&](l0uop::WhereOp) -> LogicalResult {
          in.op = sim::UOpcode::Where, in.a = operand(0), in.b = operand(1), in.c = operand(2);
          return success();
        })
        .Case([&](l0uop::Exp2Op) -> LogicalResult { return unary(sim::UOpcode::Exp2), success(); })
        .Case([&](l0uop::Log2Op) -> LogicalResult { return unary(sim::UOpcode::Log2), success(); })
        .Case([&](l0uop::SinOp) -> LogicalResult { return unary(sim::UOpcode::Sin), success(); })
        .Case([&](l0uop::SqrtOp) -> LogicalResult { return unary(sim::UOpcode::Sqrt), success(); })
        .Case([&](l0uop::CastOp) -> LogicalResult { return unary(sim::UOpcode::Cast), src(); })
        .Case([&](l0uop::BitcastOp) -> LogicalResult { return unary(sim::UOpcode::Bitcast), src(); })
        .Case([&](l0uop::ReduceOp reduce) -> LogicalResult {
          in.op = sim::UOpcode::Reduce;
          in.iimm = static_cast<int64_t>(reduce.getKind());
          in.a = r(reduce.getValue()), in.b = r(reduce.getRange()), in.c = r(reduce.getInit());
          return success();
        })
        .Default([&](Operation *other) -> LogicalResult {
          return other->emitOpError() << "has no form in the program file's generic codelet";
        });
    if (failed(ok))
      return failure();
    for (Value result : op.getResults())
      reg[result] = static_cast<int32_t>(out.uop.size());
    out.uop.push_back(std::move(in));
  }
  return success();
}
