// RUN: synpl-opt %s --split-input-file --synpl-convert-l0uop-to-llvm --verify-diagnostics | FileCheck %s
// RUN: synpl-opt %s --split-input-file --synpl-convert-l0uop-to-llvm --synpl-convert-l0-plan-to-llvm --verify-diagnostics | FileCheck %s --check-prefix=PLAN

// A kernel's opt_level becomes its function's "synpl-opt-level" attribute,
// which the host backend optimizes the function at. A kernel without one
// has none (the compiler's level).

// CHECK: l0uop.kernel @light {{.*}}opt_level = 1
// CHECK: llvm.func @p_light({{.*}}passthrough = {{.*}}"synpl-opt-level", "1"
// CHECK-NOT: synpl-opt-level
// CHECK: llvm.func @p_plain(
// CHECK-NOT: synpl-opt-level

// The wrapper the runtime calls does not inline its kernel: the kernel's
// code is compiled once.
// PLAN: llvm.func internal @p_light.packed(
// PLAN: llvm.call @p_light({{.*}}) {no_inline}

l0uop.plan @p pipeline_depth 1 {
  l0uop.pool @m arena on host capacity 1KiB
  l0uop.slot @a pool @m offset 0 size 16 lifetime(0, 1) : !l0uop.buf<4xf32>
  l0uop.slot @b pool @m offset 256 size 16 lifetime(0, 1) : !l0uop.buf<4xf32>
  l0uop.kernel @light inputs(%a = @a : !l0uop.buf<4xf32>) outputs(%b = @b : !l0uop.buf<4xf32>)
      grid(1, 1, 1) block(4, 1, 1) shared_mem 0 attributes {opt_level = 1 : i32} {
    %i = l0uop.range 0 to 4 over global_x : index
    %pa = l0uop.index %a[%i] : !l0uop.buf<4xf32>
    %v = l0uop.load %pa : f32
    %pb = l0uop.index %b[%i] : !l0uop.buf<4xf32>
    l0uop.store %pb, %v : f32
    l0uop.end %i
  }
  l0uop.kernel @plain inputs(%a = @b : !l0uop.buf<4xf32>) outputs(%b = @a : !l0uop.buf<4xf32>)
      grid(1, 1, 1) block(4, 1, 1) shared_mem 0 {
    %i = l0uop.range 0 to 4 over global_x : index
    %two = l0uop.const 2.0 : f32
    %pa = l0uop.index %a[%i] : !l0uop.buf<4xf32>
    %v = l0uop.load %pa : f32
    %w = l0uop.mul %v, %two : f32
    %pb = l0uop.index %b[%i] : !l0uop.buf<4xf32>
    l0uop.store %pb, %w : f32
    l0uop.end %i
  }
  l0uop.stream @s [@light, @plain]
}

// -----

// A user kernel is compiled as its file says: a level on it is refused.

l0uop.plan @p pipeline_depth 1 {
  l0uop.pool @m arena on host capacity 1KiB
  l0uop.slot @a pool @m offset 0 size 16 lifetime(0, 1) : !l0uop.buf<4xf32>
  l0uop.slot @b pool @m offset 256 size 16 lifetime(0, 1) : !l0uop.buf<4xf32>
  // expected-error @+1 {{a user kernel is compiled as its file says: opt_level applies to kernels with UOps}}
  l0uop.kernel @user inputs(%a = @a : !l0uop.buf<4xf32>) outputs(%b = @b : !l0uop.buf<4xf32>)
      grid(1, 1, 1) block(1, 1, 1) shared_mem 0
      attributes {custom_kernel = "relu", custom_file = "relu.ll", custom_format = "ll", opt_level = 2 : i32} {
  }
  l0uop.stream @s [@user]
}
