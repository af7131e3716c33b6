"""Builds the nanhunt binary into the wheel, the way ruff and uv ship theirs:
`go build` of ../cmd/nanhunt (static, CGO_ENABLED=0) goes to the wheel's
.data/scripts/, which pip installs as the `nanhunt` command next to the
interpreter, and the wheel is tagged for the platform the binary is for
(any Python 3, no ABI)."""

import os
import shutil
import subprocess

from setuptools import Distribution, setup

# The commands this file extends, without importing distutils or
# wheel.bdist_wheel (both deprecated): build_scripts as setuptools finds any
# command; bdist_wheel setuptools' own (70.1 and later), else the one the
# installed wheel package registers for setuptools (Debian 12's setuptools
# 66 with wheel 0.38).
build_scripts = Distribution().get_command_class("build_scripts")
try:
    from setuptools.command.bdist_wheel import bdist_wheel
except ImportError:
    bdist_wheel = Distribution().get_command_class("bdist_wheel")

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
with open(os.path.join(HERE, "VERSION")) as f:
    VERSION = f.read().strip()

# Go's GOARCH -> the wheel's machine name; the binary needs no libc at all,
# so it runs on glibc (manylinux) and musl (musllinux) systems alike
MACHINES = {"amd64": "x86_64", "arm64": "aarch64"}


def go() -> str:
    found = os.environ.get("GO") or shutil.which("go")
    if not found:
        raise SystemExit("building the nanhunt wheel needs Go (go on PATH, or GO=/path/to/go)")
    if not os.path.isfile(os.path.join(REPO, "go.mod")) or not os.path.isdir(os.path.join(REPO, "cmd", "nanhunt")):
        raise SystemExit(f"{REPO}: not the nanhunt repository (python/ is built from inside it)")
    return found


def target() -> tuple:
    """GOOS and GOARCH the binary is built for (the host's, or GOOS/GOARCH)."""
    out = subprocess.run([go(), "env", "GOOS", "GOARCH"], cwd=REPO, check=True, stdout=subprocess.PIPE, text=True)
    goos, goarch = out.stdout.split()
    return goos, goarch


def platform_tag() -> str:
    goos, goarch = target()
    if goos != "linux" or goarch not in MACHINES:
        raise SystemExit(f"the nanhunt wheel is built for Linux on {', '.join(MACHINES)}, not {goos}/{goarch}")
    m = MACHINES[goarch]
    return f"manylinux_2_17_{m}.manylinux2014_{m}.musllinux_1_1_{m}"


class build_binary(build_scripts):
    """The wheel's one script: the nanhunt binary, compiled."""

    def get_source_files(self):
        return []

    def run(self):
        self.mkpath(self.build_dir)
        out = os.path.abspath(os.path.join(self.build_dir, "nanhunt"))
        env = dict(os.environ, CGO_ENABLED="0")
        # the release the wheel is, for `nanhunt version`
        release = "-X main.release=" + VERSION
        cmd = [go(), "build", "-trimpath", "-ldflags=" + release, "-o", out, "./cmd/nanhunt"]
        print("building the nanhunt binary:", " ".join(cmd), flush=True)
        subprocess.run(cmd, cwd=REPO, env=env, check=True)
        self.outfiles = [out]


class BinaryDistribution(Distribution):
    """A distribution with a compiled part: the wheel is for one platform,
    and the package goes to platlib, at the wheel's root."""

    def has_ext_modules(self):
        return True


class platform_wheel(bdist_wheel):
    """py3-none-<platform>: one wheel for every Python 3 on that platform."""

    def get_tag(self):
        return "py3", "none", platform_tag()


setup(
    # what the one script is made from: build_binary compiles it
    scripts=["../cmd/nanhunt"],
    distclass=BinaryDistribution,
    cmdclass={"build_scripts": build_binary, "bdist_wheel": platform_wheel},
)
