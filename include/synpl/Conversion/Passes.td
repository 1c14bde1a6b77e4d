//===- Passes.td - synplexum lowerings between layers ------*- tablegen -*-===//
//
// One pass per lowering boundary (lib/Conversion/<A>To<B>/). A lowering
// converts everything or fails with
//   lowered N of M ops; not lowered: <op> at <loc>: <why>
// never leaving a partial program.
//
//===----------------------------------------------------------------------===//
#ifndef SYNPL_CONVERSION_PASSES_TD
#define SYNPL_CONVERSION_PASSES_TD

include "mlir/Pass/PassBase.td"

//===----------------------------------------------------------------------===//
// L1ToL0
//===----------------------------------------------------------------------===//

//===----------------------------------------------------------------------===//
// L0ToLLVM
//===----------------------------------------------------------------------===//

#endif // SYNPL_CONVERSION_PASSES_TD
