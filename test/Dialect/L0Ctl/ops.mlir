// RUN: synpl-opt %s | synpl-opt | FileCheck %s
// RUN: synpl-opt %s -mlir-print-op-generic | synpl-opt | FileCheck %s

// CHECK-LABEL: l0ctl.region @staging size 401408 access rw align 64
l0ctl.region @staging size 401408 access rw align 64
// CHECK: l0ctl.region @labels size 128 access ro{{$}}
l0ctl.region @labels size 128 access ro
// CHECK: l0ctl.region @batch_queue size 64 access rw queue 8
l0ctl.region @batch_queue size 64 access rw queue 8
// CHECK: l0ctl.region @dispatch size 32 access wo queue 4
l0ctl.region @dispatch size 32 access wo queue 4

// CHECK-LABEL: l0ctl.program @all_ops
l0ctl.program @all_ops {
  // CHECK: %[[D:.*]] = l0ctl.queue_pop @batch_queue : i64
  %d = l0ctl.queue_pop @batch_queue : i64
  // CHECK: l0ctl.const 8 : i64
  %c8 = l0ctl.const 8 : i64
  // CHECK: l0ctl.arith add %[[D]], %{{.*}} : i64
  %a = l0ctl.arith add %d, %c8 : i64
  // CHECK: l0ctl.arith sub
  %s = l0ctl.arith sub %a, %c8 : i64
  // CHECK: l0ctl.arith mul
  %m = l0ctl.arith mul %s, %c8 : i64
  // CHECK: l0ctl.arith and
  %n = l0ctl.arith and %m, %c8 : i64
  // CHECK: l0ctl.arith or
  %o = l0ctl.arith or %n, %c8 : i64
  // CHECK: l0ctl.arith shl
  %l = l0ctl.arith shl %o, %c8 : i64
  // CHECK: l0ctl.arith shr
  %r = l0ctl.arith shr %l, %c8 : i64
  // CHECK: l0ctl.load @staging[16] : i32
  %v = l0ctl.load @staging[16] : i32
  // CHECK: l0ctl.load @staging[%{{.*}} + 8] : i64
  %w = l0ctl.load @staging[%r + 8] : i64
  // CHECK: l0ctl.load @labels[%{{.*}}] : i8
  %lab = l0ctl.load @labels[%c8] : i8
  // CHECK: l0ctl.hash %{{.*}} : i32
  %h = l0ctl.hash %v : i32
  // CHECK: l0ctl.store @staging[%{{.*}} + 4], %{{.*}} : i32
  l0ctl.store @staging[%c8 + 4], %v : i32
  // CHECK: l0ctl.cmp eq
  %e = l0ctl.cmp eq %h, %w : i64
  // CHECK: l0ctl.cmp neq
  %ne = l0ctl.cmp neq %h, %w : i64
  // CHECK: l0ctl.cmp lt
  %lt = l0ctl.cmp lt %h, %w : i64
  // CHECK: l0ctl.cmp gt {{.*}} : i8
  %gt = l0ctl.cmp gt %lab, %lab : i8
  // CHECK: l0ctl.branch %{{.*}}, ^bb1(%{{.*}} : i64), ^bb2
  l0ctl.branch %lt, ^push(%h : i64), ^done
^push(%x: i64):
  %x32 = l0ctl.load @staging[%x] : i32
  // CHECK: l0ctl.queue_push @dispatch, %{{.*}} : i32
  l0ctl.queue_push @dispatch, %x32 : i32
  // CHECK: l0ctl.jump ^bb2
  l0ctl.jump ^done
^done:
  // CHECK: l0ctl.terminate
  l0ctl.terminate
}

// A diamond is acyclic: both arms meet again.
// CHECK-LABEL: l0ctl.program @diamond
l0ctl.program @diamond {
  %d = l0ctl.queue_pop @batch_queue : i64
  %z = l0ctl.const 0 : i64
  %c = l0ctl.cmp eq %d, %z : i64
  l0ctl.branch %c, ^a, ^b
^a:
  l0ctl.jump ^join(%d : i64)
^b:
  l0ctl.jump ^join(%z : i64)
^join(%v: i64):
  l0ctl.store @staging[0], %v : i64
  l0ctl.terminate
}
