"""Keyword options become the command's flags, and wrong ones fail before
anything runs."""

import datetime
import unittest

import support  # noqa: F401  (puts the package under test on sys.path)
from nanhunt import _options, _watch


def trace_flags(**options):
    return _options.flags("trace", _options.TRACE, options)


class TraceFlags(unittest.TestCase):
    def test_names_become_flags(self):
        self.assertEqual(trace_flags(log_format="megatron", tp_size=2, monitor="mon"),
                         ["--log-format", "megatron", "--tp-size", "2", "--monitor", "mon"])

    def test_switches(self):
        self.assertEqual(trace_flags(strict=True), ["--strict"])
        self.assertEqual(trace_flags(strict=False, rules=None), [])
        with self.assertRaisesRegex(TypeError, "strict is a switch"):
            trace_flags(strict="yes")

    def test_repeated_flags(self):
        self.assertEqual(trace_flags(log=["a.log", "b.log"]), ["--log", "a.log", "--log", "b.log"])
        self.assertEqual(trace_flags(log="logs/rank*.log"), ["--log", "logs/rank*.log"])

    def test_steps_and_ranks(self):
        self.assertEqual(trace_flags(steps=range(4, 9), ranks=[0, 3, 7]), ["--steps", "4-8", "--ranks", "0,3,7"])
        self.assertEqual(trace_flags(steps=5, ranks="0,3-7"), ["--steps", "5", "--ranks", "0,3-7"])
        for bad in ([], [1.5], True):
            with self.assertRaises(TypeError, msg=repr(bad)):
                trace_flags(ranks=bad)

    def test_jobs_is_an_int(self):
        self.assertEqual(trace_flags(jobs=3), ["--jobs", "3"])
        with self.assertRaisesRegex(TypeError, "jobs takes an int"):
            trace_flags(jobs="3")

    def test_other_options_go_as_they_are(self):
        # flags no table knows: a newer command's, or a mistyped one the command refuses
        self.assertEqual(trace_flags(mode="same-step", budget=3, fast=True, extra=["a", "b"]),
                         ["--mode", "same-step", "--budget", "3", "--fast", "--extra", "a", "--extra", "b"])


class PlanFlags(unittest.TestCase):
    def test_dump_path_is_the_old_name(self):
        flags = _options.flags("plan", _options.PLAN, {"config_dump_path": "/data/next"}, _options.PLAN_RENAMED)
        self.assertEqual(flags, ["--config-dump-path", "/data/next"])
        self.assertEqual(_options.flags("plan", _options.PLAN, {"dump_path": "/data/next"}, _options.PLAN_RENAMED), flags)


class WatchFlags(unittest.TestCase):
    def test_argv(self):
        args = _watch.argv("dump", {"out_dir": "alarms", "exit_on_anomaly": True, "settle": 0.5,
                                    "poll": datetime.timedelta(milliseconds=100), "idle_exit": "10m",
                                    "until_step": 7, "rank_timeout": 8})
        self.assertEqual(args, ["watch", "--format", "jsonl", "--output", "alarms", "--exit-on-anomaly",
                                "--settle", "500.0ms", "--poll", "100.0ms", "--idle-exit", "10m", "--until-step", "7",
                                "--rank-timeout", "8s", "--", "dump"])

    def test_out_dir_is_output(self):
        self.assertEqual(_watch.argv("dump", {"output": "alarms"}), ["watch", "--format", "jsonl", "--output", "alarms", "--", "dump"])
        with self.assertRaisesRegex(TypeError, "out_dir and output are the same option"):
            _watch.argv("dump", {"out_dir": "a", "output": "b"})

    def test_kinds_from_the_listing(self):
        # the listing says what each flag takes: a watch's durations, its
        # switches, its rank lists
        kinds = _options.kinds("watch")
        self.assertEqual((kinds["settle"], kinds["exit_on_anomaly"], kinds["ranks"], kinds["log"], kinds["until_step"]),
                         (_options.DURATION, _options.SWITCH, _options.LIST, _options.REPEATED, _options.INT))
        self.assertNotIn("out", kinds)  # an old name is no flag of the listing
        with self.assertRaises(KeyError):
            _options.kinds("no-such-command")

    def test_whole_seconds(self):
        self.assertEqual(_options.duration(2), "2s")
        self.assertEqual(_options.duration(datetime.timedelta(minutes=1)), "60s")


if __name__ == "__main__":
    unittest.main()
