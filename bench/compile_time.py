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

  python3 bench/compile_time.py [--build DIR] [--runs N]
"""
import argparse, json, os, statistics, subprocess, sys, tempfile, time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def timed(cmd):
    t = time.perf_counter()
    r = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    dt = time.perf_counter() - t
    if r.returncode != 0:
        sys.exit('failed: %s\n%s' % (' '.join(cmd), r.stderr))
    return dt


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--build', default=os.path.join(ROOT, 'build'))
    ap.add_argument('--runs', type=int, default=5)
    args = ap.parse_args()
    synplc = os.path.join(args.build, 'bin', 'synplc')
    spec = os.path.join(ROOT, 'examples', 'fashion_mnist', 'fashion_mnist.syn')
    placed = os.path.join(ROOT, 'examples', 'fashion_mnist', 'fashion_mnist.l1.mlir')
    with tempfile.TemporaryDirectory() as tmp:
        exe = os.path.join(tmp, 'train')
        ours, peer = [], []
        for i in range(args.runs):
            ours.append(timed([synplc, spec, '-o', exe]))
            peer.append(timed([synplc, placed, '-o', exe]))
            print('run %d/%d: .syn %.2f s, .l1.mlir %.2f s' % (i + 1, args.runs, ours[-1], peer[-1]),
                  file=sys.stderr)
        r = subprocess.run([synplc, spec, '-o', exe, '--search-report=json'],
                           stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        searches = []
        for line in r.stderr.splitlines():
            try:
                rep = json.loads(line)
            except ValueError:
                continue
            if isinstance(rep, dict) and 'boundary' in rep:
                searches.append(rep)
        r = subprocess.run([synplc, spec, '-o', exe, '--mlir-timing'],
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


if __name__ == '__main__':
    main()
