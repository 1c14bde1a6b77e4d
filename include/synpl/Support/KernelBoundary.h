//===- KernelBoundary.h - The typed boundary of a user kernel ----*- C++ -*-===//
//
// A user-supplied kernel (the escape hatch #[l0::kernel("file")]) states the
// buffers it reads and writes in one line of its file, in a comment:
//
//   ; synpl.kernel relu(f32[128,256]) -> f32[128,256]                (LLVM IR)
//   // synpl.kernel relu(f32[128,256]) -> f32[128,256] grid(128,1,1) block(256,1,1)  (PTX)
//
// (or in the hatch's second argument, for a file that cannot hold one: an
// object or bitcode file). The compiler checks it against the op the kernel
// replaces and against the function the file defines. See docs/kernels.md.
//
//===----------------------------------------------------------------------===//
#ifndef SYNPL_SUPPORT_KERNELBOUNDARY_H
#define SYNPL_SUPPORT_KERNELBOUNDARY_H

#include "mlir/IR/Diagnostics.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"

#include <array>
#include <optional>
#include <string>

namespace synpl {

/// One dense row-major buffer: `f32[128,256]` (`f32[]` for one element).
struct KernelBuffer {
  std::string element;
  llvm::SmallVector<int64_t> shape;
  std::string str() const;
  bool operator==(const KernelBuffer &o) const {
    return element == o.element && shape == o.shape;
  }
};

struct KernelBoundary {
  std::string symbol;
  llvm::SmallVector<KernelBuffer> inputs, outputs;
  /// A device kernel's launch (PTX); none for a host kernel.
  std::optional<std::array<int64_t, 3>> grid, block;
  std::string str() const;
};

/// Parses `symbol(type, ...) -> type, ... [grid(x,y,z) block(x,y,z)]`;
/// none, with `error` set, when it is not that.
std::optional<KernelBoundary> parseKernelBoundary(llvm::StringRef text, std::string &error);

/// The text after `synpl.kernel` on the line of `fileText` that states
/// `symbol`'s boundary; none when no line does.
std::optional<std::string> findKernelBoundaryLine(llvm::StringRef fileText,
                                                  llvm::StringRef symbol);

/// The error of a user kernel that breaks its contract, at `op` (the hatch's
/// layer or its kernel): `[safety] L0.1: the user kernel <symbol> from
/// <file>: `, the caller streaming the rest.
mlir::InFlightDiagnostic emitUserKernelError(mlir::Operation *op, llvm::StringRef symbol,
                                             llvm::StringRef file);

/// What a kernel file holds, by its extension.
enum class KernelFileFormat { LLVMIR, Bitcode, Object, PTX, Unknown };
KernelFileFormat kernelFileFormat(llvm::StringRef path);
llvm::StringRef kernelFileFormatName(KernelFileFormat format);

} // namespace synpl

#endif // SYNPL_SUPPORT_KERNELBOUNDARY_H
