// RUN: synpl-opt %s --synpl-convert-l0uop-to-ipu21 | FileCheck %s
// Numbers: a product long in k, on two tiles (its k split into two groups,
// then reduced) and on the whole chip; every element of C against Python's.
// RUN: synpl-opt %S/Inputs/matmul-16x8192x16-f16.mlir --synpl-convert-l0uop-to-ipu21="tiles=2" \
// RUN:   | FileCheck %s --check-prefix=SPLIT
// RUN: %python %S/Inputs/check_matmul.py inputs 16 8192 16 %t
// RUN: synpl-opt %S/Inputs/matmul-16x8192x16-f16.mlir --synpl-convert-l0uop-to-ipu21="tiles=2" \
// RUN:   | synpl-translate --synpl-ipu21-to-program -o %t.two.ipu
// RUN: synpl-ipu21-sim %t.two.ipu --report=none --tensor-in a=%t.a --tensor-in b=%t.b --tensor-out c=%t.c
// RUN: %python %S/Inputs/check_matmul.py numbers 16 8192 16 %t | FileCheck %s --check-prefix=NUMBERS
// RUN: synpl-opt %S/Inputs/matmul-16x8192x16-f16.mlir --synpl-convert-l0uop-to-ipu21 \
// RUN:   | synpl-translate --synpl-ipu21-to-program -o %t.all.ipu
// RUN: synpl-ipu21-sim %t.all.ipu --report=none --tensor-in a=%t.a --tensor-in b=%t.b --tensor-out c=%t.c
// RUN: %python %S/Inputs/check_matmul.py numbers 16 8192 16 %t | FileCheck %s --check-prefix=NUMBERS
// NUMBERS: matmul ok

// The plan becomes a graph of the same name; C's home is the grid the
// search chose, A and B spread over the chip; the product's chunk buffers,
// the compute sets that zero C and accumulate into it, the exchange that
// brings each step's chunk; the program runs them in supersteps.
// CHECK-LABEL: ipu21.graph @mm target #ipu21.target<arch = "ipu21", tiles = 1472
// CHECK-NOT: l0uop.
// CHECK-DAG: ipu21.tensor @c : tensor<64x40xf32> mapping grid(first_tile = 0, rows = {{[0-9]+}}, cols = {{[0-9]+}}{{(, column_major)?}}) at
// CHECK-DAG: ipu21.tensor @a : tensor<64x48xf16> mapping blocked(first_tile = 0, per_tile = {{[0-9]+}}) at
// CHECK-DAG: ipu21.codelet @amp_matmul_f16_f32 amp_matmul(f16 -> f32) code 2048 at
// CHECK-DAG: ipu21.codelet @fill_f32_f32 fill(f32 -> f32)
// CHECK-DAG: ipu21.buffer @mm.a_in : {{[0-9]+}} x f16 on tiles [0, {{[0-9]+}}) at
// CHECK-DAG: ipu21.buffer @mm.b_in : {{[0-9]+}} x f16 on tiles [0, {{[0-9]+}}) at
// CHECK: ipu21.compute_set @mm.zero {
// CHECK-NEXT: ipu21.vertex @fill_f32_f32 on tiles
// CHECK: ipu21.compute_set @mm.mm {
// CHECK-NEXT: ipu21.vertex @amp_matmul_f16_f32 on tiles {{.*}} (in = @mm.a_in[0, {{[0-9]+}}), weights = @mm.b_in[0, {{[0-9]+}}), out = @c[0, {{[0-9]+}})) params(accumulate = 1, k = 48,
// CHECK: ipu21.exchange @mm.chunk descriptors at
// CHECK: ipu21.send @a[0, 48)
// CHECK: ipu21.send @b[0, {{[0-9]+}}) rows 48 stride 40 to @mm.b_in
// CHECK: ipu21.program @main {
// CHECK-NEXT: ipu21.execute @mm.zero
// CHECK-NEXT: ipu21.sync
// CHECK-NEXT: ipu21.repeat 1 {
// CHECK-NEXT: ipu21.copy @mm.chunk
// CHECK-NEXT: ipu21.sync
// CHECK-NEXT: ipu21.execute @mm.mm
// CHECK-NEXT: ipu21.sync

// On two tiles the search splits k into two groups: each accumulates its
// half, the second's partial block goes to the first, which adds it to C.
// SPLIT: ipu21.buffer @mm.partial : 256 x f32 on tiles [1, 2)
// SPLIT: ipu21.buffer @mm.parts : 256 x f32 on tiles [0, 1)
// SPLIT: ipu21.vertex @amp_matmul_f16_f32 on tiles [0, 1) (in = @mm.a_in[0, 65536), weights = @mm.b_in[0, 65536), out = @c[0, 256))
// SPLIT: ipu21.vertex @amp_matmul_f16_f32 on tiles [1, 2) (in = @mm.a_in[0, 65536), weights = @mm.b_in[0, 65536), out = @mm.partial[0, 256))
// SPLIT: ipu21.send @a[0, 4096) rows 16 stride 8192 to @mm.a_in[0, 65536) on tiles [0, 1)
// SPLIT: ipu21.send @a[4096, 8192) rows 16 stride 8192 to @mm.a_in[0, 65536) on tiles [1, 2)
// SPLIT: ipu21.exchange @mm.reduce
// SPLIT-NEXT: ipu21.send @mm.partial[0, 256) from tile 1 to @mm.parts[0, 256) on tiles [0, 1)
// SPLIT: ipu21.vertex @reduce_add_f32_f32 on tiles [0, 1) (partials = @mm.parts[0, 256), out = @c[0, 256)) params(accumulate = 1, n = 256, p = 1)
// SPLIT: ipu21.repeat 1 {
// SPLIT: }
// SPLIT-NEXT: ipu21.copy @mm.reduce
// SPLIT-NEXT: ipu21.sync
// SPLIT-NEXT: ipu21.execute @mm.sum
// SPLIT-NEXT: ipu21.sync

l0uop.plan @mm pipeline_depth 1 {
  l0uop.pool @dev persistent on device capacity 64MiB
  l0uop.slot @a pool @dev offset 0 size 6144 lifetime(0, 0) : !l0uop.buf<64x48xf16>
  l0uop.slot @b pool @dev offset 8192 size 3840 lifetime(0, 0) : !l0uop.buf<48x40xf16>
  l0uop.slot @c pool @dev offset 12288 size 10240 lifetime(0, 0) : !l0uop.buf<64x40xf32>
  l0uop.kernel @mm inputs(%a = @a : !l0uop.buf<64x48xf16>, %b = @b : !l0uop.buf<48x40xf16>) outputs(%c = @c : !l0uop.buf<64x40xf32>) grid(64, 1, 1) block(40, 1, 1) shared_mem 0 {
    %i = l0uop.range 0 to 64 over group_x : index
    %j = l0uop.range 0 to 40 over local_x : index
    %zero = l0uop.const 0.0 : f32
    %k = l0uop.range 0 to 48 : index
    %pa = l0uop.index %a[%i, %k] : !l0uop.buf<64x48xf16>
    %va = l0uop.load %pa : f16
    %fa = l0uop.cast %va : f16 to f32
    %pb = l0uop.index %b[%k, %j] : !l0uop.buf<48x40xf16>
    %vb = l0uop.load %pb : f16
    %fb = l0uop.cast %vb : f16 to f32
    %p = l0uop.mul %fa, %fb : f32
    l0uop.end %k
    %s = l0uop.reduce add %p over %k init %zero : f32
    %pc = l0uop.index %c[%i, %j] : !l0uop.buf<64x40xf32>
    l0uop.store %pc, %s : f32
    l0uop.end %j
    l0uop.end %i
  }
  l0uop.stream @s0 [@mm]
}
