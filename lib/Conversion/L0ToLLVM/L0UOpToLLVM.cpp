//===- L0UOpToLLVM.cpp - Host codegen of l0uop kernels -----------------------===//
//
// Each l0uop.kernel becomes an llvm.func with the C ABI
//   void @<plan>_<kernel>(ptr noalias align A buf0, ..., i64 begin, i64 end)
// in two steps: the flat UOp sequence is rebuilt as structured upstream IR
// (arith/math/scf/vector, with loads and stores already on LLVM pointers),
// then the upstream conversions take it to the LLVM dialect. The kernels are
// built in a scratch module, so a failure leaves the input untouched.
//
//===----------------------------------------------------------------------===//
#include "synpl/Conversion/Passes.h"

#include "KernelBuilder.h"
#include "synpl/Dialect/L0Ctl/L0CtlOps.h"
#include "synpl/Dialect/L0UOp/L0UOpOps.h"

#include "mlir/Conversion/ArithToLLVM/ArithToLLVM.h"
#include "mlir/Conversion/ControlFlowToLLVM/ControlFlowToLLVM.h"
#include "mlir/Conversion/MathToLLVM/MathToLLVM.h"
#include "mlir/Conversion/ReconcileUnrealizedCasts/ReconcileUnrealizedCasts.h"
#include "mlir/Conversion/SCFToControlFlow/SCFToControlFlow.h"
#include "mlir/Conversion/UBToLLVM/UBToLLVM.h"
#include "mlir/Conversion/VectorToLLVM/ConvertVectorToLLVMPass.h"
#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlow.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/UB/IR/UBOps.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/ADT/TypeSwitch.h"

namespace synpl {
#define GEN_PASS_DEF_CONVERTL0UOPTOLLVM
#include "synpl/Conversion/Passes.h.inc"
} // namespace synpl

using namespace mlir;
using namespace synpl;
using namespace synpl::l0uop;
using namespace synpl::l0tollvm;

namespace {

/// Host intrinsics CUSTOM may name.
constexpr llvm::StringLiteral kTileLoad = "host.tile_load";
constexpr llvm::StringLiteral kTileStore = "host.tile_store";

/// Whether a RANGE makes the host run several threads of one block one
/// after another (so a BARRIER inside it must split it).
static bool serializesBlock(KernelOp kernel, RangeOp range) {
  RangeKind k = range.getKind();
  ArrayRef<int64_t> block = kernel.getBlock();
  switch (k) {
  case RangeKind::local_x:
  case RangeKind::local_y:
  case RangeKind::local_z:
    return range.getTripCount() > 1;
  case RangeKind::global_x:
  case RangeKind::global_y:
  case RangeKind::global_z:
    return block[static_cast<unsigned>(k) - 1] > 1;
  default:
    return false;
  }
}

} // namespace

llvm::DenseMap<Operation *, Fission> synpl::l0tollvm::analyzeBarriers(
    KernelOp kernel, llvm::DenseSet<Operation *> &directBarriers,
    llvm::function_ref<bool(RangeOp)> splits) {
  Block &body = kernel.getBody().front();
  llvm::DenseMap<Operation *, Fission> result;
  // Which serializing ranges hold a barrier directly.
  SmallVector<Operation *> stack;
  for (Operation &op : body) {
    if (isa<RangeOp, IfOp>(op)) {
      stack.push_back(&op);
    } else if (isa<EndOp, EndIfOp>(op)) {
      if (!stack.empty())
        stack.pop_back();
    } else if (isa<BarrierOp>(op) && !stack.empty()) {
      auto range = dyn_cast<RangeOp>(stack.back());
      if (range && splits(range)) {
        result[range];
        directBarriers.insert(&op);
      }
    }
  }
  // Phases, then the values that cross them.
  for (auto &[rangeOp, fission] : result) {
    llvm::DenseMap<Operation *, unsigned> phaseOf;
    unsigned phase = 0, depth = 0;
    for (Operation *op = rangeOp->getNextNode(); op; op = op->getNextNode()) {
      if (auto end = dyn_cast<EndOp>(op);
          end && depth == 0 && end.getRange().getDefiningOp() == rangeOp)
        break;
      if (isa<RangeOp, IfOp>(op))
        ++depth;
      else if (isa<EndOp, EndIfOp>(op))
        --depth;
      else if (depth == 0 && directBarriers.contains(op))
        ++phase;
      phaseOf[op] = phase;
    }
    for (auto &[op, pu] : phaseOf)
      if (auto reduce = dyn_cast<ReduceOp>(op))
        if (phaseOf.lookup(reduce.getRange().getDefiningOp()) != pu)
          fission.splitReduces.insert(op);
    for (auto &[op, pu] : phaseOf)
      for (Value v : op->getOperands()) {
        Operation *def = v.getDefiningOp();
        auto it = def ? phaseOf.find(def) : phaseOf.end();
        if (it != phaseOf.end() && it->second < pu)
          fission.crossPhase.try_emplace(v, it->second);
      }
    for (Operation *op = rangeOp->getNextNode(); op; op = op->getNextNode()) {
      if (!phaseOf.count(op))
        break;
      for (Value v : op->getResults())
        if (fission.crossPhase.count(v))
          fission.cross.push_back(v);
    }
  }
  return result;
}

namespace {

static SplitInfo findSplitRange(KernelOp kernel) {
  Block &body = kernel.getBody().front();
  llvm::DenseSet<Operation *> reduced;
  for (Operation &op : body)
    if (auto reduce = dyn_cast<ReduceOp>(op))
      reduced.insert(reduce.getRange().getDefiningOp());
  SmallVector<RangeOp> topLevel;
  int depth = 0;
  for (Operation &op : body) {
    if (auto range = dyn_cast<RangeOp>(op)) {
      if (depth == 0)
        topLevel.push_back(range);
      ++depth;
    } else if (isa<IfOp>(op)) {
      ++depth;
    } else if (isa<EndOp, EndIfOp>(op)) {
      --depth;
    }
  }
  RangeOp split;
  for (RangeOp r : topLevel)
    if (r.getKind() != RangeKind::loop) {
      split = r;
      break;
    }
  if (!split)
    for (RangeOp r : topLevel)
      if (!reduced.contains(r.getOperation())) {
        split = r;
        break;
      }
  if (!split)
    return {RangeOp(), 1};
  // A block split over host threads cannot meet at a barrier.
  if (serializesBlock(kernel, split)) {
    bool inside = false;
    for (Operation &op : body) {
      if (&op == split.getOperation())
        inside = true;
      else if (auto end = dyn_cast<EndOp>(op);
               end && end.getRange() == split.getResult())
        break;
      else if (inside && isa<BarrierOp>(op))
        return {RangeOp(), 1};
    }
  }
  // Every side effect must lie inside the split range, or each chunk would
  // repeat it.
  bool inside = false;
  for (Operation &op : body) {
    if (&op == split.getOperation())
      inside = true;
    else if (auto end = dyn_cast<EndOp>(op);
             end && end.getRange() == split.getResult())
      inside = false;
    else if (!inside && isa<StoreOp, CustomOp>(op))
      return {RangeOp(), 1};
  }
  return {split, split.getTripCount()};
}

} // namespace

namespace synpl::l0tollvm {

Type KernelBuilder::convertType(Type t) {
  if (auto v = dyn_cast<VectorType>(t)) {
    Type e = convertType(v.getElementType());
    return e ? VectorType::get(v.getShape(), e) : Type();
  }
  if (t.isIndex())
    return b.getI64Type();
  // LLVM integers are signless: ui8 data is i8 in memory; its signedness
  // only matters to CAST (zero-extension, uitofp, fptoui).
  if (auto it = dyn_cast<IntegerType>(t))
    return it.isSignless() ? t : IntegerType::get(t.getContext(), it.getWidth());
  if (t.isF16() || t.isBF16() || t.isF32() || t.isF64())
    return t;
  return Type();
}

Value KernelBuilder::constLike(Location loc, Type t, double f, int64_t i) {
  t = convertType(t);
  Type e = elementOf(t);
  TypedAttr scalar = isa<FloatType>(e)
                         ? TypedAttr(b.getFloatAttr(e, f))
                         : TypedAttr(b.getIntegerAttr(e, i));
  if (auto v = dyn_cast<VectorType>(t))
    return arith::ConstantOp::create(b, loc, DenseElementsAttr::get(v, scalar));
  return arith::ConstantOp::create(b, loc, scalar);
}

Value KernelBuilder::exp2FlushingSubnormals(Location loc, Value x) {
  auto ft = cast<FloatType>(elementOf(x.getType()));
  double lowest = APFloat::semanticsMinExponent(ft.getFloatSemantics());
  Value lo = constLike(loc, x.getType(), lowest, 0);
  Value e = math::Exp2Op::create(b, loc, arith::MaximumFOp::create(b, loc, x, lo));
  Value below = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OLT, x, lo);
  return arith::SelectOp::create(b, loc, below, constLike(loc, x.getType(), 0.0, 0), e);
}

Value KernelBuilder::combine(Location loc, ReduceKind kind, Value a, Value c) {
  bool fp = isFloat(a.getType());
  switch (kind) {
  case ReduceKind::add:
    return fp ? Value(arith::AddFOp::create(b, loc, a, c))
              : Value(arith::AddIOp::create(b, loc, a, c));
  case ReduceKind::mul:
    return fp ? Value(arith::MulFOp::create(b, loc, a, c))
              : Value(arith::MulIOp::create(b, loc, a, c));
  case ReduceKind::max:
    return fp ? Value(arith::MaximumFOp::create(b, loc, a, c))
              : Value(arith::MaxSIOp::create(b, loc, a, c));
  }
  return a;
}

Value KernelBuilder::identity(Location loc, ReduceKind kind, Type t) {
  switch (kind) {
  case ReduceKind::add:
    return constLike(loc, t, 0.0, 0);
  case ReduceKind::mul:
    return constLike(loc, t, 1.0, 1);
  case ReduceKind::max: {
    Type e = elementOf(t);
    if (isa<FloatType>(e))
      return constLike(loc, t, -std::numeric_limits<double>::infinity(), 0);
    unsigned w = e.getIntOrFloatBitWidth();
    TypedAttr scalar =
        b.getIntegerAttr(e, llvm::APInt::getSignedMinValue(w));
    if (auto v = dyn_cast<VectorType>(t))
      return arith::ConstantOp::create(b, loc,
                                       DenseElementsAttr::get(v, scalar));
    return arith::ConstantOp::create(b, loc, scalar);
  }
  }
  return {};
}

/// CAST semantics: integers are signed (i1 is a truth value, zero-extended),
/// floats convert with round-to-nearest, float -> int truncates.
FailureOr<Value> KernelBuilder::castValue(Location loc, Value v, Type from,
                                          Type to) {
  Type toC = convertType(to);
  if (!toC)
    return failure();
  // A lane vector of the tiled lowering converts lane by lane.
  if (auto vt = dyn_cast<VectorType>(v.getType()); vt && !isa<VectorType>(toC))
    toC = VectorType::get(vt.getShape(), toC);
  if (v.getType() == toC)
    return v;
  bool boolSrc = elementOf(from).isInteger(1);
  bool unsignedSrc = boolSrc || elementOf(from).isUnsignedInteger();
  bool unsignedDst = elementOf(to).isUnsignedInteger();
  Type fc = elementOf(v.getType()), tc = elementOf(toC);
  if (fc.isIntOrIndex() && tc.isIntOrIndex()) {
    unsigned fw = fc.getIntOrFloatBitWidth(), tw = tc.getIntOrFloatBitWidth();
    if (fw < tw)
      return unsignedSrc ? Value(arith::ExtUIOp::create(b, loc, toC, v))
                         : Value(arith::ExtSIOp::create(b, loc, toC, v));
    return Value(arith::TruncIOp::create(b, loc, toC, v));
  }
  if (fc.isIntOrIndex() && isa<FloatType>(tc))
    return unsignedSrc ? Value(arith::UIToFPOp::create(b, loc, toC, v))
                       : Value(arith::SIToFPOp::create(b, loc, toC, v));
  if (isa<FloatType>(fc) && tc.isIntOrIndex())
    return unsignedDst ? Value(arith::FPToUIOp::create(b, loc, toC, v))
                       : Value(arith::FPToSIOp::create(b, loc, toC, v));
  if (isa<FloatType>(fc) && isa<FloatType>(tc)) {
    unsigned fw = fc.getIntOrFloatBitWidth(), tw = tc.getIntOrFloatBitWidth();
    if (fw < tw)
      return Value(arith::ExtFOp::create(b, loc, toC, v));
    if (fw > tw)
      return Value(arith::TruncFOp::create(b, loc, toC, v));
    // f16 <-> bf16: through f32.
    Type f32 = b.getF32Type();
    if (auto vt = dyn_cast<VectorType>(toC))
      f32 = VectorType::get(vt.getShape(), f32);
    Value wide = arith::ExtFOp::create(b, loc, f32, v);
    return Value(arith::TruncFOp::create(b, loc, toC, wide));
  }
  return failure();
}

FailureOr<Value> KernelBuilder::address(Location loc, Value buffer,
                                        ValueRange indices, std::string &why) {
  auto buf = dyn_cast<BufType>(buffer.getType());
  Value base = lookup(buffer);
  if (!buf || !base) {
    why = "its buffer is not a kernel buffer";
    return failure();
  }
  ArrayRef<int64_t> shape = buf.getShape();
  if (indices.size() != shape.size()) {
    why = "index count does not match the buffer's rank";
    return failure();
  }
  // Row-major: offset = sum(idx_d * stride_d).
  Value offset;
  int64_t stride = 1;
  for (int64_t d = shape.size() - 1; d >= 0; --d) {
    Value idx = indices[d];
    if (!idx) {
      why = "index #" + std::to_string(d) + " was not lowered";
      dependent = true;
      return failure();
    }
    Value term = stride == 1 ? idx
                             : Value(arith::MulIOp::create(
                                   b, loc, idx, i64Const(loc, stride)));
    offset = offset ? Value(arith::AddIOp::create(b, loc, term, offset)) : term;
    stride *= shape[d];
  }
  if (!offset)
    offset = i64Const(loc, 0);
  auto ptrTy = LLVM::LLVMPointerType::get(b.getContext());
  return Value(LLVM::GEPOp::create(b, loc, ptrTy,
                                   convertType(buf.getElementType()), base,
                                   ValueRange{offset}));
}

LogicalResult KernelBuilder::lowerOp(Operation *op, std::string &why) {
  Location loc = op->getLoc();
  SmallVector<Value> args;
  for (auto [i, operand] : llvm::enumerate(op->getOperands())) {
    if (isa<BufType>(operand.getType())) {
      args.push_back(Value()); // buffers are read through their block arg
      continue;
    }
    Value v = lookup(operand);
    if (!v) {
      why = "operand #" + std::to_string(i) + " was not lowered";
      dependent = true;
      return failure();
    }
    args.push_back(v);
  }
  Type resultType;
  if (op->getNumResults() == 1 && !isa<PtrType>(op->getResult(0).getType())) {
    resultType = convertType(op->getResult(0).getType());
    if (resultType && tiledLanes && !isa<VectorType>(resultType))
      resultType = VectorType::get({tiledLanes}, resultType);
    if (!resultType) {
      std::string s;
      llvm::raw_string_ostream os(s);
      os << "no " << targetName() << " type for " << op->getResult(0).getType();
      why = s;
      return failure();
    }
  }
  if (std::optional<LogicalResult> done =
          lowerTargetOp(op, args, resultType, why))
    return *done;
  auto bind = [&](Value v) {
    cur->map(op->getResult(0), v);
    return success();
  };
  bool fp = resultType && isFloat(resultType);
  // LLVM integers are signless: unsigned data (ui8 pixels, labels) compares,
  // takes its maximum and its remainder unsigned.
  bool unsignedOperands =
      op->getNumOperands() > 0 &&
      elementOf(op->getOperand(0).getType()).isUnsignedInteger();

  return llvm::TypeSwitch<Operation *, LogicalResult>(op)
      .Case([&](ConstOp c) {
        TypedAttr value;
        if (auto i = dyn_cast<IntegerAttr>(c.getValue()))
          value = b.getIntegerAttr(resultType, i.getValue().sextOrTrunc(
                                                   resultType.getIntOrFloatBitWidth()));
        else if (auto f = dyn_cast<FloatAttr>(c.getValue()))
          value = f;
        if (!value) {
          why = "CONST is not an integer or float";
          return failure();
        }
        return bind(arith::ConstantOp::create(b, loc, value));
      })
      .Case([&](IndexOp index) {
        FailureOr<Value> p = address(
            loc, index.getBuffer(),
            ArrayRef<Value>(args).drop_front(1), why);
        if (failed(p))
          return failure();
        return bind(*p);
      })
      .Case([&](LoadOp) {
        return bind(LLVM::LoadOp::create(b, loc, resultType, args[0],
                                         elementAlign(resultType)));
      })
      .Case([&](StoreOp) {
        LLVM::StoreOp::create(b, loc, args[1], args[0],
                              elementAlign(args[1].getType()));
        return success();
      })
      .Case([&](AddOp) {
        return bind(fp ? Value(arith::AddFOp::create(b, loc, args[0], args[1]))
                       : Value(arith::AddIOp::create(b, loc, args[0], args[1])));
      })
      .Case([&](MulOp) {
        return bind(fp ? Value(arith::MulFOp::create(b, loc, args[0], args[1]))
                       : Value(arith::MulIOp::create(b, loc, args[0], args[1])));
      })
      .Case([&](MulAccOp) {
        if (fp)
          return bind(math::FmaOp::create(b, loc, args[0], args[1], args[2]));
        Value p = arith::MulIOp::create(b, loc, args[0], args[1]);
        return bind(arith::AddIOp::create(b, loc, p, args[2]));
      })
      .Case([&](NegOp) {
        if (fp)
          return bind(arith::NegFOp::create(b, loc, args[0]));
        return bind(arith::SubIOp::create(
            b, loc, constLike(loc, resultType, 0, 0), args[0]));
      })
      .Case([&](ReciprocalOp) {
        return bind(arith::DivFOp::create(
            b, loc, constLike(loc, resultType, 1.0, 1), args[0]));
      })
      .Case([&](MaxOp) {
        if (fp)
          return bind(arith::MaximumFOp::create(b, loc, args[0], args[1]));
        return bind(unsignedOperands
                        ? Value(arith::MaxUIOp::create(b, loc, args[0], args[1]))
                        : Value(arith::MaxSIOp::create(b, loc, args[0], args[1])));
      })
      .Case([&](DivOp) {
        return bind(unsignedOperands
                        ? Value(arith::DivUIOp::create(b, loc, args[0], args[1]))
                        : Value(arith::DivSIOp::create(b, loc, args[0], args[1])));
      })
      .Case([&](ModOp) {
        return bind(unsignedOperands
                        ? Value(arith::RemUIOp::create(b, loc, args[0], args[1]))
                        : Value(arith::RemSIOp::create(b, loc, args[0], args[1])));
      })
      .Case([&](CmpLtOp) {
        if (isFloat(args[0].getType()))
          return bind(arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OLT,
                                            args[0], args[1]));
        return bind(arith::CmpIOp::create(
            b, loc,
            unsignedOperands ? arith::CmpIPredicate::ult : arith::CmpIPredicate::slt,
            args[0], args[1]));
      })
      .Case([&](CmpNeOp) {
        if (isFloat(args[0].getType()))
          return bind(arith::CmpFOp::create(b, loc, arith::CmpFPredicate::UNE,
                                            args[0], args[1]));
        return bind(arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ne,
                                          args[0], args[1]));
      })
      .Case([&](WhereOp) {
        return bind(
            arith::SelectOp::create(b, loc, args[0], args[1], args[2]));
      })
      .Case([&](Exp2Op) { return bind(exp2FlushingSubnormals(loc, args[0])); })
      .Case([&](Log2Op) { return bind(math::Log2Op::create(b, loc, args[0])); })
      .Case([&](SinOp) { return bind(math::SinOp::create(b, loc, args[0])); })
      .Case([&](SqrtOp) { return bind(math::SqrtOp::create(b, loc, args[0])); })
      .Case([&](CastOp c) {
        FailureOr<Value> v =
            castValue(loc, args[0], c.getSrc().getType(), c.getType());
        if (failed(v)) {
          why = ("no " + targetName() + " conversion between these dtypes").str();
          return failure();
        }
        return bind(*v);
      })
      .Case([&](BitcastOp) {
        if (args[0].getType() == resultType)
          return bind(args[0]);
        auto fv = dyn_cast<VectorType>(args[0].getType());
        auto tv = dyn_cast<VectorType>(resultType);
        if ((!fv && !tv) || (fv && tv && fv.getShape() == tv.getShape()))
          return bind(arith::BitcastOp::create(b, loc, resultType, args[0]));
        if ((fv && fv.getRank() > 1) || (tv && tv.getRank() > 1)) {
          why = "BITCAST that reshapes a multi-dimensional vector";
          return failure();
        }
        return bind(LLVM::BitcastOp::create(b, loc, resultType, args[0]));
      })
      .Case([&](VectorizeOp) {
        return bind(vector::FromElementsOp::create(
            b, loc, cast<VectorType>(resultType), args));
      })
      .Case([&](GepOp g) {
        return bind(vector::ExtractOp::create(b, loc, args[0],
                                              ArrayRef<int64_t>{g.getLane()}));
      })
      .Case([&](BarrierOp) {
        // One host thread runs a whole chunk in program order, so the
        // barrier is a no-op -- exact unless the threads of one block are
        // serialized by an enclosing loop: then a thread would read, after
        // the barrier, what later threads have not written yet.
        ArrayRef<int64_t> block = kernel.getBlock();
        ArrayRef<Frame> outer = frames;
        if (directBarriers.contains(op) && !outer.empty())
          outer = outer.drop_back(); // build() splits the innermost RANGE
        for (const Frame &f : outer) {
          auto range = dyn_cast<RangeOp>(f.uop);
          if (!range)
            continue;
          RangeKind k = range.getKind();
          unsigned axis = 0;
          bool serialized = false;
          if (k == RangeKind::local_x || k == RangeKind::local_y ||
              k == RangeKind::local_z) {
            axis = static_cast<unsigned>(k) - 7;
            serialized = range.getTripCount() > 1;
          } else if (k == RangeKind::global_x || k == RangeKind::global_y ||
                     k == RangeKind::global_z) {
            axis = static_cast<unsigned>(k) - 1;
            serialized = block[axis] > 1;
          }
          if (serialized) {
            why = ("BARRIER nested in a loop inside a RANGE over " +
                   stringifyRangeKind(k) +
                   ": the host runs a block's threads one after another and "
                   "splits that RANGE only at barriers directly in its body")
                      .str();
            return failure();
          }
        }
        return success();
      })
      .Case([&](WmmaOp w) { return lowerWmma(w, why); })
      .Case([&](CustomOp c) { return lowerCustom(c, why); })
      .Default([&](Operation *) {
        why = ("no " + targetName() + " lowering for this op").str();
        return failure();
      });
}

LogicalResult KernelBuilder::lowerWmma(WmmaOp op, std::string &why) {
  Location loc = op.getLoc();
  Value a = lookup(op.getA()), bv = lookup(op.getB()), c = lookup(op.getC());
  if (!a || !bv || !c) {
    why = "an operand was not lowered";
    dependent = true;
    return failure();
  }
  auto at = cast<VectorType>(op.getA().getType());
  auto ct = cast<VectorType>(op.getC().getType());
  int64_t m = at.getDimSize(0), k = at.getDimSize(1), n = ct.getDimSize(1);
  Type ce = ct.getElementType();
  bool fp = isa<FloatType>(ce);
  // Unrolled: d[i][j] = c[i][j] + sum_k a[i][k] * b[k][j], one fma each.
  Value d = c;
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      Value acc =
          vector::ExtractOp::create(b, loc, c, ArrayRef<int64_t>{i, j});
      for (int64_t kk = 0; kk < k; ++kk) {
        Value x =
            vector::ExtractOp::create(b, loc, a, ArrayRef<int64_t>{i, kk});
        Value y =
            vector::ExtractOp::create(b, loc, bv, ArrayRef<int64_t>{kk, j});
        FailureOr<Value> xc = castValue(loc, x, at.getElementType(), ce);
        FailureOr<Value> yc = castValue(loc, y, at.getElementType(), ce);
        if (failed(xc) || failed(yc)) {
          why = ("no " + targetName() +
                 " conversion from the tile's element type to the "
                 "accumulator's")
                    .str();
          return failure();
        }
        if (fp) {
          acc = math::FmaOp::create(b, loc, *xc, *yc, acc);
        } else {
          Value p = arith::MulIOp::create(b, loc, *xc, *yc);
          acc = arith::AddIOp::create(b, loc, p, acc);
        }
      }
      d = vector::InsertOp::create(b, loc, acc, d, ArrayRef<int64_t>{i, j});
    }
  mapping.map(op.getResult(), d);
  return success();
}

LogicalResult KernelBuilder::lowerCustom(CustomOp op, std::string &why) {
  Location loc = op.getLoc();
  StringRef callee = op.getCallee();
  bool load = callee == kTileLoad, store = callee == kTileStore;
  if (!load && !store) {
    why = ("CUSTOM \"" + callee + "\" has no host lowering (host intrinsics: " +
           kTileLoad + ", " + kTileStore + ")")
              .str();
    return failure();
  }
  // (buf, i, j) or (buf, i, j, tile): a 2-D tile at row i, column j.
  ValueRange src = op.getSrc();
  unsigned want = load ? 3 : 4;
  auto buf = src.empty() ? BufType() : dyn_cast<BufType>(src[0].getType());
  if (src.size() != want || !buf || buf.getRank() != 2 ||
      !src[1].getType().isIndex() || !src[2].getType().isIndex() ||
      op->getNumResults() != (load ? 1u : 0u)) {
    why = (callee + (load ? " takes (buffer, index, index) -> tile"
                          : " takes (buffer, index, index, tile) -> ()") +
           " on a 2-D buffer")
              .str();
    return failure();
  }
  auto tile = dyn_cast<VectorType>(load ? op->getResult(0).getType()
                                        : src[3].getType());
  if (!tile || tile.getRank() != 2 ||
      tile.getElementType() != buf.getElementType()) {
    why = (callee + " moves a 2-D vector of the buffer's element type").str();
    return failure();
  }
  Value i = lookup(src[1]), j = lookup(src[2]);
  Value value = store ? lookup(src[3]) : Value();
  if (!i || !j || (store && !value)) {
    why = "an operand was not lowered";
    dependent = true;
    return failure();
  }
  int64_t rows = tile.getDimSize(0);
  auto row = VectorType::get({tile.getDimSize(1)}, tile.getElementType());
  Value result = load ? constLike(loc, tile, 0.0, 0) : Value();
  unsigned align = elementAlign(tile);
  for (int64_t r = 0; r < rows; ++r) {
    Value ir = arith::AddIOp::create(b, loc, i, i64Const(loc, r));
    FailureOr<Value> p = address(loc, src[0], ValueRange{ir, j}, why);
    if (failed(p))
      return failure();
    if (load) {
      Value v = LLVM::LoadOp::create(b, loc, row, *p, align);
      result = vector::InsertOp::create(b, loc, v, result,
                                        ArrayRef<int64_t>{r});
    } else {
      Value v = vector::ExtractOp::create(b, loc, value, ArrayRef<int64_t>{r});
      LLVM::StoreOp::create(b, loc, v, *p, align);
    }
  }
  if (load)
    mapping.map(op->getResult(0), result);
  return success();
}

void KernelBuilder::openPhase(Frame &frame, Location loc) {
  auto range = cast<RangeOp>(frame.uop);
  frame.loop = scf::ForOp::create(b, loc, i64Const(loc, 0),
                                  i64Const(loc, range.getTripCount()),
                                  i64Const(loc, 1));
  b.setInsertionPoint(frame.loop.getBody()->getTerminator());
  frame.iteration = frame.loop.getInductionVar();
  Value iv = arith::AddIOp::create(
      b, loc, i64Const(loc, range.getLower()),
      arith::MulIOp::create(b, loc, frame.iteration,
                            i64Const(loc, range.getStep())));
  mapping.map(range.getResult(), iv);
  // Values of earlier phases come back from their per-thread arrays.
  auto ptrTy = LLVM::LLVMPointerType::get(b.getContext());
  for (Value v : frame.fission->cross) {
    if (frame.fission->crossPhase.lookup(v) >= frame.phase)
      continue;
    Value array = crossArrays.lookup(v);
    if (!array)
      continue;
    Type t = isa<PtrType>(v.getType()) ? Type(ptrTy) : convertType(v.getType());
    Value slot = LLVM::GEPOp::create(b, loc, ptrTy, t, array,
                                     ValueRange{frame.iteration});
    mapping.map(v, LLVM::LoadOp::create(b, loc, t, slot));
  }
}

void KernelBuilder::closePhase(Frame &frame, Location loc) {
  // The values of this phase that later phases read go to their arrays.
  auto ptrTy = LLVM::LLVMPointerType::get(b.getContext());
  for (Value v : frame.fission->cross) {
    if (frame.fission->crossPhase.lookup(v) != frame.phase)
      continue;
    Value array = crossArrays.lookup(v), value = lookup(v);
    if (!array || !value)
      continue;
    Value slot = LLVM::GEPOp::create(b, loc, ptrTy, value.getType(), array,
                                     ValueRange{frame.iteration});
    LLVM::StoreOp::create(b, loc, value, slot);
  }
  b.setInsertionPointAfter(frame.loop);
}

Block *KernelBuilder::bindBufferParams(LLVM::LLVMFuncOp fn,
                                       unsigned numBuffers,
                                       int64_t defaultAlign, int64_t maxAlign) {
  Block &body = kernel.getBody().front();
  for (unsigned a = 0; a < numBuffers; ++a) {
    fn.setArgAttr(a, LLVM::LLVMDialect::getNoAliasAttrName(), b.getUnitAttr());
    int64_t align = defaultAlign;
    if (auto slot = planSymbols.lookup<SlotOp>(
            kernel.getSlotOf(body.getArgument(a)).getValue()))
      if (auto pool = planSymbols.lookup<PoolOp>(slot.getPool()))
        align = std::min<int64_t>(maxAlign, pool.getAlignment());
    fn.setArgAttr(a, LLVM::LLVMDialect::getAlignAttrName(),
                  b.getI64IntegerAttr(align));
  }
  Block *entry = fn.addEntryBlock(b);
  b.setInsertionPointToStart(entry);
  for (unsigned a = 0; a < numBuffers; ++a)
    mapping.map(body.getArgument(a), entry->getArgument(a));
  return entry;
}

LLVM::LLVMFuncOp KernelBuilder::createFunction(ModuleOp target,
                                               const SplitInfo &split) {
  MLIRContext *ctx = kernel.getContext();
  Location loc = kernel.getLoc();
  // Signature: a pointer per bound buffer, then begin, end.
  auto ptrTy = LLVM::LLVMPointerType::get(ctx);
  unsigned numBuffers = kernel.getNumInputs() + kernel.getNumOutputs();
  SmallVector<Type> params(numBuffers, ptrTy);
  params.push_back(b.getI64Type());
  params.push_back(b.getI64Type());
  auto fnTy = LLVM::LLVMFunctionType::get(LLVM::LLVMVoidType::get(ctx), params);
  b.setInsertionPointToEnd(target.getBody());
  auto fn = LLVM::LLVMFuncOp::create(b, loc, name, fnTy);
  fn->setAttr("synpl.iterations", b.getI64IntegerAttr(split.iterations));
  if (split.grain > 1)
    fn->setAttr("synpl.grain", b.getI64IntegerAttr(split.grain));
  Block *entry = bindBufferParams(fn, numBuffers, /*defaultAlign=*/64,
                                  /*maxAlign=*/64);
  begin = entry->getArgument(numBuffers);
  end = entry->getArgument(numBuffers + 1);
  // Block-shared scratch: one copy per host thread, on its stack.
  for (BlockArgument arg : kernel.getSharedArgs()) {
    auto buf = cast<BufType>(arg.getType());
    Value count = i64Const(loc, buf.getNumElements());
    mapping.map(arg, LLVM::AllocaOp::create(b, loc, ptrTy,
                                            convertType(buf.getElementType()),
                                            count, /*alignment=*/64));
  }
  auto ret = LLVM::ReturnOp::create(b, loc, ValueRange{});
  b.setInsertionPoint(ret);
  return fn;
}

SplitInfo KernelBuilder::build(ModuleOp target) {
  Location loc = kernel.getLoc();
  Block &body = kernel.getBody().front();
  SplitInfo split = findSplitRange(kernel);

  if (std::optional<TilePlan> plan =
          matchTile(kernel, split, tileLanes, tileRows)) {
    // Every chunk packs the panels of the operand that does not depend on
    // the row: fewer, larger chunks pack it fewer times.
    if (!plan->packs.empty())
      split.grain = plan->rowCount;
    LLVM::LLVMFuncOp fn = createFunction(target, split);
    if (succeeded(buildTiled(*plan)))
      return split;
    split.grain = 1;
    // Something the tiled form cannot express: start over, untiled.
    fn.erase();
    mapping.clear();
  }

  createFunction(target, split);
  auto ptrTy = LLVM::LLVMPointerType::get(kernel.getContext());
  // Per-thread arrays of the values that cross a barrier phase.
  fissions = analyzeBarriers(kernel, directBarriers, [&](RangeOp range) {
    return serializesBlock(kernel, range);
  });
  // A RANGE over global_a split at its barriers runs each phase over the
  // whole range, but its threads meet at a barrier block by block (and each
  // block has its own shared buffers): correct only when the range fits one
  // block.
  for (auto &entry : fissions) {
    auto range = cast<RangeOp>(entry.first);
    RangeKind k = range.getKind();
    if (k != RangeKind::global_x && k != RangeKind::global_y &&
        k != RangeKind::global_z)
      continue;
    int64_t blockExtent = kernel.getBlock()[static_cast<unsigned>(k) - 1];
    if (range.getTripCount() > blockExtent)
      fail(range, ("a RANGE over " + stringifyRangeKind(k) + " of " +
                   Twine(range.getTripCount()) +
                   " iterations holds BARRIERs but spans several blocks of " +
                   Twine(blockExtent) +
                   " threads: the host runs its barrier phases over the "
                   "whole range; map it over group_ and local_ instead")
                      .str());
  }
  for (Operation &op : body) { // in body order: deterministic output
    auto range = dyn_cast<RangeOp>(op);
    if (!range || !fissions.count(range))
      continue;
    const Fission &fission = fissions[range];
    Value count = i64Const(loc, std::max<int64_t>(1, range.getTripCount()));
    for (Value v : fission.cross) {
      Type t = isa<PtrType>(v.getType()) ? Type(ptrTy) : convertType(v.getType());
      if (t)
        crossArrays[v] = LLVM::AllocaOp::create(b, loc, ptrTy, t, count,
                                                /*alignment=*/64);
    }
  }
  if (!split.range) {
    // Not splittable: the whole kernel runs in the chunk that is not empty.
    Value run = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, begin,
                                      end);
    auto guard = scf::IfOp::create(b, loc, run, /*withElseRegion=*/false);
    b.setInsertionPoint(guard.thenBlock()->getTerminator());
  }
  lowerBody(split.range);
  return split;
}

void KernelBuilder::lowerBody(RangeOp splitRange) {
  Block &body = kernel.getBody().front();
  // The REDUCEs each RANGE carries.
  llvm::DenseMap<Operation *, SmallVector<ReduceOp>> reducesOf;
  for (Operation &op : body)
    if (auto reduce = dyn_cast<ReduceOp>(op))
      reducesOf[reduce.getRange().getDefiningOp()].push_back(reduce);

  for (Operation &op : body) {
    Location l = op.getLoc();
    if (auto range = dyn_cast<RangeOp>(op);
        range && isParallel(range.getKind()) && openParallelRange(range))
      continue;
    if (auto range = dyn_cast<RangeOp>(op);
        range && fissions.count(range) && range != splitRange) {
      Frame frame;
      frame.uop = range;
      frame.fission = &fissions[range];
      openPhase(frame, l);
      frames.push_back(std::move(frame));
      continue;
    }
    if (directBarriers.contains(&op) && !frames.empty() &&
        frames.back().fission) {
      std::string why;
      dependent = false;
      if (failed(lowerOp(&op, why))) { // the enclosing RANGEs allow it?
        fail(&op, why, dependent);
        continue;
      }
      // Close this phase, then open the next.
      Frame &frame = frames.back();
      closePhase(frame, l);
      ++frame.phase;
      openPhase(frame, l);
      continue;
    }
    if (auto range = dyn_cast<RangeOp>(op)) {
      Frame frame;
      frame.uop = range;
      SmallVector<Value> inits;
      for (ReduceOp reduce : reducesOf.lookup(range)) {
        Type t = convertType(reduce.getType());
        if (!t) {
          fail(reduce, ("no " + targetName() + " type for its dtype").str());
          continue;
        }
        // Fold straight into init when it is already computed.
        Operation *initDef = reduce.getInit().getDefiningOp();
        bool dominates = initDef && initDef->getBlock() == &body &&
                         initDef->isBeforeInBlock(range) &&
                         lookup(reduce.getInit());
        frame.reduces.push_back(reduce);
        frame.initDominates.push_back(dominates);
        inits.push_back(dominates ? lookup(reduce.getInit())
                                  : identity(l, reduce.getKind(), t));
      }
      Value lb, ub, step;
      bool isSplit = range == splitRange;
      if (isSplit) {
        lb = arith::MaxSIOp::create(b, l, begin, i64Const(l, 0));
        ub = arith::MinSIOp::create(b, l, end,
                                    i64Const(l, range.getTripCount()));
        step = i64Const(l, 1);
      } else {
        lb = i64Const(l, range.getLower());
        ub = i64Const(l, range.getUpper());
        step = i64Const(l, range.getStep());
      }
      frame.loop = scf::ForOp::create(b, l, lb, ub, step, inits);
      Block *loopBody = frame.loop.getBody();
      if (loopBody->mightHaveTerminator())
        b.setInsertionPoint(loopBody->getTerminator());
      else
        b.setInsertionPointToEnd(loopBody);
      Value iv = frame.loop.getInductionVar();
      if (isSplit && (range.getLower() != 0 || range.getStep() != 1))
        iv = arith::AddIOp::create(
            b, l, i64Const(l, range.getLower()),
            arith::MulIOp::create(b, l, iv, i64Const(l, range.getStep())));
      mapping.map(range.getResult(), iv);
      frames.push_back(std::move(frame));
      continue;
    }
    if (auto endOp = dyn_cast<EndOp>(op)) {
      if (frames.empty() || (!frames.back().loop && !frames.back().parallel)) {
        fail(&op, "END without an open RANGE");
        continue;
      }
      Frame frame = frames.pop_back_val();
      if (frame.parallel) {
        if (frame.branch)
          b.setInsertionPointAfter(frame.branch);
        continue;
      }
      if (!frame.reduces.empty()) {
        SmallVector<Value> next;
        for (auto [i, reduce] : llvm::enumerate(frame.reduces)) {
          Value acc = frame.loop.getRegionIterArg(i);
          Value v = lookup(reduce.getValue());
          next.push_back(v ? combine(l, reduce.getKind(), acc, v) : acc);
        }
        scf::YieldOp::create(b, l, next);
        for (auto [i, reduce] : llvm::enumerate(frame.reduces))
          reduceResults[reduce] = frame.loop.getResult(i);
      }
      b.setInsertionPointAfter(frame.loop);
      continue;
    }
    if (auto ifOp = dyn_cast<IfOp>(op)) {
      Value cond = lookup(ifOp.getCondition());
      if (!cond) {
        fail(&op, "its condition was not lowered", /*dependent=*/true);
        cond = arith::ConstantOp::create(b, l, b.getBoolAttr(false));
      }
      Frame frame;
      frame.uop = ifOp;
      frame.branch = scf::IfOp::create(b, l, cond, /*withElseRegion=*/false);
      b.setInsertionPoint(frame.branch.thenBlock()->getTerminator());
      frames.push_back(std::move(frame));
      continue;
    }
    if (isa<EndIfOp>(op)) {
      if (frames.empty() || !frames.back().branch) {
        fail(&op, "ENDIF without an open IF");
        continue;
      }
      Frame frame = frames.pop_back_val();
      b.setInsertionPointAfter(frame.branch);
      continue;
    }
    if (auto reduce = dyn_cast<ReduceOp>(op)) {
      if (llvm::any_of(frames, [&](const Frame &f) {
            return f.fission && f.fission->splitReduces.contains(reduce);
          })) {
        fail(&op, "a BARRIER separates this REDUCE from its RANGE");
        continue;
      }
      Value folded = reduceResults.lookup(reduce);
      if (!folded) {
        fail(&op, "its RANGE did not carry it");
        continue;
      }
      Operation *initDef = reduce.getInit().getDefiningOp();
      bool dominates = initDef && initDef->getBlock() == &body &&
                       initDef->isBeforeInBlock(reduce.getRange().getDefiningOp());
      if (!dominates) {
        Value init = lookup(reduce.getInit());
        if (!init) {
          fail(&op, "its init was not lowered", /*dependent=*/true);
          continue;
        }
        folded = combine(l, reduce.getKind(), init, folded);
      }
      mapping.map(reduce.getResult(), folded);
      continue;
    }
    std::string why;
    dependent = false;
    if (failed(lowerOp(&op, why)))
      fail(&op, why, dependent);
  }
}

} // namespace synpl::l0tollvm

/// The upstream conversions that finish the job.
void synpl::l0tollvm::buildKernelLLVMPipeline(OpPassManager &pm) {
  pm.addPass(createSCFToControlFlowPass());
  pm.addPass(createConvertVectorToLLVMPass());
  pm.addPass(createConvertMathToLLVMPass());
  pm.addPass(createArithToLLVMConversionPass());
  pm.addPass(createConvertControlFlowToLLVMPass());
  pm.addPass(createUBToLLVMConversionPass());
  pm.addPass(createReconcileUnrealizedCastsPass());
}

namespace {

struct ConvertL0UOpToLLVMPass
    : public synpl::impl::ConvertL0UOpToLLVMBase<ConvertL0UOpToLLVMPass> {
  using Base::Base;

  void getDependentDialects(DialectRegistry &registry) const override {
    Base::getDependentDialects(registry);
    OpPassManager pm(ModuleOp::getOperationName());
    buildKernelLLVMPipeline(pm);
    pm.getDependentDialects(registry);
  }

  void runOnOperation() override {
    ModuleOp module = getOperation();
    MLIRContext *ctx = &getContext();
    SmallVector<NotLowered> failures;
    unsigned total = 0;

    // Kernels already lowered (host_entry set, no UOps) are skipped: the
    // pass is idempotent on its own output.
    SmallVector<std::pair<PlanOp, KernelOp>> kernels;
    module.walk([&](KernelOp kernel) {
      if (kernel->hasAttr("host_entry"))
        return;
      // A CUDA kernel lowered without keep-uops has no UOps left.
      if (kernel.getBody().front().empty())
        return;
      if (auto plan = kernel->getParentOfType<PlanOp>())
        kernels.push_back({plan, kernel});
    });

    OwningOpRef<ModuleOp> scratch = ModuleOp::create(module.getLoc());
    SymbolTable moduleSymbols(module);
    llvm::StringSet<> names;
    SmallVector<std::pair<KernelOp, SplitInfo>> built;
    for (auto [plan, kernel] : kernels) {
      total += kernel.getBody().front().getOperations().size() + 1;
      std::string name = (plan.getSymName() + "_" + kernel.getSymName()).str();
      if (moduleSymbols.lookup(name) || !names.insert(name).second) {
        failures.push_back(
            {kernel, "symbol @" + name + " already exists in the module"});
        for (Operation &op : kernel.getBody().front())
          failures.push_back({&op, "its kernel is not lowered", true});
        continue;
      }
      SymbolTable planSymbols(plan);
      KernelBuilder builder(kernel, name, planSymbols, failures, tileLanes,
                            tileRows);
      SplitInfo split = builder.build(*scratch);
      built.push_back({kernel, split});
    }
    // An l0ctl.program left in a plan that is about to be erased.
    if (!keepPlan)
      module.walk([&](l0ctl::ProgramOp program) {
        if (program->getParentOfType<PlanOp>()) {
          ++total;
          failures.push_back({program, "keep-plan=false erases its plan; run "
                                       "--synpl-convert-l0ctl-to-llvm first"});
        }
      });
    if (!failures.empty()) {
      l0tollvm::reportNotLowered(total, failures);
      return signalPassFailure();
    }

    // Finish with the upstream conversions, in the scratch module.
    PassManager pm(ctx, ModuleOp::getOperationName());
    buildKernelLLVMPipeline(pm);
    // Whatever is left outside the LLVM dialect (the upstream passes say
    // why, at the same location) is reported like any other refusal.
    bool pipelineFailed = failed(pm.run(*scratch));
    scratch->walk([&](Operation *op) {
      if (op == scratch->getOperation() ||
          isa<LLVM::LLVMDialect>(op->getDialect()))
        return;
      failures.push_back(
          {op, "the upstream LLVM conversions left it unconverted"});
    });
    if (pipelineFailed && failures.empty())
      failures.push_back({module, "the upstream LLVM conversions failed"});
    if (!failures.empty()) {
      l0tollvm::reportNotLowered(total, failures);
      return signalPassFailure();
    }

    // Commit: move the functions over, then reduce or drop the plans.
    Block *dest = module.getBody();
    for (Operation &op : llvm::make_early_inc_range(*scratch->getBody()))
      op.moveBefore(dest, dest->end());
    Builder builder(ctx);
    for (auto [kernel, split] : built) {
      auto plan = kernel->getParentOfType<PlanOp>();
      std::string name = (plan.getSymName() + "_" + kernel.getSymName()).str();
      Block &body = kernel.getBody().front();
      for (Operation &op : body)
        op.dropAllReferences();
      while (!body.empty())
        body.back().erase();
      kernel->setAttr("host_entry", FlatSymbolRefAttr::get(ctx, name));
      kernel->setAttr("host_iterations",
                      builder.getI64IntegerAttr(split.iterations));
      if (split.grain > 1)
        kernel->setAttr("host_grain", builder.getI64IntegerAttr(split.grain));
    }
    if (!keepPlan)
      for (PlanOp plan : llvm::make_early_inc_range(module.getOps<PlanOp>()))
        plan.erase();
  }
};

} // namespace
