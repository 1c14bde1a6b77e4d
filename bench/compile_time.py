#!/usr/bin/env python3
"""Compile time: the spec's MNIST program from .syn to an executable.

Times `synplc examples/fashion_mnist/fashion_mnist.syn -o exe` (the L3 -> L2
method search, the L2 -> L1 placement search with backward expansion, L1 ->
L0, host codegen, the object, the link) against its peer in the same run:
`synplc examples/fashion_mnist/fashion_mnist.l1.mlir -o exe`, the hand-placed
L1 program of the same model (everything after the searches). Runs alternate
(ours, peer, ours, ...) and the medians are reported, with their ratio: what
compiling from the spec adds. Then one run with --search-report=json gives
each search's own time, and one with --mlir-timing the time of every phase.
Every timed compile is cold (--no-cache): the object cache would otherwise
answer all but the first.

Then the scaling with depth: the MNIST MLP with D repeated identical blocks
`linear(256, 256), norm(layer), gelu` between its first and last layers
(and again with D distinct blocks, each 8 units wider than the last)
(examples/mnist/mnist.l2.syn, its infer list extended), for
each D of --depths, compiled cold; per depth the time, the kernels of its L0
plan and the host functions they compile to (kernels with the same code
share one function), and the time each block added over the previous depth.

Then, per workload (the MLP's method, examples/mnist/mnist.l2.syn; the
CNN's, examples/fashion_mnist_cnn/fashion_mnist_cnn.methods.syn; the
character LM's, examples/charlm/charlm.methods.syn): the compile cold
(--no-cache), warm (the object cache filled by the compile before: no
kernel is lowered or compiled) and warm after a learning-rate change (the
spec's `lr:` changed to a value no earlier compile saw: the kernel object
holding the one kernel that reads it is lowered and compiled again), the
medians of --runs interleaved rounds, and each warm one's ratio to the cold.

  python3 bench/compile_time.py [--build DIR] [--runs N] [--depths 2,4,8,16,32]
                                [--workloads mlp,cnn,charlm]
"""
import argparse, json, os, re, statistics, subprocess, sys, tempfile, time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def timed(cmd, env=None):
    t = time.perf_counter()
    r = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                       env=env)
    dt = time.perf_counter() - t
    if r.returncode != 0:
        sys.exit('failed: %s\n%s' % (' '.join(cmd), r.stderr))
    return dt


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--build', default=os.path.join(ROOT, 'build'))
    ap.add_argument('--runs', type=int, default=5)
    ap.add_argument('--depths', default='2,4,8,16,32',
                    help='repeated-block depths to compile (empty: skip)')
    ap.add_argument('--workloads', default='mlp,cnn,charlm',
                    help='workloads to compile cold, warm and after a learning-rate '
                         'change (empty: skip)')
    args = ap.parse_args()
    synplc = os.path.join(args.build, 'bin', 'synplc')
    spec = os.path.join(ROOT, 'examples', 'fashion_mnist', 'fashion_mnist.syn')
    placed = os.path.join(ROOT, 'examples', 'fashion_mnist', 'fashion_mnist.l1.mlir')
    with tempfile.TemporaryDirectory() as tmp:
        exe = os.path.join(tmp, 'train')
        ours, peer = [], []
        for i in range(args.runs):
            ours.append(timed([synplc, spec, '-o', exe, '--no-cache']))
            peer.append(timed([synplc, placed, '-o', exe, '--no-cache']))
            print('run %d/%d: .syn %.2f s, .l1.mlir %.2f s' % (i + 1, args.runs, ours[-1], peer[-1]),
                  file=sys.stderr)
        r = subprocess.run([synplc, spec, '-o', exe, '--no-cache', '--search-report=json'],
                           stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        searches = []
        for line in r.stderr.splitlines():
            try:
                rep = json.loads(line)
            except ValueError:
                continue
            if isinstance(rep, dict) and 'boundary' in rep:
                searches.append(rep)
        r = subprocess.run([synplc, spec, '-o', exe, '--no-cache', '--mlir-timing'],
                           stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        timing = [l for l in r.stderr.splitlines() if '(' in l and '%' in l]
    mo, mp = statistics.median(ours), statistics.median(peer)
    print('compile time, median of %d interleaved runs (synplc, -O3, link included)' % args.runs)
    print('  fashion_mnist.syn     -> executable: %6.2f s' % mo)
    print('  fashion_mnist.l1.mlir -> executable: %6.2f s   (peer: the hand-placed L1)' % mp)
    print('  ratio .syn / .l1.mlir: %.2f  (what the L3 -> L2 -> L1 searches and the'
          ' generated L1 add)' % (mo / mp))
    total_us = 0
    for rep in searches:
        us = rep.get('elapsed_us', 0)
        total_us += us
        print('  search %-28s %8.1f ms  enumerated %s, survivors %s' % (
            rep['boundary'], us / 1000.0, rep.get('enumerated'), rep.get('survivors')))
    print('  searches together: %.1f ms' % (total_us / 1000.0))
    if timing:
        print('phases (--mlir-timing, one run):')
        for l in timing[:24]:
            print('  ' + l.strip())
    if args.depths:
        depth_sweep(synplc, [int(d) for d in args.depths.split(',')], args.runs)
    if args.workloads:
        warm_compiles(synplc, args.workloads.split(','), args.runs)


WORKLOADS = {
    'mlp': os.path.join(ROOT, 'examples', 'mnist', 'mnist.l2.syn'),
    'cnn': os.path.join(ROOT, 'examples', 'fashion_mnist_cnn', 'fashion_mnist_cnn.methods.syn'),
    'charlm': os.path.join(ROOT, 'examples', 'charlm', 'charlm.methods.syn'),
}


def warm_compiles(synplc, workloads, runs):
    """Cold, warm and learning-rate-changed compiles of each workload's
    method, interleaved."""
    rows = []
    for name in workloads:
        with open(WORKLOADS[name]) as f:
            text = f.read()
        if not re.search(r'\blr: *[0-9.e+-]+', text):
            sys.exit('%s has no lr: to change' % WORKLOADS[name])
        with tempfile.TemporaryDirectory() as tmp:
            env = dict(os.environ, SYNPL_CACHE_DIR=os.path.join(tmp, 'cache'))
            spec = os.path.join(tmp, name + '.syn')
            exe = os.path.join(tmp, name)
            with open(spec, 'w') as f:
                f.write(text)
            timed([synplc, spec, '-o', exe], env)  # fills the cache
            cold, warm, lr = [], [], []
            for r in range(runs):
                cold.append(timed([synplc, spec, '-o', exe, '--no-cache']))
                warm.append(timed([synplc, spec, '-o', exe], env))
                changed = os.path.join(tmp, '%s-lr%d.syn' % (name, r))
                with open(changed, 'w') as f:
                    f.write(re.sub(r'\blr: *[0-9.e+-]+', 'lr: %.6e' % (1e-3 * (1.01 + 0.01 * r)),
                                   text, count=1))
                lr.append(timed([synplc, changed, '-o', exe + '-lr'], env))
                print('%s run %d/%d: cold %.2f s, warm %.2f s, lr change %.2f s' % (
                    name, r + 1, runs, cold[-1], warm[-1], lr[-1]), file=sys.stderr)
        rows.append((name, statistics.median(cold), statistics.median(warm),
                     statistics.median(lr)))
    print('compile time per workload, warm object cache against cold (median of %d)' % runs)
    print('  %-8s %8s %8s %7s %10s %7s' % ('workload', 'cold s', 'warm s', 'ratio',
                                           'lr chg s', 'ratio'))
    for name, c, w, l in rows:
        print('  %-8s %8.2f %8.2f %6.2fx %10.2f %6.2fx' % (name, c, w, w / c, l, l / c))


def depth_spec(depth, distinct=False):
    """examples/mnist/mnist.l2.syn with `depth` hidden blocks (and without
    its model properties, which fix the depth): identical 256-wide blocks,
    or with `distinct` each block 8 units wider than the one before (no two
    share a kernel)."""
    with open(os.path.join(ROOT, 'examples', 'mnist', 'mnist.l2.syn')) as f:
        spec = f.read()
    spec = re.sub(r'\n\s*properties: \[[^\]]*\]', '', spec)
    widths = [256 + (8 * k if distinct else 0) for k in range(depth + 1)]
    blocks = '\n'.join('        linear(%d, %d), norm(layer), gelu,' % (widths[k], widths[k + 1])
                       for k in range(depth))
    infer = ('infer: sequential [\n        linear(784, 256), norm(layer), gelu,\n%s\n'
             '        linear(%d, 10), softmax\n    ]' % (blocks, widths[-1]))
    return re.sub(r'infer: sequential \[.*?\n    \]', infer, spec, count=1, flags=re.S)


def depth_sweep(synplc, depths, runs):
    """Cold compile time of D identical blocks, and of D distinct ones, for
    each D."""
    for distinct in (False, True):
        sweep(synplc, depths, runs, distinct)


def sweep(synplc, depths, runs, distinct):
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for d in depths:
            spec = os.path.join(tmp, 'depth%d.syn' % d)
            with open(spec, 'w') as f:
                f.write(depth_spec(d, distinct))
            exe = os.path.join(tmp, 'depth%d' % d)
            times = sorted(timed([synplc, spec, '-o', exe, '--no-cache']) for _ in range(runs))
            l0 = subprocess.run([synplc, spec, '--compile-to=l0'], capture_output=True, text=True)
            kernels = l0.stdout.count('l0uop.kernel @')
            llvm = subprocess.run([synplc, spec, '--compile-to=llvm'], capture_output=True,
                                  text=True)
            functions = sum(1 for l in llvm.stdout.splitlines()
                            if l.lstrip().startswith('llvm.func') and '.packed(' in l)
            rows.append((d, statistics.median(times), kernels, functions))
            print('depth %d: %.2f s' % (d, rows[-1][1]), file=sys.stderr)
    print('compile time against %s (cold, median of %d)' % (
        'distinct blocks, each 8 units wider' if distinct else 'repeated identical blocks', runs))
    print('  %5s %9s %8s %10s %14s' % ('depth', 'seconds', 'kernels', 'functions', 'ms per block'))
    prev = None
    for d, t, k, fn in rows:
        per = '' if prev is None else '%.1f' % ((t - prev[1]) * 1000.0 / (d - prev[0]))
        print('  %5d %9.2f %8d %10d %14s' % (d, t, k, fn, per))
        prev = (d, t)


if __name__ == '__main__':
    main()
