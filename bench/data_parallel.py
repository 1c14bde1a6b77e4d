#!/usr/bin/python3
"""Data- and tensor-parallel training on this machine: ranks against one process.

The spec's Fashion-MNIST program (examples/fashion_mnist/fashion_mnist.syn)
is compiled three times with synplc:

  * one process (this machine's own system), the peer;
  * two replicas, test/Tools/synplc/Inputs/fashion-mnist-shard2.syn on
    examples/systems/2-hosts.syn (distributed_shard of 2 x 64: left to
    itself, the search splits this MLP across the two hosts instead);
  * four replicas, test/Tools/synplc/Inputs/fashion-mnist-shard4.syn on
    test/Tools/synplc/Inputs/4-hosts.syn (distributed_shard of 4 x 32);
  * both again with update sharding (synplc --update-sharding=on: each
    replica updates its block of the large weights; ZeRO stage 1), the
    plain ones compiled with --update-sharding=off;
  * two shards, examples/systems/2-small-hosts.syn (tensor parallel: the
    two large linears split by columns, every rank on the whole batch);
  * test/Tools/synplc/Inputs/megatron_mlp.syn (a GELU between two linears:
    a column split paired with a row split, and a lone row split) as one
    process, its own peer, and on two shards (2-small-hosts.syn at 6 MB).

For --rounds rounds, in turn: the one process at --threads threads (2: the
machine's cores), then `mpirun -np 2` and `mpirun -np 4` (oversubscribed
here) and the two shards, each rank at its default thread count (the CPUs
it may use, shared among the host's ranks). The medians of samples/s and the ratios to the
one process are printed (`vs one`: of the medians; `paired`: the median of each round's
ratio to the one process of the same round, which a slow drift of the host's speed moves
less), then, from `--profile` on rank 0, the time in
all-reduce per step and the share of it that overlapped kernels.

The placement's scaling model (`--search-report`, its `notes:`) predicts
the ratios for the systems the programs were compiled for (hosts on a
10 Gb/s network). This machine runs the ranks on its own cores over shared
memory, so the script also asks the model about systems that say so: one
host with all the cores, and n hosts of cores / n each (at least one)
joined at 10 GB/s; the ratio of the two predictions is printed beside the
measurement. Where n exceeds the cores the ranks take turns on them: the
model's step time of n one-core hosts is multiplied by n / cores.

Usage: /usr/bin/python3 bench/data_parallel.py [--rounds 3] [--steps 300] [--build build]
"""
import argparse
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SPEC = os.path.join(ROOT, "examples", "fashion_mnist", "fashion_mnist.syn")
SHARD2 = os.path.join(ROOT, "test", "Tools", "synplc", "Inputs", "fashion-mnist-shard2.syn")
SHARD4 = os.path.join(ROOT, "test", "Tools", "synplc", "Inputs", "fashion-mnist-shard4.syn")
MEGATRON = os.path.join(ROOT, "test", "Tools", "synplc", "Inputs", "megatron_mlp.syn")
DATA = "/usr/share/datasets/fashion-mnist"


def run(cmd, **kw):
    r = subprocess.run(cmd, capture_output=True, text=True, **kw)
    if r.returncode != 0:
        sys.exit(f"failed ({r.returncode}): {' '.join(cmd)}\n{r.stdout}\n{r.stderr}")
    return r


def local_system(ranks, cores):
    """This machine as `ranks` hosts of `cores` cores over shared memory."""
    nodes, edges = [], []
    for r in range(ranks):
        nodes.append(f"    node ram_{r} {{ kind: memory, capacity: 16GB }}")
        nodes.append(f"    node cpu_{r} {{ kind: compute, isa: x86_64, cores: {cores} }}")
        edges.append(f"        ram_{r} <-> cpu_{r} : bandwidth 50GB/s")
        if ranks > 1 and (r + 1 < ranks or ranks > 2):
            edges.append(f"        ram_{r} <-> ram_{(r + 1) % ranks} : bandwidth 10GB/s")
    return ("system local_%d {\n    node ssd_0 { kind: storage }\n" % ranks + "\n".join(nodes) +
            "\n    edges {\n        ssd_0 -> ram_0 : bandwidth 2GB/s\n" + "\n".join(edges) +
            "\n    }\n}\n")


def predicted(synplc, spec, system, tmp, extra=()):
    """The scaling model's lines for `spec` on `system`: {replicas: seconds}
    and {"tp<n>": seconds} for n shards (on a system of one compute node,
    which has no scaling lines, the winner's cost: one replica)."""
    err = run([synplc, spec, "--system", system, "--search-report", "--emit", "l1",
               "-o", os.devnull] + list(extra)).stderr
    lines = {int(d): float(s) for d, s in re.findall(r"^\s+(\d+) replicas?\s*: ([0-9.e+-]+) s", err, re.M)}
    lines.update({f"tp{d}": float(s)
                  for d, s in re.findall(r"^\s+(\d+) shards\s*: ([0-9.e+-]+) s", err, re.M)})
    if not lines:
        l21 = err[err.index("search L2->L1"):]
        lines[1] = float(re.search(r"^\s+1\s+([0-9.e+-]+)\s+graph", l21, re.M).group(1))
    return lines


def rate(cmd):
    out = run(cmd).stdout
    return float(re.search(r"samples_per_s=([0-9.]+)", out).group(1))


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--steps", type=int, default=300)
    ap.add_argument("--threads", type=int, default=2, help="the one process's threads")
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    args = ap.parse_args()
    synplc = os.path.join(args.build, "bin", "synplc")
    mpirun = shutil.which("mpirun")
    if not mpirun:
        sys.exit("no mpirun: install openmpi-bin (scripts/install-deps.sh)")
    launch = [mpirun, "--oversubscribe"] + (["--allow-run-as-root"] if os.geteuid() == 0 else [])
    tmp = tempfile.mkdtemp(prefix="synpl-dp-")
    exe = {n: os.path.join(tmp, f"train{n}")
           for n in (1, 2, 4, "z2", "z4", "tp", "m1", "mtp")}
    run([synplc, SPEC, "-o", exe[1]])
    hosts2 = os.path.join(ROOT, "examples", "systems", "2-hosts.syn")
    hosts4 = os.path.join(ROOT, "test", "Tools", "synplc", "Inputs", "4-hosts.syn")
    # Replicas that update everything, and replicas that shard the update.
    run([synplc, SHARD2, "--system", hosts2, "--update-sharding=off", "-o", exe[2]])
    run([synplc, SHARD4, "--system", hosts4, "--update-sharding=off", "-o", exe[4]])
    run([synplc, SHARD2, "--system", hosts2, "--update-sharding=on", "-o", exe["z2"]])
    run([synplc, SHARD4, "--system", hosts4, "--update-sharding=on", "-o", exe["z4"]])
    small = os.path.join(ROOT, "examples", "systems", "2-small-hosts.syn")
    run([synplc, SPEC, "--system", small, "-o", exe["tp"]])
    small6 = os.path.join(tmp, "2-small-hosts-6mb.syn")
    with open(small6, "w") as f:
        f.write(open(small).read().replace("5400KB", "6000KB"))
    run([synplc, MEGATRON, "-o", exe["m1"]])
    run([synplc, MEGATRON, "--system", small6, "-o", exe["mtp"]])
    common = ["--data", DATA, "--steps", str(args.steps), "--epochs", "1", "--no-eval", "--quiet"]

    rates = {n: [] for n in exe}
    for r in range(args.rounds):
        rates[1].append(rate([exe[1], "--threads", str(args.threads)] + common))
        for n in (2, 4):
            rates[n].append(rate(launch + ["-np", str(n), exe[n]] + common))
            rates[f"z{n}"].append(rate(launch + ["-np", str(n), exe[f"z{n}"]] + common))
        rates["tp"].append(rate(launch + ["-np", "2", exe["tp"]] + common))
        rates["m1"].append(rate([exe["m1"], "--threads", str(args.threads)] + common))
        rates["mtp"].append(rate(launch + ["-np", "2", exe["mtp"]] + common))
        print(f"round {r + 1}: " + ", ".join(f"{n} rank{'s' if n > 1 else ''} {rates[n][-1]:.0f}"
                                              for n in (1, 2, 4)) +
              ", update-sharded " + ", ".join(f"{n} ranks {rates[f'z{n}'][-1]:.0f}"
                                                for n in (2, 4)) +
              f", 2 shards {rates['tp'][-1]:.0f}; megatron_mlp 1 rank {rates['m1'][-1]:.0f}"
              f", 2 shards {rates['mtp'][-1]:.0f} samples/s", flush=True)
    one = statistics.median(rates[1])

    def paired(key, base=1):
        """The median over rounds of the round's ratio to its one process."""
        return statistics.median(a / b for a, b in zip(rates[key], rates[base]))

    # The model, for this machine described as it is: one process on all
    # its cores, or n ranks sharing them (more ranks than cores take turns:
    # each runs at cores / n of a core).
    cores = os.cpu_count() or 1
    model = {}
    for n in (1, 2, 4):
        path = os.path.join(tmp, f"local-{n}.syn")
        with open(path, "w") as f:
            f.write(local_system(n, max(1, cores // n)))
        spec = SPEC if n != 4 else SHARD4
        lines = predicted(synplc, spec, path, tmp, ["--update-sharding=off"])
        model[n] = lines.get(n, float("nan")) * max(1.0, n / cores)
        if n > 1:
            zlines = predicted(synplc, spec, path, tmp, ["--update-sharding=on"])
            model[f"z{n}"] = zlines.get(n, float("nan")) * max(1.0, n / cores)
        if n == 2:
            model["tp"] = lines.get("tp2", float("nan"))
            mlines = predicted(synplc, MEGATRON, path, tmp)
            model["mtp"] = mlines.get("tp2", float("nan"))
        if n == 1:
            model["m1"] = predicted(synplc, MEGATRON, path, tmp).get(1, float("nan"))

    print(f"\nFashion-MNIST, global batch 128, {args.steps} steps, median of {args.rounds} rounds")
    print(f"{'run':<28} {'samples/s':>10} {'vs one':>8} {'paired':>8} {'model':>8}")
    print(f"{'one process, ' + str(args.threads) + ' threads':<28} {one:>10.0f} {1.0:>8.2f} "
          f"{1.0:>8.2f}")
    for n in (2, 4):
        m = statistics.median(rates[n])
        # The model's speedup of n ranks over one process on the same cores.
        pred = f"{model[1] / model[n]:8.2f}" if n in model and 1 in model else "     n/a"
        print(f"{'mpirun -np ' + str(n):<28} {m:>10.0f} {m / one:>8.2f} {paired(n):>8.2f} "
              f"{pred}")
        m = statistics.median(rates[f"z{n}"])
        pred = (f"{model[1] / model[f'z{n}']:8.2f}" if f"z{n}" in model and 1 in model
                else "     n/a")
        print(f"{'mpirun -np ' + str(n) + ', update-sharded':<28} {m:>10.0f} {m / one:>8.2f} "
              f"{paired(f'z{n}'):>8.2f} {pred}")
    m = statistics.median(rates["tp"])
    pred = f"{model[1] / model['tp']:8.2f}" if "tp" in model and 1 in model else "     n/a"
    print(f"{'mpirun -np 2, 2 shards':<28} {m:>10.0f} {m / one:>8.2f} {paired('tp'):>8.2f} "
          f"{pred}")
    mone = statistics.median(rates["m1"])
    m = statistics.median(rates["mtp"])
    pred = (f"{model['m1'] / model['mtp']:8.2f}" if "mtp" in model and "m1" in model
            else "     n/a")
    print(f"\nmegatron_mlp.syn (fc1 columns + fc2 rows paired, fc3 rows)")
    print(f"{'one process, ' + str(args.threads) + ' threads':<28} {mone:>10.0f} {1.0:>8.2f} "
          f"{1.0:>8.2f}")
    print(f"{'mpirun -np 2, 2 shards':<28} {m:>10.0f} {m / mone:>8.2f} "
          f"{paired('mtp', 'm1'):>8.2f} {pred}")

    # Collectives: time and overlap, from rank 0's profile.
    for n in (2, 4, "z2", "z4"):
        ranks = n if isinstance(n, int) else int(n[1:])
        r = run(launch + ["-np", str(ranks), exe[n], "--profile"] + common)
        text = r.stdout + r.stderr
        line = re.search(r"^.*collectives.*in flight.*$", text, re.M)
        what = f"np {ranks}" + ("" if isinstance(n, int) else ", update-sharded")
        print(f"{what}: " + (line.group(0).strip() if line else
                             "(no collective line in --profile)"))
    shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
