"""StepGuard when the dump is not all there: a rank that crashed (its
dump.json never appears), a NaN that only the training log shows, a watch
that is stuck. The guard raises on an anomaly found without some ranks and
on a log-only NaN, never calls a step it could not read clean, and waits
lag_timeout once at most."""

import os
import shutil
import tempfile
import time
import unittest
import warnings

import support
import nanhunt
from test_guard import LiveDump

FAST = {"settle": 0.3, "poll": 0.1, "rank_timeout": 1}


def setUpModule():
    support.binary()


class CrashingDump(LiveDump):
    """A LiveDump whose rank `dead` writes nothing from step `since` on."""

    def __init__(self, finished, dump_path, dead, since):
        super().__init__(finished, dump_path)
        self.dead, self.since = dead, since

    def write(self, step):
        if step >= self.since:
            shutil.rmtree(os.path.join(self.finished, f"step{step}", f"rank{self.dead}"), ignore_errors=True)
        super().write(step)


class GuardIncomplete(unittest.TestCase):
    def setUp(self):
        tmp = tempfile.TemporaryDirectory()
        self.addCleanup(tmp.cleanup)
        self.tmp = tmp.name
        self.out = os.path.join(self.tmp, "out")

    def crashed(self, scenario):
        """Steps 1-3 of a generated run whose rank 3 crashed during step 2."""
        return CrashingDump(support.synth(scenario, os.path.join(self.tmp, "finished")),
                            os.path.join(self.tmp, "dump"), dead=3, since=2)

    def test_anomaly_without_a_crashed_rank_raises_and_names_it(self):
        live = self.crashed("log-negative")  # NaN born at step 2 on rank 2
        guard = nanhunt.StepGuard(live.dump_path, out_dir=self.out, max_lag=1, lag_timeout=30, first_step=1, **FAST)
        started, stopped_at, error = time.monotonic(), None, None
        with guard:
            for step in live.steps:
                live.write(step)
                try:
                    guard.step()
                except nanhunt.AnomalyError as e:
                    stopped_at, error = step, e
                    break
        self.assertEqual(stopped_at, 3)
        self.assertLess(time.monotonic() - started, 20)  # not lag_timeout at each step
        origin = error.verdict["origin"]
        self.assertEqual((origin["step"], origin["ranks"], origin["op"]), (2, [2], "Torch.log.0.forward"))
        self.assertEqual(origin["confidence"], "medium")
        self.assertIn({"step": 2, "ranks": [3], "reason": "never finished"}, error.verdict["unread"])
        self.assertFalse(error.verdict["complete"])
        self.assertFalse(error.event["complete"])

    def train_clean_with_crash(self, **options):
        """The clean run with rank 3 crashed: the loop, then guard.step()
        until the watch has judged step 3; the guard and the warnings."""
        live = self.crashed("legit-masks")
        guard = nanhunt.StepGuard(live.dump_path, out_dir=self.out, max_lag=1, lag_timeout=30, first_step=1, **FAST, **options)
        self.addCleanup(guard.close)
        started = time.monotonic()
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            for step in live.steps:
                live.write(step)
                guard.step()
            deadline = time.monotonic() + 20
            while len(guard.incomplete) < 2 and time.monotonic() < deadline:
                time.sleep(0.1)
                guard.step()
        self.assertLess(time.monotonic() - started, 25)
        return guard, [w for w in caught if issubclass(w.category, nanhunt.IncompleteWarning)]

    def test_clean_run_with_a_crashed_rank_is_not_clean(self):
        guard, warned = self.train_clean_with_crash()
        self.assertFalse(guard.complete)
        self.assertEqual([(e["step"], e["status"]) for e in guard.incomplete], [(2, "incomplete"), (3, "incomplete")])
        self.assertEqual(guard.incomplete[0]["unread"], [{"step": 2, "ranks": [3], "reason": "never finished"}])
        self.assertIsNone(guard.anomaly)
        # one warning: step 3 lacks the same rank for the same reason
        self.assertEqual(len(warned), 1)
        self.assertIn("step 2 (rank 3: never finished) could not be read whole", str(warned[0].message))

    def test_close_takes_the_last_reports(self):
        # the loop ends right after the last step: the watch has judged nothing yet; close() waits for what it says
        live = self.crashed("legit-masks")
        with nanhunt.StepGuard(live.dump_path, out_dir=self.out, first_step=1, **FAST) as guard:
            for step in live.steps:
                live.write(step)
                guard.step()
            time.sleep(3)  # rank 3 is given up after rank_timeout; the steps are judged
        self.assertFalse(guard.complete)
        self.assertEqual([e["step"] for e in guard.incomplete], [2, 3])

    def test_raise_on_incomplete(self):
        live = self.crashed("legit-masks")
        guard = nanhunt.StepGuard(live.dump_path, out_dir=self.out, raise_on_incomplete=True, first_step=1, **FAST)
        self.addCleanup(guard.close)
        for step in live.steps:
            live.write(step)
            guard.step()
        with self.assertRaises(nanhunt.IncompleteError) as cm:
            support.step_until(guard, 20, pause=0.1)
        self.assertIsInstance(cm.exception, nanhunt.NanhuntError)
        self.assertEqual(cm.exception.unread, [{"step": 2, "ranks": [3], "reason": "never finished"}])
        guard.step()  # raised once: the loop may go on
        self.assertFalse(guard.complete)

    def test_nan_only_the_log_shows_raises(self):
        # the dump stops at step 1 (msprobe's step list), the log goes on and shows NaN at step 2
        finished = support.synth("log-negative", os.path.join(self.tmp, "finished"))
        live = LiveDump(finished, os.path.join(self.tmp, "dump"))
        log = os.path.join(self.tmp, "train.jsonl")
        open(log, "w").close()
        guard = nanhunt.StepGuard(live.dump_path, out_dir=self.out, first_step=1, log=log, **FAST)
        self.addCleanup(guard.close)
        for step, loss in [(1, "2.4"), (2, "NaN"), (3, "NaN")]:
            if step == 1:
                live.write(step)
            with open(log, "a", encoding="utf-8") as f:
                f.write(f'{{"step": {step}, "loss": {loss}}}\n')
            guard.step()
        with self.assertRaises(nanhunt.AnomalyError) as cm:
            support.step_until(guard, 20, pause=0.1)
        e = cm.exception
        self.assertIsNone(e.verdict["origin"])
        self.assertEqual((e.event["source"], e.event["step"], e.event["last_dump_step"]), ("log", 2, 1))
        self.assertTrue(str(e).startswith("nanhunt: the log shows NaN at step 2; the dump stops at step 1: dump step 2"), str(e))

    def test_stuck_watch_is_waited_for_once(self):
        # step 1 begun by every rank and never written; steps 2-4 begun by no rank yet
        dump = os.path.join(self.tmp, "dump")
        for rank in range(4):
            os.makedirs(os.path.join(dump, "step1", f"rank{rank}"))
        guard = nanhunt.StepGuard(dump, out_dir=self.out, max_lag=0, lag_timeout=1, first_step=1, **FAST)
        self.addCleanup(guard.close)
        started = time.monotonic()
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            for step in range(1, 5):
                os.makedirs(os.path.join(dump, f"step{step}"), exist_ok=True)
                guard.step()
        self.assertLess(time.monotonic() - started, 3.5)  # 1 s once, not at each of the 4 steps
        lag = [w for w in caught if issubclass(w.category, RuntimeWarning)]
        self.assertEqual(len(lag), 1, [str(w.message) for w in caught])
        self.assertIn("does not wait for it again", str(lag[0].message))


if __name__ == "__main__":
    unittest.main()
