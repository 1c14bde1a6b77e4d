// One training step of the spec's MNIST model at L0, written by hand the
// way the L1 -> L0 emission (memory planning, stream inference, kernel
// scheduling) will produce it:
//
//   linear(784, 256), norm(layer), gelu, linear(256, 256), norm(layer), gelu,
//   linear(256, 10), softmax; cross-entropy; adam(lr: 3e-4); batch 128;
//   pipeline_depth 2 on system single_gpu (ram_0 32GB, gpu_0 24GB).
//
// Ticks (plan time) are the launch order of one step:
//    0 tx_x, tx_y (h2d)     5 ln2_fwd      10 ln2_gelu2_bwd
//    1 fc1_fwd              6 gelu2        11 fc2_bwd
//    2 ln1_fwd              7 fc3_fwd      12 ln1_gelu1_bwd
//    3 gelu1                8 softmax_ce   13 fc1_grad_w (+ fc1_grad_b)
//    4 fc2_fwd              9 fc3_bwd      14 adam (one kernel per tensor)
//
// The memory plan is complete: every parameter, gradient, Adam moment,
// activation and staging buffer of the step has its slot. The kernel plan
// holds five of the step's kernels written out as UOps -- the first linear
// layer forward (matmul + bias), its layer norm (three passes, two
// reductions), an elementwise GELU, the first layer's weight gradient and
// the Adam update of w1. The other kernels of the tick table (the second
// and third layers, softmax-CE, the rest of the backward and of Adam) have
// the same shapes and are left to the L1 -> L0 emission; the streams below
// run the kernels that are here.
//
// test/Dialect/L0UOp/mnist-example.mlir verifies this file, and checks that
// the verifier rejects it without its sync or at a deeper pipeline.

l0uop.plan @mnist_train_step pipeline_depth 2 {
  //===--------------------------------------------------------------------===//
  // Memory plan
  //===--------------------------------------------------------------------===//

  // Host RAM (ram_0): the decoded data set stays resident; batches are
  // staged through a freelist pool, one staging pair per step in flight.
  l0uop.pool @host_data persistent on host capacity 64MiB
  l0uop.pool @host_staging freelist on host capacity 1MiB align 4096
  // Device memory (gpu_0): persistent actor state, and an arena for one
  // step's activations (both steps share it; the sync plan serialises them).
  l0uop.pool @dev_params persistent on device capacity 8MiB
  l0uop.pool @dev_arena arena on device capacity 2MiB

  // The data set, decoded once by the init plan (60000 images, u8 pixels).
  l0uop.slot @train_images pool @host_data offset 0 size 47040000 lifetime(0, 14) : !l0uop.buf<60000x784xi8>
  l0uop.slot @train_labels pool @host_data offset 47040000 size 60000 lifetime(0, 14) : !l0uop.buf<60000xi8>

  // Staging for one batch: the load_data stage gathers and normalises the
  // batch here; the h2d transfers move it to the device at tick 0.
  l0uop.slot @x_stage pool @host_staging size 401408 lifetime(0, 0) : !l0uop.buf<128x784xf32>
  l0uop.slot @y_stage pool @host_staging size 512 lifetime(0, 0) : !l0uop.buf<128xi32>

  // parameters (the actor state of model_state)
  l0uop.slot @w1 pool @dev_params offset 0 size 802816 lifetime(0, 14) : !l0uop.buf<784x256xf32>
  l0uop.slot @b1 pool @dev_params offset 802816 size 1024 lifetime(0, 14) : !l0uop.buf<256xf32>
  l0uop.slot @g1 pool @dev_params offset 803840 size 1024 lifetime(0, 14) : !l0uop.buf<256xf32>
  l0uop.slot @be1 pool @dev_params offset 804864 size 1024 lifetime(0, 14) : !l0uop.buf<256xf32>
  l0uop.slot @w2 pool @dev_params offset 805888 size 262144 lifetime(0, 14) : !l0uop.buf<256x256xf32>
  l0uop.slot @b2 pool @dev_params offset 1068032 size 1024 lifetime(0, 14) : !l0uop.buf<256xf32>
  l0uop.slot @g2 pool @dev_params offset 1069056 size 1024 lifetime(0, 14) : !l0uop.buf<256xf32>
  l0uop.slot @be2 pool @dev_params offset 1070080 size 1024 lifetime(0, 14) : !l0uop.buf<256xf32>
  l0uop.slot @w3 pool @dev_params offset 1071104 size 10240 lifetime(0, 14) : !l0uop.buf<256x10xf32>
  l0uop.slot @b3 pool @dev_params offset 1081344 size 40 lifetime(0, 14) : !l0uop.buf<10xf32>
  // gradients, written by the backward kernels
  l0uop.slot @gr_w1 pool @dev_params offset 1081600 size 802816 lifetime(0, 14) : !l0uop.buf<784x256xf32>
  l0uop.slot @gr_b1 pool @dev_params offset 1884416 size 1024 lifetime(0, 14) : !l0uop.buf<256xf32>
  l0uop.slot @gr_g1 pool @dev_params offset 1885440 size 1024 lifetime(0, 14) : !l0uop.buf<256xf32>
  l0uop.slot @gr_be1 pool @dev_params offset 1886464 size 1024 lifetime(0, 14) : !l0uop.buf<256xf32>
  l0uop.slot @gr_w2 pool @dev_params offset 1887488 size 262144 lifetime(0, 14) : !l0uop.buf<256x256xf32>
  l0uop.slot @gr_b2 pool @dev_params offset 2149632 size 1024 lifetime(0, 14) : !l0uop.buf<256xf32>
  l0uop.slot @gr_g2 pool @dev_params offset 2150656 size 1024 lifetime(0, 14) : !l0uop.buf<256xf32>
  l0uop.slot @gr_be2 pool @dev_params offset 2151680 size 1024 lifetime(0, 14) : !l0uop.buf<256xf32>
  l0uop.slot @gr_w3 pool @dev_params offset 2152704 size 10240 lifetime(0, 14) : !l0uop.buf<256x10xf32>
  l0uop.slot @gr_b3 pool @dev_params offset 2162944 size 40 lifetime(0, 14) : !l0uop.buf<10xf32>
  // Adam first moments
  l0uop.slot @m_w1 pool @dev_params offset 2163200 size 802816 lifetime(0, 14) : !l0uop.buf<784x256xf32>
  l0uop.slot @m_b1 pool @dev_params offset 2966016 size 1024 lifetime(0, 14) : !l0uop.buf<256xf32>
  l0uop.slot @m_g1 pool @dev_params offset 2967040 size 1024 lifetime(0, 14) : !l0uop.buf<256xf32>
  l0uop.slot @m_be1 pool @dev_params offset 2968064 size 1024 lifetime(0, 14) : !l0uop.buf<256xf32>
  l0uop.slot @m_w2 pool @dev_params offset 2969088 size 262144 lifetime(0, 14) : !l0uop.buf<256x256xf32>
  l0uop.slot @m_b2 pool @dev_params offset 3231232 size 1024 lifetime(0, 14) : !l0uop.buf<256xf32>
  l0uop.slot @m_g2 pool @dev_params offset 3232256 size 1024 lifetime(0, 14) : !l0uop.buf<256xf32>
  l0uop.slot @m_be2 pool @dev_params offset 3233280 size 1024 lifetime(0, 14) : !l0uop.buf<256xf32>
  l0uop.slot @m_w3 pool @dev_params offset 3234304 size 10240 lifetime(0, 14) : !l0uop.buf<256x10xf32>
  l0uop.slot @m_b3 pool @dev_params offset 3244544 size 40 lifetime(0, 14) : !l0uop.buf<10xf32>
  // Adam second moments
  l0uop.slot @v_w1 pool @dev_params offset 3244800 size 802816 lifetime(0, 14) : !l0uop.buf<784x256xf32>
  l0uop.slot @v_b1 pool @dev_params offset 4047616 size 1024 lifetime(0, 14) : !l0uop.buf<256xf32>
  l0uop.slot @v_g1 pool @dev_params offset 4048640 size 1024 lifetime(0, 14) : !l0uop.buf<256xf32>
  l0uop.slot @v_be1 pool @dev_params offset 4049664 size 1024 lifetime(0, 14) : !l0uop.buf<256xf32>
  l0uop.slot @v_w2 pool @dev_params offset 4050688 size 262144 lifetime(0, 14) : !l0uop.buf<256x256xf32>
  l0uop.slot @v_b2 pool @dev_params offset 4312832 size 1024 lifetime(0, 14) : !l0uop.buf<256xf32>
  l0uop.slot @v_g2 pool @dev_params offset 4313856 size 1024 lifetime(0, 14) : !l0uop.buf<256xf32>
  l0uop.slot @v_be2 pool @dev_params offset 4314880 size 1024 lifetime(0, 14) : !l0uop.buf<256xf32>
  l0uop.slot @v_w3 pool @dev_params offset 4315904 size 10240 lifetime(0, 14) : !l0uop.buf<256x10xf32>
  l0uop.slot @v_b3 pool @dev_params offset 4326144 size 40 lifetime(0, 14) : !l0uop.buf<10xf32>

  // Activations and their gradients of one step: 1460992 bytes of the arena.
  l0uop.slot @x pool @dev_arena offset 0 size 401408 lifetime(0, 13) : !l0uop.buf<128x784xf32>
  l0uop.slot @y pool @dev_arena offset 401408 size 512 lifetime(0, 8) : !l0uop.buf<128xi32>
  l0uop.slot @h1 pool @dev_arena offset 401920 size 131072 lifetime(1, 12) : !l0uop.buf<128x256xf32>
  l0uop.slot @n1 pool @dev_arena offset 532992 size 131072 lifetime(2, 12) : !l0uop.buf<128x256xf32>
  l0uop.slot @a1 pool @dev_arena offset 664064 size 131072 lifetime(3, 11) : !l0uop.buf<128x256xf32>
  l0uop.slot @h2 pool @dev_arena offset 795136 size 131072 lifetime(4, 10) : !l0uop.buf<128x256xf32>
  l0uop.slot @n2 pool @dev_arena offset 926208 size 131072 lifetime(5, 10) : !l0uop.buf<128x256xf32>
  l0uop.slot @a2 pool @dev_arena offset 1057280 size 131072 lifetime(6, 9) : !l0uop.buf<128x256xf32>
  l0uop.slot @logits pool @dev_arena offset 1188352 size 5120 lifetime(7, 8) : !l0uop.buf<128x10xf32>
  l0uop.slot @loss pool @dev_arena offset 1193472 size 4 lifetime(8, 14) : !l0uop.buf<1xf32>
  l0uop.slot @dlogits pool @dev_arena offset 1193728 size 5120 lifetime(8, 9) : !l0uop.buf<128x10xf32>
  l0uop.slot @da2 pool @dev_arena offset 1198848 size 131072 lifetime(9, 10) : !l0uop.buf<128x256xf32>
  l0uop.slot @dh2 pool @dev_arena offset 1329920 size 131072 lifetime(10, 11) : !l0uop.buf<128x256xf32>
  // Bump allocation reuses bytes whose slot is dead: @da1 takes @h2's
  // bytes (h2 last used at tick 10), @dh1 takes @n2's.
  l0uop.slot @da1 pool @dev_arena offset 795136 size 131072 lifetime(11, 12) : !l0uop.buf<128x256xf32>
  l0uop.slot @dh1 pool @dev_arena offset 926208 size 131072 lifetime(12, 13) : !l0uop.buf<128x256xf32>

  //===--------------------------------------------------------------------===//
  // Kernel plan
  //===--------------------------------------------------------------------===//

  // h1 = x . w1 + b1: one thread per output element (128 blocks of 256).
  // The 784-long dot product runs unrolled by two: each iteration fuses its
  // two products with MULACC, and the REDUCE folds the 392 partial sums
  // into the bias.
  l0uop.kernel @fc1_fwd inputs(%x = @x : !l0uop.buf<128x784xf32>, %w = @w1 : !l0uop.buf<784x256xf32>, %b = @b1 : !l0uop.buf<256xf32>)
      outputs(%h = @h1 : !l0uop.buf<128x256xf32>)
      grid(128, 1, 1) block(256, 1, 1) shared_mem 0 {
    %i = l0uop.range 0 to 128 over group_x : index
    %j = l0uop.range 0 to 256 over local_x : index
    %pb = l0uop.index %b[%j] : !l0uop.buf<256xf32>
    %bias = l0uop.load %pb : f32
    %one = l0uop.const 1 : index
    %k = l0uop.range 0 to 784 step 2 : index
    %k1 = l0uop.add %k, %one : index
    %px0 = l0uop.index %x[%i, %k] : !l0uop.buf<128x784xf32>
    %x0 = l0uop.load %px0 : f32
    %pw0 = l0uop.index %w[%k, %j] : !l0uop.buf<784x256xf32>
    %w0 = l0uop.load %pw0 : f32
    %px1 = l0uop.index %x[%i, %k1] : !l0uop.buf<128x784xf32>
    %x1 = l0uop.load %px1 : f32
    %pw1 = l0uop.index %w[%k1, %j] : !l0uop.buf<784x256xf32>
    %w1v = l0uop.load %pw1 : f32
    %p1 = l0uop.mul %x1, %w1v : f32
    %pair = l0uop.mulacc %x0, %w0, %p1 : f32
    l0uop.end %k
    %acc = l0uop.reduce add %pair over %k init %bias : f32
    %ph = l0uop.index %h[%i, %j] : !l0uop.buf<128x256xf32>
    l0uop.store %ph, %acc : f32
    l0uop.end %j
    l0uop.end %i
  }

  // n1 = layer_norm(h1) * g1 + be1 over each row's 256 features, one thread
  // per row: a pass for the mean, one for the variance, one to normalise.
  l0uop.kernel @ln1_fwd inputs(%h = @h1 : !l0uop.buf<128x256xf32>, %g = @g1 : !l0uop.buf<256xf32>, %be = @be1 : !l0uop.buf<256xf32>)
      outputs(%n = @n1 : !l0uop.buf<128x256xf32>)
      grid(1, 1, 1) block(128, 1, 1) shared_mem 0 {
    %i = l0uop.range 0 to 128 over local_x : index
    %zero = l0uop.const 0.0 : f32
    %inv_n = l0uop.const 3.906250e-03 : f32
    %eps = l0uop.const 1.000000e-05 : f32
    %j = l0uop.range 0 to 256 : index
    %ph = l0uop.index %h[%i, %j] : !l0uop.buf<128x256xf32>
    %v = l0uop.load %ph : f32
    l0uop.end %j
    %sum = l0uop.reduce add %v over %j init %zero : f32
    %mean = l0uop.mul %sum, %inv_n : f32
    %neg_mean = l0uop.neg %mean : f32
    %j2 = l0uop.range 0 to 256 : index
    %ph2 = l0uop.index %h[%i, %j2] : !l0uop.buf<128x256xf32>
    %v2 = l0uop.load %ph2 : f32
    %d = l0uop.add %v2, %neg_mean : f32
    %d2 = l0uop.mul %d, %d : f32
    l0uop.end %j2
    %ss = l0uop.reduce add %d2 over %j2 init %zero : f32
    %var = l0uop.mul %ss, %inv_n : f32
    %var_eps = l0uop.add %var, %eps : f32
    %std = l0uop.sqrt %var_eps : f32
    %rstd = l0uop.reciprocal %std : f32
    %j3 = l0uop.range 0 to 256 : index
    %ph3 = l0uop.index %h[%i, %j3] : !l0uop.buf<128x256xf32>
    %v3 = l0uop.load %ph3 : f32
    %pg = l0uop.index %g[%j3] : !l0uop.buf<256xf32>
    %gv = l0uop.load %pg : f32
    %pbe = l0uop.index %be[%j3] : !l0uop.buf<256xf32>
    %bev = l0uop.load %pbe : f32
    %c = l0uop.add %v3, %neg_mean : f32
    %xhat = l0uop.mul %c, %rstd : f32
    %out = l0uop.mulacc %xhat, %gv, %bev : f32
    %pn = l0uop.index %n[%i, %j3] : !l0uop.buf<128x256xf32>
    l0uop.store %pn, %out : f32
    l0uop.end %j3
    l0uop.end %i
  }

  // a1 = gelu(n1), elementwise, tanh form through EXP2:
  //   gelu(v) = v * sigmoid(2 * sqrt(2/pi) * (v + 0.044715 v^3))
  //   sigmoid(z) = 1 / (1 + 2^(-z * log2(e)))
  l0uop.kernel @gelu1 inputs(%n = @n1 : !l0uop.buf<128x256xf32>)
      outputs(%a = @a1 : !l0uop.buf<128x256xf32>)
      grid(128, 1, 1) block(256, 1, 1) shared_mem 0 {
    %i = l0uop.range 0 to 128 over group_x : index
    %j = l0uop.range 0 to 256 over local_x : index
    %pn = l0uop.index %n[%i, %j] : !l0uop.buf<128x256xf32>
    %v = l0uop.load %pn : f32
    %c_cube = l0uop.const 4.471500e-02 : f32
    %c_scale = l0uop.const 2.302208 : f32
    %one = l0uop.const 1.0 : f32
    %v2 = l0uop.mul %v, %v : f32
    %v3 = l0uop.mul %v2, %v : f32
    %inner = l0uop.mulacc %v3, %c_cube, %v : f32
    %z = l0uop.mul %inner, %c_scale : f32
    %nz = l0uop.neg %z : f32
    %e = l0uop.exp2 %nz : f32
    %den = l0uop.add %e, %one : f32
    %sig = l0uop.reciprocal %den : f32
    %g = l0uop.mul %v, %sig : f32
    %pa = l0uop.index %a[%i, %j] : !l0uop.buf<128x256xf32>
    l0uop.store %pa, %g : f32
    l0uop.end %j
    l0uop.end %i
  }

  // gr_w1 = x^T . dh1: a reduction over the batch for each of the 784 x 256
  // weights (784 blocks of 256 threads).
  l0uop.kernel @fc1_grad_w inputs(%x = @x : !l0uop.buf<128x784xf32>, %dh = @dh1 : !l0uop.buf<128x256xf32>)
      outputs(%gw = @gr_w1 : !l0uop.buf<784x256xf32>)
      grid(784, 1, 1) block(256, 1, 1) shared_mem 0 {
    %k = l0uop.range 0 to 784 over group_x : index
    %j = l0uop.range 0 to 256 over local_x : index
    %zero = l0uop.const 0.0 : f32
    %b = l0uop.range 0 to 128 : index
    %px = l0uop.index %x[%b, %k] : !l0uop.buf<128x784xf32>
    %xv = l0uop.load %px : f32
    %pd = l0uop.index %dh[%b, %j] : !l0uop.buf<128x256xf32>
    %dv = l0uop.load %pd : f32
    %prod = l0uop.mul %xv, %dv : f32
    l0uop.end %b
    %sum = l0uop.reduce add %prod over %b init %zero : f32
    %pg = l0uop.index %gw[%k, %j] : !l0uop.buf<784x256xf32>
    l0uop.store %pg, %sum : f32
    l0uop.end %j
    l0uop.end %k
  }

  // Adam on w1 (beta1 0.9, beta2 0.999, eps 1e-8, lr 3e-4); the warmup and
  // cosine schedule and the bias corrections scale lr per step, which the
  // emission passes in as a scalar slot -- constant here.
  //   m = beta1 m + (1 - beta1) g;  v = beta2 v + (1 - beta2) g^2
  //   w = w - lr m / (sqrt(v) + eps)
  l0uop.kernel @adam_w1 inputs(%gw = @gr_w1 : !l0uop.buf<784x256xf32>)
      outputs(%w = @w1 : !l0uop.buf<784x256xf32>, %m = @m_w1 : !l0uop.buf<784x256xf32>, %v = @v_w1 : !l0uop.buf<784x256xf32>)
      grid(784, 1, 1) block(256, 1, 1) shared_mem 0 {
    %r = l0uop.range 0 to 784 over group_x : index
    %c = l0uop.range 0 to 256 over local_x : index
    %beta1 = l0uop.const 0.9 : f32
    %one_m_beta1 = l0uop.const 0.1 : f32
    %beta2 = l0uop.const 0.999 : f32
    %one_m_beta2 = l0uop.const 1.000000e-03 : f32
    %eps = l0uop.const 1.000000e-08 : f32
    %neg_lr = l0uop.const -3.000000e-04 : f32
    %pg = l0uop.index %gw[%r, %c] : !l0uop.buf<784x256xf32>
    %g = l0uop.load %pg : f32
    %pm = l0uop.index %m[%r, %c] : !l0uop.buf<784x256xf32>
    %m0 = l0uop.load %pm : f32
    %pv = l0uop.index %v[%r, %c] : !l0uop.buf<784x256xf32>
    %v0 = l0uop.load %pv : f32
    %gs = l0uop.mul %g, %one_m_beta1 : f32
    %m1 = l0uop.mulacc %m0, %beta1, %gs : f32
    %g2 = l0uop.mul %g, %g : f32
    %g2s = l0uop.mul %g2, %one_m_beta2 : f32
    %v1 = l0uop.mulacc %v0, %beta2, %g2s : f32
    %root = l0uop.sqrt %v1 : f32
    %den = l0uop.add %root, %eps : f32
    %inv = l0uop.reciprocal %den : f32
    %step = l0uop.mul %m1, %inv : f32
    %pw = l0uop.index %w[%r, %c] : !l0uop.buf<784x256xf32>
    %w0 = l0uop.load %pw : f32
    %w1 = l0uop.mulacc %step, %neg_lr, %w0 : f32
    l0uop.store %pm, %m1 : f32
    l0uop.store %pv, %v1 : f32
    l0uop.store %pw, %w1 : f32
    l0uop.end %c
    l0uop.end %r
  }

  //===--------------------------------------------------------------------===//
  // Transfer plan
  //===--------------------------------------------------------------------===//

  l0uop.transfer @tx_x @x_stage -> @x h2d bytes 401408
  l0uop.transfer @tx_y @y_stage -> @y h2d bytes 512

  //===--------------------------------------------------------------------===//
  // Stream and sync plans
  //===--------------------------------------------------------------------===//

  // pipeline_depth 2: step N on @stream_0, step N+1 on @stream_1. Step N's
  // Adam update is recorded and step N+1 waits for it before its first
  // launch (the spec's stream inference example): the actor is the fence.
  l0uop.stream @stream_0 [@tx_x, @tx_y, @fc1_fwd, @ln1_fwd, @gelu1, @fc1_grad_w, @adam_w1]
  l0uop.stream @stream_1 [@tx_x, @tx_y, @fc1_fwd, @ln1_fwd, @gelu1, @fc1_grad_w, @adam_w1]
  l0uop.event @step_done
  l0uop.record @step_done after @adam_w1 on @stream_0
  l0uop.wait @step_done before @tx_x on @stream_1

  //===--------------------------------------------------------------------===//
  // Init plan
  //===--------------------------------------------------------------------===//

  l0uop.init decode_idx @train_images path "train-images-idx3-ubyte"
  l0uop.init decode_idx @train_labels path "train-labels-idx1-ubyte"
  l0uop.init kaiming @w1 seed 1
  l0uop.init kaiming @w2 seed 2
  l0uop.init kaiming @w3 seed 3
  l0uop.init zeros @b1
  l0uop.init zeros @b2
  l0uop.init zeros @b3
  l0uop.init ones @g1
  l0uop.init ones @g2
  l0uop.init zeros @be1
  l0uop.init zeros @be2
  l0uop.init zeros @m_w1
  l0uop.init zeros @m_b1
  l0uop.init zeros @m_g1
  l0uop.init zeros @m_be1
  l0uop.init zeros @m_w2
  l0uop.init zeros @m_b2
  l0uop.init zeros @m_g2
  l0uop.init zeros @m_be2
  l0uop.init zeros @m_w3
  l0uop.init zeros @m_b3
  l0uop.init zeros @v_w1
  l0uop.init zeros @v_b1
  l0uop.init zeros @v_g1
  l0uop.init zeros @v_be1
  l0uop.init zeros @v_w2
  l0uop.init zeros @v_b2
  l0uop.init zeros @v_g2
  l0uop.init zeros @v_be2
  l0uop.init zeros @v_w3
  l0uop.init zeros @v_b3

  //===--------------------------------------------------------------------===//
  // Control blocks
  //===--------------------------------------------------------------------===//

  // The sampler (epoch_shuffle) pushes one descriptor per batch: the
  // batch's index in the epoch's permutation. Launch descriptors go to the
  // runtime's gpu_dispatch: bit 32 picks the stream, the low bits the batch.
  l0ctl.region @batch_queue size 64 access ro queue 8
  l0ctl.region @launch_queue size 64 access wo queue 8
  // [0, 8): steps dispatched so far; [8, 16): the shuffle seed.
  l0ctl.region @step_state size 16 access rw

  l0ctl.program @actor_dispatch {
    %batch = l0ctl.queue_pop @batch_queue : i64
    %step = l0ctl.load @step_state[0] : i64
    %one = l0ctl.const 1 : i64
    %next = l0ctl.arith add %step, %one : i64
    l0ctl.store @step_state[0], %next : i64
    // pipeline_depth 2: even steps on stream_0, odd steps on stream_1.
    %parity = l0ctl.arith and %step, %one : i64
    %c32 = l0ctl.const 32 : i64
    %tag = l0ctl.arith shl %parity, %c32 : i64
    %launch = l0ctl.arith or %tag, %batch : i64
    // 60000 / 128 = 468 full batches per epoch (drop_last).
    %per_epoch = l0ctl.const 468 : i64
    %in_epoch = l0ctl.cmp lt %batch, %per_epoch : i64
    l0ctl.branch %in_epoch, ^dispatch, ^epoch_end
  ^dispatch:
    l0ctl.queue_push @launch_queue, %launch : i64
    l0ctl.terminate
  ^epoch_end:
    // A new epoch: derive the next permutation's seed from the step count.
    %seed = l0ctl.hash %next : i64
    l0ctl.store @step_state[8], %seed : i64
    l0ctl.terminate
  }
}
