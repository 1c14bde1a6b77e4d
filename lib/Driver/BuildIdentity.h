//===- BuildIdentity.h - Which build of the compiler made a cached result -===//
//
// The driver's caches (kernel objects, method searches) key their entries
// by the code that produced them, as well as by their input: a rebuilt
// compiler may lower or search differently.
//
//===----------------------------------------------------------------------===//
#ifndef SYNPL_LIB_DRIVER_BUILDIDENTITY_H
#define SYNPL_LIB_DRIVER_BUILDIDENTITY_H

#include "llvm/ADT/ArrayRef.h"

#include <string>

namespace synpl::driver {

/// The files (executable or shared library) holding each of `code`'s
/// functions, by path, size and modification time. Empty when one cannot
/// be found: the caller then keeps nothing.
std::string buildIdentity(llvm::ArrayRef<const void *> code);

} // namespace synpl::driver

#endif // SYNPL_LIB_DRIVER_BUILDIDENTITY_H
