// Text fields (format text): windows of bytes of a plain-text file, with
// the window's shift and the spacing of window starts; a batch reads text
// fields of one file together. Round trip, then every rule the verifiers
// check.
// RUN: synpl-opt %s -split-input-file -verify-diagnostics | FileCheck %s

// CHECK: l1.field @bytes : tensor<64xui8> at @ssd_0 path "corpus.txt" format text stride 4{{$}}
// CHECK: l1.field @bytes_next : tensor<64xui8> at @ssd_0 path "corpus.txt" format text shift 1 stride 4{{$}}
// CHECK: l1.read_batch @corpus [@bytes, @bytes_next] batch 32 shuffle drop_last seed 0
// CHECK: l1.schedule pipelines [@p] actors [] pipeline_depth 1 epochs 1 steps 1000
l1.system @s {
  l1.node @ssd_0 storage
  l1.node @ram_0 memory {capacity = "1GB"}
  l1.node @cpu_0 compute {isa = "x86_64", cores = 2}
  l1.edge @ssd_0 -> @ram_0 bandwidth "2GB/s"
  l1.edge @ram_0 <-> @cpu_0 bandwidth "50GB/s"
}
l1.data @corpus {
  l1.field @bytes : tensor<64xui8> at @ssd_0 path "corpus.txt" format text stride 4
  l1.field @bytes_next : tensor<64xui8> at @ssd_0 path "corpus.txt" format text shift 1 stride 4
}
l1.stage @st on @cpu_0 process() {
  %x, %y = l1.read_batch @corpus [@bytes, @bytes_next] batch 32 shuffle drop_last seed 0 : !l1.buf<@ram_0, tensor<32x64xui8>>, !l1.buf<@ram_0, tensor<32x64xui8>>
  l1.drop %x : !l1.buf<@ram_0, tensor<32x64xui8>>
  l1.drop %y : !l1.buf<@ram_0, tensor<32x64xui8>>
  l1.end
}
l1.pipeline @p = @st
l1.schedule pipelines [@p] actors [] pipeline_depth 1 epochs 1 steps 1000

// -----

l1.system @s {
  l1.node @ssd_0 storage
}
l1.data @corpus {
  // expected-error @+1 {{[consistency] L1.5: text field @bytes holds windows of bytes, tensor<N x ui8>, not 'tensor<64xf32>'}}
  l1.field @bytes : tensor<64xf32> at @ssd_0 path "corpus.txt" format text
}

// -----

l1.system @s {
  l1.node @ssd_0 storage
}
l1.data @corpus {
  // expected-error @+1 {{[consistency] L1.5: text field @bytes has shift 2; a window of N + 1 bytes holds shifts 0 (the inputs) and 1 (the next bytes)}}
  l1.field @bytes : tensor<64xui8> at @ssd_0 path "corpus.txt" format text shift 2
}

// -----

l1.system @s {
  l1.node @ssd_0 storage
}
l1.data @d {
  // expected-error @+1 {{shift and stride are attributes of a text field; field @f has format idx}}
  l1.field @f : tensor<4xui8> at @ssd_0 path "f" format idx stride 2
}

// -----

l1.system @s {
  l1.node @ssd_0 storage
  l1.node @ram_0 memory {capacity = "1GB"}
  l1.node @cpu_0 compute {isa = "x86_64", cores = 2}
  l1.edge @ssd_0 -> @ram_0 bandwidth "2GB/s"
  l1.edge @ram_0 <-> @cpu_0 bandwidth "50GB/s"
}
l1.data @d {
  l1.field @bytes : tensor<8xui8> at @ssd_0 path "corpus.txt" format text
  l1.field @labels : tensor<8xui8> at @ssd_0 path "labels.gz" format idx
}
l1.stage @st on @cpu_0 process() {
  // expected-error @+1 {{[consistency] L1.5: reads text field @bytes with non-text field @labels in one batch; their samples are not counted alike}}
  %x, %y = l1.read_batch @d [@bytes, @labels] batch 4 shuffle : !l1.buf<@ram_0, tensor<4x8xui8>>, !l1.buf<@ram_0, tensor<4x8xui8>>
  l1.drop %x : !l1.buf<@ram_0, tensor<4x8xui8>>
  l1.drop %y : !l1.buf<@ram_0, tensor<4x8xui8>>
  l1.end
}

// -----

l1.system @s {
  l1.node @ssd_0 storage
  l1.node @ram_0 memory {capacity = "1GB"}
  l1.node @cpu_0 compute {isa = "x86_64", cores = 2}
  l1.edge @ssd_0 -> @ram_0 bandwidth "2GB/s"
  l1.edge @ram_0 <-> @cpu_0 bandwidth "50GB/s"
}
l1.data @d {
  l1.field @a : tensor<8xui8> at @ssd_0 path "one.txt" format text
  l1.field @b : tensor<8xui8> at @ssd_0 path "two.txt" format text shift 1
}
l1.stage @st on @cpu_0 process() {
  // expected-error @+1 {{[consistency] L1.5: text fields @a and @b of one batch must read the same file in windows of the same length and stride}}
  %x, %y = l1.read_batch @d [@a, @b] batch 4 shuffle : !l1.buf<@ram_0, tensor<4x8xui8>>, !l1.buf<@ram_0, tensor<4x8xui8>>
  l1.drop %x : !l1.buf<@ram_0, tensor<4x8xui8>>
  l1.drop %y : !l1.buf<@ram_0, tensor<4x8xui8>>
  l1.end
}

// -----

l1.system @s {
  l1.node @ssd_0 storage
}
l1.data @d {
  // expected-error @+1 {{'l1.field' op attribute 'stride' failed to satisfy constraint}}
  l1.field @f : tensor<4xui8> at @ssd_0 path "f" format text stride 0
}
