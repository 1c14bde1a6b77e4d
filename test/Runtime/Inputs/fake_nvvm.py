#!/usr/bin/env python3
"""Stands in for --synpl-convert-l0uop-to-nvvm{keep-uops=true} followed by
gpu-module-to-binary in the runtime tests, on an L0 plan printed by
`synplc --emit=l0`: every kernel whose buffers all live in device pools
gets device_entry = "<plan>_<kernel>" (characters outside [A-Za-z0-9_] as
`_`, made unique) and keeps its UOps (its host fallback), and the module
gets `gpu.container_module` and one gpu.binary @<plan>_cuda whose PTX
declares one `.entry` per device kernel with one .u64 parameter per buffer
(the bodies only return: the fake driver runs the host fallbacks).

  fake_nvvm.py IN.mlir [--chip sm_80] [--ptx-version 7.0]
"""
import argparse
import re
import sys

ap = argparse.ArgumentParser()
ap.add_argument("input")
ap.add_argument("--chip", default="sm_80")
ap.add_argument("--ptx-version", default="7.0")
a = ap.parse_args()
text = open(a.input).read()

pools = dict(re.findall(r"l0uop\.pool @(\S+) \w+ on (host|device)", text))
slots = dict(re.findall(r"l0uop\.slot @(\S+) pool @(\S+)", text))
plan = re.search(r"l0uop\.plan @([\w.]+)", text).group(1)

entries = []  # (entry name, parameter count)
used = set()


def entry_name(kernel):
    name = re.sub(r"[^A-Za-z0-9_]", "_", plan + "_" + kernel)
    base, n = name, 1
    while name in used:
        name = "%s_%d" % (base, n)
        n += 1
    used.add(name)
    return name


out = []
for line in text.split("\n"):
    m = re.match(r"(\s*)l0uop\.kernel @(\S+) (.*) \{$", line)
    if m:
        head = m.group(3)[: m.group(3).index(" grid(")]
        bufs = re.findall(r"= @(\S+) :", head)
        if bufs and all(pools[slots[b]] == "device" for b in bufs):
            name = entry_name(m.group(2))
            entries.append((name, len(bufs)))
            line = line[: -len(" {")] + ' attributes {device_entry = "%s"} {' % name
    out.append(line)

ptx = ".version %s\n.target %s\n.address_size 64\n" % (a.ptx_version, a.chip)
for name, n in entries:
    params = ",\n".join("\t.param .u64 %s_param_%d" % (name, i) for i in range(n))
    ptx += "\n.visible .entry %s(\n%s\n)\n{\n\tret;\n}\n" % (name, params)


def mlir_string(s):
    return "".join(c if c.isalnum() or c in " ._(),;{}%<>[]+-=" else "\\%02X" % ord(c) for c in s)


result = "\n".join(out)
binary = '  gpu.binary @%s_cuda [#gpu.object<#nvvm.target<chip = "%s">, assembly = "%s">]' % (
    plan, a.chip, mlir_string(ptx))
result = result.replace("module {", "module attributes {gpu.container_module} {\n" + binary, 1)
sys.stdout.write(result)
