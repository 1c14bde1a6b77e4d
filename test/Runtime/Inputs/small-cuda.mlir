// A small GPU-shaped plan as --synpl-convert-l0uop-to-nvvm (without
// keep-uops) and gpu-module-to-binary leave it: a host input copied to the
// device, one CUDA kernel summing it (its UOps erased: no host fallback),
// the sum copied back and reported as the "loss". On a GPU it reports 4
// (four ones); on the fake driver the kernel is not run and the device slot
// keeps its zeros.
module attributes {gpu.container_module} {
  gpu.binary @small_cuda [#gpu.object<#nvvm.target<chip = "sm_80", features = "+ptx70">, assembly = ".version 7.0\0A.target sm_80\0A.address_size 64\0A\0A.visible .entry small_sum(\0A\09.param .u64 small_sum_param_0,\0A\09.param .u64 small_sum_param_1\0A)\0A{\0A\09.reg .pred %p<2>;\0A\09.reg .b32 %r<2>;\0A\09.reg .f32 %f<8>;\0A\09.reg .b64 %rd<3>;\0A\09mov.u32 %r1, %tid.x;\0A\09setp.ne.s32 %p1, %r1, 0;\0A\09@%p1 bra DONE;\0A\09ld.param.u64 %rd1, [small_sum_param_0];\0A\09ld.param.u64 %rd2, [small_sum_param_1];\0A\09cvta.to.global.u64 %rd1, %rd1;\0A\09cvta.to.global.u64 %rd2, %rd2;\0A\09ld.global.f32 %f1, [%rd1];\0A\09ld.global.f32 %f2, [%rd1+4];\0A\09ld.global.f32 %f3, [%rd1+8];\0A\09ld.global.f32 %f4, [%rd1+12];\0A\09add.f32 %f5, %f1, %f2;\0A\09add.f32 %f6, %f3, %f4;\0A\09add.f32 %f7, %f5, %f6;\0A\09st.global.f32 [%rd2], %f7;\0ADONE:\0A\09ret;\0A}\0A">]
  l0uop.plan @small pipeline_depth 1 {
    l0uop.pool @host persistent on host capacity 1KiB
    l0uop.pool @dev persistent on device capacity 1KiB
    l0uop.slot @x pool @host offset 0 size 16 lifetime(0, 1) : !l0uop.buf<4xf32>
    l0uop.slot @out pool @host offset 256 size 4 lifetime(0, 1) : !l0uop.buf<1xf32>
    l0uop.slot @xd pool @dev offset 0 size 16 lifetime(0, 1) : !l0uop.buf<4xf32>
    l0uop.slot @yd pool @dev offset 256 size 4 lifetime(0, 1) : !l0uop.buf<1xf32>
    l0uop.kernel @sum inputs(%x = @xd : !l0uop.buf<4xf32>) outputs(%y = @yd : !l0uop.buf<1xf32>) grid(1, 1, 1) block(32, 1, 1) shared_mem 0 attributes {device_entry = "small_sum"} {
    }
    l0uop.transfer @up @x -> @xd h2d bytes 16
    l0uop.transfer @down @yd -> @out d2h bytes 4
    l0uop.stream @s0 [@up, @sum, @down]
    l0uop.init ones @x
    l0uop.report "loss" @out
  }
}
