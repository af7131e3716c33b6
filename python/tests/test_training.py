"""Two processes train a tiny model with Debian's torch (gloo on
127.0.0.1), dump every step in msprobe's format with msprobe_writer, and
run nanhunt.StepGuard next to the loop. A NaN is born at step 3 on rank 1
(Torch.sqrt of a negative record in the forward); the gradient all_reduce
carries it to rank 0."""

import json
import os
import subprocess
import sys
import tempfile
import unittest
import zlib

import support
import nanhunt

SCRIPT = os.path.join(support.HERE, "two_rank_training.py")
FAULT_STEP, FAULT_RANK = 3, 1


def setUpModule():
    support.binary()


def train(tmp, *flags):
    """Run the training; what rank 0 saw, and the dump_path."""
    dump, result = os.path.join(tmp, "dump"), os.path.join(tmp, "result.json")
    cmd = [sys.executable, SCRIPT, "--dump", dump, "--out", os.path.join(tmp, "out"), "--result", result,
           "--fault-step", str(FAULT_STEP), "--fault-rank", str(FAULT_RANK), *flags]
    done = subprocess.run(cmd, env=support.child_env(), stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                          text=True, timeout=300)
    if done.returncode != 0:
        raise AssertionError(f"the training exited {done.returncode}:\n{done.stdout}")
    with open(result, encoding="utf-8") as f:
        return json.load(f), dump


class LastingNaN(unittest.TestCase):
    """Without a loss scaler the NaN reaches the weights: it lasts."""

    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        cls.result, cls.dump = train(cls.tmp.name, "--steps", "8")

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def test_loop_stops_at_the_step_after_the_birth(self):
        # the watch reads step 4 to tell a lasting NaN from a skipped overflow
        self.assertEqual(self.result["stopped_at"], FAULT_STEP + 1)
        self.assertEqual(sorted(os.listdir(self.dump)), [f"step{s}" for s in range(FAULT_STEP + 2)])

    def test_verdict_names_the_birth(self):
        v = self.result["verdict"]
        o = v["origin"]
        self.assertEqual((o["step"], o["ranks"], o["op"], o["kind"], o["stage"]),
                         (FAULT_STEP, [FAULT_RANK], "Torch.sqrt.0.forward", "nan", "forward"))
        self.assertEqual(o["code"]["file"], SCRIPT)
        self.assertIn("torch.sqrt", o["code"]["source"])
        c = v["carrier"]
        self.assertEqual((c["op"], c["from_ranks"], c["to_ranks"], c["group"]),
                         ("Distributed.all_reduce.0.forward", [FAULT_RANK], [0], [0, 1]))

    def test_alarm_event_and_files(self):
        e = self.result["event"]
        self.assertEqual((e["event"], e["step"], e["ranks"], e["op"]), ("anomaly", FAULT_STEP, [FAULT_RANK], "Torch.sqrt.0.forward"))
        self.assertTrue(os.path.isfile(e["html"]))
        with open(e["verdict"], encoding="utf-8") as f:
            self.assertEqual(json.load(f), self.result["verdict"])

    def test_offline_trace_agrees(self):
        self.assertEqual(nanhunt.trace(self.dump, timeline=True)["origin"], self.result["verdict"]["origin"])

    def test_dump_is_in_msprobe_format(self):
        folder = os.path.join(self.dump, f"step{FAULT_STEP}", f"rank{FAULT_RANK}")
        with open(os.path.join(folder, "dump.json"), encoding="utf-8") as f:
            text = f.read()
        self.assertIn('"Max": NaN', text)  # the bare token, as json.dump writes it
        d = json.loads(text)
        self.assertEqual({k: d[k] for k in ("task", "level", "framework", "dump_data_dir")},
                         {"task": "statistics", "level": "L1", "framework": "pytorch", "dump_data_dir": None})
        names = list(d["data"])
        self.assertEqual(names[:2], ["Torch.sqrt.0.forward", "Tensor.__mul__.0.forward"])
        self.assertLess(names.index("Functional.linear.0.backward"), names.index("Distributed.all_reduce.0.forward"))
        sqrt_out = d["data"]["Torch.sqrt.0.forward"]["output"][0]
        self.assertEqual(list(sqrt_out), ["type", "dtype", "shape", "Max", "Min", "Mean", "Norm", "requires_grad"])
        reduce = d["data"]["Distributed.all_reduce.0.forward"]
        group = reduce["input_kwargs"]["group"]
        self.assertEqual(group, {"type": "torch.ProcessGroup", "group_ranks": [0, 1],
                                 "group_id": format(zlib.crc32(b"[0, 1]"), "08x")})
        self.assertEqual(len(reduce["output"]), 1 + len(reduce["input_kwargs"]))  # args, then kwargs
        with open(os.path.join(folder, "stack.json"), encoding="utf-8") as f:
            stacks = json.load(f)
        names_with_stack = [n for names, frames in stacks.values() for n in names]
        self.assertIn("Torch.sqrt.0.forward", names_with_stack)
        self.assertTrue(all(frame.startswith("File ") for _, frames in stacks.values() for frame in frames))
        with open(os.path.join(folder, "construct.json"), encoding="utf-8") as f:
            self.assertEqual(json.load(f), {})


class SkippedOverflow(unittest.TestCase):
    """A loss scaler skips the update of step 3: step 4 is clean again."""

    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        cls.result, cls.dump = train(cls.tmp.name, "--steps", "7", "--skip-nonfinite")

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def test_loop_runs_to_the_end(self):
        self.assertIsNone(self.result["stopped_at"])
        self.assertEqual(self.result["steps_run"], 7)
        self.assertNotIn("anomaly", self.result["events"])

    def test_overflow_is_kept_as_recovered(self):
        self.assertEqual([e["step"] for e in self.result["recovered"]], [FAULT_STEP])


if __name__ == "__main__":
    unittest.main()
