//===- SanitizerOptions.cpp - ASan defaults of the MLIR-free targets ------===//
//
// (The MLIR-side targets get the same from SynplSupport, lib/Support/
// DeepInput.cpp, as the tools do.)
// LLVM's and MLIR's libraries are not instrumented, but the allocators in
// their headers (BumpPtrAllocator) poison and unpoison memory when inlined
// into instrumented code: memory one side poisons the other side hands out,
// and ASan reports a "use-after-poison" that is no bug. Manual poisoning is
// therefore ignored (allow_user_poisoning=0); every other check stays on.
// Leaks are not findings: the shared context lives for the whole run.
//
//===----------------------------------------------------------------------===//
extern "C" const char *__asan_default_options() {
  return "allow_user_poisoning=0:detect_leaks=0";
}
