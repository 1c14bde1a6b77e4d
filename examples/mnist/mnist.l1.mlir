// Fashion-MNIST at L1: the spec's "Trace - MNIST at L1", completed.
//
// The L2 method it places (spec, "Trace - MNIST at L2"):
//   sample:   epoch_shuffle(batch: 128)
//   infer:    linear(784, 256), norm(layer), gelu,
//             linear(256, 256), norm(layer), gelu,
//             linear(256, 10), softmax
//   loss:     cross-entropy + 1e-4 * L1(params)          (L3 objective)
//   backward: autodiff(mode: reverse)  -> written out below, op by op
//   update:   schedule(warmup: 1000, decay: cosine, inner: adam(lr: 3e-4))
//             -> the GradUpdate handler
//
// Dataflow of one step:
//   load_data (cpu_0: read a shuffled batch from ssd_0 into ram_0)
//     -> transfer_to_gpu (cpu_0: DMA ram_0 -> gpu_0)
//     -> forward_backward (gpu_0: reads @model_state::@weights; returns the
//        loss, the gradient of every parameter, and the batch's argmax hits)
//     -> transfer_grads (cpu_0: loss and correct to ram_0 and reported;
//        gradients sent to @model_state::@GradUpdate, which runs Adam on gpu_0)
// The reader (forward_backward) precedes the only message to the writer
// (GradUpdate) in the dataflow, and the actor is listed in the schedule:
// at pipeline_depth 2 it fences step N's update before step N+1's read (L1.4).
//
// Math notes (the later finite-difference check relies on them):
// * Layer norm over the 256 features of a row, biased variance, eps 1e-5:
//   n = (z - mean) / sqrt(var + eps) * g + be.
// * GELU is the tanh form: 0.5 n (1 + tanh(sqrt(2/pi) (n + 0.044715 n^3))).
// * Cross-entropy is the batch mean of -log softmax(logits)[label].
// * The L1 term covers every parameter (weights, biases, norm gains and
//   shifts); its gradient is 1e-4 * sign(p) (0 at p = 0, a subgradient).
// * correct counts the rows whose label's logit equals the row max (an
//   argmax hit; ties count as hits); a label outside [0, 10) counts 0.
// * Adam: beta1 0.9, beta2 0.999, eps 1e-8, bias-corrected; learning rate
//   3e-4 * min(t/1000, 1) * 0.5 (1 + cos(pi * min(max(t-1000, 0)/3680, 1)));
//   the cosine reaches 0 at step 4680 = 10 epochs of 468 batches.

l1.system @single_gpu {
  l1.node @ssd_0 storage
  l1.node @ram_0 memory {capacity = "32GB"}
  l1.node @cpu_0 compute {isa = "x86_64", cores = 8}
  l1.node @gpu_0 compute {isa = "cuda", vram = "24GB", sm = 84}
  l1.edge @ssd_0 -> @ram_0 bandwidth "2GB/s"
  l1.edge @ram_0 <-> @cpu_0 bandwidth "50GB/s"
  l1.edge @cpu_0 <-> @gpu_0 bandwidth "32GB/s"
}

l1.data @mnist {
  l1.field @images : tensor<28x28xui8> at @ssd_0
      path "/usr/share/datasets/fashion-mnist/train-images-idx3-ubyte.gz" format idx
  l1.field @labels : tensor<1xui8> at @ssd_0
      path "/usr/share/datasets/fashion-mnist/train-labels-idx1-ubyte.gz" format idx
}

l1.actor @model_state on @gpu_0 {
  // Parameters of the L2 model.
  l1.state @w1 : tensor<784x256xf32> init kaiming
  l1.state @b1 : tensor<256xf32> init zeros
  l1.state @g1 : tensor<256xf32> init ones
  l1.state @be1 : tensor<256xf32> init zeros
  l1.state @w2 : tensor<256x256xf32> init kaiming
  l1.state @b2 : tensor<256xf32> init zeros
  l1.state @g2 : tensor<256xf32> init ones
  l1.state @be2 : tensor<256xf32> init zeros
  l1.state @w3 : tensor<256x10xf32> init kaiming
  l1.state @b3 : tensor<10xf32> init zeros
  // Adam moments.
  l1.state @m_w1 : tensor<784x256xf32> init zeros
  l1.state @v_w1 : tensor<784x256xf32> init zeros
  l1.state @m_b1 : tensor<256xf32> init zeros
  l1.state @v_b1 : tensor<256xf32> init zeros
  l1.state @m_g1 : tensor<256xf32> init zeros
  l1.state @v_g1 : tensor<256xf32> init zeros
  l1.state @m_be1 : tensor<256xf32> init zeros
  l1.state @v_be1 : tensor<256xf32> init zeros
  l1.state @m_w2 : tensor<256x256xf32> init zeros
  l1.state @v_w2 : tensor<256x256xf32> init zeros
  l1.state @m_b2 : tensor<256xf32> init zeros
  l1.state @v_b2 : tensor<256xf32> init zeros
  l1.state @m_g2 : tensor<256xf32> init zeros
  l1.state @v_g2 : tensor<256xf32> init zeros
  l1.state @m_be2 : tensor<256xf32> init zeros
  l1.state @v_be2 : tensor<256xf32> init zeros
  l1.state @m_w3 : tensor<256x10xf32> init zeros
  l1.state @v_w3 : tensor<256x10xf32> init zeros
  l1.state @m_b3 : tensor<10xf32> init zeros
  l1.state @v_b3 : tensor<10xf32> init zeros
  // Updates applied so far.
  l1.state @step : tensor<f32> init zeros

  l1.window @weights [@w1, @b1, @g1, @be1, @w2, @b2, @g2, @be2, @w3, @b3] readers [@forward_backward]

  l1.handler @GradUpdate(%g_w1: tensor<784x256xf32>,
      %g_b1: tensor<256xf32>,
      %g_g1: tensor<256xf32>,
      %g_be1: tensor<256xf32>,
      %g_w2: tensor<256x256xf32>,
      %g_b2: tensor<256xf32>,
      %g_g2: tensor<256xf32>,
      %g_be2: tensor<256xf32>,
      %g_w3: tensor<256x10xf32>,
      %g_b3: tensor<10xf32>) {
    // step t <- t + 1
    %t_prev = l1.state_read @step : tensor<f32>
    %one = l1.const 1.0 : tensor<f32>
    %t = l1.add %t_prev, %one : tensor<f32>, tensor<f32> -> tensor<f32>
    l1.state_write @step, %t : tensor<f32>
    // lr = 3e-4 * min(t / 1000, 1) * 0.5 (1 + cos(pi * min(max(t - 1000, 0) / 3680, 1)))
    %inv_warmup = l1.const 0.001 : tensor<f32>
    %warm_frac = l1.scale %t, %inv_warmup : tensor<f32>, tensor<f32> -> tensor<f32>
    %warm = l1.min %warm_frac, %one : tensor<f32>, tensor<f32> -> tensor<f32>
    %warmup = l1.const 1000.0 : tensor<f32>
    %after_warmup = l1.sub %t, %warmup : tensor<f32>, tensor<f32> -> tensor<f32>
    %zero = l1.const 0.0 : tensor<f32>
    %after_pos = l1.max %after_warmup, %zero : tensor<f32>, tensor<f32> -> tensor<f32>
    %inv_decay_steps = l1.const 0.0002717391304347826 : tensor<f32>
    %progress_raw = l1.scale %after_pos, %inv_decay_steps : tensor<f32>, tensor<f32> -> tensor<f32>
    %progress = l1.min %progress_raw, %one : tensor<f32>, tensor<f32> -> tensor<f32>
    %pi = l1.const 3.141592653589793 : tensor<f32>
    %angle = l1.mul %progress, %pi : tensor<f32>, tensor<f32> -> tensor<f32>
    %cosine = l1.cos %angle : tensor<f32> -> tensor<f32>
    %one_plus_cos = l1.add %one, %cosine : tensor<f32>, tensor<f32> -> tensor<f32>
    %half = l1.const 0.5 : tensor<f32>
    %decay = l1.mul %one_plus_cos, %half : tensor<f32>, tensor<f32> -> tensor<f32>
    %base_lr = l1.const 0.0003 : tensor<f32>
    %lr_warm = l1.mul %base_lr, %warm : tensor<f32>, tensor<f32> -> tensor<f32>
    %lr = l1.mul %lr_warm, %decay : tensor<f32>, tensor<f32> -> tensor<f32>
    // Adam bias corrections: 1 - beta^t = 1 - exp(t ln beta)
    %ln_beta1 = l1.const -0.10536051565782628 : tensor<f32>
    %ln_beta2 = l1.const -0.0010005003335835344 : tensor<f32>
    %tlnb1 = l1.mul %t, %ln_beta1 : tensor<f32>, tensor<f32> -> tensor<f32>
    %beta1_t = l1.exp %tlnb1 : tensor<f32> -> tensor<f32>
    %tlnb2 = l1.mul %t, %ln_beta2 : tensor<f32>, tensor<f32> -> tensor<f32>
    %beta2_t = l1.exp %tlnb2 : tensor<f32> -> tensor<f32>
    %bc1 = l1.sub %one, %beta1_t : tensor<f32>, tensor<f32> -> tensor<f32>
    %bc2 = l1.sub %one, %beta2_t : tensor<f32>, tensor<f32> -> tensor<f32>
    %step_size = l1.div %lr, %bc1 : tensor<f32>, tensor<f32> -> tensor<f32>
    %inv_bc2 = l1.reciprocal %bc2 : tensor<f32> -> tensor<f32>
    %beta1 = l1.const 0.9 : tensor<f32>
    %one_minus_beta1 = l1.const 0.1 : tensor<f32>
    %beta2 = l1.const 0.999 : tensor<f32>
    %one_minus_beta2 = l1.const 0.001 : tensor<f32>
    %adam_eps = l1.const 1.0e-08 : tensor<784x256xf32>
    // Adam on w1
    %m_w1 = l1.state_read @m_w1 : tensor<784x256xf32>
    %v_w1 = l1.state_read @v_w1 : tensor<784x256xf32>
    %w1 = l1.state_read @w1 : tensor<784x256xf32>
    %mdecay_w1 = l1.scale %m_w1, %beta1 : tensor<784x256xf32>, tensor<f32> -> tensor<784x256xf32>
    %mgrad_w1 = l1.scale %g_w1, %one_minus_beta1 : tensor<784x256xf32>, tensor<f32> -> tensor<784x256xf32>
    %mnew_w1 = l1.add %mdecay_w1, %mgrad_w1 : tensor<784x256xf32>, tensor<784x256xf32> -> tensor<784x256xf32>
    %gsq_w1 = l1.mul %g_w1, %g_w1 : tensor<784x256xf32>, tensor<784x256xf32> -> tensor<784x256xf32>
    %vdecay_w1 = l1.scale %v_w1, %beta2 : tensor<784x256xf32>, tensor<f32> -> tensor<784x256xf32>
    %vgrad_w1 = l1.scale %gsq_w1, %one_minus_beta2 : tensor<784x256xf32>, tensor<f32> -> tensor<784x256xf32>
    %vnew_w1 = l1.add %vdecay_w1, %vgrad_w1 : tensor<784x256xf32>, tensor<784x256xf32> -> tensor<784x256xf32>
    %vhat_w1 = l1.scale %vnew_w1, %inv_bc2 : tensor<784x256xf32>, tensor<f32> -> tensor<784x256xf32>
    %vroot_w1 = l1.sqrt %vhat_w1 : tensor<784x256xf32> -> tensor<784x256xf32>
    %denom_w1 = l1.add %vroot_w1, %adam_eps : tensor<784x256xf32>, tensor<784x256xf32> -> tensor<784x256xf32>
    %ratio_w1 = l1.div %mnew_w1, %denom_w1 : tensor<784x256xf32>, tensor<784x256xf32> -> tensor<784x256xf32>
    %update_w1 = l1.scale %ratio_w1, %step_size : tensor<784x256xf32>, tensor<f32> -> tensor<784x256xf32>
    %new_w1 = l1.sub %w1, %update_w1 : tensor<784x256xf32>, tensor<784x256xf32> -> tensor<784x256xf32>
    l1.state_write @m_w1, %mnew_w1 : tensor<784x256xf32>
    l1.state_write @v_w1, %vnew_w1 : tensor<784x256xf32>
    l1.state_write @w1, %new_w1 : tensor<784x256xf32>
    %adam_eps_1 = l1.const 1.0e-08 : tensor<256xf32>
    // Adam on b1
    %m_b1 = l1.state_read @m_b1 : tensor<256xf32>
    %v_b1 = l1.state_read @v_b1 : tensor<256xf32>
    %b1 = l1.state_read @b1 : tensor<256xf32>
    %mdecay_b1 = l1.scale %m_b1, %beta1 : tensor<256xf32>, tensor<f32> -> tensor<256xf32>
    %mgrad_b1 = l1.scale %g_b1, %one_minus_beta1 : tensor<256xf32>, tensor<f32> -> tensor<256xf32>
    %mnew_b1 = l1.add %mdecay_b1, %mgrad_b1 : tensor<256xf32>, tensor<256xf32> -> tensor<256xf32>
    %gsq_b1 = l1.mul %g_b1, %g_b1 : tensor<256xf32>, tensor<256xf32> -> tensor<256xf32>
    %vdecay_b1 = l1.scale %v_b1, %beta2 : tensor<256xf32>, tensor<f32> -> tensor<256xf32>
    %vgrad_b1 = l1.scale %gsq_b1, %one_minus_beta2 : tensor<256xf32>, tensor<f32> -> tensor<256xf32>
    %vnew_b1 = l1.add %vdecay_b1, %vgrad_b1 : tensor<256xf32>, tensor<256xf32> -> tensor<256xf32>
    %vhat_b1 = l1.scale %vnew_b1, %inv_bc2 : tensor<256xf32>, tensor<f32> -> tensor<256xf32>
    %vroot_b1 = l1.sqrt %vhat_b1 : tensor<256xf32> -> tensor<256xf32>
    %denom_b1 = l1.add %vroot_b1, %adam_eps_1 : tensor<256xf32>, tensor<256xf32> -> tensor<256xf32>
    %ratio_b1 = l1.div %mnew_b1, %denom_b1 : tensor<256xf32>, tensor<256xf32> -> tensor<256xf32>
    %update_b1 = l1.scale %ratio_b1, %step_size : tensor<256xf32>, tensor<f32> -> tensor<256xf32>
    %new_b1 = l1.sub %b1, %update_b1 : tensor<256xf32>, tensor<256xf32> -> tensor<256xf32>
    l1.state_write @m_b1, %mnew_b1 : tensor<256xf32>
    l1.state_write @v_b1, %vnew_b1 : tensor<256xf32>
    l1.state_write @b1, %new_b1 : tensor<256xf32>
    // Adam on g1
    %m_g1 = l1.state_read @m_g1 : tensor<256xf32>
    %v_g1 = l1.state_read @v_g1 : tensor<256xf32>
    %g1 = l1.state_read @g1 : tensor<256xf32>
    %mdecay_g1 = l1.scale %m_g1, %beta1 : tensor<256xf32>, tensor<f32> -> tensor<256xf32>
    %mgrad_g1 = l1.scale %g_g1, %one_minus_beta1 : tensor<256xf32>, tensor<f32> -> tensor<256xf32>
    %mnew_g1 = l1.add %mdecay_g1, %mgrad_g1 : tensor<256xf32>, tensor<256xf32> -> tensor<256xf32>
    %gsq_g1 = l1.mul %g_g1, %g_g1 : tensor<256xf32>, tensor<256xf32> -> tensor<256xf32>
    %vdecay_g1 = l1.scale %v_g1, %beta2 : tensor<256xf32>, tensor<f32> -> tensor<256xf32>
    %vgrad_g1 = l1.scale %gsq_g1, %one_minus_beta2 : tensor<256xf32>, tensor<f32> -> tensor<256xf32>
    %vnew_g1 = l1.add %vdecay_g1, %vgrad_g1 : tensor<256xf32>, tensor<256xf32> -> tensor<256xf32>
    %vhat_g1 = l1.scale %vnew_g1, %inv_bc2 : tensor<256xf32>, tensor<f32> -> tensor<256xf32>
    %vroot_g1 = l1.sqrt %vhat_g1 : tensor<256xf32> -> tensor<256xf32>
    %denom_g1 = l1.add %vroot_g1, %adam_eps_1 : tensor<256xf32>, tensor<256xf32> -> tensor<256xf32>
    %ratio_g1 = l1.div %mnew_g1, %denom_g1 : tensor<256xf32>, tensor<256xf32> -> tensor<256xf32>
    %update_g1 = l1.scale %ratio_g1, %step_size : tensor<256xf32>, tensor<f32> -> tensor<256xf32>
    %new_g1 = l1.sub %g1, %update_g1 : tensor<256xf32>, tensor<256xf32> -> tensor<256xf32>
    l1.state_write @m_g1, %mnew_g1 : tensor<256xf32>
    l1.state_write @v_g1, %vnew_g1 : tensor<256xf32>
    l1.state_write @g1, %new_g1 : tensor<256xf32>
    // Adam on be1
    %m_be1 = l1.state_read @m_be1 : tensor<256xf32>
    %v_be1 = l1.state_read @v_be1 : tensor<256xf32>
    %be1 = l1.state_read @be1 : tensor<256xf32>
    %mdecay_be1 = l1.scale %m_be1, %beta1 : tensor<256xf32>, tensor<f32> -> tensor<256xf32>
    %mgrad_be1 = l1.scale %g_be1, %one_minus_beta1 : tensor<256xf32>, tensor<f32> -> tensor<256xf32>
    %mnew_be1 = l1.add %mdecay_be1, %mgrad_be1 : tensor<256xf32>, tensor<256xf32> -> tensor<256xf32>
    %gsq_be1 = l1.mul %g_be1, %g_be1 : tensor<256xf32>, tensor<256xf32> -> tensor<256xf32>
    %vdecay_be1 = l1.scale %v_be1, %beta2 : tensor<256xf32>, tensor<f32> -> tensor<256xf32>
    %vgrad_be1 = l1.scale %gsq_be1, %one_minus_beta2 : tensor<256xf32>, tensor<f32> -> tensor<256xf32>
    %vnew_be1 = l1.add %vdecay_be1, %vgrad_be1 : tensor<256xf32>, tensor<256xf32> -> tensor<256xf32>
    %vhat_be1 = l1.scale %vnew_be1, %inv_bc2 : tensor<256xf32>, tensor<f32> -> tensor<256xf32>
    %vroot_be1 = l1.sqrt %vhat_be1 : tensor<256xf32> -> tensor<256xf32>
    %denom_be1 = l1.add %vroot_be1, %adam_eps_1 : tensor<256xf32>, tensor<256xf32> -> tensor<256xf32>
    %ratio_be1 = l1.div %mnew_be1, %denom_be1 : tensor<256xf32>, tensor<256xf32> -> tensor<256xf32>
    %update_be1 = l1.scale %ratio_be1, %step_size : tensor<256xf32>, tensor<f32> -> tensor<256xf32>
    %new_be1 = l1.sub %be1, %update_be1 : tensor<256xf32>, tensor<256xf32> -> tensor<256xf32>
    l1.state_write @m_be1, %mnew_be1 : tensor<256xf32>
    l1.state_write @v_be1, %vnew_be1 : tensor<256xf32>
    l1.state_write @be1, %new_be1 : tensor<256xf32>
    %adam_eps_2 = l1.const 1.0e-08 : tensor<256x256xf32>
    // Adam on w2
    %m_w2 = l1.state_read @m_w2 : tensor<256x256xf32>
    %v_w2 = l1.state_read @v_w2 : tensor<256x256xf32>
    %w2 = l1.state_read @w2 : tensor<256x256xf32>
    %mdecay_w2 = l1.scale %m_w2, %beta1 : tensor<256x256xf32>, tensor<f32> -> tensor<256x256xf32>
    %mgrad_w2 = l1.scale %g_w2, %one_minus_beta1 : tensor<256x256xf32>, tensor<f32> -> tensor<256x256xf32>
    %mnew_w2 = l1.add %mdecay_w2, %mgrad_w2 : tensor<256x256xf32>, tensor<256x256xf32> -> tensor<256x256xf32>
    %gsq_w2 = l1.mul %g_w2, %g_w2 : tensor<256x256xf32>, tensor<256x256xf32> -> tensor<256x256xf32>
    %vdecay_w2 = l1.scale %v_w2, %beta2 : tensor<256x256xf32>, tensor<f32> -> tensor<256x256xf32>
    %vgrad_w2 = l1.scale %gsq_w2, %one_minus_beta2 : tensor<256x256xf32>, tensor<f32> -> tensor<256x256xf32>
    %vnew_w2 = l1.add %vdecay_w2, %vgrad_w2 : tensor<256x256xf32>, tensor<256x256xf32> -> tensor<256x256xf32>
    %vhat_w2 = l1.scale %vnew_w2, %inv_bc2 : tensor<256x256xf32>, tensor<f32> -> tensor<256x256xf32>
    %vroot_w2 = l1.sqrt %vhat_w2 : tensor<256x256xf32> -> tensor<256x256xf32>
    %denom_w2 = l1.add %vroot_w2, %adam_eps_2 : tensor<256x256xf32>, tensor<256x256xf32> -> tensor<256x256xf32>
    %ratio_w2 = l1.div %mnew_w2, %denom_w2 : tensor<256x256xf32>, tensor<256x256xf32> -> tensor<256x256xf32>
    %update_w2 = l1.scale %ratio_w2, %step_size : tensor<256x256xf32>, tensor<f32> -> tensor<256x256xf32>
    %new_w2 = l1.sub %w2, %update_w2 : tensor<256x256xf32>, tensor<256x256xf32> -> tensor<256x256xf32>
    l1.state_write @m_w2, %mnew_w2 : tensor<256x256xf32>
    l1.state_write @v_w2, %vnew_w2 : tensor<256x256xf32>
    l1.state_write @w2, %new_w2 : tensor<256x256xf32>
    // Adam on b2
    %m_b2 = l1.state_read @m_b2 : tensor<256xf32>
    %v_b2 = l1.state_read @v_b2 : tensor<256xf32>
    %b2 = l1.state_read @b2 : tensor<256xf32>
    %mdecay_b2 = l1.scale %m_b2, %beta1 : tensor<256xf32>, tensor<f32> -> tensor<256xf32>
    %mgrad_b2 = l1.scale %g_b2, %one_minus_beta1 : tensor<256xf32>, tensor<f32> -> tensor<256xf32>
    %mnew_b2 = l1.add %mdecay_b2, %mgrad_b2 : tensor<256xf32>, tensor<256xf32> -> tensor<256xf32>
    %gsq_b2 = l1.mul %g_b2, %g_b2 : tensor<256xf32>, tensor<256xf32> -> tensor<256xf32>
    %vdecay_b2 = l1.scale %v_b2, %beta2 : tensor<256xf32>, tensor<f32> -> tensor<256xf32>
    %vgrad_b2 = l1.scale %gsq_b2, %one_minus_beta2 : tensor<256xf32>, tensor<f32> -> tensor<256xf32>
    %vnew_b2 = l1.add %vdecay_b2, %vgrad_b2 : tensor<256xf32>, tensor<256xf32> -> tensor<256xf32>
    %vhat_b2 = l1.scale %vnew_b2, %inv_bc2 : tensor<256xf32>, tensor<f32> -> tensor<256xf32>
    %vroot_b2 = l1.sqrt %vhat_b2 : tensor<256xf32> -> tensor<256xf32>
    %denom_b2 = l1.add %vroot_b2, %adam_eps_1 : tensor<256xf32>, tensor<256xf32> -> tensor<256xf32>
    %ratio_b2 = l1.div %mnew_b2, %denom_b2 : tensor<256xf32>, tensor<256xf32> -> tensor<256xf32>
    %update_b2 = l1.scale %ratio_b2, %step_size : tensor<256xf32>, tensor<f32> -> tensor<256xf32>
    %new_b2 = l1.sub %b2, %update_b2 : tensor<256xf32>, tensor<256xf32> -> tensor<256xf32>
    l1.state_write @m_b2, %mnew_b2 : tensor<256xf32>
    l1.state_write @v_b2, %vnew_b2 : tensor<256xf32>
    l1.state_write @b2, %new_b2 : tensor<256xf32>
    // Adam on g2
    %m_g2 = l1.state_read @m_g2 : tensor<256xf32>
    %v_g2 = l1.state_read @v_g2 : tensor<256xf32>
    %g2 = l1.state_read @g2 : tensor<256xf32>
    %mdecay_g2 = l1.scale %m_g2, %beta1 : tensor<256xf32>, tensor<f32> -> tensor<256xf32>
    %mgrad_g2 = l1.scale %g_g2, %one_minus_beta1 : tensor<256xf32>, tensor<f32> -> tensor<256xf32>
    %mnew_g2 = l1.add %mdecay_g2, %mgrad_g2 : tensor<256xf32>, tensor<256xf32> -> tensor<256xf32>
    %gsq_g2 = l1.mul %g_g2, %g_g2 : tensor<256xf32>, tensor<256xf32> -> tensor<256xf32>
    %vdecay_g2 = l1.scale %v_g2, %beta2 : tensor<256xf32>, tensor<f32> -> tensor<256xf32>
    %vgrad_g2 = l1.scale %gsq_g2, %one_minus_beta2 : tensor<256xf32>, tensor<f32> -> tensor<256xf32>
    %vnew_g2 = l1.add %vdecay_g2, %vgrad_g2 : tensor<256xf32>, tensor<256xf32> -> tensor<256xf32>
    %vhat_g2 = l1.scale %vnew_g2, %inv_bc2 : tensor<256xf32>, tensor<f32> -> tensor<256xf32>
    %vroot_g2 = l1.sqrt %vhat_g2 : tensor<256xf32> -> tensor<256xf32>
    %denom_g2 = l1.add %vroot_g2, %adam_eps_1 : tensor<256xf32>, tensor<256xf32> -> tensor<256xf32>
    %ratio_g2 = l1.div %mnew_g2, %denom_g2 : tensor<256xf32>, tensor<256xf32> -> tensor<256xf32>
    %update_g2 = l1.scale %ratio_g2, %step_size : tensor<256xf32>, tensor<f32> -> tensor<256xf32>
    %new_g2 = l1.sub %g2, %update_g2 : tensor<256xf32>, tensor<256xf32> -> tensor<256xf32>
    l1.state_write @m_g2, %mnew_g2 : tensor<256xf32>
    l1.state_write @v_g2, %vnew_g2 : tensor<256xf32>
    l1.state_write @g2, %new_g2 : tensor<256xf32>
    // Adam on be2
    %m_be2 = l1.state_read @m_be2 : tensor<256xf32>
    %v_be2 = l1.state_read @v_be2 : tensor<256xf32>
    %be2 = l1.state_read @be2 : tensor<256xf32>
    %mdecay_be2 = l1.scale %m_be2, %beta1 : tensor<256xf32>, tensor<f32> -> tensor<256xf32>
    %mgrad_be2 = l1.scale %g_be2, %one_minus_beta1 : tensor<256xf32>, tensor<f32> -> tensor<256xf32>
    %mnew_be2 = l1.add %mdecay_be2, %mgrad_be2 : tensor<256xf32>, tensor<256xf32> -> tensor<256xf32>
    %gsq_be2 = l1.mul %g_be2, %g_be2 : tensor<256xf32>, tensor<256xf32> -> tensor<256xf32>
    %vdecay_be2 = l1.scale %v_be2, %beta2 : tensor<256xf32>, tensor<f32> -> tensor<256xf32>
    %vgrad_be2 = l1.scale %gsq_be2, %one_minus_beta2 : tensor<256xf32>, tensor<f32> -> tensor<256xf32>
    %vnew_be2 = l1.add %vdecay_be2, %vgrad_be2 : tensor<256xf32>, tensor<256xf32> -> tensor<256xf32>
    %vhat_be2 = l1.scale %vnew_be2, %inv_bc2 : tensor<256xf32>, tensor<f32> -> tensor<256xf32>
    %vroot_be2 = l1.sqrt %vhat_be2 : tensor<256xf32> -> tensor<256xf32>
    %denom_be2 = l1.add %vroot_be2, %adam_eps_1 : tensor<256xf32>, tensor<256xf32> -> tensor<256xf32>
    %ratio_be2 = l1.div %mnew_be2, %denom_be2 : tensor<256xf32>, tensor<256xf32> -> tensor<256xf32>
    %update_be2 = l1.scale %ratio_be2, %step_size : tensor<256xf32>, tensor<f32> -> tensor<256xf32>
    %new_be2 = l1.sub %be2, %update_be2 : tensor<256xf32>, tensor<256xf32> -> tensor<256xf32>
    l1.state_write @m_be2, %mnew_be2 : tensor<256xf32>
    l1.state_write @v_be2, %vnew_be2 : tensor<256xf32>
    l1.state_write @be2, %new_be2 : tensor<256xf32>
    %adam_eps_3 = l1.const 1.0e-08 : tensor<256x10xf32>
    // Adam on w3
    %m_w3 = l1.state_read @m_w3 : tensor<256x10xf32>
    %v_w3 = l1.state_read @v_w3 : tensor<256x10xf32>
    %w3 = l1.state_read @w3 : tensor<256x10xf32>
    %mdecay_w3 = l1.scale %m_w3, %beta1 : tensor<256x10xf32>, tensor<f32> -> tensor<256x10xf32>
    %mgrad_w3 = l1.scale %g_w3, %one_minus_beta1 : tensor<256x10xf32>, tensor<f32> -> tensor<256x10xf32>
    %mnew_w3 = l1.add %mdecay_w3, %mgrad_w3 : tensor<256x10xf32>, tensor<256x10xf32> -> tensor<256x10xf32>
    %gsq_w3 = l1.mul %g_w3, %g_w3 : tensor<256x10xf32>, tensor<256x10xf32> -> tensor<256x10xf32>
    %vdecay_w3 = l1.scale %v_w3, %beta2 : tensor<256x10xf32>, tensor<f32> -> tensor<256x10xf32>
    %vgrad_w3 = l1.scale %gsq_w3, %one_minus_beta2 : tensor<256x10xf32>, tensor<f32> -> tensor<256x10xf32>
    %vnew_w3 = l1.add %vdecay_w3, %vgrad_w3 : tensor<256x10xf32>, tensor<256x10xf32> -> tensor<256x10xf32>
    %vhat_w3 = l1.scale %vnew_w3, %inv_bc2 : tensor<256x10xf32>, tensor<f32> -> tensor<256x10xf32>
    %vroot_w3 = l1.sqrt %vhat_w3 : tensor<256x10xf32> -> tensor<256x10xf32>
    %denom_w3 = l1.add %vroot_w3, %adam_eps_3 : tensor<256x10xf32>, tensor<256x10xf32> -> tensor<256x10xf32>
    %ratio_w3 = l1.div %mnew_w3, %denom_w3 : tensor<256x10xf32>, tensor<256x10xf32> -> tensor<256x10xf32>
    %update_w3 = l1.scale %ratio_w3, %step_size : tensor<256x10xf32>, tensor<f32> -> tensor<256x10xf32>
    %new_w3 = l1.sub %w3, %update_w3 : tensor<256x10xf32>, tensor<256x10xf32> -> tensor<256x10xf32>
    l1.state_write @m_w3, %mnew_w3 : tensor<256x10xf32>
    l1.state_write @v_w3, %vnew_w3 : tensor<256x10xf32>
    l1.state_write @w3, %new_w3 : tensor<256x10xf32>
    %adam_eps_4 = l1.const 1.0e-08 : tensor<10xf32>
    // Adam on b3
    %m_b3 = l1.state_read @m_b3 : tensor<10xf32>
    %v_b3 = l1.state_read @v_b3 : tensor<10xf32>
    %b3 = l1.state_read @b3 : tensor<10xf32>
    %mdecay_b3 = l1.scale %m_b3, %beta1 : tensor<10xf32>, tensor<f32> -> tensor<10xf32>
    %mgrad_b3 = l1.scale %g_b3, %one_minus_beta1 : tensor<10xf32>, tensor<f32> -> tensor<10xf32>
    %mnew_b3 = l1.add %mdecay_b3, %mgrad_b3 : tensor<10xf32>, tensor<10xf32> -> tensor<10xf32>
    %gsq_b3 = l1.mul %g_b3, %g_b3 : tensor<10xf32>, tensor<10xf32> -> tensor<10xf32>
    %vdecay_b3 = l1.scale %v_b3, %beta2 : tensor<10xf32>, tensor<f32> -> tensor<10xf32>
    %vgrad_b3 = l1.scale %gsq_b3, %one_minus_beta2 : tensor<10xf32>, tensor<f32> -> tensor<10xf32>
    %vnew_b3 = l1.add %vdecay_b3, %vgrad_b3 : tensor<10xf32>, tensor<10xf32> -> tensor<10xf32>
    %vhat_b3 = l1.scale %vnew_b3, %inv_bc2 : tensor<10xf32>, tensor<f32> -> tensor<10xf32>
    %vroot_b3 = l1.sqrt %vhat_b3 : tensor<10xf32> -> tensor<10xf32>
    %denom_b3 = l1.add %vroot_b3, %adam_eps_4 : tensor<10xf32>, tensor<10xf32> -> tensor<10xf32>
    %ratio_b3 = l1.div %mnew_b3, %denom_b3 : tensor<10xf32>, tensor<10xf32> -> tensor<10xf32>
    %update_b3 = l1.scale %ratio_b3, %step_size : tensor<10xf32>, tensor<f32> -> tensor<10xf32>
    %new_b3 = l1.sub %b3, %update_b3 : tensor<10xf32>, tensor<10xf32> -> tensor<10xf32>
    l1.state_write @m_b3, %mnew_b3 : tensor<10xf32>
    l1.state_write @v_b3, %vnew_b3 : tensor<10xf32>
    l1.state_write @b3, %new_b3 : tensor<10xf32>
    l1.return
  }
}

// epoch_shuffle(batch: 128): a fresh permutation per epoch; the last
// partial batch is dropped.
l1.stage @load_data on @cpu_0 process() {
  %images, %labels = l1.read_batch @mnist [@images, @labels] batch 128 shuffle drop_last seed 0 : !l1.buf<@ram_0, tensor<128x28x28xui8>>, !l1.buf<@ram_0, tensor<128x1xui8>>
  l1.forward @transfer_to_gpu(%images, %labels) : !l1.buf<@ram_0, tensor<128x28x28xui8>>, !l1.buf<@ram_0, tensor<128x1xui8>>
}

l1.stage @transfer_to_gpu on @cpu_0 process(%images: !l1.buf<@ram_0, tensor<128x28x28xui8>>, %labels: !l1.buf<@ram_0, tensor<128x1xui8>>) {
  %dev_images = l1.transfer %images : !l1.buf<@ram_0, tensor<128x28x28xui8>> -> !l1.buf<@gpu_0, tensor<128x28x28xui8>>
  %dev_labels = l1.transfer %labels : !l1.buf<@ram_0, tensor<128x1xui8>> -> !l1.buf<@gpu_0, tensor<128x1xui8>>
  l1.forward @forward_backward(%dev_images, %dev_labels) : !l1.buf<@gpu_0, tensor<128x28x28xui8>>, !l1.buf<@gpu_0, tensor<128x1xui8>>
}

l1.tensor_graph @forward_backward on @gpu_0 reads [@model_state::@weights] then @transfer_grads
    compute(%x: tensor<128x28x28xui8>, %y: tensor<128x1xui8>) {
  // Parameters, read through the window.
  %w1 = l1.window_read @model_state::@weights[@w1] : tensor<784x256xf32>
  %b1 = l1.window_read @model_state::@weights[@b1] : tensor<256xf32>
  %g1 = l1.window_read @model_state::@weights[@g1] : tensor<256xf32>
  %be1 = l1.window_read @model_state::@weights[@be1] : tensor<256xf32>
  %w2 = l1.window_read @model_state::@weights[@w2] : tensor<256x256xf32>
  %b2 = l1.window_read @model_state::@weights[@b2] : tensor<256xf32>
  %g2 = l1.window_read @model_state::@weights[@g2] : tensor<256xf32>
  %be2 = l1.window_read @model_state::@weights[@be2] : tensor<256xf32>
  %w3 = l1.window_read @model_state::@weights[@w3] : tensor<256x10xf32>
  %b3 = l1.window_read @model_state::@weights[@b3] : tensor<10xf32>
  // Inputs: pixels to [0, 1], labels to one-hot rows.
  %xf = l1.cast %x : tensor<128x28x28xui8> -> tensor<128x28x28xf32>
  %inv255 = l1.const 0.00392156862745098 : tensor<f32>
  %xs = l1.scale %xf, %inv255 : tensor<128x28x28xf32>, tensor<f32> -> tensor<128x28x28xf32>
  %x0 = l1.reshape %xs : tensor<128x28x28xf32> -> tensor<128x784xf32>
  %labels = l1.reshape %y : tensor<128x1xui8> -> tensor<128xui8>
  %onehot = l1.one_hot %labels classes 10 : tensor<128xui8> -> tensor<128x10xf32>
  %inv_h = l1.const 0.00390625 : tensor<f32>
  %ln_eps = l1.const 1.0e-05 : tensor<128xf32>
  %half = l1.const 0.5 : tensor<f32>
  %ones_bh = l1.const 1.0 : tensor<128x256xf32>
  %gelu_k = l1.const 0.7978845608028654 : tensor<f32>
  %gelu_c = l1.const 0.044715 : tensor<f32>
  %gelu_3c = l1.const 0.134145 : tensor<f32>
  // Forward: linear(784, 256), norm(layer), gelu.
  %mm1 = l1.matmul %x0, %w1 : tensor<128x784xf32>, tensor<784x256xf32> -> tensor<128x256xf32>
  %bias1 = l1.broadcast %b1 : tensor<256xf32> -> tensor<128x256xf32>
  %z1 = l1.add %mm1, %bias1 : tensor<128x256xf32>, tensor<128x256xf32> -> tensor<128x256xf32>
  %sum1 = l1.reduce_sum %z1 axis 1 : tensor<128x256xf32> -> tensor<128xf32>
  %mu1 = l1.scale %sum1, %inv_h : tensor<128xf32>, tensor<f32> -> tensor<128xf32>
  %mub1 = l1.broadcast %mu1 dims [0] : tensor<128xf32> -> tensor<128x256xf32>
  %dev1 = l1.sub %z1, %mub1 : tensor<128x256xf32>, tensor<128x256xf32> -> tensor<128x256xf32>
  %dev21 = l1.mul %dev1, %dev1 : tensor<128x256xf32>, tensor<128x256xf32> -> tensor<128x256xf32>
  %varsum1 = l1.reduce_sum %dev21 axis 1 : tensor<128x256xf32> -> tensor<128xf32>
  %var1 = l1.scale %varsum1, %inv_h : tensor<128xf32>, tensor<f32> -> tensor<128xf32>
  %vareps1 = l1.add %var1, %ln_eps : tensor<128xf32>, tensor<128xf32> -> tensor<128xf32>
  %std1 = l1.sqrt %vareps1 : tensor<128xf32> -> tensor<128xf32>
  %rstd1 = l1.reciprocal %std1 : tensor<128xf32> -> tensor<128xf32>
  %rstdb1 = l1.broadcast %rstd1 dims [0] : tensor<128xf32> -> tensor<128x256xf32>
  %xhat1 = l1.mul %dev1, %rstdb1 : tensor<128x256xf32>, tensor<128x256xf32> -> tensor<128x256xf32>
  %gainb1 = l1.broadcast %g1 : tensor<256xf32> -> tensor<128x256xf32>
  %shiftb1 = l1.broadcast %be1 : tensor<256xf32> -> tensor<128x256xf32>
  %xg1 = l1.mul %xhat1, %gainb1 : tensor<128x256xf32>, tensor<128x256xf32> -> tensor<128x256xf32>
  %n1 = l1.add %xg1, %shiftb1 : tensor<128x256xf32>, tensor<128x256xf32> -> tensor<128x256xf32>
  %nsq1 = l1.mul %n1, %n1 : tensor<128x256xf32>, tensor<128x256xf32> -> tensor<128x256xf32>
  %ncube1 = l1.mul %nsq1, %n1 : tensor<128x256xf32>, tensor<128x256xf32> -> tensor<128x256xf32>
  %cncube1 = l1.scale %ncube1, %gelu_c : tensor<128x256xf32>, tensor<f32> -> tensor<128x256xf32>
  %inner1 = l1.add %n1, %cncube1 : tensor<128x256xf32>, tensor<128x256xf32> -> tensor<128x256xf32>
  %u1 = l1.scale %inner1, %gelu_k : tensor<128x256xf32>, tensor<f32> -> tensor<128x256xf32>
  %th1 = l1.tanh %u1 : tensor<128x256xf32> -> tensor<128x256xf32>
  %onept1 = l1.add %ones_bh, %th1 : tensor<128x256xf32>, tensor<128x256xf32> -> tensor<128x256xf32>
  %halfn1 = l1.scale %n1, %half : tensor<128x256xf32>, tensor<f32> -> tensor<128x256xf32>
  %a1 = l1.mul %halfn1, %onept1 : tensor<128x256xf32>, tensor<128x256xf32> -> tensor<128x256xf32>
  // Forward: linear(256, 256), norm(layer), gelu.
  %mm2 = l1.matmul %a1, %w2 : tensor<128x256xf32>, tensor<256x256xf32> -> tensor<128x256xf32>
  %bias2 = l1.broadcast %b2 : tensor<256xf32> -> tensor<128x256xf32>
  %z2 = l1.add %mm2, %bias2 : tensor<128x256xf32>, tensor<128x256xf32> -> tensor<128x256xf32>
  %sum2 = l1.reduce_sum %z2 axis 1 : tensor<128x256xf32> -> tensor<128xf32>
  %mu2 = l1.scale %sum2, %inv_h : tensor<128xf32>, tensor<f32> -> tensor<128xf32>
  %mub2 = l1.broadcast %mu2 dims [0] : tensor<128xf32> -> tensor<128x256xf32>
  %dev2 = l1.sub %z2, %mub2 : tensor<128x256xf32>, tensor<128x256xf32> -> tensor<128x256xf32>
  %dev22 = l1.mul %dev2, %dev2 : tensor<128x256xf32>, tensor<128x256xf32> -> tensor<128x256xf32>
  %varsum2 = l1.reduce_sum %dev22 axis 1 : tensor<128x256xf32> -> tensor<128xf32>
  %var2 = l1.scale %varsum2, %inv_h : tensor<128xf32>, tensor<f32> -> tensor<128xf32>
  %vareps2 = l1.add %var2, %ln_eps : tensor<128xf32>, tensor<128xf32> -> tensor<128xf32>
  %std2 = l1.sqrt %vareps2 : tensor<128xf32> -> tensor<128xf32>
  %rstd2 = l1.reciprocal %std2 : tensor<128xf32> -> tensor<128xf32>
  %rstdb2 = l1.broadcast %rstd2 dims [0] : tensor<128xf32> -> tensor<128x256xf32>
  %xhat2 = l1.mul %dev2, %rstdb2 : tensor<128x256xf32>, tensor<128x256xf32> -> tensor<128x256xf32>
  %gainb2 = l1.broadcast %g2 : tensor<256xf32> -> tensor<128x256xf32>
  %shiftb2 = l1.broadcast %be2 : tensor<256xf32> -> tensor<128x256xf32>
  %xg2 = l1.mul %xhat2, %gainb2 : tensor<128x256xf32>, tensor<128x256xf32> -> tensor<128x256xf32>
  %n2 = l1.add %xg2, %shiftb2 : tensor<128x256xf32>, tensor<128x256xf32> -> tensor<128x256xf32>
  %nsq2 = l1.mul %n2, %n2 : tensor<128x256xf32>, tensor<128x256xf32> -> tensor<128x256xf32>
  %ncube2 = l1.mul %nsq2, %n2 : tensor<128x256xf32>, tensor<128x256xf32> -> tensor<128x256xf32>
  %cncube2 = l1.scale %ncube2, %gelu_c : tensor<128x256xf32>, tensor<f32> -> tensor<128x256xf32>
  %inner2 = l1.add %n2, %cncube2 : tensor<128x256xf32>, tensor<128x256xf32> -> tensor<128x256xf32>
  %u2 = l1.scale %inner2, %gelu_k : tensor<128x256xf32>, tensor<f32> -> tensor<128x256xf32>
  %th2 = l1.tanh %u2 : tensor<128x256xf32> -> tensor<128x256xf32>
  %onept2 = l1.add %ones_bh, %th2 : tensor<128x256xf32>, tensor<128x256xf32> -> tensor<128x256xf32>
  %halfn2 = l1.scale %n2, %half : tensor<128x256xf32>, tensor<f32> -> tensor<128x256xf32>
  %a2 = l1.mul %halfn2, %onept2 : tensor<128x256xf32>, tensor<128x256xf32> -> tensor<128x256xf32>
  // Forward: linear(256, 10); softmax cross-entropy on logits.
  %mm3 = l1.matmul %a2, %w3 : tensor<128x256xf32>, tensor<256x10xf32> -> tensor<128x10xf32>
  %bias3 = l1.broadcast %b3 : tensor<10xf32> -> tensor<128x10xf32>
  %z3 = l1.add %mm3, %bias3 : tensor<128x10xf32>, tensor<128x10xf32> -> tensor<128x10xf32>
  %rowmax = l1.reduce_max %z3 axis 1 : tensor<128x10xf32> -> tensor<128xf32>
  %rowmaxb = l1.broadcast %rowmax dims [0] : tensor<128xf32> -> tensor<128x10xf32>
  %shifted = l1.sub %z3, %rowmaxb : tensor<128x10xf32>, tensor<128x10xf32> -> tensor<128x10xf32>
  %exps = l1.exp %shifted : tensor<128x10xf32> -> tensor<128x10xf32>
  %expsum = l1.reduce_sum %exps axis 1 : tensor<128x10xf32> -> tensor<128xf32>
  %logsumexp = l1.log %expsum : tensor<128xf32> -> tensor<128xf32>
  %logsumexpb = l1.broadcast %logsumexp dims [0] : tensor<128xf32> -> tensor<128x10xf32>
  %logp = l1.sub %shifted, %logsumexpb : tensor<128x10xf32>, tensor<128x10xf32> -> tensor<128x10xf32>
  %ylogp = l1.mul %onehot, %logp : tensor<128x10xf32>, tensor<128x10xf32> -> tensor<128x10xf32>
  %ylogp_sum = l1.reduce_sum %ylogp : tensor<128x10xf32> -> tensor<f32>
  %neg_inv_batch = l1.const -0.0078125 : tensor<f32>
  %ce = l1.scale %ylogp_sum, %neg_inv_batch : tensor<f32>, tensor<f32> -> tensor<f32>
  // L1 penalty: 1e-4 * sum |p| over every parameter.
  %abs_w1 = l1.abs %w1 : tensor<784x256xf32> -> tensor<784x256xf32>
  %l1_w1 = l1.reduce_sum %abs_w1 : tensor<784x256xf32> -> tensor<f32>
  %abs_b1 = l1.abs %b1 : tensor<256xf32> -> tensor<256xf32>
  %l1_b1 = l1.reduce_sum %abs_b1 : tensor<256xf32> -> tensor<f32>
  %l1_acc = l1.add %l1_w1, %l1_b1 : tensor<f32>, tensor<f32> -> tensor<f32>
  %abs_g1 = l1.abs %g1 : tensor<256xf32> -> tensor<256xf32>
  %l1_g1 = l1.reduce_sum %abs_g1 : tensor<256xf32> -> tensor<f32>
  %l1_acc_1 = l1.add %l1_acc, %l1_g1 : tensor<f32>, tensor<f32> -> tensor<f32>
  %abs_be1 = l1.abs %be1 : tensor<256xf32> -> tensor<256xf32>
  %l1_be1 = l1.reduce_sum %abs_be1 : tensor<256xf32> -> tensor<f32>
  %l1_acc_2 = l1.add %l1_acc_1, %l1_be1 : tensor<f32>, tensor<f32> -> tensor<f32>
  %abs_w2 = l1.abs %w2 : tensor<256x256xf32> -> tensor<256x256xf32>
  %l1_w2 = l1.reduce_sum %abs_w2 : tensor<256x256xf32> -> tensor<f32>
  %l1_acc_3 = l1.add %l1_acc_2, %l1_w2 : tensor<f32>, tensor<f32> -> tensor<f32>
  %abs_b2 = l1.abs %b2 : tensor<256xf32> -> tensor<256xf32>
  %l1_b2 = l1.reduce_sum %abs_b2 : tensor<256xf32> -> tensor<f32>
  %l1_acc_4 = l1.add %l1_acc_3, %l1_b2 : tensor<f32>, tensor<f32> -> tensor<f32>
  %abs_g2 = l1.abs %g2 : tensor<256xf32> -> tensor<256xf32>
  %l1_g2 = l1.reduce_sum %abs_g2 : tensor<256xf32> -> tensor<f32>
  %l1_acc_5 = l1.add %l1_acc_4, %l1_g2 : tensor<f32>, tensor<f32> -> tensor<f32>
  %abs_be2 = l1.abs %be2 : tensor<256xf32> -> tensor<256xf32>
  %l1_be2 = l1.reduce_sum %abs_be2 : tensor<256xf32> -> tensor<f32>
  %l1_acc_6 = l1.add %l1_acc_5, %l1_be2 : tensor<f32>, tensor<f32> -> tensor<f32>
  %abs_w3 = l1.abs %w3 : tensor<256x10xf32> -> tensor<256x10xf32>
  %l1_w3 = l1.reduce_sum %abs_w3 : tensor<256x10xf32> -> tensor<f32>
  %l1_acc_7 = l1.add %l1_acc_6, %l1_w3 : tensor<f32>, tensor<f32> -> tensor<f32>
  %abs_b3 = l1.abs %b3 : tensor<10xf32> -> tensor<10xf32>
  %l1_b3 = l1.reduce_sum %abs_b3 : tensor<10xf32> -> tensor<f32>
  %l1_acc_8 = l1.add %l1_acc_7, %l1_b3 : tensor<f32>, tensor<f32> -> tensor<f32>
  %lambda = l1.const 0.0001 : tensor<f32>
  %penalty = l1.scale %l1_acc_8, %lambda : tensor<f32>, tensor<f32> -> tensor<f32>
  %loss = l1.add %ce, %penalty : tensor<f32>, tensor<f32> -> tensor<f32>
  // Evaluation: the rows whose label's logit is the row max (ties count as
  // hits; a label outside [0, 10), as on padded rows, one-hot encodes as
  // zeros and counts 0). Not part of the loss: it has no gradient.
  %is_rowmax = l1.cmp ge, %z3, %rowmaxb : tensor<128x10xf32>, tensor<128x10xf32> -> tensor<128x10xi1>
  %rowmax_hits = l1.cast %is_rowmax : tensor<128x10xi1> -> tensor<128x10xf32>
  %label_hits = l1.mul %onehot, %rowmax_hits : tensor<128x10xf32>, tensor<128x10xf32> -> tensor<128x10xf32>
  %correct = l1.reduce_sum %label_hits : tensor<128x10xf32> -> tensor<f32>
  // Backward: d loss / d logits = (softmax - onehot) / batch.
  %probs = l1.exp %logp : tensor<128x10xf32> -> tensor<128x10xf32>
  %probs_minus_y = l1.sub %probs, %onehot : tensor<128x10xf32>, tensor<128x10xf32> -> tensor<128x10xf32>
  %inv_batch = l1.const 0.0078125 : tensor<f32>
  %dlogits = l1.scale %probs_minus_y, %inv_batch : tensor<128x10xf32>, tensor<f32> -> tensor<128x10xf32>
  // Backward through linear(256, 10).
  %a2t = l1.transpose %a2 : tensor<128x256xf32> -> tensor<256x128xf32>
  %dw3_data = l1.matmul %a2t, %dlogits : tensor<256x128xf32>, tensor<128x10xf32> -> tensor<256x10xf32>
  %sign_w3 = l1.sign %w3 : tensor<256x10xf32> -> tensor<256x10xf32>
  %dpen_w3 = l1.scale %sign_w3, %lambda : tensor<256x10xf32>, tensor<f32> -> tensor<256x10xf32>
  %gw3 = l1.add %dw3_data, %dpen_w3 : tensor<256x10xf32>, tensor<256x10xf32> -> tensor<256x10xf32>
  %db3_data = l1.reduce_sum %dlogits axis 0 : tensor<128x10xf32> -> tensor<10xf32>
  %sign_b3 = l1.sign %b3 : tensor<10xf32> -> tensor<10xf32>
  %dpen_b3 = l1.scale %sign_b3, %lambda : tensor<10xf32>, tensor<f32> -> tensor<10xf32>
  %gb3 = l1.add %db3_data, %dpen_b3 : tensor<10xf32>, tensor<10xf32> -> tensor<10xf32>
  %w3t = l1.transpose %w3 : tensor<256x10xf32> -> tensor<10x256xf32>
  %da2 = l1.matmul %dlogits, %w3t : tensor<128x10xf32>, tensor<10x256xf32> -> tensor<128x256xf32>
  // Backward through gelu, norm(layer), linear(256, 256).
  %gd_first2 = l1.scale %onept2, %half : tensor<128x256xf32>, tensor<f32> -> tensor<128x256xf32>
  %th22 = l1.mul %th2, %th2 : tensor<128x256xf32>, tensor<128x256xf32> -> tensor<128x256xf32>
  %sech22 = l1.sub %ones_bh, %th22 : tensor<128x256xf32>, tensor<128x256xf32> -> tensor<128x256xf32>
  %c3n22 = l1.scale %nsq2, %gelu_3c : tensor<128x256xf32>, tensor<f32> -> tensor<128x256xf32>
  %dinner2 = l1.add %ones_bh, %c3n22 : tensor<128x256xf32>, tensor<128x256xf32> -> tensor<128x256xf32>
  %du2 = l1.scale %dinner2, %gelu_k : tensor<128x256xf32>, tensor<f32> -> tensor<128x256xf32>
  %gd_halfn2 = l1.scale %n2, %half : tensor<128x256xf32>, tensor<f32> -> tensor<128x256xf32>
  %gd_t2a2 = l1.mul %gd_halfn2, %sech22 : tensor<128x256xf32>, tensor<128x256xf32> -> tensor<128x256xf32>
  %gd_second2 = l1.mul %gd_t2a2, %du2 : tensor<128x256xf32>, tensor<128x256xf32> -> tensor<128x256xf32>
  %dgelu2 = l1.add %gd_first2, %gd_second2 : tensor<128x256xf32>, tensor<128x256xf32> -> tensor<128x256xf32>
  %dn2 = l1.mul %da2, %dgelu2 : tensor<128x256xf32>, tensor<128x256xf32> -> tensor<128x256xf32>
  %dn_xhat2 = l1.mul %dn2, %xhat2 : tensor<128x256xf32>, tensor<128x256xf32> -> tensor<128x256xf32>
  %dgain2 = l1.reduce_sum %dn_xhat2 axis 0 : tensor<128x256xf32> -> tensor<256xf32>
  %dshift2 = l1.reduce_sum %dn2 axis 0 : tensor<128x256xf32> -> tensor<256xf32>
  %dxhat2 = l1.mul %dn2, %gainb2 : tensor<128x256xf32>, tensor<128x256xf32> -> tensor<128x256xf32>
  %dxhat_sum2 = l1.reduce_sum %dxhat2 axis 1 : tensor<128x256xf32> -> tensor<128xf32>
  %dxhat_mean2 = l1.scale %dxhat_sum2, %inv_h : tensor<128xf32>, tensor<f32> -> tensor<128xf32>
  %dxhat_meanb2 = l1.broadcast %dxhat_mean2 dims [0] : tensor<128xf32> -> tensor<128x256xf32>
  %dxhat_xhat2 = l1.mul %dxhat2, %xhat2 : tensor<128x256xf32>, tensor<128x256xf32> -> tensor<128x256xf32>
  %dxx_sum2 = l1.reduce_sum %dxhat_xhat2 axis 1 : tensor<128x256xf32> -> tensor<128xf32>
  %dxx_mean2 = l1.scale %dxx_sum2, %inv_h : tensor<128xf32>, tensor<f32> -> tensor<128xf32>
  %dxx_meanb2 = l1.broadcast %dxx_mean2 dims [0] : tensor<128xf32> -> tensor<128x256xf32>
  %proj2 = l1.mul %xhat2, %dxx_meanb2 : tensor<128x256xf32>, tensor<128x256xf32> -> tensor<128x256xf32>
  %centered2 = l1.sub %dxhat2, %dxhat_meanb2 : tensor<128x256xf32>, tensor<128x256xf32> -> tensor<128x256xf32>
  %centered22 = l1.sub %centered2, %proj2 : tensor<128x256xf32>, tensor<128x256xf32> -> tensor<128x256xf32>
  %dz2 = l1.mul %centered22, %rstdb2 : tensor<128x256xf32>, tensor<128x256xf32> -> tensor<128x256xf32>
  %sign_g2 = l1.sign %g2 : tensor<256xf32> -> tensor<256xf32>
  %dpen_g2 = l1.scale %sign_g2, %lambda : tensor<256xf32>, tensor<f32> -> tensor<256xf32>
  %gg2 = l1.add %dgain2, %dpen_g2 : tensor<256xf32>, tensor<256xf32> -> tensor<256xf32>
  %sign_be2 = l1.sign %be2 : tensor<256xf32> -> tensor<256xf32>
  %dpen_be2 = l1.scale %sign_be2, %lambda : tensor<256xf32>, tensor<f32> -> tensor<256xf32>
  %gbe2 = l1.add %dshift2, %dpen_be2 : tensor<256xf32>, tensor<256xf32> -> tensor<256xf32>
  %a1t = l1.transpose %a1 : tensor<128x256xf32> -> tensor<256x128xf32>
  %dw2_data = l1.matmul %a1t, %dz2 : tensor<256x128xf32>, tensor<128x256xf32> -> tensor<256x256xf32>
  %sign_w2 = l1.sign %w2 : tensor<256x256xf32> -> tensor<256x256xf32>
  %dpen_w2 = l1.scale %sign_w2, %lambda : tensor<256x256xf32>, tensor<f32> -> tensor<256x256xf32>
  %gw2 = l1.add %dw2_data, %dpen_w2 : tensor<256x256xf32>, tensor<256x256xf32> -> tensor<256x256xf32>
  %db2_data = l1.reduce_sum %dz2 axis 0 : tensor<128x256xf32> -> tensor<256xf32>
  %sign_b2 = l1.sign %b2 : tensor<256xf32> -> tensor<256xf32>
  %dpen_b2 = l1.scale %sign_b2, %lambda : tensor<256xf32>, tensor<f32> -> tensor<256xf32>
  %gb2 = l1.add %db2_data, %dpen_b2 : tensor<256xf32>, tensor<256xf32> -> tensor<256xf32>
  %w2t = l1.transpose %w2 : tensor<256x256xf32> -> tensor<256x256xf32>
  %da1 = l1.matmul %dz2, %w2t : tensor<128x256xf32>, tensor<256x256xf32> -> tensor<128x256xf32>
  // Backward through gelu, norm(layer), linear(784, 256).
  %gd_first1 = l1.scale %onept1, %half : tensor<128x256xf32>, tensor<f32> -> tensor<128x256xf32>
  %th21 = l1.mul %th1, %th1 : tensor<128x256xf32>, tensor<128x256xf32> -> tensor<128x256xf32>
  %sech21 = l1.sub %ones_bh, %th21 : tensor<128x256xf32>, tensor<128x256xf32> -> tensor<128x256xf32>
  %c3n21 = l1.scale %nsq1, %gelu_3c : tensor<128x256xf32>, tensor<f32> -> tensor<128x256xf32>
  %dinner1 = l1.add %ones_bh, %c3n21 : tensor<128x256xf32>, tensor<128x256xf32> -> tensor<128x256xf32>
  %du1 = l1.scale %dinner1, %gelu_k : tensor<128x256xf32>, tensor<f32> -> tensor<128x256xf32>
  %gd_halfn1 = l1.scale %n1, %half : tensor<128x256xf32>, tensor<f32> -> tensor<128x256xf32>
  %gd_t2a1 = l1.mul %gd_halfn1, %sech21 : tensor<128x256xf32>, tensor<128x256xf32> -> tensor<128x256xf32>
  %gd_second1 = l1.mul %gd_t2a1, %du1 : tensor<128x256xf32>, tensor<128x256xf32> -> tensor<128x256xf32>
  %dgelu1 = l1.add %gd_first1, %gd_second1 : tensor<128x256xf32>, tensor<128x256xf32> -> tensor<128x256xf32>
  %dn1 = l1.mul %da1, %dgelu1 : tensor<128x256xf32>, tensor<128x256xf32> -> tensor<128x256xf32>
  %dn_xhat1 = l1.mul %dn1, %xhat1 : tensor<128x256xf32>, tensor<128x256xf32> -> tensor<128x256xf32>
  %dgain1 = l1.reduce_sum %dn_xhat1 axis 0 : tensor<128x256xf32> -> tensor<256xf32>
  %dshift1 = l1.reduce_sum %dn1 axis 0 : tensor<128x256xf32> -> tensor<256xf32>
  %dxhat1 = l1.mul %dn1, %gainb1 : tensor<128x256xf32>, tensor<128x256xf32> -> tensor<128x256xf32>
  %dxhat_sum1 = l1.reduce_sum %dxhat1 axis 1 : tensor<128x256xf32> -> tensor<128xf32>
  %dxhat_mean1 = l1.scale %dxhat_sum1, %inv_h : tensor<128xf32>, tensor<f32> -> tensor<128xf32>
  %dxhat_meanb1 = l1.broadcast %dxhat_mean1 dims [0] : tensor<128xf32> -> tensor<128x256xf32>
  %dxhat_xhat1 = l1.mul %dxhat1, %xhat1 : tensor<128x256xf32>, tensor<128x256xf32> -> tensor<128x256xf32>
  %dxx_sum1 = l1.reduce_sum %dxhat_xhat1 axis 1 : tensor<128x256xf32> -> tensor<128xf32>
  %dxx_mean1 = l1.scale %dxx_sum1, %inv_h : tensor<128xf32>, tensor<f32> -> tensor<128xf32>
  %dxx_meanb1 = l1.broadcast %dxx_mean1 dims [0] : tensor<128xf32> -> tensor<128x256xf32>
  %proj1 = l1.mul %xhat1, %dxx_meanb1 : tensor<128x256xf32>, tensor<128x256xf32> -> tensor<128x256xf32>
  %centered1 = l1.sub %dxhat1, %dxhat_meanb1 : tensor<128x256xf32>, tensor<128x256xf32> -> tensor<128x256xf32>
  %centered21 = l1.sub %centered1, %proj1 : tensor<128x256xf32>, tensor<128x256xf32> -> tensor<128x256xf32>
  %dz1 = l1.mul %centered21, %rstdb1 : tensor<128x256xf32>, tensor<128x256xf32> -> tensor<128x256xf32>
  %sign_g1 = l1.sign %g1 : tensor<256xf32> -> tensor<256xf32>
  %dpen_g1 = l1.scale %sign_g1, %lambda : tensor<256xf32>, tensor<f32> -> tensor<256xf32>
  %gg1 = l1.add %dgain1, %dpen_g1 : tensor<256xf32>, tensor<256xf32> -> tensor<256xf32>
  %sign_be1 = l1.sign %be1 : tensor<256xf32> -> tensor<256xf32>
  %dpen_be1 = l1.scale %sign_be1, %lambda : tensor<256xf32>, tensor<f32> -> tensor<256xf32>
  %gbe1 = l1.add %dshift1, %dpen_be1 : tensor<256xf32>, tensor<256xf32> -> tensor<256xf32>
  %xt = l1.transpose %x0 : tensor<128x784xf32> -> tensor<784x128xf32>
  %dw1_data = l1.matmul %xt, %dz1 : tensor<784x128xf32>, tensor<128x256xf32> -> tensor<784x256xf32>
  %sign_w1 = l1.sign %w1 : tensor<784x256xf32> -> tensor<784x256xf32>
  %dpen_w1 = l1.scale %sign_w1, %lambda : tensor<784x256xf32>, tensor<f32> -> tensor<784x256xf32>
  %gw1 = l1.add %dw1_data, %dpen_w1 : tensor<784x256xf32>, tensor<784x256xf32> -> tensor<784x256xf32>
  %db1_data = l1.reduce_sum %dz1 axis 0 : tensor<128x256xf32> -> tensor<256xf32>
  %sign_b1 = l1.sign %b1 : tensor<256xf32> -> tensor<256xf32>
  %dpen_b1 = l1.scale %sign_b1, %lambda : tensor<256xf32>, tensor<f32> -> tensor<256xf32>
  %gb1 = l1.add %db1_data, %dpen_b1 : tensor<256xf32>, tensor<256xf32> -> tensor<256xf32>
  l1.return %loss, %gw1, %gb1, %gg1, %gbe1, %gw2, %gb2, %gg2, %gbe2, %gw3, %gb3, %correct : tensor<f32>, tensor<784x256xf32>, tensor<256xf32>, tensor<256xf32>, tensor<256xf32>, tensor<256x256xf32>, tensor<256xf32>, tensor<256xf32>, tensor<256xf32>, tensor<256x10xf32>, tensor<10xf32>, tensor<f32>
}

l1.stage @transfer_grads on @cpu_0 process(%loss: !l1.buf<@gpu_0, tensor<f32>>,
    %g_w1: !l1.buf<@gpu_0, tensor<784x256xf32>>,
    %g_b1: !l1.buf<@gpu_0, tensor<256xf32>>,
    %g_g1: !l1.buf<@gpu_0, tensor<256xf32>>,
    %g_be1: !l1.buf<@gpu_0, tensor<256xf32>>,
    %g_w2: !l1.buf<@gpu_0, tensor<256x256xf32>>,
    %g_b2: !l1.buf<@gpu_0, tensor<256xf32>>,
    %g_g2: !l1.buf<@gpu_0, tensor<256xf32>>,
    %g_be2: !l1.buf<@gpu_0, tensor<256xf32>>,
    %g_w3: !l1.buf<@gpu_0, tensor<256x10xf32>>,
    %g_b3: !l1.buf<@gpu_0, tensor<10xf32>>,
    %correct: !l1.buf<@gpu_0, tensor<f32>>) {
  %host_loss = l1.transfer %loss : !l1.buf<@gpu_0, tensor<f32>> -> !l1.buf<@ram_0, tensor<f32>>
  l1.report "loss", %host_loss : !l1.buf<@ram_0, tensor<f32>>
  l1.drop %host_loss : !l1.buf<@ram_0, tensor<f32>>
  %host_correct = l1.transfer %correct : !l1.buf<@gpu_0, tensor<f32>> -> !l1.buf<@ram_0, tensor<f32>>
  l1.report "correct", %host_correct : !l1.buf<@ram_0, tensor<f32>>
  l1.drop %host_correct : !l1.buf<@ram_0, tensor<f32>>
  l1.send @model_state::@GradUpdate(%g_w1, %g_b1, %g_g1, %g_be1, %g_w2, %g_b2, %g_g2, %g_be2, %g_w3, %g_b3)
      : !l1.buf<@gpu_0, tensor<784x256xf32>>,
        !l1.buf<@gpu_0, tensor<256xf32>>,
        !l1.buf<@gpu_0, tensor<256xf32>>,
        !l1.buf<@gpu_0, tensor<256xf32>>,
        !l1.buf<@gpu_0, tensor<256x256xf32>>,
        !l1.buf<@gpu_0, tensor<256xf32>>,
        !l1.buf<@gpu_0, tensor<256xf32>>,
        !l1.buf<@gpu_0, tensor<256xf32>>,
        !l1.buf<@gpu_0, tensor<256x10xf32>>,
        !l1.buf<@gpu_0, tensor<10xf32>>
  l1.end
}

l1.pipeline @train = @load_data -> @transfer_to_gpu -> @forward_backward
l1.pipeline @grad_return = @transfer_grads

l1.schedule pipelines [@train, @grad_return] actors [@model_state] pipeline_depth 2
