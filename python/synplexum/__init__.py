"""synplexum: compile a training spec and train it, from Python.

    import synplexum

    program = synplexum.compile("examples/fashion_mnist/fashion_mnist.syn", "train")
    print(program.method)                  # what the L3 -> L2 search chose
    for m in program.train(epochs=1):      # metrics while it trains
        if m.kind == "epoch":
            print(m.epoch, m.loss, m.test_accuracy)

The compiler is the same one `synplc` runs (through the C API of
include/synpl-c/); `Context` and `Module` give the phases one at a time.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import textwrap
from dataclasses import dataclass, field
from typing import Callable, Dict, List, Optional

from . import _core
from ._core import CompileError, Context, Module
from .run import Metric, Run, read_metrics
from .plot import plot

__all__ = [
    "CompileError", "Context", "Module", "Metric", "Run", "Program", "SearchReport",
    "compile", "parse", "phases", "plot", "read_metrics",
]

__version__ = "0.1.0"


def phases() -> List[str]:
    """The compiler's phases, in order: l3, l2, l1, l0, device, llvm."""
    return list(_core.phases())


def parse(path: str, context: Optional[Context] = None) -> Module:
    """Parses and verifies a .syn spec or an MLIR program (raises CompileError)."""
    return (context or Context()).parse_file(os.fspath(path))


@dataclass
class SearchReport:
    """One search boundary's report: what was enumerated, rejected and chosen."""

    boundary: str
    enumerated: int
    survivors: int
    winner: Optional[str]
    why: str
    rejections: Dict[str, int]
    top: List[dict]
    elapsed_ms: float
    failure: Optional[dict] = None
    raw: dict = field(default_factory=dict, repr=False)

    @staticmethod
    def from_json(obj: dict) -> "SearchReport":
        return SearchReport(
            boundary=obj.get("boundary", ""),
            enumerated=int(obj.get("enumerated", 0)),
            survivors=int(obj.get("survivors", 0)),
            winner=obj.get("winner"),
            why=obj.get("why", ""),
            rejections={f["name"]: int(f["rejected"]) for f in obj.get("filters", [])},
            top=list(obj.get("top", [])),
            elapsed_ms=obj.get("elapsed_us", 0) / 1000.0,
            failure=obj.get("failure"),
            raw=obj,
        )

    def __str__(self) -> str:
        chosen = self.winner if self.winner is not None else "nothing"
        return (f"{self.boundary}: {self.enumerated} candidates, {self.survivors} "
                f"survived, chose {chosen} ({self.elapsed_ms:.1f} ms)")


def _take_reports() -> List[SearchReport]:
    text = _core.search_reports_json().strip()
    _core.clear_search_reports()
    return [SearchReport.from_json(r) for r in json.loads(text)] if text else []


def _ops(text: str, name: str) -> List[str]:
    """The printed ops `name` of a module, each with the lines indented under
    it (its regions and trailing clauses), dedented."""
    found = []
    lines = text.splitlines()
    for i, line in enumerate(lines):
        body = line.lstrip()
        if not re.match(re.escape(name) + r"\b", body):
            continue
        indent = len(line) - len(body)
        end = i + 1
        while end < len(lines) and (not lines[end].strip() or
                                    len(lines[end]) - len(lines[end].lstrip()) > indent):
            end += 1
        found.append(textwrap.dedent("\n".join(lines[i:end])))
    return found


@dataclass
class Program:
    """A compiled training program: the executable and how it was chosen."""

    path: str
    method: str
    placement: str
    reports: List[SearchReport]
    source: str

    #: An IPU program's simulator (synpl-ipu21-sim); None: an executable.
    simulator: Optional[str] = None

    def train(self, **options) -> Run:
        """Runs the program; iterate the result for its metrics as it trains.

        Options are the program's own flags without dashes: epochs=3,
        steps=100, threads=2, data="DIR", no_eval=True, ... An IPU program
        trains in the simulator, which takes the same options.
        """
        return Run(self.path, launcher=[self.simulator] if self.simulator else None, **options)

    def __str__(self) -> str:
        return f"Program({self.path})"


def compile(source, output: Optional[str] = None, *, target: str = "auto",
            cuda_arch: str = "", system: str = "", ptxas: str = "",
            cpu: str = "native", opt_level: int = 3,
            progress: Optional[Callable[[str], None]] = None) -> Program:
    """Compiles a .syn spec (or an L3, L2 or L1 MLIR program) into a training
    executable at `output` (default: the source's name without extension);
    a model placed on an IPU node of `system` (or `target="ipu21"`) into an
    IPU program file there, which `train` runs in synpl-ipu21-sim.

    The searches the program leaves open run as in synplc: L3 -> L2 picks the
    method, L2 -> L1 places it (on `system`, else the program's own, else
    this machine). Raises CompileError with the compiler's diagnostics.
    """
    source = os.fspath(source)
    if output is None:
        base = os.path.basename(source).split(".")[0]
        output = os.path.join(os.getcwd(), base)
    context = Context()
    _core.clear_search_reports()
    module = context.parse_file(source)
    options = dict(target=target, cuda_arch=cuda_arch, ptxas=ptxas, progress=progress)
    method = placement = ""
    if module.phase in ("l3", "l2"):
        module.compile(to="l2", **options)
        method = "\n".join(_ops(str(module), "l2.methods"))
    if module.phase in ("l2", "l1"):
        # The system places an L2 program; a placed one keeps its own.
        module.compile(to="l1", system=system if module.phase == "l2" else "", **options)
        text = str(module)
        placement = "\n".join(_ops(text, "l1.system") + _ops(text, "l1.pipeline"))
    # Kernels compiled before (the same L0 code, target and options) come
    # from the object cache without being lowered: a sweep over learning
    # rates recompiles one kernel object per run.
    module.compile(to="llvm", kernel_cache=True, cpu=cpu, opt_level=opt_level, **options)
    simulator = None
    if module.is_ipu21_program:
        # Placed on an IPU (or target="ipu21"): its program file, which the
        # BSP simulator trains.
        module.write_ipu21_program(os.fspath(output))
        simulator = _ipu21_simulator()
    else:
        module.write_executable(os.fspath(output), cpu=cpu, opt_level=opt_level)
    return Program(path=os.path.abspath(output), method=method, placement=placement,
                   reports=_take_reports(), source=source, simulator=simulator)


def _ipu21_simulator() -> str:
    """synpl-ipu21-sim: $SYNPL_IPU21_SIM, else beside this package's build or
    install (../../bin), else on the PATH."""
    explicit = os.environ.get("SYNPL_IPU21_SIM")
    if explicit:
        return explicit
    here = os.path.dirname(os.path.abspath(__file__))
    for candidate in (os.path.join(here, "..", "..", "bin", "synpl-ipu21-sim"),
                      os.path.join(here, "..", "..", "..", "..", "bin", "synpl-ipu21-sim")):
        if os.access(candidate, os.X_OK):
            return os.path.normpath(candidate)
    found = shutil.which("synpl-ipu21-sim")
    if not found:
        raise FileNotFoundError("synpl-ipu21-sim, which trains an IPU program, is neither beside "
                                "the synplexum package nor on the PATH (set SYNPL_IPU21_SIM)")
    return found
