#!/usr/bin/env python3
"""ctest `dependency-rule`: the library graph of docs/architecture.md.

Reads two things and checks both against one table of which component may
depend on which:
  * every `#include "synpl/..."` (and "mlir/...", "llvm/...") line of the
    sources under dialects/, lib/ and tools/;
  * every synplexum library a CMakeLists.txt links (synpl_add_library /
    synpl_add_dialect LINK_LIBS, target_link_libraries).
Prints each violation as file:line and exits 1 if there is one.

usage: check-deps.py <source-dir>
"""
import os
import re
import sys

# Components, by the folder a source or header lives in (first match wins).
SOURCE_COMPONENTS = [
    ("lib/Runtime", "runtime"),
    ("lib/Support", "support"),
    ("lib/Analysis", "support"),
    ("lib/Interfaces", "support"),
    ("lib/Search", "search"),
    ("dialects", "dialect"),
    ("lib/Reference", "reference"),
    ("lib/Transforms", "transforms"),
    ("lib/Conversion", "conversion"),
    ("lib/Target/IPU21/Sim", "ipu21-sim"),
    ("lib/Target", "target"),
    ("lib/Frontend", "frontend"),
    ("lib/Pipelines", "pipelines"),
    ("lib/Registration", "registration"),
    ("lib/Driver", "driver"),
    ("lib/CAPI", "capi"),
    ("tools", "tool"),
]

# Headers, by the path after `synpl/` (first match wins).
HEADER_COMPONENTS = [
    ("Runtime/PlanFormat.h", "format"),  # the plan's binary layout: plain data
    ("Runtime/", "runtime"),
    ("Support/", "support"),
    ("Analysis/", "support"),
    ("Interfaces/", "support"),
    ("Search/", "search"),
    ("Dialect/", "dialect"),
    ("Reference/", "reference"),
    ("Transforms/", "transforms"),
    ("Conversion/", "conversion"),
    ("Target/CudaTarget.h", "target-facts"),  # GPU limits: plain data
    ("Target/IPU21/Facts.h", "target-facts"),  # the IPU's facts: plain data
    ("Target/IPU21/CostModel.h", "target-facts"),  # formulas over the facts
    ("Target/IPU21/Program.h", "ipu21-sim"),  # the program file and simulator
    ("Target/IPU21/ProgramFile.h", "ipu21-sim"),
    ("Target/IPU21/Simulator.h", "ipu21-sim"),
    ("Target/IPU21/ExchangeSchedule.h", "ipu21-sim"),
    ("Target/", "target"),
    ("Frontend/", "frontend"),
    ("Pipelines/", "pipelines"),
    ("InitAllDialects.h", "dialect"),
    ("InitAllPasses.h", "pipelines"),
    ("InitAll.h", "registration"),
    ("Driver/", "driver"),
]
# The C API's headers are `synpl-c/...`: only the C API and its users (the
# Python package, other languages) include them.

BASE = {"support", "format"}
# Who may depend on whom (besides itself). Never upward: a dialect knows no
# lowering, target or syntax; the search knows no layer; the runtime knows
# no MLIR.
ALLOWED = {
    "runtime": {"format"},
    # The ipu21 program file and simulator: plain C++ like the runtime.
    "ipu21-sim": {"format", "target-facts"},
    "support": BASE,
    "search": BASE,
    "dialect": BASE,
    "reference": BASE | {"dialect"},
    "transforms": BASE | {"dialect", "search"},
    "conversion": BASE | {"dialect", "search", "target-facts"},
    "target": BASE | {"dialect", "target-facts", "ipu21-sim"},
    "frontend": BASE | {"dialect"},
    "pipelines": BASE | {"dialect", "search", "transforms", "conversion",
                         "target", "target-facts"},
    "registration": BASE | {"dialect", "search", "transforms", "conversion",
                            "target", "target-facts", "pipelines"},
    "driver": BASE | {"dialect", "search", "transforms", "conversion", "target",
                      "target-facts", "pipelines", "registration", "frontend"},
    "capi": BASE | {"dialect", "search", "pipelines", "registration", "driver"},
    "tool": None,  # tools may use anything
}

# Libraries, by name, with the component they belong to.
LIBRARY_COMPONENTS = {
    "SynplRuntime": "runtime",
    "SynplSupport": "support", "SynplAnalysis": "support",
    "SynplSpecInterfaces": "support",
    "SynplSearch": "search",
    "SynplReference": "reference",
    "SynplTransforms": "transforms",
    "SynplTargetCUDA": "target-facts",
    "SynplCudaDevices": "target", "SynplCudaPtxas": "target",
    "SynplTargetHost": "target",
    "SynplTargetIPU21": "target", "SynplIPU21Sim": "ipu21-sim",
    "SynplFrontend": "frontend",
    "SynplPipelines": "pipelines",
    "SynplRegistration": "registration",
    "SynplDriver": "driver",
    "SynplCAPI": "capi",
}
for d in ("L3", "L2", "L1", "L0Ctl", "L0UOp", "IPU21"):
    LIBRARY_COMPONENTS["Synpl" + d] = "dialect"
for c in ("L3ToL2", "L2ToL1", "L1ToL0", "L0ToLLVM", "L0ToNVVM"):
    LIBRARY_COMPONENTS["Synpl" + c] = "conversion"

INCLUDE = re.compile(r'^\s*#\s*include\s+"((synpl|mlir|llvm)/[^"]+)"')


def component_of_source(rel):
    for prefix, comp in SOURCE_COMPONENTS:
        if rel == prefix or rel.startswith(prefix + "/"):
            return comp
    return None


def component_of_header(path):
    for prefix, comp in HEADER_COMPONENTS:
        if path.startswith(prefix):
            return comp
    return None


def allowed(src, dst):
    if src == dst or ALLOWED[src] is None:
        return True
    return dst in ALLOWED[src]


def main():
    root = sys.argv[1]
    errors = []
    checked_includes = checked_links = 0
    for top in ("dialects", "lib", "tools"):
        for dirpath, _, files in os.walk(os.path.join(root, top)):
            for name in sorted(files):
                path = os.path.join(dirpath, name)
                rel = os.path.relpath(path, root)
                src = component_of_source(rel)
                if src is None:
                    continue
                if name.endswith((".cpp", ".h", ".c")):
                    with open(path, encoding="utf-8") as f:
                        for lineno, line in enumerate(f, 1):
                            m = INCLUDE.match(line)
                            if not m:
                                continue
                            header = m.group(1)
                            if header.startswith(("mlir/", "llvm/")):
                                checked_includes += 1
                                if src in ("runtime", "ipu21-sim"):
                                    errors.append(f"{rel}:{lineno}: {src} includes "
                                                  f"{header}; it knows no MLIR or LLVM")
                                continue
                            dst = component_of_header(header[len("synpl/"):])
                            checked_includes += 1
                            if dst and not allowed(src, dst):
                                errors.append(f"{rel}:{lineno}: {src} includes {header} "
                                              f"({dst})")
                elif name == "CMakeLists.txt":
                    text = open(path, encoding="utf-8").read()
                    for m in re.finditer(r"\b(Synpl[A-Za-z0-9]+)\b", text):
                        lib = m.group(1)
                        dst = LIBRARY_COMPONENTS.get(lib)
                        if dst is None:
                            continue
                        # Only uses in a link list count, not the library's
                        # own definition or an IncGen target.
                        before = text[:m.start()]
                        defining = re.search(r"(synpl_add_library|add_library|set_property)"
                                             r"\(\s*$", before[-60:]) is not None
                        if defining or re.search(r"synpl_add_library\(\s*" + lib, text):
                            continue
                        if not re.search(r"(LINK_LIBS|target_link_libraries)[^)]*$", before):
                            continue
                        checked_links += 1
                        if not allowed(src, dst):
                            lineno = text.count("\n", 0, m.start()) + 1
                            errors.append(f"{rel}:{lineno}: {src} links {lib} ({dst})")
    for e in errors:
        print(e)
    print(f"dependency rule: {checked_includes} includes and {checked_links} links "
          f"checked, {len(errors)} violations")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
