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
// CUDA kernels (`device_entry`, from --synpl-convert-l0uop-to-nvvm) are
// records with their launch; the gpu.binary's PTX (and the cubin
// --synpl-cuda-assemble adds next to it) become the spec's "kernel cubins" in
// .rodata.
//
//===----------------------------------------------------------------------===//
#include "synpl/Conversion/Passes.h"

#include "Lowering.h"
#include "synpl/Dialect/L0Ctl/L0CtlOps.h"
#include "synpl/Dialect/L0UOp/L0UOpOps.h"
#include "synpl/Dialect/L0UOp/L0UOpTables.h"
#include "synpl/Runtime/PlanFormat.h"
#include "synpl/Target/CudaTarget.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/SymbolTable.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringSet.h"

#include <cstring>
#include <map>

namespace synpl {
#define GEN_PASS_DEF_CONVERTL0PLANTOLLVM
#include "synpl/Conversion/Passes.h.inc"
} // namespace synpl

using namespace mlir;
using namespace synpl;
using synpl::l0tollvm::NotLowered;

namespace {

/// The `.entry` names of a PTX module.
llvm::StringSet<> ptxEntries(StringRef ptx) {
  llvm::StringSet<> names;
  size_t pos = 0;
  while ((pos = ptx.find(".entry", pos)) != StringRef::npos) {
    pos += 6;
    StringRef rest = ptx.drop_front(pos);
    if (rest.empty() || !llvm::isSpace(rest.front()))
      continue;
    rest = rest.ltrim();
    size_t end = rest.find_first_of(" \t\r\n(");
    names.insert(rest.take_front(end));
  }
  return names;
}

/// The PTX ISA version of a module (`.version 7.8` -> 78); 0: none.
unsigned ptxVersion(StringRef ptx) {
  size_t pos = ptx.find(".version");
  if (pos == StringRef::npos)
    return 0;
  StringRef v = ptx.drop_front(pos + 8).ltrim();
  unsigned major = 0, minor = 0;
  if (v.consumeInteger(10, major) || !v.consume_front(".") ||
      v.consumeInteger(10, minor))
    return 0;
  return major * 10 + minor;
}

/// The CUDA kernels' module: the gpu.binary's object for one NVVM target.
struct DeviceModule {
  gpu::BinaryOp binary;
  std::string chip;
  const cuda::CudaArch *arch = nullptr;
  std::string ptx;   ///< assembly; empty when the object is a cubin/fatbin
  std::string cubin; ///< a binary object (cubin or fatbin); empty without one
};

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

    l0uop::PlanTableWriter w;
    llvm::StringMap<int64_t> kernelIndex, transferIndex, streamIndex, eventIndex, regionIndex;
    SmallVector<std::string> kernelFns, programFns;
    SmallVector<int64_t> kernelClamp; // a CUDA fallback's range; -1: none
    llvm::StringSet<> unlowered;
    Block &body = plan.getBody().front();

    auto fail = [&](Operation *op, const Twine &why) { failures.push_back({op, why.str()}); };
    total += w.addMemory(plan, fail);
    auto slotOf = [&](Attribute ref) -> int64_t {
      return w.slotIndex(cast<FlatSymbolRefAttr>(ref).getValue());
    };

    // The CUDA kernels' module, when the plan has device kernels.
    std::optional<DeviceModule> device;
    bool hasDeviceKernels = llvm::any_of(
        body.getOps<l0uop::KernelOp>(),
        [](l0uop::KernelOp k) { return k->hasAttr("device_entry"); });
    if (hasDeviceKernels) {
      FailureOr<DeviceModule> dm = deviceModule(module, plan);
      if (failed(dm))
        return signalPassFailure();
      device = std::move(*dm);
    }
    llvm::StringSet<> entries;
    if (device && !device->ptx.empty())
      entries = ptxEntries(device->ptx);

    for (auto kernel : body.getOps<l0uop::KernelOp>()) {
      ++total;
      auto entry = kernel->getAttrOfType<FlatSymbolRefAttr>("host_entry");
      auto iterations = kernel->getAttrOfType<IntegerAttr>("host_iterations");
      auto deviceEntry = kernel->getAttrOfType<StringAttr>("device_entry");
      bool hasHost = entry && iterations &&
                     module.lookupSymbol<LLVM::LLVMFuncOp>(entry.getAttr());
      if (!hasHost && !deviceEntry) {
        failures.push_back({kernel, "the kernel has no host function yet "
                                    "(run --synpl-convert-l0uop-to-llvm first)"});
        unlowered.insert(kernel.getSymName());
        continue;
      }
      if (deviceEntry && !device->ptx.empty() &&
          !entries.contains(deviceEntry.getValue())) {
        failures.push_back({kernel, ("its device entry " +
                                     deviceEntry.getValue() +
                                     " is not an .entry of the gpu.binary's PTX")
                                        .str()});
        unlowered.insert(kernel.getSymName());
        continue;
      }
      kernelIndex[kernel.getSymName()] = w.count(SYNPL_PLAN_KERNELS);
      int64_t first = w.count(SYNPL_PLAN_KERNEL_ARGS);
      for (Attribute a : kernel.getInputs())
        w.add(SYNPL_PLAN_KERNEL_ARGS, synpl_plan_kernel_arg{slotOf(a)});
      for (Attribute a : kernel.getOutputs())
        w.add(SYNPL_PLAN_KERNEL_ARGS, synpl_plan_kernel_arg{slotOf(a)});
      synpl_plan_kernel record{};
      record.name = w.str(kernel.getSymName());
      record.first_arg = first;
      record.num_args =
          (int64_t)(kernel.getInputs().size() + kernel.getOutputs().size());
      record.num_inputs = (int64_t)kernel.getInputs().size();
      record.iterations = hasHost ? iterations.getInt() : 0;
      auto grain = kernel->getAttrOfType<IntegerAttr>("host_grain");
      record.grain = hasHost && grain ? grain.getInt() : 1;
      record.target = deviceEntry ? SYNPL_PLAN_TARGET_CUDA : SYNPL_PLAN_TARGET_HOST;
      record.entry = deviceEntry ? w.str(deviceEntry.getValue()) : -1;
      for (int d = 0; d < 3; ++d) {
        record.grid[d] = d < (int)kernel.getGrid().size() ? kernel.getGrid()[d] : 1;
        record.block[d] =
            d < (int)kernel.getBlock().size() ? kernel.getBlock()[d] : 1;
      }
      record.shared_mem = (int64_t)kernel.getSharedMem();
      w.add(SYNPL_PLAN_KERNELS, record);
      kernelFns.push_back(hasHost ? entry.getValue().str() : std::string());
      kernelClamp.push_back(deviceEntry && hasHost ? iterations.getInt() : -1);
    }
    for (auto tx : body.getOps<l0uop::TransferOp>()) {
      ++total;
      transferIndex[tx.getSymName()] = w.count(SYNPL_PLAN_TRANSFERS);
      w.add(SYNPL_PLAN_TRANSFERS,
            synpl_plan_transfer{w.str(tx.getSymName()), slotOf(tx.getSrcAttr()),
                                slotOf(tx.getDstAttr()), (int64_t)tx.getBytes(),
                                (int64_t)tx.getDirection()});
    }
    // Collectives (their completion entry is filled in once the streams
    // are written: an absolute entry index).
    llvm::StringMap<int64_t> collectiveIndex;
    for (auto c : body.getOps<l0uop::CollectiveOp>()) {
      ++total;
      collectiveIndex[c.getSymName()] = w.count(SYNPL_PLAN_COLLECTIVES);
      int64_t first = w.count(SYNPL_PLAN_COLLECTIVE_SLOTS);
      for (Attribute a : c.getSlots())
        w.add(SYNPL_PLAN_COLLECTIVE_SLOTS, synpl_plan_collective_slot{slotOf(a)});
      w.add(SYNPL_PLAN_COLLECTIVES,
            synpl_plan_collective{w.str(c.getSymName()), (int64_t)c.getKind(),
                                  c.getReduce() ? (int64_t)*c.getReduce() : 0,
                                  c.getRoot().value_or(0), first,
                                  (int64_t)c.getSlots().size(), -1});
    }
    // Streams: entries are kernels, transfers or collectives, by name.
    llvm::DenseMap<std::pair<int64_t, StringRef>, int64_t> positionOf;
    llvm::StringMap<std::pair<int64_t, int64_t>> collectiveOn; // stream, its first entry
    for (auto stream : body.getOps<l0uop::StreamOp>()) {
      ++total;
      int64_t index = w.count(SYNPL_PLAN_STREAMS);
      streamIndex[stream.getSymName()] = index;
      int64_t first = w.count(SYNPL_PLAN_STREAM_ENTRIES);
      int64_t position = 0;
      for (Attribute a : stream.getEntries()) {
        StringRef name = cast<FlatSymbolRefAttr>(a).getValue();
        positionOf[{index, name}] = position++;
        if (collectiveIndex.count(name))
          collectiveOn[name] = {index, first};
        if (kernelIndex.count(name))
          w.add(SYNPL_PLAN_STREAM_ENTRIES,
                synpl_plan_entry{SYNPL_PLAN_ENTRY_KERNEL, kernelIndex.lookup(name)});
        else if (transferIndex.count(name))
          w.add(SYNPL_PLAN_STREAM_ENTRIES,
                synpl_plan_entry{SYNPL_PLAN_ENTRY_TRANSFER,
                                 transferIndex.lookup(name)});
        else if (collectiveIndex.count(name))
          w.add(SYNPL_PLAN_STREAM_ENTRIES,
                synpl_plan_entry{SYNPL_PLAN_ENTRY_COLLECTIVE,
                                 collectiveIndex.lookup(name)});
        else
          failures.push_back({stream,
                              ("entry @" + name +
                               " is neither a kernel, a transfer nor a collective")
                                  .str(),
                              /*dependent=*/unlowered.contains(name)});
      }
      w.add(SYNPL_PLAN_STREAMS,
            synpl_plan_stream{w.str(stream.getSymName()), first,
                              w.count(SYNPL_PLAN_STREAM_ENTRIES) - first});
    }
    for (auto c : body.getOps<l0uop::CollectiveOp>())
      if (std::optional<StringRef> before = c.getCompleteBefore()) {
        auto on = collectiveOn.find(c.getSymName());
        auto pos = on == collectiveOn.end()
                       ? positionOf.end()
                       : positionOf.find({on->second.first, *before});
        if (pos == positionOf.end())
          failures.push_back({c, "it, or the entry it completes before, is on no stream"});
        else
          w.at<synpl_plan_collective>(SYNPL_PLAN_COLLECTIVES,
                                      collectiveIndex.lookup(c.getSymName()))
              .complete_before = on->second.second + pos->second;
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
    total += w.addHostIO(plan, fail);
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
    synpl_plan_header head = w.headerOf(plan);
    if (device) {
      head.device_arch = device->arch->major * 10 + device->arch->minor;
      // The chip's PTX ISA, or the module's own `.version` when newer.
      head.min_driver = std::max(
          device->arch->minDriverVersion,
          cuda::driverVersionForPtx(std::max(device->arch->ptxVersion,
                                             ptxVersion(device->ptx))));
    }
    std::vector<int64_t> words = w.finish(head);
    auto tableTy = LLVM::LLVMArrayType::get(i64, words.size());
    LLVM::GlobalOp::create(
        b, loc, tableTy, /*isConstant=*/true, LLVM::Linkage::Internal,
        "synpl_plan_table",
        DenseElementsAttr::get(
            RankedTensorType::get({(int64_t)words.size()}, i64),
            ArrayRef<int64_t>(words)),
        /*alignment=*/8);
    std::string strings = w.takeStrings();
    auto stringsTy = LLVM::LLVMArrayType::get(b.getI8Type(), strings.size());
    LLVM::GlobalOp::create(b, loc, stringsTy, true, LLVM::Linkage::Internal,
                           "synpl_plan_strings", b.getStringAttr(strings));
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
        Value p = fns.empty() || fns[i].empty()
                      ? Value(LLVM::ZeroOp::create(b, loc, ptrTy))
                      : Value(LLVM::AddressOfOp::create(b, loc, ptrTy, fns[i]));
        v = LLVM::InsertValueOp::create(b, loc, v, p, i);
      }
      LLVM::ReturnOp::create(b, loc, v);
    };
    // The runtime calls every kernel through one ABI,
    //   void <fn>.packed(ptr args, i64 begin, i64 end),
    // args being the kernel's buffer pointers in order.
    // Kernels that share a function (the same code) share its wrapper.
    // (A CUDA kernel's fallback clamps to its own range: one wrapper per
    // function and clamp.)
    SmallVector<std::string> packedFns;
    std::map<std::pair<std::string, int64_t>, std::string> wrapped;
    llvm::StringMap<unsigned> wrappersOf;
    for (auto [name, clamp] : llvm::zip_equal(kernelFns, kernelClamp)) {
      if (name.empty()) { // a CUDA kernel without a host fallback
        packedFns.push_back("");
        continue;
      }
      auto [it, inserted] = wrapped.try_emplace({name, clamp});
      if (!inserted) {
        packedFns.push_back(it->second);
        continue;
      }
      unsigned nth = wrappersOf[name]++;
      std::string packedName =
          name + ".packed" + (nth ? "." + std::to_string(nth) : std::string());
      it->second = packedName;
      packedFns.push_back(packedName);
      auto kernelFn = module.lookupSymbol<LLVM::LLVMFuncOp>(name);
      auto packedTy = LLVM::LLVMFunctionType::get(
          LLVM::LLVMVoidType::get(ctx), {ptrTy, i64, i64});
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
      Value end = entry->getArgument(2);
      if (clamp >= 0) {
        // A CUDA kernel's fallback is called with [0, INT64_MAX) by whoever
        // does not know its split range (the fake driver of the tests).
        Value range = LLVM::ConstantOp::create(b, loc, i64,
                                               b.getI64IntegerAttr(clamp));
        Value over = LLVM::ICmpOp::create(b, loc, LLVM::ICmpPredicate::sgt,
                                          end, range);
        end = LLVM::SelectOp::create(b, loc, over, range, end);
      }
      callArgs.push_back(end);
      // Not inlined: the kernel is external (its host entry), so an inlined
      // copy would compile and link its code twice.
      auto call = LLVM::CallOp::create(b, loc, kernelFn, callArgs);
      call.setNoInline(true);
      LLVM::ReturnOp::create(b, loc, ValueRange{});
    }
    pointerArray("synpl_plan_kernels", packedFns);
    pointerArray("synpl_plan_programs", programFns);
    // The kernels' module in .rodata: PTX (NUL-terminated for
    // cuModuleLoadData) and cubin.
    auto blob = [&](StringRef name, StringRef bytes, bool nul) {
      std::string data = bytes.str();
      if (nul)
        data.push_back('\0');
      auto ty = LLVM::LLVMArrayType::get(b.getI8Type(), data.size());
      LLVM::GlobalOp::create(b, loc, ty, true, LLVM::Linkage::Internal, name,
                             b.getStringAttr(data), /*alignment=*/64);
    };
    bool hasPtx = device && !device->ptx.empty();
    bool hasCubin = device && !device->cubin.empty();
    if (hasPtx)
      blob("synpl_plan_device_ptx", device->ptx, /*nul=*/true);
    if (hasCubin)
      blob("synpl_plan_device_cubin", device->cubin, /*nul=*/false);
    // synpl_plan_desc: each array with its size, then the device module.
    auto descTy = LLVM::LLVMStructType::getLiteral(
        ctx, {ptrTy, i64, ptrTy, i64, ptrTy, i64, ptrTy, i64, ptrTy, i64, ptrTy, i64});
    {
      auto g = LLVM::GlobalOp::create(b, loc, descTy, true,
                                      LLVM::Linkage::External, "synpl_plan",
                                      Attribute());
      OpBuilder::InsertionGuard guard(b);
      b.createBlock(&g.getInitializerRegion());
      Value v = LLVM::UndefOp::create(b, loc, descTy);
      int64_t i = 0;
      auto addArray = [&](StringRef name, int64_t size) {
        v = LLVM::InsertValueOp::create(
            b, loc, v, LLVM::AddressOfOp::create(b, loc, ptrTy, name), i++);
        v = LLVM::InsertValueOp::create(
            b, loc, v,
            LLVM::ConstantOp::create(b, loc, i64, b.getI64IntegerAttr(size)),
            i++);
      };
      addArray("synpl_plan_table", words.size());
      addArray("synpl_plan_strings", strings.size());
      addArray("synpl_plan_kernels", packedFns.size());
      addArray("synpl_plan_programs", programFns.size());
      auto addBlob = [&](bool present, StringRef name, int64_t size) {
        Value p = present ? Value(LLVM::AddressOfOp::create(b, loc, ptrTy, name))
                          : Value(LLVM::ZeroOp::create(b, loc, ptrTy));
        v = LLVM::InsertValueOp::create(b, loc, v, p, i++);
        v = LLVM::InsertValueOp::create(
            b, loc, v,
            LLVM::ConstantOp::create(b, loc, i64, b.getI64IntegerAttr(size)),
            i++);
      };
      addBlob(hasPtx, "synpl_plan_device_ptx", hasPtx ? device->ptx.size() : 0);
      addBlob(hasCubin, "synpl_plan_device_cubin",
              hasCubin ? device->cubin.size() : 0);
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
      fn->removeAttr("synpl.grain");
    }
    // The kernels' module is data now too.
    for (auto bin : llvm::make_early_inc_range(module.getOps<gpu::BinaryOp>()))
      bin.erase();
    module->removeAttr(gpu::GPUDialect::getContainerModuleAttrName());
  }

  /// The gpu.binary holding the plan's CUDA kernels: `@<plan>_cuda`, else
  /// the module's only one; its objects for the first NVVM target.
  FailureOr<DeviceModule> deviceModule(ModuleOp module, l0uop::PlanOp plan) {
    for (auto gm : module.getOps<gpu::GPUModuleOp>())
      return (gm.emitError() << "gpu.module @" << gm.getSymName()
                             << " is not compiled yet (run "
                                "gpu-module-to-binary first)"),
             failure();
    SmallVector<gpu::BinaryOp> binaries(module.getOps<gpu::BinaryOp>());
    gpu::BinaryOp binary;
    std::string wanted = (plan.getSymName() + "_cuda").str();
    for (gpu::BinaryOp bin : binaries)
      if (bin.getSymName() == wanted)
        binary = bin;
    if (!binary && binaries.size() == 1)
      binary = binaries.front();
    if (!binary)
      return plan.emitError()
             << "the plan has CUDA kernels (device_entry) but the module has "
             << (binaries.empty() ? "no gpu.binary"
                                  : "no gpu.binary @" + wanted)
             << " holding them (run --synpl-convert-l0uop-to-nvvm and "
                "gpu-module-to-binary first)";
    DeviceModule dm;
    dm.binary = binary;
    // The first NVVM object picks the chip; for it, the PTX (assembly) and
    // the cubin (binary or fatbin; --synpl-cuda-assemble adds one) are
    // embedded, whichever the binary holds.
    NVVM::NVVMTargetAttr target;
    for (Attribute a : binary.getObjects()) {
      auto o = dyn_cast<gpu::ObjectAttr>(a);
      auto t = o ? dyn_cast<NVVM::NVVMTargetAttr>(o.getTarget()) : NVVM::NVVMTargetAttr();
      if (!t)
        continue;
      if (!target)
        target = t;
      if (t != target)
        continue;
      switch (o.getFormat()) {
      case gpu::CompilationTarget::Assembly:
        if (dm.ptx.empty()) {
          // The printed form may carry the trailing NUL the NVPTX backend adds.
          dm.ptx = o.getObject().getValue().rtrim('\0').str();
        }
        break;
      case gpu::CompilationTarget::Binary:
      case gpu::CompilationTarget::Fatbin:
        if (dm.cubin.empty())
          dm.cubin = o.getObject().getValue().str();
        break;
      default:
        return binary.emitError()
               << "gpu.binary @" << binary.getSymName()
               << ": an offload (LLVM bitcode) object cannot be loaded by the "
                  "CUDA driver; use gpu-module-to-binary{format=isa}";
      }
    }
    if (!target)
      return binary.emitError()
             << "gpu.binary @" << binary.getSymName()
             << " holds no object for an #nvvm.target";
    dm.chip = target.getChip().str();
    dm.arch = cuda::lookupArch(dm.chip);
    if (!dm.arch)
      return binary.emitError() << "unknown CUDA chip '" << dm.chip
                                << "' (known: " << cuda::knownArchList() << ")";
    return dm;
  }
};

} // namespace
