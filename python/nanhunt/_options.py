"""Keyword options to command-line flags.

An option is the flag's name with underscores: ``log_format="megatron"`` is
``--log-format megatron``. True turns a switch on, False and None leave the
flag out. A list repeats a flag that takes several (``log=["a.log",
"b.log"]``). Steps and ranks also take an int, a list of ints or a range
(``range(4, 9)`` is ``4-8``); durations take seconds (``0.5`` is
``500.0ms``), a ``datetime.timedelta`` or Go's spelling (``"500ms"``).

What each flag takes comes from the binary's own listing of its flags
(``nanhunt flags --json``, held in _flags.py), never from a table of names
kept here. An option the listing does not have goes to the command as it is
(a bool as a switch, a list repeated, anything else as text), so that a
mistyped one is refused by the command itself, with the near ones named.
"""

from __future__ import annotations

import datetime
from typing import Any, Dict, Iterable, List, Mapping

from . import _flags

# the kinds of value a flag takes
SWITCH = "switch"
TEXT = "text"
REPEATED = "repeated"
INT = "int"
LIST = "list"  # steps and ranks: the listing's "ranges"
DURATION = "duration"

# the listing's types that need spelling; the others (string, float) are text
_KINDS = {"bool": SWITCH, "int": INT, "ranges": LIST, "duration": DURATION}


def kinds(command: str) -> Dict[str, str]:
    """The kind of value each flag of ``nanhunt COMMAND`` takes, by option
    name (the flag's name with underscores), from the listing."""
    for listed in _flags.LISTING["commands"]:
        if listed["name"] == command:
            return {
                flag["name"].replace("-", "_"): REPEATED if flag["repeatable"] else _KINDS.get(flag["type"], TEXT)
                for flag in listed["flags"]
            }
    raise KeyError(f"the flags listing has no command {command!r}")


TRACE = kinds("trace")
PLAN = kinds("plan")
WATCH = kinds("watch")

# out_dir is watch's -o (--output): the name StepGuard uses for it too
WATCH_RENAMED: Dict[str, str] = {"out_dir": "output"}
# plan's old name of config_dump_path (--dump-path before it was renamed)
PLAN_RENAMED: Dict[str, str] = {"dump_path": "config_dump_path"}


def flags(command: str, table: Mapping[str, str], options: Mapping[str, Any], renamed: Mapping[str, str] = {}) -> List[str]:
    """The flags for options, table being kinds(command); TypeError for a
    value of the wrong kind, or for one flag given by two names."""
    args: List[str] = []
    for alias, name in renamed.items():
        if options.get(alias) is not None and options.get(name) is not None:
            raise TypeError(f"nanhunt {command}: {alias} and {name} are the same option: give one")
    for name, value in options.items():
        if value is None or value is False:
            continue
        name = renamed.get(name, name)
        flag = "--" + name.replace("_", "-")
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
    """The kind of a flag the listing does not have, from its value."""
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
