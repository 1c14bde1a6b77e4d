# -*- Python -*-
import os
import sys

import lit.formats
from lit.llvm import llvm_config
from lit.llvm.subst import ToolSubst

config.name = "synplexum"
config.test_format = lit.formats.ShTest(not llvm_config.use_lit_shell)
config.suffixes = [".mlir", ".test"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.synpl_obj_root, "test")
config.excludes = ["lit.cfg.py", "lit.site.cfg.py", "CMakeLists.txt", "unit", "Inputs"]

config.substitutions.append(("%synpl_src_root", config.synpl_src_root))
config.substitutions.append(("%synpl_obj_root", config.synpl_obj_root))
config.substitutions.append(("%python", sys.executable))
config.substitutions.append(("%PATH%", config.environment["PATH"]))

llvm_config.with_system_environment(["HOME", "INCLUDE", "LIB", "TMP", "TEMP"])
llvm_config.use_default_substitutions()

tool_dirs = [config.synpl_tools_dir, config.llvm_tools_dir]
tools = ["synpl-opt", "synpl-translate", "synpl-lsp-server", "synpl-interp", "synplc",
         "synpl-tiled-matmul"]
llvm_config.add_tool_substitutions(tools, tool_dirs)
llvm_config.with_environment("PATH", config.llvm_tools_dir, append_path=True)

# The real Fashion-MNIST files (Debian's datasets path); tests that train on
# them say `REQUIRES: fashion-mnist` and are UNSUPPORTED where they are missing.
if os.path.exists("/usr/share/datasets/fashion-mnist/train-images-idx3-ubyte.gz"):
    config.available_features.add("fashion-mnist")

# The CUDA toolkit's assembler: tests that assemble emitted PTX say
# `REQUIRES: ptxas` and run it as %ptxas.
import shutil
_ptxas = shutil.which("ptxas") or "/usr/local/cuda/bin/ptxas"
if os.access(_ptxas, os.X_OK):
    config.available_features.add("ptxas")
    config.substitutions.append(("%ptxas", _ptxas))
