"""The wheel: a platform wheel for any Python 3 that carries the static
nanhunt binary as a script; and the binary the package runs."""

import glob
import os
import platform
import struct
import subprocess
import sys
import sysconfig
import tempfile
import unittest
import zipfile

import support
import nanhunt

MACHINES = {"x86_64": "x86_64", "amd64": "x86_64", "aarch64": "aarch64", "arm64": "aarch64"}
# the machine the wheel is for: this one's, or NANHUNT_TEST_WHEEL_MACHINE
# when NANHUNT_TEST_WHEEL_FILE is a wheel built for another (the aarch64
# wheel, checked on an x86_64 build machine)
MACHINE = MACHINES[os.environ.get("NANHUNT_TEST_WHEEL_MACHINE") or platform.machine().lower()]
# ELF e_machine of each
ELF_MACHINES = {"x86_64": 62, "aarch64": 183}


def setUpModule():
    support.binary()


def version():
    with open(os.path.join(support.PYTHON_DIR, "VERSION"), encoding="utf-8") as f:
        return f.read().strip()


def elf_machine(elf: bytes) -> int:
    """The e_machine field of a little-endian ELF file."""
    machine, = struct.unpack_from("<H", elf, 0x12)
    return machine


def interpreter_requested(elf: bytes) -> bool:
    """Whether a 64-bit little-endian ELF file asks for a dynamic loader
    (has a PT_INTERP program header)."""
    assert elf[:4] == b"\x7fELF" and elf[4] == 2 and elf[5] == 1, "not a 64-bit little-endian ELF file"
    phoff, = struct.unpack_from("<Q", elf, 0x20)
    phentsize, phnum = struct.unpack_from("<HH", elf, 0x36)
    return any(struct.unpack_from("<I", elf, phoff + i * phentsize)[0] == 3 for i in range(phnum))


class Wheel(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        built = os.environ.get("NANHUNT_TEST_WHEEL_FILE")
        if not built:
            # the README's build command, into a folder of the test's own
            done = subprocess.run([sys.executable, "-m", "build", "--wheel", "--no-isolation", "--outdir", cls.tmp.name,
                                   support.PYTHON_DIR], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
            if done.returncode != 0:
                raise AssertionError(f"building the wheel failed:\n{done.stdout}")
            built, = glob.glob(os.path.join(cls.tmp.name, "*.whl"))
        cls.path = built
        cls.wheel = zipfile.ZipFile(built)

    @classmethod
    def tearDownClass(cls):
        cls.wheel.close()
        cls.tmp.cleanup()

    def test_name_and_tags(self):
        m = MACHINE
        self.assertEqual(os.path.basename(self.path),
                         f"nanhunt-{version()}-py3-none-manylinux_2_17_{m}.manylinux2014_{m}.musllinux_1_1_{m}.whl")
        meta = self.wheel.read(f"nanhunt-{version()}.dist-info/WHEEL").decode()
        self.assertIn("Root-Is-Purelib: false", meta)
        self.assertIn(f"Tag: py3-none-manylinux_2_17_{m}", meta)
        self.assertIn(f"Version: {version()}", self.wheel.read(f"nanhunt-{version()}.dist-info/METADATA").decode())

    def test_package_at_the_root_and_typed(self):
        names = self.wheel.namelist()
        for name in ("nanhunt/__init__.py", "nanhunt/py.typed", "nanhunt/_guard.py"):
            self.assertIn(name, names)
        self.assertFalse([n for n in names if "/purelib/" in n or "/platlib/" in n], names)

    def test_binary_is_an_executable_static_script(self):
        info = self.wheel.getinfo(f"nanhunt-{version()}.data/scripts/nanhunt")
        self.assertEqual((info.external_attr >> 16) & 0o111, 0o111, "not executable")
        elf = self.wheel.read(info)
        self.assertFalse(interpreter_requested(elf), "the binary asks for a dynamic loader: built without CGO_ENABLED=0?")
        self.assertEqual(elf_machine(elf), ELF_MACHINES[MACHINE], f"the binary is not for {MACHINE}")


class Binary(unittest.TestCase):
    def test_binary_in_use(self):
        if support.WHEEL:
            self.assertEqual(nanhunt.binary(), os.path.join(sysconfig.get_path("scripts"), "nanhunt"))
        else:
            self.assertEqual(nanhunt.binary(), os.environ["NANHUNT_BINARY"])

    def test_python_m_nanhunt_runs_the_binary(self):
        done = subprocess.run([sys.executable, "-m", "nanhunt", "version"], env=support.child_env(),
                              stdout=subprocess.PIPE, text=True, check=True)
        self.assertRegex(done.stdout, r"^nanhunt .*\(verdict schema nanhunt/verdict/v1\)")
        if support.WHEEL:
            # the wheel's binary knows the release it was packaged as
            self.assertTrue(done.stdout.startswith(f"nanhunt {version()}, "), done.stdout)

    def test_override_that_is_not_executable(self):
        with tempfile.NamedTemporaryFile() as f:
            old = os.environ.get("NANHUNT_BINARY")
            os.environ["NANHUNT_BINARY"] = f.name
            try:
                with self.assertRaisesRegex(nanhunt.NanhuntError, "not an executable file"):
                    nanhunt.trace(support.fixture("msprobe-generated"))
            finally:
                if old is None:
                    del os.environ["NANHUNT_BINARY"]
                else:
                    os.environ["NANHUNT_BINARY"] = old


if __name__ == "__main__":
    unittest.main()
