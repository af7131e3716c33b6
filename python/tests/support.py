"""What the tests share: the nanhunt under test, its binary, the fixtures.

Two ways to run them (python/tests is the start and top-level folder):

    /usr/bin/python3 -m unittest discover -s python/tests
        tests the package of this source tree with a binary built here
        (CGO_ENABLED=0 go build -trimpath ./cmd/nanhunt into python/build/test-bin);

    NANHUNT_TEST_WHEEL=1 VENV/bin/python -m unittest discover -s python/tests
        tests the installed wheel: the package and the binary it installed
        (NANHUNT_BINARY must not be set).
"""

from __future__ import annotations

import os
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
PYTHON_DIR = os.path.dirname(HERE)
REPO = os.path.dirname(PYTHON_DIR)
FIXTURES = os.path.join(os.path.dirname(REPO), "shared", "fixtures")
WHEEL = os.environ.get("NANHUNT_TEST_WHEEL") == "1"

if not WHEEL and PYTHON_DIR not in sys.path:
    sys.path.insert(0, PYTHON_DIR)

import nanhunt  # noqa: E402  (after the source tree is on sys.path)

_binary = None


def binary() -> str:
    """The nanhunt binary the tests run, made ready once."""
    global _binary
    if _binary is not None:
        return _binary
    if WHEEL:
        if os.environ.get("NANHUNT_BINARY"):
            raise AssertionError("NANHUNT_TEST_WHEEL=1 tests the installed binary: unset NANHUNT_BINARY")
        if os.path.abspath(nanhunt.__file__).startswith(PYTHON_DIR + os.sep):
            raise AssertionError(f"NANHUNT_TEST_WHEEL=1 but nanhunt is imported from the source tree ({nanhunt.__file__})")
        _binary = nanhunt.binary()
        return _binary
    out = os.path.join(PYTHON_DIR, "build", "test-bin", "nanhunt")
    env = dict(os.environ, CGO_ENABLED="0")
    subprocess.run(["go", "build", "-trimpath", "-o", out, "./cmd/nanhunt"], cwd=REPO, env=env, check=True)
    os.environ["NANHUNT_BINARY"] = out
    _binary = out
    return out


def fixture(*parts: str) -> str:
    """A shared real fixture; AssertionError when it is missing."""
    path = os.path.join(FIXTURES, *parts)
    if not os.path.exists(path):
        raise AssertionError(f"{path} is missing: the tests read the shared msprobe fixtures there")
    return path


def child_env() -> dict:
    """The environment for a Python child that imports the same nanhunt."""
    env = dict(os.environ)
    if not WHEEL:
        env["PYTHONPATH"] = PYTHON_DIR + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    return env


def synth(scenario: str, out: str) -> str:
    """Write a generated scenario (nanhunt synth) to out; returns out."""
    subprocess.run([binary(), "synth", "--scenario", scenario, "-o", out], check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    return out


def step_until(guard, seconds: float, pause: float = 0.05) -> None:
    """Call guard.step() every pause seconds for at most seconds: what it
    raises meanwhile goes to the caller (assertRaises)."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        guard.step()
        time.sleep(pause)
