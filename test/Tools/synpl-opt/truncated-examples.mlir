// Every example, truncated at 24 points and with random bytes flipped, gives
// a located error and exit code 1 — never a crash, assertion or hang.
// RUN: %python %S/Inputs/truncate_all.py synpl-opt %synpl_src_root/examples | FileCheck %s
// CHECK: runs over {{[0-9]+}} examples, 0 bad
