//===- KernelBoundary.cpp - The typed boundary of a user kernel -----------===//
#include "synpl/Support/KernelBoundary.h"
#include "synpl/Support/Property.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/Path.h"

using namespace synpl;
using llvm::StringRef;

std::string KernelBuffer::str() const {
  std::string s = element + "[";
  for (size_t i = 0; i < shape.size(); ++i)
    s += (i ? "," : "") + std::to_string(shape[i]);
  return s + "]";
}

std::string KernelBoundary::str() const {
  std::string s = symbol + "(";
  for (size_t i = 0; i < inputs.size(); ++i)
    s += (i ? ", " : "") + inputs[i].str();
  s += ") -> ";
  for (size_t i = 0; i < outputs.size(); ++i)
    s += (i ? ", " : "") + outputs[i].str();
  return s;
}

namespace {
/// A small cursor over the boundary text.
struct Cursor {
  StringRef rest;
  bool eat(StringRef token) {
    rest = rest.ltrim();
    return rest.consume_front(token);
  }
  StringRef word() {
    rest = rest.ltrim();
    size_t n = 0;
    while (n < rest.size() && (llvm::isAlnum(rest[n]) || rest[n] == '_' || rest[n] == '.' ||
                               rest[n] == '$'))
      ++n;
    StringRef w = rest.take_front(n);
    rest = rest.drop_front(n);
    return w;
  }
  std::optional<int64_t> integer() {
    rest = rest.ltrim();
    size_t n = 0;
    while (n < rest.size() && llvm::isDigit(rest[n]))
      ++n;
    int64_t v;
    if (n == 0 || rest.take_front(n).getAsInteger(10, v))
      return std::nullopt;
    rest = rest.drop_front(n);
    return v;
  }
};

bool knownElement(StringRef e) {
  return llvm::is_contained({"f16", "bf16", "f32", "f64", "i1", "i8", "i16", "i32", "i64",
                             "ui8", "ui16", "ui32", "ui64"},
                            e);
}

std::optional<KernelBuffer> buffer(Cursor &c, std::string &error) {
  KernelBuffer b;
  b.element = c.word().str();
  if (!knownElement(b.element)) {
    error = "'" + b.element + "' is not an element type (f32, f16, bf16, f64, i1, i8 ... i64, ui8 ... ui64)";
    return std::nullopt;
  }
  if (!c.eat("[")) {
    error = "expected '[' and the shape after " + b.element;
    return std::nullopt;
  }
  if (c.eat("]"))
    return b;
  do {
    std::optional<int64_t> d = c.integer();
    if (!d || *d <= 0) {
      error = "a shape is positive integers: " + b.element + "[128,256]";
      return std::nullopt;
    }
    b.shape.push_back(*d);
  } while (c.eat(","));
  if (!c.eat("]")) {
    error = "expected ']' closing the shape of a " + b.element + " buffer";
    return std::nullopt;
  }
  return b;
}

std::optional<std::array<int64_t, 3>> triple(Cursor &c, std::string &error) {
  std::array<int64_t, 3> t{1, 1, 1};
  if (!c.eat("(")) {
    error = "expected '(' and three sizes";
    return std::nullopt;
  }
  for (int i = 0; i < 3; ++i) {
    std::optional<int64_t> v = c.integer();
    if (!v || *v <= 0 || (i < 2 && !c.eat(","))) {
      error = "a launch size is three positive integers: (128, 1, 1)";
      return std::nullopt;
    }
    t[i] = *v;
  }
  if (!c.eat(")")) {
    error = "expected ')' after three sizes";
    return std::nullopt;
  }
  return t;
}
} // namespace

std::optional<KernelBoundary> synpl::parseKernelBoundary(StringRef text, std::string &error) {
  Cursor c{text.trim()};
  KernelBoundary k;
  c.eat("@");
  k.symbol = c.word().str();
  if (k.symbol.empty()) {
    error = "expected the kernel's function name";
    return std::nullopt;
  }
  if (!c.eat("(")) {
    error = "expected '(' and the input buffers after " + k.symbol;
    return std::nullopt;
  }
  if (!c.eat(")")) {
    do {
      std::optional<KernelBuffer> b = buffer(c, error);
      if (!b)
        return std::nullopt;
      k.inputs.push_back(*b);
    } while (c.eat(","));
    if (!c.eat(")")) {
      error = "expected ')' after the input buffers";
      return std::nullopt;
    }
  }
  if (!c.eat("->")) {
    error = "expected '->' and the output buffers";
    return std::nullopt;
  }
  do {
    std::optional<KernelBuffer> b = buffer(c, error);
    if (!b)
      return std::nullopt;
    k.outputs.push_back(*b);
  } while (c.eat(","));
  while (!c.rest.trim().empty()) {
    StringRef key = c.word();
    std::optional<std::array<int64_t, 3>> *slot =
        key == "grid" ? &k.grid : key == "block" ? &k.block : nullptr;
    if (!slot) {
      error = "unexpected '" + c.rest.trim().str() + "' (after the outputs: grid(...) block(...))";
      return std::nullopt;
    }
    *slot = triple(c, error);
    if (!*slot)
      return std::nullopt;
  }
  if (k.grid.has_value() != k.block.has_value()) {
    error = "a device kernel states both grid(...) and block(...)";
    return std::nullopt;
  }
  return k;
}

std::optional<std::string> synpl::findKernelBoundaryLine(StringRef fileText, StringRef symbol) {
  llvm::SmallVector<StringRef> lines;
  fileText.split(lines, '\n');
  for (StringRef line : lines) {
    size_t at = line.find("synpl.kernel");
    if (at == StringRef::npos)
      continue;
    StringRef rest = line.drop_front(at + StringRef("synpl.kernel").size()).trim();
    StringRef name = rest;
    name.consume_front("@");
    if (name.starts_with(symbol) && name.drop_front(symbol.size()).ltrim().starts_with("("))
      return rest.str();
  }
  return std::nullopt;
}

KernelFileFormat synpl::kernelFileFormat(StringRef path) {
  StringRef ext = llvm::sys::path::extension(path);
  if (ext == ".ll")
    return KernelFileFormat::LLVMIR;
  if (ext == ".bc")
    return KernelFileFormat::Bitcode;
  if (ext == ".o")
    return KernelFileFormat::Object;
  if (ext == ".ptx")
    return KernelFileFormat::PTX;
  return KernelFileFormat::Unknown;
}

StringRef synpl::kernelFileFormatName(KernelFileFormat format) {
  switch (format) {
  case KernelFileFormat::LLVMIR:
    return "llvm";
  case KernelFileFormat::Bitcode:
    return "bitcode";
  case KernelFileFormat::Object:
    return "object";
  case KernelFileFormat::PTX:
    return "ptx";
  case KernelFileFormat::Unknown:
    return "unknown";
  }
  return "unknown";
}

mlir::InFlightDiagnostic synpl::emitUserKernelError(mlir::Operation *op, StringRef symbol,
                                                   StringRef file) {
  return emitCheckError(op, Property::Safety, "L0.1")
         << "the user kernel " << symbol << " from " << file << ": ";
}
