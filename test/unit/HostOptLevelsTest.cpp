//===- HostOptLevelsTest.cpp - Functions optimized at their own level -----===//
//
// synpl::host::splitByOptLevel and optimizeForHost on a module whose
// functions ask for different levels: every definition lands in exactly one
// level's module, a local used across levels is made visible, the parts
// link back into a valid program, and each function is optimized at its
// level (an O0 function keeps its stack slots, an O3 one does not).
//
//===----------------------------------------------------------------------===//
#include "synpl/Target/HostObject.h"

#include "llvm/AsmParser/Parser.h"
#include "llvm/IR/Instructions.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"
#include "llvm/IR/Verifier.h"
#include "llvm/Linker/Linker.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Target/TargetMachine.h"

#include <catch2/catch.hpp>

#include <map>
#include <string>

namespace {

// @hot (O3) and @cold (O0) both call the local @helper and read the local
// @coeffs; only @cold reads @counter; @table (at the default level) points
// at both. Each keeps a value in a stack slot that O1 and above promote.
const char *kProgram = R"(
@coeffs = internal constant [2 x float] [float 2.0, float 3.0]
@counter = internal global i32 7
@table = internal constant [2 x ptr] [ptr @hot, ptr @cold]

define internal float @helper(float %x) {
  %y = fmul float %x, 2.0
  ret float %y
}

define float @hot(float %x) #0 {
  %slot = alloca float
  store float %x, ptr %slot
  %v = load float, ptr %slot
  %c = load float, ptr @coeffs
  %h = call float @helper(float %v)
  %r = fadd float %h, %c
  ret float %r
}

define float @cold(float %x) #1 {
  %slot = alloca float
  store float %x, ptr %slot
  %v = load float, ptr %slot
  %n = load i32, ptr @counter
  %f = sitofp i32 %n to float
  %c = load float, ptr getelementptr (float, ptr @coeffs, i64 1)
  %h = call float @helper(float %v)
  %s = fadd float %h, %c
  %r = fadd float %s, %f
  ret float %r
}

define float @entry(i64 %i, float %x) {
  %p = getelementptr [2 x ptr], ptr @table, i64 0, i64 %i
  %fn = load ptr, ptr %p
  %r = call float %fn(float %x)
  ret float %r
}

attributes #0 = { "synpl-opt-level"="3" }
attributes #1 = { "synpl-opt-level"="0" }
)";

std::unique_ptr<llvm::Module> parse(llvm::LLVMContext &context, const char *text) {
  llvm::SMDiagnostic error;
  std::unique_ptr<llvm::Module> module = llvm::parseAssemblyString(text, error, context);
  INFO(error.getMessage().str());
  REQUIRE(module);
  return module;
}

bool hasAlloca(const llvm::Function &f) {
  for (const llvm::BasicBlock &bb : f)
    for (const llvm::Instruction &inst : bb)
      if (llvm::isa<llvm::AllocaInst>(inst))
        return true;
  return false;
}

} // namespace

TEST_CASE("a module splits into one module per optimization level", "[host][optlevels]") {
  llvm::LLVMContext context;
  auto parts = synpl::host::splitByOptLevel(parse(context, kProgram), /*cap=*/3);
  REQUIRE(bool(parts));
  REQUIRE(parts->size() == 2);
  CHECK((*parts)[0].level == 0);
  CHECK((*parts)[1].level == 3);

  // Every definition in exactly one part; no part keeps the attribute.
  std::map<std::string, int> definedIn;
  for (auto &[level, module] : *parts) {
    CHECK_FALSE(llvm::verifyModule(*module, &llvm::errs()));
    for (llvm::GlobalValue &gv : module->global_values()) {
      if (!gv.isDeclaration())
        definedIn[gv.getName().str()] += 1;
      if (auto *f = llvm::dyn_cast<llvm::Function>(&gv))
        CHECK_FALSE(f->hasFnAttribute(synpl::kOptLevelAttr));
    }
  }
  for (auto &[name, count] : definedIn)
    CHECK(count == 1);
  llvm::Module &o0 = *(*parts)[0].module, &o3 = *(*parts)[1].module;
  CHECK_FALSE(o0.getFunction("cold")->isDeclaration());
  CHECK_FALSE(o3.getFunction("hot")->isDeclaration());
  CHECK_FALSE(o3.getFunction("entry")->isDeclaration());
  CHECK_FALSE(o3.getGlobalVariable("table", true)->isDeclaration());
  // @counter is used at O0 alone: it stays local there.
  llvm::GlobalVariable *counter = o0.getGlobalVariable("counter", true);
  REQUIRE(counter);
  CHECK(counter->hasLocalLinkage());
  CHECK_FALSE(counter->isDeclaration());
  // @helper and @coeffs are used at both levels: hidden, external, renamed.
  unsigned renamed = 0;
  for (llvm::GlobalValue &gv : o3.global_values())
    if (gv.getName().starts_with("__synpl_level_")) {
      ++renamed;
      CHECK_FALSE(gv.hasLocalLinkage());
      CHECK(gv.hasHiddenVisibility());
    }
  CHECK(renamed == 2);

  // Linked back together: one valid program with every function defined.
  llvm::Module linked("linked", context);
  for (auto &[level, module] : *parts)
    REQUIRE_FALSE(llvm::Linker::linkModules(linked, std::move(module)));
  CHECK_FALSE(llvm::verifyModule(linked, &llvm::errs()));
  for (const char *name : {"hot", "cold", "entry"})
    CHECK_FALSE(linked.getFunction(name)->isDeclaration());
}

TEST_CASE("levels are capped, and one level keeps the module whole", "[host][optlevels]") {
  llvm::LLVMContext context;
  auto capped = synpl::host::splitByOptLevel(parse(context, kProgram), /*cap=*/0);
  REQUIRE(bool(capped));
  REQUIRE(capped->size() == 1);
  CHECK((*capped)[0].level == 0);
  // Nothing was renamed: the module came back as it was, less the attribute.
  CHECK((*capped)[0].module->getFunction("helper")->hasLocalLinkage());
  CHECK_FALSE((*capped)[0].module->getFunction("hot")->hasFnAttribute(synpl::kOptLevelAttr));
}

TEST_CASE("a bad level is an error naming the function", "[host][optlevels]") {
  llvm::LLVMContext context;
  std::string text = kProgram;
  text.replace(text.find("\"synpl-opt-level\"=\"0\""), 21, "\"synpl-opt-level\"=\"fast\"");
  auto parts = synpl::host::splitByOptLevel(parse(context, text.c_str()), 3);
  REQUIRE_FALSE(bool(parts));
  std::string message = llvm::toString(parts.takeError());
  CHECK(message == "function @cold: synpl-opt-level is \"fast\"; an optimization level is 0 to 3");
}

TEST_CASE("optimizeForHost optimizes each function at its level", "[host][optlevels]") {
  llvm::LLVMContext context;
  std::unique_ptr<llvm::Module> module = parse(context, kProgram);
  auto machine = synpl::host::createHostTargetMachine();
  REQUIRE(bool(machine));
  module->setDataLayout((*machine)->createDataLayout());
  module->setTargetTriple((*machine)->getTargetTriple());
  REQUIRE_FALSE(bool(synpl::host::optimizeForHost(*module, **machine)));
  CHECK_FALSE(llvm::verifyModule(*module, &llvm::errs()));
  // @hot at O3: its stack slot promoted; @cold at O0: kept.
  CHECK_FALSE(hasAlloca(*module->getFunction("hot")));
  CHECK(hasAlloca(*module->getFunction("cold")));
  CHECK_FALSE(module->getFunction("entry")->isDeclaration());
}
