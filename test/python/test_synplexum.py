"""The synplexum package: parsing, the phases, compiling a spec, training
with metrics, the search reports and the plot."""
import json
import re
import math
import os
import subprocess
import sys

import pytest

import synplexum


def test_phases():
    assert synplexum.phases() == ["l3", "l2", "l1", "l0", "device", "llvm"]


def test_parse_and_phase(src_root):
    module = synplexum.parse(os.path.join(src_root, "examples/mnist/mnist.l3.mlir"))
    assert module.phase == "l3"
    assert "l3.model @" in str(module)
    l1 = synplexum.parse(os.path.join(src_root, "examples/fashion_mnist/fashion_mnist.l1.mlir"))
    assert l1.phase == "l1"


def test_verifier_errors_are_located():
    context = synplexum.Context()
    bad = 'l1.system @s {\n  l1.node @ram_0 memory {capcity = "32GB"}\n}\n'
    with pytest.raises(synplexum.CompileError) as err:
        context.parse_string(bad, "bad.mlir")
    assert "bad.mlir:2:3: error: 'l1.node' op unknown node property 'capcity'" in str(err.value)


def test_syn_errors_are_located(tmp_path):
    spec = tmp_path / "bad.syn"
    spec.write_text("data mnist {\n    images tensor(f32, [28, 28])\n}\n")
    with pytest.raises(synplexum.CompileError) as err:
        synplexum.parse(spec)
    assert "bad.syn:2:" in str(err.value)


def test_phases_one_at_a_time(src_root):
    module = synplexum.parse(os.path.join(src_root, "examples/fashion_mnist/fashion_mnist.l1.mlir"))
    module.compile(to="l0")
    assert module.phase == "l0"
    assert "l0uop.plan @single_cpu" in str(module)
    module.compile(to="llvm")
    text = str(module)
    assert "llvm.func @main(" in text and "l0uop." not in text
    with pytest.raises(synplexum.CompileError, match="past l1"):
        module.compile(to="l1", from_="llvm")
    with pytest.raises(ValueError):
        module.compile(to="l9")


def test_compile_reports_the_choices(trained):
    program, _, _ = trained
    assert os.access(program.path, os.X_OK)
    assert program.method.startswith("l2.methods @")
    assert "l1.system @" in program.placement
    boundaries = [r.boundary for r in program.reports]
    assert any("L3" in b for b in boundaries) and any("L1" in b for b in boundaries)
    for report in program.reports:
        assert report.enumerated >= report.survivors >= 1
        assert report.winner


def test_metrics_while_training(trained):
    program, run, records = trained
    steps = [r for r in records if r.kind == "step"]
    epochs = [r for r in records if r.kind == "epoch"]
    assert [r.step for r in steps] == [1, 2, 3, 4, 5, 6]
    assert all(math.isfinite(r.loss) and r.loss > 0 for r in steps)
    assert len(epochs) == 1 and epochs[0].step == 6
    # The epoch's loss is the mean of its steps' losses, and the same number
    # the program prints on stdout.
    mean = sum(r.loss for r in steps) / len(steps)
    assert epochs[0].loss == pytest.approx(mean, rel=1e-4)
    line = [l for l in run.output.splitlines() if l.startswith("epoch=1 ")][0]
    printed = dict(kv.split("=") for kv in line.split())
    assert float(printed["loss"]) == pytest.approx(epochs[0].loss, abs=1e-6)
    assert float(printed["test_accuracy"]) == pytest.approx(epochs[0].test_accuracy, abs=1e-4)
    assert 0.0 <= epochs[0].test_accuracy <= 1.0


def test_metrics_file_is_json_lines(trained, tmp_path):
    program, _, _ = trained
    path = tmp_path / "m.jsonl"
    run = program.train(epochs=1, steps=2, no_eval=True, metrics=str(path))
    run.wait()
    lines = path.read_text().splitlines()
    assert [json.loads(l)["kind"] for l in lines] == ["step", "step", "epoch"]
    assert json.loads(lines[-1])["test_accuracy"] is None  # NaN is null
    assert synplexum.read_metrics(str(path))[0].step == 1


def test_a_failing_run_raises(trained):
    program, _, _ = trained
    with pytest.raises(RuntimeError, match="unknown option '--frobnicate'"):
        program.train(frobnicate=1).wait()


def test_plot_writes_a_png(trained, tmp_path):
    pytest.importorskip("matplotlib")
    _, _, records = trained
    png = tmp_path / "curves.png"
    synplexum.plot(records, str(png))
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_plot_command(trained, tmp_path):
    pytest.importorskip("matplotlib")
    program, _, _ = trained
    metrics = tmp_path / "m.jsonl"
    program.train(epochs=1, steps=3, eval_batches=1, metrics=str(metrics)).wait()
    png = tmp_path / "cli.png"
    done = subprocess.run([sys.executable, "-m", "synplexum", "plot", str(metrics), str(png)],
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert png.read_bytes()[:4] == b"\x89PNG"


def test_docs_example_runs_as_written(src_root, tmp_path):
    """The example of docs/python.md, run as written from a copy of the
    repository's layout (examples/ linked in)."""
    text = open(os.path.join(src_root, "docs/python.md"), encoding="utf-8").read()
    blocks = re.findall(r"```python\n(.*?)```", text, re.S)
    assert blocks, "docs/python.md has no python example"
    os.symlink(os.path.join(src_root, "examples"), tmp_path / "examples")
    env = dict(os.environ)
    done = subprocess.run([sys.executable, "-c", blocks[0]], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    assert "l2.methods @classify_method for @classify" in done.stdout
    assert re.search(r"L3->L2 @classify: \d+ candidates", done.stdout)
    assert re.search(r"^step 100: loss \d", done.stdout, re.M)
    assert re.search(r"^epoch 1: loss [0-9.]+, test accuracy 0\.\d+", done.stdout, re.M)
    if "matplotlib" in done.stderr:
        pytest.skip("no matplotlib")
    assert (tmp_path / "curves.png").read_bytes()[:4] == b"\x89PNG"


def test_a_model_placed_on_an_ipu_trains_in_the_simulator(trained, src_root, tmp_path):
    # The C600 system puts the model on its IPU: compile() writes the
    # program file and train() runs it in synpl-ipu21-sim, whose losses are
    # the host build's.
    host, _, _ = trained
    ipu = synplexum.compile(os.path.join(src_root, "examples/fashion_mnist/fashion_mnist.syn"),
                            str(tmp_path / "fm.ipu"),
                            system=os.path.join(src_root, "examples/systems/c600.syn"))
    assert ipu.simulator and os.path.basename(ipu.simulator) == "synpl-ipu21-sim"
    assert "l1.system @c600" in ipu.placement
    with open(ipu.path, "rb") as f:
        assert f.read(8) == b"SYNIPU21"
    on_ipu = [r for r in ipu.train(epochs=1, steps=3, no_eval=True) if r.kind == "step"]
    on_host = [r for r in host.train(epochs=1, steps=3, no_eval=True) if r.kind == "step"]
    assert [r.step for r in on_ipu] == [1, 2, 3]
    for a, b in zip(on_ipu, on_host):
        assert a.loss == pytest.approx(b.loss, rel=1e-5)


def test_search_cache_across_compiles(src_root, tmp_path):
    # The L3 program's method search, kept in the cache folder: the second
    # compile reads the L2 program the first one chose (the same text) and
    # records no search report; without search_cache it searches again.
    spec = os.path.join(src_root, "examples/fashion_mnist/fashion_mnist.syn")
    cache = tmp_path / "cache"
    texts, lines = [], []
    for _ in range(2):
        synplexum._core.clear_search_reports()
        module = synplexum.parse(spec)
        progress = []
        module.compile(to="l2", search_cache=True, cache_dir=str(cache),
                       progress=progress.append)
        texts.append(str(module))
        lines.append(progress)
    assert lines[0] == ["L3 -> L2 (method search)"]
    assert lines[1][0].startswith("L3 -> L2 (method search): the method chosen before")
    assert texts[0] == texts[1]
    assert not synplexum._core.search_reports_json().strip().strip("[]")
    assert [n for n in os.listdir(cache) if n.endswith(".l2.mlir")]
    module = synplexum.parse(spec)
    progress = []
    module.compile(to="l2", cache_dir=str(cache), progress=progress.append)
    assert progress == ["L3 -> L2 (method search)"] and str(module) == texts[0]


def test_kernel_cache_across_compiles(src_root, tmp_path):
    # A learning-rate sweep: the second compile lowers and compiles only the
    # kernel object that holds the learning rate; both train.
    spec = open(os.path.join(src_root, "examples/mnist/mnist.l2.syn")).read()
    cache = tmp_path / "cache"
    lines = {}
    for lr in ("3e-4", "1e-3"):
        path = tmp_path / f"lr{lr}.syn"
        path.write_text(spec.replace("lr: 3e-4", f"lr: {lr}"))
        module = synplexum.parse(path)
        module.compile(to="llvm", kernel_cache=True, cache_dir=str(cache),
                       progress=lines.setdefault(lr, []).append)
        module.write_executable(str(tmp_path / f"train{lr}"))
    first = [l for l in lines["3e-4"] if l.startswith("kernels:")]
    second = [l for l in lines["1e-3"] if l.startswith("kernels:")]
    assert first and re.match(r"kernels: (\d+) in \d+ objects, 0 from the cache", first[0])
    total = int(re.match(r"kernels: (\d+)", second[0]).group(1))
    reused = int(re.search(r"(\d+) from the cache", second[0]).group(1))
    assert 0 < reused < total
    assert any(name.endswith(".kernels") for name in os.listdir(cache))

    # Such a module declares the cached kernels: an object cannot hold it,
    # nor an executable for another CPU.
    module = synplexum.parse(tmp_path / "lr1e-3.syn")
    module.compile(to="llvm", kernel_cache=True, cache_dir=str(cache))
    with pytest.raises(synplexum.CompileError, match="only an executable can be written"):
        module.write_object(str(tmp_path / "x.o"))
    with pytest.raises(synplexum.CompileError, match="keyed for CPU native at O3"):
        module.write_executable(str(tmp_path / "x"), opt_level=1)

    # An object the compile found, removed from the cache before the link
    # (as the size limit would): the link names it and says what to do,
    # and writes nothing.
    kernel_objects = [cache / n for n in os.listdir(cache) if n.endswith(".kernels")]
    for manifest in kernel_objects:
        os.remove(manifest.with_suffix(".o"))
    with pytest.raises(synplexum.CompileError,
                       match=r"kernel object .*\.o that this module was compiled against is "
                             r"no longer in the object cache.*compile the program again"):
        module.write_executable(str(tmp_path / "evicted"))
    assert not (tmp_path / "evicted").exists()
