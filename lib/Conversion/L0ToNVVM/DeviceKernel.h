//===- DeviceKernel.h - Which l0uop kernels run on a CUDA device -*- C++ -*-===//
//
// Private to lib/Conversion/L0ToNVVM: the contract's definition of a device
// kernel, shared by the NVVM lowering and the launch search.
//
//===----------------------------------------------------------------------===//
#ifndef SYNPL_LIB_CONVERSION_L0TONVVM_DEVICEKERNEL_H
#define SYNPL_LIB_CONVERSION_L0TONVVM_DEVICEKERNEL_H

#include "synpl/Dialect/L0UOp/L0UOpOps.h"

#include "mlir/IR/SymbolTable.h"

namespace synpl::l0tonvvm {

/// A kernel binds at least one slot and every slot it binds lives in a
/// pool `on device`.
inline bool isDeviceKernel(l0uop::KernelOp kernel,
                           mlir::SymbolTable &planSymbols) {
  unsigned n = kernel.getNumInputs() + kernel.getNumOutputs();
  if (n == 0)
    return false;
  mlir::Block &body = kernel.getBody().front();
  for (unsigned a = 0; a < n; ++a) {
    auto slot = planSymbols.lookup<l0uop::SlotOp>(
        kernel.getSlotOf(body.getArgument(a)).getValue());
    auto pool = slot ? planSymbols.lookup<l0uop::PoolOp>(slot.getPool())
                     : l0uop::PoolOp();
    if (!pool || pool.getSpace() != l0uop::MemSpace::device)
      return false;
  }
  return true;
}

} // namespace synpl::l0tonvvm

#endif // SYNPL_LIB_CONVERSION_L0TONVVM_DEVICEKERNEL_H
