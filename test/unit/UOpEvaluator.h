//===- UOpEvaluator.h - Run an L0 plan's kernels over double buffers -*- C++ -*-===//
//
// A plain evaluator of l0uop kernel bodies for the unit tests: every RANGE
// is a sequential loop, every value a double, every buffer a vector of
// doubles named by its slot. Independent of the LLVM and NVVM lowerings, so
// a test can check what the L1 -> L0 emission computes against the
// reference interpreter.
//
//===----------------------------------------------------------------------===//
#ifndef SYNPL_TEST_UNIT_UOPEVALUATOR_H
#define SYNPL_TEST_UNIT_UOPEVALUATOR_H

#include "synpl/Dialect/L0UOp/L0UOpOps.h"

#include "mlir/IR/BuiltinTypes.h"
#include "llvm/ADT/DenseMap.h"

#include <catch2/catch.hpp>

#include <cmath>
#include <map>
#include <string>
#include <vector>

namespace synpl::test {
using namespace mlir;

/// Runs the kernels of a plan sequentially over flat double buffers.
class UOpEvaluator {
public:
  std::map<std::string, std::vector<double>> memory; // slot -> elements
  int64_t outOfBounds = 0; // accesses outside a buffer

  /// Every slot of `plan` as a buffer of zeros.
  void allocate(l0uop::PlanOp plan) {
    for (auto slot : plan.getBody().front().getOps<l0uop::SlotOp>())
      memory[slot.getSymName().str()].assign(slot.getBufType().getNumElements(), 0.0);
  }

  /// The kernels `plan`'s first stream launches, in launch order.
  static std::vector<l0uop::KernelOp> firstStreamKernels(l0uop::PlanOp plan) {
    std::vector<l0uop::KernelOp> kernels;
    auto stream = *plan.getBody().front().getOps<l0uop::StreamOp>().begin();
    for (Attribute e : stream.getEntries())
      if (auto kernel = plan.lookup<l0uop::KernelOp>(cast<FlatSymbolRefAttr>(e).getValue()))
        kernels.push_back(kernel);
    return kernels;
  }

  void run(l0uop::KernelOp kernel) {
    Block &body = kernel.getBody().front();
    env.clear();
    bufOf.clear();
    for (BlockArgument arg : body.getArguments())
      bufOf[arg] = &memory[kernel.getSlotOf(arg).getValue().str()];
    ops.clear();
    for (Operation &op : body)
      ops.push_back(&op);
    exec(0, ops.size());
  }

private:
  struct Ptr {
    std::vector<double> *buf;
    int64_t offset;
  };
  std::vector<Operation *> ops;
  llvm::DenseMap<Value, double> env;
  llvm::DenseMap<Value, Ptr> ptrs;
  llvm::DenseMap<Value, std::vector<double> *> bufOf;

  size_t endOf(size_t i) {
    Value r = ops[i]->getResult(0);
    for (size_t j = i + 1; j < ops.size(); ++j)
      if (auto end = dyn_cast<l0uop::EndOp>(ops[j]); end && end.getRange() == r)
        return j;
    FAIL("RANGE without END");
    return ops.size();
  }

  static double castTo(Type t, double v) {
    if (auto it = dyn_cast<IntegerType>(t)) {
      double tr = std::trunc(v);
      if (it.getWidth() == 1)
        return v != 0;
      return tr;
    }
    return v;
  }

  void exec(size_t begin, size_t end) {
    for (size_t i = begin; i < end; ++i) {
      Operation *op = ops[i];
      auto val = [&](unsigned k) { return env.lookup(op->getOperand(k)); };
      if (auto range = dyn_cast<l0uop::RangeOp>(op)) {
        size_t j = endOf(i);
        // The REDUCEs over this range, after its END.
        SmallVector<l0uop::ReduceOp> reduces;
        for (size_t k = j + 1; k < ops.size(); ++k)
          if (auto red = dyn_cast<l0uop::ReduceOp>(ops[k]); red && red.getRange() == range.getResult())
            reduces.push_back(red);
        SmallVector<double> acc;
        for (auto red : reduces)
          acc.push_back(env.lookup(red.getInit()));
        for (int64_t v = range.getLower(); v < range.getUpper(); v += range.getStep()) {
          env[range.getResult()] = v;
          exec(i + 1, j);
          for (auto [n, red] : llvm::enumerate(reduces)) {
            double x = env.lookup(red.getValue());
            switch (red.getKind()) {
            case l0uop::ReduceKind::add: acc[n] += x; break;
            case l0uop::ReduceKind::mul: acc[n] *= x; break;
            case l0uop::ReduceKind::max: acc[n] = std::max(acc[n], x); break;
            }
          }
        }
        for (auto [n, red] : llvm::enumerate(reduces))
          env[red.getResult()] = acc[n];
        i = j;
        continue;
      }
      if (isa<l0uop::ReduceOp, l0uop::EndOp>(op))
        continue;
      if (auto c = dyn_cast<l0uop::ConstOp>(op)) {
        Attribute a = c.getValue();
        if (auto f = dyn_cast<FloatAttr>(a))
          env[c.getResult()] = f.getValueAsDouble();
        else
          env[c.getResult()] = (double)cast<IntegerAttr>(a).getInt();
        continue;
      }
      if (auto index = dyn_cast<l0uop::IndexOp>(op)) {
        auto buf = cast<l0uop::BufType>(index.getBuffer().getType());
        int64_t off = 0;
        for (auto [d, iv] : llvm::enumerate(index.getIndices())) {
          int64_t x = (int64_t)env.lookup(iv);
          if (x < 0 || x >= buf.getShape()[d])
            ++outOfBounds;
          off = off * buf.getShape()[d] + x;
        }
        ptrs[index.getResult()] = {bufOf.lookup(index.getBuffer()), off};
        continue;
      }
      if (isa<l0uop::LoadOp>(op)) {
        Ptr p = ptrs.lookup(op->getOperand(0));
        if (p.offset < 0 || p.offset >= (int64_t)p.buf->size()) {
          ++outOfBounds;
          continue;
        }
        env[op->getResult(0)] = (*p.buf)[p.offset];
        continue;
      }
      if (isa<l0uop::StoreOp>(op)) {
        Ptr p = ptrs.lookup(op->getOperand(0));
        if (p.offset < 0 || p.offset >= (int64_t)p.buf->size()) {
          ++outOfBounds;
          continue;
        }
        (*p.buf)[p.offset] = val(1);
        continue;
      }
      double r = 0;
      if (isa<l0uop::AddOp>(op)) r = val(0) + val(1);
      else if (isa<l0uop::MulOp>(op)) r = val(0) * val(1);
      else if (isa<l0uop::MulAccOp>(op)) r = val(0) * val(1) + val(2);
      else if (isa<l0uop::NegOp>(op)) r = -val(0);
      else if (isa<l0uop::ReciprocalOp>(op)) r = 1.0 / val(0);
      else if (isa<l0uop::MaxOp>(op)) r = std::max(val(0), val(1));
      else if (isa<l0uop::DivOp>(op)) r = std::trunc(val(0) / val(1));
      else if (isa<l0uop::ModOp>(op)) r = std::fmod(val(0), val(1));
      else if (isa<l0uop::CmpLtOp>(op)) r = val(0) < val(1);
      else if (isa<l0uop::CmpNeOp>(op)) r = val(0) != val(1);
      else if (isa<l0uop::WhereOp>(op)) r = val(0) != 0 ? val(1) : val(2);
      else if (isa<l0uop::Exp2Op>(op)) r = std::exp2(val(0));
      else if (isa<l0uop::Log2Op>(op)) r = std::log2(val(0));
      else if (isa<l0uop::SinOp>(op)) r = std::sin(val(0));
      else if (isa<l0uop::SqrtOp>(op)) r = std::sqrt(val(0));
      else if (isa<l0uop::CastOp>(op)) r = castTo(op->getResult(0).getType(), val(0));
      else
        FAIL("no evaluator for " << op->getName().getStringRef().str());
      env[op->getResult(0)] = r;
    }
  }
};


} // namespace synpl::test

#endif // SYNPL_TEST_UNIT_UOPEVALUATOR_H
