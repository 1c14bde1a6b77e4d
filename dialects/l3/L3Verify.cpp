//===- L3Verify.cpp - Reference-resolving checks of the l3 dialect ------===//
//
// The checks that follow symbol references, run from
// SymbolUserOpInterface::verifySymbolUses once the module's symbol table is
// known:
//
//   L3.1 safety       ref resolution       every ref names an existing data
//                                          field, model member, loss or term
//   L3.2 consistency  domain compatibility the domains a model or term
//                                          combines agree
//   L3.3 safety       loss signature       terms read only what a model
//                                          exposes (@in, @out, @params)
//   L3.4 consistency  constraint agreement causal/autoregressive agree with
//                                          the model's domains
//   L3.5 resource     finiteness           no loss reads itself, directly or
//                                          through other losses
//
// Every check reports and returns failure instead of assuming that an earlier
// check has passed: the op verifiers of the declarations a ref names may not
// have run yet.
//
//===----------------------------------------------------------------------===//
#include "L3VerifyUtils.h"
#include "synpl/Dialect/L3/L3Ops.h"
#include "synpl/Support/Property.h"

#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/STLExtras.h"

using namespace mlir;
using namespace synpl;
using namespace synpl::l3;

//===----------------------------------------------------------------------===//
// Resolution
//===----------------------------------------------------------------------===//

namespace {
/// A value a loss term or goal reads.
struct ReadValue {
  enum Kind { Field, ModelIn, ModelOut, ModelParams, Loss, LossTerm } kind;
  /// The op that declares it: the field, model, loss or term.
  Operation *decl;
  /// Its domain; null for model parameters, and for a model input whose
  /// field does not resolve (the model reports that).
  Type domain;

  bool isParams() const { return kind == ModelParams; }
};
} // namespace

static StringRef describe(ReadValue::Kind kind) {
  switch (kind) {
  case ReadValue::Field:
    return "a data field";
  case ReadValue::ModelIn:
    return "a model input";
  case ReadValue::ModelOut:
    return "a model output";
  case ReadValue::ModelParams:
    return "model parameters";
  case ReadValue::Loss:
    return "a loss";
  case ReadValue::LossTerm:
    return "a loss term";
  }
  return "";
}

/// The symbol table L3 declarations live in: the enclosing module.
static Operation *getScope(Operation *op) {
  return op->getParentOfType<ModuleOp>();
}

/// `; did you mean @objective?` when a declaration's name is close to `name`.
static std::string suggest(Operation *scope, StringRef name) {
  if (!scope)
    return "";
  StringRef best;
  unsigned bestDistance = std::max<unsigned>(1, name.size() / 3) + 1;
  for (Block &block : scope->getRegion(0))
    for (Operation &op : block) {
      auto symName =
          op.getAttrOfType<StringAttr>(SymbolTable::getSymbolAttrName());
      if (!symName)
        continue;
      unsigned distance = name.edit_distance(symName.getValue());
      if (distance < bestDistance && distance < name.size()) {
        bestDistance = distance;
        best = symName.getValue();
      }
    }
  if (best.empty())
    return "";
  return ("; did you mean @" + best + "?").str();
}

/// The names of the fields of `data`, for notes: "@images, @labels".
static std::string listSymbols(Region &region) {
  if (region.empty())
    return "none";
  Block &body = region.front();
  std::string text;
  llvm::raw_string_ostream os(text);
  bool first = true;
  for (Operation &op : body)
    if (auto name =
            op.getAttrOfType<StringAttr>(SymbolTable::getSymbolAttrName())) {
      os << (first ? "" : ", ") << "@" << name.getValue();
      first = false;
    }
  return first ? "none" : text;
}

/// Resolves a ref read by a loss term or a goal (`role` says which argument:
/// "predicted", "goal target", ...). Reports L3.1 for a dangling ref and
/// L3.3 for a read of something a model does not expose.
static FailureOr<ReadValue> resolveRead(Operation *user, SymbolRefAttr ref,
                                        StringRef role,
                                        SymbolTableCollection &symbols) {
  Operation *scope = getScope(user);
  if (!scope)
    return emitCheckError(user, Property::Safety, "L3.1")
           << role << " " << ref
           << " cannot be resolved outside a module";
  StringAttr root = ref.getRootReference();
  ArrayRef<FlatSymbolRefAttr> nested = ref.getNestedReferences();
  Operation *decl = symbols.lookupSymbolIn(scope, root);
  if (!decl)
    return emitCheckError(user, Property::Safety, "L3.1")
           << role << " " << ref << " does not resolve: there is no "
           << "declaration @" << root.getValue()
           << suggest(scope, root.getValue());

  if (auto data = dyn_cast<DataOp>(decl)) {
    if (nested.empty()) {
      InFlightDiagnostic diag = emitCheckError(user, Property::Safety, "L3.3")
                                << role << " " << ref
                                << " reads data declaration @"
                                << root.getValue()
                                << " as a whole; read one of its fields";
      diag.attachNote(data.getLoc())
          << "@" << root.getValue() << " has fields "
          << listSymbols(data.getBody());
      return diag;
    }
    FieldOp field = data.lookupField(nested[0].getValue());
    if (!field || nested.size() > 1) {
      InFlightDiagnostic diag = emitCheckError(user, Property::Safety, "L3.1")
                                << role << " " << ref << " does not resolve: ";
      if (!field)
        diag << "data @" << root.getValue() << " has no field @"
             << nested[0].getValue();
      else
        diag << "field " << SymbolRefAttr::get(root, nested.take_front())
             << " has no members";
      diag.attachNote(data.getLoc())
          << "@" << root.getValue() << " has fields "
          << listSymbols(data.getBody());
      return diag;
    }
    TypeAttr domain = field.getDomainAttr();
    return ReadValue{ReadValue::Field, field,
                     domain ? domain.getValue() : Type()};
  }

  if (auto model = dyn_cast<ModelOp>(decl)) {
    StringRef member = nested.empty() ? "" : nested[0].getValue();
    if (nested.size() != 1 || !ModelOp::isExposedMember(member)) {
      InFlightDiagnostic diag = emitCheckError(user, Property::Safety, "L3.3")
                                << role << " " << ref;
      if (nested.empty())
        diag << " reads model @" << root.getValue()
             << " as a whole; read one of its members";
      else if (nested.size() == 1)
        diag << " reads @" << member << ", which model @" << root.getValue()
             << " does not expose";
      else
        diag << " reads a member of @" << member << ", which has no members";
      diag.attachNote(model.getLoc())
          << "model @" << root.getValue()
          << " exposes @in, @out and @params";
      return diag;
    }
    if (member == "out") {
      TypeAttr out = model.getOutDomainAttr();
      return ReadValue{ReadValue::ModelOut, model,
                       out ? out.getValue() : Type()};
    }
    if (member == "params")
      return ReadValue{ReadValue::ModelParams, model, Type()};
    return ReadValue{ReadValue::ModelIn, model,
                     model.resolveInDomain(symbols)};
  }

  if (auto loss = dyn_cast<LossOp>(decl)) {
    Type scalar = ScalarType::get(user->getContext(),
                                  Float32Type::get(user->getContext()));
    if (nested.empty())
      return ReadValue{ReadValue::Loss, loss, scalar};
    Operation *term =
        loss.getBody().empty()
            ? nullptr
            : symbols.lookupSymbolIn(loss, nested[0].getAttr());
    if (!term || nested.size() > 1) {
      InFlightDiagnostic diag = emitCheckError(user, Property::Safety, "L3.1")
                                << role << " " << ref << " does not resolve: ";
      if (!term)
        diag << "loss @" << root.getValue() << " has no term @"
             << nested[0].getValue();
      else
        diag << "term @" << nested[0].getValue() << " has no members";
      diag.attachNote(loss.getLoc())
          << "@" << root.getValue() << " has terms "
          << listSymbols(loss.getBody());
      return diag;
    }
    return ReadValue{ReadValue::LossTerm, term, scalar};
  }

  InFlightDiagnostic diag = emitCheckError(user, Property::Safety, "L3.1")
                            << role << " " << ref << " names '"
                            << decl->getName()
                            << "', which is not an L3 data, model or loss "
                               "declaration";
  diag.attachNote(decl->getLoc()) << "@" << root.getValue() << " is here";
  return diag;
}

//===----------------------------------------------------------------------===//
// Domain relations
//===----------------------------------------------------------------------===//

/// An integer class label: an integer scalar, or an integer tensor holding a
/// single element (`tensor<1xui8>`, `tensor<i64>`).
static bool isClassLabel(Type domain) {
  if (auto scalar = dyn_cast<ScalarType>(domain))
    return isa<IntegerType, IndexType>(scalar.getDtype());
  if (auto tensor = dyn_cast<RankedTensorType>(domain))
    return tensor.hasStaticShape() && tensor.getNumElements() == 1 &&
           isa<IntegerType, IndexType>(tensor.getElementType());
  return false;
}

/// A float vector of n probabilities (`tensor<10xf32>`).
static bool isProbabilityVector(Type domain, int64_t n) {
  auto tensor = dyn_cast<RankedTensorType>(domain);
  return tensor && tensor.getRank() == 1 && tensor.getDimSize(0) == n &&
         isa<FloatType>(tensor.getElementType());
}

/// Whether a divergence between `a` and `b` is well-formed, in either order.
static bool divergenceCompatible(Type a, Type b) {
  if (a == b)
    return true;
  for (auto [x, y] : {std::pair(a, b), std::pair(b, a)}) {
    if (auto dist = dyn_cast<DistType>(x)) {
      int64_t n = dist.getNumClasses();
      if (auto other = dyn_cast<DistType>(y))
        return other.getNumClasses() == n;
      if (isClassLabel(y) || isProbabilityVector(y, n))
        return true;
    }
  }
  auto seqA = dyn_cast<SequenceType>(a);
  auto seqB = dyn_cast<SequenceType>(b);
  if (seqA && seqB)
    return seqA.getMaxLen() == seqB.getMaxLen() &&
           divergenceCompatible(seqA.getElementDomain(),
                                seqB.getElementDomain());
  return false;
}

/// Whether an output of domain `out` can be fed back as (part of) an input
/// of domain `in`: the same domain, one element of an input sequence, or a
/// sampled class fed back as an integer token.
static bool canFeedBack(Type out, Type in) {
  if (out == in)
    return true;
  auto seq = dyn_cast<SequenceType>(in);
  if (!seq)
    return false;
  Type element = seq.getElementDomain();
  if (out == element)
    return true;
  if (isa<DistType>(out) && isClassLabel(element))
    return true;
  if (auto outSeq = dyn_cast<SequenceType>(out))
    return canFeedBack(outSeq.getElementDomain(), in);
  return false;
}

/// Whether `domain` holds numbers a norm or comparison can apply to.
static bool isNumeric(Type domain) {
  if (isa<TableType>(domain))
    return false;
  if (auto seq = dyn_cast<SequenceType>(domain))
    return isNumeric(seq.getElementDomain());
  return true;
}

/// A type as it is written, for diagnostics (unquoted, like the refs).
static std::string str(Type type) {
  std::string text;
  llvm::raw_string_ostream os(text);
  os << type;
  return text;
}

static InFlightDiagnostic domainError(Operation *op) {
  return emitCheckError(op, Property::Consistency, "L3.2");
}

/// L3.2: `value` (read as `ref`) must have a domain.
static LogicalResult requireDomain(Operation *op, StringRef what,
                                   SymbolRefAttr ref, const ReadValue &value) {
  if (!value.isParams())
    return success();
  return domainError(op) << what << " " << ref
                         << " names model parameters, which have no domain; "
                            "only norm and constraint terms read @params";
}

/// Describes a read for a diagnostic: "@mnist::@images (tensor<28x28xf32>)".
static std::string show(SymbolRefAttr ref, const ReadValue &value) {
  std::string text;
  llvm::raw_string_ostream os(text);
  os << ref;
  if (value.domain)
    os << " (" << value.domain << ")";
  return text;
}

//===----------------------------------------------------------------------===//
// ModelOp
//===----------------------------------------------------------------------===//

LogicalResult ModelOp::verifySymbolUses(SymbolTableCollection &symbols) {
  // L3.1: `in` names a data field.
  SymbolRefAttr inRef = getInRef();
  Operation *scope = getScope(*this);
  Operation *root =
      scope ? symbols.lookupSymbolIn(scope, inRef.getRootReference())
            : nullptr;
  auto data = dyn_cast_or_null<DataOp>(root);
  if (!data) {
    InFlightDiagnostic diag = emitCheckError(*this, Property::Safety, "L3.1")
                              << "in " << inRef;
    if (!root)
      diag << " does not resolve: there is no declaration @"
           << inRef.getRootReference().getValue()
           << suggest(scope, inRef.getRootReference().getValue());
    else
      diag << " must name a data field, but @"
           << inRef.getRootReference().getValue() << " is '"
           << root->getName() << "'";
    return diag;
  }
  ArrayRef<FlatSymbolRefAttr> nested = inRef.getNestedReferences();
  FieldOp field =
      nested.size() == 1 ? data.lookupField(nested[0].getValue()) : FieldOp();
  if (!field) {
    InFlightDiagnostic diag = emitCheckError(*this, Property::Safety, "L3.1")
                              << "in " << inRef;
    if (nested.empty())
      diag << " names data declaration @" << data.getSymName()
           << " as a whole; name one of its fields";
    else if (nested.size() == 1)
      diag << " does not resolve: data @" << data.getSymName()
           << " has no field @" << nested[0].getValue();
    else
      diag << " does not resolve: a field has no members";
    diag.attachNote(data.getLoc())
        << "@" << data.getSymName() << " has fields "
        << listSymbols(data.getBody());
    return diag;
  }

  // L3.2: a restated input domain agrees with the field.
  Type inDomain = field.getDomain();
  if (std::optional<Type> declared = getInDomain()) {
    if (*declared != inDomain) {
      InFlightDiagnostic diag =
          domainError(*this) << "model input domain " << str(*declared)
                             << " differs from the domain " << str(inDomain)
                             << " of data field " << inRef;
      diag.attachNote(field.getLoc()) << "field declared here";
      return diag;
    }
  }

  // L3.4: temporal constraints agree with the domains.
  if (isCausal() && !isa<SequenceType>(inDomain)) {
    InFlightDiagnostic diag =
        emitCheckError(*this, Property::Consistency, "L3.4")
        << "causal constrains output_t to input_<=t, but input " << inRef
        << " of domain " << str(inDomain) << " is not a sequence";
    diag.attachNote(field.getLoc()) << "field declared here";
    return diag;
  }
  if (isAutoregressive() && !canFeedBack(getOutDomain(), inDomain)) {
    InFlightDiagnostic diag =
        emitCheckError(*this, Property::Consistency, "L3.4")
        << "autoregressive feeds the output back as input, but out "
        << str(getOutDomain()) << " cannot be fed back into input " << inRef
        << " of domain " << str(inDomain);
    if (std::optional<int64_t> depth = getDepthLimit())
      diag << " (a feedforward model under depth(" << *depth << "))";
    diag.attachNote(field.getLoc()) << "field declared here";
    return diag;
  }
  return success();
}

//===----------------------------------------------------------------------===//
// Loss terms
//===----------------------------------------------------------------------===//

LogicalResult DivergenceOp::verifySymbolUses(SymbolTableCollection &symbols) {
  FailureOr<ReadValue> predicted =
      resolveRead(*this, getPredicted(), "predicted", symbols);
  if (failed(predicted))
    return failure();
  FailureOr<ReadValue> target =
      resolveRead(*this, getTarget(), "target", symbols);
  if (failed(target))
    return failure();
  if (failed(requireDomain(*this, "predicted", getPredicted(), *predicted)) ||
      failed(requireDomain(*this, "target", getTarget(), *target)))
    return failure();
  if (!predicted->domain || !target->domain)
    return success();
  if (!divergenceCompatible(predicted->domain, target->domain))
    return domainError(*this)
           << "divergence between " << show(getPredicted(), *predicted)
           << " and " << show(getTarget(), *target)
           << " is not defined: a dist<n> is compared with a class label, "
              "a dist<n> or a float vector of n probabilities, any other "
              "domain with the same domain";
  return success();
}

LogicalResult NormOp::verifySymbolUses(SymbolTableCollection &symbols) {
  FailureOr<ReadValue> target =
      resolveRead(*this, getTarget(), "target", symbols);
  if (failed(target))
    return failure();
  if (target->domain && !isNumeric(target->domain))
    return domainError(*this)
           << "norm of " << show(getTarget(), *target)
           << " is not defined: a table has no norm";
  return success();
}

LogicalResult ConstraintOp::verifySymbolUses(SymbolTableCollection &symbols) {
  FailureOr<ReadValue> lhs = resolveRead(*this, getLhs(), "lhs", symbols);
  if (failed(lhs))
    return failure();
  if (lhs->domain && !isNumeric(lhs->domain))
    return domainError(*this) << "constraint on " << show(getLhs(), *lhs)
                              << " cannot compare a table";
  auto rhsRef = dyn_cast<SymbolRefAttr>(getRhs());
  if (!rhsRef)
    return success();
  FailureOr<ReadValue> rhs = resolveRead(*this, rhsRef, "rhs", symbols);
  if (failed(rhs))
    return failure();
  if (failed(requireDomain(*this, "lhs", getLhs(), *lhs)) ||
      failed(requireDomain(*this, "rhs", rhsRef, *rhs)))
    return failure();
  if (lhs->domain && rhs->domain && lhs->domain != rhs->domain &&
      !isa<ScalarType>(rhs->domain))
    return domainError(*this)
           << "constraint compares " << show(getLhs(), *lhs) << " with "
           << show(rhsRef, *rhs)
           << "; both sides must have the same domain, or the right side "
              "must be a scalar";
  return success();
}

LogicalResult
ReconstructionOp::verifySymbolUses(SymbolTableCollection &symbols) {
  FailureOr<ReadValue> input = resolveRead(*this, getInput(), "input", symbols);
  if (failed(input))
    return failure();
  FailureOr<ReadValue> decoded =
      resolveRead(*this, getDecoded(), "decoded", symbols);
  if (failed(decoded))
    return failure();
  if (failed(requireDomain(*this, "input", getInput(), *input)) ||
      failed(requireDomain(*this, "decoded", getDecoded(), *decoded)))
    return failure();
  if (input->domain && decoded->domain && input->domain != decoded->domain)
    return domainError(*this)
           << "reconstruction of " << show(getInput(), *input) << " by "
           << show(getDecoded(), *decoded)
           << ": the decoded value must have the input's domain";
  return success();
}

LogicalResult ContrastiveOp::verifySymbolUses(SymbolTableCollection &symbols) {
  SmallVector<std::pair<StringRef, SymbolRefAttr>, 3> roles = {
      {"anchor", getAnchor()},
      {"positive", getPositive()},
      {"negative", getNegative()}};
  SmallVector<ReadValue, 3> values;
  for (auto [role, ref] : roles) {
    FailureOr<ReadValue> value = resolveRead(*this, ref, role, symbols);
    if (failed(value) || failed(requireDomain(*this, role, ref, *value)))
      return failure();
    values.push_back(*value);
  }
  for (unsigned i = 1; i < 3; ++i) {
    if (values[0].domain && values[i].domain &&
        values[0].domain != values[i].domain)
      return domainError(*this)
             << "contrastive " << roles[i].first << " "
             << show(roles[i].second, values[i])
             << " does not have the domain of anchor "
             << show(roles[0].second, values[0]);
  }
  return success();
}

LogicalResult CustomOp::verifySymbolUses(SymbolTableCollection &symbols) {
  for (auto [i, ref] : llvm::enumerate(getReads().getAsRange<SymbolRefAttr>()))
    if (failed(resolveRead(*this, ref, "read #" + std::to_string(i), symbols)))
      return failure();
  return success();
}

//===----------------------------------------------------------------------===//
// LossOp: L3.5, no loss reads itself
//===----------------------------------------------------------------------===//

/// The dependency graph among losses and their terms: a loss depends on its
/// terms, a term on the losses and terms it reads.
static SmallVector<Operation *> lossDependencies(Operation *node,
                                                Operation *scope,
                                                SymbolTableCollection &symbols) {
  SmallVector<Operation *> result;
  if (auto loss = dyn_cast<LossOp>(node)) {
    for (LossTermOpInterface term : loss.getTerms())
      result.push_back(term);
    return result;
  }
  auto term = dyn_cast<LossTermOpInterface>(node);
  if (!term)
    return result;
  for (SymbolRefAttr ref : term.getReadRefs()) {
    auto other = dyn_cast_or_null<LossOp>(
        symbols.lookupSymbolIn(scope, ref.getRootReference()));
    if (!other)
      continue;
    if (ref.getNestedReferences().empty()) {
      result.push_back(other);
    } else if (other.getBody().empty()) {
      continue;
    } else if (Operation *otherTerm = symbols.lookupSymbolIn(
                   other, ref.getNestedReferences()[0].getAttr())) {
      result.push_back(otherTerm);
    }
  }
  return result;
}

static std::string nodeName(Operation *node) {
  auto name = [](Operation *op) {
    return op->getAttrOfType<StringAttr>(SymbolTable::getSymbolAttrName())
        .getValue();
  };
  if (isa<LossOp>(node))
    return ("@" + name(node)).str();
  return ("@" + name(node->getParentOp()) + "::@" + name(node)).str();
}

LogicalResult LossOp::verifySymbolUses(SymbolTableCollection &symbols) {
  Operation *scope = getScope(*this);
  if (!scope)
    return success();
  // Depth-first search for a cycle of reads that passes through this loss
  // or one of its terms (a cycle elsewhere is reported by its own losses).
  enum Color { Gray = 1, Black = 2 };
  llvm::DenseMap<Operation *, Color> color;
  SmallVector<Operation *> path = {getOperation()};
  SmallVector<SmallVector<Operation *>> pending = {
      lossDependencies(getOperation(), scope, symbols)};
  color[getOperation()] = Gray;
  while (!pending.empty()) {
    if (pending.back().empty()) {
      color[path.back()] = Black;
      pending.pop_back();
      path.pop_back();
      continue;
    }
    Operation *next = pending.back().pop_back_val();
    auto it = color.find(next);
    if (it == color.end()) {
      color[next] = Gray;
      path.push_back(next);
      pending.push_back(lossDependencies(next, scope, symbols));
      continue;
    }
    if (it->second != Gray)
      continue;
    // A back edge: the cycle is the path from `next` to the top.
    auto cycle = ArrayRef(path).drop_until([&](Operation *op) {
      return op == next;
    });
    bool mine = llvm::any_of(cycle, [&](Operation *op) {
      return op == getOperation() || op->getParentOp() == getOperation();
    });
    if (!mine)
      continue;
    // Report the cycle from a read that leaves this loss.
    InFlightDiagnostic diag = emitCheckError(*this, Property::Resource, "L3.5")
                              << "loss @" << getSymName()
                              << " depends on itself: ";
    for (Operation *op : cycle)
      diag << nodeName(op) << " -> ";
    diag << nodeName(next)
         << "; declarations may not refer to each other recursively";
    return diag;
  }
  return success();
}

//===----------------------------------------------------------------------===//
// GoalOp
//===----------------------------------------------------------------------===//

LogicalResult GoalOp::verifySymbolUses(SymbolTableCollection &symbols) {
  GoalKind kind = getKind();
  for (SymbolRefAttr ref : getTargets().getAsRange<SymbolRefAttr>()) {
    FailureOr<ReadValue> value =
        resolveRead(*this, ref, "goal target", symbols);
    if (failed(value))
      return failure();
    bool isLoss = value->kind == ReadValue::Loss ||
                  value->kind == ReadValue::LossTerm;
    if (isLoss)
      continue;
    // maximize(ref) may name a scalar model output (a reward, a score).
    if (kind == GoalKind::Maximize && value->kind == ReadValue::ModelOut) {
      if (isa<ScalarType>(value->domain))
        continue;
      InFlightDiagnostic diag =
          domainError(*this) << "maximize(" << ref << ") needs a scalar, but "
                             << ref << " has domain " << str(value->domain);
      diag.attachNote(value->decl->getLoc()) << "model declared here";
      return diag;
    }
    InFlightDiagnostic diag = emitCheckError(*this, Property::Safety, "L3.1")
                              << stringifyGoalKind(kind) << " target " << ref
                              << " is " << describe(value->kind) << "; ";
    if (kind == GoalKind::Maximize)
      diag << "maximize takes a loss, a loss term or a scalar model output";
    else
      diag << stringifyGoalKind(kind) << " takes losses or loss terms";
    diag.attachNote(value->decl->getLoc()) << ref << " is declared here";
    return diag;
  }
  return success();
}
