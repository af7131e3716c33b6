"""Runs several repro.py scripts in one Python process, for the tests.

Importing torch takes most of a repro.py run; the tests run many cases, so
they start Python once. Reads a JSON list of {"script", "args", "cwd"} on
stdin and prints a JSON list of {"code", "output"} (stdout and stderr
together, as one process would write them). Each script runs as __main__
with its own sys.argv, from its own working directory.
"""
import contextlib
import io
import json
import os
import runpy
import sys
import traceback

import torch  # noqa: F401 -- imported once for every script


def run(req):
    buf = io.StringIO()
    code = 0
    old_argv, old_cwd = sys.argv, os.getcwd()
    sys.argv = [req["script"]] + req.get("args", [])
    os.chdir(req["cwd"])
    try:
        with contextlib.redirect_stdout(buf), contextlib.redirect_stderr(buf):
            try:
                runpy.run_path(req["script"], run_name="__main__")
            except SystemExit as e:
                code = e.code if isinstance(e.code, int) else (0 if e.code is None else 1)
            except BaseException:
                traceback.print_exc()
                code = 1
    finally:
        sys.argv = old_argv
        os.chdir(old_cwd)
    return {"code": code, "output": buf.getvalue()}


def main():
    reqs = json.load(sys.stdin)
    json.dump([run(r) for r in reqs], sys.stdout)


if __name__ == "__main__":
    main()
