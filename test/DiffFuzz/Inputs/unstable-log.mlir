// A log whose operand may be negative: not a valid differential test.
module {
  l1.system @fuzz {
    l1.node @ram_0 memory {capacity = "4GB"}
    l1.node @cpu_0 compute {isa = "x86_64"}
    l1.edge @ram_0 <-> @cpu_0 bandwidth "50GB/s"
  }
  l1.tensor_graph @g on @cpu_0 then @g_sink compute(%arg0: tensor<4xf32>) {
    %0 = l1.log %arg0 : tensor<4xf32> -> tensor<4xf32> loc("v1")
    l1.return %0 : tensor<4xf32>
  }
  l1.stage @g_sink on @cpu_0 process(%arg0: !l1.buf<@ram_0, tensor<4xf32>>) {
    l1.drop %arg0 : !l1.buf<@ram_0, tensor<4xf32>>
    l1.end
  }
}
