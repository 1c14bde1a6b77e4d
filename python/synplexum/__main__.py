"""python3 -m synplexum plot METRICS.jsonl OUT.png [--title T]

Draws a run's metrics file (written by a compiled program's --metrics FILE)
as loss and accuracy curves into a PNG.
"""

import argparse
import sys

from .plot import plot
from .run import read_metrics


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python3 -m synplexum")
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("plot", help="draw a metrics file's curves into a PNG")
    p.add_argument("metrics", help="the JSON-lines file a program wrote with --metrics")
    p.add_argument("png", help="the image to write")
    p.add_argument("--title", default="training")
    args = parser.parse_args(argv)
    records = read_metrics(args.metrics)
    if not records:
        print(f"synplexum: error: {args.metrics} holds no metrics", file=sys.stderr)
        return 1
    plot(records, args.png, title=args.title)
    print(f"synplexum: wrote {args.png} ({len(records)} records)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
