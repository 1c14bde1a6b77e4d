// The spec's "Trace - MNIST at L1" system.
l1.system @single_gpu {
  l1.node @ssd_0 storage
  l1.node @ram_0 memory {capacity = "32GB"}
  l1.node @cpu_0 compute {isa = "x86_64", cores = 8}
  l1.node @gpu_0 compute {isa = "cuda", vram = "24GB", sm = 84}
  l1.edge @ssd_0 -> @ram_0 bandwidth "2GB/s"
  l1.edge @ram_0 <-> @cpu_0 bandwidth "50GB/s"
  l1.edge @cpu_0 <-> @gpu_0 bandwidth "32GB/s"
}
