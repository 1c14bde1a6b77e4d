//===- MmaLayout.h - Fragment layouts of mma.m16n8k16 and ldmatrix -*- C++ -*-===//
//
// Private to the tiled matmul lowering. The lane -> (row, col) maps of the
// PTX ISA's "Matrix Fragments for mma.m16n8k16 with floating point type"
// (16-bit A and B, f32 C/D) and the per-lane row addresses of ldmatrix
// .x4 / .x2 that produce those fragments from shared memory. The emitter
// computes its addresses and epilogue coordinates with these functions and
// test/unit/TiledMatmulTest.cpp checks them against the ISA's figures and
// by simulating one warp's ldmatrix + mma on the CPU.
//
//===----------------------------------------------------------------------===//
#ifndef SYNPL_LIB_CONVERSION_L0TONVVM_MMALAYOUT_H
#define SYNPL_LIB_CONVERSION_L0TONVVM_MMALAYOUT_H

namespace synpl::l0tonvvm::mma {

struct RowCol {
  int row, col;
  friend bool operator==(RowCol a, RowCol b) {
    return a.row == b.row && a.col == b.col;
  }
};

/// A fragment (16x16, row-major "row"): element a<reg> (reg 0..7, two per
/// 32-bit register) of `lane` is A[row][col] (row = m, col = k).
constexpr RowCol aElement(int lane, int reg) {
  int group = lane >> 2, inGroup = lane & 3;
  return {group + 8 * ((reg >> 1) & 1), inGroup * 2 + (reg & 1) + 8 * (reg >> 2)};
}

/// B fragment (16x8, "col"): element b<reg> (reg 0..3) of `lane` is
/// B[row][col] (row = k, col = n).
constexpr RowCol bElement(int lane, int reg) {
  int group = lane >> 2, inGroup = lane & 3;
  return {inGroup * 2 + (reg & 1) + 8 * (reg >> 1), group};
}

/// C/D fragment (16x8, f32): element c<reg> (reg 0..3) of `lane` is
/// C[row][col] (row = m, col = n).
constexpr RowCol cElement(int lane, int reg) {
  int group = lane >> 2, inGroup = lane & 3;
  return {group + 8 * (reg >> 1), inGroup * 2 + (reg & 1)};
}

/// mma.m16n8k8 with .tf32 operands ("Matrix Fragments for mma.m16n8k8",
/// tf32): A (16x8) element a<reg> (reg 0..3) of `lane` is A[row][col]; the
/// C/D fragment is cElement's.
constexpr RowCol aElementTf32(int lane, int reg) {
  int group = lane >> 2, inGroup = lane & 3;
  return {group + 8 * (reg & 1), inGroup + 4 * (reg >> 1)};
}

/// tf32 B (8x8): element b<reg> (reg 0..1) of `lane` is B[row][col]
/// (row = k, col = n).
constexpr RowCol bElementTf32(int lane, int reg) {
  int group = lane >> 2, inGroup = lane & 3;
  return {inGroup + 4 * reg, group};
}

/// ldmatrix: lane l supplies the address of row (l % 8) of 8x8 matrix
/// (l / 8); matrix q lands in 32-bit register q of every lane, lane t
/// holding elements [t / 4][2 (t % 4) + {0, 1}] of the matrix (.trans:
/// of its transpose).
///
/// The operand of an mma seen as a "fragment matrix" F[r][k]: r = m for A
/// (16 rows), r = n for B (8 rows per n8 block). Every fragment register
/// holds F[t/4][2(t%4) + e] of one 8x8 block of F, so ldmatrix (non-trans)
/// of F's 8x8 blocks stored [r][k] yields it, and ldmatrix.trans of the
/// blocks stored [k][r] yields it too. fragmentBlock gives the (r, k)
/// origin of the 8x8 block that register q of an x4 load holds:
///  - A (16x16): a0a1 = rows 0-7/k 0-7, a2a3 = rows 8-15/k 0-7,
///               a4a5 = rows 0-7/k 8-15, a6a7 = rows 8-15/k 8-15.
///  - B (two n8 blocks x k16): b0b1 of n-block 0 = n 0-7/k 0-7, b2b3 of
///    n-block 0 = n 0-7/k 8-15, then the same for n-block 1 (n 8-15).
/// k is in 16-bit units: a 32-bit (tf32) operand stored [r][k] reads as
/// pairs of b16, so the same blocks give tf32 fragments with k halved --
/// A: a0 = rows 0-7/k 0-3, a1 = rows 8-15/k 0-3, a2 = rows 0-7/k 4-7,
/// a3 = rows 8-15/k 4-7; B: b0, b1 of n-block 0 = k 0-3, 4-7; then n-block 1.
enum class Operand { A, B };
constexpr RowCol fragmentBlock(Operand op, int q) {
  return op == Operand::A ? RowCol{8 * (q & 1), 8 * (q >> 1)}
                          : RowCol{8 * (q >> 1), 8 * (q & 1)};
}

/// The (r, k) element of F whose address `lane` passes to an ldmatrix .x4
/// that loads the 16x16 piece of F at (r0, k0) (A: one m16 x k16 tile; B:
/// two n8 blocks x k16). With shared memory [r][k] it is the address of
/// S[r][k] (non-trans); with [k][r], of S[k][r] with .trans.
constexpr RowCol ldmatrixRowAddress(Operand op, int lane, int r0 = 0,
                                    int k0 = 0, bool trans = false) {
  RowCol blk = fragmentBlock(op, (lane >> 3) & 3);
  int i = lane & 7;
  // Non-trans: lane gives row i of the block (an r); trans: row i of the
  // stored block is a k.
  return trans ? RowCol{r0 + blk.row, k0 + blk.col + i}
               : RowCol{r0 + blk.row + i, k0 + blk.col};
}

} // namespace synpl::l0tonvvm::mma

#endif // SYNPL_LIB_CONVERSION_L0TONVVM_MMALAYOUT_H
