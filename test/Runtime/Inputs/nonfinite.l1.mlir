// A small program whose numbers become non-finite at a known step, for the
// tests of non-finite values (docs/training.md). The actor counts its
// update steps (`step`) and keeps a running average of `m`, the batch's
// mean image scaled by log(14 - step): at update step 15 (step = 14 when it
// starts) the log is -inf, so `m` and the average become -inf, and from
// step 16 on (log of a negative number) NaN. The reported `loss` is the
// batch's mean label (always finite); `log_loss` adds the log to it (a test
// renames it `loss` to make the loss itself non-finite). With 1050 samples
// of 100, an epoch is 10 steps: step 15 is epoch 2, batch 5.

l1.system @host {
  l1.node @ssd_0 storage
  l1.node @ram_0 memory {capacity = "1GB"}
  l1.node @cpu_0 compute {isa = "x86_64", cores = 2}
  l1.edge @ssd_0 -> @ram_0 bandwidth "2GB/s"
  l1.edge @ram_0 <-> @cpu_0 bandwidth "50GB/s"
}

l1.data @digits {
  l1.field @images : tensor<28x28xui8> at @ssd_0
      path "train-images-idx3-ubyte.gz" format idx
  l1.field @labels : tensor<1xui8> at @ssd_0
      path "train-labels-idx1-ubyte.gz" format idx
}

l1.actor @acc on @cpu_0 {
  l1.state @mean : tensor<784xf32> init zeros
  l1.state @step : tensor<f32> init zeros

  l1.window @view [@step] readers [@summarize]

  l1.handler @Update(%m: tensor<784xf32>) {
    %t0 = l1.state_read @step : tensor<f32>
    %one = l1.const 1.0 : tensor<f32>
    %t = l1.add %t0, %one : tensor<f32>, tensor<f32> -> tensor<f32>
    l1.state_write @step, %t : tensor<f32>
    %old = l1.state_read @mean : tensor<784xf32>
    %half = l1.const 0.5 : tensor<f32>
    %a = l1.scale %old, %half : tensor<784xf32>, tensor<f32> -> tensor<784xf32>
    %b = l1.scale %m, %half : tensor<784xf32>, tensor<f32> -> tensor<784xf32>
    %new = l1.add %a, %b : tensor<784xf32>, tensor<784xf32> -> tensor<784xf32>
    l1.state_write @mean, %new : tensor<784xf32>
    l1.return
  }
}

l1.stage @load on @cpu_0 process() {
  %images, %labels = l1.read_batch @digits [@images, @labels] batch 100 shuffle drop_last seed 3 : !l1.buf<@ram_0, tensor<100x28x28xui8>>, !l1.buf<@ram_0, tensor<100x1xui8>>
  l1.forward @summarize(%images, %labels) : !l1.buf<@ram_0, tensor<100x28x28xui8>>, !l1.buf<@ram_0, tensor<100x1xui8>>
}

l1.tensor_graph @summarize on @cpu_0 reads [@acc::@view] then @report_and_send
    compute(%x: tensor<100x28x28xui8>, %y: tensor<100x1xui8>) {
  %s = l1.window_read @acc::@view[@step] : tensor<f32>
  %k = l1.const 14.0 : tensor<f32>
  %d = l1.sub %k, %s : tensor<f32>, tensor<f32> -> tensor<f32>
  %l = l1.log %d : tensor<f32> -> tensor<f32>
  %xf = l1.cast %x : tensor<100x28x28xui8> -> tensor<100x28x28xf32>
  %x2 = l1.reshape %xf : tensor<100x28x28xf32> -> tensor<100x784xf32>
  %m0 = l1.reduce_mean %x2 axis 0 : tensor<100x784xf32> -> tensor<784xf32>
  %m = l1.scale %m0, %l : tensor<784xf32>, tensor<f32> -> tensor<784xf32>
  %yf = l1.cast %y : tensor<100x1xui8> -> tensor<100x1xf32>
  %ym = l1.reduce_mean %yf : tensor<100x1xf32> -> tensor<f32>
  %yl = l1.add %ym, %l : tensor<f32>, tensor<f32> -> tensor<f32>
  l1.return %ym, %yl, %m : tensor<f32>, tensor<f32>, tensor<784xf32>
}

l1.stage @report_and_send on @cpu_0 process(%loss: !l1.buf<@ram_0, tensor<f32>>,
    %logLoss: !l1.buf<@ram_0, tensor<f32>>,
    %m: !l1.buf<@ram_0, tensor<784xf32>>) {
  l1.report "loss", %loss : !l1.buf<@ram_0, tensor<f32>>
  l1.drop %loss : !l1.buf<@ram_0, tensor<f32>>
  l1.report "log_loss", %logLoss : !l1.buf<@ram_0, tensor<f32>>
  l1.drop %logLoss : !l1.buf<@ram_0, tensor<f32>>
  l1.send @acc::@Update(%m) : !l1.buf<@ram_0, tensor<784xf32>>
  l1.end
}

l1.pipeline @train = @load -> @summarize
l1.pipeline @grad_return = @report_and_send

l1.schedule pipelines [@train, @grad_return] actors [@acc] pipeline_depth 2
