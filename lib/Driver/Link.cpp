//===- Link.cpp - An object or an executable from the llvm phase ----------===//
#include "synpl/Driver/Driver.h"

#include "KernelObjects.h"
#include "SearchCache.h"

#include "synpl/Target/HostObject.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/raw_ostream.h"

#include <dlfcn.h>

#ifndef SYNPL_RUNTIME_BUILD_LIB
#define SYNPL_RUNTIME_BUILD_LIB ""
#endif
#ifndef SYNPL_RUNTIME_INSTALL_LIB
#define SYNPL_RUNTIME_INSTALL_LIB ""
#endif
#ifndef SYNPL_DEFAULT_LINKER_DRIVER
#define SYNPL_DEFAULT_LINKER_DRIVER "clang++"
#endif

using namespace mlir;
using namespace synpl::driver;

static LogicalResult fail(const LinkOptions &options, ModuleOp module,
                          const llvm::Twine &message) {
  if (options.error)
    options.error(message);
  else
    emitError(module.getLoc()) << message.str();
  return failure();
}

/// The file holding this code: the running executable, or the shared
/// object (the Python extension) it is linked into.
static std::string thisBinary() {
  Dl_info info;
  if (dladdr(reinterpret_cast<void *>(&thisBinary), &info) && info.dli_fname)
    return info.dli_fname;
  return "";
}

std::string synpl::driver::findRuntime() {
  llvm::SmallVector<std::string, 3> candidates;
  std::string self = thisBinary();
  if (!self.empty()) {
    // <prefix>/bin/synplc or <prefix>/lib/.../module.so next to <prefix>/lib.
    llvm::SmallString<256> dir(llvm::sys::path::parent_path(self));
    for (int up = 0; up < 3 && !dir.empty(); ++up) {
      llvm::SmallString<256> candidate(dir);
      llvm::sys::path::append(candidate, "lib", "libSynplRuntime.a");
      candidates.push_back(candidate.str().str());
      dir = llvm::sys::path::parent_path(dir);
    }
  }
  candidates.push_back(SYNPL_RUNTIME_INSTALL_LIB);
  candidates.push_back(SYNPL_RUNTIME_BUILD_LIB);
  for (const std::string &c : candidates)
    if (!c.empty() && llvm::sys::fs::exists(c))
      return c;
  return "";
}

std::string synpl::driver::findLinker() {
  if (llvm::sys::fs::can_execute(SYNPL_DEFAULT_LINKER_DRIVER))
    return SYNPL_DEFAULT_LINKER_DRIVER;
  for (const char *name : {"clang++-22", "clang++", "c++", "g++"})
    if (llvm::ErrorOr<std::string> p = llvm::sys::findProgramByName(name))
      return *p;
  return "";
}

LogicalResult synpl::driver::writeObject(ModuleOp module, llvm::StringRef path,
                                         const LinkOptions &options) {
  // One object holds the whole module: none of its kernels may live in
  // the cache only.
  std::string error;
  FailureOr<std::optional<KernelObjects>> kernels = readKernelObjects(module, error);
  if (failed(kernels))
    return fail(options, module, error);
  if (*kernels && llvm::any_of((*kernels)->objects, [](const host::FunctionObject &o) {
        return !o.cached.empty();
      }))
    return fail(options, module,
                "the module declares kernels compiled before, kept in the object cache " +
                    (*kernels)->cache.dir +
                    " (compiled with a kernel cache): only an executable can be written");
  std::error_code ec;
  llvm::raw_fd_ostream os(path, ec, llvm::sys::fs::OF_None);
  if (ec)
    return fail(options, module, "cannot write " + path + ": " + ec.message());
  if (options.progress)
    options.progress(("writing the object " + path).str());
  host::ObjectOptions objectOptions;
  objectOptions.cpu = options.cpu;
  objectOptions.optLevel = std::min(options.optLevel, 3u);
  return host::emitObject(module, os, objectOptions);
}

LogicalResult synpl::driver::writeExecutable(ModuleOp module, llvm::StringRef path,
                                             const LinkOptions &options) {
  std::string runtime = options.runtimeLib.empty() ? findRuntime() : options.runtimeLib;
  if (runtime.empty() || !llvm::sys::fs::exists(runtime))
    return fail(options, module,
                "cannot find the host runtime libSynplRuntime.a (looked next to "
                "the compiler, in the install prefix and in the build tree); "
                "pass --runtime-lib");
  std::string linker =
      options.linkerDriver.empty() ? findLinker() : options.linkerDriver;
  if (linker.empty())
    return fail(options, module,
                "no C++ linker driver found (clang++, c++ or g++); pass "
                "--linker-driver");
  // The objects: the program split into parts compiled in parallel, each
  // from the cache when an identical part was compiled before.
  llvm::SmallString<128> scratch;
  if (std::error_code ec = llvm::sys::fs::createUniqueDirectory("synplc", scratch))
    return fail(options, module, "cannot create a temporary folder: " + ec.message());
  auto cleanup = [&] { llvm::sys::fs::remove_directories(scratch); };
  host::ObjectOptions objectOptions;
  objectOptions.cpu = options.cpu;
  objectOptions.optLevel = std::min(options.optLevel, 3u);
  host::ObjectCache cache;
  if (options.cache) {
    llvm::Expected<host::ObjectCache> at = host::ObjectCache::at(options.cacheDir);
    if (!at) {
      cleanup();
      return fail(options, module, llvm::toString(at.takeError()));
    }
    cache = std::move(*at);
  }
  // The kernel objects compile() planned: the cached ones are linked as
  // they are, the others compiled on their own, both in the cache compile()
  // looked in.
  std::string error;
  FailureOr<std::optional<KernelObjects>> kernels = readKernelObjects(module, error);
  if (failed(kernels)) {
    cleanup();
    return fail(options, module, error);
  }
  if (*kernels) {
    const KernelCache &keyed = (*kernels)->cache;
    if (keyed.cpu != objectOptions.cpu || std::min(keyed.optLevel, 3u) != objectOptions.optLevel) {
      cleanup();
      return fail(options, module,
                  "the kernel objects were keyed for CPU " + keyed.cpu + " at O" +
                      llvm::Twine(keyed.optLevel) + ", the link is for " + objectOptions.cpu +
                      " at O" + llvm::Twine(objectOptions.optLevel));
    }
    if (!options.cache) {
      cleanup();
      return fail(options, module,
                  "the module's kernels come from the object cache " + keyed.dir +
                      " (compiled with a kernel cache): it cannot be linked without it");
    }
    cache.dir = keyed.dir;
    // The cache keeps within a size: an object compile() found may have
    // been removed since, when the link comes long after (the C API and
    // Python compile and link in separate calls). Its kernels were never
    // lowered here, so it cannot be rebuilt from this module.
    for (const host::FunctionObject &object : (*kernels)->objects) {
      if (object.cached.empty())
        continue;
      if (!llvm::sys::fs::exists(object.cached)) {
        cleanup();
        return fail(options, module,
                    "the kernel object " + object.cached +
                        " that this module was compiled against is no longer in the "
                        "object cache (it keeps within $SYNPL_CACHE_MAX_SIZE, least "
                        "recently used first): compile the program again");
      }
      host::ObjectCache::touch(object.cached);
    }
  }
  FailureOr<host::ObjectParts> parts = host::emitObjectParts(
      module, scratch, objectOptions, cache, 0,
      *kernels ? llvm::ArrayRef<host::FunctionObject>((*kernels)->objects)
               : llvm::ArrayRef<host::FunctionObject>());
  if (failed(parts)) {
    cleanup();
    return failure();
  }
  if (*kernels && failed(keepManifests(**kernels, parts->keyed, error))) {
    cleanup();
    return fail(options, module, error);
  }
  if (options.progress)
    options.progress(("objects: " + llvm::Twine(parts->paths.size()) + " parts, " +
                      llvm::Twine(parts->reused) + " from the cache" +
                      (cache.dir.empty() ? "" : " (" + cache.dir + ")") + ", " +
                      llvm::Twine(parts->compiled) + " compiled")
                         .str());
  // -ldl: the runtime opens the CUDA driver with dlopen.
  SmallVector<std::string> linkArgs = {linker};
  linkArgs.append(parts->paths.begin(), parts->paths.end());
  for (const char *arg : {"-lz", "-lpthread", "-ldl", "-lmvec", "-lm", "-o"})
    linkArgs.push_back(arg);
  linkArgs.push_back(path.str());
  linkArgs.insert(linkArgs.begin() + 1 + parts->paths.size(), runtime);
  // The object files of user kernels (#[l0::kernel("k.o")]).
  for (const std::string &object : host::linkedObjects(module))
    linkArgs.insert(linkArgs.begin() + 1, object);
  if (llvm::StringRef(linker).contains("clang"))
    linkArgs.insert(linkArgs.begin() + 1, "-fuse-ld=lld");
#ifdef SYNPL_RUNTIME_SANITIZERS
  // This compiler's runtime was built with sanitizers: so is every program.
  linkArgs.insert(linkArgs.begin() + 1, "-fsanitize=" SYNPL_RUNTIME_SANITIZERS);
#endif
  SmallVector<llvm::StringRef> argRefs(linkArgs.begin(), linkArgs.end());
  if (options.progress) {
    std::string line = "linking:";
    for (llvm::StringRef a : argRefs)
      line += " " + a.str();
    options.progress(line);
  }
  std::string linkError;
  int rc = llvm::sys::ExecuteAndWait(linker, argRefs, std::nullopt, {}, 0, 0, &linkError);
  cleanup();
  if (rc != 0)
    return fail(options, module,
                "linking " + path + " failed" +
                    (linkError.empty() ? "" : ": " + linkError));
  trimObjectCache(cache, options.progress);
  return success();
}
