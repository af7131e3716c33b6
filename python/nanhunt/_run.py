"""nanhunt trace and nanhunt plan, run once: the JSON they print, as a dict."""

from __future__ import annotations

import json
import os
import subprocess
import warnings
from typing import Any, Dict, List, Optional, Union

from . import _binary, _options
from ._errors import NanhuntError

PathLike = Union[str, "os.PathLike[str]"]


def trace(path: Optional[PathLike] = None, *, timeout: Optional[float] = None, **options: Any) -> Dict[str, Any]:
    """Run ``nanhunt trace PATH --format json`` and return the verdict.

    ``path`` is a dump_path, a step folder, a rank folder or a dump.json (or
    None with ``log=``/``monitor=`` alone). The options are the flags of
    ``nanhunt trace``: steps, ranks, world_size, rules, strict, jobs, log,
    log_format, log_pattern, log_step_offset, monitor, tp_size, html (also
    write the HTML report), output (also write the verdict to this file).

    The verdict says whether there is an anomaly (``verdict["anomaly"]``) and
    where it was born (``verdict["origin"]``). No anomaly is a clean run only
    when ``verdict["complete"]`` is True: False means some expected rank-steps
    could not be read whole (``verdict["unread"]`` lists them; the command
    exits 3). An unusable input or bad usage raises NanhuntError with
    nanhunt's message.
    """
    argv = ["trace", "--format", "json"] + _options.flags("trace", _options.TRACE, options) + _path(path)
    out = _run(argv, timeout, options.get("output"))
    if not isinstance(out, dict):
        raise NanhuntError(f"nanhunt trace printed {type(out).__name__}, not a verdict object")
    return out


def plan(path: Optional[PathLike] = None, *, timeout: Optional[float] = None, **options: Any) -> Optional[Dict[str, Any]]:
    """Run ``nanhunt plan PATH --format json`` and return the plan: why, what
    to collect, the msprobe config.json (``plan["config"]``) and the commands
    to run then; None when there is no anomaly (nothing to collect).

    The options are those of trace (without html) and verdict (read a saved
    verdict instead of a dump), config_dump_path (the dump_path written into
    the config: where msprobe writes the next dump), config_path (where the
    config will be saved, for the Python lines that load it), output (also
    write the config.json to this file), mode and budget. dump_path is the
    old name of config_dump_path: it still works, with a DeprecationWarning.
    """
    if "dump_path" in options:
        warnings.warn("nanhunt.plan: dump_path is now config_dump_path", DeprecationWarning, stacklevel=2)
    flags = _options.flags("plan", _options.PLAN, options, _options.PLAN_RENAMED)
    argv = ["plan", "--format", "json"] + flags + _path(path)
    out = _run(argv, timeout)
    if out is not None and not isinstance(out, dict):
        raise NanhuntError(f"nanhunt plan printed {type(out).__name__}, not a plan object")
    return out


def _path(path: Optional[PathLike]) -> List[str]:
    """The positional path, after "--": a path that starts with "-" is a
    path, never a flag."""
    return [] if path is None else ["--", os.fspath(path)]


def _run(argv: List[str], timeout: Optional[float], output: Optional[PathLike] = None) -> Any:
    """Run the command; the JSON it printed (or wrote to output)."""
    binary = _binary.find()
    try:
        done = subprocess.run([binary] + argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=timeout)
    except subprocess.TimeoutExpired as e:
        raise NanhuntError(f"nanhunt {argv[0]} did not finish in {timeout} s") from e
    stdout = done.stdout.decode("utf-8", "replace")
    stderr = done.stderr.decode("utf-8", "replace")
    # 0 clean, 1 anomaly, 3 no anomaly in what could be read but not
    # everything was: each is an answer
    if done.returncode in (0, 1, 3):
        try:
            if output is not None:
                with open(output, encoding="utf-8") as f:
                    return json.load(f)
            return json.loads(stdout)
        except (OSError, ValueError) as e:
            raise NanhuntError(
                f"nanhunt {argv[0]} exited {done.returncode} without a JSON object: {e}",
                status=done.returncode,
                stderr=stderr,
            ) from e
    raise failure(argv[0], done.returncode, stdout, stderr)


def failure(command: str, status: int, stdout: str, stderr: str) -> NanhuntError:
    """The error of a run that failed: the JSON error object nanhunt prints
    on stdout when there is one, else its last line on stderr."""
    try:
        error = json.loads(stdout).get("error")
    except (ValueError, AttributeError):
        error = None
    if isinstance(error, dict) and error.get("message"):
        offset = error.get("offset")
        return NanhuntError(
            str(error["message"]),
            file=error.get("file") or None,
            offset=offset if isinstance(offset, int) else None,
            status=status,
            stderr=stderr,
        )
    if status < 0:
        message = f"nanhunt {command} was stopped by signal {-status}"
    else:
        lines = [line for line in stderr.splitlines() if line.strip()]
        message = lines[-1].removeprefix("nanhunt: ") if lines else f"nanhunt {command} exited {status}"
    return NanhuntError(message, status=status, stderr=stderr)
