"""wide_kernel.py N: an L0 plan whose one kernel binds N buffers (N - 1
inputs and one output, the sum of the inputs' first elements)."""
import sys

n = int(sys.argv[1])
print("l0uop.plan @p pipeline_depth 1 {")
print("  l0uop.pool @m arena on host capacity 1MiB")
for i in range(n):
    print(f"  l0uop.slot @s{i} pool @m offset {256 * i} size 4 lifetime(0, 1) : !l0uop.buf<1xf32>")
ins = ", ".join(f"%a{i} = @s{i} : !l0uop.buf<1xf32>" for i in range(n - 1))
print(f"  l0uop.kernel @k inputs({ins}) outputs(%o = @s{n - 1} : !l0uop.buf<1xf32>)"
      " grid(1, 1, 1) block(1, 1, 1) shared_mem 0 {")
print("    %z = l0uop.const 0 : index")
print("    %acc0 = l0uop.const 0.0 : f32")
for i in range(n - 1):
    print(f"    %p{i} = l0uop.index %a{i}[%z] : !l0uop.buf<1xf32>")
    print(f"    %v{i} = l0uop.load %p{i} : f32")
    print(f"    %acc{i + 1} = l0uop.add %acc{i}, %v{i} : f32")
print("    %po = l0uop.index %o[%z] : !l0uop.buf<1xf32>")
print(f"    l0uop.store %po, %acc{n - 1} : f32")
print("  }")
print("}")
