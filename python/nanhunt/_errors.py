"""The two exceptions of the package."""

from __future__ import annotations

from typing import Any, Dict, Optional


class NanhuntError(Exception):
    """nanhunt could not do what was asked: an unusable input, bad usage, a
    binary that is missing or did not run to the end.

    ``message`` is nanhunt's own message; ``file`` and ``offset`` name the
    file and byte offset it points at, when it names them; ``status`` is the
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
            where = f" ({file}" + (f" at byte {offset}" if offset is not None else "") + ")"
        super().__init__(message + where)
        self.message = message
        self.file = file
        self.offset = offset
        self.status = status
        self.stderr = stderr


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
    """One line for an anomaly: where the first NaN/Inf was born."""
    origin = verdict.get("origin") or {}
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
