//===- KernelBuilder.cpp - The UOp-to-upstream-IR rewriter of one kernel --===//
//
// The part of the kernel lowering that the host (L0UOpToLLVM.cpp,
// TiledKernel.cpp) and CUDA (lib/Conversion/L0ToNVVM) lowerings share: UOp
// types as LLVM types, constants, the REDUCE combiners and identities,
// CAST, the address of a buffer element, and one UOp at a time as
// arith / math / vector / LLVM ops (WMMA and CUSTOM included). Where a
// kernel's ranges, phases and function come from is the caller's.
//
//===----------------------------------------------------------------------===//
#include "KernelBuilder.h"

#include "synpl/Dialect/L0UOp/L0UOpOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace synpl;
using namespace synpl::l0uop;

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
  Value clamped = arith::MaximumFOp::create(b, loc, x, lo);
  Value e = inlineExp2 && ft.isF32() ? inlineExp2F32(loc, clamped)
                                     : Value(math::Exp2Op::create(b, loc, clamped));
  Value below = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OLT, x, lo);
  return arith::SelectOp::create(b, loc, below, constLike(loc, x.getType(), 0.0, 0), e);
}

Value KernelBuilder::inlineExp2F32(Location loc, Value x) {
  Type ft = x.getType();
  Type it = b.getI32Type();
  if (auto v = dyn_cast<VectorType>(ft))
    it = VectorType::get(v.getShape(), it);
  auto f32 = [&](double v) { return constLike(loc, ft, v, 0); };
  auto i32 = [&](int64_t v) { return constLike(loc, it, 0.0, v); };
  Value xc = arith::MinimumFOp::create(b, loc, x, f32(128.0));
  Value n = math::RoundEvenOp::create(b, loc, xc);
  Value f = arith::SubFOp::create(b, loc, xc, n);
  // 2^f = 1 + f * P(f) on [-1/2, 1/2] (Cephes exp2f).
  static const double kP[] = {1.535336188319500e-4, 1.339887440266574e-3,
                              9.618437357674640e-3, 5.550332471162809e-2,
                              2.402264791363012e-1, 6.931472028550421e-1};
  Value p = f32(kP[0]);
  for (double c : ArrayRef<double>(kP).drop_front())
    p = math::FmaOp::create(b, loc, p, f, f32(c));
  p = math::FmaOp::create(b, loc, p, f, f32(1.0));
  // 2^n = 2^h * 2^(n - h), h = n >> 1: both halves are normal for n in
  // [-126, 128].
  Value ni = arith::FPToSIOp::create(b, loc, it, n);
  Value h = arith::ShRSIOp::create(b, loc, ni, i32(1));
  Value rest = arith::SubIOp::create(b, loc, ni, h);
  auto pow2 = [&](Value e) -> Value {
    Value biased = arith::AddIOp::create(b, loc, e, i32(127));
    return arith::BitcastOp::create(
        b, loc, ft, arith::ShLIOp::create(b, loc, biased, i32(23)));
  };
  Value r = arith::MulFOp::create(b, loc, arith::MulFOp::create(b, loc, p, pow2(h)),
                                  pow2(rest));
  // NaN: fptosi gave poison; keep the NaN instead.
  Value nan = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::UNO, x, x);
  return arith::SelectOp::create(b, loc, nan, x, r);
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
      // An i1 in memory is a byte holding 0 or 1: it is moved as an i8, which
      // LLVM's loop vectorizer widens into byte vectors, where it splits
      // stores of i1 into one byte store per lane.
      .Case([&](LoadOp) {
        if (resultType.isInteger(1)) {
          Value byte = LLVM::LoadOp::create(b, loc, b.getI8Type(), args[0], 1);
          return bind(arith::TruncIOp::create(b, loc, resultType, byte));
        }
        return bind(LLVM::LoadOp::create(b, loc, resultType, args[0],
                                         elementAlign(resultType)));
      })
      .Case([&](StoreOp) {
        Value v = args[1];
        if (v.getType().isInteger(1))
          v = arith::ExtUIOp::create(b, loc, b.getI8Type(), v);
        LLVM::StoreOp::create(b, loc, v, args[0], elementAlign(v.getType()));
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

} // namespace synpl::l0tollvm
