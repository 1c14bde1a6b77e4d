// Failures of the reference interpreter are located diagnostics, never crashes.
// RUN: not synpl-interp %s --no-verify --graph=to_byte \
// RUN:   --arg='dense<[1.5, 256.0]> : tensor<2xf32>' 2>&1 | FileCheck %s --check-prefix=CAST
// RUN: not synpl-interp %s --no-verify --graph=to_byte 2>&1 | FileCheck %s --check-prefix=ARITY
// RUN: not synpl-interp %s --no-verify --graph=to_byte \
// RUN:   --arg='dense<1.0> : tensor<3xf32>' 2>&1 | FileCheck %s --check-prefix=TYPE
// RUN: not synpl-interp %s --no-verify --graph=unknown 2>&1 | FileCheck %s --check-prefix=UNKNOWN
// RUN: not synpl-interp %s --no-verify --graph=cycle \
// RUN:   --arg='dense<1.0> : tensor<2xf32>' 2>&1 | FileCheck %s --check-prefix=CYCLE
// RUN: not synpl-interp %s --no-verify --graph=window 2>&1 | FileCheck %s --check-prefix=STATE
// RUN: not synpl-interp %s --no-verify --graph=nothing 2>&1 | FileCheck %s --check-prefix=MISSING
// RUN: not synpl-interp %s --no-verify --graph=user_kernel \
// RUN:   --arg='dense<1.0> : tensor<2xf32>' 2>&1 | FileCheck %s --check-prefix=USER

// ARITY: :[[@LINE+3]]:1: error: 'l1.tensor_graph' op takes 1 arguments, the interpreter got 0
// TYPE: :[[@LINE+2]]:1: error: 'l1.tensor_graph' op argument #0 is tensor<3xf32>, expected 'tensor<2xf32>'
// CAST: :[[@LINE+2]]:8: error: 'l1.cast' op casts 256 (element 1) to ui8, which cannot hold it
l1.tensor_graph @to_byte on @gpu_0 compute(%a: tensor<2xf32>) {
  %r = l1.cast %a : tensor<2xf32> -> tensor<2xui8>
  l1.return %r : tensor<2xui8>
}

// UNKNOWN: :[[@LINE+2]]:8: error: 'arith.constant' op is not an op the reference interpreter knows
l1.tensor_graph @unknown on @gpu_0 compute() {
  %c = arith.constant dense<1.0> : tensor<2xf32>
  l1.return %c : tensor<2xf32>
}

// USER: :[[@LINE+2]]:8: error: 'l1.kernel_call' op calls the user kernel relu of relu.ll, which the reference interpreter cannot run: it evaluates each op by its definition, and a user kernel has none but its file
l1.tensor_graph @user_kernel on @gpu_0 compute(%a: tensor<2xf32>) {
  %r = l1.kernel_call "relu" from "relu.ll"(%a) : (tensor<2xf32>) -> tensor<2xf32>
  l1.return %r : tensor<2xf32>
}

// CYCLE: :[[@LINE+2]]:8: error: 'l1.add' op lies on a def-use cycle
l1.tensor_graph @cycle on @gpu_0 compute(%a: tensor<2xf32>) {
  %b = l1.add %a, %c : tensor<2xf32>, tensor<2xf32> -> tensor<2xf32>
  %c = l1.neg %b : tensor<2xf32> -> tensor<2xf32>
  l1.return %c : tensor<2xf32>
}

// STATE: :[[@LINE+2]]:8: error: 'l1.window_read' op reads @acc::@w, which the state has no value for
l1.tensor_graph @window on @gpu_0 reads [@acc::@win] compute() {
  %w = l1.window_read @acc::@win[@w] : tensor<2xf32>
  l1.return %w : tensor<2xf32>
}

// MISSING: error: no tensor graph @nothing
