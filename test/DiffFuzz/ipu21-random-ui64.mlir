// Found by synpl-diff-fuzz (seed 5, --targets=ipu21), reduced from 9 ops:
// `l1.random` draws with unsigned 64-bit arithmetic (squares32: products
// that wrap past 2^63, then divisions by 2^32), which the IPU's generic
// codelet computed in signed 64-bit registers: the quotient of a product
// above 2^63 came out negative and the draw wrong (0.3006 for 0.0567).
// The program file now has ui32 and ui64 registers, read as unsigned by
// division, remainder, comparison, maximum and conversion to a float.
// RUN: synpl-diff-fuzz --check %s --targets=ipu21,host | FileCheck %s
// CHECK: checked 1 graphs in 8 runs, 8 elements: all agree

module attributes {difffuzz.inputs = {g5 = []}} {
  l1.system @fuzz {
    l1.node @ram_0 memory {capacity = "4GB"}
    l1.node @cpu_0 compute {isa = "x86_64"}
    l1.edge @ram_0 <-> @cpu_0 bandwidth "50GB/s"
  }
  l1.tensor_graph @g5 on @cpu_0 then @g5_sink compute() {
    %0 = l1.const 0.000000e+00 : tensor<f32>
    %1 = l1.random %0 seed 442 stream 3 : tensor<f32> -> tensor<1xf32>
    l1.return %1 : tensor<1xf32>
  }
  l1.stage @g5_sink on @cpu_0 process(%arg0: !l1.buf<@ram_0, tensor<1xf32>>) {
    l1.drop %arg0 : !l1.buf<@ram_0, tensor<1xf32>>
    l1.end
  }
}
