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

from scan_later import TRUTH_LATER, extra_fields, verify_later

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
    "fp16-allreduce-two-groups": {
        "description": (
            "Tensor parallel 2 x data parallel 2, all groups made with dist.new_group: data-parallel groups "
            "[0,1] and [2,3] (the two shards), tensor-parallel groups [0,2] and [1,3] (the two data replicas). "
            "A per-token classifier with a column-parallel fc and a row-parallel head whose partial outputs "
            "are summed by an all_reduce in the tensor-parallel group inside the forward (an "
            "autograd.Function). Token-summed loss times a static loss scale of 8192; each gradient is cast "
            "to float16 and all_reduced in its data-parallel group (reversed parameters() order: fc.bias, "
            "fc.weight, head_bias, head_weight), then unscaled in float32; torch.optim.Adam. At step 3 the "
            "shared label schedule has no class 3, so on every rank the scaled head_bias gradient of class 3 "
            "is about 46000 (finite in float16) and each group's sum about 92800 > 65504: "
            "Distributed.all_reduce.3.forward (head_bias) makes +Inf from finite inputs in group [0,1] and, "
            "independently, in group [2,3] (tie, no carrier; in group [0,1] the head_weight all_reduce .4 "
            "overflows too). Adam turns the Inf into NaN (Tensor.addcdiv_, Inf/Inf); step 4 is NaN "
            "everywhere."),
        "levels": ["L1", "mix"],
        "truth": {
            "anomaly": True, "step": 3, "ranks": [0, 1, 2, 3],
            "op": "Distributed.all_reduce.3.forward",
            "stage": "backward", "kind": "inf", "tie": True, "captured": True,
            "first_nan": {"step": 3, "rank": 0, "op": "Tensor.addcdiv_.0.forward"},
            "carrier": None,
            "recovered": [],
        },
        # the two groups of the origin: every member's own input is finite
        "collective_groups": [[0, 1], [2, 3]],
    },
    "inf-absorbed-next-step": {
        "description": (
            "4-rank data parallel Poisson regression of counts: log_rate = wide(x) + out(softplus(deep(log x))), "
            "loss = mean(exp(log_rate) - y * log_rate), gradient all_reduce per parameter, SGD. At step 3 "
            "rank 1's batch holds an amount 1000 times too large: the wide part gives a log-rate of 160 and "
            "Torch.exp.0.forward gives +Inf from finite inputs. The loss and every gradient of rank 1 are +Inf "
            "or -Inf but nothing is NaN; Distributed.all_reduce.0.forward (wide.weight) brings +Inf to ranks "
            "0, 2, 3 and SGD writes -Inf/+Inf into every parameter, with no NaN anywhere in step 3. At step 4 "
            "the wide part is -Inf (Functional.linear.0.forward, all weights -Inf) and the deep layer, whose "
            "weights are +Inf and -Inf, computes Inf - Inf: the first NaN is Functional.linear.1.forward."),
        "levels": ["L1"],
        "truth": {
            "anomaly": True, "step": 3, "ranks": [1],
            "op": "Torch.exp.0.forward",
            "stage": "forward", "kind": "inf", "tie": False, "captured": True,
            "first_nan": {"step": 4, "rank": 1, "op": "Functional.linear.1.forward"},
            "carrier": {"step": 3, "op": "Distributed.all_reduce.0.forward",
                        "from_ranks": [1], "to_ranks": [0, 2, 3]},
            "recovered": [],
        },
        "no_nan_steps": [3],
    },
    "pp-weight-from-update": {
        "description": (
            "2 pipeline stages x 2 data-parallel replicas (ranks 0,1 stage 0, ranks 2,3 stage 1; 0->2, 1->3 "
            "with keyword dist.send/dist.recv, 2 micro-batches, GPipe order), gradient all_reduce in each "
            "stage's dist.new_group, then a layer-wise adaptive update (lr * trust * |w| / |g| * g) written "
            "with torch._foreach_* calls. Stage 1 has one adapter per data domain, mixed by the routing "
            "one-hot. At step 2 the shared domain schedule pauses domain 1, so adapter 1's gradient is "
            "exactly 0 on both stage-1 replicas; |w| / 0 = Inf and Inf * 0 = NaN are computed by "
            "torch._foreach_div / _foreach_mul / _foreach_add_, which msprobe does not dump at L1 (only "
            "Torch._foreach_norm is dumped, and it is finite): step 2's dump is clean but adapters.1 is NaN "
            "on ranks 2 and 3 after it. At step 3 both stage-1 ranks first show NaN in "
            "Functional.linear.2.forward (adapter 1 on micro-batch 0, NaN weight input); their backward "
            "gradients go to stage 0 by Distributed.send.0.forward (2 -> 0 and 3 -> 1). Step 4 is NaN "
            "everywhere."),
        "levels": ["L1"],
        "truth": {
            "anomaly": True, "step": 3, "ranks": [2, 3],
            "op": "Functional.linear.2.forward",
            "stage": "optimizer", "kind": "nan", "tie": True, "captured": False,
            "first_nan": None,
            "carrier": {"step": 3, "op": "Distributed.send.0.forward",
                        "from_ranks": [2], "to_ranks": [0]},
            "recovered": [],
        },
        "carrier_to_op": "Distributed.recv.0.forward",
        # the other hop of the origin step (op on the sender, op on the receiver)
        "spread": [{"op": "Distributed.send.0.forward", "to_op": "Distributed.recv.0.forward",
                    "from_ranks": [3], "to_ranks": [1]}],
        # the update of the step before wrote it: nothing after the gradient norms is dumped, one
        # gradient norm is exactly 0, and the training log names the NaN parameters
        "hidden_update": {"step": 2, "ranks": [2, 3], "last_op": "Torch._foreach_norm.1.forward",
                          "zero_items": [4, 5], "params": ["adapters.1.weight", "adapters.1.bias"]},
    },
}
TRUTH.update(TRUTH_LATER)


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
        if level in ("train-log", "monitor"):
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
    if not t["anomaly"]:                          # a clean run: nothing but masks' -inf anywhere
        for level, steps in dumps.items():
            for s, ranks in steps.items():
                for r, rd in ranks.items():
                    c.check(first(rd) is None, f"{level} step{s} rank{r}: non-finite {first(rd)} in a clean run")
        return c.errors
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
            if t["captured"]:
                c.check(not rd.bad_in[op], f"{level} {op} rank{r}: inputs not finite {rd.bad_in[op]}")
            else:
                c.check(rd.bad_in[op], f"{level} {op} rank{r}: inputs finite, but the origin is not captured")
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
            for hop in spec.get("spread", []):
                for r in hop["from_ranks"]:
                    c.check(cs[r].bad_in.get(hop["op"]), f"{level} hop {hop['op']} rank{r}: input finite")
                for r in hop["to_ranks"]:
                    rd = cs[r]
                    c.check(hop["to_op"] in rd.data and not rd.bad_in[hop["to_op"]] and rd.bad_out[hop["to_op"]],
                            f"{level} hop {hop['to_op']} rank{r}: not finite-in / non-finite-out")
                    c.check(first(rd) == hop["to_op"], f"{level} rank{r}: first is {first(rd)}, not {hop['to_op']}")
            reached = car["from_ranks"] + car["to_ranks"] + t["ranks"]
            reached += [r for hop in spec.get("spread", []) for r in hop["to_ranks"]]
            rest = [r for r in range(WORLD) if r not in reached]
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
        # a collective origin: in each group every member's input was finite
        for grp in spec.get("collective_groups", []):
            for r in grp:
                c.check(r in t["ranks"] and op in st[r].data and not st[r].bad_in[op],
                        f"{level} group {grp} rank{r}: {op} not a collective origin there")
                g = st[r].data.get(op, {}).get("input_kwargs", {}).get("group", {})
                c.check(g.get("group_ranks") == grp, f"{level} rank{r}: {op} group {g.get('group_ranks')} != {grp}")
        # steps that hold Inf but no NaN anywhere
        for s in spec.get("no_nan_steps", []):
            for r, rd in steps[s].items():
                c.check(all("nan" not in rd.bad[n] for n in rd.names), f"{level} step{s} rank{r}: holds NaN")
        # a parameter written non-finite by calls that are not in the dump
        hu = spec.get("hidden_update")
        if hu:
            for r in hu["ranks"]:
                rd = steps[hu["step"]][r]
                c.check(rd.names and rd.names[-1] == hu["last_op"],
                        f"{level} step{hu['step']} rank{r}: last entry {rd.names[-1:]} not {hu['last_op']}")
                outs = rd.data.get(hu["last_op"], {}).get("output", [])
                for i in hu["zero_items"]:
                    c.check(i < len(outs) and outs[i].get("Max") == 0.0 and outs[i].get("Min") == 0.0,
                            f"{level} step{hu['step']} rank{r}: {hu['last_op']} output {i} is not 0")
        # everything after the origin step stays non-finite (the anomaly persists)
        for s in dumped:
            if s > t["step"]:
                for r, rd in steps[s].items():
                    c.check(first(rd) is not None, f"{level} step{s} rank{r}: clean after the origin")
    return c.errors


def verify_log(root, scenario, spec):
    """Claims about the training log (train-log/rank<M>.json, written after each step)."""
    c = Checker()
    hu = spec.get("hidden_update")
    if hu:
        for r in hu["ranks"]:
            with open(os.path.join(root, scenario, "train-log", f"rank{r}.json")) as f:
                steps = {x["step"]: x for x in json.load(f)["steps"]}
            before, after = steps[hu["step"] - 1], steps[hu["step"]]
            c.check(not before["nonfinite_params"], f"log rank{r} step{hu['step'] - 1}: {before['nonfinite_params']}")
            c.check(after["nonfinite_params"] == hu["params"],
                    f"log rank{r} step{hu['step']}: {after['nonfinite_params']} != {hu['params']}")
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
    later = Checker()
    verify_later(later, args.scenario, spec, dumps, args.root)
    errors += later.errors
    errors += verify_log(args.root, args.scenario, spec)
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
    doc.update(extra_fields(spec, dumps))
    doc["first_nonfinite"] = first_table(dumps)
    with open(os.path.join(args.out, f"{args.scenario}.truth.json"), "w") as f:
        json.dump(doc, f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main()
