//===- MlirMutator.cpp - Structure-aware mutation of MLIR inputs ----------===//
#include "MlirMutator.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/OperationSupport.h"
#include "mlir/Parser/Parser.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

#include <random>
#include <vector>

using namespace mlir;

namespace {

class Mutator {
public:
  Mutator(ModuleOp module, unsigned seed) : module(module), rng(seed) {
    module.walk([&](Operation *op) {
      if (op != module)
        ops.push_back(op);
    });
  }

  /// Tries mutations until one applies (a few attempts).
  bool mutate() {
    if (ops.empty())
      return false;
    for (int attempt = 0; attempt < 8; ++attempt) {
      Operation *op = ops[below(ops.size())];
      bool done = false;
      switch (below(7)) {
      case 0: done = replaceOperand(op); break;
      case 1: done = swapOperands(op); break;
      case 2: done = erase(op); break;
      case 3: done = duplicate(op); break;
      case 4:
      case 5: done = tweakAttribute(op); break;
      case 6: done = tweakType(op); break;
      }
      if (done)
        return true;
    }
    return false;
  }

private:
  size_t below(size_t n) { return std::uniform_int_distribution<size_t>(0, n - 1)(rng); }

  /// Values of `type` usable as an operand of `op`: the arguments of its
  /// block and the results of the ops before it there.
  std::vector<Value> available(Operation *op, Type type) {
    std::vector<Value> out;
    Block *block = op->getBlock();
    if (!block)
      return out;
    for (BlockArgument a : block->getArguments())
      if (a.getType() == type)
        out.push_back(a);
    for (Operation &prev : *block) {
      if (&prev == op)
        break;
      for (Value r : prev.getResults())
        if (r.getType() == type)
          out.push_back(r);
    }
    return out;
  }

  bool replaceOperand(Operation *op) {
    if (op->getNumOperands() == 0)
      return false;
    OpOperand &use = op->getOpOperand(below(op->getNumOperands()));
    std::vector<Value> choices = available(op, use.get().getType());
    llvm::erase(choices, use.get());
    if (choices.empty())
      return false;
    use.set(choices[below(choices.size())]);
    return true;
  }

  bool swapOperands(Operation *op) {
    unsigned n = op->getNumOperands();
    if (n < 2)
      return false;
    unsigned i = below(n), j = below(n);
    if (i == j || op->getOperand(i).getType() != op->getOperand(j).getType() ||
        op->getOperand(i) == op->getOperand(j))
      return false;
    Value a = op->getOperand(i);
    op->setOperand(i, op->getOperand(j));
    op->setOperand(j, a);
    return true;
  }

  bool erase(Operation *op) {
    if (op->getNumRegions() && !op->getRegion(0).empty() && below(2))
      return false; // rarely erase whole regions
    for (Value r : op->getResults()) {
      if (r.use_empty())
        continue;
      std::vector<Value> choices = available(op, r.getType());
      if (choices.empty())
        return false;
      r.replaceAllUsesWith(choices[below(choices.size())]);
    }
    // Nested ops are gone with it.
    op->walk([&](Operation *nested) { llvm::erase(ops, nested); });
    op->erase();
    return true;
  }

  bool duplicate(Operation *op) {
    if (op->hasTrait<OpTrait::IsTerminator>() || op->hasTrait<OpTrait::SymbolTable>())
      return false;
    OpBuilder b(op);
    Operation *copy = b.clone(*op);
    // The copy's results serve some of the original's uses.
    for (auto [orig, dup] : llvm::zip(op->getResults(), copy->getResults()))
      for (OpOperand &use : llvm::make_early_inc_range(orig.getUses()))
        if (below(2))
          use.set(dup);
    copy->walk([&](Operation *nested) { ops.push_back(nested); });
    return true;
  }

  Attribute tweak(Attribute a) {
    static const int64_t kInts[] = {0, 1, -1, 2, 3, 7, 64, 255, 256, 4096, int64_t(1) << 31,
                                    INT64_MAX};
    if (auto i = dyn_cast<IntegerAttr>(a)) {
      if (!isa<IntegerType, IndexType>(i.getType()))
        return {};
      int64_t v = i.getValue().getSExtValue();
      int64_t choices[] = {v + 1, v - 1, 2 * v, kInts[below(std::size(kInts))]};
      return IntegerAttr::get(i.getType(), choices[below(4)]);
    }
    if (auto f = dyn_cast<FloatAttr>(a)) {
      double v = f.getValueAsDouble();
      double choices[] = {0.0, -v, 2 * v, 1e-30, 1e30, 1.0, -1.0};
      return FloatAttr::get(f.getType(), choices[below(std::size(choices))]);
    }
    if (auto d = dyn_cast<DenseI64ArrayAttr>(a)) {
      std::vector<int64_t> v(d.asArrayRef());
      switch (below(3)) {
      case 0:
        if (v.empty())
          return {};
        v[below(v.size())] += below(2) ? 1 : -1;
        break;
      case 1:
        if (v.empty())
          return {};
        v.erase(v.begin() + below(v.size()));
        break;
      case 2:
        v.push_back(v.empty() ? 0 : v[below(v.size())]);
        break;
      }
      return DenseI64ArrayAttr::get(a.getContext(), v);
    }
    return {};
  }

  bool tweakAttribute(Operation *op) {
    SmallVector<NamedAttribute> attrs(op->getAttrs());
    if (attrs.empty())
      return false;
    NamedAttribute n = attrs[below(attrs.size())];
    Attribute t = tweak(n.getValue());
    if (!t)
      return false;
    op->setAttr(n.getName(), t);
    return true;
  }

  bool tweakType(Operation *op) {
    if (op->getNumResults() == 0)
      return false;
    Value r = op->getResult(below(op->getNumResults()));
    auto t = dyn_cast<RankedTensorType>(r.getType());
    if (!t || t.getRank() == 0)
      return false;
    SmallVector<int64_t> shape(t.getShape());
    int64_t &d = shape[below(shape.size())];
    if (ShapedType::isDynamic(d))
      return false;
    d = below(2) ? d + 1 : std::max<int64_t>(1, d - 1);
    r.setType(RankedTensorType::get(shape, t.getElementType(), t.getEncoding()));
    return true;
  }

  ModuleOp module;
  std::mt19937 rng;
  std::vector<Operation *> ops;
};

} // namespace

std::string synpl::fuzz::mutateMlir(MLIRContext &ctx, const std::string &in, unsigned seed) {
  ParserConfig config(&ctx, /*verifyAfterParse=*/false);
  llvm::SourceMgr sourceMgr;
  sourceMgr.AddNewSourceBuffer(llvm::MemoryBuffer::getMemBufferCopy(in, "input.mlir"),
                               llvm::SMLoc());
  OwningOpRef<ModuleOp> module = parseSourceFile<ModuleOp>(sourceMgr, config);
  if (!module)
    return "";
  Mutator m(*module, seed);
  if (!m.mutate())
    return "";
  std::string out;
  llvm::raw_string_ostream os(out);
  OpPrintingFlags flags;
  // Now and then the generic form, whose parser path differs.
  if (seed % 5 == 0)
    flags.printGenericOpForm();
  module->print(os, flags);
  return out;
}
