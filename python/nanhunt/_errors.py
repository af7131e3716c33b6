"""The two exceptions of the package."""

from __future__ import annotations

from typing import Any, Dict, List, Optional


def _shown(path: str) -> str:
    """A path as it can be printed: the bytes of its name that are not
    UTF-8 (os.fsdecode's surrogates, as nanhunt's JSON writes them) shown
    as \\xNN escapes."""
    return path.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")


class NanhuntError(Exception):
    """nanhunt could not do what was asked: an unusable input, bad usage, a
    binary that is missing or did not run to the end.

    ``message`` is nanhunt's own message; ``file`` and ``offset`` name the
    file and byte offset it points at, when it names them (``file`` as
    os.fsdecode gives it: os.fsencode(file) is the name's bytes on disk); ``status`` is the
    exit status of the command (``None`` when it did not run); ``stderr`` is
    what it wrote there.
    """

    def __init__(
        self,
        message: str,
        *,
        file: Optional[str] = None,
        offset: Optional[int] = None,
        status: Optional[int] = None,
        stderr: str = "",
    ) -> None:
        where = ""
        if file and file not in message:
            where = f" ({_shown(file)}" + (f" at byte {offset}" if offset is not None else "") + ")"
        super().__init__(message + where)
        self.message = message
        self.file = file
        self.offset = offset
        self.status = status
        self.stderr = stderr


class IncompleteError(NanhuntError):
    """The watch could not read whole some rank-steps it expected: raised
    by ``StepGuard.step()`` with ``raise_on_incomplete=True``. No NaN/Inf
    was found in what could be read, but none is ruled out in the rest.

    ``event`` is the watch's event that said so (a ``step`` event with
    "status" "incomplete" or "unread", or the ``stopped`` event); ``unread``
    its rank-steps not read whole, as ``{"step", "ranks", "reason"}``.
    """

    def __init__(self, event: Dict[str, Any]) -> None:
        self.event = event
        self.unread: List[Dict[str, Any]] = list(event.get("unread") or [])
        super().__init__(describe_unread(event))


class IncompleteWarning(UserWarning):
    """A step the watch could not read whole: issued by ``StepGuard.step()``
    (unless raise_on_incomplete), again only when the ranks or the reason
    change."""


def describe_unread(event: Dict[str, Any]) -> str:
    """One line for rank-steps a watch could not read whole."""
    parts = []
    for u in event.get("unread") or []:
        ranks = u.get("ranks") or []
        who = ("rank " if len(ranks) == 1 else "ranks ") + ",".join(str(r) for r in ranks)
        parts.append(f"step {u.get('step')} ({who}: {u.get('reason')})")
    what = "; ".join(parts) or "some rank-steps"
    return f"nanhunt: {what} could not be read whole: no NaN or Inf in what could be read, but this is no clean run"


class AnomalyError(Exception):
    """A NaN/Inf that lasts was found while training: raised by
    ``StepGuard.step()``.

    ``verdict`` is the verdict (the JSON of ``nanhunt trace --format json``)
    as a dict; ``event`` is the watch's anomaly event (it names the verdict
    and HTML files written).
    """

    def __init__(self, verdict: Dict[str, Any], event: Dict[str, Any]) -> None:
        self.verdict = verdict
        self.event = event
        super().__init__(describe(verdict, event))


def describe(verdict: Dict[str, Any], event: Dict[str, Any]) -> str:
    """One line for an anomaly: where the first NaN/Inf was born, or what
    the log or the monitor alone showed."""
    origin = verdict.get("origin") or {}
    if not origin and event.get("message"):
        where = f" (verdict: {event['verdict']})" if event.get("verdict") else ""
        return f"nanhunt: {event['message']}{where}"
    step = origin.get("step", event.get("step"))
    ranks = origin.get("ranks", event.get("ranks"))
    op = origin.get("op", event.get("op"))
    kind = origin.get("kind", event.get("kind"))
    text = f"nanhunt: the first {KINDS.get(kind, 'NaN/Inf')} was born at step {step}"
    if ranks:
        text += " on rank" + ("s " if len(ranks) > 1 else " ") + ",".join(str(r) for r in ranks)
    if op:
        text += f", in {op}"
    if event.get("verdict"):
        text += f" (verdict: {event['verdict']})"
    return text


KINDS = {"nan": "NaN", "inf": "Inf"}
