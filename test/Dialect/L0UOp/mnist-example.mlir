// The hand-written L0 plan of one MNIST training step verifies (all of
// L0.1-L0.6 and l0ctl's checks pass) and round-trips.
// RUN: synpl-opt %synpl_src_root/examples/mnist/mnist.l0.mlir | FileCheck %s
// RUN: synpl-opt %synpl_src_root/examples/mnist/mnist.l0.mlir | synpl-opt -mlir-print-op-generic | synpl-opt | FileCheck %s

// Without the wait, step N+1 races step N on the shared arena and state.
// RUN: sed '/l0uop.wait @step_done/d' %synpl_src_root/examples/mnist/mnist.l0.mlir \
// RUN:   | not synpl-opt 2>&1 | FileCheck %s --check-prefix=NOSYNC
// NOSYNC-DAG: [liveness] L0.4: event @step_done is recorded after @adam_w1 on @stream_0 but no stream waits for it
// NOSYNC-DAG: [safety] L0.3: slot @x is written by @tx_x on stream @stream_0 and written by @tx_x on stream @stream_1, and no sync orders them

// At pipeline_depth 3 the staging pool cannot hold three batches.
// RUN: sed 's/pipeline_depth 2/pipeline_depth 3/' %synpl_src_root/examples/mnist/mnist.l0.mlir \
// RUN:   | not synpl-opt 2>&1 | FileCheck %s --check-prefix=DEPTH3
// DEPTH3: [resource] L0.6: freelist pool @host_staging has no headroom at pipeline_depth 3: its peak of 405504 bytes (t=0) is allocated once per step in flight, 3 x 405504 = 1216512 bytes, past its capacity of 1048576 bytes

// Without the unroll's step, the second product of the last iteration reads
// column 784 of x.
// RUN: sed 's/range 0 to 784 step 2/range 0 to 784/' %synpl_src_root/examples/mnist/mnist.l0.mlir \
// RUN:   | not synpl-opt 2>&1 | FileCheck %s --check-prefix=NOSTEP
// NOSTEP: [safety] L0.1: index #1 ranges over [1, 784], past dimension 1 of '!l0uop.buf<128x784xf32>' (extent 784)

// CHECK-LABEL: l0uop.plan @mnist_train_step pipeline_depth 2
// CHECK: l0uop.pool @host_staging freelist on host capacity 1MiB align 4096
// CHECK: l0uop.slot @w1 pool @dev_params offset 0 size 802816 lifetime(0, 14) : !l0uop.buf<784x256xf32>
// CHECK: l0uop.kernel @fc1_fwd inputs(%{{.*}} = @x : !l0uop.buf<128x784xf32>, %{{.*}} = @w1 : !l0uop.buf<784x256xf32>, %{{.*}} = @b1 : !l0uop.buf<256xf32>) outputs(%{{.*}} = @h1 : !l0uop.buf<128x256xf32>) grid(128, 1, 1) block(256, 1, 1) shared_mem 0
// CHECK: l0uop.range 0 to 784 step 2 : index
// CHECK: l0uop.mulacc
// CHECK: l0uop.end
// CHECK: l0uop.reduce add
// CHECK: l0uop.kernel @ln1_fwd
// CHECK-COUNT-2: l0uop.reduce add
// CHECK: l0uop.kernel @gelu1
// CHECK: l0uop.exp2
// CHECK: l0uop.kernel @adam_w1
// CHECK: l0uop.mulacc
// CHECK: l0uop.transfer @tx_x @x_stage -> @x h2d bytes 401408
// CHECK: l0uop.stream @stream_0 [@tx_x, @tx_y, @fc1_fwd, @ln1_fwd, @gelu1, @fc1_grad_w, @adam_w1]
// CHECK: l0uop.record @step_done after @adam_w1 on @stream_0
// CHECK: l0uop.wait @step_done before @tx_x on @stream_1
// CHECK: l0uop.init kaiming @w1 seed 1
// CHECK: l0ctl.program @actor_dispatch
// CHECK: l0ctl.queue_pop @batch_queue : i64
// CHECK: l0ctl.queue_push @launch_queue
// CHECK: l0ctl.terminate
