//===- ObjectParts.cpp - The program as cached objects, compiled in parallel ===//
//
// What makes a compile fast: the module's LLVM IR is split by the
// optimization level its functions ask for (OptLevels.cpp: the hot kernels
// at O3, the rest lighter), each level into parts (llvm::SplitModule, which
// keeps functions that share internal globals together), each part is
// keyed by the SHA-256 of its bitcode and of every option that changes its
// object, and only the parts the cache does not hold are optimized and
// compiled at their level, each on its own thread with its own LLVM context
// and target machine. A change to one kernel (or to a learning rate, which
// lives in one kernel or the plan's tables) recompiles only the parts it
// touches. Function objects (the driver's kernel objects, keyed by their L0
// code) are cut out of the module first and keyed as they were given. The
// cache keeps within a size: the least recently used files go first.
//
//===----------------------------------------------------------------------===//
#include "synpl/Target/HostObject.h"

#include "Globals.h"

#include "mlir/IR/Diagnostics.h"
#include "llvm/ADT/SmallPtrSet.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Bitcode/BitcodeReader.h"
#include "llvm/Bitcode/BitcodeWriter.h"
#include "llvm/Config/llvm-config.h"
#include "llvm/IR/Constants.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Process.h"
#include "llvm/Support/SHA256.h"
#include "llvm/Support/ThreadPool.h"
#include "llvm/Support/Threading.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/Transforms/Utils/Cloning.h"
#include "llvm/Transforms/Utils/SplitModule.h"

#include <chrono>
#include <cstdlib>
#include <mutex>

using namespace mlir;

namespace synpl::host {

std::string ObjectCache::defaultDir() {
  if (const char *dir = std::getenv("SYNPL_CACHE_DIR"); dir && *dir)
    return dir;
  llvm::SmallString<256> path;
  if (const char *xdg = std::getenv("XDG_CACHE_HOME"); xdg && *xdg) {
    path = xdg;
  } else if (const char *home = std::getenv("HOME"); home && *home) {
    path = home;
    llvm::sys::path::append(path, ".cache");
  } else {
    return "";
  }
  llvm::sys::path::append(path, "synpl");
  return path.str().str();
}

llvm::Expected<uint64_t> ObjectCache::defaultMaxBytes() {
  const char *text = std::getenv("SYNPL_CACHE_MAX_SIZE");
  if (!text || !*text)
    return uint64_t(2) << 30;
  llvm::StringRef value(text);
  uint64_t unit = 1;
  if (value.consume_back("K") || value.consume_back("k"))
    unit = 1 << 10;
  else if (value.consume_back("M") || value.consume_back("m"))
    unit = 1 << 20;
  else if (value.consume_back("G") || value.consume_back("g"))
    unit = 1 << 30;
  uint64_t count;
  if (value.getAsInteger(10, count) || count > UINT64_MAX / unit)
    return llvm::createStringError(
        "SYNPL_CACHE_MAX_SIZE=" + std::string(text) +
        ": a size in bytes, or with a K, M or G suffix (0: no limit)");
  return count * unit;
}

llvm::Expected<ObjectCache> ObjectCache::at(llvm::StringRef dir) {
  llvm::Expected<uint64_t> maxBytes = defaultMaxBytes();
  if (!maxBytes)
    return maxBytes.takeError();
  ObjectCache cache;
  cache.dir = dir.empty() ? defaultDir() : dir.str();
  cache.maxBytes = *maxBytes;
  return cache;
}

llvm::Error ObjectCache::create() const {
  if (std::error_code ec = llvm::sys::fs::create_directories(dir))
    return llvm::createStringError("cannot create the object cache " + dir + ": " +
                                   ec.message() + " (--no-cache compiles without it)");
  return llvm::Error::success();
}

void ObjectCache::touch(llvm::StringRef path) {
  // Best effort: a file that cannot be touched is only evicted sooner.
  int fd;
  if (llvm::sys::fs::openFileForWrite(path, fd, llvm::sys::fs::CD_OpenExisting,
                                      llvm::sys::fs::OF_Append))
    return;
  (void)llvm::sys::fs::setLastAccessAndModificationTime(fd, std::chrono::system_clock::now());
  llvm::sys::Process::SafelyCloseFileDescriptor(fd);
}

std::pair<unsigned, uint64_t> ObjectCache::trim(llvm::ArrayRef<llvm::StringRef> userSuffixes) const {
  if (dir.empty() || maxBytes == 0)
    return {0, 0};
  struct Entry {
    std::string path;
    uint64_t size;
    llvm::sys::TimePoint<> used;
  };
  std::vector<Entry> entries;
  uint64_t total = 0;
  std::error_code ec;
  for (llvm::sys::fs::directory_iterator it(dir, ec), end; it != end && !ec; it.increment(ec)) {
    // Objects, kernel manifests and the files of the cache's users.
    llvm::StringRef name = llvm::sys::path::filename(it->path());
    llvm::StringRef ext = llvm::sys::path::extension(name);
    if (ext != ".o" && ext != ".kernels" &&
        llvm::none_of(userSuffixes, [&](llvm::StringRef s) { return name.ends_with(s); }))
      continue;
    llvm::sys::fs::file_status status;
    if (llvm::sys::fs::status(it->path(), status) ||
        status.type() != llvm::sys::fs::file_type::regular_file)
      continue;
    entries.push_back({it->path(), status.getSize(), status.getLastModificationTime()});
    total += status.getSize();
  }
  if (total <= maxBytes)
    return {0, 0};
  llvm::sort(entries, [](const Entry &a, const Entry &b) { return a.used < b.used; });
  auto recent = std::chrono::system_clock::now() - std::chrono::minutes(10);
  std::pair<unsigned, uint64_t> removed{0, 0};
  for (const Entry &e : entries) {
    if (total <= maxBytes || e.used > recent)
      break;
    if (llvm::sys::fs::remove(e.path))
      continue;
    total -= e.size;
    ++removed.first;
    removed.second += e.size;
  }
  return removed;
}

namespace {

/// What a key holds besides the IR (the level follows it).
std::string keySalt(llvm::StringRef triple, llvm::StringRef cpu, llvm::StringRef features,
                    const ObjectOptions &options) {
  return ("synpl-objects-v1|" LLVM_VERSION_STRING "|" + triple + "|" + cpu + "|" + features +
          "|" + std::to_string(options.useLibmvec) + std::to_string(options.reassociate) + "|O")
      .str();
}

/// The object of one part's bitcode, compiled in a fresh context.
llvm::Expected<std::string> compilePart(llvm::StringRef bitcode, const ObjectOptions &options) {
  llvm::LLVMContext context;
  auto module = llvm::parseBitcodeFile(llvm::MemoryBufferRef(bitcode, "part"), context);
  if (!module)
    return module.takeError();
  auto tm = createHostTargetMachine(options);
  if (!tm)
    return tm.takeError();
  llvm::SmallString<0> object;
  llvm::raw_svector_ostream os(object);
  if (llvm::Error err = compileForHost(**module, **tm, options, os))
    return std::move(err);
  return std::string(object.str());
}

/// `functions` of `module` as a module of their own, in bitcode: their
/// definitions and those of the local functions and constants they use
/// (copies: `module` keeps its own), everything else declared.
llvm::Expected<std::string> extractFunctions(const llvm::Module &module,
                                             llvm::ArrayRef<std::string> functions) {
  llvm::SmallPtrSet<const llvm::GlobalValue *, 16> keep;
  llvm::SmallVector<const llvm::GlobalValue *> work;
  for (const std::string &name : functions) {
    const llvm::Function *f = module.getFunction(name);
    if (!f || f->isDeclaration())
      return llvm::createStringError("the function object's @" + name +
                                     " is not defined in the module");
    if (keep.insert(f).second)
      work.push_back(f);
  }
  // What the kept definitions use that only a definition beside them can
  // provide: local symbols.
  auto use = [&](const llvm::GlobalValue *gv) -> llvm::Error {
    if (!gv->hasLocalLinkage() || gv->isDeclaration() || keep.contains(gv))
      return llvm::Error::success();
    if (auto *var = llvm::dyn_cast<llvm::GlobalVariable>(gv); var && !var->isConstant())
      return llvm::createStringError("@" + gv->getName().str() +
                                     ", a mutable local global, is used by a function "
                                     "object's function: its copy would not be shared");
    keep.insert(gv);
    work.push_back(gv);
    return llvm::Error::success();
  };
  while (!work.empty()) {
    const llvm::GlobalValue *gv = work.pop_back_val();
    llvm::SmallPtrSet<const llvm::GlobalValue *, 8> used;
    llvm::SmallPtrSet<const llvm::Constant *, 16> seen;
    if (auto *f = llvm::dyn_cast<llvm::Function>(gv)) {
      for (const llvm::BasicBlock &block : *f)
        for (const llvm::Instruction &inst : block)
          for (const llvm::Use &op : inst.operands())
            if (auto *c = llvm::dyn_cast<llvm::Constant>(op.get()))
              collectGlobals(c, used, seen);
    } else if (auto *var = llvm::dyn_cast<llvm::GlobalVariable>(gv);
               var && var->hasInitializer()) {
      collectGlobals(var->getInitializer(), used, seen);
    }
    for (const llvm::GlobalValue *u : used)
      if (llvm::Error err = use(u))
        return std::move(err);
  }
  llvm::ValueToValueMapTy map;
  std::unique_ptr<llvm::Module> part = llvm::CloneModule(
      module, map, [&](const llvm::GlobalValue *gv) { return keep.contains(gv); });
  std::string bitcode;
  llvm::raw_string_ostream os(bitcode);
  llvm::WriteBitcodeToFile(*part, os);
  return bitcode;
}

} // namespace

unsigned defaultObjectCount() {
  return std::max(8u, 4 * std::max(1u, llvm::hardware_concurrency().compute_thread_count()));
}

llvm::Expected<std::string> objectKeySalt(const ObjectOptions &options) {
  std::string cpu, features;
  auto tm = createHostTargetMachine(options, &cpu, &features);
  if (!tm)
    return tm.takeError();
  return keySalt((*tm)->getTargetTriple().str(), cpu, features, options);
}

FailureOr<ObjectParts> emitObjectParts(ModuleOp module, llvm::StringRef scratchDir,
                                       const ObjectOptions &options, const ObjectCache &cache,
                                       unsigned parts,
                                       llvm::ArrayRef<FunctionObject> functionObjects) {
  llvm::LLVMContext llvmContext;
  FailureOr<HostModule> host = translateForHost(module, options, llvmContext);
  if (failed(host))
    return failure();
  unsigned cap = std::min(options.optLevel, 3u);

  // The function objects first: what the cache holds is linked as it is,
  // the others are cut out of the module.
  ObjectParts result;
  std::vector<std::string> bitcodes, givenKeys;
  std::vector<unsigned> levelOf;
  for (const FunctionObject &object : functionObjects) {
    if (!object.cached.empty()) {
      result.paths.push_back(object.cached);
      ++result.reused;
      continue;
    }
    llvm::Expected<std::string> bitcode = extractFunctions(*host->module, object.functions);
    if (!bitcode)
      return module.emitError() << llvm::toString(bitcode.takeError());
    bitcodes.push_back(std::move(*bitcode));
    levelOf.push_back(std::min(object.level, cap));
    givenKeys.push_back(object.key);
  }
  for (const FunctionObject &object : functionObjects)
    if (object.cached.empty())
      for (const std::string &name : object.functions) {
        llvm::Function *f = host->module->getFunction(name);
        f->deleteBody();
        f->setAttributes(llvm::AttributeList());
      }
  if (!functionObjects.empty()) {
    // Nothing unused, the declarations by name after the definitions: the
    // rest is then the same IR whether a function object was cut out of it
    // here or declared from the cache before the lowering.
    llvm::Module::FunctionListType &list = host->module->getFunctionList();
    for (bool erased = true; erased;) {
      erased = false;
      for (llvm::Function &f : llvm::make_early_inc_range(list))
        if (f.use_empty() && (f.isDeclaration() || f.hasLocalLinkage())) {
          f.eraseFromParent();
          erased = true;
        }
      for (llvm::GlobalVariable &g : llvm::make_early_inc_range(host->module->globals()))
        if (g.use_empty() && g.hasLocalLinkage()) {
          g.eraseFromParent();
          erased = true;
        }
    }
    std::vector<llvm::Function *> declarations;
    for (llvm::Function &f : list)
      if (f.isDeclaration())
        declarations.push_back(&f);
    llvm::sort(declarations, [](llvm::Function *a, llvm::Function *b) {
      return a->getName() < b->getName();
    });
    for (llvm::Function *f : declarations)
      list.splice(list.end(), list, f->getIterator());
  }

  llvm::Expected<std::vector<LevelModule>> levels =
      splitByOptLevel(std::move(host->module), cap);
  if (!levels)
    return module.emitError() << llvm::toString(levels.takeError());

  if (parts == 0)
    parts = defaultObjectCount();
  parts = parts > functionObjects.size() ? parts - functionObjects.size() : 1;
  // The parts are shared among the levels by their instruction counts, at
  // least one each.
  auto size = [](const llvm::Module &m) {
    size_t n = 0;
    for (const llvm::Function &f : m)
      n += f.getInstructionCount();
    return n;
  };
  size_t total = 0;
  for (LevelModule &level : *levels)
    total += size(*level.module);
  for (LevelModule &level : *levels) {
    unsigned share = total == 0 ? 1
                                : std::max<unsigned>(
                                      1, (size(*level.module) * parts + total / 2) / total);
    llvm::SplitModule(*level.module, share, [&](std::unique_ptr<llvm::Module> part) {
      std::string bc;
      llvm::raw_string_ostream os(bc);
      llvm::WriteBitcodeToFile(*part, os);
      bitcodes.push_back(std::move(bc));
      levelOf.push_back(level.level);
      givenKeys.emplace_back();
    });
  }

  // Each part's key: its bitcode and everything else its object depends on
  // (a function object's: the one it was given).
  std::string salt = keySalt(host->machine->getTargetTriple().str(), host->cpu, host->features,
                             options);
  if (!cache.dir.empty())
    if (llvm::Error err = cache.create())
      return module.emitError() << llvm::toString(std::move(err));
  std::vector<std::string> paths(bitcodes.size());
  std::vector<size_t> toCompile;
  for (size_t i = 0; i < bitcodes.size(); ++i) {
    std::string key = givenKeys[i];
    if (key.empty()) {
      llvm::SHA256 hash;
      hash.update(salt + std::to_string(levelOf[i]) + "|");
      hash.update(bitcodes[i]);
      key = llvm::toHex(hash.final(), /*LowerCase=*/true);
    }
    llvm::SmallString<256> path(cache.dir.empty() ? scratchDir : llvm::StringRef(cache.dir));
    llvm::sys::path::append(path, key + ".o");
    paths[i] = path.str().str();
    if (!cache.dir.empty() && givenKeys[i].empty() && llvm::sys::fs::exists(paths[i])) {
      ObjectCache::touch(paths[i]);
      ++result.reused;
    } else
      toCompile.push_back(i);
  }

  // The largest first: a long part started last would finish alone.
  llvm::sort(toCompile, [&](size_t a, size_t b) {
    return bitcodes[a].size() != bitcodes[b].size() ? bitcodes[a].size() > bitcodes[b].size()
                                                     : a < b;
  });
  std::vector<std::string> objects(bitcodes.size()), errors(bitcodes.size());
  {
    llvm::DefaultThreadPool pool(llvm::hardware_concurrency());
    for (size_t i : toCompile)
      pool.async([&, i] {
        ObjectOptions partOptions = options;
        partOptions.optLevel = levelOf[i];
        llvm::Expected<std::string> object = compilePart(bitcodes[i], partOptions);
        if (object)
          objects[i] = std::move(*object);
        else
          errors[i] = llvm::toString(object.takeError());
      });
    pool.wait();
  }
  for (size_t i : toCompile) {
    if (!errors[i].empty())
      return module.emitError() << "compiling part " << i << " of the program: " << errors[i];
    // Whole or not at all (a temporary, then rename): a concurrent compile
    // never reads half an object from the cache.
    if (llvm::Error err = llvm::writeToOutput(paths[i], [&](llvm::raw_ostream &os) {
          os << objects[i];
          return llvm::Error::success();
        }))
      return module.emitError() << "cannot write " << paths[i] << ": "
                                << llvm::toString(std::move(err));
    ++result.compiled;
    if (!givenKeys[i].empty() && !cache.dir.empty())
      result.keyed.push_back(givenKeys[i]);
  }
  result.paths.append(paths.begin(), paths.end());
  return result;
}

} // namespace synpl::host
