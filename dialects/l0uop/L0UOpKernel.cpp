//===- L0UOpKernel.cpp - The l0uop.kernel op and the checks of its body ---===//
//
// A kernel's syntax (its buffers as block arguments bound to slots) and its
// verifiers: the launch shape, the buffers a kernel may bind, shared
// memory, and the structure of its body (RANGE / END and IF / ENDIF
// nesting, values used only inside the scope that defines them, REDUCE
// after its RANGE, RANGEs within the launch, no BARRIER under an IF, no
// STORE into an input). Every error is row L0.1.
//
//===----------------------------------------------------------------------===//
#include "synpl/Dialect/L0UOp/L0UOpOps.h"
#include "L0UOpVerify.h"
#include "synpl/Runtime/PlanFormat.h"
#include "synpl/Support/Units.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/TypeUtilities.h"
#include "mlir/IR/OpImplementation.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallPtrSet.h"

using namespace mlir;
using namespace synpl;
using namespace synpl::l0uop;

//===----------------------------------------------------------------------===//
// KernelOp
//===----------------------------------------------------------------------===//

ParseResult KernelOp::parse(OpAsmParser &parser, OperationState &result) {
  StringAttr name;
  if (parser.parseSymbolName(name, getSymNameAttrName(result.name),
                             result.attributes))
    return failure();
  SmallVector<OpAsmParser::Argument> args;
  auto parseBuffers = [&](StringRef keyword,
                          SmallVectorImpl<Attribute> &refs) -> ParseResult {
    if (parser.parseKeyword(keyword))
      return failure();
    return parser.parseCommaSeparatedList(
        AsmParser::Delimiter::Paren, [&]() -> ParseResult {
          OpAsmParser::Argument arg;
          FlatSymbolRefAttr ref;
          if (parser.parseArgument(arg) || parser.parseEqual() ||
              parser.parseAttribute(ref) || parser.parseColonType(arg.type))
            return failure();
          args.push_back(arg);
          refs.push_back(ref);
          return success();
        });
  };
  auto parseDims = [&](StringRef keyword,
                       SmallVectorImpl<int64_t> &dims) -> ParseResult {
    if (parser.parseKeyword(keyword))
      return failure();
    return parser.parseCommaSeparatedList(
        AsmParser::Delimiter::Paren, [&]() -> ParseResult {
          int64_t d;
          if (parser.parseInteger(d))
            return failure();
          dims.push_back(d);
          return success();
        });
  };
  SmallVector<Attribute> inputs, outputs;
  SmallVector<int64_t> grid, block;
  int64_t sharedMem;
  Builder &b = parser.getBuilder();
  if (parseBuffers("inputs", inputs) || parseBuffers("outputs", outputs) ||
      parseDims("grid", grid) || parseDims("block", block) ||
      parser.parseKeyword("shared_mem") || parser.parseInteger(sharedMem))
    return failure();
  if (succeeded(parser.parseOptionalKeyword("shared")) &&
      parser.parseCommaSeparatedList(
          AsmParser::Delimiter::Paren, [&]() -> ParseResult {
            OpAsmParser::Argument arg;
            if (parser.parseArgument(arg) || parser.parseColonType(arg.type))
              return failure();
            args.push_back(arg);
            return success();
          }))
    return failure();
  result.addAttribute(getInputsAttrName(result.name), b.getArrayAttr(inputs));
  result.addAttribute(getOutputsAttrName(result.name),
                      b.getArrayAttr(outputs));
  result.addAttribute(getGridAttrName(result.name),
                      b.getDenseI64ArrayAttr(grid));
  result.addAttribute(getBlockAttrName(result.name),
                      b.getDenseI64ArrayAttr(block));
  result.addAttribute(getSharedMemAttrName(result.name),
                      b.getI64IntegerAttr(sharedMem));
  if (parser.parseOptionalAttrDictWithKeyword(result.attributes))
    return failure();
  Region *body = result.addRegion();
  if (parser.parseRegion(*body, args))
    return failure();
  if (body->empty()) {
    Block &entry = body->emplaceBlock();
    for (OpAsmParser::Argument &arg : args)
      entry.addArgument(arg.type, result.location);
  }
  return success();
}

void KernelOp::print(OpAsmPrinter &p) {
  p << ' ';
  p.printSymbolName(getSymName());
  Block &entry = getBody().front();
  unsigned argIndex = 0;
  auto printBuffers = [&](StringRef keyword, ArrayAttr refs) {
    p << ' ' << keyword << '(';
    llvm::interleaveComma(refs, p, [&](Attribute ref) {
      if (argIndex < entry.getNumArguments()) {
        BlockArgument arg = entry.getArgument(argIndex++);
        p << arg << " = " << ref << " : " << arg.getType();
      }
    });
    p << ')';
  };
  printBuffers("inputs", getInputs());
  printBuffers("outputs", getOutputs());
  auto printDims = [&](StringRef keyword, ArrayRef<int64_t> dims) {
    p << ' ' << keyword << '(';
    llvm::interleaveComma(dims, p);
    p << ')';
  };
  printDims("grid", getGrid());
  printDims("block", getBlock());
  p << " shared_mem " << getSharedMem();
  if (argIndex < entry.getNumArguments()) {
    p << " shared(";
    llvm::interleaveComma(entry.getArguments().drop_front(argIndex), p,
                          [&](BlockArgument arg) {
                            p << arg << " : " << arg.getType();
                          });
    p << ')';
  }
  p.printOptionalAttrDictWithKeyword(
      (*this)->getAttrs(),
      {getSymNameAttrName(), getInputsAttrName(), getOutputsAttrName(),
       getGridAttrName(), getBlockAttrName(), getSharedMemAttrName()});
  p << ' ';
  p.printRegion(getBody(), /*printEntryBlockArgs=*/false);
}

LogicalResult KernelOp::verify() {
  for (auto [name, dims] : {std::pair<StringRef, ArrayRef<int64_t>>{
                                "grid", getGrid()},
                            {"block", getBlock()}}) {
    if (dims.size() != 3)
      return emitOpError() << name << " has 3 dimensions (x, y, z), got "
                           << dims.size();
    for (int64_t d : dims)
      if (d <= 0)
        return emitOpError() << name << " dimensions are positive, got " << d;
  }
  if (getSharedMem() < 0)
    return emitOpError("shared_mem is a byte count, got ") << getSharedMem();
  Block &entry = getBody().front();
  size_t n = getInputs().size() + getOutputs().size();
  if (n > SYNPL_PLAN_MAX_KERNEL_ARGS)
    return uopError(*this) << "binds " << n << " buffers; a kernel binds at most "
           << SYNPL_PLAN_MAX_KERNEL_ARGS
           << " (the runtime's argument table): split it";
  if (entry.getNumArguments() < n)
    return emitOpError("binds ")
           << n << " buffers but its body takes " << entry.getNumArguments();
  for (BlockArgument arg : entry.getArguments())
    if (!llvm::isa<BufType>(arg.getType()))
      return emitOpError("buffer #")
             << arg.getArgNumber() << " has type " << arg.getType()
             << "; kernel buffers are !l0uop.buf";
  // Shared scratch buffers live in the block's shared_mem bytes.
  uint64_t sharedBytes = 0;
  for (BlockArgument arg : entry.getArguments().drop_front(n))
    sharedBytes = saturatingAdd(
        sharedBytes, llvm::cast<BufType>(arg.getType()).getSizeInBytes());
  if (sharedBytes > static_cast<uint64_t>(getSharedMem()))
    return uopError(*this) << "shared buffers take " << sharedBytes
                           << " bytes but the kernel reserves shared_mem "
                           << getSharedMem();
  llvm::SmallDenseSet<Attribute> seen;
  for (Attribute ref : llvm::concat<const Attribute>(getInputs().getValue(),
                                                     getOutputs().getValue()))
    if (!seen.insert(ref).second)
      return emitOpError("lists slot ")
             << ref << " twice; a slot it reads and writes is an output";
  return success();
}

LogicalResult KernelOp::verifySymbolUses(SymbolTableCollection &symbols) {
  Block &entry = getBody().front();
  unsigned i = 0;
  for (Attribute attr : llvm::concat<const Attribute>(
           getInputs().getValue(), getOutputs().getValue())) {
    auto ref = llvm::cast<FlatSymbolRefAttr>(attr);
    auto slot = symbols.lookupNearestSymbolFrom<SlotOp>(*this, ref);
    if (!slot)
      return emitOpError("binds ") << ref << ", which is not an l0uop.slot";
    if (i >= entry.getNumArguments())
      return failure(); // verify() reports the count
    Type argType = entry.getArgument(i++).getType();
    if (slot.getType() != argType)
      return emitOpError("binds slot ")
             << ref << " of type " << slot.getType() << " as " << argType;
  }
  return success();
}

/// The launch dimension a parallel range kind is bounded by.
static std::optional<int64_t> launchLimit(KernelOp kernel, RangeKind kind) {
  ArrayRef<int64_t> grid = kernel.getGrid(), block = kernel.getBlock();
  switch (kind) {
  case RangeKind::loop:
    return std::nullopt;
  case RangeKind::global_x:
  case RangeKind::global_y:
  case RangeKind::global_z: {
    unsigned a = static_cast<unsigned>(kind) - 1;
    return static_cast<int64_t>(
        std::min<uint64_t>(saturatingMul(grid[a], block[a]), INT64_MAX));
  }
  case RangeKind::group_x:
  case RangeKind::group_y:
  case RangeKind::group_z:
    return grid[static_cast<unsigned>(kind) - 4];
  case RangeKind::local_x:
  case RangeKind::local_y:
  case RangeKind::local_z:
    return block[static_cast<unsigned>(kind) - 7];
  }
  return std::nullopt;
}

static StringRef scopeName(Operation *scope) {
  return llvm::isa<IfOp>(scope) ? "IF" : "RANGE";
}

LogicalResult KernelOp::verifyRegions() {
  auto limit = [&](RangeKind kind) { return launchLimit(*this, kind); };
  auto describeLimit = [&](InFlightDiagnostic &diag) {
    diag << "the launch (grid(" << getGrid()[0] << ", " << getGrid()[1] << ", "
         << getGrid()[2] << ") block(" << getBlock()[0] << ", " << getBlock()[1]
         << ", " << getBlock()[2] << "))";
  };
  auto describeInput = [&](InFlightDiagnostic &diag, unsigned i) { diag << getInputs()[i]; };
  return verifyUOpBody(getBody().front(),
                       UOpBodyContract{getNumInputs(), limit, describeLimit, describeInput});
}

LogicalResult synpl::l0uop::verifyUOpBody(Block &body, const UOpBodyContract &contract) {
  unsigned numInputs = contract.numInputs;

  // Walk the flat sequence with the stack of open RANGE/IF scopes.
  llvm::DenseMap<Operation *, Operation *> scopeOf; // innermost open scope
  llvm::SmallPtrSet<Operation *, 8> open;
  SmallVector<Operation *> stack;
  for (Operation &op : body) {
    if (!op.hasTrait<InUOpScope>())
      return uopError(&op) << "'" << op.getName()
                           << "' is not a UOp; kernel bodies hold UOps only";
    Operation *current = stack.empty() ? nullptr : stack.back();
    scopeOf[&op] = current;

    // A value lives until the END/ENDIF of the scope that defines it; only
    // a REDUCE over a range may read that range's body.
    for (OpOperand &use : op.getOpOperands()) {
      Operation *def = use.get().getDefiningOp();
      if (!def || def->getBlock() != &body)
        continue;
      Operation *defScope = scopeOf.lookup(def);
      bool visible = !defScope || open.contains(defScope);
      if (auto reduce = llvm::dyn_cast<ReduceOp>(op))
        if (use.getOperandNumber() == 0 &&
            defScope == reduce.getRange().getDefiningOp())
          visible = true;
      if (!visible) {
        auto diag = uopError(&op)
                    << "operand #" << use.getOperandNumber()
                    << " is used after the " << scopeName(defScope)
                    << " that defines it is closed";
        diag.attachNote(def->getLoc()) << "defined here";
        diag.attachNote(defScope->getLoc())
            << "inside this " << scopeName(defScope);
        return diag;
      }
    }

    if (auto range = llvm::dyn_cast<RangeOp>(op)) {
      if (std::optional<int64_t> limit = contract.parallelLimit(range.getKind())) {
        for (Operation *s : stack)
          if (auto outer = llvm::dyn_cast<RangeOp>(s))
            if (outer.getKind() == range.getKind())
              return uopError(&op)
                     << "RANGE over " << stringifyRangeKind(range.getKind())
                     << " nested in another over the same launch axis";
        if (range.getTripCount() > *limit) {
          auto diag = uopError(&op) << "RANGE over " << stringifyRangeKind(range.getKind())
                                    << " has " << range.getTripCount() << " iterations but ";
          contract.describeLimit(diag);
          diag << " provides " << *limit;
          return diag;
        }
      }
      stack.push_back(&op);
      open.insert(&op);
    } else if (auto end = llvm::dyn_cast<EndOp>(op)) {
      auto range = end.getRange().getDefiningOp<RangeOp>();
      if (!range)
        return uopError(&op) << "END closes a RANGE, and its operand is not "
                             << "one";
      if (!open.contains(range))
        return uopError(&op) << "END of a RANGE that is not open";
      if (stack.back() != range.getOperation()) {
        auto diag = uopError(&op)
                    << "END closes a RANGE while an inner "
                    << scopeName(stack.back()) << " is still open";
        diag.attachNote(stack.back()->getLoc()) << "still open";
        return diag;
      }
      stack.pop_back();
      open.erase(range);
    } else if (llvm::isa<IfOp>(op)) {
      stack.push_back(&op);
      open.insert(&op);
    } else if (llvm::isa<EndIfOp>(op)) {
      if (stack.empty())
        return uopError(&op) << "ENDIF with no open IF";
      if (!llvm::isa<IfOp>(stack.back())) {
        auto diag = uopError(&op) << "ENDIF while a RANGE is still open";
        diag.attachNote(stack.back()->getLoc()) << "still open";
        return diag;
      }
      open.erase(stack.pop_back_val());
    } else if (llvm::isa<BarrierOp>(op)) {
      for (Operation *s : stack)
        if (llvm::isa<IfOp>(s)) {
          auto diag = uopError(&op)
                      << "BARRIER under an IF: threads that skip the IF "
                      << "never reach it";
          diag.attachNote(s->getLoc()) << "the IF";
          return diag;
        }
    } else if (auto reduce = llvm::dyn_cast<ReduceOp>(op)) {
      Operation *range = reduce.getRange().getDefiningOp();
      if (open.contains(range))
        return uopError(&op) << "REDUCE inside the RANGE it folds; it "
                             << "belongs after that RANGE's END";
      if (scopeOf.lookup(range) != current)
        return uopError(&op) << "REDUCE must sit in the scope that encloses "
                             << "its RANGE";
    } else if (auto store = llvm::dyn_cast<StoreOp>(op)) {
      if (store->getNumOperands() > 0)
        if (auto index = store->getOperand(0).getDefiningOp<IndexOp>())
          if (auto arg = llvm::dyn_cast<BlockArgument>(index.getBuffer()))
            if (arg.getOwner() == &body && arg.getArgNumber() < numInputs)
            {
              auto diag = uopError(&op) << "STORE into input ";
              contract.describeInput(diag, arg.getArgNumber());
              diag << "; kernels write only their outputs";
              return diag;
            }
    }
  }
  if (!stack.empty())
    return uopError(stack.back())
           << scopeName(stack.back()) << " is never closed by "
           << (llvm::isa<IfOp>(stack.back()) ? "ENDIF" : "END");
  return success();
}

bool KernelOp::isDeviceKernel(SymbolTable &planSymbols) {
  unsigned n = getNumInputs() + getNumOutputs();
  if (n == 0)
    return false;
  Block &body = getBody().front();
  for (unsigned a = 0; a < n; ++a) {
    auto slot =
        planSymbols.lookup<SlotOp>(getSlotOf(body.getArgument(a)).getValue());
    auto pool = slot ? planSymbols.lookup<PoolOp>(slot.getPool()) : PoolOp();
    if (!pool || pool.getSpace() != MemSpace::device)
      return false;
  }
  return true;
}

//===----------------------------------------------------------------------===//
// Kernels with the same code
//===----------------------------------------------------------------------===//

/// The attributes a kernel's code depends on: all but its name and bindings.
static SmallVector<NamedAttribute> codeAttributes(KernelOp kernel) {
  SmallVector<NamedAttribute> attrs;
  for (NamedAttribute attr : kernel->getAttrs())
    if (attr.getName() != kernel.getSymNameAttrName() &&
        attr.getName() != kernel.getInputsAttrName() &&
        attr.getName() != kernel.getOutputsAttrName())
      attrs.push_back(attr);
  return attrs;
}

llvm::hash_code KernelOp::hashCode() {
  llvm::hash_code hash = llvm::hash_combine(getNumInputs(), getNumOutputs());
  for (NamedAttribute attr : codeAttributes(*this))
    hash = llvm::hash_combine(hash, attr.getName(), attr.getValue());
  for (BlockArgument arg : getBody().front().getArguments())
    hash = llvm::hash_combine(hash, arg.getType());
  getBody().walk([&](Operation *op) {
    hash = llvm::hash_combine(
        hash, OperationEquivalence::computeHash(
                  op, OperationEquivalence::ignoreHashValue,
                  OperationEquivalence::ignoreHashValue,
                  OperationEquivalence::IgnoreLocations));
  });
  return hash;
}

bool KernelOp::hasSameCode(KernelOp other, SymbolTable &planSymbols,
                           SymbolTable &otherPlanSymbols) {
  if (getNumInputs() != other.getNumInputs() ||
      getNumOutputs() != other.getNumOutputs() ||
      codeAttributes(*this) != codeAttributes(other))
    return false;
  // The bindings: the same kind of pool per buffer. (No kernel binds a
  // slot twice: the verifier refuses it, so nothing aliases.)
  Block &body = getBody().front(), &otherBody = other.getBody().front();
  unsigned n = getNumInputs() + getNumOutputs();
  for (unsigned a = 0; a < n; ++a) {
    FlatSymbolRefAttr slotA = getSlotOf(body.getArgument(a));
    FlatSymbolRefAttr slotB = other.getSlotOf(otherBody.getArgument(a));
    auto slotOpA = planSymbols.lookup<SlotOp>(slotA.getValue());
    auto slotOpB = otherPlanSymbols.lookup<SlotOp>(slotB.getValue());
    if (!slotOpA || !slotOpB)
      return false;
    auto poolA = planSymbols.lookup<PoolOp>(slotOpA.getPool());
    auto poolB = otherPlanSymbols.lookup<PoolOp>(slotOpB.getPool());
    if (!poolA || !poolB || poolA.getSpace() != poolB.getSpace() ||
        poolA.getAlignment() != poolB.getAlignment())
      return false;
  }
  return OperationEquivalence::isRegionEquivalentTo(
      &getBody(), &other.getBody(), OperationEquivalence::IgnoreLocations);
}

std::optional<size_t> KernelsByCode::findOrAdd(KernelOp kernel, SymbolTable &planSymbols,
                                               size_t value) {
  SmallVector<Entry, 1> &bucket = byHash[static_cast<size_t>(kernel.hashCode())];
  for (Entry &earlier : bucket)
    if (earlier.kernel.hasSameCode(kernel, *earlier.planSymbols, planSymbols))
      return earlier.value;
  bucket.push_back({kernel, &planSymbols, value});
  return std::nullopt;
}

//===----------------------------------------------------------------------===//
// The work of a kernel
//===----------------------------------------------------------------------===//

KernelWork synpl::l0uop::computeKernelWork(KernelOp kernel) {
  KernelWork work;
  // A user kernel's code is not UOps.
  if (kernel->hasAttr("custom_kernel"))
    work.complete = false;
  Block &body = kernel.getBody().front();
  for (unsigned a = 0, e = kernel.getNumInputs() + kernel.getNumOutputs(); a < e; ++a)
    if (auto buf = dyn_cast<BufType>(body.getArgument(a).getType()))
      work.bytesTouched += double(buf.getSizeInBytes());
  auto lanes = [](Type t) {
    auto v = dyn_cast<VectorType>(t);
    return v ? double(v.getNumElements()) : 1.0;
  };
  auto isFloat = [](Type t) { return isa<FloatType>(getElementTypeOrSelf(t)); };
  auto bytesOf = [&](Type t) {
    Type e = getElementTypeOrSelf(t);
    return lanes(t) * (e.isIntOrFloat() ? double((e.getIntOrFloatBitWidth() + 7) / 8) : 8.0);
  };
  // Iterations of the RANGEs open around the current UOp, and each RANGE's.
  SmallVector<double> trips{1.0};
  llvm::DenseMap<Value, double> tripsInside;
  for (Operation &op : body) {
    double n = trips.back();
    if (auto range = dyn_cast<RangeOp>(op)) {
      trips.push_back(n * double(std::max<int64_t>(1, range.getTripCount())));
      tripsInside[range.getResult()] = trips.back();
    } else if (isa<EndOp>(op)) {
      if (trips.size() > 1)
        trips.pop_back();
    } else if (auto load = dyn_cast<LoadOp>(op)) {
      work.bytesAccessed += n * bytesOf(load.getType());
    } else if (auto store = dyn_cast<StoreOp>(op)) {
      work.bytesAccessed += n * bytesOf(store->getOperand(1).getType());
    } else if (auto reduce = dyn_cast<ReduceOp>(op)) {
      if (isFloat(reduce.getType()))
        work.flops += tripsInside.lookup(reduce.getRange()) * lanes(reduce.getType());
    } else if (isa<MulAccOp>(op)) {
      work.flops += 2 * n * lanes(op.getResult(0).getType());
    } else if (auto wmma = dyn_cast<WmmaOp>(op)) {
      // a: MxK, b: KxN.
      auto a = dyn_cast<VectorType>(wmma.getA().getType());
      auto b = dyn_cast<VectorType>(wmma.getB().getType());
      if (a && b && a.getRank() == 2 && b.getRank() == 2)
        work.flops += 2 * n * double(a.getDimSize(0)) * double(a.getDimSize(1)) *
                      double(b.getDimSize(1));
      else
        work.complete = false;
    } else if (isa<AddOp, MulOp, NegOp, ReciprocalOp, MaxOp, DivOp, Exp2Op, Log2Op,
                   SinOp, SqrtOp>(op)) {
      if (isFloat(op.getResult(0).getType()))
        work.flops += n * lanes(op.getResult(0).getType());
    } else if (isa<CustomOp>(op)) {
      work.complete = false;
    }
  }
  return work;
}
