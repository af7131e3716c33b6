"""Ground truth and checks of the realruns scenarios that climb towards a
float16 limit before the first non-finite value (O-R of train.py).

scan_later.py merges TRUTH_AHEAD into TRUTH_LATER and calls verify_ahead; the
fields these scenarios add to <scenario>.truth.json (ahead, monitor_climb,
clean_traps) are described in README.md ("The truth files").
"""
import json
import math
import os

WORLD = 4
FP16_MAX = 65504.0
LN_FP16_MAX = math.log(FP16_MAX)          # 11.0903...: exp overflows float16 past it
MIN_RISE = 1.05                           # each step at least 5 % above the one before


def _series(values):
    return {str(s): v for s, v in sorted(values.items())}


TRUTH_AHEAD = {
    "warn-exp-lr": {
        "description": (
            "4-rank data parallel Poisson model of daily counts per channel (4 channels, 15000-45000 events "
            "each, not rescaled): log_rate = rate(tanh(enc(x))), rate = exp(log_rate) kept in float16 "
            "(Tensor.half of the exp's float32 result), a Poisson loss on the rates (F.poisson_nll_loss) and a "
            "multinomial loss on the channel shares, gradient all_reduce per parameter, Adam (foreach) at lr "
            "0.13 (far too high). The log-rate climbs 1.1-2.1 a step (Torch.exp.0.forward input Max 4.06, "
            "5.62, 7.71, 9.38 at steps 4-7 on rank 0) and overshoots ln(65504) = 11.09 at step 8 on ranks 0, "
            "1, 2 (11.88, 11.61, 11.25): Tensor.half.0.forward turns exp's finite float32 result (up to "
            "143648) into +Inf there, and the shares are Inf/Inf = NaN (Tensor.__truediv__.0.forward). Rank "
            "3's log-rate stays at 10.83; the "
            "first gradient all_reduce brings it the NaN; Adam writes NaN into every parameter and step 9 "
            "is NaN everywhere."),
        "levels": ["L1"],
        "truth": {
            "anomaly": True, "step": 8, "ranks": [0, 1, 2],
            "op": "Tensor.half.0.forward",
            "stage": "forward", "kind": "inf", "tie": True, "captured": True,
            "first_nan": {"step": 8, "rank": 0, "op": "Tensor.__truediv__.0.forward"},
            "carrier": {"step": 8, "op": "Distributed.all_reduce.0.forward",
                        "from_ranks": [0, 1, 2], "to_ranks": [3]},
            "recovered": [],
        },
        "extra": {
            "ahead": {"op": "Torch.exp.0.forward", "tensor": "input_args.0", "stat": "max",
                      "dtype": "torch.float16", "limit": LN_FP16_MAX, "ranks": [0, 1, 2],
                      "first_nonfinite_step": 8, "warn_by_step": 6,
                      "stored_by": "Tensor.half.0.forward",
                      "series": _series({0: 0.10603402554988861, 1: 0.5724449753761292, 2: 1.9878908395767212,
                                         3: 2.959211587905884, 4: 4.0593647956848145, 5: 5.617944717407227,
                                         6: 7.709023952484131, 7: 9.38278579711914})},
            "monitor_climb": {"file": "actv", "name": "rate.output", "rank": 0, "stat": "max",
                              "series": _series({0: 0.106034, 1: 0.572445, 2: 1.987891, 3: 2.959212,
                                                 4: 4.059365, 5: 5.617945, 6: 7.709024, 7: 9.382786})},
        },
    },
    "warn-fp16-activations": {
        "description": (
            "4-rank data parallel regression on raw amounts (5-20 per feature, not normalised) with targets "
            "of about 100000: fc (Linear 8 -> 16), relu, the squared activation stored in float16 "
            "((a * a).half(), Tensor.half.0.forward, risk_level ALL), out (Linear 16 -> 1) on it, MSE, "
            "gradient all_reduce per parameter, SGD at lr 2.3e-9, too high for these scales: the squared "
            "activations grow about 2-3.7x a step (Tensor.half.0.forward output Max 610, 1197, 2902, 10592 "
            "at steps 4-7 on rank 0) and the cast overflows 65504 at step 8 on every rank (tie, +Inf from "
            "finite float32 inputs); the backward of the square gives the first NaN (Inf * 0) and step 9 is "
            "non-finite everywhere."),
        "levels": ["L1"],
        "truth": {
            "anomaly": True, "step": 8, "ranks": [0, 1, 2, 3],
            "op": "Tensor.half.0.forward",
            "stage": "forward", "kind": "inf", "tie": True, "captured": True,
            "first_nan": {"step": 8, "rank": 0, "op": "Tensor.__mul__.0.backward"},
            "carrier": None,
            "recovered": [],
        },
        "extra": {
            "ahead": {"op": "Tensor.half.0.forward", "tensor": "output.0", "stat": "max",
                      "dtype": "torch.float16", "limit": FP16_MAX, "ranks": [0, 1, 2, 3],
                      "first_nonfinite_step": 8, "warn_by_step": 6,
                      "series": _series({0: 298.0, 1: 232.25, 2: 273.0, 3: 499.5, 4: 610.0, 5: 1197.0,
                                         6: 2902.0, 7: 10592.0})},
            "monitor_climb": {"file": "actv", "name": "out.input", "rank": 0, "stat": "max",
                              "series": _series({0: 298.0, 1: 232.25, 2: 273.0, 3: 499.5, 4: 610.0, 5: 1197.0,
                                                 6: 2902.0, 7: 10592.0})},
        },
    },
    "warn-fp16-grad-sum": {
        "description": (
            "4-rank data parallel multi-target linear regression (Linear 8 -> 4, un-normalised amounts), "
            "static loss scale 64; the gradients are flattened into one bucket, cast to float16 and "
            "all_reduced (summed; the division by the world size comes after the sum), then unscaled; SGD "
            "at lr 0.4, past the edge of stability of these features (about 0.3). The error oscillates with "
            "a growing amplitude and so does the gradient: Distributed.all_reduce.0.forward output Max "
            "7888, 10024, 23344, 30720 at steps 4-7 (the same on every rank), and at step 8 the sum of four "
            "finite float16 buckets (each below 30000) overflows to +Inf on every rank: one collective, so "
            "one birth shared by its four members (not a tie of independent births; no carrier). "
            "SGD writes Inf into the weights; the first NaN is step 9's Tensor.add_.0.forward."),
        "levels": ["L1"],
        "truth": {
            "anomaly": True, "step": 8, "ranks": [0, 1, 2, 3],
            "op": "Distributed.all_reduce.0.forward",
            "stage": "backward", "kind": "inf", "tie": False, "captured": True,
            "first_nan": {"step": 9, "rank": 0, "op": "Tensor.add_.0.forward"},
            "carrier": None,
            "recovered": [],
        },
        "extra": {
            "ahead": {"op": "Distributed.all_reduce.0.forward", "tensor": "output.0", "stat": "max",
                      "dtype": "torch.float16", "limit": FP16_MAX, "ranks": [0, 1, 2, 3],
                      "first_nonfinite_step": 8, "warn_by_step": 6,
                      "series": _series({0: 854.0, 1: 1129.0, 2: 2640.0, 3: 3440.0, 4: 7888.0, 5: 10024.0,
                                         6: 23344.0, 7: 30720.0})},
            "monitor_climb": {"file": "grad_unreduced", "name": "weight", "rank": 0, "stat": "max",
                              "series": _series({0: 234.316269, 1: 303.307556, 2: 655.805542, 3: 862.356689,
                                                 4: 2091.108887, 5: 2804.247803, 6: 6287.903809,
                                                 7: 7884.367188})},
            "log_loss_scale": 64.0,
        },
    },
    "warn-clean-warmup": {
        "description": (
            "A clean 4-rank data parallel run (10 steps, no NaN and no +Inf anywhere) with what must not "
            "raise a warning: a linear learning-rate warm-up over 4 steps (0.075 to 0.3), a causal attention "
            "mask filled with -inf (Tensor.masked_fill.0.forward), a padding bias of -1e4 in float16 "
            "(Tensor.__mul__.0.forward), the padding of a float16 activation filled with 65504 so that a min "
            "over tokens ignores it (Tensor.masked_fill.1.forward), a sensor reading near 30000 in float16 "
            "that does not grow (Tensor.__truediv__.0.forward input, 30000-30064 every step), int64 labels "
            "and argmax, bool masks and comparisons, and a loss spike that recovers: at step 5 the sampler "
            "gives one record of rank 2 an importance weight of 12 (local loss 5.96, the average 2.52 and "
            "2.49 at steps 5 and 6, back to 1.38 at step 7)."),
        "levels": ["L1"],
        "mask_neg_inf": True,
        "truth": {
            "anomaly": False, "step": None, "ranks": [], "op": "", "stage": "", "kind": "", "tie": False,
            "captured": False, "first_nan": None, "carrier": None, "recovered": [],
        },
        "extra": {
            "ahead": None,
            "clean_traps": [
                {"trap": "mask", "op": "Tensor.masked_fill.0.forward", "tensor": "output.0", "stat": "min",
                 "neg_inf": True, "dtype": "torch.float32"},
                {"trap": "bias", "op": "Tensor.__mul__.0.forward", "tensor": "output.0", "stat": "min",
                 "value": -10000.0, "dtype": "torch.float16"},
                {"trap": "fp16-max-fill", "op": "Tensor.masked_fill.1.forward", "tensor": "output.0",
                 "stat": "max", "value": FP16_MAX, "dtype": "torch.float16"},
                {"trap": "flat-large", "op": "Tensor.__truediv__.0.forward", "tensor": "input_args.0",
                 "stat": "max", "value": 30000.0, "dtype": "torch.float16"},
                {"trap": "spike", "op": "Tensor.mean.0.forward", "tensor": "output.0",
                 "stat": "max", "step": 5, "rank": 2, "dtype": "torch.float32"},
            ],
        },
    },
}


def stat_of(entry, tensor, stat):
    """The Max or Min of one tensor slot ("output.0", "input_args.1") of an entry."""
    field, index = tensor.rsplit(".", 1)
    t = entry[field][int(index)]
    return t.get("Max" if stat == "max" else "Min"), t.get("dtype")


def _finite(v):
    return isinstance(v, (int, float)) and math.isfinite(v)


def check_ahead(c, dumps, ahead, truth):
    steps = dumps["L1"]
    n, op, slot, stat = ahead["first_nonfinite_step"], ahead["op"], ahead["tensor"], ahead["stat"]
    exp_input = ahead["limit"] < 100
    c.check(n >= 5 and ahead["warn_by_step"] == n - 2 and n == truth["step"], f"ahead: N {n}")
    for s in sorted(steps):
        for r, rd in steps[s].items():
            f = rd.first_nonfinite()[1]
            c.check((f is None) == (s < n), f"ahead: step{s} rank{r} first non-finite {f}")
    for r in range(WORLD):
        vals = {s: stat_of(steps[s][r].data[op], slot, stat)[0] for s in sorted(steps) if s <= n}
        crossed = vals[n] > ahead["limit"] if exp_input else vals[n] == math.inf
        c.check(crossed == (r in ahead["ranks"]), f"ahead rank{r}: value {vals[n]} at step {n}")
        if r not in ahead["ranks"]:
            continue
        c.check(all(_finite(vals[s]) for s in vals if s < n), f"ahead rank{r}: not finite before step {n}")
        for s in range(n - 3, n):
            c.check(_finite(vals[s]) and _finite(vals[s - 1]) and vals[s] >= MIN_RISE * vals[s - 1],
                    f"ahead rank{r}: step{s} {vals[s]} not 5 % above {vals[s - 1]}")
        floor = 5.5 if exp_input else ahead["limit"] / 64
        c.check(vals[n - 2] >= floor, f"ahead rank{r}: {vals[n - 2]} at step {n - 2} below {floor}")
        if r == ahead["ranks"][0]:
            got = _series({s: v for s, v in vals.items() if s < n})
            c.check(got == ahead["series"], f"ahead series {got} != {ahead['series']}")
        entry = steps[n][r].data
        if exp_input:
            # the exp's result goes into the float16 cast, which overflows
            out = stat_of(entry[op], "output.0", "max")[0]
            cast = entry[ahead["stored_by"]]
            c.check(stat_of(cast, "input_args.0", "max")[0] == out and
                    stat_of(cast, "output.0", "max") == (math.inf, ahead["dtype"]),
                    f"ahead rank{r}: {ahead['stored_by']} does not store {op}'s result as +Inf float16")
        else:
            c.check(stat_of(entry[op], slot, stat)[1] == ahead["dtype"], f"ahead rank{r}: dtype")


def monitor_series(rows, rank, mc):
    """step -> the stat of one TrainerMon row (file kind, name) on one rank."""
    out = {}
    for row in rows.get(rank, {}).get(mc["file"], []):
        if row["name"] == mc["name"]:
            out[int(row["step"])] = float(row[mc["stat"]])
    return out


def check_monitor_climb(c, rows, ahead, mc):
    n = ahead["first_nonfinite_step"]
    series = monitor_series(rows, mc["rank"], mc)
    got = _series({s: v for s, v in series.items() if s < n})
    c.check(got == mc["series"], f"monitor climb series {got} != {mc['series']}")
    for s in range(n - 3, n):
        c.check(math.isfinite(series[s]) and series[s] >= MIN_RISE * series[s - 1],
                f"monitor {mc['file']} {mc['name']}: step{s} {series[s]} not 5 % above {series[s - 1]}")


def check_clean(c, dumps, root, scenario, traps):
    steps = dumps["L1"]
    for s in sorted(steps):
        for r, rd in steps[s].items():
            c.check(rd.first_nan_or_posinf()[1] is None, f"clean step{s} rank{r}: {rd.first_nan_or_posinf()[1]}")
    dtypes = {stat_of(e, f"{k}.{i}", "max")[1] for rd in steps[0].values() for e in rd.data.values()
              for k in ("input_args", "output") for i, t in enumerate(e.get(k, []))
              if isinstance(t, dict) and "dtype" in t}
    c.check({"torch.int64", "torch.bool"} <= dtypes, f"clean: dtypes {dtypes}")
    for trap in traps:
        present = all(trap["op"] in rd.data for st in steps.values() for rd in st.values())
        c.check(present, f"clean {trap['trap']}: {trap['op']} missing")
        if not present:
            continue
        vals = {(s, r): stat_of(rd.data[trap["op"]], trap["tensor"], trap["stat"])
                for s in steps for r, rd in steps[s].items()}
        c.check(all(d == trap["dtype"] for _, d in vals.values()), f"clean {trap['trap']}: dtype")
        v = {k: x for k, (x, _) in vals.items()}
        if trap["trap"] == "flat-large":
            c.check(all(trap["value"] <= x <= trap["value"] * 1.01 for x in v.values()), f"clean flat: {v}")
        elif trap["trap"] == "spike":
            key = (trap["step"], trap["rank"])
            others = sorted(x for k, x in v.items() if k != key)
            c.check(v[key] > 3 * others[len(others) // 2], f"clean spike {v[key]}, median {others[len(others) // 2]}")
        else:
            want = -math.inf if trap.get("neg_inf") else trap["value"]
            c.check(all(x == want for x in v.values()), f"clean {trap['trap']}: {set(v.values())}")


def check_log(c, root, scenario, extra, n):
    """The training log: grad_norm every step, finite before the first
    non-finite step and not after; the loss scale where there is one."""
    for r in range(WORLD):
        with open(os.path.join(root, scenario, "train-log", f"rank{r}.json")) as f:
            for st in json.load(f)["steps"]:
                g = st.get("grad_norm")
                c.check(g is not None and math.isfinite(g) == (n is None or st["step"] < n),
                        f"log rank{r} step{st['step']}: grad_norm {g}")
                if "log_loss_scale" in extra:
                    c.check(st.get("loss_scale") == extra["log_loss_scale"], f"log rank{r}: loss_scale")


def verify_ahead(c, scenario, spec, dumps, root, monitor_rows):
    extra = spec.get("extra", {})
    if "ahead" not in extra:
        return
    ahead = extra["ahead"]
    if ahead is None:
        c.check(not spec["truth"]["anomaly"], "ahead null in a run with an anomaly")
        check_clean(c, dumps, root, scenario, extra["clean_traps"])
        check_log(c, root, scenario, extra, None)
        return
    check_ahead(c, dumps, ahead, spec["truth"])
    check_monitor_climb(c, monitor_rows(root, scenario), ahead, extra["monitor_climb"])
    check_log(c, root, scenario, extra, ahead["first_nonfinite_step"])

