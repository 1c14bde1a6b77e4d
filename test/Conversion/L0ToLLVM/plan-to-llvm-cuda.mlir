// CUDA kernels in the plan's tables (plan format v3): a kernel with
// device_entry (what --synpl-convert-l0uop-to-nvvm leaves) is a CUDA kernel
// record, the gpu.binary's PTX is embedded in .rodata, the header records
// the chip and the driver its PTX needs, and the gpu ops are gone.
//
// RUN: synpl-opt %s --synpl-convert-l0uop-to-llvm --synpl-convert-l0-plan-to-llvm | FileCheck %s
// RUN: synpl-opt %s --synpl-convert-l0uop-to-llvm --synpl-convert-l0-plan-to-llvm -o %t.mlir
// RUN: synpl-translate --synpl-to-object %t.mlir -o %t.o
// RUN: llvm-objdump -t %t.o | FileCheck %s --check-prefix=SYMS
// RUN: llvm-objcopy -O binary --only-section=.rodata %t.o %t.rodata
// RUN: llvm-strings %t.rodata | FileCheck %s --check-prefix=RODATA

// CHECK-NOT: gpu.binary
// CHECK-NOT: gpu.container_module
// The header: magic, version 7, name, depth 1, epochs 0, checkpoint_every
// 0, evaluate -1, device_arch 80 (sm_80), min_driver 11000 (PTX 7.0),
// steps 0, ranks 1.
// CHECK: llvm.mlir.global internal constant @synpl_plan_table(dense<"0x53594E504C414E310800000000000000{{[0-9A-F]+}}010000000000000000000000000000000000000000000000FFFFFFFFFFFFFFFF5000000000000000F82A00000000000000000000000000000100000000000000
// The kernel record: name, first_arg 0, 2 args, 1 input, 4 iterations (the
// host fallback's range), target 1 (CUDA), the entry's string offset, grid
// (2, 1, 1), block (4, 1, 1), shared_mem 0.
// CHECK-SAME: 00000000000000000200000000000000010000000000000004000000000000000100000000000000{{[0-9A-F]+}}0200000000000000010000000000000001000000000000000400000000000000010000000000000001000000000000000000000000000000
// CHECK: @synpl_plan_strings("{{.*}}p_scale\00
// The host fallback clamps its range: the fake driver calls it with
// [0, INT64_MAX).
// CHECK: llvm.func internal @p_scale.packed(%{{.*}}: !llvm.ptr, %[[B:.*]]: i64, %[[E:.*]]: i64)
// CHECK:   %[[N:.*]] = llvm.mlir.constant(4 : i64) : i64
// CHECK:   %[[OVER:.*]] = llvm.icmp "sgt" %[[E]], %[[N]] : i64
// CHECK:   %[[END:.*]] = llvm.select %[[OVER]], %[[N]], %[[E]] : i1, i64
// CHECK:   llvm.call @p_scale(%{{.*}}, %{{.*}}, %[[B]], %[[END]])
// CHECK: llvm.mlir.global internal constant @synpl_plan_device_ptx(".version 7.0\0A.target sm_80{{.*}}.visible .entry p_scale({{.*}}\00") {addr_space = 0 : i32, alignment = 64 : i64}
// CHECK-NOT: synpl_plan_device_cubin
// The descriptor: table, strings, kernels, programs, PTX and its size
// (without the NUL), no cubin.
// CHECK: llvm.mlir.global external constant @synpl_plan() {{.*}} : !llvm.struct<(ptr, i64, ptr, i64, ptr, i64, ptr, i64, ptr, i64, ptr, i64)>
// CHECK:   llvm.mlir.addressof @synpl_plan_device_ptx
// CHECK:   llvm.mlir.constant(522 : i64)

// The PTX is a kernel blob in .rodata, NUL-terminated.
// SYMS-DAG: .rodata	000000000000020b synpl_plan_device_ptx
// SYMS-DAG: g {{.*}} synpl_plan{{$}}
// RODATA: .visible .entry p_scale(

module attributes {gpu.container_module} {
  gpu.binary @p_cuda [#gpu.object<#nvvm.target<chip = "sm_80", features = "+ptx70">, assembly = ".version 7.0\0A.target sm_80\0A.address_size 64\0A\0A.visible .entry p_scale(\0A\09.param .u64 p_scale_param_0,\0A\09.param .u64 p_scale_param_1\0A)\0A{\0A\09.reg .b32 %r<2>;\0A\09.reg .f32 %f<3>;\0A\09.reg .b64 %rd<6>;\0A\09ld.param.u64 %rd1, [p_scale_param_0];\0A\09ld.param.u64 %rd2, [p_scale_param_1];\0A\09cvta.to.global.u64 %rd3, %rd1;\0A\09cvta.to.global.u64 %rd4, %rd2;\0A\09mov.u32 %r1, %tid.x;\0A\09mul.wide.u32 %rd5, %r1, 4;\0A\09add.s64 %rd3, %rd3, %rd5;\0A\09add.s64 %rd4, %rd4, %rd5;\0A\09ld.global.f32 %f1, [%rd3];\0A\09add.f32 %f2, %f1, %f1;\0A\09st.global.f32 [%rd4], %f2;\0A\09ret;\0A}\0A">]
  l0uop.plan @p pipeline_depth 1 {
    l0uop.pool @host persistent on host capacity 1KiB
    l0uop.pool @dev persistent on device capacity 1KiB
    l0uop.slot @x pool @host offset 0 size 16 lifetime(0, 1) : !l0uop.buf<4xf32>
    l0uop.slot @xd pool @dev offset 0 size 16 lifetime(0, 1) : !l0uop.buf<4xf32>
    l0uop.slot @yd pool @dev offset 256 size 16 lifetime(0, 1) : !l0uop.buf<4xf32>
    l0uop.kernel @scale inputs(%x = @xd : !l0uop.buf<4xf32>) outputs(%y = @yd : !l0uop.buf<4xf32>) grid(2, 1, 1) block(4, 1, 1) shared_mem 0 attributes {device_entry = "p_scale"} {
      %i = l0uop.range 0 to 4 over local_x : index
      %p = l0uop.index %x[%i] : !l0uop.buf<4xf32>
      %v = l0uop.load %p : f32
      %r = l0uop.add %v, %v : f32
      %q = l0uop.index %y[%i] : !l0uop.buf<4xf32>
      l0uop.store %q, %r : f32
      l0uop.end %i
    }
    l0uop.transfer @up @x -> @xd h2d bytes 16
    l0uop.stream @s0 [@up, @scale]
    l0uop.init ones @x
  }
}
