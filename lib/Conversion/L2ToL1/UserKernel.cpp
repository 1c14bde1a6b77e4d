//===- UserKernel.cpp - #[l0::kernel("file")] on a layer -----------------===//
//
// The escape hatch that replaces a layer's kernel with a user-supplied one.
// The layer's forward output becomes an l1.kernel_call of the file's
// function on the layer's inputs and then its parameters; the generated
// forward stays only where the layer's backward reads its intermediates (the
// backward is still the layer's own rule, so the kernel must compute the
// layer's function). The call is opaque: L1 -> L0 gives it a kernel of its
// own and checks the file's typed boundary.
//
//   #[l0::kernel("relu.ll")]                        function relu
//   #[l0::kernel("k.ll", "my_relu")]                function my_relu
//   #[l0::kernel("k.o", "relu(f32[8,16]) -> f32[8,16]")]   an object file:
//                                                   the boundary in the hatch
//
//===----------------------------------------------------------------------===//
#include "AutodiffRules.h"

#include "synpl/Dialect/L1/L1Ops.h"
#include "synpl/Dialect/L3/L3Ops.h"

#include "llvm/Support/Path.h"

using namespace mlir;
using namespace synpl;
using namespace synpl::l2tol1::detail;

namespace {

/// The hatch's arguments: top-level comma-separated, quotes removed.
SmallVector<std::string> hatchArgs(StringRef text) {
  SmallVector<std::string> args;
  std::string cur;
  int depth = 0;
  bool quoted = false;
  for (char c : text) {
    if (c == '"') {
      quoted = !quoted;
      continue;
    }
    if (!quoted && (c == '(' || c == '['))
      ++depth;
    if (!quoted && (c == ')' || c == ']'))
      --depth;
    if (!quoted && depth == 0 && c == ',') {
      args.push_back(StringRef(cur).trim().str());
      cur.clear();
      continue;
    }
    cur += c;
  }
  if (!StringRef(cur).trim().empty())
    args.push_back(StringRef(cur).trim().str());
  return args;
}

/// `a` is an #[l0::kernel(...)] hint.
bool isUserKernelHint(Attribute a) {
  auto hint = dyn_cast<l3::HintAttr>(a);
  return hint && hint.getLayer() == "l0" && hint.getDirective() == "kernel";
}

} // namespace

bool synpl::l2tol1::detail::hasUserKernelHint(Operation *op) {
  auto hints = op->getAttrOfType<ArrayAttr>("hints");
  return hints && llvm::any_of(hints, isUserKernelHint);
}

FailureOr<std::optional<UserKernelHint>> synpl::l2tol1::detail::userKernelHint(Operation *op) {
  auto hints = op->getAttrOfType<ArrayAttr>("hints");
  if (!hints)
    return std::optional<UserKernelHint>();
  std::optional<UserKernelHint> found;
  for (Attribute a : hints) {
    if (!isUserKernelHint(a))
      continue;
    auto hint = cast<l3::HintAttr>(a);
    if (found)
      return op->emitError() << "two #[l0::kernel] hatches on one layer";
    SmallVector<std::string> args = hatchArgs(hint.getArgs());
    if (args.empty() || args.size() > 2 || args[0].empty())
      return op->emitError() << "escape hatch " << hint.spelled()
                             << ": write #[l0::kernel(\"file\")], #[l0::kernel(\"file\", "
                                "\"function\")] or #[l0::kernel(\"file\", \"function(types) "
                                "-> type\")]";
    UserKernelHint k;
    k.file = args[0];
    k.symbol = llvm::sys::path::stem(k.file).str();
    if (args.size() == 2) {
      StringRef second = args[1];
      size_t paren = second.find('(');
      if (paren == StringRef::npos) {
        k.symbol = second.str();
      } else {
        k.boundary = second.str();
        k.symbol = second.take_front(paren).trim().ltrim('@').str();
      }
    }
    found = k;
  }
  return found;
}

Value synpl::l2tol1::detail::emitUserKernel(Emitter &e, const UserKernelHint &hint,
                                            ValueRange operands, Type result) {
  OpBuilder &b = e.builder();
  auto call = l1::KernelCallOp::create(
      b, e.getLoc(), result, b.getStringAttr(hint.symbol), b.getStringAttr(hint.file),
      hint.boundary ? b.getStringAttr(*hint.boundary) : StringAttr(), operands);
  return call.getResult();
}
