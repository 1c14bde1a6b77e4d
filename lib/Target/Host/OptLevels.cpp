//===- OptLevels.cpp - Functions optimized at the level they ask for ------===//
//
// A kernel may ask for its own optimization effort: the L0 plan's hot
// matmuls at O3, the small kernels that take a few percent of a step at O1
// (`--synpl-l0-kernel-effort` sets an `l0uop.kernel`'s `opt_level`, and the
// LLVM lowering carries it to the function as the string attribute
// "synpl-opt-level"). LLVM's pipelines run at one level per module, so the
// module is split into one module per level: every function and global
// variable is defined in exactly one of them and declared where others use
// it, and a local symbol used across modules becomes a hidden external one
// under a name no other symbol has. Linked (or compiled and linked)
// together they are the original program.
//
//===----------------------------------------------------------------------===//
#include "synpl/Target/HostObject.h"

#include "Globals.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/SmallPtrSet.h"
#include "llvm/IR/Constants.h"
#include "llvm/IR/Instructions.h"
#include "llvm/IR/Module.h"
#include "llvm/Transforms/Utils/Cloning.h"
#include "llvm/Transforms/Utils/ValueMapper.h"

#include <map>
#include <optional>
#include <set>

namespace synpl::host {

llvm::Expected<unsigned> functionOptLevel(const llvm::Function &f, unsigned cap) {
  llvm::Attribute attr = f.getFnAttribute(kOptLevelAttr);
  if (!attr.isValid())
    return cap;
  if (!attr.isStringAttribute())
    return llvm::createStringError(("function @" + f.getName() + ": " + kOptLevelAttr +
                                    " is a string attribute (\"0\" to \"3\")")
                                       .str());
  unsigned level;
  if (attr.getValueAsString().getAsInteger(10, level) || level > 3)
    return llvm::createStringError(("function @" + f.getName() + ": " + kOptLevelAttr +
                                    " is \"" + attr.getValueAsString() +
                                    "\"; an optimization level is 0 to 3")
                                       .str());
  return std::min(level, cap);
}

void collectGlobals(const llvm::Constant *c, llvm::SmallPtrSetImpl<const llvm::GlobalValue *> &out,
                    llvm::SmallPtrSetImpl<const llvm::Constant *> &seen) {
  if (!seen.insert(c).second)
    return;
  if (auto *gv = llvm::dyn_cast<llvm::GlobalValue>(c)) {
    out.insert(gv);
    return;
  }
  for (const llvm::Use &op : c->operands())
    if (auto *inner = llvm::dyn_cast<llvm::Constant>(op.get()))
      collectGlobals(inner, out, seen);
}

llvm::Expected<std::vector<LevelModule>>
splitByOptLevel(std::unique_ptr<llvm::Module> module, unsigned cap) {
  // The level each definition belongs to. Functions ask for theirs; a global
  // variable goes with the functions that use it when they all share one
  // level, else (or when no function uses it) with the module's default.
  llvm::DenseMap<const llvm::GlobalValue *, unsigned> levelOf;
  std::map<unsigned, unsigned> functionsAt; // level -> definitions
  for (llvm::Function &f : *module) {
    if (f.isDeclaration())
      continue;
    llvm::Expected<unsigned> level = functionOptLevel(f, cap);
    if (!level)
      return level.takeError();
    levelOf[&f] = *level;
    ++functionsAt[*level];
  }
  auto stripAttr = [&] {
    for (llvm::Function &f : *module)
      f.removeFnAttr(kOptLevelAttr);
  };
  if (functionsAt.size() <= 1) {
    unsigned level = functionsAt.empty() ? cap : functionsAt.begin()->first;
    stripAttr();
    std::vector<LevelModule> one;
    one.push_back({level, std::move(module)});
    return one;
  }

  // Who refers to what: functions through their instructions' operands,
  // global variables through their initializers.
  llvm::DenseMap<const llvm::GlobalValue *, llvm::SmallPtrSet<const llvm::GlobalValue *, 4>>
      usersOf;
  auto noteUses = [&](const llvm::GlobalValue *user, const llvm::Constant *c) {
    llvm::SmallPtrSet<const llvm::GlobalValue *, 8> used;
    llvm::SmallPtrSet<const llvm::Constant *, 16> seen;
    collectGlobals(c, used, seen);
    for (const llvm::GlobalValue *gv : used)
      usersOf[gv].insert(user);
  };
  for (llvm::Function &f : *module)
    for (llvm::BasicBlock &bb : f)
      for (llvm::Instruction &inst : bb)
        for (const llvm::Use &op : inst.operands())
          if (auto *c = llvm::dyn_cast<llvm::Constant>(op.get()))
            noteUses(&f, c);
  for (llvm::GlobalVariable &gv : module->globals())
    if (gv.hasInitializer())
      noteUses(&gv, gv.getInitializer());

  unsigned defaultLevel = cap;
  for (llvm::GlobalVariable &gv : module->globals()) {
    if (gv.isDeclaration())
      continue;
    std::optional<unsigned> shared;
    bool mixed = false;
    for (const llvm::GlobalValue *user : usersOf[&gv]) {
      auto it = levelOf.find(user);
      if (it == levelOf.end() || (shared && *shared != it->second)) {
        mixed = true;
        break;
      }
      shared = it->second;
    }
    levelOf[&gv] = !mixed && shared ? *shared : defaultLevel;
  }
  for (llvm::GlobalAlias &alias : module->aliases())
    levelOf[&alias] = defaultLevel;
  for (llvm::GlobalIFunc &ifunc : module->ifuncs())
    levelOf[&ifunc] = defaultLevel;

  // A local definition used from another level's module must be visible
  // there: hidden, external, and named apart from every other symbol.
  unsigned renamed = 0;
  for (llvm::GlobalValue &gv : module->global_values()) {
    if (!gv.hasLocalLinkage() || gv.isDeclaration())
      continue;
    unsigned own = levelOf.lookup(&gv);
    bool crosses = llvm::any_of(usersOf[&gv], [&](const llvm::GlobalValue *user) {
      auto it = levelOf.find(user);
      return it != levelOf.end() && it->second != own;
    });
    if (!crosses)
      continue;
    std::string base = gv.hasName() ? gv.getName().str() : "anon";
    std::string name;
    do
      name = "__synpl_level_" + base + "_" + std::to_string(renamed++);
    while (module->getNamedValue(name));
    gv.setName(name);
    gv.setLinkage(llvm::GlobalValue::ExternalLinkage);
    gv.setVisibility(llvm::GlobalValue::HiddenVisibility);
  }
  stripAttr();

  std::set<unsigned> levels;
  for (auto &entry : levelOf)
    levels.insert(entry.second);
  std::vector<LevelModule> result;
  for (unsigned level : levels) {
    llvm::ValueToValueMapTy map;
    std::unique_ptr<llvm::Module> part =
        llvm::CloneModule(*module, map, [&](const llvm::GlobalValue *gv) {
          auto it = levelOf.find(gv);
          return it != levelOf.end() && it->second == level;
        });
    result.push_back({level, std::move(part)});
  }
  return result;
}

} // namespace synpl::host
