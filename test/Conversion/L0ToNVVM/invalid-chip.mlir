// RUN: synpl-opt %s -verify-diagnostics --synpl-convert-l0uop-to-nvvm=chip=sm_12
// RUN: synpl-opt %s -verify-diagnostics --synpl-l0-tune-launch=chip=sm_12

// An unknown chip names the known ones.
// expected-error @+1 {{unknown CUDA chip 'sm_12'; known: sm_80, sm_86, sm_89, sm_90, sm_90a}}
module {
}
