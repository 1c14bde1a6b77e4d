//===- HostObjectPartsTest.cpp - Function objects of emitObjectParts ------===//
//
// synpl::host::emitObjectParts with function objects, the objects the
// driver keys by L0 code: a function object is cut out of the module with
// the local definitions it uses and written under its key; the rest of the
// module is the same IR (so the same cached parts) whether the function
// object was cut out or declared from the cache; a function that shares a
// mutable local global cannot be cut out; an object the cache holds is
// linked as it is.
//
//===----------------------------------------------------------------------===//
#include "synpl/Target/HostObject.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "llvm/Object/ObjectFile.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"

#include <catch2/catch.hpp>

#include <map>
#include <string>

using namespace mlir;

namespace {

// The program around the function object: @main calls @kernel and reads
// the local constant @coeffs; @shared writes the mutable local @counter,
// which @main reads.
#define SYNPL_REST_OF_PROGRAM R"(
llvm.mlir.global internal constant @coeffs(dense<[2.0, 3.0]> : tensor<2xf32>) : !llvm.array<2 x f32>
llvm.mlir.global internal @counter(7 : i32) : i32
llvm.func @shared() {
  %p = llvm.mlir.addressof @counter : !llvm.ptr
  %one = llvm.mlir.constant(1 : i32) : i32
  llvm.store %one, %p : i32, !llvm.ptr
  llvm.return
}
llvm.func @main(%x: f32) -> f32 {
  %p = llvm.mlir.addressof @coeffs : !llvm.ptr
  %c = llvm.load %p : !llvm.ptr -> f32
  %q = llvm.mlir.addressof @counter : !llvm.ptr
  %n = llvm.load %q : !llvm.ptr -> i32
  %f = llvm.sitofp %n : i32 to f32
  %k = llvm.call @kernel(%x) : (f32) -> f32
  %s = llvm.fadd %k, %c : f32
  %r = llvm.fadd %s, %f : f32
  llvm.call @shared() : () -> ()
  llvm.return %r : f32
}
)"

// @kernel (the function object) calls the local @helper and reads @coeffs,
// which @main reads too.
const char *kDefined = R"(
llvm.func internal @helper(%x: f32) -> f32 {
  %two = llvm.mlir.constant(2.0 : f32) : f32
  %y = llvm.fmul %x, %two : f32
  llvm.return %y : f32
}
llvm.func @kernel(%x: f32) -> f32 {
  %p = llvm.mlir.addressof @coeffs : !llvm.ptr
  %c = llvm.load %p : !llvm.ptr -> f32
  %h = llvm.call @helper(%x) : (f32) -> f32
  %r = llvm.fadd %h, %c : f32
  llvm.return %r : f32
}
)" SYNPL_REST_OF_PROGRAM;

// The same program after a compile that found @kernel's object in the
// cache: @kernel is declared (after the rest, as the driver adds it) and
// @helper was never made.
const char *kDeclared = SYNPL_REST_OF_PROGRAM R"(
llvm.func @kernel(f32) -> f32
)";
#undef SYNPL_REST_OF_PROGRAM

struct Fixture {
  MLIRContext context;
  std::string dir;
  Fixture() {
    context.loadDialect<LLVM::LLVMDialect>();
    llvm::SmallString<128> path;
    REQUIRE(!llvm::sys::fs::createUniqueDirectory("synpl-parts-test", path));
    dir = path.str().str();
  }
  ~Fixture() { llvm::sys::fs::remove_directories(dir); }
  OwningOpRef<ModuleOp> parse(const char *text) {
    OwningOpRef<ModuleOp> module = parseSourceString<ModuleOp>(text, &context);
    REQUIRE(module);
    return module;
  }
};

/// The symbols `path` defines: name -> whether it is global.
std::map<std::string, bool> definedSymbols(const std::string &path) {
  auto file = llvm::object::ObjectFile::createObjectFile(path);
  REQUIRE(static_cast<bool>(file));
  std::map<std::string, bool> out;
  for (const llvm::object::SymbolRef &symbol : file->getBinary()->symbols()) {
    auto flags = symbol.getFlags();
    auto name = symbol.getName();
    REQUIRE(static_cast<bool>(flags));
    REQUIRE(static_cast<bool>(name));
    if ((*flags & llvm::object::SymbolRef::SF_Undefined) || name->empty() ||
        (*flags & llvm::object::SymbolRef::SF_FormatSpecific))
      continue;
    out[name->str()] = *flags & llvm::object::SymbolRef::SF_Global;
  }
  return out;
}

} // namespace

TEST_CASE("a function object is cut out with the locals it uses", "[host][objectparts]") {
  Fixture f;
  OwningOpRef<ModuleOp> module = f.parse(kDefined);
  synpl::host::ObjectOptions options;
  options.optLevel = 1;
  synpl::host::ObjectCache cache{f.dir};
  synpl::host::FunctionObject object;
  object.key = "kkernel";
  object.level = 1;
  object.functions = {"kernel"};
  FailureOr<synpl::host::ObjectParts> parts =
      synpl::host::emitObjectParts(*module, f.dir, options, cache, 3, {object});
  REQUIRE(succeeded(parts));
  CHECK(parts->compiled == parts->paths.size());
  CHECK(parts->reused == 0);
  REQUIRE(parts->keyed.size() == 1);
  CHECK(parts->keyed[0] == "kkernel");

  // The function object: @kernel (global), its own copy of @helper (local
  // or inlined), nothing of @main's.
  std::string kernelObject = f.dir + "/kkernel.o";
  REQUIRE(llvm::sys::fs::exists(kernelObject));
  std::map<std::string, bool> symbols = definedSymbols(kernelObject);
  REQUIRE(symbols.count("kernel"));
  CHECK(symbols["kernel"]);
  CHECK(!symbols.count("main"));
  CHECK(!symbols.count("shared"));
  if (symbols.count("helper"))
    CHECK(!symbols["helper"]);
  // The rest defines @main and not @kernel.
  bool mainSeen = false;
  for (const std::string &path : parts->paths) {
    if (path == kernelObject)
      continue;
    std::map<std::string, bool> rest = definedSymbols(path);
    CHECK(!rest.count("kernel"));
    mainSeen |= rest.count("main") > 0;
  }
  CHECK(mainSeen);

  SECTION("the rest is the same IR when the function object comes from the cache") {
    OwningOpRef<ModuleOp> warm = f.parse(kDeclared);
    synpl::host::FunctionObject cached = object;
    cached.cached = kernelObject;
    FailureOr<synpl::host::ObjectParts> again =
        synpl::host::emitObjectParts(*warm, f.dir, options, cache, 3, {cached});
    REQUIRE(succeeded(again));
    CHECK(again->compiled == 0);
    CHECK(again->reused == again->paths.size());
    CHECK(again->keyed.empty());
    std::vector<std::string> before(parts->paths.begin(), parts->paths.end()),
        after(again->paths.begin(), again->paths.end());
    llvm::sort(before);
    llvm::sort(after);
    CHECK(before == after);
  }
}

TEST_CASE("a function that shares a mutable local global is not cut out", "[host][objectparts]") {
  Fixture f;
  OwningOpRef<ModuleOp> module = f.parse(kDefined);
  synpl::host::FunctionObject object;
  object.key = "kshared";
  object.functions = {"shared"};
  std::string error;
  ScopedDiagnosticHandler handler(&f.context, [&](Diagnostic &d) {
    error = d.str();
    return success();
  });
  FailureOr<synpl::host::ObjectParts> parts = synpl::host::emitObjectParts(
      *module, f.dir, {}, synpl::host::ObjectCache{f.dir}, 3, {object});
  CHECK(failed(parts));
  CHECK(error.find("@counter, a mutable local global") != std::string::npos);
  CHECK(!llvm::sys::fs::exists(f.dir + "/kshared.o"));

  SECTION("nor a function the module does not define") {
    object.functions = {"missing"};
    CHECK(failed(synpl::host::emitObjectParts(*module, f.dir, {},
                                              synpl::host::ObjectCache{f.dir}, 3, {object})));
    CHECK(error.find("@missing is not defined in the module") != std::string::npos);
  }
}
