// `l0uop.init planned_steps` and `training_mode`: one f32 the runtime fills
// (the run's length in update steps; the train/eval flag).
// RUN: synpl-opt %s -split-input-file -verify-diagnostics | FileCheck %s

// CHECK: l0uop.init planned_steps @h
l0uop.plan @p pipeline_depth 1 {
  l0uop.pool @s persistent on host capacity 1KiB
  l0uop.slot @h pool @s offset 0 size 4 lifetime(0, 1) : !l0uop.buf<f32>
  l0uop.init planned_steps @h
}

// -----

l0uop.plan @p pipeline_depth 1 {
  l0uop.pool @s persistent on host capacity 1KiB
  l0uop.slot @h pool @s offset 0 size 8 lifetime(0, 1) : !l0uop.buf<2xf32>
  // expected-error @+1 {{planned_steps init fills one f32, not '!l0uop.buf<2xf32>'}}
  l0uop.init planned_steps @h
}

// -----

// `l0uop.init training_mode`: one f32, 1 while training, 0 while evaluating.
// CHECK: l0uop.init training_mode @t
l0uop.plan @p pipeline_depth 1 {
  l0uop.pool @s persistent on host capacity 1KiB
  l0uop.slot @t pool @s offset 0 size 4 lifetime(0, 1) : !l0uop.buf<f32>
  l0uop.init training_mode @t
}

// -----

l0uop.plan @p pipeline_depth 1 {
  l0uop.pool @s persistent on host capacity 1KiB
  l0uop.slot @t pool @s offset 0 size 4 lifetime(0, 1) : !l0uop.buf<i32>
  // expected-error @+1 {{training_mode init fills one f32, not '!l0uop.buf<i32>'}}
  l0uop.init training_mode @t
}
