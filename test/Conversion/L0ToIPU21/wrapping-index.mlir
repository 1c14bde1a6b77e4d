// RUN: synpl-opt %s --synpl-convert-l0uop-to-ipu21="tiles=8" --synpl-search-report=text 2>%t.search | FileCheck %s
// RUN: FileCheck %s --check-prefix=SEARCH < %t.search
// An output index built with div and mod wraps: y[i / 8, i % 8]. A piece of
// the RANGE cut across a wrap (i in [6, 9)) has a window spanning whole
// rows, which its neighbours write too, though the first two pieces
// ([0, 3), [3, 6)) write apart. The planner checks every neighbouring pair
// when an index wraps, so 8 pieces of 3 are rejected and 6 pieces of 4
// (which never cross a row) win; each element of y is written by one tile.
// SEARCH: search IPU21 tiles @unflatten: {{.*}} winner: 6 tiles: 6 pieces of 4 iterations
// SEARCH: outputs-apart
// CHECK-LABEL: ipu21.graph @p
// CHECK: ipu21.tensor @y : tensor<3x8xf32> mapping {0: [0, 4), 1: [4, 8), 2: [8, 12), 3: [12, 16), 4: [16, 20), 5: [20, 24)}
l0uop.plan @p pipeline_depth 1 {
  l0uop.pool @dev persistent on device capacity 1MiB
  l0uop.slot @x pool @dev offset 0 size 96 lifetime(0, 0) : !l0uop.buf<24xf32>
  l0uop.slot @y pool @dev offset 256 size 96 lifetime(0, 0) : !l0uop.buf<3x8xf32>
  l0uop.kernel @unflatten inputs(%x = @x : !l0uop.buf<24xf32>) outputs(%y = @y : !l0uop.buf<3x8xf32>) grid(24, 1, 1) block(1, 1, 1) shared_mem 0 {
    %i = l0uop.range 0 to 24 over group_x : index
    %c8 = l0uop.const 8 : index
    %r = l0uop.div %i, %c8 : index
    %c = l0uop.mod %i, %c8 : index
    %px = l0uop.index %x[%i] : !l0uop.buf<24xf32>
    %v = l0uop.load %px : f32
    %py = l0uop.index %y[%r, %c] : !l0uop.buf<3x8xf32>
    l0uop.store %py, %v : f32
    l0uop.end %i
  }
  l0uop.stream @s0 [@unflatten]
}
