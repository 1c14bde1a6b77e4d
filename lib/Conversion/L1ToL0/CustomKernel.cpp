//===- CustomKernel.cpp - The kernel of an l1.kernel_call -----------------===//
//
// A user kernel (#[l0::kernel("file")]) becomes an l0uop.kernel without
// UOps: its buffers (the call's operands in order, then its result), one
// thread (a host kernel) or the launch its file states (a PTX kernel), and
// the attributes the code generators read:
//
//   custom_kernel = "relu"                    the function (PTX: the .entry)
//   custom_file   = "/abs/path/relu.ll"       resolved against the source
//   custom_format = "llvm" | "bitcode" | "object" | "ptx"
//
// Before that the file's typed boundary (KernelBoundary.h) is checked
// against the call's types: a mismatch is row L0.1 at the call, which is the
// hatch's location.
//
//===----------------------------------------------------------------------===//
#include "Emitter.h"

#include "synpl/Dialect/L0UOp/L0UOpOps.h"
#include "synpl/Dialect/L1/L1Ops.h"
#include "synpl/Support/KernelBoundary.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"

using namespace mlir;
using namespace synpl;
using namespace synpl::l1tol0;

namespace {

/// The file a location names: the first FileLineColLoc inside it.
std::string sourceFileOf(Location loc) {
  std::string file;
  loc->walk([&](Location l) {
    if (auto f = dyn_cast<FileLineColLoc>(l)) {
      file = f.getFilename().str();
      return WalkResult::interrupt();
    }
    return WalkResult::advance();
  });
  return file;
}

/// `f32`, `i32`, `ui8` ... as KernelBuffer writes element types.
std::string elementName(Type t) {
  std::string s;
  llvm::raw_string_ostream os(s);
  t.print(os);
  return s;
}

KernelBuffer bufferOf(Type type) {
  auto t = cast<RankedTensorType>(type);
  return KernelBuffer{elementName(t.getElementType()),
                      SmallVector<int64_t>(t.getShape())};
}

} // namespace

LogicalResult Emitter::emitCustomKernel(OpBuilder &b, Group &g, Launch &launch) {
  auto call = cast<l1::KernelCallOp>(g.ops.front());
  auto boundaryError = [&]() {
    hasFailed = true;
    return emitUserKernelError(call, call.getSymbol(), call.getFile());
  };

  // The file, relative to the source that wrote the hatch.
  SmallString<256> path(call.getFile());
  if (llvm::sys::path::is_relative(path)) {
    std::string source = sourceFileOf(call.getLoc());
    if (!source.empty()) {
      SmallString<256> dir(llvm::sys::path::parent_path(source));
      llvm::sys::path::append(dir, path);
      path = dir;
    }
    llvm::sys::fs::make_absolute(path);
    llvm::sys::path::remove_dots(path, /*remove_dot_dot=*/true);
  }
  KernelFileFormat format = kernelFileFormat(path);
  if (format == KernelFileFormat::Unknown) {
    boundaryError() << "the file is not a kernel: .ll or .bc (LLVM IR) or .o (an "
                       "object) for the host, .ptx for a CUDA device";
    return failure();
  }
  auto buffer = llvm::MemoryBuffer::getFile(path, /*IsText=*/false);
  if (!buffer) {
    boundaryError() << "cannot read " << path << ": " << buffer.getError().message();
    return failure();
  }

  // The boundary it states, against the call's types.
  KernelBoundary expected;
  expected.symbol = call.getSymbol().str();
  for (Value v : call.getInputs())
    expected.inputs.push_back(bufferOf(v.getType()));
  expected.outputs.push_back(bufferOf(call.getResult().getType()));
  std::optional<std::string> stated;
  if (std::optional<StringRef> given = call.getBoundary())
    stated = given->str();
  else if (format == KernelFileFormat::LLVMIR || format == KernelFileFormat::PTX)
    stated = findKernelBoundaryLine((*buffer)->getBuffer(), call.getSymbol());
  if (!stated) {
    boundaryError() << "the file states no typed boundary for " << call.getSymbol()
                    << (format == KernelFileFormat::LLVMIR || format == KernelFileFormat::PTX
                            ? "; add the line `"
                            : "; give it as the hatch's second argument, `")
                    << (format == KernelFileFormat::LLVMIR ? "; "
                        : format == KernelFileFormat::PTX  ? "// "
                                                           : "")
                    << "synpl.kernel " << expected.str()
                    << (format == KernelFileFormat::PTX ? " grid(x,y,z) block(x,y,z)" : "")
                    << "`";
    return failure();
  }
  std::string error;
  std::optional<KernelBoundary> boundary = parseKernelBoundary(*stated, error);
  if (!boundary) {
    boundaryError() << "its boundary `" << *stated << "` does not parse: " << error;
    return failure();
  }
  if (boundary->symbol != expected.symbol) {
    boundaryError() << "its boundary names " << boundary->symbol << ", not "
                    << expected.symbol;
    return failure();
  }
  auto compare = [&](ArrayRef<KernelBuffer> got, ArrayRef<KernelBuffer> want,
                     StringRef what) -> bool {
    if (got.size() != want.size()) {
      boundaryError() << "it takes " << got.size() << " " << what << " buffers, the layer "
                      << want.size() << " (expected `" << expected.str() << "`)";
      return false;
    }
    for (size_t i = 0; i < got.size(); ++i)
      if (!(got[i] == want[i])) {
        boundaryError() << what << " #" << i << " is " << got[i].str() << ", the layer's is "
                        << want[i].str() << " (expected `" << expected.str() << "`)";
        return false;
      }
    return true;
  };
  if (!compare(boundary->inputs, expected.inputs, "input") ||
      !compare(boundary->outputs, expected.outputs, "output"))
    return failure();
  bool device = format == KernelFileFormat::PTX;
  if (device != boundary->grid.has_value()) {
    boundaryError() << (device ? "a PTX kernel states its launch: grid(x,y,z) block(x,y,z)"
                               : "a host kernel runs once on one thread: its boundary "
                                 "states no grid or block");
    return failure();
  }

  // The kernel: the call's buffers in order, no UOps.
  SmallVector<Slot *> ins;
  for (Value v : call.getInputs()) {
    Slot *s = slotOf.lookup(v);
    if (!s)
      return fail(call, "an input of its user kernel has no buffer");
    ins.push_back(s);
  }
  Slot *out = slotOf.lookup(call.getResult());
  if (!out)
    return fail(call, "its user kernel's result has no buffer");
  SmallVector<Attribute> inRefs, outRefs{FlatSymbolRefAttr::get(ctx, out->name)};
  for (Slot *s : ins)
    inRefs.push_back(FlatSymbolRefAttr::get(ctx, s->name));
  std::array<int64_t, 3> grid{1, 1, 1}, block{1, 1, 1};
  if (device)
    grid = *boundary->grid, block = *boundary->block;
  Location loc = call.getLoc();
  auto kernel = l0uop::KernelOp::create(b, loc, g.name, b.getArrayAttr(inRefs),
                                        b.getArrayAttr(outRefs), ArrayRef<int64_t>(grid),
                                        ArrayRef<int64_t>(block), 0, IntegerAttr());
  Block *body = new Block();
  kernel.getBody().push_back(body);
  for (Slot *s : ins)
    body->addArgument(s->bufType(ctx), loc);
  body->addArgument(out->bufType(ctx), loc);
  kernel->setAttr("custom_kernel", b.getStringAttr(call.getSymbol()));
  kernel->setAttr("custom_file", b.getStringAttr(path));
  kernel->setAttr("custom_format", b.getStringAttr(kernelFileFormatName(format)));
  for (Slot *s : ins)
    launch.reads.push_back(s);
  launch.writes.push_back(out);
  return success();
}
