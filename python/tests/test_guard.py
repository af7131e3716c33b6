"""StepGuard next to a loop that writes a generated run step by step, the
way msprobe does (the rank folders when the step starts, the files when it
ends): where the loop stops, the callback, and never waiting by default."""

import os
import shutil
import tempfile
import time
import unittest

import support
import nanhunt

FAST = {"settle": 0.3, "poll": 0.1}


def setUpModule():
    support.binary()


class LiveDump:
    """Copies a finished run into dump_path one step at a time."""

    def __init__(self, finished, dump_path):
        self.finished, self.dump_path = finished, dump_path
        self.steps = sorted(int(d[4:]) for d in os.listdir(finished) if d.startswith("step"))
        os.makedirs(dump_path)

    def write(self, step):
        src, dst = os.path.join(self.finished, f"step{step}"), os.path.join(self.dump_path, f"step{step}")
        ranks = sorted(os.listdir(src))
        for rank in ranks:
            os.makedirs(os.path.join(dst, rank))
        for rank in ranks:
            for name in ("stack.json", "construct.json", "dump.json"):
                shutil.copyfile(os.path.join(src, rank, name), os.path.join(dst, rank, name))


class Guard(unittest.TestCase):
    def setUp(self):
        tmp = tempfile.TemporaryDirectory()
        self.addCleanup(tmp.cleanup)
        self.tmp = tmp.name
        # log-negative: steps 1-3, a NaN born at step 2 on rank 2 that lasts
        self.live = LiveDump(support.synth("log-negative", os.path.join(self.tmp, "finished")),
                             os.path.join(self.tmp, "dump"))
        self.out = os.path.join(self.tmp, "out")

    def train(self, guard):
        """The loop: write a step, guard.step(); the step it stopped at."""
        with guard:
            for step in self.live.steps:
                self.live.write(step)
                try:
                    guard.step()
                except nanhunt.AnomalyError as e:
                    self.error = e
                    return step
        return None

    def test_stops_at_the_step_that_shows_the_nan_lasts(self):
        guard = nanhunt.StepGuard(self.live.dump_path, out_dir=self.out, max_lag=1, first_step=1, **FAST)
        self.assertEqual(self.train(guard), 3)
        origin = self.error.verdict["origin"]
        self.assertEqual((origin["step"], origin["ranks"], origin["op"]), (2, [2], "Torch.log.0.forward"))
        self.assertEqual(self.error.event["verdict"], os.path.join(self.out, "verdict-step2.json"))
        self.assertEqual(str(self.error), "nanhunt: the first NaN was born at step 2 on rank 2, in "
                                          f"Torch.log.0.forward (verdict: {self.error.event['verdict']})")
        self.assertIs(guard.anomaly, self.error.verdict)

    def test_alarm_without_its_verdict_file(self):
        # a folder where the verdict goes: the file cannot be written, the alarm stands
        os.makedirs(os.path.join(self.out, "verdict-step2.json"))
        guard = nanhunt.StepGuard(self.live.dump_path, out_dir=self.out, max_lag=1, first_step=1, **FAST)
        self.assertEqual(self.train(guard), 3)
        self.assertNotIn("verdict", self.error.event)
        self.assertEqual(self.error.verdict["not_written"], [os.path.join(self.out, "verdict-step2.json")])
        origin = self.error.verdict["origin"]
        self.assertEqual((origin["step"], origin["ranks"], origin["op"]), (2, [2], "Torch.log.0.forward"))
        self.assertEqual(str(self.error), "nanhunt: the first NaN was born at step 2 on rank 2, in Torch.log.0.forward")

    def test_strict_stops_at_the_anomaly_step(self):
        guard = nanhunt.StepGuard(self.live.dump_path, out_dir=self.out, max_lag=0, first_step=1, strict=True, **FAST)
        self.assertEqual(self.train(guard), 2)
        self.assertEqual(self.error.verdict["origin"]["step"], 2)

    def test_callback_instead_of_raising(self):
        calls = []
        guard = nanhunt.StepGuard(self.live.dump_path, on_anomaly=calls.append, raise_on_anomaly=False,
                                  out_dir=self.out, max_lag=1, first_step=1, **FAST)
        self.assertIsNone(self.train(guard))
        self.assertEqual(len(calls), 1)
        self.assertIs(calls[0], guard.anomaly)
        self.assertEqual(calls[0]["origin"]["op"], "Torch.log.0.forward")

    def test_never_waits_by_default(self):
        # the last step takes 2 s to count as written: a guard that waited would take that long
        guard = nanhunt.StepGuard(self.live.dump_path, out_dir=self.out, settle=2, poll=0.1)
        self.addCleanup(guard.close)
        for step in self.live.steps:
            self.live.write(step)
            started = time.monotonic()
            guard.step()
            self.assertLess(time.monotonic() - started, 1.0)
        with self.assertRaises(nanhunt.AnomalyError):
            support.step_until(guard, 30, pause=0.1)
        guard.step()  # raised once: the loop may go on

    def test_steps_not_dumped_are_not_waited_for(self):
        # msprobe "step": [0, 2, 4, 6]; step 4 shows NaN weights, which only step 6 can confirm:
        # a guard that waited for step 4 after step 5 (never dumped) would wait lag_timeout
        sparse = LiveDump(support.synth("sparse-steps-undumped-origin", os.path.join(self.tmp, "sparse")),
                          os.path.join(self.tmp, "sparse-dump"))
        self.assertEqual(sparse.steps, [0, 2, 4, 6])
        guard = nanhunt.StepGuard(sparse.dump_path, out_dir=self.out, max_lag=1, lag_timeout=30, **FAST)
        self.addCleanup(guard.close)
        started = time.monotonic()
        for step in range(7):
            if step in sparse.steps:
                sparse.write(step)
            try:
                guard.step()
            except nanhunt.AnomalyError:
                break
        self.assertLess(time.monotonic() - started, 20)
        deadline = time.monotonic() + 20
        while guard.anomaly is None and time.monotonic() < deadline:
            try:
                guard.step()
            except nanhunt.AnomalyError:
                pass
            time.sleep(0.1)
        self.assertEqual(guard.anomaly["origin"]["step"], 4)

    def test_close_stops_the_watch(self):
        guard = nanhunt.StepGuard(self.live.dump_path, out_dir=self.out, **FAST)
        guard.step()
        guard.close()
        self.assertIsNotNone(guard._process.proc.poll())
        with self.assertRaisesRegex(nanhunt.NanhuntError, "after close"):
            guard.step()

    def test_failed_watch_raises_from_step(self):
        guard = nanhunt.StepGuard(os.path.join(self.tmp, "no-such-dump"), out_dir=self.out, **FAST)
        self.addCleanup(guard.close)
        with self.assertRaises(nanhunt.NanhuntError) as cm:
            support.step_until(guard, 10)
        self.assertIn("no such file or directory", cm.exception.message)

    def test_negative_max_lag_is_refused(self):
        with self.assertRaisesRegex(ValueError, "max_lag"):
            nanhunt.StepGuard(self.live.dump_path, max_lag=-1)


if __name__ == "__main__":
    unittest.main()
