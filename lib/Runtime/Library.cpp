//===- Library.cpp - Loading the optional libraries the runtime drives ----===//
//
// A compiled program links no MPI or NCCL: it loads them with dlopen when
// a run needs them (Comm.cpp, Nccl.cpp), so that the same executable runs
// alone on a machine that has neither.
//
//===----------------------------------------------------------------------===//
#include "Internal.h"

#include <cstdlib>
#include <dlfcn.h>

void *synpl::rt::openLibrary(const char *envVar, std::initializer_list<const char *> names,
                             int flags, std::string &loaded, std::string &tried) {
  std::vector<std::string> candidates;
  const char *env = std::getenv(envVar);
  if (env && *env)
    candidates.push_back(env);
  else
    candidates.assign(names.begin(), names.end());
  tried.clear();
  for (const std::string &c : candidates) {
    if (void *h = dlopen(c.c_str(), flags)) {
      loaded = c;
      return h;
    }
    const char *why = dlerror();
    tried += (tried.empty() ? "" : "; ") + c + " (" + (why ? why : "not found") + ")";
  }
  return nullptr;
}
