"""nanhunt.watch on finished generated runs: the events in order, the
verdict file of the alarm, and what a failed watch raises."""

import json
import os
import tempfile
import unittest

import support
import nanhunt
from nanhunt import _watch

FAST = {"settle": 0.2, "poll": 0.1}


def setUpModule():
    support.binary()


class Watch(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.addCleanup(self.tmp.cleanup)

    def path(self, *parts):
        return os.path.join(self.tmp.name, *parts)

    def test_lasting_nan_events_and_verdict(self):
        dump = support.synth("log-negative", self.path("dump"))
        events = list(nanhunt.watch(dump, out_dir=self.path("out"), exit_on_anomaly=True, **FAST))
        kinds = [(e["event"], e.get("step")) for e in events if e["event"] != "waiting"]
        self.assertEqual(kinds, [("step", 1), ("suspect", 2), ("anomaly", 2), ("stopped", None)])
        alarm = events[-2]
        self.assertEqual((alarm["ranks"], alarm["op"], alarm["kind"], alarm["stage"], alarm["source"]),
                         ([2], "Torch.log.0.forward", "nan", "forward", "dump"))
        self.assertEqual(events[-1]["reason"], "anomaly")
        with open(alarm["verdict"], encoding="utf-8") as f:
            verdict = json.load(f)
        self.assertEqual(verdict["origin"], nanhunt.trace(dump, timeline=True)["origin"])
        self.assertTrue(os.path.isfile(alarm["html"]))

    def test_overflow_that_did_not_last(self):
        dump = support.synth("loss-scale-recovered", self.path("dump"))
        seen = []
        anomaly = nanhunt.watch(dump, out_dir=self.path("out"), idle_exit=1, on_event=seen.append, **FAST)
        self.assertIsNone(anomaly)
        kinds = [(e["event"], e.get("step")) for e in seen if e["event"] not in ("waiting", "step")]
        self.assertEqual(kinds, [("suspect", 2), ("recovered", 2), ("stopped", None)])
        self.assertEqual(seen[-1]["reason"], "idle")

    def test_callback_returns_the_anomaly(self):
        dump = support.synth("log-negative", self.path("dump"))
        seen = []
        anomaly = nanhunt.watch(dump, out_dir=self.path("out"), exit_on_anomaly=True, on_event=seen.append, **FAST)
        self.assertEqual(anomaly["event"], "anomaly")
        self.assertIs(anomaly, [e for e in seen if e["event"] == "anomaly"][0])

    def test_on_anomaly_command_gets_the_alarm(self):
        dump = support.synth("log-negative", self.path("dump"))
        said = self.path("hook.txt")
        list(nanhunt.watch(dump, out_dir=self.path("out"), exit_on_anomaly=True,
                           on_anomaly=f'echo "$NANHUNT_STEP $NANHUNT_RANKS $NANHUNT_OP" > {said}', **FAST))
        with open(said, encoding="utf-8") as f:
            self.assertEqual(f.read().strip(), "2 2 Torch.log.0.forward")

    def test_closing_the_generator_stops_the_watch(self):
        dump = support.synth("log-negative", self.path("dump"))
        started = []

        class Recorded(_watch.Process):
            def __init__(self, args):
                super().__init__(args)
                started.append(self)

        real, _watch.Process = _watch.Process, Recorded
        self.addCleanup(setattr, _watch, "Process", real)
        events = nanhunt.watch(dump, out_dir=self.path("out"), **FAST)  # no idle exit: it would run on
        self.assertEqual(next(events)["event"], "step")
        events.close()
        self.assertEqual(len(started), 1)
        self.assertIsNotNone(started[0].proc.poll(), "the watch still runs after the generator closed")

    def test_missing_dump_path_raises(self):
        missing = self.path("no-such-dump")
        with self.assertRaises(nanhunt.NanhuntError) as cm:
            list(nanhunt.watch(missing, out_dir=self.path("out")))
        self.assertEqual(cm.exception.status, 2)
        self.assertIn("no such file or directory", cm.exception.message)

    def test_bad_usage_raises_the_commands_message(self):
        dump = support.synth("log-negative", self.path("dump"))
        with self.assertRaisesRegex(nanhunt.NanhuntError, "--steps"):
            list(nanhunt.watch(dump, out_dir=self.path("out"), steps="1-2"))


if __name__ == "__main__":
    unittest.main()
