// The differential fuzzer's reduction of its planted miscompile: with
// --synpl-l1-to-l0's test-plant-miscompile=join-through-view the add joins
// the kernel of %0 and reads, through the transpose, elements of %0 that
// kernel has not computed yet. Reduced by `synpl-diff-fuzz --plant=... --reduce`
// from a 14-op program (seed 3) to these three ops.
// RUN: not synpl-diff-fuzz --check %s --plant=join-through-view | FileCheck %s --check-prefix=PLANTED
// RUN: synpl-diff-fuzz --check %s | FileCheck %s
// PLANTED: mismatch in @g3 (host tile 16x6, 1 thread): result #0:
// PLANTED: FAILED
// CHECK: checked 1 graphs in 6 runs, 24 elements: all agree

module attributes {difffuzz.inputs = {g3 = [array<f64: -1.000000e+00, 1.000000e+00>]}} {
  l1.system @fuzz {
    l1.node @ram_0 memory {capacity = "4GB"}
    l1.node @cpu_0 compute {isa = "x86_64"}
    l1.edge @ram_0 <-> @cpu_0 bandwidth "50GB/s"
  }
  l1.tensor_graph @g3 on @cpu_0 then @g3_sink compute(%arg0: tensor<2x1x2xf32>) {
    %0 = l1.abs %arg0 : tensor<2x1x2xf32> -> tensor<2x1x2xf32>
    %1 = l1.transpose %0 perm [2, 1, 0] : tensor<2x1x2xf32> -> tensor<2x1x2xf32>
    %2 = l1.add %0, %1 : tensor<2x1x2xf32>, tensor<2x1x2xf32> -> tensor<2x1x2xf32>
    l1.return %2 : tensor<2x1x2xf32>
  }
  l1.stage @g3_sink on @cpu_0 process(%arg0: !l1.buf<@ram_0, tensor<2x1x2xf32>>) {
    l1.drop %arg0 : !l1.buf<@ram_0, tensor<2x1x2xf32>>
    l1.end
  }
}
