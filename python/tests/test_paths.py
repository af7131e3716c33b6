"""Paths whose names are not UTF-8 (a folder written under another
locale): nanhunt writes their bytes as Python's surrogateescape does, so
that the str json.loads gives is os.fsdecode's, and os.fsencode turns it
back into the bytes on disk, in a verdict, a joined verdict and an error."""

import os
import shutil
import subprocess
import tempfile
import unittest

import support
import nanhunt

# a folder name that is not UTF-8: Latin-1 "é", and a byte no encoding gives
LATIN1 = b"r\xe9sultats\xff"


def setUpModule():
    support.binary()


class NotUTF8(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, self.tmp)
        self.root = os.path.join(os.fsencode(self.tmp), LATIN1, b"dump")
        os.makedirs(os.path.dirname(self.root))
        support.synth("log-negative", os.fsdecode(self.root))
        # rank 0's dump.json at step 2 cut in half: a warning names it
        self.damaged = os.path.join(self.root, b"step2", b"rank0", b"dump.json")
        with open(self.damaged, "rb") as f:
            data = f.read()
        with open(self.damaged, "wb") as f:
            f.write(data[: len(data) // 2])

    def warned_file(self, verdict):
        """The file of the warning about the damaged dump.json, as bytes."""
        for w in verdict["warnings"]:
            if w.get("file", "").endswith("step2/rank0/dump.json"):
                return os.fsencode(w["file"])
        self.fail(f"no warning names the damaged dump.json: {verdict['warnings']}")

    def test_verdict_names_the_bytes(self):
        v = nanhunt.trace(os.fsdecode(self.root))
        self.assertEqual(self.warned_file(v), self.damaged)
        self.assertTrue(os.path.exists(os.fsdecode(self.damaged)))

    def test_joined_verdict_names_the_bytes(self):
        sums = os.path.join(self.tmp, "sums") + os.sep
        subprocess.run([support.binary(), "summarize", self.root, "-o", sums, "--node-index", "0", "--nodes", "1"],
                       check=True, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        with open(os.path.join(sums, "summary-node00000.jsonl"), "rb") as f:
            head = f.readline()
        self.assertIn(rb"r\udce9sultats\udcff", head)  # valid UTF-8, the bytes escaped
        head.decode("utf-8")
        v = nanhunt.trace(sums)
        self.assertEqual(self.warned_file(v), self.damaged)

    def test_error_names_the_bytes(self):
        missing = os.path.join(os.fsencode(self.tmp), LATIN1, b"no-such-dump")
        with self.assertRaises(nanhunt.NanhuntError) as cm:
            nanhunt.trace(os.fsdecode(missing))
        self.assertEqual(os.fsencode(cm.exception.file), missing)
        str(cm.exception).encode("utf-8")  # printable: the bytes are shown escaped


if __name__ == "__main__":
    unittest.main()
