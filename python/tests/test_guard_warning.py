"""StepGuard's warnings before the NaN: on_warning is called with each
statistic heading for overflow that the watch reports, once, before the
alarm; a clean run gives none."""

import os
import tempfile
import unittest

import support
import nanhunt
from test_guard import FAST, LiveDump


def setUpModule():
    support.binary()


class GuardWarning(unittest.TestCase):
    def setUp(self):
        tmp = tempfile.TemporaryDirectory()
        self.addCleanup(tmp.cleanup)
        self.tmp = tmp.name
        self.out = os.path.join(self.tmp, "out")

    def live(self, scenario):
        return LiveDump(support.synth(scenario, os.path.join(self.tmp, "finished")), os.path.join(self.tmp, "dump"))

    def test_warned_before_the_overflow(self):
        # sharp-gradient-fp16: steps 9-14, the float16 all_reduce of the gradients overflows at step 14;
        # its output's max is due to warn by step 12
        live = self.live("sharp-gradient-fp16")
        calls, given_by = [], {}
        guard = nanhunt.StepGuard(live.dump_path, on_warning=calls.append, out_dir=self.out, max_lag=0,
                                  first_step=9, strict=True, **FAST)
        with guard:
            for step in live.steps:
                live.write(step)
                try:
                    guard.step()
                except nanhunt.AnomalyError as e:
                    self.assertEqual(step, 14)
                    self.assertEqual(e.verdict["origin"]["op"], "Distributed.all_reduce.28.forward")
                    break
                given_by[step] = len(calls)
            else:
                self.fail("no alarm")
        self.assertGreater(len(calls), 0)
        self.assertEqual(calls, guard.warnings)
        keys = [(w["op"], w["tensor"], w["stat"]) for w in calls]
        self.assertEqual(len(keys), len(set(keys)), "a warning was given twice")
        due = keys.index(("Distributed.all_reduce.28.forward", "output.0", "max"))
        self.assertLessEqual(calls[due]["step"], 12)
        # given by the guard.step() of the step after it was judged at (max_lag=0 waits for that step)
        self.assertGreater(given_by[calls[due]["step"] + 1], due)
        for w in calls:
            self.assertLess(w["step"], 14)
            self.assertEqual(w["source"], "dump")
            self.assertEqual(w["series"][-1]["step"], w["step"])
            self.assertIn("float16 holds at most 65504", w["text"])
            self.assertGreaterEqual(w["steps_left"], 0)
        events = [e for e in guard.events if e.get("event") == "warning"]
        self.assertEqual([e["ahead"] for e in events], calls)

    def test_clean_run_gives_none(self):
        # half-traps: a float16 value of about 30000 that does not climb, masks, a fill of 65504
        live = self.live("half-traps")
        calls = []
        guard = nanhunt.StepGuard(live.dump_path, on_warning=calls.append, out_dir=self.out, max_lag=0,
                                  first_step=live.steps[0], **FAST)
        with guard:
            for step in live.steps:
                live.write(step)
                guard.step()
            self.assertEqual(guard._checked, live.steps[-1])
        self.assertEqual(calls, [])
        self.assertEqual(guard.warnings, [])
        self.assertIsNone(guard.anomaly_event)

    def test_only_warnings_before_the_nan_are_given(self):
        # a followed log that cannot be read is a "warning" event too, without "ahead": not a warning before the NaN
        calls = []
        guard = nanhunt.StepGuard(os.path.join(self.tmp, "dump"), on_warning=calls.append)
        ahead = {"op": "Torch.exp.0.forward", "tensor": "input_args.0", "stat": "max", "step": 3}
        guard._note({"event": "warning", "source": "log", "message": "the log could not be read"})
        guard._note({"event": "warning", "step": 3, "source": "dump", "message": "…", "ahead": ahead})
        guard._tell_warnings()
        guard._tell_warnings()
        self.assertEqual(calls, [ahead])
        self.assertEqual(guard.warnings, [ahead])


if __name__ == "__main__":
    unittest.main()
