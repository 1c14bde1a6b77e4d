"""Running a compiled program: its metrics as an iterator while it trains.

Every program synplc (or synplexum.compile) makes takes `--metrics FILE` and
appends one JSON object per line to it: a `step` record per update step, an
`epoch` record per epoch (with `test_accuracy`), and for a text program an
`eval` record per validation and a `done` record at the end. `Run` starts
the program with a metrics file and yields the records as they are written.
"""

from __future__ import annotations

import json
import math
import os
import subprocess
import tempfile
import time
from dataclasses import dataclass
from typing import Iterator, List, Optional


@dataclass
class Metric:
    """One record of a run's metrics file."""

    kind: str  # step, epoch, eval, done
    step: Optional[int] = None
    epoch: Optional[int] = None
    loss: Optional[float] = None
    test_accuracy: Optional[float] = None
    val_loss: Optional[float] = None
    val_bits_per_byte: Optional[float] = None
    samples_per_s: Optional[float] = None
    tokens_per_s: Optional[float] = None
    time_s: Optional[float] = None

    @staticmethod
    def from_json(obj: dict) -> "Metric":
        known = {k: obj.get(k) for k in Metric.__dataclass_fields__}
        return Metric(**known)


def read_metrics(path: str) -> List[Metric]:
    """Every record of a metrics file (JSON lines) written by `--metrics`."""
    with open(path, encoding="utf-8") as f:
        return [Metric.from_json(json.loads(line)) for line in f if line.strip()]


def _flags(options: dict) -> List[str]:
    flags = []
    for key, value in options.items():
        name = "--" + key.replace("_", "-")
        if value is True:
            flags.append(name)
        elif value is False or value is None:
            continue
        else:
            flags += [name, str(value)]
    return flags


class Run:
    """A running training program. Iterating yields its Metric records as
    they are written; when it ends, a non-zero exit raises RuntimeError with
    the program's own error message. `history` keeps every record seen."""

    def __init__(self, executable: str, metrics: Optional[str] = None,
                 launcher: Optional[List[str]] = None, **options):
        """`launcher`: the command that runs `executable` (an IPU program's
        simulator); None: it runs itself."""
        self.executable = executable
        self._own_metrics = metrics is None
        if metrics is None:
            fd, metrics = tempfile.mkstemp(prefix="synpl-metrics-", suffix=".jsonl")
            os.close(fd)
        else:
            open(metrics, "w").close()
        self.metrics_path = metrics
        self.history: List[Metric] = []
        options.setdefault("quiet", True)
        self.command = list(launcher or []) + [executable, "--metrics", metrics] + _flags(options)
        self._process = subprocess.Popen(self.command, stdout=subprocess.PIPE,
                                         stderr=subprocess.PIPE, text=True)
        self._stdout = ""
        self._stderr = ""

    def __iter__(self) -> Iterator[Metric]:
        with open(self.metrics_path, encoding="utf-8") as f:
            pending = ""
            while True:
                chunk = f.readline()
                if chunk:
                    pending += chunk
                    if pending.endswith("\n"):
                        record = Metric.from_json(json.loads(pending))
                        pending = ""
                        self.history.append(record)
                        yield record
                    continue
                if self._process.poll() is not None:
                    rest = f.read()
                    for line in (pending + rest).splitlines():
                        if line.strip():
                            record = Metric.from_json(json.loads(line))
                            self.history.append(record)
                            yield record
                    break
                time.sleep(0.02)
        self._finish()

    def wait(self) -> List[Metric]:
        """Runs to the end; every record."""
        for _ in self:
            pass
        return self.history

    @property
    def output(self) -> str:
        """What the program printed (its epoch= / step= lines)."""
        return self._stdout

    def _finish(self) -> None:
        out, err = self._process.communicate()
        self._stdout, self._stderr = out, err
        if self._own_metrics:
            try:
                os.unlink(self.metrics_path)
            except OSError:
                pass
        if self._process.returncode != 0:
            message = err.strip() or f"exit status {self._process.returncode}"
            raise RuntimeError(f"{os.path.basename(self.executable)}: {message}")

    def epochs(self) -> List[Metric]:
        return [m for m in self.history if m.kind == "epoch"]

    def final_loss(self) -> float:
        losses = [m.loss for m in self.history if m.kind in ("epoch", "eval")
                  and m.loss is not None]
        return losses[-1] if losses else math.nan
