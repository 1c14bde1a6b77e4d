#!/usr/bin/env python3
"""Starts a training run, signals it once it is training, and prints how it
ended (for test/Runtime/stop-signal.test):

  stop_run.py [--signals TERM[,INT...]] [--stopped] [--watch stderr|stdout]
              [--after REGEX] [--ignore INT] --stdout FILE --stderr FILE
              -- PROGRAM ARGS...

The watched stream (default stderr, where --progress 0 prints a line per
step; a text program's stdout with --report-every 1) is a pipe of one page
that this script copies to its file; the other goes straight to its file.
Once a line of it matches REGEX (default `^step `) the script stops reading
and sends the signals, in order, at once. Until then, and while it sends
them, the run cannot get more than a page of lines ahead: a step's line
blocks once the pipe is full. So the signals always arrive while the run is
training, early in it, whatever the machine's load; no sleeps.

--stopped sends the signals while the run is stopped (SIGSTOP, waiting
until the kernel says it is stopped, then SIGCONT): they are all pending
when it continues, which is how a second signal is delivered "at once" after
the first without racing the run's own stop.

--ignore INT starts the run with SIGINT ignored (as `nohup` or a background
job of a script would); otherwise SIGINT and SIGTERM start with their
default actions (lit runs tests with SIGINT ignored).

Prints `exit N` (the run exited with status N) or `killed by SIGNAME
(status 128+N)` and exits 0; a run that never printed a matching line, or
did not end within a minute, is an error (exit 1).
"""
import argparse
import fcntl
import os
import re
import select
import signal
import subprocess
import sys
import time

ap = argparse.ArgumentParser()
ap.add_argument("--signals", default="TERM")
ap.add_argument("--stopped", action="store_true")
ap.add_argument("--watch", choices=["stderr", "stdout"], default="stderr")
ap.add_argument("--after", default="^step ")
ap.add_argument("--ignore", action="append", default=[])
ap.add_argument("--stdout", required=True)
ap.add_argument("--stderr", required=True)
ap.add_argument("command", nargs=argparse.REMAINDER)
a = ap.parse_args()
cmd = a.command[1:] if a.command[:1] == ["--"] else a.command
if not cmd:
    sys.exit("stop_run.py: no command")
signals = [getattr(signal, "SIG" + s) for s in a.signals.split(",")]

for s in (signal.SIGINT, signal.SIGTERM):
    signal.signal(s, signal.SIG_DFL)
for s in a.ignore:
    signal.signal(getattr(signal, "SIG" + s), signal.SIG_IGN)

read_fd, write_fd = os.pipe()
fcntl.fcntl(read_fd, getattr(fcntl, "F_SETPIPE_SZ", 1031), 4096)
other = open(a.stdout if a.watch == "stderr" else a.stderr, "wb")
watched = open(a.stderr if a.watch == "stderr" else a.stdout, "wb")
streams = {"stdout": other, "stderr": other, a.watch: write_fd}
proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=streams["stdout"],
                        stderr=streams["stderr"])
os.close(write_fd)
other.close()
deadline = time.monotonic() + 60


def fail(why):
    proc.kill()
    proc.wait()
    sys.exit("stop_run.py: " + why)


def read_chunk():
    """The next bytes of the watched stream (b"" at its end)."""
    left = deadline - time.monotonic()
    if left <= 0 or not select.select([read_fd], [], [], left)[0]:
        fail("the run did not end within a minute")
    data = os.read(read_fd, 65536)
    watched.write(data)
    return data


pattern = re.compile(a.after.encode(), re.M)
seen = b""
while not pattern.search(seen):
    data = read_chunk()
    if not data:
        fail("the run ended before a line matched %r" % a.after)
    seen += data

if a.stopped:
    os.kill(proc.pid, signal.SIGSTOP)
    while True:
        with open("/proc/%d/stat" % proc.pid) as f:
            state = f.read().rsplit(")", 1)[1].split()[0]
        if state in "Tt":
            break
        if time.monotonic() > deadline:
            fail("the run did not stop")
        time.sleep(0.001)
for s in signals:
    os.kill(proc.pid, s)
if a.stopped:
    os.kill(proc.pid, signal.SIGCONT)

while read_chunk():
    pass
status = proc.wait()
watched.close()
if status >= 0:
    print("exit %d" % status)
else:
    print("killed by %s (status %d)" % (signal.Signals(-status).name, 128 - status))
