// synpl-translate carries the upstream LLVM IR translation the codegen path
// ends in.
// RUN: synpl-translate --mlir-to-llvmir %s | FileCheck %s

// CHECK: define float @fma_like(float %0, float %1, float %2)
// CHECK:   fmul float %0, %1
// CHECK:   fadd float
llvm.func @fma_like(%a: f32, %b: f32, %c: f32) -> f32 {
  %0 = llvm.fmul %a, %b : f32
  %1 = llvm.fadd %0, %c : f32
  llvm.return %1 : f32
}
