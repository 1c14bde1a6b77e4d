// RUN: synpl-opt %s -split-input-file -verify-diagnostics --synpl-convert-l0ctl-to-llvm | FileCheck %s
// RUN: synpl-opt %s -split-input-file -verify-diagnostics --synpl-convert-l0ctl-to-llvm=keep-regions=false --synpl-convert-l0uop-to-llvm=keep-plan=false | synpl-translate -split-input-file --mlir-to-llvmir | FileCheck %s --check-prefix=LLVMIR

// Regions stay as data for the runtime.
// CHECK: l0ctl.region @staging size 401408 access rw align 64
// CHECK: l0ctl.region @labels size 128 access ro{{$}}
// CHECK-NOT: l0ctl.program
l0ctl.region @staging size 401408 access rw align 64
l0ctl.region @labels size 128 access ro
l0ctl.region @batch_queue size 64 access rw queue 8
l0ctl.region @dispatch size 32 access wo queue 4

// The runtime's queue primitives, declared once.
// CHECK-DAG: llvm.func @synpl_rt_ctl_queue_push(!llvm.ptr, i64)
// CHECK-DAG: llvm.func @synpl_rt_ctl_queue_pop(!llvm.ptr) -> i64

// One noalias pointer per region used, sorted by name; blocks 1:1.
// CHECK-LABEL: llvm.func @all_ops(
// CHECK-SAME: %[[BQ:[^:]*]]: !llvm.ptr {llvm.align = 8 : i64, llvm.noalias},
// CHECK-SAME: %[[DQ:[^:]*]]: !llvm.ptr {llvm.align = 8 : i64, llvm.noalias},
// CHECK-SAME: %[[LAB:[^:]*]]: !llvm.ptr {llvm.align = 8 : i64, llvm.noalias},
// CHECK-SAME: %[[ST:[^:]*]]: !llvm.ptr {llvm.align = 64 : i64, llvm.noalias})
// CHECK-SAME: attributes {synpl.regions = [@batch_queue, @dispatch, @labels, @staging]}
// LLVMIR-LABEL: define void @all_ops(ptr noalias align 8 %0, ptr noalias align 8 %1, ptr noalias align 8 %2, ptr noalias align 64 %3)
l0ctl.program @all_ops {
  // CHECK: %[[D:.*]] = llvm.call @synpl_rt_ctl_queue_pop(%[[BQ]]) : (!llvm.ptr) -> i64
  %d = l0ctl.queue_pop @batch_queue : i64
  // CHECK: %[[C8:.*]] = llvm.mlir.constant(8 : i64) : i64
  %c8 = l0ctl.const 8 : i64
  // CHECK: %[[A:.*]] = llvm.add %[[D]], %[[C8]] : i64
  %a = l0ctl.arith add %d, %c8 : i64
  // CHECK: llvm.sub
  %s = l0ctl.arith sub %a, %c8 : i64
  // CHECK: llvm.mul
  %m = l0ctl.arith mul %s, %c8 : i64
  // CHECK: llvm.and
  %n = l0ctl.arith and %m, %c8 : i64
  // CHECK: %[[O:.*]] = llvm.or
  %o = l0ctl.arith or %n, %c8 : i64
  // Shift amounts modulo the width.
  // CHECK: %[[AMT:.*]] = llvm.and %[[C8]], %{{.*}} : i64
  // CHECK: %[[L:.*]] = llvm.shl %[[O]], %[[AMT]] : i64
  %l = l0ctl.arith shl %o, %c8 : i64
  // CHECK: llvm.lshr %[[L]]
  %r = l0ctl.arith shr %l, %c8 : i64
  // load.4 @staging[16]: region + 16, aligned to 4.
  // CHECK: %[[P16:.*]] = llvm.getelementptr %[[ST]][%{{.*}}] : (!llvm.ptr, i64) -> !llvm.ptr, i8
  // CHECK: %[[V:.*]] = llvm.load %[[P16]] {alignment = 4 : i64} : !llvm.ptr -> i32
  %v = l0ctl.load @staging[16] : i32
  // CHECK: llvm.add %{{.*}}, %{{.*}} : i64
  // CHECK: llvm.load %{{.*}} {alignment = 8 : i64} : !llvm.ptr -> i64
  %w = l0ctl.load @staging[%r + 8] : i64
  // CHECK: llvm.getelementptr %[[LAB]]
  // CHECK: llvm.load %{{.*}} {alignment = 1 : i64} : !llvm.ptr -> i8
  %lab = l0ctl.load @labels[%c8] : i8
  // splitmix64 over the zero-extended value.
  // CHECK: %[[Z:.*]] = llvm.zext %[[V]] : i32 to i64
  // CHECK: llvm.lshr %[[Z]]
  // CHECK: llvm.xor
  // CHECK: llvm.mlir.constant(-4658895280553007687 : i64)
  // CHECK: llvm.mlir.constant(-7723592293110705685 : i64)
  %h = l0ctl.hash %v : i32
  // CHECK: llvm.store %[[V]], %{{.*}} {alignment = 4 : i64} : i32, !llvm.ptr
  l0ctl.store @staging[%c8 + 4], %v : i32
  // CHECK: llvm.icmp "eq"
  %e = l0ctl.cmp eq %h, %w : i64
  // CHECK: llvm.icmp "ne"
  %ne = l0ctl.cmp neq %h, %w : i64
  // CHECK: %[[LT:.*]] = llvm.icmp "ult"
  %lt = l0ctl.cmp lt %h, %w : i64
  // CHECK: llvm.icmp "ugt" %{{.*}}, %{{.*}} : i8
  %gt = l0ctl.cmp gt %lab, %lab : i8
  // CHECK: llvm.cond_br %[[LT]], ^[[PUSH:bb[0-9]+]](%{{.*}} : i64), ^[[DONE:bb[0-9]+]]
  l0ctl.branch %lt, ^push(%h : i64), ^done
^push(%x: i64):
  // CHECK: ^[[PUSH]](%[[X:.*]]: i64):
  %x32 = l0ctl.load @staging[%x] : i32
  // CHECK: %[[X64:.*]] = llvm.zext %{{.*}} : i32 to i64
  // CHECK: llvm.call @synpl_rt_ctl_queue_push(%[[DQ]], %[[X64]]) : (!llvm.ptr, i64) -> ()
  l0ctl.queue_push @dispatch, %x32 : i32
  // CHECK: llvm.br ^[[DONE]]
  l0ctl.jump ^done
^done:
  // CHECK: ^[[DONE]]:
  // CHECK-NEXT: llvm.return
  l0ctl.terminate
}

// -----

// A program in a plan is named after both; the plan's other items stay.
// CHECK-LABEL: l0uop.plan @step
// CHECK: l0ctl.region @state size 16 access rw
// CHECK-NOT: l0ctl.program
// CHECK-LABEL: llvm.func @step_tick(
// CHECK-SAME: !llvm.ptr {llvm.align = 8 : i64, llvm.noalias})
// CHECK-NOT: synpl_rt_queue
// LLVMIR-LABEL: define void @step_tick(ptr noalias align 8 %0)
l0uop.plan @step pipeline_depth 1 {
  l0ctl.region @state size 16 access rw
  l0ctl.program @tick {
    %n = l0ctl.load @state[0] : i64
    %one = l0ctl.const 1 : i64
    %m = l0ctl.arith add %n, %one : i64
    l0ctl.store @state[0], %m : i64
    l0ctl.terminate
  }
}

// -----

// All or nothing: a program whose function name is taken is refused, and
// nothing is converted.
llvm.func @p_tick()
l0uop.plan @p pipeline_depth 1 {
  l0ctl.region @state size 16 access rw
  l0ctl.program @ok {
    %n = l0ctl.load @state[0] : i64
    l0ctl.store @state[8], %n : i64
    l0ctl.terminate
  }
  // expected-error-re @+1 {{lowered 4 of 7 ops; not lowered: l0ctl.program at {{.*}}synpl-convert-l0ctl-to-llvm.mlir:{{[0-9]+}}:{{[0-9]+}}: symbol @p_tick already exists in the module}}
  l0ctl.program @tick {
    %n = l0ctl.load @state[0] : i64
    l0ctl.terminate
  }
}
