//===- PlanToLLVM.cpp - The plan's data as the binary's metadata tables ---===//
//
// After the kernels and control programs are LLVM functions, what is left
// of an l0uop.plan (pools, slots, kernel descriptors, transfers, streams,
// syncs, inits, ingests, reports) and the l0ctl.regions is data for the
// runtime. This pass writes it as the read-only tables of
// include/synpl/Runtime/PlanFormat.h (the spec's "Binary Structure":
// memory_layout_table, stream_descriptors, schedule_descriptor), adds
// `main` calling the runtime's executor, and erases the plan.
//
//===----------------------------------------------------------------------===//
#include "synpl/Conversion/Passes.h"

#include "Lowering.h"
#include "synpl/Dialect/L0Ctl/L0CtlOps.h"
#include "synpl/Dialect/L0UOp/L0UOpOps.h"
#include "synpl/Runtime/PlanFormat.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/SymbolTable.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringSet.h"

#include <cstring>

namespace synpl {
#define GEN_PASS_DEF_CONVERTL0PLANTOLLVM
#include "synpl/Conversion/Passes.h.inc"
} // namespace synpl

using namespace mlir;
using namespace synpl;
using synpl::l0tollvm::NotLowered;

namespace {

/// The tables of one plan, built up as int64 words and a string blob.
class TableWriter {
public:
  int64_t str(StringRef s) {
    auto it = offsets.find(s);
    if (it != offsets.end())
      return it->second;
    int64_t off = strings.size();
    strings.append(s.begin(), s.end());
    strings.push_back('\0');
    offsets[s] = off;
    return off;
  }
  /// Appends one record to a section (sections are written in order).
  template <typename Record> void add(int section, const Record &r) {
    static_assert(sizeof(Record) % sizeof(int64_t) == 0, "int64 records");
    const int64_t *w = reinterpret_cast<const int64_t *>(&r);
    sections[section].insert(sections[section].end(), w,
                             w + sizeof(Record) / sizeof(int64_t));
    ++counts[section];
  }
  int64_t count(int section) const { return counts[section]; }

  /// `head` holds the fixed words (name, depth, the loop's defaults); the
  /// magic, the version and the section table are filled in here.
  std::vector<int64_t> finish(synpl_plan_header head) {
    head.magic = SYNPL_PLAN_MAGIC;
    head.version = SYNPL_PLAN_VERSION;
    std::vector<int64_t> words(SYNPL_PLAN_HEADER_WORDS, 0);
    static_assert(sizeof(synpl_plan_header) ==
                      SYNPL_PLAN_HEADER_WORDS * sizeof(int64_t),
                  "the header is its words");
    for (int s = 0; s < SYNPL_PLAN_NUM_SECTIONS; ++s) {
      head.section[s][0] = words.size();
      head.section[s][1] = counts[s];
      words.insert(words.end(), sections[s].begin(), sections[s].end());
    }
    std::memcpy(words.data(), &head, sizeof head);
    return words;
  }
  std::string strings;

private:
  llvm::StringMap<int64_t> offsets;
  std::vector<int64_t> sections[SYNPL_PLAN_NUM_SECTIONS];
  int64_t counts[SYNPL_PLAN_NUM_SECTIONS] = {};
};

static int64_t elementCode(Type t) {
  if (t.isF32())
    return SYNPL_PLAN_F32;
  if (t.isF64())
    return SYNPL_PLAN_F64;
  if (t.isF16())
    return SYNPL_PLAN_F16;
  if (t.isBF16())
    return SYNPL_PLAN_BF16;
  if (auto i = dyn_cast<IntegerType>(t)) {
    switch (i.getWidth()) {
    case 1:
      return SYNPL_PLAN_I1;
    case 8:
      return i.isUnsigned() ? SYNPL_PLAN_U8 : SYNPL_PLAN_I8;
    case 16:
      return SYNPL_PLAN_I16;
    case 32:
      return SYNPL_PLAN_I32;
    case 64:
      return SYNPL_PLAN_I64;
    }
  }
  return SYNPL_PLAN_OTHER;
}

struct ConvertL0PlanToLLVM
    : public synpl::impl::ConvertL0PlanToLLVMBase<ConvertL0PlanToLLVM> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<l0uop::PlanOp> plans(module.getOps<l0uop::PlanOp>());
    if (plans.size() != 1) {
      module.emitError() << "expected exactly one l0uop.plan to write as the "
                            "binary's tables, found "
                         << plans.size();
      return signalPassFailure();
    }
    l0uop::PlanOp plan = plans.front();
    std::vector<NotLowered> failures;
    unsigned total = 0;

    TableWriter w;
    llvm::StringMap<int64_t> poolIndex, slotIndex, kernelIndex, transferIndex,
        streamIndex, eventIndex, regionIndex;
    SmallVector<std::string> kernelFns, programFns;
    llvm::StringSet<> unlowered;
    Block &body = plan.getBody().front();

    for (auto pool : body.getOps<l0uop::PoolOp>()) {
      ++total;
      poolIndex[pool.getSymName()] = w.count(SYNPL_PLAN_POOLS);
      w.add(SYNPL_PLAN_POOLS,
            synpl_plan_pool{w.str(pool.getSymName()), (int64_t)pool.getKind(),
                            (int64_t)pool.getSpace(),
                            (int64_t)pool.getCapacity(),
                            (int64_t)pool.getAlignment()});
    }
    for (auto slot : body.getOps<l0uop::SlotOp>()) {
      ++total;
      l0uop::BufType buf = slot.getBufType();
      int64_t element = elementCode(buf.getElementType());
      if (element == SYNPL_PLAN_OTHER)
        failures.push_back({slot, "its element type has no runtime code"});
      slotIndex[slot.getSymName()] = w.count(SYNPL_PLAN_SLOTS);
      w.add(SYNPL_PLAN_SLOTS,
            synpl_plan_slot{w.str(slot.getSymName()),
                            poolIndex.lookup(slot.getPool()),
                            slot.getOffset() ? (int64_t)*slot.getOffset() : -1,
                            (int64_t)slot.getSize(), element,
                            (int64_t)buf.getNumElements()});
    }
    auto slotOf = [&](Attribute ref) -> int64_t {
      return slotIndex.lookup(cast<FlatSymbolRefAttr>(ref).getValue());
    };

    for (auto kernel : body.getOps<l0uop::KernelOp>()) {
      ++total;
      auto entry = kernel->getAttrOfType<FlatSymbolRefAttr>("host_entry");
      auto iterations = kernel->getAttrOfType<IntegerAttr>("host_iterations");
      if (!entry || !iterations ||
          !module.lookupSymbol<LLVM::LLVMFuncOp>(entry.getAttr())) {
        failures.push_back({kernel, "the kernel has no host function yet "
                                    "(run --synpl-convert-l0uop-to-llvm first)"});
        unlowered.insert(kernel.getSymName());
        continue;
      }
      kernelIndex[kernel.getSymName()] = w.count(SYNPL_PLAN_KERNELS);
      int64_t first = w.count(SYNPL_PLAN_KERNEL_ARGS);
      for (Attribute a : kernel.getInputs())
        w.add(SYNPL_PLAN_KERNEL_ARGS, synpl_plan_kernel_arg{slotOf(a)});
      for (Attribute a : kernel.getOutputs())
        w.add(SYNPL_PLAN_KERNEL_ARGS, synpl_plan_kernel_arg{slotOf(a)});
      w.add(SYNPL_PLAN_KERNELS,
            synpl_plan_kernel{w.str(kernel.getSymName()), first,
                              (int64_t)(kernel.getInputs().size() +
                                        kernel.getOutputs().size()),
                              (int64_t)kernel.getInputs().size(),
                              iterations.getInt()});
      kernelFns.push_back(entry.getValue().str());
    }
    for (auto tx : body.getOps<l0uop::TransferOp>()) {
      ++total;
      transferIndex[tx.getSymName()] = w.count(SYNPL_PLAN_TRANSFERS);
      w.add(SYNPL_PLAN_TRANSFERS,
            synpl_plan_transfer{w.str(tx.getSymName()), slotOf(tx.getSrcAttr()),
                                slotOf(tx.getDstAttr()), (int64_t)tx.getBytes(),
                                (int64_t)tx.getDirection()});
    }
    // Streams: entries are kernels or transfers, by name.
    llvm::DenseMap<std::pair<int64_t, StringRef>, int64_t> positionOf;
    for (auto stream : body.getOps<l0uop::StreamOp>()) {
      ++total;
      int64_t index = w.count(SYNPL_PLAN_STREAMS);
      streamIndex[stream.getSymName()] = index;
      int64_t first = w.count(SYNPL_PLAN_STREAM_ENTRIES);
      int64_t position = 0;
      for (Attribute a : stream.getEntries()) {
        StringRef name = cast<FlatSymbolRefAttr>(a).getValue();
        positionOf[{index, name}] = position++;
        if (kernelIndex.count(name))
          w.add(SYNPL_PLAN_STREAM_ENTRIES,
                synpl_plan_entry{SYNPL_PLAN_ENTRY_KERNEL, kernelIndex.lookup(name)});
        else if (transferIndex.count(name))
          w.add(SYNPL_PLAN_STREAM_ENTRIES,
                synpl_plan_entry{SYNPL_PLAN_ENTRY_TRANSFER,
                                 transferIndex.lookup(name)});
        else
          failures.push_back({stream,
                              ("entry @" + name +
                               " is neither a kernel nor a transfer")
                                  .str(),
                              /*dependent=*/unlowered.contains(name)});
      }
      w.add(SYNPL_PLAN_STREAMS,
            synpl_plan_stream{w.str(stream.getSymName()), first,
                              w.count(SYNPL_PLAN_STREAM_ENTRIES) - first});
    }
    for (auto event : body.getOps<l0uop::EventOp>()) {
      ++total;
      eventIndex[event.getSymName()] = w.count(SYNPL_PLAN_EVENTS);
      w.add(SYNPL_PLAN_EVENTS, synpl_plan_event{w.str(event.getSymName())});
    }
    auto addSync = [&](Operation *op, int64_t kind, FlatSymbolRefAttr event,
                       FlatSymbolRefAttr entry, FlatSymbolRefAttr stream) {
      ++total;
      int64_t s = streamIndex.lookup(stream.getValue());
      auto pos = positionOf.find({s, entry.getValue()});
      if (pos == positionOf.end()) {
        failures.push_back({op, "its entry is not on its stream"});
        return;
      }
      w.add(SYNPL_PLAN_SYNCS,
            synpl_plan_sync{kind, eventIndex.lookup(event.getValue()), s,
                            pos->second});
    };
    for (Operation &op : body) {
      if (auto r = dyn_cast<l0uop::RecordOp>(op))
        addSync(r, SYNPL_PLAN_SYNC_RECORD, r.getEventAttr(), r.getEntryAttr(),
                r.getStreamAttr());
      else if (auto wt = dyn_cast<l0uop::WaitOp>(op))
        addSync(wt, SYNPL_PLAN_SYNC_WAIT, wt.getEventAttr(), wt.getEntryAttr(),
                wt.getStreamAttr());
    }
    for (auto init : body.getOps<l0uop::InitOp>()) {
      ++total;
      int64_t valueBits = 0;
      if (std::optional<APFloat> v = init.getValue()) {
        double d = v->convertToDouble();
        std::memcpy(&valueBits, &d, sizeof d);
      }
      w.add(SYNPL_PLAN_INITS,
            synpl_plan_init{(int64_t)init.getKind(), slotOf(init.getSlotAttr()),
                            init.getFanIn() ? (int64_t)*init.getFanIn() : 0,
                            init.getSeed() ? (int64_t)*init.getSeed() : 0,
                            valueBits,
                            init.getPath() ? w.str(*init.getPath()) : -1});
    }
    for (auto ingest : body.getOps<l0uop::IngestOp>()) {
      ++total;
      int64_t first = w.count(SYNPL_PLAN_INGEST_FIELDS);
      std::optional<ArrayRef<int64_t>> classes = ingest.getClasses();
      for (auto [i, slot, path] :
           llvm::enumerate(ingest.getSlots(), ingest.getPaths())) {
        auto slotOp = SymbolTable::lookupNearestSymbolFrom<l0uop::SlotOp>(
            ingest, cast<FlatSymbolRefAttr>(slot));
        l0uop::BufType buf = slotOp.getBufType();
        int64_t typeCode = 0;
        switch (elementCode(buf.getElementType())) {
        case SYNPL_PLAN_U8:
          typeCode = 0x08;
          break;
        case SYNPL_PLAN_I8:
          typeCode = 0x09;
          break;
        case SYNPL_PLAN_I16:
          typeCode = 0x0B;
          break;
        case SYNPL_PLAN_I32:
          typeCode = 0x0C;
          break;
        case SYNPL_PLAN_F32:
          typeCode = 0x0D;
          break;
        case SYNPL_PLAN_F64:
          typeCode = 0x0E;
          break;
        default:
          failures.push_back({ingest, "slot element type has no IDX type"});
          break;
        }
        std::optional<ArrayRef<int64_t>> ranks = ingest.getRanks();
        int64_t ndims = ranks ? (*ranks)[i]
                              : l0uop::IngestOp::fileRank(buf.getShape().drop_front());
        w.add(SYNPL_PLAN_INGEST_FIELDS,
              synpl_plan_ingest_field{slotOf(slot),
                                      w.str(cast<StringAttr>(path).getValue()),
                                      classes ? (*classes)[i] : 0,
                                      (typeCode << 8) | ndims});
      }
      w.add(SYNPL_PLAN_INGESTS,
            synpl_plan_ingest{w.str(ingest.getSymName()), SYNPL_PLAN_FORMAT_IDX,
                              (int64_t)ingest.getBatch(), ingest.getShuffle(),
                              ingest.getDropLast(), (int64_t)ingest.getSeed(),
                              first, (int64_t)ingest.getSlots().size()});
    }
    for (auto report : body.getOps<l0uop::ReportOp>()) {
      ++total;
      w.add(SYNPL_PLAN_REPORTS,
            synpl_plan_report{w.str(report.getName()),
                              slotOf(report.getSlotAttr())});
    }
    // Control: the regions, and each lowered program with its regions in
    // argument order (synpl.regions, set by --synpl-convert-l0ctl-to-llvm).
    SmallVector<l0ctl::RegionOp> regions;
    module.walk([&](l0ctl::RegionOp r) { regions.push_back(r); });
    for (l0ctl::RegionOp r : regions) {
      ++total;
      regionIndex[r.getSymName()] = w.count(SYNPL_PLAN_REGIONS);
      w.add(SYNPL_PLAN_REGIONS,
            synpl_plan_region{w.str(r.getSymName()), (int64_t)r.getAccess(),
                              (int64_t)r.getSize(),
                              (int64_t)r.getAlignment(),
                              r.getQueueEntry() ? (int64_t)*r.getQueueEntry() : 0});
    }
    module.walk([&](l0ctl::ProgramOp p) {
      ++total;
      failures.push_back({p, "the control program is not lowered yet (run "
                             "--synpl-convert-l0ctl-to-llvm first)"});
    });
    for (auto fn : module.getOps<LLVM::LLVMFuncOp>()) {
      auto used = fn->getAttrOfType<ArrayAttr>("synpl.regions");
      if (!used)
        continue;
      ++total;
      int64_t first = w.count(SYNPL_PLAN_PROGRAM_REGIONS);
      bool ok = true;
      for (Attribute a : used) {
        StringRef name = cast<FlatSymbolRefAttr>(a).getValue();
        if (!regionIndex.count(name)) {
          failures.push_back({fn, ("region @" + name +
                                   " is not declared (keep-regions=false?)")
                                      .str()});
          ok = false;
          break;
        }
        w.add(SYNPL_PLAN_PROGRAM_REGIONS,
              synpl_plan_program_region{regionIndex.lookup(name)});
      }
      if (!ok)
        continue;
      w.add(SYNPL_PLAN_PROGRAMS,
            synpl_plan_program{w.str(fn.getSymName()), first,
                               (int64_t)used.size()});
      programFns.push_back(fn.getSymName().str());
    }

    if (!failures.empty()) {
      l0tollvm::reportNotLowered(total, failures);
      return signalPassFailure();
    }

    // The globals.
    MLIRContext *ctx = &getContext();
    Location loc = plan.getLoc();
    OpBuilder b(ctx);
    b.setInsertionPointToEnd(module.getBody());
    auto i64 = b.getI64Type();
    auto i32 = b.getI32Type();
    auto ptrTy = LLVM::LLVMPointerType::get(ctx);
    synpl_plan_header head{};
    head.name = w.str(plan.getSymName());
    head.pipeline_depth = (int64_t)plan.getPipelineDepth();
    head.epochs = plan.getEpochs().value_or(0);
    head.checkpoint_every = plan.getCheckpointEvery().value_or(0);
    head.evaluate = plan.getEvaluate() ? w.str(*plan.getEvaluate()) : -1;
    std::vector<int64_t> words = w.finish(head);
    auto tableTy = LLVM::LLVMArrayType::get(i64, words.size());
    LLVM::GlobalOp::create(
        b, loc, tableTy, /*isConstant=*/true, LLVM::Linkage::Internal,
        "synpl_plan_table",
        DenseElementsAttr::get(
            RankedTensorType::get({(int64_t)words.size()}, i64),
            ArrayRef<int64_t>(words)),
        /*alignment=*/8);
    auto stringsTy = LLVM::LLVMArrayType::get(b.getI8Type(), w.strings.size());
    LLVM::GlobalOp::create(b, loc, stringsTy, true, LLVM::Linkage::Internal,
                           "synpl_plan_strings", b.getStringAttr(w.strings));
    auto pointerArray = [&](StringRef name, ArrayRef<std::string> fns) {
      // An empty table still gets one null entry (zero-length arrays are
      // not worth a special case in the runtime).
      size_t n = std::max<size_t>(fns.size(), 1);
      auto ty = LLVM::LLVMArrayType::get(ptrTy, n);
      auto g = LLVM::GlobalOp::create(b, loc, ty, true, LLVM::Linkage::Internal,
                                      name, Attribute());
      OpBuilder::InsertionGuard guard(b);
      b.createBlock(&g.getInitializerRegion());
      Value v = LLVM::UndefOp::create(b, loc, ty);
      for (size_t i = 0; i < n; ++i) {
        Value p = fns.empty() ? Value(LLVM::ZeroOp::create(b, loc, ptrTy))
                              : Value(LLVM::AddressOfOp::create(
                                    b, loc, ptrTy, fns[i]));
        v = LLVM::InsertValueOp::create(b, loc, v, p, i);
      }
      LLVM::ReturnOp::create(b, loc, v);
    };
    // The runtime calls every kernel through one ABI,
    //   void <fn>.packed(ptr args, i64 begin, i64 end),
    // args being the kernel's buffer pointers in order.
    SmallVector<std::string> packedFns;
    for (const std::string &name : kernelFns) {
      auto kernelFn = module.lookupSymbol<LLVM::LLVMFuncOp>(name);
      auto packedTy = LLVM::LLVMFunctionType::get(
          LLVM::LLVMVoidType::get(ctx), {ptrTy, i64, i64});
      std::string packedName = name + ".packed";
      auto packed = LLVM::LLVMFuncOp::create(b, loc, packedName, packedTy,
                                             LLVM::Linkage::Internal);
      OpBuilder::InsertionGuard guard(b);
      Block *entry = packed.addEntryBlock(b);
      b.setInsertionPointToStart(entry);
      unsigned numBufs = kernelFn.getNumArguments() - 2;
      SmallVector<Value> callArgs;
      for (unsigned i = 0; i < numBufs; ++i) {
        Value slotPtr = LLVM::GEPOp::create(
            b, loc, ptrTy, ptrTy, entry->getArgument(0),
            ArrayRef<LLVM::GEPArg>{(int32_t)i});
        callArgs.push_back(LLVM::LoadOp::create(b, loc, ptrTy, slotPtr));
      }
      callArgs.push_back(entry->getArgument(1));
      callArgs.push_back(entry->getArgument(2));
      LLVM::CallOp::create(b, loc, kernelFn, callArgs);
      LLVM::ReturnOp::create(b, loc, ValueRange{});
      packedFns.push_back(packedName);
    }
    pointerArray("synpl_plan_kernels", packedFns);
    pointerArray("synpl_plan_programs", programFns);
    auto descTy = LLVM::LLVMStructType::getLiteral(ctx, {ptrTy, ptrTy, ptrTy, ptrTy});
    {
      auto g = LLVM::GlobalOp::create(b, loc, descTy, true,
                                      LLVM::Linkage::External, "synpl_plan",
                                      Attribute());
      OpBuilder::InsertionGuard guard(b);
      b.createBlock(&g.getInitializerRegion());
      Value v = LLVM::UndefOp::create(b, loc, descTy);
      int64_t i = 0;
      for (StringRef name : {"synpl_plan_table", "synpl_plan_strings",
                             "synpl_plan_kernels", "synpl_plan_programs"})
        v = LLVM::InsertValueOp::create(
            b, loc, v, LLVM::AddressOfOp::create(b, loc, ptrTy, name), i++);
      LLVM::ReturnOp::create(b, loc, v);
    }
    if (defineMain) {
      auto rtMainTy = LLVM::LLVMFunctionType::get(i32, {i32, ptrTy, ptrTy});
      if (!module.lookupSymbol("synpl_rt_main"))
        LLVM::LLVMFuncOp::create(b, loc, "synpl_rt_main", rtMainTy);
      auto mainFn = LLVM::LLVMFuncOp::create(
          b, loc, "main", LLVM::LLVMFunctionType::get(i32, {i32, ptrTy}));
      OpBuilder::InsertionGuard guard(b);
      Block *entry = mainFn.addEntryBlock(b);
      b.setInsertionPointToStart(entry);
      Value desc = LLVM::AddressOfOp::create(b, loc, ptrTy, "synpl_plan");
      auto call = LLVM::CallOp::create(
          b, loc, rtMainTy, FlatSymbolRefAttr::get(ctx, "synpl_rt_main"),
          ValueRange{entry->getArgument(0), entry->getArgument(1), desc});
      LLVM::ReturnOp::create(b, loc, call.getResult());
    }

    // The plan is data now: drop it, and the kernels' and programs'
    // bookkeeping attributes.
    plan.erase();
    module.walk([&](l0ctl::RegionOp r) { r.erase(); });
    for (auto fn : module.getOps<LLVM::LLVMFuncOp>()) {
      fn->removeAttr("synpl.regions");
      fn->removeAttr("synpl.iterations");
    }
  }
};

} // namespace
