//===- IPU21Ops.td - The ipu21 dialect's operations ----------------*- tablegen -*-===//
#ifndef SYNPL_DIALECT_IPU21_OPS_TD
#define SYNPL_DIALECT_IPU21_OPS_TD

include "synpl/Dialect/IPU21/IPU21Dialect.td"
include "synpl/Dialect/IPU21/IPU21Attrs.td"
include "mlir/IR/OpBase.td"
include "mlir/IR/SymbolInterfaces.td"
include "mlir/IR/CommonAttrConstraints.td"

// The generic codelet's body is a UOp body (see the l0uop dialect): the
// UOps' parent check accepts ops with this trait.
def IPU21_UOpScope : NativeOpTrait<"UOpScope"> {
  let cppNamespace = "::synpl::l0uop";
}

// A 64-bit signless integer attribute read as int64_t.
def IPU21_I64Attr : TypedSignlessIntegerAttrBase<I64, "int64_t",
                                                "64-bit signless integer attribute"> {
  let convertFromStorage = "$_self.getValue().getSExtValue()";
}

//===----------------------------------------------------------------------===//
// The graph and what it holds
//===----------------------------------------------------------------------===//

def IPU21_GraphOp : IPU21_Op<"graph", [
    Symbol, SymbolTable, IsolatedFromAbove, NoTerminator, SingleBlock]> {
  let summary = "one IPU program: its target, memory objects, compute, exchange and control";
  let description = [{
    ```mlir
    ipu21.graph @step target #ipu21.target<...> {
      tensors, buffers, codelets, compute sets, exchanges, programs
    }
    ```
    The unit a program file holds. Its verifier runs the checks that need
    the whole graph (the dialect's description lists them): each tile's
    memory, every tensor's mapping, every vertex's fields, every exchange,
    and the bulk-synchronous discipline of the programs.
  }];
  let arguments = (ins SymbolNameAttr:$sym_name, IPU21_TargetAttr:$target);
  let regions = (region SizedRegion<1>:$body);
  let assemblyFormat = "$sym_name `target` qualified($target) attr-dict-with-keyword $body";
  let hasRegionVerifier = 1;
  let extraClassDeclaration = [{
    template <typename OpT> OpT lookup(::llvm::StringRef name) {
      return ::llvm::dyn_cast_or_null<OpT>(
          ::mlir::SymbolTable::lookupSymbolIn(getOperation(), name));
    }
  }];
}

class IPU21_GraphItem<string mnemonic, list<Trait> traits = []>
    : IPU21_Op<mnemonic, !listconcat(traits, [HasParent<"GraphOp">])>;

def IPU21_TensorOp : IPU21_GraphItem<"tensor", [Symbol]> {
  let summary = "a tensor whose elements are spread over tiles";
  let description = [{
    ```mlir
    ipu21.tensor @x : tensor<1024x16xf16> mapping blocked(first_tile = 0, per_tile = 256) at 0x80000
    ipu21.tensor @b : tensor<10xf32> mapping {0: [0, 4) [8, 10), 1: [4, 8)} at 0x80000
    ```
    Each element (row-major flat index) lives on exactly one tile, its home
    (row IPU.4). The mapping lists, per tile, the intervals of elements it
    holds; `blocked(first_tile = T, per_tile = P)` is the common case
    spelled compactly: tile `T + i` holds `[i·P, min((i+1)·P, numel))`.
    `grid(first_tile = T, rows = R, cols = C)` views the tensor as a matrix
    (its last dimension the columns) cut into R×C blocks, numbered row by
    row (`column_major`: column by column) from tile `T`; a block's rows
    are its tile's elements, in order, so the tile holds the block
    row-major (what a matmul's output block is).
    On each tile the elements are stored contiguously at `at`, in the
    order of that tile's intervals.

    A tensor lives throughout, unless it is `scratch`: then, like a
    buffer, it holds data only from the first top-level step of `@main`
    that uses it (a compute set's field, an exchange's end, a stream, an
    `if`'s flag) to the last, and may share memory with objects whose
    lifetimes do not meet its own (row IPU.2). Whoever makes a tensor
    scratch promises that each run of `@main` writes it before reading it
    and that nothing outside `@main` reads it: a step's temporaries, not
    state or what the host reads or writes between runs.
  }];
  let arguments = (ins SymbolNameAttr:$sym_name, TypeAttrOf<AnyRankedTensor>:$type,
                       OptionalAttr<DenseI64ArrayAttr>:$intervals,
                       OptionalAttr<DenseI64ArrayAttr>:$blocked,
                       OptionalAttr<DenseI64ArrayAttr>:$grid,
                       IPU21_I64Attr:$address, UnitAttr:$scratch);
  let assemblyFormat = [{
    $sym_name `:` $type `mapping` custom<Mapping>($intervals, $blocked, $grid)
    `at` custom<Address>($address) (`scratch` $scratch^)? attr-dict
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    ::mlir::RankedTensorType getTensorType() {
      return ::llvm::cast<::mlir::RankedTensorType>(getType());
    }
    ::mlir::Type getElementType() { return getTensorType().getElementType(); }
    int64_t getNumElements() { return getTensorType().getNumElements(); }
    /// The mapping as (tile, begin, end) triples, sorted by tile then begin.
    ::llvm::SmallVector<MappedInterval> getMapping();
    /// The tensor as a matrix: (elements / last dimension, last dimension).
    std::pair<int64_t, int64_t> getMatrixShape();
  }];
}

def IPU21_BufferOp : IPU21_GraphItem<"buffer", [Symbol]> {
  let summary = "the same number of elements on each tile of a set";
  let description = [{
    ```mlir
    ipu21.buffer @w_in : 256 x f16 on tiles [0, 1472) at 0x90000
    ```
    Exchange landing zones, partial sums and scratch: `elements` elements of
    `elem_type` at `at` on every tile of the set.

    A buffer holds data from the first top-level step of `@main` whose
    compute set or exchange uses it to the last (its lifetime); two buffers
    whose lifetimes do not meet may share memory (row IPU.2). A buffer that
    `@main` does not use, or that another program uses, lives throughout.
    Every other object lives throughout.
  }];
  let arguments = (ins SymbolNameAttr:$sym_name, IPU21_I64Attr:$elements,
                       TypeAttr:$elem_type, DenseI64ArrayAttr:$tiles,
                       IPU21_I64Attr:$address);
  let assemblyFormat = [{
    $sym_name `:` $elements `x` $elem_type `on` `tiles` custom<TileRanges>($tiles)
    `at` custom<Address>($address) attr-dict
  }];
  let hasVerifier = 1;
}

def IPU21_CodeletOp : IPU21_GraphItem<"codelet", [
    Symbol, IPU21_UOpScope, NoTerminator, SingleBlock]> {
  let summary = "code a vertex runs: its kind, types, code size and address";
  let description = [{
    ```mlir
    ipu21.codelet @amp amp_matmul(f16 -> f32) code 1024 at 0x4C000
    ```
    What the kinds compute, and their fields (each with its alignment,
    whether it must be interleaved, and the `elem(a) != elem(b)` constraints
    between fields) and parameters, as poplibs' codelets declare theirs:

    | kind | fields | params | loop (`rpt`) |
    |---|---|---|---|
    | `amp_matmul` (ConvPartial1x1Out) | `in` [m×k] in_type, 8 B; `weights` [k×n] in_type, 16 B, interleaved; `out` [m×n] out_type, 16 B, interleaved; elem(in) ≠ elem(out) | m, n, k, accumulate | m rows |
    | `reduce_add` | `partials` [p×n] in_type, 8 B, interleaved; `out` [n] out_type, 8 B | p, n, accumulate | n / lanes |
    | `copy` | `src` [count] in_type; `dst` [count] out_type | count | count / lanes |
    | `fill` | `dst` [count] out_type | count, value | count / lanes |
    | `uop` (generic) | one per body argument, named by `fields`: a window of the argument's buffer | per parallel RANGE `p<i>_lo`, `p<i>_hi`; per field `f` and dimension `d` `f_lo<d>`, `f_ext<d>` | — |

    `amp_matmul` takes f16, f32 or FP8 (ipu21 only, row IPU.7) inputs and
    f32 or f16 partials (f32 inputs: f32). The code occupies `code` bytes at
    `at` on every tile that runs one of its vertices, inside the executable
    region (row IPU.2).

    The generic codelet `uop` runs a UOp body (the l0uop dialect's scalar
    UOps) over one tile's part of the work:

    ```mlir
    ipu21.codelet @scale uop fields ["x", "s", "y"] inputs 2 code 2048 at 0x4C000 {
    ^bb0(%x: !l0uop.buf<128x256xf32>, %s: !l0uop.buf<128xf32>, %y: !l0uop.buf<128x256xf32>):
      %i = l0uop.range 0 to 128 over group_x : index
      ...
      l0uop.end %i
    }
    ```

    Each body argument is a field (the first `inputs` are read only); the
    body indexes the arguments' whole buffers, and a vertex binds each field
    to a window of it: a box of the buffer's index space, stored row-major
    (its parameters give each dimension's first index and extent). Every
    parallel RANGE (`over` an axis) takes the values `[p<i>_lo, p<i>_hi)` of
    its vertex, in the order the RANGEs appear; loop RANGEs run whole. An
    index outside a field's window is a fault. Row IPU.11 checks the body:
    row L0.1's structure, scalar UOps only (no vectors, WMMA, BARRIER,
    CUSTOM or shared buffers), buffers of element types a tile holds (an i1
    buffer is stored one byte per element), and each REDUCE's init defined
    before its RANGE.
  }];
  let arguments = (ins SymbolNameAttr:$sym_name, IPU21_CodeletKindAttr:$kind,
                       TypeAttr:$in_type, TypeAttr:$out_type,
                       OptionalAttr<StrArrayAttr>:$field_names,
                       OptionalAttr<IPU21_I64Attr>:$num_inputs,
                       IPU21_I64Attr:$code_bytes, IPU21_I64Attr:$address);
  let regions = (region AnyRegion:$body);
  let assemblyFormat = [{
    $sym_name custom<KindTypes>($kind, $in_type, $out_type)
    (`fields` $field_names^)? (`inputs` $num_inputs^)? `code` $code_bytes
    `at` custom<Address>($address) attr-dict-with-keyword ($body^)?
  }];
  let hasVerifier = 1;
  let hasRegionVerifier = 1;
  let extraClassDeclaration = [{
    /// The generic codelet's body (kind uop), else null.
    ::mlir::Block *getUOpBody() {
      return getBody().empty() ? nullptr : &getBody().front();
    }
    /// Its fields' count (kind uop), else 0.
    unsigned getNumUOpFields() {
      return getFieldNames() ? getFieldNames()->size() : 0;
    }
  }];
}

//===----------------------------------------------------------------------===//
// Compute
//===----------------------------------------------------------------------===//

def IPU21_ComputeSetOp : IPU21_GraphItem<"compute_set", [
    Symbol, NoTerminator, SingleBlock]> {
  let summary = "vertices that run together in one compute phase";
  let description = [{
    ```mlir
    ipu21.compute_set @mm { ipu21.vertex ... }
    ```
    `ipu21.execute @mm` runs every vertex of the set on its tiles; the phase
    lasts as long as its busiest tile.
  }];
  let arguments = (ins SymbolNameAttr:$sym_name);
  let regions = (region SizedRegion<1>:$body);
  let assemblyFormat = "$sym_name attr-dict-with-keyword $body";
}

def IPU21_VertexOp : IPU21_Op<"vertex", [HasParent<"ComputeSetOp">]> {
  let summary = "a codelet instance on each tile of a set, with its fields bound";
  let description = [{
    ```mlir
    ipu21.vertex @amp on tiles [0, 1472) (in = @x[0, 256), weights = @w_in[0, 256),
        out = @y[0, 256)) params(m = 16, n = 16, k = 16, accumulate = 0) state at 0x4C400
    ```
    One instance of the codelet runs on each tile of the set, with the same
    tile-local fields and parameters: `@obj[b, e)` is the elements `[b, e)`
    of the tile's piece of tensor `@obj`, or of buffer `@obj` on that tile.
    Its state (the codelet's entry, a pointer and a count per field, the
    parameters) occupies `getStateBytes()` bytes at `state at` on each of
    its tiles.
  }];
  let arguments = (ins FlatSymbolRefAttr:$codelet, DenseI64ArrayAttr:$tiles,
                       ArrayAttr:$field_names, ArrayAttr:$field_objects,
                       DenseI64ArrayAttr:$field_ranges, DictionaryAttr:$params,
                       IPU21_I64Attr:$state_address);
  let assemblyFormat = [{
    $codelet `on` `tiles` custom<TileRanges>($tiles)
    custom<Fields>($field_names, $field_objects, $field_ranges)
    `params` `` custom<Params>($params) `state` `at` custom<Address>($state_address) attr-dict
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// Bytes of one instance's state: 4 (the codelet's entry) + 8 per field
    /// (pointer and count) + 4 per parameter, rounded up to 8.
    int64_t getStateBytes();
    /// Field `name`'s index, or -1.
    int getFieldIndex(::llvm::StringRef name);
    /// The elements [begin, end) field `i` binds.
    std::pair<int64_t, int64_t> getFieldRange(unsigned i);
    ::mlir::FlatSymbolRefAttr getFieldObject(unsigned i);
    /// Parameter `name` (0 when absent; the verifier requires them all).
    int64_t getParam(::llvm::StringRef name);
  }];
}

//===----------------------------------------------------------------------===//
// Exchange
//===----------------------------------------------------------------------===//

def IPU21_ExchangeOp : IPU21_GraphItem<"exchange", [
    Symbol, NoTerminator, SingleBlock]> {
  let summary = "sends that run together in one exchange phase";
  let description = [{
    ```mlir
    ipu21.exchange @load_w descriptors at 0x4C600 {
      ipu21.send @w[0, 256) to @w_in[0, 256) on tiles [0, 1472)
    }
    ```
    `ipu21.copy @load_w` runs it. Each tile taking part holds the exchange's
    descriptors at `descriptors at`: `getDescriptorBytes()` bytes, 8 plus 8
    per send it takes part in (as the busiest tile needs). The phase lasts
    as long as the tile that sends or receives the most bytes, at the
    fabric's bytes per cycle (the simulator's model).
  }];
  let arguments = (ins SymbolNameAttr:$sym_name, IPU21_I64Attr:$descriptor_address);
  let regions = (region SizedRegion<1>:$body);
  let assemblyFormat = [{
    $sym_name `descriptors` `at` custom<Address>($descriptor_address)
    attr-dict-with-keyword $body
  }];
  let extraClassDeclaration = [{
    /// The descriptor bytes every participating tile reserves (computed
    /// from the sends; the graph's verifier calls it with the tensors'
    /// mappings resolved).
    int64_t getDescriptorBytes(int64_t maxSendsOnOneTile) {
      return 8 + 8 * maxSendsOnOneTile;
    }
  }];
}

def IPU21_SendOp : IPU21_Op<"send", [HasParent<"ExchangeOp">]> {
  let summary = "elements from one object to another, over the exchange";
  let description = [{
    ```mlir
    ipu21.send @w[0, 256) to @w_in[0, 256) on tiles [0, 8)     // tensor -> buffer, fan-out
    ipu21.send @part[0, 16) from tile 3 to @y[48, 64)            // buffer -> tensor
    ipu21.send @a[0, 64) rows 32 stride 1024 advance 64 to @a_in[0, 2048) on tiles [0, 1)
    ```
    A tensor endpoint names logical elements `[b, e)`: they are read from
    (or written to) their home tiles. A buffer endpoint names tile-local
    elements: the source on the one tile `from tile`, the destination on
    every tile of `on tiles` (one send serves every tile that receives it).
    Both ends have the same element type and count (row IPU.5).

    A tensor source may be a block of `rows` rows: row `r` is the elements
    `[b + r·stride, e + r·stride)`, and the rows land one after another at
    the destination. With `advance A`, the k-th run (from 0) of the
    innermost `ipu21.repeat` around the `ipu21.copy` that runs the exchange
    reads its source `A·k` elements further on: a loop over the chunks of a
    tensor stays one exchange, not one per chunk. The rows of every run lie
    inside the tensor (row IPU.5).
  }];
  let arguments = (ins FlatSymbolRefAttr:$src, IPU21_I64Attr:$src_begin,
                       IPU21_I64Attr:$src_end, OptionalAttr<IPU21_I64Attr>:$src_tile,
                       OptionalAttr<IPU21_I64Attr>:$rows, OptionalAttr<IPU21_I64Attr>:$row_stride,
                       OptionalAttr<IPU21_I64Attr>:$advance,
                       FlatSymbolRefAttr:$dst, IPU21_I64Attr:$dst_begin,
                       IPU21_I64Attr:$dst_end, OptionalAttr<DenseI64ArrayAttr>:$dst_tiles);
  let assemblyFormat = [{
    $src `[` $src_begin `,` $src_end `)` (`from` `tile` $src_tile^)?
    (`rows` $rows^ `stride` $row_stride)? (`advance` $advance^)?
    `to` $dst `[` $dst_begin `,` $dst_end `)` (`on` `tiles` custom<TileRanges>($dst_tiles)^)?
    attr-dict
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// Rows of the source block (1 for a plain range).
    int64_t getNumRows() { return getRows().value_or(1); }
    /// Elements of one source row.
    int64_t getRowLength() { return getSrcEnd() - getSrcBegin(); }
    /// Elements the send moves.
    int64_t getCount() { return getNumRows() * getRowLength(); }
    /// One past the last source element the send reads in run `iteration`.
    int64_t getSrcLast(int64_t iteration) {
      return getSrcEnd() + (getNumRows() - 1) * getRowStride().value_or(0) +
             getAdvance().value_or(0) * iteration;
    }
  }];
}

//===----------------------------------------------------------------------===//
// Programs
//===----------------------------------------------------------------------===//

def IPU21_ProgramOp : IPU21_GraphItem<"program", [
    Symbol, NoTerminator, SingleBlock]> {
  let summary = "a control program: steps run in order on every tile";
  let description = [{
    ```mlir
    ipu21.program @main {
      ipu21.stream_in "images" to @x
      ipu21.repeat 100 { ipu21.execute @mm  ipu21.sync  ipu21.copy @ex  ipu21.sync }
    }
    ```
    The body is a sequence. Every `execute` and `copy` must be followed by a
    `sync` before the next phase begins and before its block ends (row
    IPU.8): the superstep boundary where every tile meets.
  }];
  let arguments = (ins SymbolNameAttr:$sym_name);
  let regions = (region SizedRegion<1>:$body);
  let assemblyFormat = "$sym_name attr-dict-with-keyword $body";
}

class IPU21_Step<string mnemonic, list<Trait> traits = []>
    : IPU21_Op<mnemonic, !listconcat(traits, [
        ParentOneOf<["ProgramOp", "SequenceOp", "RepeatOp", "IfOp"]>])>;

def IPU21_SequenceOp : IPU21_Step<"sequence", [NoTerminator, SingleBlock]> {
  let summary = "steps in order";
  let regions = (region SizedRegion<1>:$body);
  let assemblyFormat = "attr-dict-with-keyword $body";
}

def IPU21_RepeatOp : IPU21_Step<"repeat", [NoTerminator, SingleBlock]> {
  let summary = "steps run a fixed number of times, kept as one body";
  let description = [{
    `ipu21.repeat 100 { ... }`: the body runs `count` (at least 1) times.
    Repeated training steps stay one body, never unrolled.
  }];
  let arguments = (ins IPU21_I64Attr:$count);
  let regions = (region SizedRegion<1>:$body);
  let assemblyFormat = "$count attr-dict-with-keyword $body";
  let hasVerifier = 1;
}

def IPU21_ExecuteOp : IPU21_Step<"execute"> {
  let summary = "run a compute set";
  let arguments = (ins FlatSymbolRefAttr:$compute_set);
  let assemblyFormat = "$compute_set attr-dict";
}

def IPU21_CopyOp : IPU21_Step<"copy"> {
  let summary = "run an exchange";
  let arguments = (ins FlatSymbolRefAttr:$exchange);
  let assemblyFormat = "$exchange attr-dict";
}

def IPU21_SyncOp : IPU21_Step<"sync"> {
  let summary = "every tile meets: the end of a superstep";
  let assemblyFormat = "attr-dict";
}

def IPU21_IfOp : IPU21_Step<"if", [NoTerminator]> {
  let summary = "run one of two bodies on a scalar's value";
  let description = [{
    `ipu21.if @flag { ... } else { ... }`: the `then` body when element 0 of
    tensor `@flag` (an integer or float tensor) is nonzero, else the `else`
    body (which may be empty).
  }];
  let arguments = (ins FlatSymbolRefAttr:$cond);
  let regions = (region SizedRegion<1>:$then_body, AnyRegion:$else_body);
  let assemblyFormat = "$cond $then_body (`else` $else_body^)? attr-dict";
}

def IPU21_StreamInOp : IPU21_Step<"stream_in"> {
  let summary = "copy a host stream's next item into a tensor";
  let arguments = (ins StrAttr:$stream, FlatSymbolRefAttr:$tensor);
  let assemblyFormat = "$stream `to` $tensor attr-dict";
}

def IPU21_StreamOutOp : IPU21_Step<"stream_out"> {
  let summary = "copy a tensor to a host stream";
  let arguments = (ins FlatSymbolRefAttr:$tensor, StrAttr:$stream);
  let assemblyFormat = "$tensor `to` $stream attr-dict";
}

#endif // SYNPL_DIALECT_IPU21_OPS_TD
