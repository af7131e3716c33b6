"""The package's listing of the flags (_flags.py) is what the binary it
runs lists: the command lines it builds are the binary's."""

import json
import subprocess
import unittest

import support
from nanhunt import _flags


def setUpModule():
    support.binary()


class Listing(unittest.TestCase):
    def test_the_binary_lists_the_same_flags(self):
        done = subprocess.run([support.binary(), "flags", "--json"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, check=True)
        self.assertEqual(done.stderr, b"")
        listed = json.loads(done.stdout)
        self.assertEqual(listed["schema"], "nanhunt/flags/v1")
        # compared command by command, for a readable difference
        ours = {c["name"]: c for c in _flags.LISTING["commands"]}
        theirs = {c["name"]: c for c in listed["commands"]}
        self.assertEqual(sorted(ours), sorted(theirs))
        for name, command in theirs.items():
            self.assertEqual(ours[name], command, f"nanhunt {name}: go test ./cmd/nanhunt -update rewrites _flags.py")
        self.assertEqual(_flags.LISTING, listed)

    def test_the_wrapped_commands_are_listed(self):
        names = {c["name"] for c in _flags.LISTING["commands"]}
        self.assertLessEqual({"trace", "plan", "watch"}, names)


if __name__ == "__main__":
    unittest.main()
