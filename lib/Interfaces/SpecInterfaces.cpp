//===- SpecInterfaces.cpp - What a lower layer reads of a spec -----------===//

#include "synpl/Interfaces/SpecInterfaces.h"

using namespace mlir;

#include "synpl/Interfaces/SpecAttrInterfaces.cpp.inc"
#include "synpl/Interfaces/SpecOpInterfaces.cpp.inc"
#include "synpl/Interfaces/SpecTypeInterfaces.cpp.inc"

std::optional<synpl::ExampleShape> synpl::exampleShape(Type domain) {
  if (auto tensor = dyn_cast<RankedTensorType>(domain))
    return ExampleShape{SmallVector<int64_t>(tensor.getShape()), tensor.getElementType()};
  if (auto example = dyn_cast<ExampleDomainTypeInterface>(domain)) {
    FailureOr<ExampleShape> shape = example.getExampleShape();
    if (succeeded(shape))
      return *shape;
  }
  return std::nullopt;
}
