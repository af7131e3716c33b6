"""StepGuard: nanhunt watch next to the training loop."""

from __future__ import annotations

import collections
import json
import os
import queue
import threading
import time
import warnings
import weakref
from types import TracebackType
from typing import Any, Callable, Deque, Dict, List, Optional, Tuple, Type

from . import _watch
from ._errors import AnomalyError, IncompleteError, IncompleteWarning, NanhuntError, describe_unread
from ._run import PathLike
from ._watch import Event


class StepGuard:
    """Watch the dump while the job trains, and stop the loop at the first
    NaN/Inf that lasts.

    Call ``guard.step()`` once per training step, after msprobe's
    ``debugger.step()``. The first call starts one ``nanhunt watch`` process
    in the background; every call only looks at what it has reported so far,
    so training never waits for it (unless max_lag says so). Once the watch
    reports an anomaly, the next ``guard.step()`` calls
    ``on_anomaly(verdict)`` when given, then raises AnomalyError carrying
    the verdict when raise_on_anomaly is true (once). An overflow that the
    next step no longer shows (a loss scaler skipped it) is no alarm: it is
    kept in ``guard.recovered``. An anomaly found while some ranks of its
    step never finished writing it (a rank crashed) is an alarm too, its
    verdict naming them (``verdict["unread"]``, reason "never finished");
    so is a NaN that only the followed log or monitor shows (``log=``,
    ``monitor=``), with a verdict without origin. When the watch could not
    write the verdict file (a full disk), the alarm stands all the same: the
    verdict is then what the anomaly event says ("anomaly", "origin" with
    step, ranks, op, kind and stage, and the files "not_written").

    Before the NaN, the watch warns of each statistic heading for overflow
    (a call's tensor Max or Min climbing towards its dtype's limit: README
    "Heading for overflow"), once per call, tensor and statistic, at the
    first step it qualifies. ``guard.step()`` calls ``on_warning(warning)``
    for each warning reported since the last call, oldest first, when
    given; ``guard.warnings`` keeps them all. A warning is the verdict's
    "ahead" entry as a dict: "op", "tensor", "stat", "ranks", "dtype",
    "limit", "step" (the step it was judged at), "series" (the values at
    the steps before, oldest first), "growth", "steps_left", "module",
    "code" and "text" (the warning in one line). Warnings never stop the
    loop.

    Silence is not a clean bill: a step the watch could not read whole (a
    rank that never finished it, a dump.json that cannot be read) is
    recorded in ``guard.incomplete``, ``guard.complete`` turns False, and
    ``guard.step()`` issues an IncompleteWarning (again only when the ranks
    or the reason change), or raises IncompleteError (a NanhuntError) once
    when raise_on_incomplete is true. A watch that ends with exit status 3
    (no anomaly, not everything read whole) is reported the same way.

    dump_path: msprobe's dump_path (step0/, step1/, ... as they are written).
    on_warning: called with each warning before the NaN (see above).
    out_dir: where the watch writes the verdict and HTML report of the
        anomaly (never inside the dump; None: the command's default,
        nanhunt-watch/ in the current folder, or nanhunt-watch-NAME/ beside
        the dump when the current folder is inside it).
    max_lag: None (the default) never waits. N makes ``guard.step()`` wait
        while the watch is more than N steps behind the step just dumped,
        at most lag_timeout seconds: with 1, the loop stops at the step after
        the anomaly, which the watch reads to see that it lasts (0 waits for
        each step to settle). It waits only when both steps were dumped (a
        stepN folder exists). When a wait runs out (the watch is stuck), it
        warns once and does not wait again until the watch moves on.
    first_step: the msprobe step of the first ``guard.step()`` call.
    options: flags of ``nanhunt watch`` (see ``nanhunt.watch``): settle,
        poll, rank_timeout, world_size, log, monitor, rules, strict, jobs,
        state, ... When msprobe dumps every rank, pass
        ``world_size=torch.distributed.get_world_size()``: the watch then
        expects each rank from the first step, before its folder appears
        (not by default: a dump of some ranks only would never be whole).
    """

    def __init__(
        self,
        dump_path: PathLike,
        on_anomaly: Optional[Callable[[Dict[str, Any]], Any]] = None,
        raise_on_anomaly: bool = True,
        out_dir: Optional[PathLike] = None,
        *,
        raise_on_incomplete: bool = False,
        on_warning: Optional[Callable[[Dict[str, Any]], Any]] = None,
        max_lag: Optional[int] = None,
        lag_timeout: float = 60.0,
        first_step: int = 0,
        **options: Any,
    ) -> None:
        if max_lag is not None and max_lag < 0:
            raise ValueError(f"max_lag is None or 0 or more, not {max_lag}")
        self.dump_path = os.fspath(dump_path)
        self.out_dir = os.fspath(out_dir) if out_dir is not None else None
        self.on_anomaly = on_anomaly
        self.on_warning = on_warning
        self.raise_on_anomaly = raise_on_anomaly
        self.raise_on_incomplete = raise_on_incomplete
        self.max_lag = max_lag
        self.lag_timeout = lag_timeout
        self.first_step = first_step
        options.setdefault("exit_on_anomaly", True)
        self._options = options
        _watch.argv(self.dump_path, {**options, "out_dir": self.out_dir})  # a value of the wrong kind fails here
        #: the verdict of the anomaly, once the watch reported one
        self.anomaly: Optional[Dict[str, Any]] = None
        #: the watch's anomaly event (step, ranks, op, verdict and html files)
        self.anomaly_event: Optional[Event] = None
        #: the "recovered" events: overflows that did not last
        self.recovered: List[Event] = []
        #: the events of steps the watch could not read whole ("step" events
        #: with status "incomplete" or "unread"; the "stopped" event of a
        #: watch that ended incomplete without one)
        self.incomplete: List[Event] = []
        #: the statistics heading for overflow the watch warned of, oldest
        #: first (each the "ahead" dict of a "warning" event)
        self.warnings: List[Dict[str, Any]] = []
        #: the last events the watch reported, oldest first
        self.events: Deque[Event] = collections.deque(maxlen=1000)
        #: how many times step() was called
        self.steps = 0
        self._checked = first_step - 1  # the last step the watch is done with
        self._suspect: Optional[int] = None  # a step waiting for the next one to tell
        self._stalled_at: Optional[int] = None  # _checked when a wait ran out
        self._ended = False
        self._handled = False
        self._told = 0  # how many incomplete events step() has dealt with
        self._told_warnings = 0  # how many warnings on_warning was given
        self._warned = ""  # the unread ranks and reasons of the last warning
        self._raised_incomplete = False
        self._queue: "queue.Queue[Tuple[str, Any]]" = queue.Queue()
        self._process: Optional[_watch.Process] = None
        self._closed = False

    @property
    def complete(self) -> bool:
        """True while every step the watch has checked was read whole."""
        return not self.incomplete

    def step(self) -> None:
        """Count one training step; call on_warning with each warning
        before the NaN reported since the last call; raise AnomalyError (or
        call on_anomaly) when the watch has reported the anomaly,
        NanhuntError when the watch failed; warn of (or raise
        IncompleteError for) the steps it could not read whole."""
        if self._closed:
            raise NanhuntError("StepGuard.step() after close()")
        self.steps += 1
        if self._process is None:
            self._start()
        self._drain()
        if self.max_lag is not None:
            just_dumped = self.first_step + self.steps - 1
            target = just_dumped - self.max_lag
            # only after a dumped step, for a dumped step: msprobe's "step"
            # list may leave steps out, and nothing would ever report them
            if self._dumped(just_dumped) and self._dumped(target):
                self._catch_up(target)
        self._tell_warnings()
        if self.anomaly_event is not None and not self._handled:
            self._handled = True
            self.anomaly = self._verdict(self.anomaly_event)
            if self.on_anomaly is not None:
                self.on_anomaly(self.anomaly)
            if self.raise_on_anomaly:
                raise AnomalyError(self.anomaly, self.anomaly_event)
        self._tell_incomplete()

    def _tell_warnings(self) -> None:
        """Give on_warning the warnings reported since the last call."""
        while self._told_warnings < len(self.warnings):
            warning = self.warnings[self._told_warnings]
            self._told_warnings += 1  # given once, even when on_warning raises
            if self.on_warning is not None:
                self.on_warning(warning)

    def _tell_incomplete(self) -> None:
        """Warn of the steps not read whole reported since the last call,
        or raise IncompleteError for the first one."""
        fresh, self._told = self.incomplete[self._told :], len(self.incomplete)
        for event in fresh:
            if self.raise_on_incomplete and not self._raised_incomplete:
                self._raised_incomplete = True
                raise IncompleteError(event)
            said = str([(u.get("ranks"), u.get("reason")) for u in event.get("unread") or []])
            if said != self._warned and not self.raise_on_incomplete:
                self._warned = said
                warnings.warn(describe_unread(event), IncompleteWarning, stacklevel=3)

    def close(self) -> None:
        """Stop the watch (nothing happens when it never started), and take
        what it reported until then, so that ``guard.complete`` and
        ``guard.incomplete`` hold every step it checked."""
        self._closed = True
        if self._process is not None:
            self._process.stop()
            self._drain_to_end(timeout=5.0)

    def _drain_to_end(self, timeout: float) -> None:
        """Take the watch's last reports until its end, at most timeout
        seconds; a failure of a watch that was stopped is not raised."""
        deadline = time.monotonic() + timeout
        while not self._ended and time.monotonic() < deadline:
            try:
                self._drain(timeout=min(0.5, max(deadline - time.monotonic(), 0.01)))
            except NanhuntError:
                return

    def __enter__(self) -> "StepGuard":
        return self

    def __exit__(
        self,
        exc_type: Optional[Type[BaseException]],
        exc: Optional[BaseException],
        tb: Optional[TracebackType],
    ) -> None:
        self.close()

    def _start(self) -> None:
        process = _watch.Process(_watch.argv(self.dump_path, {**self._options, "out_dir": self.out_dir}))
        self._process = process
        weakref.finalize(self, process.stop)
        threading.Thread(target=_pump, args=(process, self._queue), name="nanhunt-watch", daemon=True).start()

    def _drain(self, timeout: Optional[float] = None) -> bool:
        """Take what the watch reported; wait up to timeout for one report
        when there is none. Returns whether there was one."""
        got = False
        while True:
            try:
                if timeout is not None and not got:
                    kind, item = self._queue.get(timeout=timeout)
                else:
                    kind, item = self._queue.get_nowait()
            except queue.Empty:
                return got
            got = True
            if kind == "error":
                self._ended = True
                raise item
            if kind == "end":
                self._ended = True
                continue
            self._note(item)

    def _note(self, event: Event) -> None:
        self.events.append(event)
        kind, step = event.get("event"), event.get("step")
        if kind == "anomaly" and self.anomaly_event is None:
            self.anomaly_event = event
        elif kind == "recovered":
            self.recovered.append(event)
        elif kind == "warning" and isinstance(event.get("ahead"), dict):
            self.warnings.append(event["ahead"])
        elif kind == "step" and event.get("status") in ("incomplete", "unread"):
            self.incomplete.append(event)
        elif kind == "stopped" and event.get("complete") is False and not self.incomplete and self.anomaly_event is None:
            self.incomplete.append(event)
        if not isinstance(step, int):
            return
        if kind == "suspect":
            self._suspect = step
        elif kind in ("recovered", "anomaly"):
            self._suspect = None
        if kind in ("step", "recovered"):
            done = step
        elif kind == "waiting":
            done = step - 1  # the steps before it are checked, or suspect
        else:
            return
        if self._suspect is not None:
            done = min(done, self._suspect - 1)  # not done until the next step tells
        self._checked = max(self._checked, done)

    def _dumped(self, step: int) -> bool:
        return os.path.isdir(os.path.join(self.dump_path, f"step{step}"))

    def _catch_up(self, step: int) -> None:
        """Wait until the watch is done with step, has reported the anomaly
        or has ended, at most lag_timeout seconds; not at all while the
        watch has not moved on since a wait ran out."""
        if self._stalled_at is not None and self._checked <= self._stalled_at:
            return
        self._stalled_at = None
        deadline = time.monotonic() + self.lag_timeout
        while self._checked < step and self.anomaly_event is None and not self._ended:
            left = deadline - time.monotonic()
            if left <= 0:
                self._stalled_at = self._checked
                warnings.warn(
                    f"nanhunt: the watch is still at step {self._checked + 1} after {self.lag_timeout} s; "
                    "StepGuard does not wait for it again until it moves on",
                    RuntimeWarning,
                    stacklevel=3,
                )
                return
            self._drain(timeout=min(left, 0.5))

    def _verdict(self, event: Event) -> Dict[str, Any]:
        path = event.get("verdict")
        if not path and event.get("not_written"):
            # the alarm stands though its verdict file could not be written
            # (a full disk): the verdict is what the event says
            return _verdict_of(event)
        if not path:
            raise NanhuntError(f"nanhunt watch reported an anomaly at step {event.get('step')} without a verdict file")
        try:
            with open(path, encoding="utf-8") as f:
                verdict = json.load(f)
        except (OSError, ValueError) as e:
            raise NanhuntError(f"the verdict of the anomaly at step {event.get('step')}: {e}", file=str(path)) from e
        if not isinstance(verdict, dict):
            raise NanhuntError("the verdict is not a JSON object", file=str(path))
        return verdict


def _verdict_of(event: Event) -> Dict[str, Any]:
    """The verdict of an anomaly event whose verdict file the watch could not
    write: "anomaly", the "origin" the event names (None for an alarm of the
    log or the monitor alone) and the files "not_written"."""
    origin = None
    if event.get("op"):
        origin = {key: event.get(key) for key in ("step", "ranks", "op", "kind", "stage")}
    return {"anomaly": True, "origin": origin, "not_written": list(event.get("not_written") or [])}


def _pump(process: _watch.Process, out: "queue.Queue[Tuple[str, Any]]") -> None:
    """Move the watch's events to the queue, then its end or its failure."""
    try:
        for event in process.events():
            out.put(("event", event))
    except BaseException as e:  # handed to the training thread
        out.put(("error", e))
    else:
        out.put(("end", None))
