#!/usr/bin/env python3
"""Replay a finished run into an empty folder one step at a time, the way a
running msprobe job writes it, while "nanhunt watch" follows that folder.

    python3 bench/watchreplay.py NANHUNT SRC DST OUT [--interval 10] [--settle 2s]

SRC is a dump_path (step0/ step1/ ... with rank folders, e.g. written by
"nanhunt synth"); DST must not exist. Every --interval seconds the next step
folder of SRC is copied into DST, rank folder by rank folder, file by file
(the files appear while the watch looks, as msprobe's do). The watch runs as

    NANHUNT watch DST --format jsonl -o OUT --exit-on-anomaly --settle S

and each event it prints is stamped when it is read. Printed at the end:
  - the CPU time (user + system, from /proc/PID/stat) the watch used between
    the start of one step's copy and the start of the next, per step, and
    its median over the steps before the alarm;
  - the watch's peak RSS (VmHWM);
  - the alarm latency: from the end of the copy of the step the alarm names
    (and of the next step, which the watch reads to see that the anomaly
    lasts) to the anomaly event;
  - for each clean step, the delay from the end of its copy to its "step"
    event.
Needs Linux (/proc) and Python 3; nothing else.
"""
import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import threading
import time


def step_folders(src):
    steps = []
    for name in os.listdir(src):
        if name.startswith("step") and name[4:].isdigit():
            steps.append((int(name[4:]), name))
    return [name for _, name in sorted(steps)]


def copy_step(src, dst):
    """Copies one step folder rank by rank, file by file."""
    os.makedirs(dst)
    for rank in sorted(os.listdir(src)):
        shutil.copytree(os.path.join(src, rank), os.path.join(dst, rank))


def cpu_seconds(pid):
    """User + system CPU seconds of a process so far (its children too)."""
    with open("/proc/%d/stat" % pid) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    ticks = os.sysconf("SC_CLK_TCK")
    return sum(int(x) for x in fields[11:15]) / ticks


def peak_rss_mb(pid):
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    return 0.0


class Events:
    """Reads the watch's jsonl on a thread, stamping each event."""

    def __init__(self, proc):
        self.proc = proc
        self.items = []
        self.anomaly = threading.Event()
        self.thread = threading.Thread(target=self.read, daemon=True)
        self.thread.start()

    def read(self):
        for line in self.proc.stdout:
            try:
                event = json.loads(line)
            except ValueError:
                continue
            self.items.append((time.monotonic(), event))
            if event.get("event") == "anomaly":
                self.anomaly.set()


def replay(args):
    os.makedirs(args.dst)
    watch = subprocess.Popen(
        [args.nanhunt, "watch", args.dst, "--format", "jsonl", "-o", args.out,
         "--exit-on-anomaly", "--settle", args.settle, "--poll", args.poll],
        stdout=subprocess.PIPE, text=True)
    events = Events(watch)
    copied, cpu_at, peak = {}, [], 0.0
    for name in step_folders(args.src):
        begin = time.monotonic()
        if watch.poll() is not None:
            break
        cpu_at.append((int(name[4:]), cpu_seconds(watch.pid)))
        peak = max(peak, peak_rss_mb(watch.pid))
        copy_step(os.path.join(args.src, name), os.path.join(args.dst, name))
        copied[int(name[4:])] = time.monotonic()
        if events.anomaly.wait(max(0.0, begin + args.interval - time.monotonic())):
            break
    if watch.poll() is None:
        peak = max(peak, peak_rss_mb(watch.pid))
        cpu_at.append((None, cpu_seconds(watch.pid)))
    events.anomaly.wait(args.interval * 3)
    watch.wait(timeout=60)
    events.thread.join(timeout=5)
    return copied, cpu_at, peak, events.items, watch.returncode


def report(copied, cpu_at, peak, items, status):
    alarm = next(((t, e) for t, e in items if e.get("event") == "anomaly"), None)
    print("watch exit status %d, peak RSS %.1f MB" % (status, peak))
    per_step = []
    for (step, cpu), (_, nxt) in zip(cpu_at, cpu_at[1:]):
        per_step.append((step, nxt - cpu))
    for i, (step, cpu) in enumerate(per_step):
        until = "the next step began" if i + 1 < len(per_step) else "the watch stopped"
        print("step %d: %.3f s of CPU until %s" % (step, cpu, until))
    if alarm is not None:
        t, event = alarm
        step = event.get("step")
        before = [cpu for s, cpu in per_step if s is not None and s < step]
        if before:
            print("median CPU per step before the alarm's step: %.3f s (%d steps)"
                  % (statistics.median(before), len(before)))
        for s in (step, step + 1):
            if s in copied:
                print("alarm %.2f s after step %d was written" % (t - copied[s], s))
    delays = [t - copied[e["step"]] for t, e in items
              if e.get("event") == "step" and e.get("status") == "clean" and e.get("step") in copied]
    if delays:
        print("a clean step's line: median %.2f s after it was written (%d steps)"
              % (statistics.median(delays), len(delays)))


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("nanhunt")
    p.add_argument("src")
    p.add_argument("dst")
    p.add_argument("out")
    p.add_argument("--interval", type=float, default=10.0)
    p.add_argument("--settle", default="2s")
    p.add_argument("--poll", default="500ms")
    args = p.parse_args()
    if os.path.exists(args.dst):
        sys.exit("watchreplay: %s exists; give a folder to create" % args.dst)
    report(*replay(args))


if __name__ == "__main__":
    main()
