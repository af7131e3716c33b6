"""nanhunt watch: its JSON-lines events as dicts, while it runs."""

from __future__ import annotations

import collections
import ctypes
import json
import os
import signal
import subprocess
import sys
import threading
from typing import Any, Callable, Deque, Dict, Iterator, List, Optional, overload

from . import _binary, _options
from ._errors import NanhuntError
from ._run import PathLike, failure

Event = Dict[str, Any]


def argv(dump_path: PathLike, options: Dict[str, Any]) -> List[str]:
    """The arguments of nanhunt watch for these options; the dump path last,
    after "--", so that one starting with "-" is never read as a flag."""
    flags = _options.flags("watch", _options.WATCH, options, _options.WATCH_RENAMED)
    return ["watch", "--format", "jsonl"] + flags + ["--", os.fspath(dump_path)]


class Process:
    """One running nanhunt watch: its events one by one, its stop."""

    def __init__(self, args: List[str]) -> None:
        self.args = args
        self.stopping = False
        self._stderr: Deque[str] = collections.deque(maxlen=50)
        self.proc = subprocess.Popen(
            [_binary.find()] + args,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            encoding="utf-8",
            errors="replace",
            bufsize=1,
            preexec_fn=_die_with_parent(),
        )
        self._stderr_reader = threading.Thread(target=self._read_stderr, name="nanhunt-watch-stderr", daemon=True)
        self._stderr_reader.start()

    def _read_stderr(self) -> None:
        assert self.proc.stderr is not None
        with self.proc.stderr:
            for line in self.proc.stderr:
                self._stderr.append(line)

    def events(self) -> Iterator[Event]:
        """Each event as it comes; at the end, NanhuntError when the watch
        failed (exit status 2 or a signal other than our stop). Exit status
        0, 1 and 3 are answers (3: it ended without an anomaly, but some
        rank-steps could not be read whole; the events said which). Only one
        reader may call it."""
        assert self.proc.stdout is not None
        try:
            for line in self.proc.stdout:
                line = line.strip()
                if not line:
                    continue
                try:
                    event = json.loads(line)
                except ValueError:
                    event = None
                if not isinstance(event, dict):
                    self.stop()
                    raise NanhuntError(f"nanhunt watch wrote a line that is not a JSON event: {line[:200]!r}")
                yield event
            status = self.proc.wait()
            self._stderr_reader.join(timeout=5)
            stopped = self.stopping and status in (-signal.SIGINT, -signal.SIGTERM, -signal.SIGKILL)
            # 0 clean, 1 anomaly, 3 no anomaly in what could be read but
            # not everything was: each is an answer
            if status not in (0, 1, 3) and not stopped:
                raise failure("watch", status, "", self.stderr())
        finally:
            self.proc.stdout.close()

    def stderr(self) -> str:
        return "".join(self._stderr)

    def stop(self, timeout: float = 10.0) -> Optional[int]:
        """Interrupt the watch (as Ctrl-C does) and wait for it to end; kill
        it when it does not within timeout seconds. Returns its exit status."""
        self.stopping = True
        if self.proc.poll() is None:
            try:
                self.proc.send_signal(signal.SIGINT)
                return self.proc.wait(timeout)
            except subprocess.TimeoutExpired:
                self.proc.kill()
            except ProcessLookupError:
                pass
        return self.proc.wait()


def _die_with_parent() -> Optional[Callable[[], None]]:
    """On Linux, the watch gets SIGTERM when the thread that started it
    (the training loop's) ends, so a killed training job leaves no watcher
    behind."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        prctl = ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):
        return None
    pr_set_pdeathsig, sigterm = 1, int(signal.SIGTERM)

    def set_death_signal() -> None:
        prctl(pr_set_pdeathsig, sigterm)

    return set_death_signal


@overload
def watch(dump_path: PathLike, *, on_event: None = None, **options: Any) -> Iterator[Event]: ...


@overload
def watch(dump_path: PathLike, *, on_event: Callable[[Event], Any], **options: Any) -> Optional[Event]: ...


def watch(
    dump_path: PathLike, *, on_event: Optional[Callable[[Event], Any]] = None, **options: Any
) -> "Iterator[Event] | Optional[Event]":
    """Run ``nanhunt watch DUMP_PATH --format jsonl`` and give its events as
    dicts, each with "event" and "time": ``step`` (a step checked: "step",
    "status", "ranks" "0-3" read whole, "complete"; with "late": true,
    rank-steps whose folders appeared after the watch had passed the step,
    read then), ``waiting`` ("missing" ranks), ``suspect`` (a step shows an anomaly; the next dumped step tells
    whether it lasts), ``evidence`` (the log or monitor shows a non-finite
    value), ``recovered`` (it did not last: no alarm), ``anomaly`` (the
    alarm: "step", "ranks", "op", "kind", "stage", "source", "complete",
    and the "verdict" and "html" files written) and ``stopped`` ("reason":
    idle, until-step, interrupted, anomaly; "complete" and "unread" for the
    whole watch). A ``warning`` event with "ahead" is a statistic heading
    for overflow ("step" it was first judged at, "source" "dump", "message"
    its text, "ahead" the verdict's entry: "op", "tensor", "stat", "ranks",
    "series", "steps_left", "text", ...), once per call, tensor and
    statistic; one without "ahead" is a followed log or monitor that could
    not be read ("source", "message"). Neither changes the exit status.

    A step's "status" is "clean" only when every expected rank of it was
    read whole; "incomplete" (some were not, the others hold no NaN/Inf)
    and "unread" (none was) come with "complete": False and "unread", the
    rank-steps not read whole as ``{"step", "ranks", "reason"}`` ("never
    finished": the watch stopped waiting for that rank after rank_timeout;
    "no folder", "unreadable", "damaged"). Such a watch ends with exit
    status 3, which is an answer, not a failure: no NaN/Inf in what could be
    read, but it is no clean run. An anomaly that only the followed log or
    monitor shows is an ``anomaly`` event too, with that "source", no "op",
    "last_dump_step" and a "message" ("the log shows NaN at step 2; the dump
    stops at step 1: dump step 2"); its verdict has no origin.

    Without on_event it returns a generator of the events, which ends when
    the watch does; closing the generator (or leaving a for loop over it)
    stops the watch. With on_event it calls on_event(event) for each and
    returns the anomaly event, or None when the watch ended without one
    (look at the ``stopped`` event's "complete" before calling that clean).

    The options are the flags of ``nanhunt watch``: out_dir (or output:
    -o, the folder for the alarm's files), exit_on_anomaly, on_anomaly and
    on_warning (shell commands), state, poll, settle,
    rank_timeout, idle_exit (durations), until_step, nice, ranks, world_size, rules,
    strict, jobs, and the evidence flags log, log_format, log_pattern,
    log_step_offset, monitor, tp_size. A failed watch (exit status 2)
    raises NanhuntError.
    """
    events = _events(argv(dump_path, options))
    _binary.find()  # a missing binary fails here, not at the first event
    if on_event is None:
        return events
    anomaly = None
    for event in events:
        if event.get("event") == "anomaly":
            anomaly = event
        on_event(event)
    return anomaly


def _events(args: List[str]) -> Iterator[Event]:
    process = Process(args)
    try:
        yield from process.events()
    finally:
        process.stop()
