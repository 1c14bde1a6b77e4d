// RUN: synpl-opt %s -split-input-file --synpl-convert-l0uop-to-ipu21="tiles=4" | FileCheck %s
// A training program keeps its host side (docs/ipu21.md): the plan,
// renamed @<name>.host, holds only what the executor binds (pools, slots,
// inits, ingests, reports); main streams the ingest's slots in first and
// the reports out last. The kernel that writes actor state (@update) and
// the one evaluation does not need (@grad, which only @update reads) run
// under an If on the training-mode slot the lowering adds (the plan had
// none); @predict, which the `correct` report reads, runs in every step.
// The slots of the arena pool (@x, @g, @correct) are the step's
// temporaries: scratch tensors; the state @w and the training mode, which
// the host writes between steps, live throughout.
// CHECK-LABEL: ipu21.graph @p
// CHECK-DAG: ipu21.tensor @x : tensor<4x8xf32> {{.*}} scratch
// CHECK-DAG: ipu21.tensor @g : tensor<8xf32> {{.*}} scratch
// CHECK-DAG: ipu21.tensor @correct : tensor<1xf32> {{.*}} scratch
// CHECK-DAG: ipu21.tensor @w : tensor<8xf32> {{.*}} at 0x{{[0-9A-F]+}}{{$}}
// CHECK-DAG: ipu21.tensor @synpl.ipu21.training_mode : tensor<1xf32> {{.*}} at 0x{{[0-9A-F]+}}{{$}}
// CHECK: ipu21.program @main {
// CHECK-NEXT: ipu21.stream_in "x" to @x
// CHECK-NEXT: ipu21.sync
// CHECK-NEXT: ipu21.copy @predict.in
// CHECK-NEXT: ipu21.sync
// CHECK-NEXT: ipu21.execute @predict
// CHECK-NEXT: ipu21.sync
// CHECK-NEXT: ipu21.if @synpl.ipu21.training_mode {
// CHECK-NEXT: ipu21.copy @grad.in
// CHECK-NEXT: ipu21.sync
// CHECK-NEXT: ipu21.execute @grad
// CHECK-NEXT: ipu21.sync
// CHECK-NEXT: }
// CHECK-NEXT: ipu21.if @synpl.ipu21.training_mode {
// CHECK-NEXT: ipu21.execute @update
// CHECK-NEXT: ipu21.sync
// CHECK-NEXT: }
// CHECK-NEXT: ipu21.stream_out @correct to "correct"
// CHECK-NEXT: ipu21.sync
// CHECK-NEXT: }
// CHECK: l0uop.plan @p.host
// CHECK-NEXT: l0uop.pool @synpl.ipu21.host persistent on host capacity 16 align 16
// CHECK-NEXT: l0uop.slot @synpl.ipu21.training_mode pool @synpl.ipu21.host offset 0 size 4 lifetime(0, 0) : !l0uop.buf<1xf32>
// CHECK-NEXT: l0uop.init training_mode @synpl.ipu21.training_mode
// CHECK-NEXT: l0uop.pool @state
// CHECK-NEXT: l0uop.pool @host
// CHECK-NEXT: l0uop.slot @w
// CHECK-NEXT: l0uop.slot @x
// CHECK-NEXT: l0uop.slot @g
// CHECK-NEXT: l0uop.slot @correct
// CHECK-NOT: @unused
// CHECK-NEXT: l0uop.init ones @w
// CHECK-NEXT: l0uop.ingest @read0 into [@x]
// CHECK-NEXT: l0uop.report "correct" @correct
// CHECK-NEXT: }
l0uop.plan @p pipeline_depth 1 {
  l0uop.pool @state persistent on device capacity 1MiB
  l0uop.pool @host arena on host capacity 1MiB
  l0uop.slot @w pool @state offset 0 size 32 lifetime(0, 0) : !l0uop.buf<8xf32>
  l0uop.slot @x pool @host offset 0 size 128 lifetime(0, 0) : !l0uop.buf<4x8xf32>
  l0uop.slot @g pool @host offset 256 size 32 lifetime(0, 0) : !l0uop.buf<8xf32>
  l0uop.slot @correct pool @host offset 512 size 4 lifetime(0, 0) : !l0uop.buf<1xf32>
  l0uop.slot @unused pool @host offset 768 size 4 lifetime(0, 0) : !l0uop.buf<1xf32>
  l0uop.init ones @w
  l0uop.ingest @read0 into [@x] from ["/d/train-images"] format "idx" batch 4 seed 0
  // correct[0] = sum over x[0, :] * w
  l0uop.kernel @predict inputs(%x = @x : !l0uop.buf<4x8xf32>, %w = @w : !l0uop.buf<8xf32>) outputs(%c = @correct : !l0uop.buf<1xf32>) grid(1, 1, 1) block(1, 1, 1) shared_mem 0 {
    %zero = l0uop.const 0.0 : f32
    %c0 = l0uop.const 0 : index
    %k = l0uop.range 0 to 8 over loop : index
    %px = l0uop.index %x[%c0, %k] : !l0uop.buf<4x8xf32>
    %vx = l0uop.load %px : f32
    %pw = l0uop.index %w[%k] : !l0uop.buf<8xf32>
    %vw = l0uop.load %pw : f32
    %m = l0uop.mul %vx, %vw : f32
    l0uop.end %k
    %s = l0uop.reduce add %m over %k init %zero : f32
    %pc = l0uop.index %c[%c0] : !l0uop.buf<1xf32>
    l0uop.store %pc, %s : f32
  }
  // g[j] = x[0, j]
  l0uop.kernel @grad inputs(%x = @x : !l0uop.buf<4x8xf32>) outputs(%g = @g : !l0uop.buf<8xf32>) grid(8, 1, 1) block(1, 1, 1) shared_mem 0 {
    %j = l0uop.range 0 to 8 over group_x : index
    %c0 = l0uop.const 0 : index
    %px = l0uop.index %x[%c0, %j] : !l0uop.buf<4x8xf32>
    %vx = l0uop.load %px : f32
    %pg = l0uop.index %g[%j] : !l0uop.buf<8xf32>
    l0uop.store %pg, %vx : f32
    l0uop.end %j
  }
  // w[j] += g[j]
  l0uop.kernel @update inputs(%g = @g : !l0uop.buf<8xf32>) outputs(%w = @w : !l0uop.buf<8xf32>) grid(8, 1, 1) block(1, 1, 1) shared_mem 0 {
    %j = l0uop.range 0 to 8 over group_x : index
    %pg = l0uop.index %g[%j] : !l0uop.buf<8xf32>
    %vg = l0uop.load %pg : f32
    %pw = l0uop.index %w[%j] : !l0uop.buf<8xf32>
    %vw = l0uop.load %pw : f32
    %d = l0uop.add %vw, %vg : f32
    l0uop.store %pw, %d : f32
    l0uop.end %j
  }
  l0uop.stream @s0 [@predict, @grad, @update]
  l0uop.report "correct" @correct
}
