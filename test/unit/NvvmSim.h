//===- NvvmSim.h - A CPU SIMT interpreter of NVVM kernels --------*- C++ -*-===//
//
// No GPU runs in CI. The CUDA kernels the compiler emits (llvm.func
// {nvvm.kernel} of LLVM-dialect and NVVM ops, what gpu-module-to-binary
// would turn into PTX) are checked by running them here, on the CPU:
//
// * a launch of grid x block (three dimensions each), block after block;
//   the threads of a block in warps of 32 consecutive linear ids (x fastest),
//   each warp in lockstep, divergence reconverging at the immediate
//   post-dominator; warps run one after another between barriers
//   (bar.sync), a warp returning while others wait at a barrier is a fault;
// * memory: the kernel's buffers, the dynamic shared array (every extern
//   addrspace(3) global aliases its start, as in CUDA; uninitialised shared
//   memory reads as NaN / 0xff..) and per-thread allocas; every access is
//   bounds- and alignment-checked;
// * values: integers wrap to their width, floats are rounded to their type
//   after every op (f32 ops are computed in double and rounded: correctly
//   rounded for + - * / sqrt). The PTX approximate math intrinsics
//   (ex2/lg2/sin .approx, sqrt/rcp .approx) are interpreted as the exact
//   libm value rounded to f32: the structure of the code is checked, not
//   the hardware's last bits;
// * cp.async copies land at issue (`eagerCopies`) or only at
//   cp.async.wait_group (both are legal); ldmatrix .x4 and mma.sync
//   m16n8k16 / m16n8k8 (tf32) as the PTX ISA defines them.
//
// An op the interpreter does not know is a fault naming the op: never a
// silent wrong answer. Users: TiledMatmulTest.cpp, CudaKernelSimTest.cpp.
//
//===----------------------------------------------------------------------===//
#ifndef SYNPL_TEST_UNIT_NVVMSIM_H
#define SYNPL_TEST_UNIT_NVVMSIM_H

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/Dominance.h"
#include "llvm/ADT/DenseMap.h"

#include <array>
#include <cstdint>
#include <deque>
#include <map>
#include <string>
#include <vector>

namespace synpl::test {

float bf16ToFloat(uint16_t h);
uint16_t floatToBf16(float f);
float f16ToFloat(uint16_t h);
uint16_t floatToF16(float f);

/// A value of one thread: an integer (sign-extended to 64 bits), a float
/// (the exact value of its type, in a double), a pointer (a host address,
/// in `i`) or an aggregate (struct / vector elements).
struct Val {
  int64_t i = 0;
  double f = 0;
  std::vector<Val> e;
};

/// Bit width of an integer type (64 for anything else: index, pointers).
unsigned bitsOf(mlir::Type t);
/// `v` truncated to `w` bits and sign-extended back.
int64_t wrap(int64_t v, unsigned w);
/// The low `w` bits of `v`, zero-extended.
uint64_t uns(int64_t v, unsigned w);
/// `v` rounded to the float type `t` (f32, bf16, f16; f64 unchanged).
double roundTo(mlir::Type t, double v);
/// Bytes of a scalar, vector, pointer or array type.
size_t sizeOf(mlir::Type t);
Val loadScalar(mlir::Type t, const uint8_t *p);
void storeScalar(mlir::Type t, uint8_t *p, const Val &v);

/// A launch dimension.
struct Dim3 {
  int64_t x = 1, y = 1, z = 1;
  int64_t count() const { return x * y * z; }
};

/// The SIMT interpreter of one kernel's launches.
class NvvmSim {
public:
  /// Runs `func` with argument n = the address of buffers[n] (kept by
  /// reference: the kernel writes them).
  NvvmSim(mlir::LLVM::LLVMFuncOp func,
          std::vector<std::vector<uint8_t>> &buffers, int64_t sharedBytes,
          bool eagerCopies);
  /// The same with buffers given as (address, bytes).
  NvvmSim(mlir::LLVM::LLVMFuncOp func,
          std::vector<std::pair<uint8_t *, size_t>> buffers,
          int64_t sharedBytes, bool eagerCopies);

  /// Runs block `blockIdx` of a 1-D launch of `threads`-thread blocks;
  /// false (with `error`) on any fault.
  bool runBlock(int64_t blockIdx, int64_t threads) {
    return runBlock({blockIdx, 0, 0}, {blockIdx + 1, 1, 1}, {threads, 1, 1});
  }
  /// Runs block `blockIdx` of a grid x block launch.
  bool runBlock(Dim3 blockIdx, Dim3 grid, Dim3 block);
  /// Runs every block of the launch (z, y, x order, x fastest).
  bool runGrid(Dim3 grid, Dim3 block);
  /// The first fault: what, and the op it happened at.
  std::string error;

private:
  struct Copy {
    uint8_t *dst;
    std::vector<uint8_t> bytes;
  };
  struct Thread {
    llvm::DenseMap<mlir::Value, Val> vals;
    std::vector<std::vector<Copy>> groups; // committed, oldest first
    std::vector<Copy> open;
    Dim3 tid;
  };
  struct Warp {
    int first = 0, count = 0;
    mlir::Block *block = nullptr;
    mlir::Block::iterator at;
    bool done = false;
  };

  bool fail(mlir::Operation *op, const llvm::Twine &why);
  bool check(mlir::Operation *op, const uint8_t *p, size_t n, size_t align);
  /// Runs `warp` from its position until a barrier (true, positioned after
  /// it), the return (done) or a fault (false).
  bool runWarp(Warp &w);
  /// Runs lanes `mask` from the start of `block` until `stop` is reached;
  /// no barrier may be met on the way.
  bool runDivergent(mlir::Block *block, std::vector<int> mask,
                    mlir::Block *stop);
  /// Passes the successor operands of `from`'s branch into `dest`'s
  /// arguments for the lanes `mask`.
  void jump(mlir::Block *dest, mlir::ValueRange args,
            const std::vector<int> &mask);
  /// Executes the non-terminator `op` for `mask`.
  bool exec(mlir::Operation *op, const std::vector<int> &mask);
  bool execWarpOp(mlir::Operation *op, const std::vector<int> &mask);
  /// One lane (or scalar) of an element-wise op: `rt` the result's scalar
  /// type, `it` the first operand's; false when `op` is not element-wise
  /// (`known` false) or faults.
  bool execScalar(mlir::Operation *op, mlir::Type rt, mlir::Type it,
                  llvm::ArrayRef<const Val *> in, Val &r, bool &known);
  bool execIntrinsic(mlir::Operation *op, llvm::StringRef name,
                     llvm::ArrayRef<const Val *> in, mlir::Type rt, Val &r);
  void land(Thread &t, size_t keep);

  mlir::LLVM::LLVMFuncOp func;
  std::vector<std::pair<uint8_t *, size_t>> args;
  int64_t sharedBytes;
  bool eager;
  mlir::PostDominanceInfo pdom;
  std::vector<uint8_t> shared;
  std::deque<std::vector<uint8_t>> stacks; // the allocas of this block
  /// Every valid allocation: base -> bytes.
  std::map<const uint8_t *, size_t> allocs;
  std::vector<Thread> thr;
  /// llvm.mlir.addressof ops -> whether they name dynamic shared memory.
  llvm::DenseMap<mlir::Operation *, bool> sharedGlobal;
  Dim3 bid, grid, block;
};

} // namespace synpl::test

#endif // SYNPL_TEST_UNIT_NVVMSIM_H
