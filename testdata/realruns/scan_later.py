"""Ground truth and extra checks of the later realruns scenarios (J-N of train.py;
O-R, the runs that climb towards a float16 limit, are in scan_ahead.py).

scan.py merges TRUTH_LATER into its TRUTH table and calls verify_later and
extra_fields; the fields these scenarios add to <scenario>.truth.json are
described in README.md ("The truth files").
"""
import csv
import glob
import json
import math
import os

from scan_ahead import TRUTH_AHEAD, verify_ahead

WORLD = 4

# A frame of the autograd engine running the recompute of a checkpointed block:
# CheckpointFunction.backward (use_reentrant=True) or the saved-tensor unpack
# hook (use_reentrant=False), both in torch/utils/checkpoint.py.
RECOMPUTE_FRAMES = {True: "in backward", False: "in unpack"}

_BLOCK_ENTRIES = ["Tensor.__sub__.1.forward", "Tensor.__mul__.1.forward", "Tensor.sum.1.forward",
                  "Torch.sqrt.1.forward", "Functional.linear.4.forward", "Functional.linear.5.forward",
                  "Tensor.__add__.1.forward", "Torch.tanh.1.forward"]
_BLOCK_ENTRIES_MIX = ["Tensor.__sub__.1.forward", "Tensor.__mul__.1.forward", "Tensor.sum.1.forward",
                      "Torch.sqrt.1.forward", "Functional.linear.4.forward", "Module.block.fc.Linear.forward.1",
                      "Functional.linear.5.forward", "Module.block.speed_proj.Linear.forward.1",
                      "Tensor.__add__.1.forward", "Torch.tanh.1.forward", "Module.block.MotionBlock.forward.1"]
# the block's API calls in the first forward
_BLOCK_FIRST = ["Tensor.__sub__.0.forward", "Tensor.__mul__.0.forward", "Tensor.sum.0.forward",
                "Torch.sqrt.0.forward", "Functional.linear.1.forward", "Functional.linear.2.forward",
                "Tensor.__add__.0.forward", "Torch.tanh.0.forward"]

TRUTH_LATER = {
    "mask-hidden-sqrt": {
        "description": (
            "4-rank data parallel on padded records (a bool mask comes with the batch; padding holds the "
            "fill amount 1.0). The model compresses the amounts as torch.where(a > 0, torch.sqrt(a), "
            "zeros_like(a)) with a = x * scale (a learned per-feature scale), then tanh(inp(.)), a masked "
            "mean over the real tokens and a head; gradient all_reduce per parameter, torch.optim.SGD. At "
            "step 3 rank 2's batch holds a negative amount in a real token: Torch.sqrt.0.forward gives NaN "
            "from finite inputs, Torch.where.0.forward selects 0 there and its output is finite, so the "
            "forward and the loss stay finite. In the backward the where sends a gradient of exactly 0 to "
            "the sqrt, whose derivative at the negative input is NaN: Torch.sqrt.0.backward gives NaN from "
            "finite inputs (0 * NaN), scale's gradient is NaN, and Distributed.all_reduce.0.forward "
            "(feat.scale) carries it to ranks 0, 1, 3. SGD writes NaN into scale[5] everywhere; from step 4 "
            "the product x * scale is NaN in every dump but the where keeps hiding it from the loss, which "
            "stays finite in every step."),
        "levels": ["L1", "mix"],
        "truth": {
            "anomaly": True, "step": 3, "ranks": [2],
            "op": "Torch.sqrt.0.forward",
            "stage": "forward", "kind": "nan", "tie": False, "captured": True,
            "first_nan": None,
            "carrier": {"step": 3, "op": "Distributed.all_reduce.0.forward",
                        "from_ranks": [2], "to_ranks": [0, 1, 3]},
            "recovered": [],
        },
        "extra": {
            "hidden": {"step": 3, "rank": 2, "by": "Torch.where.0.forward",
                       "reappears": "Torch.sqrt.0.backward", "reappears_stage": "backward",
                       "reappears_kind": "nan"},
            "loss_finite": True,
            "monitor": {"folder": "monitor", "first": {"step": 3, "ranks": [2], "file": "grad_unreduced",
                                                       "name": "feat.scale"},
                        "reduced": {"step": 3, "ranks": [0, 1, 2, 3], "file": "grad_reduced",
                                    "name": "feat.scale"},
                        "actv_finite_steps": [0, 1, 2, 3, 4],
                        "bool_rows": ["pool.input_1", ".input_1"]},
        },
    },
    "activation-checkpointing": {
        "description": (
            "4-rank data parallel; the model's MotionBlock (the step length sqrt(sum(d*d)) between "
            "consecutive tokens in the hidden space, fc, speed_proj, tanh) runs under "
            "torch.utils.checkpoint.checkpoint(use_reentrant=True): its first forward runs without grad "
            "(entries .0, no backward entries), and CheckpointFunction.backward runs it again inside "
            "loss.backward() (the recompute: entries .1, whose backward entries follow). At step 3 rank 3's "
            "batch repeats one token, so one row of d is exactly 0: sqrt(0) = 0 is finite in both "
            "forwards, but Torch.sqrt.1.backward (the backward of the recomputed sqrt) gives -Inf from "
            "finite inputs and Tensor.__mul__.1.backward the first NaN (Inf * 0). inp's gradients are NaN; "
            "Distributed.all_reduce.0.forward (inp.weight) carries them to ranks 0, 1, 2; step 4 is NaN "
            "everywhere."),
        "levels": ["L1", "mix"],
        "truth": {
            "anomaly": True, "step": 3, "ranks": [3],
            "op": "Torch.sqrt.1.backward",
            "stage": "backward", "kind": "inf", "tie": False, "captured": True,
            "first_nan": {"step": 3, "rank": 3, "op": "Tensor.__mul__.1.backward"},
            "carrier": {"step": 3, "op": "Distributed.all_reduce.0.forward",
                        "from_ranks": [3], "to_ranks": [0, 1, 2]},
            "recovered": [],
        },
        "reentrant": True,
        "extra": {
            "checkpoint": {"use_reentrant": True, "origin_forward": "Torch.sqrt.1.forward",
                           "origin_forward_is_recompute": True,
                           "recompute_frame": "torch/utils/checkpoint.py, in backward",
                           "first_forward": _BLOCK_FIRST, "first_forward_has_backward": False,
                           "recompute": {"L1": _BLOCK_ENTRIES, "mix": _BLOCK_ENTRIES_MIX}},
        },
    },
    "activation-checkpointing-nonreentrant": {
        "description": (
            "The activation-checkpointing model and data with torch.utils.checkpoint.checkpoint("
            "use_reentrant=False): the first forward runs with grad (entries .0, and it is their backward "
            "entries that run), and the block is recomputed by the saved-tensor unpack hook when the "
            "backward first needs a saved tensor (entries .1, with no backward entries of their own). At "
            "step 3 rank 3's repeated token gives Torch.sqrt.0.backward -Inf from finite inputs (the "
            "backward of the first forward's sqrt, computed from the recomputed saved tensors), first NaN "
            "Tensor.__mul__.0.backward; Distributed.all_reduce.0.forward carries it to ranks 0, 1, 2."),
        "levels": ["L1"],
        "truth": {
            "anomaly": True, "step": 3, "ranks": [3],
            "op": "Torch.sqrt.0.backward",
            "stage": "backward", "kind": "inf", "tie": False, "captured": True,
            "first_nan": {"step": 3, "rank": 3, "op": "Tensor.__mul__.0.backward"},
            "carrier": {"step": 3, "op": "Distributed.all_reduce.0.forward",
                        "from_ranks": [3], "to_ranks": [0, 1, 2]},
            "recovered": [],
        },
        "reentrant": False,
        "extra": {
            "checkpoint": {"use_reentrant": False, "origin_forward": "Torch.sqrt.0.forward",
                           "origin_forward_is_recompute": False,
                           "recompute_frame": "torch/utils/checkpoint.py, in unpack",
                           "first_forward": _BLOCK_FIRST, "first_forward_has_backward": True,
                           "recompute": {"L1": _BLOCK_ENTRIES}},
        },
    },
    "l0-module-only": {
        "description": (
            "4-rank data parallel dumped at level L0: only module calls (Module.<path>.<Class>.forward.N "
            "with inputs, outputs and parameters, and Module...parameters_grad.N), no API call and so no "
            "collective. The first layer is a leaf module that takes the log of the amounts "
            "(LogLinear); gradient all_reduce per parameter, SGD. At step 3 rank 1's batch holds a negative "
            "amount: Module.enc.LogLinear.forward.0 has finite input and parameters and a NaN output, and "
            "rank 1's whole step is NaN. The gradient all_reduce and the update make every parameter NaN "
            "on every rank, but neither is in the dump: ranks 0, 2, 3 show nothing at step 3 (their "
            "parameters_grad entries are written in the backward, before the all_reduce) and first show "
            "NaN at step 4, in the parameters of Module.enc.LogLinear.forward.0."),
        "levels": ["L0"],
        "truth": {
            "anomaly": True, "step": 3, "ranks": [1],
            "op": "Module.enc.LogLinear.forward.0",
            "stage": "forward", "kind": "nan", "tie": False, "captured": True,
            "first_nan": None,
            "carrier": None,
            "recovered": [],
        },
        "extra": {
            "collectives_recorded": False,
            "hidden_carrier": {"step": 3, "from_ranks": [1], "to_ranks": [0, 2, 3],
                               "via": "gradient all_reduce and SGD update (not recorded at L0)",
                               "seen": {"step": 4, "op": "Module.enc.LogLinear.forward.0",
                                        "field": "parameters"}},
        },
    },
    "sparse-steps-undumped-origin": {
        "description": (
            "The model and training of l0-module-only (4-rank data parallel, a first layer that takes the "
            "log of the amounts, gradient all_reduce per parameter, SGD), dumped at L1 at steps 0, 2 and 4 "
            "only. At step 3, trained but not dumped, rank 1's batch holds a negative amount: the log makes "
            "NaN in rank 1's forward, rank 1's loss is NaN, the gradient all_reduce spreads it and SGD "
            "writes NaN into the weights of every rank. The dump's first sight is step 4, where every "
            "rank's first call (Functional.linear.0.forward) reads the NaN weights: in dump terms the "
            "origin is the update at the end of step 3 (not captured, all ranks, which first cannot be "
            "told). The training log says more: rank 1's loss is already NaN in step 3 and no other "
            "rank's is, so the birth is in step 3's forward on rank 1."),
        "levels": ["L1"],
        "truth": {
            "anomaly": True, "step": 4, "ranks": [0, 1, 2, 3],
            "op": "Functional.linear.0.forward",
            "stage": "optimizer", "kind": "nan", "tie": True, "captured": False,
            "first_nan": None,
            "carrier": None,
            "recovered": [],
        },
        "extra": {
            "undumped_birth": {"step": 3, "ranks": [1], "phase": "forward",
                               "log_loss_nan_step": 3, "log_loss_nan_ranks": [1]},
        },
    },
    "pp-1f1b": {
        "description": (
            "2 pipeline stages x 2 data-parallel replicas (ranks 0,1 stage 0, ranks 2,3 stage 1; 0->2, "
            "1->3) with a one-forward-one-backward schedule of 4 micro-batches and blocking keyword "
            "dist.send/dist.recv: stage 0 runs forward 0, sends activation 0, then for i = 0..2 runs "
            "forward i+1, receives gradient i, sends activation i+1 and runs backward i, then receives "
            "gradient 3 and runs backward 3; stage 1 receives activation i, runs forward and backward and "
            "sends gradient i for each micro-batch. Stage 1 adds the step length sqrt(sum(d*d)) between "
            "consecutive tokens of its hidden state. At step 3 record 0 of micro-batch 2 of replica 0 "
            "repeats a token (read by rank 0; the activation is finite), so on rank 2 one row of d is "
            "exactly 0: Torch.sqrt.2.backward gives -Inf from finite inputs in the backward of "
            "micro-batch 2 (first NaN Tensor.__mul__.2.backward), the input gradient is NaN and "
            "Distributed.send.2.forward sends it to rank 0, whose Distributed.recv.2.forward (a gradient "
            "receive, stage backward) is its first non-finite entry. The gradient all_reduces of each "
            "stage's group then carry it to rank 1 (group [0,1]) and rank 3 (group [2,3]); step 4 is NaN "
            "everywhere."),
        "levels": ["L1"],
        "truth": {
            "anomaly": True, "step": 3, "ranks": [2],
            "op": "Torch.sqrt.2.backward",
            "stage": "backward", "kind": "inf", "tie": False, "captured": True,
            "first_nan": {"step": 3, "rank": 2, "op": "Tensor.__mul__.2.backward"},
            "carrier": {"step": 3, "op": "Distributed.send.2.forward",
                        "from_ranks": [2], "to_ranks": [0]},
            "recovered": [],
        },
        "carrier_to_op": "Distributed.recv.2.forward",
        "spread": [{"op": "Distributed.all_reduce.0.forward", "to_op": "Distributed.all_reduce.0.forward",
                    "from_ranks": [0], "to_ranks": [1]},
                   {"op": "Distributed.all_reduce.0.forward", "to_op": "Distributed.all_reduce.0.forward",
                    "from_ranks": [2], "to_ranks": [3]}],
        # what each point-to-point call of a stage carries
        "p2p_roles": {0: {"send": "activation", "recv": "gradient"},
                      1: {"send": "activation", "recv": "gradient"},
                      2: {"recv": "activation", "send": "gradient"},
                      3: {"recv": "activation", "send": "gradient"}},
        "p2p_nonfinite": [[0, "Distributed.recv.2.forward"], [2, "Distributed.send.2.forward"]],
    },
}

TRUTH_LATER.update(TRUTH_AHEAD)

STAGE_OF = {"activation": "forward", "gradient": "backward"}


def read_stack(path):
    """{entry name: [frames]} of one stack.json."""
    with open(os.path.join(path, "stack.json")) as f:
        raw = json.load(f)
    out = {}
    for names, frames in raw.values():
        for n in names:
            out[n] = frames
    return out


def p2p_table(spec, dumps, step):
    """Every send/recv of the step on every rank, with what it carries."""
    rows = []
    for r in range(WORLD):
        rd = dumps["L1"][step][r]
        peer = (r + 2) % WORLD
        for n in rd.names:
            kind = n.split(".")[1] if n.startswith("Distributed.") else ""
            if kind not in ("send", "recv"):
                continue
            carries = spec["p2p_roles"][r][kind]
            rows.append({"rank": r, "op": n, "peer": peer, "carries": carries, "stage": STAGE_OF[carries],
                         "nonfinite": bool(rd.bad[n])})
    return rows


def check_p2p(c, spec, dumps, step):
    rows = p2p_table(spec, dumps, step)
    for row in rows:
        entry = dumps["L1"][step][row["rank"]].data[row["op"]]
        key = "dst" if ".send." in row["op"] else "src"
        got = entry.get("input_kwargs", {}).get(key, {}).get("value")
        c.check(got == row["peer"], f"rank{row['rank']} {row['op']}: {key} {got}, want {row['peer']}")
    bad = sorted([row["rank"], row["op"]] for row in rows if row["nonfinite"])
    c.check(bad == sorted(spec["p2p_nonfinite"]), f"non-finite send/recv {bad} != {spec['p2p_nonfinite']}")
    c.check(len(rows) == 4 * 8, f"{len(rows)} send/recv entries at step {step}, want 32")


def check_hidden(c, dumps, hidden):
    """A NaN that a where hides in the forward and that comes back in the backward."""
    for level, steps in dumps.items():
        rd = steps[hidden["step"]][hidden["rank"]]
        by, back = hidden["by"], hidden["reappears"]
        c.check(rd.bad_in[by] and not rd.bad_out[by], f"{level} {by}: not non-finite in, finite out")
        i, j = rd.names.index(by), rd.names.index(back)
        between = [n for n in rd.names[i + 1:j] if rd.bad[n]]
        c.check(not between, f"{level}: non-finite between {by} and {back}: {between}")
        c.check(not rd.bad_in[back] and "nan" in rd.bad_out[back], f"{level} {back}: not finite in, NaN out")


def check_recompute(c, spec, dumps, root, scenario):
    frame = RECOMPUTE_FRAMES[spec["reentrant"]]
    want = spec["extra"]["checkpoint"]["recompute"]
    for level, steps in dumps.items():
        for s, ranks in steps.items():
            for r in ranks:
                stack = read_stack(os.path.join(root, scenario, level, f"step{s}", f"rank{r}"))
                got = [n for n in ranks[r].names
                       if any("torch/utils/checkpoint.py" in f and frame in f for f in stack.get(n, []))]
                c.check(got == want[level], f"{level} step{s} rank{r}: recompute entries {got}")
                ck = spec["extra"]["checkpoint"]
                bwd = [n[:-len("forward")] + "backward" for n in ck["first_forward"]]
                has = [n for n in bwd if n in ranks[r].data]
                c.check(has == (bwd if ck["first_forward_has_backward"] else []),
                        f"{level} step{s} rank{r}: backward entries of the first forward {has}")
                rec = [n[:-len("forward")] + "backward" for n in want[level] if not n.startswith("Module.")]
                has = [n for n in rec if n in ranks[r].data]
                c.check(has == ([] if ck["first_forward_has_backward"] else rec),
                        f"{level} step{s} rank{r}: backward entries of the recompute {has}")


def check_l0(c, dumps, hc):
    for level, steps in dumps.items():
        for s, ranks in steps.items():
            for r, rd in ranks.items():
                c.check(all(n.startswith("Module.") for n in rd.names), f"{level} step{s} rank{r}: API entries")
        for r in hc["to_ranks"]:
            rd = steps[hc["seen"]["step"]][r]
            op = hc["seen"]["op"]
            c.check(rd.first_nonfinite()[1] == op, f"{level} step{hc['seen']['step']} rank{r}: first not {op}")
            entry = rd.data[op]
            c.check(has_nonfinite(entry.get("parameters")) and not has_nonfinite(entry.get("input_args")),
                    f"{level} rank{r}: {op} parameters finite or input non-finite")


def has_nonfinite(obj):
    """Whether a tensor anywhere in obj has a NaN or infinite Max or Min."""
    if isinstance(obj, dict):
        if "dtype" in obj and "Max" in obj:
            return any(isinstance(obj.get(k), float) and not math.isfinite(obj[k]) for k in ("Max", "Min"))
        return any(has_nonfinite(v) for v in obj.values())
    if isinstance(obj, list):
        return any(has_nonfinite(v) for v in obj)
    return False


def monitor_rows(root, scenario):
    """rank -> file kind -> rows (dicts) of the TrainerMon CSVs."""
    out = {}
    for d in glob.glob(os.path.join(root, scenario, "monitor", "*-rank*-*")):
        rank = int(os.path.basename(d).split("-rank")[1].split("-")[0])
        kinds = {}
        for f in sorted(glob.glob(os.path.join(d, "*.csv"))):     # <kind>_0-4.csv, <kind>_5-9.csv
            kind = os.path.basename(f).rsplit("_", 1)[0]
            with open(f, newline="") as fh:
                kinds.setdefault(kind, []).extend(csv.DictReader(fh))
        out[rank] = kinds
    return out


def row_bad(row):
    if row.get("shape") == "nan":                             # placeholder of a missing tensor
        return False
    if row.get("nans") not in (None, "", "0", "0.0"):
        return True
    for k in ("min", "max", "norm"):
        v = row.get(k)
        if v not in (None, "", "True", "False"):
            try:
                if not math.isfinite(float(v)):
                    return True
            except ValueError:
                pass
    return False


def check_monitor(c, root, scenario, mon):
    rows = monitor_rows(root, scenario)
    c.check(sorted(rows) == list(range(WORLD)), f"monitor ranks {sorted(rows)}")
    first, red = mon["first"], mon["reduced"]
    for r, kinds in rows.items():
        for kind, rs in kinds.items():
            for row in rs:
                step = int(row["step"])
                if not row_bad(row):
                    continue
                c.check(step >= first["step"], f"monitor rank{r} {kind} {row['name']}: non-finite at step {step}")
                if kind == "actv":
                    c.check(step not in mon["actv_finite_steps"], f"monitor rank{r}: actv non-finite at {step}")
        unred = [x for x in kinds.get(first["file"], []) if int(x["step"]) == first["step"] and row_bad(x)]
        want = [first["name"]] if r in first["ranks"] else []
        c.check([x["name"] for x in unred] == want, f"monitor rank{r} {first['file']}: {unred}")
        reduced = [x["name"] for x in kinds.get(red["file"], []) if int(x["step"]) == red["step"] and row_bad(x)]
        c.check(reduced == [red["name"]], f"monitor rank{r} {red['file']}: {reduced}")
        bools = {x["name"] for x in kinds.get("actv", []) if x.get("dtype") == "torch.bool"}
        c.check(bools == set(mon["bool_rows"]), f"monitor rank{r}: bool rows {bools}")


def check_loss_finite(c, root, scenario):
    for r in range(WORLD):
        with open(os.path.join(root, scenario, "train-log", f"rank{r}.json")) as f:
            for st in json.load(f)["steps"]:
                c.check(math.isfinite(st["local_loss"]) and math.isfinite(st["avg_loss"]),
                        f"log rank{r} step{st['step']}: loss not finite")


def verify_later(c, scenario, spec, dumps, root):
    """The claims of the extra fields; appends failures to the checker c."""
    extra = spec.get("extra", {})
    if "hidden" in extra:
        check_hidden(c, dumps, extra["hidden"])
    if extra.get("loss_finite"):
        check_loss_finite(c, root, scenario)
    if "monitor" in extra:
        check_monitor(c, root, scenario, extra["monitor"])
    if "checkpoint" in extra:
        check_recompute(c, spec, dumps, root, scenario)
    if "hidden_carrier" in extra:
        check_l0(c, dumps, extra["hidden_carrier"])
    if "p2p_roles" in spec:
        check_p2p(c, spec, dumps, spec["truth"]["step"])
    if "undumped_birth" in extra:
        check_undumped_birth(c, dumps, root, scenario, extra["undumped_birth"])
    verify_ahead(c, scenario, spec, dumps, root, monitor_rows)


def check_undumped_birth(c, dumps, root, scenario, ub):
    """The birth step is not dumped; the training log shows a NaN local loss
    there first, on the birth ranks only, and every loss before it is finite."""
    for level, steps in dumps.items():
        c.check(ub["step"] not in steps, f"{level}: step{ub['step']} was dumped")
    first = {}
    for r in range(WORLD):
        with open(os.path.join(root, scenario, "train-log", f"rank{r}.json")) as f:
            for st in json.load(f)["steps"]:
                if not math.isfinite(st["local_loss"]):
                    first[r] = st["step"]
                    break
    step = min(first.values(), default=None)
    c.check(step == ub["log_loss_nan_step"], f"log: first NaN local loss at step {step}")
    ranks = sorted(r for r, s in first.items() if s == step)
    c.check(ranks == ub["log_loss_nan_ranks"], f"log: NaN local loss at step {step} on ranks {ranks}")


def extra_fields(spec, dumps):
    """The fields these scenarios add to <scenario>.truth.json."""
    out = dict(spec.get("extra", {}))
    if "p2p_roles" in spec:
        out["p2p"] = {"step": spec["truth"]["step"], "calls": p2p_table(spec, dumps, spec["truth"]["step"])}
    return out
