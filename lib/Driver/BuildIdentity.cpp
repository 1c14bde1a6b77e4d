//===- BuildIdentity.cpp - Which build of the compiler made a cached result ===//

#include "BuildIdentity.h"

#include "llvm/Support/FileSystem.h"

#include <dlfcn.h>

std::string synpl::driver::buildIdentity(llvm::ArrayRef<const void *> code) {
  std::string id;
  for (const void *function : code) {
    Dl_info info;
    llvm::sys::fs::file_status status;
    if (!dladdr(function, &info) || !info.dli_fname ||
        llvm::sys::fs::status(info.dli_fname, status))
      return "";
    id += std::string(info.dli_fname) + ":" + std::to_string(status.getSize()) + ":" +
          std::to_string(status.getLastModificationTime().time_since_epoch().count()) + "|";
  }
  return id;
}
