#!/usr/bin/env python3
"""Scan msprobe dumps of the realruns scenarios and write <scenario>.truth.json.

    python3 scan.py ROOT SCENARIO --out DIR [--markdown]

ROOT/SCENARIO/<level>/step<N>/rank<M>/dump.json are read. For every level, step
and rank the first dump.json entry (file order) whose Max or Min of any tensor
is NaN, +Inf or -Inf is recorded (Mean/Norm are not looked at). The ground truth
below is the physical fault of train.py; every claim in it is checked against
the dumps (the script exits with an error if one does not hold).
"""
import argparse
import json
import math
import os
import re
import sys

WORLD = 4

# Fields of an entry that hold what went in / what came out.
IN_FIELDS = ("input_args", "input_kwargs", "input", "parameters")

TRUTH = {
    "custom-bwd-kernel": {
        "description": (
            "4-rank data parallel; the attention is a torch.autograd.Function whose forward calls "
            "kernels.fusion_attention and whose backward calls kernels.fusion_attention_grad, both "
            "registered with register_custom_api(api_prefix='MyKern'). At step 3 rank 1's batch holds an "
            "empty record (every token is padding). The forward kernel clamps the softmax denominator and "
            "stays finite; the backward kernel recomputes the probabilities without the clamp, 0/0 = NaN, "
            "so dq, dk and dv come out NaN from finite inputs. The kernel runs inside loss.backward() but "
            "is dumped as MyKern.fusion_attention_grad.0.forward. The per-parameter gradient all_reduce "
            "(last layer first) carries the NaN to every rank from Distributed.all_reduce.4 (attn.qkv.bias) "
            "on; SGD writes NaN into the parameters; step 4 is NaN everywhere."),
        "levels": ["L1", "mix"],
        "truth": {
            "anomaly": True, "step": 3, "ranks": [1],
            "op": "MyKern.fusion_attention_grad.0.forward",
            "stage": "backward", "kind": "nan", "tie": False, "captured": True,
            "first_nan": None,
            "carrier": {"step": 3, "op": "Distributed.all_reduce.4.forward",
                        "from_ranks": [1], "to_ranks": [0, 2, 3]},
            "recovered": [],
        },
    },
    "pp-p2p-microbatch": {
        "description": (
            "2 pipeline stages x 2 data-parallel replicas: ranks 0,1 run stage 0 and send activations to "
            "ranks 2,3 (0->2, 1->3) with blocking dist.send(t, dst=N) / dist.recv(buf, src=N); gradients go "
            "back the same way; 2 micro-batches per step (GPipe order), then a gradient all_reduce inside "
            "each stage's dist.new_group. At step 3 the second micro-batch of replica 0 holds a negative "
            "amount, so Torch.log.1.forward on rank 0 gives NaN; Distributed.send.1.forward carries it to "
            "rank 2 (Distributed.recv.1.forward), whose loss and gradients become NaN; the NaN gradient goes "
            "back to rank 0 (Distributed.recv.1 there) and the group all_reduces spread it to rank 3 "
            "(group [2,3]) and rank 1 (group [0,1]). Step 4 is NaN everywhere."),
        "levels": ["L1"],
        "truth": {
            "anomaly": True, "step": 3, "ranks": [0],
            "op": "Torch.log.1.forward",
            "stage": "forward", "kind": "nan", "tie": False, "captured": True,
            "first_nan": None,
            "carrier": {"step": 3, "op": "Distributed.send.1.forward",
                        "from_ranks": [0], "to_ranks": [2]},
            "recovered": [],
        },
        "carrier_to_op": "Distributed.recv.1.forward",
    },
    "zero1-reduce-broadcast": {
        "description": (
            "4-rank data parallel with a ZeRO-1 style update: parameter i is owned by rank i % 4; after "
            "backward every gradient is dist.reduce(p.grad, dst=owner), the owner runs momentum SGD and "
            "dist.broadcast(p.data, src=owner) sends the new values. At step 3 rank 2's batch has a "
            "duplicated record, so one row of the motion difference is exactly 0: sqrt(0) is finite in the "
            "forward, but Torch.sqrt.0.backward gives +Inf (first NaN at Tensor.__mul__.1.backward, Inf*0) "
            "and motion_scale's gradient is NaN on rank 2 only. Distributed.reduce.0.forward (dst=0) "
            "carries it; with gloo every rank's reduce buffer comes back NaN (non-root ranks hold partial "
            "sums). Rank 0 updates motion_scale to NaN and Distributed.broadcast.0.forward gives it to all "
            "ranks; step 4 is NaN everywhere."),
        "levels": ["L1"],
        "truth": {
            "anomaly": True, "step": 3, "ranks": [2],
            "op": "Torch.sqrt.0.backward",
            "stage": "backward", "kind": "inf", "tie": False, "captured": True,
            "first_nan": {"step": 3, "rank": 2, "op": "Tensor.__mul__.1.backward"},
            "carrier": {"step": 3, "op": "Distributed.reduce.0.forward",
                        "from_ranks": [2], "to_ranks": [0, 1, 3]},
            "recovered": [],
        },
    },
    "reducer-zero-count": {
        "description": (
            "4-rank data parallel with one expert per data domain (3 domains) and a hand-written reducer: "
            "per bucket (shared layers, expert 0, 1, 2) the summed gradient and the bucket's token count "
            "are all_reduced and the gradient is divided by the count. The domain schedule pauses domain 1 "
            "at step 3, so no rank routes a token to expert 1: its gradient is exactly 0 and its "
            "all_reduced count is 0 on every rank, and Tensor.__truediv__.2.forward computes 0/0 = NaN on "
            "all four ranks independently from finite inputs (tie). No collective carries it; SGD makes "
            "expert 1's parameters NaN, and at step 4 the routing mix (0 * NaN) makes the whole forward NaN "
            "from the first expert layer on."),
        "levels": ["L1", "mix"],
        "truth": {
            "anomaly": True, "step": 3, "ranks": [0, 1, 2, 3],
            "op": "Tensor.__truediv__.2.forward",
            "stage": "backward", "kind": "nan", "tie": True, "captured": True,
            "first_nan": None,
            "carrier": None,
            "recovered": [],
        },
    },
    "forward-only": {
        "description": (
            "4-rank data parallel, msprobe data_mode [\"forward\"] (no backward entries). The model's causal "
            "attention uses masked_fill(-inf), so every step holds legitimate -Infinity "
            "(Tensor.masked_fill.0.forward output Min, Torch.softmax.0.forward input Min). At step 3 rank 3's "
            "batch holds a negative amount: Torch.log.0.forward gives NaN in the forward, the loss and all "
            "gradients of rank 3 are NaN (not dumped), and the first gradient all_reduce "
            "(Distributed.all_reduce.0.forward, inp.weight) brings NaN to ranks 0, 1, 2; SGD makes every "
            "parameter NaN; step 4 is NaN everywhere."),
        "levels": ["L1"],
        "mask_neg_inf": True,
        "truth": {
            "anomaly": True, "step": 3, "ranks": [3],
            "op": "Torch.log.0.forward",
            "stage": "forward", "kind": "nan", "tie": False, "captured": True,
            "first_nan": None,
            "carrier": {"step": 3, "op": "Distributed.all_reduce.0.forward",
                        "from_ranks": [3], "to_ranks": [0, 1, 2]},
            "recovered": [],
        },
    },
    "sparse-steps-loss-scale": {
        "description": (
            "4-rank data parallel trained 9 steps, dumped at steps 0,2,4,6,8 (risk_level ALL so the float16 "
            "casts are dumped). Dynamic loss scaling: (loss*scale).backward(), gradients cast with .half() "
            "and all_reduced in float16; a non-finite reduced gradient skips the step and halves the scale. "
            "At step 2 an outlier record on rank 1 makes its scaled gradients exceed 65504: "
            "Tensor.half.0.forward gives +Inf, the fp16 all_reduces spread it, the step is skipped, and the "
            "next dumped step (4) is clean again. At step 6 rank 2's batch holds a negative amount: "
            "Torch.log.0.forward gives NaN in the forward, the cross-rank feature-mean all_reduce "
            "(Distributed.all_reduce.0.forward, inside the forward) puts NaN into the synchronised "
            "running_mean buffer of every rank, and from then on every forward is NaN; the scaler skips "
            "every step (6, 7, 8) and parameters stay finite, but the buffer stays NaN."),
        "levels": ["L1"],
        "truth": {
            "anomaly": True, "step": 6, "ranks": [2],
            "op": "Torch.log.0.forward",
            "stage": "forward", "kind": "nan", "tie": False, "captured": True,
            "first_nan": None,
            "carrier": {"step": 6, "op": "Distributed.all_reduce.0.forward",
                        "from_ranks": [2], "to_ranks": [0, 1, 3]},
            "recovered": [{"step": 2, "ranks": [1], "op": "Tensor.half.0.forward"}],
        },
    },
}


# ---------------------------------------------------------------------------
def tensors(obj):
    if isinstance(obj, dict):
        if "dtype" in obj and "Max" in obj:
            yield obj
        else:
            for v in obj.values():
                yield from tensors(v)
    elif isinstance(obj, list):
        for v in obj:
            yield from tensors(v)


def bad_values(obj):
    """Set of 'nan', '+inf', '-inf' found in Max/Min of the tensors of obj."""
    out = set()
    for t in tensors(obj):
        for key in ("Max", "Min"):
            v = t.get(key)
            if isinstance(v, float):
                if math.isnan(v):
                    out.add("nan")
                elif v == math.inf:
                    out.add("+inf")
                elif v == -math.inf:
                    out.add("-inf")
    return out


def split_entry(entry):
    ins, outs = {}, {}
    for k, v in entry.items():
        (ins if k in IN_FIELDS else outs)[k] = v
    return ins, outs


class RankDump:
    def __init__(self, path):
        with open(os.path.join(path, "dump.json")) as f:
            self.data = json.load(f)["data"]
        self.size = os.path.getsize(os.path.join(path, "dump.json"))
        self.names = list(self.data)
        self.bad = {}
        self.bad_in = {}
        self.bad_out = {}
        for name, entry in self.data.items():
            ins, outs = split_entry(entry)
            self.bad_in[name] = bad_values(ins)
            self.bad_out[name] = bad_values(outs)
            self.bad[name] = self.bad_in[name] | self.bad_out[name]

    def first(self, pred):
        for i, n in enumerate(self.names):
            if pred(n):
                return i, n
        return None, None

    def first_nonfinite(self):
        return self.first(lambda n: self.bad[n])

    def first_nan_or_posinf(self):
        return self.first(lambda n: self.bad[n] - {"-inf"})

    def first_nan_output(self):
        return self.first(lambda n: "nan" in self.bad_out[n])

    def count(self):
        return sum(1 for n in self.names if self.bad[n])


def load(root, scenario):
    out = {}
    base = os.path.join(root, scenario)
    for level in sorted(os.listdir(base)):
        if level == "train-log":
            continue
        steps = {}
        for sd in os.listdir(os.path.join(base, level)):
            m = re.fullmatch(r"step(\d+)", sd)
            if not m:
                continue
            ranks = {}
            for rd in os.listdir(os.path.join(base, level, sd)):
                rm = re.fullmatch(r"rank(\d+)", rd)
                if rm:
                    ranks[int(rm.group(1))] = RankDump(os.path.join(base, level, sd, rd))
            steps[int(m.group(1))] = ranks
        out[level] = steps
    return out


class Checker:
    def __init__(self):
        self.errors = []

    def check(self, cond, msg):
        if not cond:
            self.errors.append(msg)


def verify(scenario, spec, dumps):
    c = Checker()
    t = spec["truth"]
    mask = spec.get("mask_neg_inf", False)
    overrides = spec.get("level_overrides", {})

    def first(rd):
        return (rd.first_nan_or_posinf() if mask else rd.first_nonfinite())[1]

    c.check(sorted(dumps) == sorted(spec["levels"]), f"levels {sorted(dumps)} != {spec['levels']}")
    for level, steps in dumps.items():
        op = overrides.get(level, {}).get("op", t["op"])
        for s, ranks in steps.items():
            c.check(sorted(ranks) == list(range(WORLD)), f"{level} step{s}: ranks {sorted(ranks)}")
        st = steps[t["step"]]
        # the origin
        for r in t["ranks"]:
            rd = st[r]
            c.check(op in rd.data, f"{level} step{t['step']} rank{r}: no {op}")
            if op not in rd.data:
                continue
            c.check(first(rd) == op, f"{level} step{t['step']} rank{r}: first is {first(rd)}, not {op}")
            c.check(not rd.bad_in[op], f"{level} {op} rank{r}: inputs not finite {rd.bad_in[op]}")
            kinds = rd.bad_out[op]
            if t["kind"] == "nan":
                c.check("nan" in kinds, f"{level} {op} rank{r}: output {kinds}, expected nan")
            else:
                c.check(kinds and "nan" not in kinds, f"{level} {op} rank{r}: output {kinds}, expected inf")
        if t["tie"]:
            c.check(len(t["ranks"]) > 1, "tie needs several ranks")
        # the clean ranks at the origin step do not make it themselves
        others = [r for r in range(WORLD) if r not in t["ranks"]]
        for r in others:
            rd = st[r]
            if op in rd.data:
                c.check(not rd.bad_out[op] or rd.bad_in[op],
                        f"{level} rank{r}: {op} also born there")
        # first NaN
        if t["first_nan"]:
            fn = t["first_nan"]
            rd = steps[fn["step"]][fn["rank"]]
            c.check(rd.first_nan_output()[1] == fn["op"],
                    f"{level}: first NaN output is {rd.first_nan_output()[1]}, not {fn['op']}")
        # the carrier
        car = t["carrier"]
        if car:
            cs = steps[car["step"]]
            for r in car["from_ranks"]:
                c.check(cs[r].bad_in.get(car["op"]), f"{level} carrier {car['op']} rank{r}: input finite")
            to_op = spec.get("carrier_to_op", car["op"])
            for r in car["to_ranks"]:
                rd = cs[r]
                c.check(to_op in rd.data and not rd.bad_in[to_op] and rd.bad_out[to_op],
                        f"{level} carrier {to_op} rank{r}: not finite-in / non-finite-out")
                c.check(first(rd) == to_op, f"{level} rank{r}: first is {first(rd)}, not {to_op}")
            rest = [r for r in range(WORLD) if r not in car["from_ranks"] + car["to_ranks"]]
            for r in rest:
                i, n = (cs[r].first_nan_or_posinf() if mask else cs[r].first_nonfinite())
                j = cs[r].names.index(to_op) if to_op in cs[r].names else None
                c.check(i is None or j is None or i > j,
                        f"{level} rank{r}: non-finite ({n}) before the carrier")
        else:
            for r in others:
                c.check(first(st[r]) is None, f"{level} rank{r}: non-finite without a carrier")
        # steps before the origin step are clean apart from recovered anomalies
        rec = {x["step"]: x for x in t["recovered"]}
        dumped = sorted(steps)
        for s in dumped:
            if s >= t["step"]:
                continue
            for r, rd in steps[s].items():
                f = first(rd)
                if s in rec:
                    if r in rec[s]["ranks"]:
                        c.check(f == rec[s]["op"], f"{level} step{s} rank{r}: first {f}, not {rec[s]['op']}")
                        op_r = rec[s]["op"]
                        c.check(op_r in rd.data and not rd.bad_in[op_r] and rd.bad_out[op_r],
                                f"{level} step{s} rank{r}: {op_r} not finite-in / non-finite-out")
                else:
                    c.check(f is None, f"{level} step{s} rank{r}: unexpected non-finite {f}")
        for s in rec:
            nxt = [d for d in dumped if d > s][0]
            for r, rd in steps[nxt].items():
                c.check(first(rd) is None, f"{level} step{nxt} rank{r}: not recovered ({first(rd)})")
            c.check(any(first(rd) for rd in steps[s].values()), f"{level} step{s}: recovered but clean")
        # everything after the origin step stays non-finite (the anomaly persists)
        for s in dumped:
            if s > t["step"]:
                for r, rd in steps[s].items():
                    c.check(first(rd) is not None, f"{level} step{s} rank{r}: clean after the origin")
    return c.errors


def first_table(dumps):
    out = {}
    for level, steps in dumps.items():
        out[level] = {}
        for s in sorted(steps):
            out[level][f"step{s}"] = {f"rank{r}": steps[s][r].first_nonfinite()[1]
                                      for r in sorted(steps[s])}
    return out


def markdown(scenario, spec, dumps):
    mask = spec.get("mask_neg_inf", False)
    lines = []
    for level, steps in dumps.items():
        lines.append(f"{level}: first entry with a non-finite Max/Min (`#index`, non-finite entries / entries)"
                     + ("; second line: first entry with NaN or +Inf (mask -inf ignored)" if mask else ""))
        lines.append("")
        lines.append("| step | " + " | ".join(f"rank {r}" for r in range(WORLD)) + " |")
        lines.append("| --- |" + " --- |" * WORLD)
        for s in sorted(steps):
            cells = []
            for r in range(WORLD):
                rd = steps[s][r]
                i, n = rd.first_nonfinite()
                cell = "—" if n is None else f"`{n}` #{i}"
                cell += f" ({rd.count()}/{len(rd.names)})"
                if mask:
                    j, m = rd.first_nan_or_posinf()
                    cell += "<br>" + ("—" if m is None else f"`{m}` #{j}")
                cells.append(cell)
            lines.append(f"| {s} | " + " | ".join(cells) + " |")
        sizes = [rd.size for st in steps.values() for rd in st.values()]
        lines.append("")
        lines.append(f"dump.json sizes: {min(sizes)}–{max(sizes)} bytes")
        lines.append("")
    return "\n".join(lines)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("root")
    ap.add_argument("scenario", choices=sorted(TRUTH))
    ap.add_argument("--out", required=True, help="folder for <scenario>.truth.json")
    ap.add_argument("--markdown", action="store_true")
    args = ap.parse_args()
    spec = TRUTH[args.scenario]
    dumps = load(args.root, args.scenario)
    errors = verify(args.scenario, spec, dumps)
    if args.markdown:
        print(markdown(args.scenario, spec, dumps))
    if errors:
        for e in errors:
            print(f"{args.scenario}: CHECK FAILED: {e}", file=sys.stderr)
        sys.exit(1)
    steps = sorted({s for st in dumps.values() for s in st})
    doc = {
        "scenario": args.scenario,
        "description": spec["description"],
        "levels": spec["levels"],
        "steps_dumped": steps,
        "world_size": WORLD,
        "truth": spec["truth"],
    }
    if spec.get("level_overrides"):
        doc["level_overrides"] = spec["level_overrides"]
    doc["first_nonfinite"] = first_table(dumps)
    with open(os.path.join(args.out, f"{args.scenario}.truth.json"), "w") as f:
        json.dump(doc, f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main()
