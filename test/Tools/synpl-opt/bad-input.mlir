// Bad input never crashes synpl-opt: it gives a located diagnostic and a
// non-zero exit. Inputs are made on the fly: truncated IR, binary garbage,
// an unknown op of our dialects, an empty file.

// RUN: printf 'module {\n  l1.system @s {\n' > %t.truncated.mlir
// RUN: not synpl-opt %t.truncated.mlir 2>&1 | FileCheck %s --check-prefix=TRUNC
// TRUNC: truncated.mlir:{{[0-9]+}}:{{[0-9]+}}: error:

// RUN: head -c 4096 %S/../../../CMakeLists.txt | gzip -c > %t.garbage.mlir
// RUN: not synpl-opt %t.garbage.mlir 2>&1 | FileCheck %s --check-prefix=GARBAGE
// GARBAGE: garbage.mlir:{{[0-9]+}}:{{[0-9]+}}: error:

// RUN: printf '"l3.no_such_op"() : () -> ()\n' > %t.unknown.mlir
// RUN: not synpl-opt %t.unknown.mlir 2>&1 | FileCheck %s --check-prefix=UNKNOWN
// UNKNOWN: unknown.mlir:1:1: error: {{.*}}l3.no_such_op

// RUN: printf '' > %t.empty.mlir
// RUN: synpl-opt %t.empty.mlir | FileCheck %s --check-prefix=EMPTY
// EMPTY: module
