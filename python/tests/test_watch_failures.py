"""What the package does when the watch misbehaves: a line that is not
JSON, a death by signal, an alarm whose verdict file cannot be read. A
stand-in binary plays the watch."""

import os
import stat
import sys
import tempfile
import unittest

import support
import nanhunt

# the stand-in: prints the lines of $FAKE_LINES (separated by "|"), then
# exits with $FAKE_EXIT, or kills itself with $FAKE_SIGNAL
FAKE = """
import os, signal, sys
for line in os.environ.get("FAKE_LINES", "").split("|"):
    if line:
        print(line, flush=True)
if os.environ.get("FAKE_SIGNAL"):
    os.kill(os.getpid(), int(os.environ["FAKE_SIGNAL"]))
sys.stderr.write(os.environ.get("FAKE_STDERR", ""))
sys.exit(int(os.environ.get("FAKE_EXIT", "0")))
"""


class Failures(unittest.TestCase):
    def setUp(self):
        tmp = tempfile.TemporaryDirectory()
        self.addCleanup(tmp.cleanup)
        self.tmp = tmp.name
        script = os.path.join(self.tmp, "fake.py")
        with open(script, "w", encoding="utf-8") as f:
            f.write(FAKE)
        binary = os.path.join(self.tmp, "nanhunt")
        with open(binary, "w", encoding="utf-8") as f:
            f.write(f'#!/bin/sh\nexec "{sys.executable}" "{script}" "$@"\n')
        os.chmod(binary, stat.S_IRWXU)
        saved = dict(os.environ)
        self.addCleanup(lambda: (os.environ.clear(), os.environ.update(saved)))
        os.environ["NANHUNT_BINARY"] = binary

    def test_line_that_is_not_json(self):
        os.environ["FAKE_LINES"] = '{"event": "step", "step": 0}|step 1: clean'
        events = nanhunt.watch(self.tmp)
        self.assertEqual(next(events)["step"], 0)
        with self.assertRaisesRegex(nanhunt.NanhuntError, "not a JSON event: 'step 1: clean'"):
            next(events)

    def test_death_by_signal(self):
        os.environ["FAKE_SIGNAL"] = "9"
        with self.assertRaisesRegex(nanhunt.NanhuntError, "stopped by signal 9"):
            list(nanhunt.watch(self.tmp))

    def test_failure_gives_the_last_line_of_stderr(self):
        os.environ.update(FAKE_EXIT="2", FAKE_STDERR="nanhunt: warning: slow disk\nnanhunt: --out: inside the dump\n")
        with self.assertRaises(nanhunt.NanhuntError) as cm:
            list(nanhunt.watch(self.tmp))
        self.assertEqual((cm.exception.message, cm.exception.status), ("--out: inside the dump", 2))
        self.assertIn("slow disk", cm.exception.stderr)

    def test_exit_3_is_an_answer(self):
        # no anomaly, but some rank-steps not read whole: the events say so, the watch did not fail
        os.environ.update(FAKE_EXIT="3", FAKE_LINES='{"event": "stopped", "reason": "idle", "complete": false}')
        self.assertEqual(list(nanhunt.watch(self.tmp)), [{"event": "stopped", "reason": "idle", "complete": False}])
        os.environ["FAKE_EXIT"] = "4"
        with self.assertRaises(nanhunt.NanhuntError):
            list(nanhunt.watch(self.tmp))

    def test_guard_reports_a_watch_that_ended_incomplete(self):
        os.environ.update(FAKE_EXIT="3", FAKE_LINES='{"event": "stopped", "reason": "idle", "complete": false, '
                                                    '"unread": [{"step": 5, "ranks": [0, 1], "reason": "unreadable"}]}')
        guard = nanhunt.StepGuard(self.tmp, raise_on_incomplete=True)
        self.addCleanup(guard.close)
        with self.assertRaises(nanhunt.IncompleteError) as cm:
            support.step_until(guard, 10)
        self.assertIn("step 5 (ranks 0,1: unreadable) could not be read whole", str(cm.exception))
        self.assertFalse(guard.complete)

    def test_alarm_whose_verdict_cannot_be_read(self):
        missing = os.path.join(self.tmp, "verdict-step2.json")
        os.environ["FAKE_LINES"] = f'{{"event": "anomaly", "step": 2, "verdict": "{missing}"}}'
        guard = nanhunt.StepGuard(self.tmp)
        self.addCleanup(guard.close)
        with self.assertRaises(nanhunt.NanhuntError) as cm:
            support.step_until(guard, 10)
        self.assertEqual(cm.exception.file, missing)


if __name__ == "__main__":
    unittest.main()
