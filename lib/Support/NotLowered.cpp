//===- NotLowered.cpp - The "lowered N of M; not lowered" diagnostic ------===//
#include "synpl/Support/NotLowered.h"

#include "llvm/Support/raw_ostream.h"

using namespace mlir;

std::string synpl::formatLoc(Location loc) {
  std::string out;
  loc->walk([&](Location l) {
    if (auto flc = dyn_cast<FileLineColLoc>(l)) {
      out = (flc.getFilename().getValue() + ":" + llvm::Twine(flc.getLine()) + ":" +
             llvm::Twine(flc.getColumn()))
                .str();
      return WalkResult::interrupt();
    }
    return WalkResult::advance();
  });
  if (out.empty()) {
    llvm::raw_string_ostream os(out);
    loc.print(os);
  }
  return out;
}

void synpl::reportNotLowered(int64_t lowered, int64_t total, ArrayRef<NotLowered> failures,
                             StringRef unit) {
  auto nameOf = [](const NotLowered &f) {
    return f.name.empty() ? f.op->getName().getStringRef().str() : f.name;
  };
  const NotLowered &first = failures.front();
  InFlightDiagnostic diag = emitError(first.op->getLoc())
                            << "lowered " << lowered << " of " << total << " " << unit
                            << "; not lowered: " << nameOf(first) << " at "
                            << formatLoc(first.op->getLoc()) << ": " << first.why;
  unsigned notes = 0;
  for (const NotLowered &f : failures.drop_front()) {
    if (f.dependent || ++notes > 8)
      continue;
    diag.attachNote(f.op->getLoc()) << "also not lowered: " << nameOf(f) << ": " << f.why;
  }
}
