"""nanhunt.trace and nanhunt.plan on the real msprobe fixtures, and what
they raise when nanhunt cannot answer."""

import json
import os
import tempfile
import unittest

import support
import nanhunt

BWD_SQRT = ("msprobe-generated", "bwd-sqrt-zero-rank2-step5", "L1")


def setUpModule():
    support.binary()


class Trace(unittest.TestCase):
    def test_origin_of_the_backward_sqrt(self):
        v = nanhunt.trace(support.fixture(*BWD_SQRT))
        self.assertEqual(v["schema"], "nanhunt/verdict/v1")
        self.assertIs(v["anomaly"], True)
        o = v["origin"]
        self.assertEqual((o["step"], o["ranks"], o["op"], o["stage"], o["kind"]),
                         (5, [2], "Torch.sqrt.0.backward", "backward", "inf"))
        self.assertEqual(v["first_nan"]["op"], "Tensor.__mul__.1.backward")
        self.assertEqual((v["carrier"]["from_ranks"], v["carrier"]["to_ranks"]), ([2], [0, 1, 3]))

    def test_clean_steps(self):
        v = nanhunt.trace(support.fixture(*BWD_SQRT), steps=range(0, 5), jobs=1)
        self.assertIs(v["anomaly"], False)
        self.assertIs(v["complete"], True)
        self.assertIsNone(v["origin"])

    def test_unread_steps_are_no_clean_run(self):
        # steps 0-4 are clean; their dump.json files at step 4 are garbage
        with tempfile.TemporaryDirectory() as tmp:
            run = os.path.join(tmp, "dump")
            src = support.fixture(*BWD_SQRT)
            for step in range(5):
                for rank in range(4):
                    d = os.path.join(run, f"step{step}", f"rank{rank}")
                    os.makedirs(d)
                    with open(os.path.join(src, f"step{step}", f"rank{rank}", "dump.json"), "rb") as f:
                        data = f.read()
                    with open(os.path.join(d, "dump.json"), "wb") as f:
                        f.write(b"garbage" if step == 4 else data)
            v = nanhunt.trace(run)
        self.assertIs(v["anomaly"], False)
        self.assertIs(v["complete"], False)
        self.assertEqual(v["unread"], [{"step": 4, "ranks": [0, 1, 2, 3], "reason": "unreadable"}])
        self.assertEqual([s["status"] for s in v["steps"]], ["clean"] * 4 + ["unread"])

    def test_path_starting_with_a_dash_is_a_path(self):
        # a folder named like a flag is read as the dump, never as --help
        with tempfile.TemporaryDirectory() as tmp:
            os.symlink(support.fixture(*BWD_SQRT), os.path.join(tmp, "--help"))
            cwd = os.getcwd()
            os.chdir(tmp)
            try:
                v = nanhunt.trace("--help")
                with self.assertRaises(nanhunt.NanhuntError) as cm:
                    nanhunt.trace("-o")
            finally:
                os.chdir(cwd)
        self.assertEqual(v["origin"]["op"], "Torch.sqrt.0.backward")
        self.assertIn("-o", cm.exception.message)

    def test_options_reach_the_command(self):
        # one rank of the step: rank 2 alone holds the birth, rank 0 only received it
        v = nanhunt.trace(support.fixture(*BWD_SQRT), steps=5, ranks=[0])
        self.assertEqual(v["origin"]["ranks"], [0])
        self.assertEqual(v["origin"]["op"], "Distributed.all_reduce.1.forward")

    def test_html_report(self):
        with tempfile.TemporaryDirectory() as tmp:
            page = os.path.join(tmp, "report.html")
            nanhunt.trace(support.fixture(*BWD_SQRT), html=page)
            with open(page, encoding="utf-8") as f:
                self.assertIn("Torch.sqrt.0.backward", f.read())

    def test_missing_dump_raises_with_the_file(self):
        missing = os.path.join(tempfile.gettempdir(), "nanhunt-no-such-dump")
        with self.assertRaises(nanhunt.NanhuntError) as cm:
            nanhunt.trace(missing)
        e = cm.exception
        self.assertEqual(e.status, 2)
        self.assertEqual(e.file, missing)
        self.assertIn("no such file or directory", e.message)

    def test_damaged_rules_file_names_its_offset(self):
        with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
            f.write('{"rules": [ {"op": "Torch.sqrt",, }]}')
        try:
            with self.assertRaises(nanhunt.NanhuntError) as cm:
                nanhunt.trace(support.fixture(*BWD_SQRT), rules=f.name)
        finally:
            os.unlink(f.name)
        self.assertEqual(cm.exception.file, f.name)
        self.assertIsInstance(cm.exception.offset, int)

    def test_bad_usage_raises_nanhunts_message(self):
        with self.assertRaisesRegex(nanhunt.NanhuntError, "--jobs 0"):
            nanhunt.trace(support.fixture(*BWD_SQRT), jobs=0)

    def test_mistyped_option_is_refused_by_the_command(self):
        with self.assertRaises(nanhunt.NanhuntError) as cm:
            nanhunt.trace(support.fixture(*BWD_SQRT), rank=2)
        self.assertEqual(cm.exception.status, 2)
        self.assertIn("--rank", cm.exception.message)

    def test_verdict_written_to_a_file_too(self):
        with tempfile.TemporaryDirectory() as tmp:
            saved = os.path.join(tmp, "verdict.json")
            v = nanhunt.trace(support.fixture(*BWD_SQRT), output=saved)
            with open(saved, encoding="utf-8") as f:
                self.assertEqual(json.load(f), v)
        self.assertEqual(v["origin"]["op"], "Torch.sqrt.0.backward")


class Plan(unittest.TestCase):
    def test_plan_for_the_origin(self):
        p = nanhunt.plan(support.fixture(*BWD_SQRT), config_dump_path="./followup")
        self.assertIn("Torch.sqrt.0.backward", p["why"])
        self.assertEqual(p["config"]["task"], "tensor")
        self.assertEqual(p["config"]["dump_path"], "./followup")
        self.assertIn("Torch.sqrt", p["config"]["tensor"]["list"])

    def test_dump_path_is_the_old_name(self):
        with self.assertWarnsRegex(DeprecationWarning, "dump_path is now config_dump_path"):
            p = nanhunt.plan(support.fixture(*BWD_SQRT), dump_path="./followup")
        self.assertEqual(p["config"]["dump_path"], "./followup")

    def test_nothing_to_collect(self):
        self.assertIsNone(nanhunt.plan(support.fixture(*BWD_SQRT), steps="0-4"))

    def test_plan_from_a_saved_verdict(self):
        with tempfile.TemporaryDirectory() as tmp:
            saved = os.path.join(tmp, "verdict.json")
            with open(saved, "w", encoding="utf-8") as f:
                json.dump(nanhunt.trace(support.fixture(*BWD_SQRT)), f)
            config = os.path.join(tmp, "config.json")
            p = nanhunt.plan(verdict=saved, output=config)
            with open(config, encoding="utf-8") as f:
                self.assertEqual(json.load(f), p["config"])


if __name__ == "__main__":
    unittest.main()
