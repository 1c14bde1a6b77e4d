//===- KernelObjects.cpp - Host kernels kept compiled between compiles ----===//
//
// The object cache keyed by L0 code. Before the host lowering, the plan's
// kernels are grouped by their code (kernels with the same code share one
// function, as ConvertL0UOpToLLVM shares it), the groups of each
// optimization level are spread over that level's share of the objects
// (each in the one its name hashes to), and each
// object is named by the SHA-256 of its kernels' L0 code, their pools'
// space and alignment, the target and options of host::objectKeySalt and
// the identity of this build of the compiler. An object the cache holds,
// with its manifest (each function's entry, split and type), is linked as
// it is: its kernels are not lowered, only given the entry points the
// lowering would have given them, and the module declares the functions.
// The other objects are cut out of the lowered module (emitObjectParts)
// and left in the cache with their manifests.
//
// So a compile whose kernels were all compiled before skips the kernel
// lowering, the LLVM translation of the kernels and their code generation;
// one that changed a learning rate (one scalar kernel) lowers and compiles
// only the object holding that kernel.
//
//===----------------------------------------------------------------------===//
#include "KernelObjects.h"
#include "BuildIdentity.h"

#include "synpl/Conversion/Passes.h"
#include "synpl/Dialect/L0UOp/L0UOpOps.h"

#include "mlir/AsmParser/AsmParser.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/SymbolTable.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/SHA256.h"
#include "llvm/Support/xxhash.h"
#include "llvm/Support/raw_ostream.h"

#include <map>

using namespace mlir;
using namespace synpl;
using namespace synpl::driver;

namespace {

constexpr llvm::StringLiteral kManifestHeader = "synpl-kernel-objects v1";

/// This build of the compiler: the files that hold the kernel lowering and
/// the host backend (a rebuilt compiler lowers differently). Empty when a
/// file cannot be found: then no object is reused.
std::string kernelBuildIdentity() {
  std::unique_ptr<Pass> (*lowering)() = &synpl::createConvertL0UOpToLLVM;
  auto backend = &host::compileForHost;
  return buildIdentity(
      {reinterpret_cast<const void *>(lowering), reinterpret_cast<const void *>(backend)});
}

/// A function the lowering would build: the first kernel with its code,
/// and the kernels that share it.
struct Group {
  l0uop::KernelOp leader;
  SmallVector<l0uop::KernelOp> kernels;
  std::string entry;
  unsigned level;
  size_t size;
};

/// The L0 code the function is built from: the kernel (generic form,
/// without locations) and the space and alignment of each buffer's pool.
std::string codeOf(l0uop::KernelOp kernel, SymbolTable &planSymbols) {
  std::string text;
  llvm::raw_string_ostream os(text);
  kernel->print(os, OpPrintingFlags().printGenericOpForm().useLocalScope());
  Block &body = kernel.getBody().front();
  for (unsigned a = 0, e = kernel.getNumInputs() + kernel.getNumOutputs(); a < e; ++a) {
    os << "\nbuffer " << a << ":";
    if (FlatSymbolRefAttr slotRef = kernel.getSlotOf(body.getArgument(a)))
      if (auto slot = planSymbols.lookup<l0uop::SlotOp>(slotRef.getValue()))
        if (auto pool = planSymbols.lookup<l0uop::PoolOp>(slot.getPool()))
          os << " " << pool.getSpace() << " " << pool.getAlignment();
  }
  return text;
}

/// One function of a manifest.
struct Entry {
  std::string name;
  int64_t iterations = 1, grain = 1;
  LLVM::LLVMFunctionType type;
};

/// The manifest at `path` when it lists exactly `names`, in order.
std::optional<SmallVector<Entry>> readManifest(llvm::StringRef path,
                                               llvm::ArrayRef<std::string> names,
                                               MLIRContext *context) {
  auto buffer = llvm::MemoryBuffer::getFile(path);
  if (!buffer)
    return std::nullopt;
  SmallVector<llvm::StringRef> lines;
  (*buffer)->getBuffer().split(lines, '\n', -1, /*KeepEmpty=*/false);
  if (lines.empty() || lines.front() != kManifestHeader || lines.size() != names.size() + 1)
    return std::nullopt;
  SmallVector<Entry> entries;
  for (auto [line, name] : llvm::zip(llvm::drop_begin(lines), names)) {
    // <entry> <iterations> <grain> <type>
    auto [entryName, rest] = line.split(' ');
    auto [iterations, rest2] = rest.split(' ');
    auto [grain, typeText] = rest2.split(' ');
    Entry entry;
    entry.name = entryName.str();
    if (entry.name != name || iterations.getAsInteger(10, entry.iterations) ||
        grain.getAsInteger(10, entry.grain) || entry.iterations < 1 || entry.grain < 1)
      return std::nullopt;
    entry.type = llvm::dyn_cast_or_null<LLVM::LLVMFunctionType>(parseType(typeText, context));
    if (!entry.type)
      return std::nullopt;
    entries.push_back(std::move(entry));
  }
  return entries;
}

/// Gives `kernel` the entry point the lowering would have given it, and
/// drops its UOps (the lowering's own end state for a kernel).
void giveEntryPoint(l0uop::KernelOp kernel, const Entry &entry) {
  Block &body = kernel.getBody().front();
  for (Operation &op : body)
    op.dropAllReferences();
  while (!body.empty())
    body.back().erase();
  Builder b(kernel.getContext());
  kernel->setAttr("host_entry", FlatSymbolRefAttr::get(kernel.getContext(), entry.name));
  kernel->setAttr("host_iterations", b.getI64IntegerAttr(entry.iterations));
  if (entry.grain > 1)
    kernel->setAttr("host_grain", b.getI64IntegerAttr(entry.grain));
}

} // namespace

LogicalResult synpl::driver::reuseKernelObjects(ModuleOp module, KernelObjects &objects,
                                                std::string &error) {
  objects.objects.clear();
  objects.manifests.clear();
  objects.kernels = objects.reusedKernels = 0;
  std::string identity = kernelBuildIdentity();
  if (identity.empty())
    return success(); // an unknown build: every kernel is lowered
  host::ObjectOptions objectOptions;
  objectOptions.cpu = objects.cache.cpu;
  objectOptions.optLevel = std::min(objects.cache.optLevel, 3u);
  llvm::Expected<std::string> salt = host::objectKeySalt(objectOptions);
  if (!salt) {
    error = llvm::toString(salt.takeError());
    return failure();
  }

  // The functions the lowering would build, as it groups them.
  SmallVector<Group> groups;
  llvm::DenseMap<l0uop::PlanOp, std::unique_ptr<SymbolTable>> planTables;
  SymbolTable moduleSymbols(module);
  l0uop::KernelsByCode byCode;
  llvm::StringSet<> names;
  module.walk([&](l0uop::KernelOp kernel) {
    auto plan = kernel->getParentOfType<l0uop::PlanOp>();
    if (!plan || kernel->hasAttr("host_entry") || kernel->hasAttr("custom_kernel") ||
        kernel->hasAttr("device_entry") || kernel.getBody().front().empty())
      return;
    std::string entry = (plan.getSymName() + "_" + kernel.getSymName()).str();
    // A clash is the lowering's to report.
    if (moduleSymbols.lookup(entry) || !names.insert(entry).second)
      return;
    std::unique_ptr<SymbolTable> &planSymbols = planTables[plan];
    if (!planSymbols)
      planSymbols = std::make_unique<SymbolTable>(plan);
    ++objects.kernels;
    if (std::optional<size_t> same = byCode.findOrAdd(kernel, *planSymbols, groups.size())) {
      groups[*same].kernels.push_back(kernel);
      return;
    }
    unsigned level = std::min(kernel.getOptLevel().value_or(3u), objectOptions.optLevel);
    groups.push_back({kernel, {kernel}, entry, level,
                      kernel.getBody().front().getOperations().size()});
  });
  if (groups.empty())
    return success();

  // The objects: per level, as many as its share of the code (of the
  // default count in all, as emitObjectParts shares its parts), each function in the one its name hashes to. Not balanced by
  // size: a change to one kernel's code (a learning rate folded into it)
  // would then move others between objects.
  unsigned parts = host::defaultObjectCount();
  std::map<unsigned, SmallVector<Group *>> byLevel;
  size_t total = 0;
  for (Group &g : groups) {
    byLevel[g.level].push_back(&g);
    total += g.size;
  }
  struct Bucket {
    unsigned level;
    SmallVector<Group *> groups;
  };
  SmallVector<Bucket> buckets;
  for (auto &[level, members] : byLevel) {
    size_t size = 0;
    for (Group *g : members)
      size += g->size;
    size_t count = std::clamp<size_t>((size * parts + total / 2) / total, 1, members.size());
    size_t first = buckets.size();
    for (size_t i = 0; i < count; ++i)
      buckets.push_back({level, {}});
    for (Group *g : members)
      buckets[first + llvm::xxh3_64bits(g->entry) % count].groups.push_back(g);
  }
  llvm::erase_if(buckets, [](const Bucket &b) { return b.groups.empty(); });

  if (llvm::Error err = host::ObjectCache{objects.cache.dir}.create()) {
    error = llvm::toString(std::move(err));
    return failure();
  }
  OpBuilder declare(module.getContext());
  declare.setInsertionPointToEnd(module.getBody());
  for (Bucket &bucket : buckets) {
    llvm::sort(bucket.groups, [](Group *a, Group *b) { return a->entry < b->entry; });
    llvm::SHA256 hash;
    hash.update(*salt + std::to_string(bucket.level) + "|kernels|" + identity);
    host::FunctionObject object;
    object.level = bucket.level;
    for (Group *g : bucket.groups) {
      auto plan = g->leader->getParentOfType<l0uop::PlanOp>();
      hash.update(g->entry + "\n" + codeOf(g->leader, *planTables[plan]) + "\n");
      object.functions.push_back(g->entry);
    }
    object.key = "k" + llvm::toHex(hash.final(), /*LowerCase=*/true);
    llvm::SmallString<256> path(objects.cache.dir);
    llvm::sys::path::append(path, object.key + ".o");
    llvm::SmallString<256> manifestPath(objects.cache.dir);
    llvm::sys::path::append(manifestPath, object.key + ".kernels");
    std::optional<SmallVector<Entry>> entries;
    if (llvm::sys::fs::exists(path))
      entries = readManifest(manifestPath, object.functions, module.getContext());
    if (entries) {
      object.cached = path.str().str();
      host::ObjectCache::touch(path);
      host::ObjectCache::touch(manifestPath);
      for (auto [g, entry] : llvm::zip(bucket.groups, *entries)) {
        for (l0uop::KernelOp kernel : g->kernels)
          giveEntryPoint(kernel, entry);
        objects.reusedKernels += g->kernels.size();
        LLVM::LLVMFuncOp::create(declare, g->leader.getLoc(), entry.name, entry.type);
      }
    }
    objects.objects.push_back(std::move(object));
    objects.manifests.emplace_back();
  }
  return success();
}

void synpl::driver::describeKernelObjects(ModuleOp module, KernelObjects &objects) {
  objects.manifests.resize(objects.objects.size());
  // The entries the lowering gave the kernels.
  llvm::StringMap<l0uop::KernelOp> byEntry;
  module.walk([&](l0uop::KernelOp kernel) {
    if (auto entry = kernel->getAttrOfType<FlatSymbolRefAttr>("host_entry"))
      byEntry.try_emplace(entry.getValue(), kernel);
  });
  for (size_t i = 0; i < objects.objects.size(); ++i) {
    host::FunctionObject &object = objects.objects[i];
    if (!object.cached.empty() || !objects.manifests[i].empty())
      continue;
    std::string manifest = kManifestHeader.str() + "\n";
    bool complete = true;
    for (const std::string &name : object.functions) {
      l0uop::KernelOp kernel = byEntry.lookup(name);
      auto fn = module.lookupSymbol<LLVM::LLVMFuncOp>(name);
      auto iterations = kernel ? kernel->getAttrOfType<IntegerAttr>("host_iterations") : nullptr;
      if (!fn || fn.isExternal() || !iterations) {
        complete = false;
        break;
      }
      auto grain = kernel->getAttrOfType<IntegerAttr>("host_grain");
      std::string type;
      llvm::raw_string_ostream os(type);
      os << fn.getFunctionType();
      manifest += name + " " + std::to_string(iterations.getInt()) + " " +
                  std::to_string(grain ? grain.getInt() : 1) + " " + type + "\n";
    }
    if (complete)
      objects.manifests[i] = std::move(manifest);
  }
}

void synpl::driver::attachKernelObjects(ModuleOp module, KernelObjects &objects) {
  objects.manifests.resize(objects.objects.size());
  for (size_t i = objects.objects.size(); i-- > 0;)
    if (objects.objects[i].cached.empty() && objects.manifests[i].empty()) {
      objects.objects.erase(objects.objects.begin() + i);
      objects.manifests.erase(objects.manifests.begin() + i);
    }
  Builder b(module.getContext());
  SmallVector<Attribute> records;
  for (auto [object, manifest] : llvm::zip(objects.objects, objects.manifests)) {
    SmallVector<NamedAttribute> fields{
        b.getNamedAttr("key", b.getStringAttr(object.key)),
        b.getNamedAttr("level", b.getI64IntegerAttr(object.level)),
        b.getNamedAttr("functions", b.getStrArrayAttr(SmallVector<StringRef>(
                                        object.functions.begin(), object.functions.end())))};
    if (!object.cached.empty())
      fields.push_back(b.getNamedAttr("cached", b.getStringAttr(object.cached)));
    else
      fields.push_back(b.getNamedAttr("manifest", b.getStringAttr(manifest)));
    records.push_back(b.getDictionaryAttr(fields));
  }
  module->setAttr(kKernelObjectsAttr,
                  b.getDictionaryAttr({
                      b.getNamedAttr("dir", b.getStringAttr(objects.cache.dir)),
                      b.getNamedAttr("cpu", b.getStringAttr(objects.cache.cpu)),
                      b.getNamedAttr("opt_level", b.getI64IntegerAttr(objects.cache.optLevel)),
                      b.getNamedAttr("objects", b.getArrayAttr(records)),
                  }));
}

FailureOr<std::optional<KernelObjects>>
synpl::driver::readKernelObjects(ModuleOp module, std::string &error) {
  Attribute attr = module->getAttr(kKernelObjectsAttr);
  if (!attr)
    return std::optional<KernelObjects>();
  auto bad = [&](const llvm::Twine &why) {
    error = ("the module's " + kKernelObjectsAttr + " " + why).str();
    return failure();
  };
  auto record = dyn_cast<DictionaryAttr>(attr);
  if (!record)
    return bad("is not a dictionary");
  auto dir = record.getAs<StringAttr>("dir");
  auto cpu = record.getAs<StringAttr>("cpu");
  auto level = record.getAs<IntegerAttr>("opt_level");
  auto list = record.getAs<ArrayAttr>("objects");
  if (!dir || !cpu || !level || !list)
    return bad("needs dir, cpu, opt_level and objects");
  KernelObjects objects;
  objects.cache.dir = dir.str();
  objects.cache.cpu = cpu.str();
  objects.cache.optLevel = unsigned(level.getInt());
  for (Attribute a : list) {
    auto entry = dyn_cast<DictionaryAttr>(a);
    auto key = entry ? entry.getAs<StringAttr>("key") : nullptr;
    auto objectLevel = entry ? entry.getAs<IntegerAttr>("level") : nullptr;
    auto functions = entry ? entry.getAs<ArrayAttr>("functions") : nullptr;
    auto cached = entry ? entry.getAs<StringAttr>("cached") : nullptr;
    auto manifest = entry ? entry.getAs<StringAttr>("manifest") : nullptr;
    if (!key || !objectLevel || !functions || !cached == !manifest)
      return bad("has an object without key, level, functions and either cached or manifest");
    host::FunctionObject object;
    object.key = key.str();
    object.level = unsigned(objectLevel.getInt());
    for (Attribute f : functions) {
      auto name = dyn_cast<StringAttr>(f);
      if (!name)
        return bad("has a function that is not a name");
      object.functions.push_back(name.str());
    }
    if (cached)
      object.cached = cached.str();
    objects.objects.push_back(std::move(object));
    objects.manifests.push_back(manifest ? manifest.str() : "");
  }
  return std::optional<KernelObjects>(std::move(objects));
}

LogicalResult synpl::driver::keepManifests(const KernelObjects &objects,
                                           llvm::ArrayRef<std::string> compiled,
                                           std::string &error) {
  llvm::StringSet<> keys;
  keys.insert(compiled.begin(), compiled.end());
  for (size_t i = 0; i < objects.objects.size(); ++i) {
    const host::FunctionObject &object = objects.objects[i];
    const std::string &manifest = objects.manifests[i];
    if (!keys.contains(object.key) || manifest.empty())
      continue;
    llvm::SmallString<256> path(objects.cache.dir);
    llvm::sys::path::append(path, object.key + ".kernels");
    // Whole or not at all: a concurrent compile never reads half of it.
    if (llvm::Error err = llvm::writeToOutput(path, [&](llvm::raw_ostream &os) {
          os << manifest;
          return llvm::Error::success();
        })) {
      error = "cannot write " + path.str().str() + ": " + llvm::toString(std::move(err));
      return failure();
    }
  }
  return success();
}
