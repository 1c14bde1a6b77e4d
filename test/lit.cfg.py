# -*- Python -*-
import os
import shutil
import sys

import lit.formats
from lit.llvm import llvm_config
from lit.llvm.subst import ToolSubst

config.name = "synplexum"
config.test_format = lit.formats.ShTest(not llvm_config.use_lit_shell)
config.suffixes = [".mlir", ".test"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.synpl_obj_root, "test")
config.excludes = ["lit.cfg.py", "lit.site.cfg.py", "CMakeLists.txt", "unit", "Inputs", "lib", "fuzz"]

config.substitutions.append(("%synpl_src_root", config.synpl_src_root))
config.substitutions.append(("%synpl_obj_root", config.synpl_obj_root))
config.substitutions.append(("%python", sys.executable))
config.substitutions.append(("%PATH%", config.environment["PATH"]))

llvm_config.with_system_environment(["HOME", "INCLUDE", "LIB", "TMP", "TEMP"])
llvm_config.use_default_substitutions()

tool_dirs = [config.synpl_tools_dir, config.llvm_tools_dir]
tools = ["synpl-opt", "synpl-translate", "synpl-lsp-server", "synpl-interp", "synplc",
         "synpl-diff-fuzz",
         "synpl-tiled-matmul", "synpl-ipu21-sim"]
llvm_config.add_tool_substitutions(tools, tool_dirs)
llvm_config.with_environment("PATH", config.llvm_tools_dir, append_path=True)
# synplc's default system asks the CUDA driver for GPUs: a developer's GPU
# must not change what the tests place. Tests of the detection set it to 1
# (with the fake driver of test/lib/FakeCuda on LD_LIBRARY_PATH).
config.environment["SYNPL_CUDA_DETECT"] = "0"
# The object cache of the executables tests compile: the build tree's, not
# the user's (~/.cache/synpl).
config.environment["SYNPL_CACHE_DIR"] = os.path.join(config.test_exec_root, "object-cache")

# The real Fashion-MNIST files (Debian's datasets path); tests that train on
# them say `REQUIRES: fashion-mnist` and are UNSUPPORTED where they are missing.
if os.path.exists("/usr/share/datasets/fashion-mnist/train-images-idx3-ubyte.gz"):
    config.available_features.add("fashion-mnist")

# Open MPI's launcher (Debian's openmpi-bin): data-parallel tests run the
# compiled programs under `mpirun`, as root here when the machine runs the
# tests as root. Not in a sanitizer tree (libmpi is not instrumented).
mpirun = shutil.which("mpirun")
if mpirun:
    config.available_features.add("mpirun")
    root = " --allow-run-as-root" if os.geteuid() == 0 else ""
    config.substitutions.append(("%mpirun", mpirun + root + " --oversubscribe"))

# The CUDA toolkit's assembler: tests that assemble PTX say `REQUIRES: ptxas`
# (a fresh Debian machine has no toolkit). %ptxas is its path.
ptxas = "/usr/local/cuda/bin/ptxas"
if not os.path.exists(ptxas):
    ptxas = shutil.which("ptxas") or ""
if ptxas:
    config.available_features.add("ptxas")
    config.substitutions.append(("%ptxas", ptxas))

# A real NVIDIA driver where the dynamic loader finds it: the no-driver test
# cannot hide it.
import ctypes
try:
    ctypes.CDLL("libcuda.so.1")
    config.available_features.add("system-libcuda")
except OSError:
    pass

# The CUDA runtime tests: the fake driver (test/lib/FakeCuda, built as
# libcuda.so.1 in its own folder) and the link line of a compiled program
# (its object, the host runtime, the system libraries).
config.substitutions.append(("%fake_cuda_dir", os.path.join(config.synpl_obj_root, "test", "lib", "FakeCuda")))
# The fake NCCL (test/lib/FakeNccl: the ranks' collectives of fake GPU
# memory combined over shared memory), for SYNPL_NCCL_LIB.
config.substitutions.append(("%fake_nccl_lib", os.path.join(config.synpl_obj_root, "test", "lib", "FakeNccl", "libnccl.so.2")))
config.substitutions.append(("%full_disk_lib", os.path.join(config.synpl_obj_root, "test", "lib", "FullDisk", "libsynpl-full-disk.so")))
config.substitutions.append(("%synpl_runtime_lib", os.path.join(config.synpl_obj_root, "lib", "Runtime", "libSynplRuntime.a")))
# In a sanitizer tree (scripts/asan-tree.sh) the runtime library is
# instrumented, so a program linked by hand needs the sanitizers' runtimes
# as synplc's own link line adds them.
synpl_cxx = config.synpl_cxx
# The IPU training test's steps: the simulator interprets every UOp, so a
# sanitizer tree (-O1, instrumented) trains fewer of them.
config.substitutions.append(("%ipu21_train_steps", "10" if config.synpl_sanitizers else "100"))
if config.synpl_sanitizers:
    synpl_cxx += " -fsanitize=" + config.synpl_sanitizers
    config.available_features.add("sanitizers")
config.substitutions.append(("%synpl_cxx", synpl_cxx))
