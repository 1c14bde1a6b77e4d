//===- ParserL1Tensor.cpp - The .syn tensor ops ---------------------------===//
//
// `tensor_<op>(...)` calls in a tensor graph or handler body, built into
// the l1 tensor ops: each call's arguments bound by position or key, its
// result type computed by the shape rules the l1 verifiers check
// (synpl/Analysis/Shapes.h), so that a shape error is reported at the call.
//
//===----------------------------------------------------------------------===//
#include "Parser.h"
#include "ParserUtil.h"

#include "synpl/Analysis/Shapes.h"
#include "synpl/Dialect/L1/L1Ops.h"
#include "synpl/Support/Property.h"

#include "llvm/ADT/StringExtras.h"

using namespace mlir;
using namespace synpl;
using namespace synpl::syn;
using namespace synpl::syn::detail;
namespace sh = synpl::shapes;

//===----------------------------------------------------------------------===//
// Tensor ops
//===----------------------------------------------------------------------===//

namespace {
enum class TOp {
  Binary, Unary, Matmul, Scale, Broadcast, Transpose, Reshape, Reduce, Cmp,
  Select, Cast, OneHot, Gather, ScatterAdd, Const, Random, AllGather, AllSum, BlockSlice
};
struct TensorOpInfo {
  StringRef name; ///< after `tensor_`
  TOp kind;
};
} // namespace

static constexpr TensorOpInfo kTensorOps[] = {
    {"matmul", TOp::Matmul},         {"add", TOp::Binary},
    {"sub", TOp::Binary},            {"mul", TOp::Binary},
    {"div", TOp::Binary},            {"max", TOp::Binary},
    {"min", TOp::Binary},            {"scale", TOp::Scale},
    {"exp", TOp::Unary},             {"log", TOp::Unary},
    {"sqrt", TOp::Unary},            {"reciprocal", TOp::Unary},
    {"tanh", TOp::Unary},            {"cos", TOp::Unary},
    {"abs", TOp::Unary},             {"sign", TOp::Unary},
    {"neg", TOp::Unary},             {"broadcast", TOp::Broadcast},
    {"transpose", TOp::Transpose},   {"reshape", TOp::Reshape},
    {"reduce_sum", TOp::Reduce},     {"reduce_mean", TOp::Reduce},
    {"reduce_max", TOp::Reduce},     {"cmp", TOp::Cmp},
    {"select", TOp::Select},         {"cast", TOp::Cast},
    {"one_hot", TOp::OneHot},        {"const", TOp::Const},
    {"random", TOp::Random},         {"gather", TOp::Gather},
    {"scatter_add", TOp::ScatterAdd}, {"all_gather", TOp::AllGather},
    {"all_sum", TOp::AllSum},         {"block_slice", TOp::BlockSlice},
};

LogicalResult synpl::syn::detail::bindL1Args(StringRef callee, Location at,
                                             SmallVectorImpl<Parser::L1Arg> &args,
                                             ArrayRef<StringRef> params, size_t required,
                                             SmallVectorImpl<Parser::L1Arg *> &slots) {
  slots.assign(params.size(), nullptr);
  size_t next = 0;
  bool sawKey = false;
  for (Parser::L1Arg &arg : args) {
    size_t index;
    if (arg.key.empty()) {
      if (sawKey)
        return emitError(arg.loc, "positional argument after a keyword "
                                  "argument in '")
               << callee << "'";
      if (next >= params.size())
        return emitError(arg.loc, "'")
               << callee << "' takes " << params.size() << " argument"
               << (params.size() == 1 ? "" : "s") << " ("
               << llvm::join(params, ", ") << ")";
      index = next++;
    } else {
      sawKey = true;
      auto it = llvm::find(params, arg.key);
      if (it == params.end())
        return emitError(arg.keyLoc, "'")
               << callee << "' has no argument '" << arg.key << "'; it takes "
               << llvm::join(params, ", ");
      index = it - params.begin();
    }
    if (slots[index])
      return emitError(arg.key.empty() ? arg.loc : arg.keyLoc,
                       "duplicate argument '")
             << params[index] << "' in '" << callee << "'";
    slots[index] = &arg;
  }
  for (size_t i = 0; i < required; ++i)
    if (!slots[i])
      return emitError(at, "'") << callee << "' needs its argument '"
                                << params[i] << "' ("
                                << llvm::join(params, ", ") << ")";
  return success();
}

FailureOr<SmallVector<int64_t>> synpl::syn::detail::intList(Parser::L1Arg *arg,
                                                            StringRef what, bool positive) {
  if (arg->kind != Parser::L1Arg::List)
    return emitError(arg->loc, "expected ")
           << what << " as a list of integers ([128, 256])";
  SmallVector<int64_t> out;
  for (const Token &t : arg->items) {
    int64_t v;
    if (!t.is(Token::Integer) || t.spelling.getAsInteger(10, v) ||
        (positive && v <= 0))
      return emitError(arg->loc, "expected ")
             << what << " as a list of " << (positive ? "positive " : "")
             << "integers, got '" << t.spelling << "'";
    out.push_back(v);
  }
  return out;
}

FailureOr<int64_t> synpl::syn::detail::intArgOf(Parser::L1Arg *arg, StringRef what) {
  int64_t v;
  if (arg->kind != Parser::L1Arg::Number || !arg->tok.is(Token::Integer) ||
      arg->tok.spelling.getAsInteger(10, v))
    return emitError(arg->loc, "expected ") << what << " as an integer";
  return arg->negative ? -v : v;
}

FailureOr<Value> Parser::buildTensorCall(StringRef name, Location at,
                                         SmallVectorImpl<L1Arg> &args) {
  const TensorOpInfo *info = nullptr;
  if (name.starts_with("tensor_"))
    for (const TensorOpInfo &candidate : kTensorOps)
      if (candidate.name == name.drop_front(7))
        info = &candidate;
  if (!info) {
    SmallVector<StringRef> names;
    for (const TensorOpInfo &candidate : kTensorOps)
      names.push_back(candidate.name);
    bool bare = llvm::any_of(kTensorOps, [&](const TensorOpInfo &c) {
      return c.name == name;
    });
    InFlightDiagnostic d = emitError(at, "unknown tensor op '") << name << "'";
    if (bare)
      d << "; did you mean 'tensor_" << name << "'?";
    else
      d << "; expected tensor_<op> with <op> one of " << llvm::join(names, ", ");
    return d;
  }
  StringRef op = info->name;
  std::string callee = name.str();
  SmallVector<L1Arg *> a;
  auto bindArgs = [&](ArrayRef<StringRef> params, size_t required) {
    return bindL1Args(callee, at, args, params, required, a);
  };
  auto shapeFail = [&](StringRef message) -> InFlightDiagnostic {
    return emitCheckError(at, Property::Consistency, "L1.5")
           << op << ": " << message;
  };
  auto tensorOf = [&](L1Arg *arg, Type hint = Type()) -> FailureOr<Value> {
    FailureOr<Value> v = argValue(*arg, hint);
    if (failed(v))
      return failure();
    if (!isa<RankedTensorType>(v->getType()))
      return emitError(arg->loc, "'")
             << callee << "' takes tensors, got " << v->getType();
    return *v;
  };
  auto typeOf = [](Value v) { return cast<RankedTensorType>(v.getType()); };
  // Binds the call's arguments, then its first as the tensor it operates on.
  auto bindOperand = [&](ArrayRef<StringRef> params,
                         size_t required) -> FailureOr<Value> {
    if (failed(bindArgs(params, required)))
      return failure();
    return tensorOf(a[0]);
  };
  // An optional integer-list argument (dims, perm): its values and the
  // attribute that carries them, both empty when it is absent.
  auto optionalInts = [&](L1Arg *arg, StringRef what, SmallVector<int64_t> &values,
                          DenseI64ArrayAttr &attr) -> LogicalResult {
    if (!arg)
      return success();
    FailureOr<SmallVector<int64_t>> v = intList(arg, what, false);
    if (failed(v))
      return failure();
    values = *v;
    attr = builder.getDenseI64ArrayAttr(values);
    return success();
  };
  auto dtypeArg = [&](L1Arg *arg, Type &dtype) -> LogicalResult {
    if (arg->kind != L1Arg::Word)
      return emitError(arg->loc, "expected a dtype (f32, u8, ...)");
    StringRef s = arg->tok.spelling;
    dtype = namedDtype(ctx, s);
    if (!dtype)
      return emitError(arg->loc, "unknown dtype '")
             << s << "'; expected f16, bf16, f32, f64, bool, iN or uN";
    return success();
  };

  Operation *built = nullptr;
  switch (info->kind) {
  case TOp::Binary:
  case TOp::Matmul: {
    if (failed(bindArgs({"lhs", "rhs"}, 2)))
      return failure();
    // A literal takes its partner's element type.
    FailureOr<Value> l = failure(), r = failure();
    if (a[0]->kind == L1Arg::Number && a[1]->kind != L1Arg::Number) {
      r = tensorOf(a[1]);
      if (failed(r))
        return failure();
      l = tensorOf(a[0], typeOf(*r).getElementType());
    } else {
      l = tensorOf(a[0]);
      if (failed(l))
        return failure();
      r = tensorOf(a[1], typeOf(*l).getElementType());
    }
    if (failed(l) || failed(r))
      return failure();
    auto lt = typeOf(*l), rt = typeOf(*r);
    sh::ShapeResult s = info->kind == TOp::Matmul
                            ? sh::matmulShape(lt.getShape(), rt.getShape())
                            : sh::elementwiseShape(lt.getShape(), rt.getShape());
    if (!s)
      return shapeFail(s.message());
    auto res = RankedTensorType::get(s.shape(), lt.getElementType());
    OperationState state(at, ("l1." + op).str());
    state.addOperands({*l, *r});
    state.addTypes(res);
    built = builder.create(state);
    break;
  }
  case TOp::Unary: {
    FailureOr<Value> x = bindOperand({"operand"}, 1);
    if (failed(x))
      return failure();
    OperationState state(at, ("l1." + op).str());
    state.addOperands(*x);
    state.addTypes(x->getType());
    built = builder.create(state);
    break;
  }
  case TOp::Scale: {
    FailureOr<Value> x = bindOperand({"operand", "scalar"}, 2);
    if (failed(x))
      return failure();
    FailureOr<Value> sc = tensorOf(a[1], typeOf(*x).getElementType());
    if (failed(sc))
      return failure();
    built = l1::ScaleOp::create(builder, at, x->getType(), *x, *sc);
    break;
  }
  case TOp::Broadcast: {
    FailureOr<Value> x = bindOperand({"operand", "shape", "dims"}, 2);
    if (failed(x))
      return failure();
    FailureOr<SmallVector<int64_t>> shape = intList(a[1], "the shape", true);
    if (failed(shape))
      return failure();
    SmallVector<int64_t> dims;
    DenseI64ArrayAttr dimsAttr;
    if (failed(optionalInts(a[2], "dims", dims, dimsAttr)))
      return failure();
    sh::ShapeResult s = sh::broadcastShape(typeOf(*x).getShape(), *shape, dims);
    if (!s)
      return shapeFail(s.message());
    built = l1::BroadcastOp::create(
        builder, at, RankedTensorType::get(*shape, typeOf(*x).getElementType()),
        *x, dimsAttr);
    break;
  }
  case TOp::Transpose: {
    FailureOr<Value> x = bindOperand({"operand", "perm"}, 1);
    if (failed(x))
      return failure();
    SmallVector<int64_t> perm;
    DenseI64ArrayAttr permAttr;
    if (failed(optionalInts(a[1], "perm", perm, permAttr)))
      return failure();
    sh::ShapeResult s = sh::transposeShape(typeOf(*x).getShape(), perm);
    if (!s)
      return shapeFail(s.message());
    built = l1::TransposeOp::create(
        builder, at, RankedTensorType::get(s.shape(), typeOf(*x).getElementType()),
        *x, permAttr);
    break;
  }
  case TOp::Reshape: {
    FailureOr<Value> x = bindOperand({"operand", "shape"}, 2);
    if (failed(x))
      return failure();
    FailureOr<SmallVector<int64_t>> shape = intList(a[1], "the shape", true);
    if (failed(shape))
      return failure();
    sh::ShapeResult s = sh::reshapeShape(typeOf(*x).getShape(), *shape);
    if (!s)
      return shapeFail(s.message());
    built = l1::ReshapeOp::create(
        builder, at, RankedTensorType::get(*shape, typeOf(*x).getElementType()),
        *x);
    break;
  }
  case TOp::Reduce: {
    FailureOr<Value> x = bindOperand({"operand", "axis"}, 1);
    if (failed(x))
      return failure();
    std::optional<int64_t> axis;
    IntegerAttr axisAttr;
    if (a[1]) {
      FailureOr<int64_t> v = intArgOf(a[1], "the axis");
      if (failed(v))
        return failure();
      axis = *v;
      axisAttr = builder.getI64IntegerAttr(*v);
    }
    sh::ShapeResult s = sh::reduceShape(typeOf(*x).getShape(), axis);
    if (!s)
      return shapeFail(s.message());
    OperationState state(at, ("l1." + op).str());
    state.addOperands(*x);
    state.addTypes(RankedTensorType::get(s.shape(), typeOf(*x).getElementType()));
    if (axisAttr)
      state.addAttribute("axis", axisAttr);
    built = builder.create(state);
    break;
  }
  case TOp::Cmp: {
    if (failed(bindArgs({"predicate", "lhs", "rhs"}, 3)))
      return failure();
    std::optional<l1::CmpPredicate> pred;
    if (a[0]->kind == L1Arg::Word)
      pred = l1::symbolizeCmpPredicate(a[0]->tok.spelling);
    if (!pred)
      return emitError(a[0]->loc, "expected a comparison predicate (eq, ne, "
                                  "lt, le, gt or ge) as the first argument");
    FailureOr<Value> l = tensorOf(a[1]);
    if (failed(l))
      return failure();
    FailureOr<Value> r = tensorOf(a[2], typeOf(*l).getElementType());
    if (failed(r))
      return failure();
    sh::ShapeResult s =
        sh::elementwiseShape(typeOf(*l).getShape(), typeOf(*r).getShape());
    if (!s)
      return shapeFail(s.message());
    built = l1::CmpOp::create(
        builder, at, RankedTensorType::get(s.shape(), builder.getI1Type()),
        *pred, *l, *r);
    break;
  }
  case TOp::Select: {
    if (failed(bindArgs({"cond", "lhs", "rhs"}, 3)))
      return failure();
    FailureOr<Value> c = tensorOf(a[0]);
    if (failed(c))
      return failure();
    FailureOr<Value> l = tensorOf(a[1]);
    if (failed(l))
      return failure();
    FailureOr<Value> r = tensorOf(a[2], typeOf(*l).getElementType());
    if (failed(r))
      return failure();
    built = l1::SelectOp::create(builder, at, l->getType(), *c, *l, *r);
    break;
  }
  case TOp::Cast: {
    FailureOr<Value> x = bindOperand({"operand", "dtype"}, 2);
    if (failed(x))
      return failure();
    Type dtype;
    if (failed(dtypeArg(a[1], dtype)))
      return failure();
    built = l1::CastOp::create(
        builder, at, RankedTensorType::get(typeOf(*x).getShape(), dtype), *x);
    break;
  }
  case TOp::OneHot: {
    FailureOr<Value> x = bindOperand({"labels", "classes", "dtype"}, 2);
    if (failed(x))
      return failure();
    FailureOr<int64_t> classes = intArgOf(a[1], "the number of classes");
    if (failed(classes))
      return failure();
    if (*classes <= 0)
      return emitError(a[1]->loc, "the number of classes is positive");
    Type dtype = builder.getF32Type();
    if (a[2] && failed(dtypeArg(a[2], dtype)))
      return failure();
    sh::ShapeResult s = sh::oneHotShape(typeOf(*x).getShape(), *classes);
    if (!s)
      return shapeFail(s.message());
    built = l1::OneHotOp::create(builder, at,
                                 RankedTensorType::get(s.shape(), dtype), *x,
                                 builder.getI64IntegerAttr(*classes));
    break;
  }
  case TOp::Gather:
  case TOp::ScatterAdd: {
    // tensor_gather(table, ids): rows of a [rows, width] table;
    // tensor_scatter_add(src, ids, rows: n): the rows summed into n rows.
    bool gather = info->kind == TOp::Gather;
    FailureOr<Value> x =
        gather ? bindOperand({"table", "ids"}, 2) : bindOperand({"src", "ids", "rows"}, 3);
    if (failed(x))
      return failure();
    FailureOr<Value> ids = tensorOf(a[1]);
    if (failed(ids))
      return failure();
    auto xt = typeOf(*x);
    SmallVector<int64_t> shape;
    if (gather) {
      if (xt.getRank() != 2)
        return shapeFail("the table is rank 2 ([rows, width])");
      shape.assign(typeOf(*ids).getShape().begin(), typeOf(*ids).getShape().end());
      shape.push_back(xt.getShape()[1]);
      built = l1::GatherOp::create(builder, at,
                                   RankedTensorType::get(shape, xt.getElementType()), *x, *ids);
      break;
    }
    FailureOr<int64_t> rows = intArgOf(a[2], "the number of rows");
    if (failed(rows))
      return failure();
    if (*rows <= 0)
      return emitError(a[2]->loc, "the number of rows is positive");
    if (xt.getRank() == 0)
      return shapeFail("the source has rows (rank 1 or more)");
    shape = {*rows, xt.getShape().back()};
    built = l1::ScatterAddOp::create(builder, at,
                                     RankedTensorType::get(shape, xt.getElementType()), *x, *ids);
    break;
  }
  case TOp::AllGather:
  case TOp::BlockSlice: {
    // tensor_all_gather(x, axis: a, ranks: n): the ranks' blocks along a;
    // tensor_block_slice(x, index, axis: a, blocks: n): block `index`.
    bool gatherRanks = info->kind == TOp::AllGather;
    FailureOr<Value> x = gatherRanks ? bindOperand({"x", "axis", "ranks"}, 3)
                                     : bindOperand({"x", "index", "axis", "blocks"}, 4);
    if (failed(x))
      return failure();
    FailureOr<Value> index;
    if (!gatherRanks && failed(index = tensorOf(a[1])))
      return failure();
    L1Arg *axisArg = a[gatherRanks ? 1 : 2], *countArg = a[gatherRanks ? 2 : 3];
    FailureOr<int64_t> axis = intArgOf(axisArg, "the axis");
    FailureOr<int64_t> count = intArgOf(countArg, gatherRanks ? "the ranks" : "the blocks");
    if (failed(axis) || failed(count))
      return failure();
    auto xt = typeOf(*x);
    if (*axis < 0 || *axis >= xt.getRank())
      return emitError(axisArg->loc, "axis ") << *axis << " is not an axis of the operand";
    if (*count <= 0)
      return emitError(countArg->loc, gatherRanks ? "the ranks" : "the blocks")
             << " are a positive count";
    SmallVector<int64_t> shape(xt.getShape());
    if (gatherRanks) {
      shape[*axis] *= *count;
      built = l1::AllGatherOp::create(builder, at,
                                      RankedTensorType::get(shape, xt.getElementType()), *x,
                                      builder.getI64IntegerAttr(*axis));
      break;
    }
    if (shape[*axis] % *count != 0)
      return shapeFail("the blocks do not divide the axis");
    shape[*axis] /= *count;
    built = l1::BlockSliceOp::create(builder, at,
                                     RankedTensorType::get(shape, xt.getElementType()), *x,
                                     *index, builder.getI64IntegerAttr(*axis));
    break;
  }
  case TOp::AllSum: {
    // tensor_all_sum(x): the sum over the ranks.
    FailureOr<Value> x = bindOperand({"x"}, 1);
    if (failed(x))
      return failure();
    built = l1::AllSumOp::create(builder, at, x->getType(), *x);
    break;
  }
  case TOp::Random: {
    FailureOr<Value> counter = bindOperand({"counter", "shape", "seed", "stream"}, 4);
    if (failed(counter))
      return failure();
    FailureOr<SmallVector<int64_t>> shape = intList(a[1], "the shape", true);
    if (failed(shape))
      return failure();
    FailureOr<int64_t> seed = intArgOf(a[2], "the seed");
    if (failed(seed))
      return failure();
    FailureOr<int64_t> stream = intArgOf(a[3], "the stream");
    if (failed(stream))
      return failure();
    built = l1::RandomOp::create(builder, at, RankedTensorType::get(*shape, builder.getF32Type()),
                                 *counter, builder.getI64IntegerAttr(*seed),
                                 builder.getI64IntegerAttr(*stream));
    break;
  }
  case TOp::Const: {
    if (failed(bindArgs({"value", "shape", "dtype"}, 1)))
      return failure();
    if (a[0]->kind != L1Arg::Number)
      return emitError(a[0]->loc, "expected the constant's value (a number)");
    SmallVector<int64_t> shape;
    if (a[1]) {
      FailureOr<SmallVector<int64_t>> s = intList(a[1], "the shape", true);
      if (failed(s))
        return failure();
      shape = *s;
    }
    Type dtype = builder.getF32Type();
    if (a[2] && failed(dtypeArg(a[2], dtype)))
      return failure();
    double v = numberValue(*a[0]);
    if (!std::isfinite(v))
      return emitError(a[0]->loc, "number '")
             << a[0]->tok.spelling << "' is out of range";
    built = l1::ConstOp::create(builder, at, RankedTensorType::get(shape, dtype),
                                builder.getF64FloatAttr(v));
    break;
  }
  }
  if (failed(checkBuilt(built)))
    return failure();
  return built->getResult(0);
}
