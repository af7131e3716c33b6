"""Keyword options to command-line flags.

An option is the flag's name with underscores: ``log_format="megatron"`` is
``--log-format megatron``. True turns a switch on, False and None leave the
flag out. A list repeats a flag that takes several (``log=["a.log",
"b.log"]``). Steps and ranks also take an int, a list of ints or a range
(``range(4, 9)`` is ``4-8``); durations take seconds (``0.5`` is
``500.0ms``), a ``datetime.timedelta`` or Go's spelling (``"500ms"``).

The tables below know the flags whose values need spelling; any other
option goes to the command as it is (a bool as a switch, a list repeated,
anything else as text), so a flag the command gained works at once and a
mistyped one is refused by the command itself, with the near ones named.
"""

from __future__ import annotations

import datetime
from typing import Any, Dict, Iterable, List, Mapping

# the kinds of value a flag takes
SWITCH = "switch"
TEXT = "text"
REPEATED = "repeated"
INT = "int"
LIST = "list"  # steps and ranks
DURATION = "duration"

ANALYSIS: Dict[str, str] = {
    "steps": LIST,
    "ranks": LIST,
    "rules": TEXT,
    "strict": SWITCH,
    "jobs": INT,
}

EVIDENCE: Dict[str, str] = {
    "log": REPEATED,
    "log_format": TEXT,
    "log_pattern": REPEATED,
    "log_step_offset": TEXT,
    "monitor": TEXT,
    "tp_size": INT,
}

TRACE: Dict[str, str] = {**ANALYSIS, **EVIDENCE, "html": TEXT, "output": TEXT}

PLAN: Dict[str, str] = {
    **ANALYSIS,
    **EVIDENCE,
    "verdict": TEXT,
    "dump_path": TEXT,
    "config_path": TEXT,
    "output": TEXT,
}

# out_dir is --out: the name StepGuard uses for it too
WATCH_RENAMED: Dict[str, str] = {"out_dir": "out"}


def flags(command: str, table: Mapping[str, str], options: Mapping[str, Any], renamed: Mapping[str, str] = {}) -> List[str]:
    """The flags for options; TypeError for a value of the wrong kind."""
    args: List[str] = []
    for name, value in options.items():
        if value is None or value is False:
            continue
        flag = "--" + renamed.get(name, name).replace("_", "-")
        kind = table.get(name) or _kind_of(value)
        if kind == SWITCH:
            if value is not True:
                raise TypeError(f"nanhunt {command}: {name} is a switch: True, False or None, not {value!r}")
            args.append(flag)
        elif kind == REPEATED:
            for item in [value] if isinstance(value, (str, bytes)) or not isinstance(value, Iterable) else value:
                args += [flag, _text(item)]
        elif kind == LIST:
            args += [flag, numbers(value)]
        elif kind == INT:
            if isinstance(value, bool) or not isinstance(value, int):
                raise TypeError(f"nanhunt {command}: {name} takes an int, not {value!r}")
            args += [flag, str(value)]
        elif kind == DURATION:
            args += [flag, duration(value)]
        else:
            args += [flag, _text(value)]
    return args


def _kind_of(value: Any) -> str:
    """The kind of a flag no table knows, from its value."""
    if value is True:
        return SWITCH
    if isinstance(value, datetime.timedelta):
        return DURATION
    if isinstance(value, (list, tuple)):
        return REPEATED
    return TEXT


def numbers(value: Any) -> str:
    """Steps or ranks as nanhunt spells them: 5, "0,3-7", [0, 3], range(4, 9)."""
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        raise TypeError(f"steps and ranks are numbers, not {value!r}")
    if isinstance(value, int):
        return str(value)
    if isinstance(value, range) and value.step == 1 and len(value) > 0:
        return f"{value.start}-{value.stop - 1}"
    items = list(value)
    if not items or not all(isinstance(i, int) and not isinstance(i, bool) for i in items):
        raise TypeError(f"steps and ranks are ints, not {value!r}")
    return ",".join(str(i) for i in items)


def duration(value: Any) -> str:
    """A duration as Go reads it: seconds, a timedelta or a string as is."""
    if isinstance(value, str):
        return value
    if isinstance(value, datetime.timedelta):
        value = value.total_seconds()
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise TypeError(f"a duration is seconds, a timedelta or a string such as '500ms', not {value!r}")
    if float(value).is_integer():
        return f"{int(value)}s"
    return f"{round(value * 1000, 3)!r}ms"  # Go reads "500.0ms", not "5e-01s"


def _text(value: Any) -> str:
    if isinstance(value, bytes):
        return value.decode()
    return str(value)
