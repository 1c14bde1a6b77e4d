// RUN: not synpl-translate --synpl-ipu21-to-program %s -split-input-file 2>&1 | FileCheck %s
// What the translation refuses, each with a located error.

// CHECK: error: has no ipu21.program @main to run
ipu21.graph @g target #ipu21.target<arch = "ipu21", tiles = 8, bytes_per_tile = 638976,
    element_bytes = 16384, workers = 6, clock_hz = 1490000000, sram_base = 311296,
    exec_end = 524288, interleaved_begin = 524288, sram_end = 950272, rpt_count_max = 65535> {
  ipu21.program @other {
  }
}

// -----

// CHECK: error: a program file holds one ipu21.graph; this module has several
ipu21.graph @a target #ipu21.target<arch = "ipu21", tiles = 8, bytes_per_tile = 638976,
    element_bytes = 16384, workers = 6, clock_hz = 1490000000, sram_base = 311296,
    exec_end = 524288, interleaved_begin = 524288, sram_end = 950272, rpt_count_max = 65535> {
}
ipu21.graph @b target #ipu21.target<arch = "ipu21", tiles = 8, bytes_per_tile = 638976,
    element_bytes = 16384, workers = 6, clock_hz = 1490000000, sram_base = 311296,
    exec_end = 524288, interleaved_begin = 524288, sram_end = 950272, rpt_count_max = 65535> {
}

// -----

// CHECK: error: expected an ipu21.graph (or a module holding one)
module @no_graph {
}
