// The CUDA part of --synpl-convert-l0-plan-to-llvm refuses, with a located
// error, what the runtime could not launch.
// RUN: synpl-opt %s -split-input-file -verify-diagnostics --synpl-convert-l0-plan-to-llvm

// A device entry the PTX does not define (cuModuleGetFunction would fail at
// run time).
module attributes {gpu.container_module} {
  gpu.binary @p_cuda [#gpu.object<#nvvm.target<chip = "sm_80">, assembly = ".version 7.0\0A.target sm_80\0A.address_size 64\0A.visible .entry p_k()\0A{\0A\09ret;\0A}\0A">]
  l0uop.plan @p pipeline_depth 1 {
    l0uop.pool @dev persistent on device capacity 1KiB
    l0uop.slot @x pool @dev offset 0 size 16 lifetime(0, 1) : !l0uop.buf<4xf32>
    // expected-error @+1 {{lowered 2 of 4 ops; not lowered: l0uop.kernel at}}
    l0uop.kernel @k inputs() outputs(%x = @x : !l0uop.buf<4xf32>) grid(1, 1, 1) block(4, 1, 1) shared_mem 0 attributes {device_entry = "p_nope"} {
    }
    l0uop.stream @s0 [@k]
  }
}

// -----

// CUDA kernels but no compiled module.
module {
  // expected-error @+1 {{the plan has CUDA kernels (device_entry) but the module has no gpu.binary holding them}}
  l0uop.plan @p pipeline_depth 1 {
    l0uop.pool @dev persistent on device capacity 1KiB
    l0uop.slot @x pool @dev offset 0 size 16 lifetime(0, 1) : !l0uop.buf<4xf32>
    l0uop.kernel @k inputs() outputs(%x = @x : !l0uop.buf<4xf32>) grid(1, 1, 1) block(4, 1, 1) shared_mem 0 attributes {device_entry = "p_k"} {
    }
    l0uop.stream @s0 [@k]
  }
}

// -----

// A chip CudaTarget.h does not know (no driver version to check for).
module attributes {gpu.container_module} {
  // expected-error @+1 {{unknown CUDA chip 'sm_35' (known: sm_80, sm_86, sm_89, sm_90, sm_90a)}}
  gpu.binary @p_cuda [#gpu.object<#nvvm.target<chip = "sm_35">, assembly = ".version 7.0\0A.target sm_35\0A.address_size 64\0A.visible .entry p_k()\0A{\0A\09ret;\0A}\0A">]
  l0uop.plan @p pipeline_depth 1 {
    l0uop.pool @dev persistent on device capacity 1KiB
    l0uop.slot @x pool @dev offset 0 size 16 lifetime(0, 1) : !l0uop.buf<4xf32>
    l0uop.kernel @k inputs() outputs(%x = @x : !l0uop.buf<4xf32>) grid(1, 1, 1) block(4, 1, 1) shared_mem 0 attributes {device_entry = "p_k"} {
    }
    l0uop.stream @s0 [@k]
  }
}

// -----

// A gpu.module not yet compiled by gpu-module-to-binary.
module attributes {gpu.container_module} {
  // expected-error @+1 {{gpu.module @p_cuda is not compiled yet (run gpu-module-to-binary first)}}
  gpu.module @p_cuda [#nvvm.target<chip = "sm_80">] {
    llvm.func @p_k() attributes {nvvm.kernel} {
      llvm.return
    }
  }
  l0uop.plan @p pipeline_depth 1 {
    l0uop.pool @dev persistent on device capacity 1KiB
    l0uop.slot @x pool @dev offset 0 size 16 lifetime(0, 1) : !l0uop.buf<4xf32>
    l0uop.kernel @k inputs() outputs(%x = @x : !l0uop.buf<4xf32>) grid(1, 1, 1) block(4, 1, 1) shared_mem 0 attributes {device_entry = "p_k"} {
    }
    l0uop.stream @s0 [@k]
  }
}
