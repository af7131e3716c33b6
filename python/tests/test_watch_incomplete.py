"""nanhunt.watch when the dump is not all there: steps it could not read
whole come with "complete": False and their unread rank-steps, the watch
ends with exit status 3 (an answer, not a failure), and a NaN that only the
log shows is an anomaly event."""

import os
import shutil
import tempfile
import unittest

import support
import nanhunt

FAST = {"settle": 0.2, "poll": 0.1, "rank_timeout": 0.5}


def setUpModule():
    support.binary()


class WatchIncomplete(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.addCleanup(self.tmp.cleanup)

    def path(self, *parts):
        return os.path.join(self.tmp.name, *parts)

    def crashed(self, scenario, *remove):
        dump = support.synth(scenario, self.path("dump"))
        for p in remove:
            shutil.rmtree(os.path.join(dump, p))
        return dump

    def test_step_a_rank_never_wrote(self):
        dump = self.crashed("legit-masks", "step3", os.path.join("step2", "rank3"))
        events = list(nanhunt.watch(dump, out_dir=self.path("out"), idle_exit=1, **FAST))  # exit 3: no error
        steps = {e["step"]: e for e in events if e["event"] == "step"}
        self.assertEqual((steps[1]["status"], steps[1]["complete"]), ("clean", True))
        never = [{"step": 2, "ranks": [3], "reason": "never finished"}]
        self.assertEqual((steps[2]["status"], steps[2]["complete"], steps[2]["ranks"], steps[2]["unread"]),
                         ("incomplete", False, "0-2", never))
        stopped = events[-1]
        self.assertEqual((stopped["event"], stopped["reason"], stopped["complete"], stopped["unread"]),
                         ("stopped", "idle", False, never))

    def test_callback_returns_none_and_the_stop_says_incomplete(self):
        dump = self.crashed("legit-masks", "step3", os.path.join("step2", "rank3"))
        seen = []
        self.assertIsNone(nanhunt.watch(dump, out_dir=self.path("out"), idle_exit=1, on_event=seen.append, **FAST))
        self.assertFalse(seen[-1]["complete"])

    def test_nan_only_the_log_shows(self):
        dump = self.crashed("log-negative", "step2", "step3")
        log = self.path("train.jsonl")
        with open(log, "w", encoding="utf-8") as f:
            f.write('{"step": 1, "loss": 2.4}\n{"step": 2, "loss": NaN}\n')
        anomaly = nanhunt.watch(dump, out_dir=self.path("out"), log=log, exit_on_anomaly=True, on_event=lambda e: None, **FAST)
        self.assertEqual((anomaly["source"], anomaly["step"], anomaly["kind"], anomaly["last_dump_step"]), ("log", 2, "nan", 1))
        self.assertEqual(anomaly["message"], "the log shows NaN at step 2; the dump stops at step 1: dump step 2")
        self.assertNotIn("op", anomaly)


if __name__ == "__main__":
    unittest.main()
