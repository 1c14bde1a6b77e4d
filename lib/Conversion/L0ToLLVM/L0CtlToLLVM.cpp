//===- L0CtlToLLVM.cpp - Host codegen of l0ctl programs -----------------------===//
//
// The ten control ops translate mechanically (spec, Codegen: Control Path):
// each region a program names becomes a noalias pointer argument, so LLVM
// sees all the aliasing the Control IR already states.
//
//===----------------------------------------------------------------------===//
#include "synpl/Conversion/Passes.h"

#include "Lowering.h"
#include "synpl/Dialect/L0Ctl/L0CtlOps.h"
#include "synpl/Dialect/L0UOp/L0UOpOps.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/SymbolTable.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/ADT/TypeSwitch.h"

#include <set>

namespace synpl {
#define GEN_PASS_DEF_CONVERTL0CTLTOLLVM
#include "synpl/Conversion/Passes.h.inc"
} // namespace synpl

using namespace mlir;
using namespace synpl;
using namespace synpl::l0ctl;
using synpl::l0tollvm::NotLowered;

namespace {

constexpr llvm::StringLiteral kQueuePush = "synpl_rt_ctl_queue_push";
constexpr llvm::StringLiteral kQueuePop = "synpl_rt_ctl_queue_pop";

/// The region an access names.
static FlatSymbolRefAttr regionRef(Operation *op) {
  return llvm::TypeSwitch<Operation *, FlatSymbolRefAttr>(op)
      .Case([](LoadOp o) { return o.getRegionAttr(); })
      .Case([](StoreOp o) { return o.getRegionAttr(); })
      .Case([](QueuePushOp o) { return o.getQueueAttr(); })
      .Case([](QueuePopOp o) { return o.getQueueAttr(); })
      .Default([](Operation *) { return FlatSymbolRefAttr(); });
}

/// The function name of a program: `<plan>_<program>` inside a plan.
static std::string functionName(ProgramOp program) {
  if (auto plan = program->getParentOfType<l0uop::PlanOp>())
    return (plan.getSymName() + "_" + program.getSymName()).str();
  return program.getSymName().str();
}

class ProgramBuilder {
public:
  ProgramBuilder(ProgramOp program, SmallVectorImpl<NotLowered> &failures)
      : program(program), failures(failures), b(program.getContext()) {}

  /// Builds the function at the end of `target`.
  void build(ModuleOp target, StringRef name);

private:
  LogicalResult lowerOp(Operation *op, std::string &why);
  Value i64(Location loc, int64_t v) {
    return LLVM::ConstantOp::create(b, loc, b.getI64Type(),
                                    b.getI64IntegerAttr(v));
  }
  Value regionAddress(Location loc, StringRef region, Value offset,
                      int64_t disp);

  ProgramOp program;
  SmallVectorImpl<NotLowered> &failures;
  OpBuilder b;
  IRMapping mapping;
  llvm::StringMap<Value> regionArgs;
  bool dependent = false;
};

Value ProgramBuilder::regionAddress(Location loc, StringRef region,
                                    Value offset, int64_t disp) {
  Value base = regionArgs.lookup(region);
  Value off = offset;
  if (disp != 0 || !off)
    off = off ? Value(LLVM::AddOp::create(b, loc, off, i64(loc, disp)))
              : i64(loc, disp);
  return LLVM::GEPOp::create(b, loc, LLVM::LLVMPointerType::get(b.getContext()),
                             b.getI8Type(), base, ValueRange{off});
}

void ProgramBuilder::build(ModuleOp target, StringRef name) {
  MLIRContext *ctx = program.getContext();
  Location loc = program.getLoc();
  // ABI: one pointer per region used, sorted by name.
  std::set<std::string> used;
  for (Block &block : program.getBody())
    for (Operation &op : block)
      if (FlatSymbolRefAttr ref = regionRef(&op))
        used.insert(ref.getValue().str());
  auto ptrTy = LLVM::LLVMPointerType::get(ctx);
  SmallVector<Type> params(used.size(), ptrTy);
  auto fnTy = LLVM::LLVMFunctionType::get(LLVM::LLVMVoidType::get(ctx), params);
  b.setInsertionPointToEnd(target.getBody());
  auto fn = LLVM::LLVMFuncOp::create(b, loc, name, fnTy);
  SmallVector<Attribute> regionNames;
  unsigned a = 0;
  for (const std::string &region : used) {
    fn.setArgAttr(a, LLVM::LLVMDialect::getNoAliasAttrName(), b.getUnitAttr());
    int64_t align = 8;
    if (auto r = SymbolTable::lookupNearestSymbolFrom<RegionOp>(
            program, StringAttr::get(ctx, region)))
      align = r.getAlignment();
    fn.setArgAttr(a, LLVM::LLVMDialect::getAlignAttrName(),
                  b.getI64IntegerAttr(align));
    regionNames.push_back(FlatSymbolRefAttr::get(ctx, region));
    ++a;
  }
  fn->setAttr("synpl.regions", b.getArrayAttr(regionNames));

  // Blocks 1:1, with their arguments.
  Region &dest = fn.getBody();
  for (Block &block : program.getBody()) {
    Block *nb = new Block();
    dest.push_back(nb);
    for (BlockArgument arg : block.getArguments())
      mapping.map(arg, nb->addArgument(arg.getType(), arg.getLoc()));
    mapping.map(&block, nb);
  }
  a = 0;
  Block *entry = &dest.front();
  // The entry block takes no arguments (verified): the region pointers are
  // the function's arguments.
  for (const std::string &region : used)
    regionArgs[region] = entry->insertArgument(a++, ptrTy, loc);

  for (Block &block : program.getBody()) {
    b.setInsertionPointToEnd(mapping.lookup(&block));
    for (Operation &op : block) {
      std::string why;
      dependent = false;
      if (failed(lowerOp(&op, why)))
        failures.push_back({&op, why, dependent});
    }
  }
}

LogicalResult ProgramBuilder::lowerOp(Operation *op, std::string &why) {
  Location loc = op->getLoc();
  for (auto [i, operand] : llvm::enumerate(op->getOperands()))
    if (!mapping.contains(operand)) {
      why = "operand #" + std::to_string(i) + " was not lowered";
      dependent = true;
      return failure();
    }
  auto get = [&](Value v) { return mapping.lookup(v); };
  return llvm::TypeSwitch<Operation *, LogicalResult>(op)
      .Case([&](ConstOp c) {
        mapping.map(c.getResult(),
                    LLVM::ConstantOp::create(b, loc, c.getType(),
                                             cast<TypedAttr>(c.getValue())));
        return success();
      })
      .Case([&](LoadOp l) {
        Value addr = regionAddress(loc, l.getRegion(),
                                   l.getOffset() ? get(l.getOffset()) : Value(),
                                   l.getDisp());
        unsigned sz = l.getType().getIntOrFloatBitWidth() / 8;
        mapping.map(l.getResult(),
                    LLVM::LoadOp::create(b, loc, l.getType(), addr, sz));
        return success();
      })
      .Case([&](StoreOp s) {
        Value addr = regionAddress(loc, s.getRegion(),
                                   s.getOffset() ? get(s.getOffset()) : Value(),
                                   s.getDisp());
        unsigned sz = s.getValue().getType().getIntOrFloatBitWidth() / 8;
        LLVM::StoreOp::create(b, loc, get(s.getValue()), addr, sz);
        return success();
      })
      .Case([&](HashOp h) {
        // splitmix64 finaliser over the zero-extended value.
        Value x = get(h.getValue());
        if (x.getType() != b.getI64Type())
          x = LLVM::ZExtOp::create(b, loc, b.getI64Type(), x);
        auto xorShift = [&](Value v, int64_t s) {
          Value sh = LLVM::LShrOp::create(b, loc, v, i64(loc, s));
          return Value(LLVM::XOrOp::create(b, loc, v, sh));
        };
        x = xorShift(x, 30);
        x = LLVM::MulOp::create(b, loc, x,
                                i64(loc, static_cast<int64_t>(0xbf58476d1ce4e5b9ULL)));
        x = xorShift(x, 27);
        x = LLVM::MulOp::create(b, loc, x,
                                i64(loc, static_cast<int64_t>(0x94d049bb133111ebULL)));
        x = xorShift(x, 31);
        mapping.map(h.getResult(), x);
        return success();
      })
      .Case([&](ArithOp ar) {
        Value l = get(ar.getLhs()), r = get(ar.getRhs());
        Type t = ar.getType();
        Value v;
        auto maskedShift = [&]() {
          // Shift amounts are taken modulo the width.
          unsigned w = t.getIntOrFloatBitWidth();
          Value mask = LLVM::ConstantOp::create(
              b, loc, t, b.getIntegerAttr(t, w - 1));
          return Value(LLVM::AndOp::create(b, loc, r, mask));
        };
        switch (ar.getKind()) {
        case ArithKind::add: v = LLVM::AddOp::create(b, loc, l, r); break;
        case ArithKind::sub: v = LLVM::SubOp::create(b, loc, l, r); break;
        case ArithKind::mul: v = LLVM::MulOp::create(b, loc, l, r); break;
        case ArithKind::and_: v = LLVM::AndOp::create(b, loc, l, r); break;
        case ArithKind::or_: v = LLVM::OrOp::create(b, loc, l, r); break;
        case ArithKind::shl:
          v = LLVM::ShlOp::create(b, loc, l, maskedShift());
          break;
        case ArithKind::shr:
          v = LLVM::LShrOp::create(b, loc, l, maskedShift());
          break;
        }
        mapping.map(ar.getResult(), v);
        return success();
      })
      .Case([&](CmpOp c) {
        LLVM::ICmpPredicate pred = LLVM::ICmpPredicate::eq;
        switch (c.getKind()) {
        case CmpKind::eq: pred = LLVM::ICmpPredicate::eq; break;
        case CmpKind::neq: pred = LLVM::ICmpPredicate::ne; break;
        case CmpKind::lt: pred = LLVM::ICmpPredicate::ult; break;
        case CmpKind::gt: pred = LLVM::ICmpPredicate::ugt; break;
        }
        mapping.map(c.getResult(), LLVM::ICmpOp::create(b, loc, pred,
                                                        get(c.getLhs()),
                                                        get(c.getRhs())));
        return success();
      })
      .Case([&](BranchOp br) {
        SmallVector<Value> t, f;
        for (Value v : br.getTrueDestOperands())
          t.push_back(get(v));
        for (Value v : br.getFalseDestOperands())
          f.push_back(get(v));
        LLVM::CondBrOp::create(b, loc, get(br.getCondition()),
                               mapping.lookup(br.getTrueDest()), t,
                               mapping.lookup(br.getFalseDest()), f);
        return success();
      })
      .Case([&](JumpOp j) {
        SmallVector<Value> args;
        for (Value v : j.getDestOperands())
          args.push_back(get(v));
        LLVM::BrOp::create(b, loc, args, mapping.lookup(j.getDest()));
        return success();
      })
      .Case([&](TerminateOp) {
        LLVM::ReturnOp::create(b, loc, ValueRange{});
        return success();
      })
      .Case([&](QueuePushOp q) {
        Value v = get(q.getValue());
        if (v.getType() != b.getI64Type())
          v = LLVM::ZExtOp::create(b, loc, b.getI64Type(), v);
        LLVM::CallOp::create(b, loc, TypeRange{},
                             FlatSymbolRefAttr::get(b.getContext(), kQueuePush),
                             ValueRange{regionArgs.lookup(q.getQueue()), v});
        return success();
      })
      .Case([&](QueuePopOp q) {
        auto call = LLVM::CallOp::create(
            b, loc, TypeRange{b.getI64Type()},
            FlatSymbolRefAttr::get(b.getContext(), kQueuePop),
            ValueRange{regionArgs.lookup(q.getQueue())});
        Value v = call.getResult();
        if (q.getType() != b.getI64Type())
          v = LLVM::TruncOp::create(b, loc, q.getType(), v);
        mapping.map(q.getResult(), v);
        return success();
      })
      .Default([&](Operation *) {
        why = "not an l0ctl control op";
        return failure();
      });
}

struct ConvertL0CtlToLLVMPass
    : public synpl::impl::ConvertL0CtlToLLVMBase<ConvertL0CtlToLLVMPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    MLIRContext *ctx = &getContext();
    SmallVector<ProgramOp> programs;
    module.walk([&](ProgramOp p) { programs.push_back(p); });
    if (programs.empty())
      return;

    SmallVector<NotLowered> failures;
    unsigned total = 0;
    SymbolTable symbols(module);
    OwningOpRef<ModuleOp> scratch = ModuleOp::create(module.getLoc());
    llvm::StringSet<> names;
    bool usesQueues = false;
    for (ProgramOp program : programs) {
      for (Block &block : program.getBody())
        for (Operation &op : block) {
          ++total;
          usesQueues |= isa<QueuePushOp, QueuePopOp>(op);
        }
      ++total; // the program itself
      std::string name = functionName(program);
      Operation *existing = symbols.lookup(name);
      if ((existing && existing != program.getOperation()) ||
          !names.insert(name).second) {
        failures.push_back(
            {program, "symbol @" + name + " already exists in the module"});
        for (Block &block : program.getBody())
          for (Operation &op : block)
            failures.push_back({&op, "its program is not lowered", true});
        continue;
      }
      ProgramBuilder(program, failures).build(*scratch, name);
    }

    // The runtime's queue primitives, declared once.
    auto ptrTy = LLVM::LLVMPointerType::get(ctx);
    auto i64 = IntegerType::get(ctx, 64);
    auto voidTy = LLVM::LLVMVoidType::get(ctx);
    struct Decl {
      StringRef name;
      LLVM::LLVMFunctionType type;
    } decls[] = {
        {kQueuePush, LLVM::LLVMFunctionType::get(voidTy, {ptrTy, i64})},
        {kQueuePop, LLVM::LLVMFunctionType::get(i64, {ptrTy})}};
    SmallVector<Decl> toDeclare;
    if (usesQueues)
      for (const Decl &d : decls) {
        Operation *existing = symbols.lookup(d.name);
        if (!existing) {
          toDeclare.push_back(d);
          continue;
        }
        auto fn = dyn_cast<LLVM::LLVMFuncOp>(existing);
        if (!fn || fn.getFunctionType() != d.type) {
          ++total;
          failures.push_back(
              {existing, ("@" + d.name +
                          " is the runtime's queue primitive and must be an "
                          "llvm.func of that type")
                             .str()});
        }
      }

    if (!failures.empty()) {
      l0tollvm::reportNotLowered(total, failures);
      return signalPassFailure();
    }

    OpBuilder b(ctx);
    b.setInsertionPointToEnd(module.getBody());
    for (const Decl &d : toDeclare)
      LLVM::LLVMFuncOp::create(b, module.getLoc(), d.name, d.type);
    // The programs go first: a module-level program's function takes its
    // symbol name.
    for (ProgramOp program : programs)
      program.erase();
    Block *dest = module.getBody();
    for (Operation &op : llvm::make_early_inc_range(*scratch->getBody()))
      op.moveBefore(dest, dest->end());
    if (!keepRegions) {
      SmallVector<RegionOp> regions;
      module.walk([&](RegionOp region) { regions.push_back(region); });
      for (RegionOp region : regions)
        region.erase();
    }
  }
};

} // namespace
