// A batch read of text fields becomes an l0uop.ingest of format "text"
// whose slots keep their fields' shifts (and the stride); the graph's
// "loss" is mean(in) + 1000 (mean(next) - mean(in) - 1)^2, so a run
// (test/Tools/synplc/text-ingest.test, over a file whose byte i is i)
// reports the mean byte of the windows when the shift-1 field holds the
// byte after each input byte, and far more otherwise.
// RUN: synpl-opt %s --synpl-l1-to-l0-pipeline | FileCheck %s
// CHECK: l0uop.plan @box pipeline_depth 1 epochs 1 steps 20 {
// CHECK: l0uop.ingest @load.read0 into [@load.bytes, @load.bytes_next] from ["corpus.txt", "corpus.txt"] format "text" batch 4 shuffle drop_last seed 0 shifts [0, 1]{{$}}

l1.system @box {
  l1.node @ssd_0 storage
  l1.node @ram_0 memory {capacity = "1GB"}
  l1.node @cpu_0 compute {isa = "x86_64", cores = 2}
  l1.edge @ssd_0 -> @ram_0 bandwidth "2GB/s"
  l1.edge @ram_0 <-> @cpu_0 bandwidth "50GB/s"
}
l1.data @corpus {
  l1.field @bytes : tensor<8xui8> at @ssd_0 path "corpus.txt" format text
  l1.field @bytes_next : tensor<8xui8> at @ssd_0 path "corpus.txt" format text shift 1
}
l1.actor @a on @cpu_0 {
  l1.state @seen : tensor<f32> init zeros
  l1.window @win [@seen] readers [@g]
  l1.handler @Set(%v: tensor<f32>) {
    l1.state_write @seen, %v : tensor<f32>
    l1.return
  }
}
l1.stage @load on @cpu_0 process() {
  %x, %y = l1.read_batch @corpus [@bytes, @bytes_next] batch 4 shuffle drop_last seed 0 : !l1.buf<@ram_0, tensor<4x8xui8>>, !l1.buf<@ram_0, tensor<4x8xui8>>
  l1.forward @g(%x, %y) : !l1.buf<@ram_0, tensor<4x8xui8>>, !l1.buf<@ram_0, tensor<4x8xui8>>
}
l1.tensor_graph @g on @cpu_0 reads [@a::@win] then @host compute(%x: tensor<4x8xui8>, %y: tensor<4x8xui8>) {
  %s = l1.window_read @a::@win[@seen] : tensor<f32>
  %xf = l1.cast %x : tensor<4x8xui8> -> tensor<4x8xf32>
  %yf = l1.cast %y : tensor<4x8xui8> -> tensor<4x8xf32>
  %mx = l1.reduce_mean %xf : tensor<4x8xf32> -> tensor<f32>
  %my = l1.reduce_mean %yf : tensor<4x8xf32> -> tensor<f32>
  %d = l1.sub %my, %mx : tensor<f32>, tensor<f32> -> tensor<f32>
  %one = l1.const 1.0 : tensor<f32>
  %e = l1.sub %d, %one : tensor<f32>, tensor<f32> -> tensor<f32>
  %e2 = l1.mul %e, %e : tensor<f32>, tensor<f32> -> tensor<f32>
  %k = l1.const 1000.0 : tensor<f32>
  %pen = l1.scale %e2, %k : tensor<f32>, tensor<f32> -> tensor<f32>
  %loss = l1.add %mx, %pen : tensor<f32>, tensor<f32> -> tensor<f32>
  %next = l1.add %s, %one : tensor<f32>, tensor<f32> -> tensor<f32>
  l1.return %loss, %next : tensor<f32>, tensor<f32>
}
l1.stage @host on @cpu_0 process(%loss: !l1.buf<@ram_0, tensor<f32>>, %n: !l1.buf<@ram_0, tensor<f32>>) {
  l1.report "loss", %loss : !l1.buf<@ram_0, tensor<f32>>
  l1.drop %loss : !l1.buf<@ram_0, tensor<f32>>
  l1.send @a::@Set(%n) : !l1.buf<@ram_0, tensor<f32>>
  l1.end
}
l1.pipeline @train = @load -> @g
l1.pipeline @ret = @host
l1.schedule pipelines [@train, @ret] actors [@a] pipeline_depth 1 epochs 1 steps 20
