// The training loop's defaults on l0uop.plan (written into the plan
// header for the runtime), round-tripped; then their ranges.
// RUN: synpl-opt %s -split-input-file -verify-diagnostics | FileCheck %s

// CHECK: l0uop.plan @p pipeline_depth 2 epochs 3 evaluate "t10k" checkpoint_every 500 {
l0uop.plan @p pipeline_depth 2 epochs 3 evaluate "t10k" checkpoint_every 500 {
  l0uop.pool @s persistent on host capacity 1KiB
}

// -----

// expected-error @+1 {{epochs must be at least 1, got 0}}
l0uop.plan @p pipeline_depth 1 epochs 0 {
  l0uop.pool @s persistent on host capacity 1KiB
}

// -----

// expected-error @+1 {{checkpoint_every must be at least 0, got -3}}
l0uop.plan @p pipeline_depth 1 checkpoint_every -3 {
  l0uop.pool @s persistent on host capacity 1KiB
}
