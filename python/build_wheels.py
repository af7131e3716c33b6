"""Builds the nanhunt wheel for every Linux machine it is made for, x86_64
and aarch64 (Atlas 800T A2's Kunpeng hosts), on any one build machine:

    python3 python/build_wheels.py            # from the repository root

Each wheel is `python3 -m build --wheel --no-isolation python` with GOARCH
set: setup.py cross-compiles the static binary (CGO_ENABLED=0, so no C
cross-compiler is needed) and tags the wheel for that machine. The wheels
land in python/dist/ (or --outdir DIR); their paths are printed, one a line.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))

# Go's GOARCH -> the wheel's machine name, in the order they are built
MACHINES = {"amd64": "x86_64", "arm64": "aarch64"}


def build(goarch: str, outdir: str) -> str:
    """Builds the wheel for one GOARCH into outdir; returns its path."""
    # setup.py's build folder holds the binary of the last build: start clean
    shutil.rmtree(os.path.join(HERE, "build"), ignore_errors=True)
    env = dict(os.environ, GOOS="linux", GOARCH=goarch, CGO_ENABLED="0")
    cmd = [sys.executable, "-m", "build", "--wheel", "--no-isolation", "--outdir", outdir, HERE]
    done = subprocess.run(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if done.returncode != 0:
        raise SystemExit(f"building the {goarch} wheel failed ({' '.join(cmd)}):\n{done.stdout}")
    # the wheel's platform tag ends with the machine (setup.py's MACHINES)
    machine = MACHINES[goarch]
    made = sorted(n for n in os.listdir(outdir) if n.startswith("nanhunt-") and n.endswith(f"_{machine}.whl"))
    if len(made) != 1:
        raise SystemExit(f"building the {goarch} wheel: expected one *_{machine}.whl in {outdir}, found {made}")
    return os.path.join(outdir, made[0])


def main() -> None:
    parser = argparse.ArgumentParser(description="Build the nanhunt wheels for Linux x86_64 and aarch64.")
    parser.add_argument("--outdir", default=os.path.join(HERE, "dist"), help="where the wheels go (python/dist)")
    args = parser.parse_args()
    os.makedirs(args.outdir, exist_ok=True)
    for goarch in MACHINES:
        print(build(goarch, args.outdir), flush=True)


if __name__ == "__main__":
    main()
