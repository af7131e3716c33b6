"""nanhunt from Python: where was the first NaN/Inf of a training run born?

The package runs the nanhunt binary it ships with (or the one NANHUNT_BINARY
names) and hands back what it prints as dicts:

    trace(path, **options)      the verdict of ``nanhunt trace --format json``
    plan(path, **options)       what to collect next (``nanhunt plan``), or None
    watch(dump_path, **options) the events of ``nanhunt watch`` while it runs
    StepGuard(dump_path, ...)   next to the training loop: guard.step() once a
                                step raises AnomalyError at the first NaN/Inf
                                that lasts (or that only the log or the
                                monitor shows)

NanhuntError is an unusable input, bad usage or a failed run; AnomalyError
carries the verdict of an anomaly found while training. No anomaly is a clean
run only when everything expected was read whole: trace's verdict["complete"],
watch's "complete" (exit status 3 otherwise, an answer, not a failure);
StepGuard warns (IncompleteWarning) of each step it could not read whole, or
raises IncompleteError with raise_on_incomplete=True.
"""

from ._binary import find as binary
from ._errors import AnomalyError, IncompleteError, IncompleteWarning, NanhuntError
from ._guard import StepGuard
from ._run import plan, trace
from ._version import __version__
from ._watch import watch

__all__ = [
    "AnomalyError",
    "IncompleteError",
    "IncompleteWarning",
    "NanhuntError",
    "StepGuard",
    "binary",
    "plan",
    "trace",
    "watch",
    "__version__",
]

# tracebacks name them nanhunt.NanhuntError, nanhunt.AnomalyError, ...
NanhuntError.__module__ = AnomalyError.__module__ = IncompleteError.__module__ = IncompleteWarning.__module__ = __name__
