#!/usr/bin/env python3
"""Writes one small run twice: skill-format/ in the format the
nan-overflow-detection skill documents (entry names "{api}_{N}_{M}", output
as an object keyed by position, statistics as strings, stack.json as
[function, file, line]) and skill-format-msprobe/ as msprobe writes the same
calls (".N.forward" names, lists, statistics as numbers, stack.json v1
lines).

4 ranks, steps 0 and 1. At step 1, rank 1's log gets a negative input and
makes NaN in the forward; its gradients are NaN, and the gradient
all_reduce carries it to ranks 0, 2 and 3.

Run from this folder: python3 make_skill_format.py
"""
import json
import os


def tensor(mx, mn, shape=(4, 8)):
    return {"type": "torch.Tensor", "dtype": "torch.float32", "shape": list(shape), "Max": mx, "Min": mn}


def stat(mx, mn):
    return {"Max": mx, "Min": mn}


def calls(step, rank):
    """The calls of one rank at one step, in execution order: (api, N, pass, fields)."""
    bad = step == 1 and rank == 1
    reduced = step == 1
    grad = ("nan", "nan") if bad else ("0.031", "-0.031")
    x, w = tensor("1.25", "-1.5"), tensor("0.31", "-0.29", (8, 8))
    return [
        ("Torch.nn.functional.linear", 0, 0, {"input_args": [x, w], "input_kwargs": {}, "output": [stat("2.1", "-1.9")]}),
        ("Torch.ops.aten.linear", 0, 0, {"input_args": [x, w], "input_kwargs": {}, "output": [stat("2.1", "-1.9")]}),
        ("Torch.ops.aten.log", 0, 0, {"input_args": [tensor("2.1", "-0.4" if bad else "0.02")], "input_kwargs": {},
                                      "output": [stat("nan", "nan") if bad else stat("0.74", "-3.9")]}),
        ("Torch.ops.aten.mean", 0, 0, {"input_args": [tensor("nan", "nan") if bad else tensor("0.74", "-3.9")], "input_kwargs": {},
                                       "output": [stat("nan", "nan") if bad else stat("-0.61", "-0.61")]}),
        ("Torch.ops.aten.mean", 0, 1, {"input": [tensor("1", "1", ())], "output": [stat("0.031", "0.031")]}),
        ("Torch.ops.aten.log", 0, 1, {"input": [tensor("0.031", "0.031")], "output": [stat(*grad)]}),
        ("Torch.ops.aten.linear", 0, 1, {"input": [tensor(*grad)], "output": [stat(*grad), stat(*grad)]}),
        ("Distributed.all_reduce", 0, 0, {"input_args": [tensor(*grad, (8, 8))], "input_kwargs": {},
                                          "output": [stat("nan", "nan") if reduced else stat("0.12", "-0.12")]}),
        ("Torch.ops.aten.add", 0, 0, {"input_args": [w, tensor("nan", "nan", (8, 8)) if reduced else tensor("0.03", "-0.03", (8, 8))],
                                      "input_kwargs": {}, "output": [stat("nan", "nan") if reduced else stat("0.33", "-0.31")]}),
    ]


PARENTS = {"Torch.ops.aten.linear": "Torch.nn.functional.linear"}
CODE = {  # api -> (function, file, line) of the user's line that called it
    "Torch.nn.functional.linear": ("forward", "model.py", 21),
    "Torch.ops.aten.linear": ("linear", "forward.py", 123),
    "Torch.ops.aten.log": ("forward", "model.py", 24),
    "Torch.ops.aten.mean": ("train_step", "train.py", 57),
    "Distributed.all_reduce": ("train_step", "train.py", 61),
    "Torch.ops.aten.add": ("train_step", "train.py", 64),
}


def skill_name(api, n, p):
    return f"{api}_{n}_{p}"


def msprobe_name(api, n, p):
    return f"{api}.{n}.{'backward' if p else 'forward'}"


def keyed(fields):
    """Lists written as objects keyed by position, as the skill shows output."""
    return {k: {str(i): v for i, v in enumerate(val)} if k in ("output",) else val for k, val in fields.items()}


def numbers(v):
    """Statistics as msprobe writes them: numbers, NaN and Infinity bare."""
    if isinstance(v, list):
        return [numbers(x) for x in v]
    if isinstance(v, dict):
        return {k: float(x) if k in ("Max", "Min") else numbers(x) for k, x in v.items()}
    return v


def write(path, doc):
    with open(path, "w") as f:
        json.dump(doc, f, indent=2)
        f.write("\n")


def run(root, skill):
    name = skill_name if skill else msprobe_name
    for step in (0, 1):
        for rank in range(4):
            d = os.path.join(root, f"step{step}", f"rank{rank}")
            os.makedirs(d, exist_ok=True)
            cs = calls(step, rank)
            data = {name(api, n, p): keyed(fields) if skill else numbers(fields) for api, n, p, fields in cs}
            write(os.path.join(d, "dump.json"), {"framework": "pytorch", "data": data})
            forwards = [(api, n) for api, n, p, _ in cs if p == 0]
            write(os.path.join(d, "construct.json"),
                  {name(api, n, 0): (name(PARENTS[api], n, 0) if api in PARENTS else None) for api, n in forwards})
            if skill:
                stack = {name(api, n, 0): list(CODE[api]) for api, n in forwards}
            else:
                stack = {name(api, n, 0): [f"File {CODE[api][1]}, line {CODE[api][2]}, in {CODE[api][0]}, \n {api.split('.')[-1]}(...)"]
                         for api, n in forwards}
            write(os.path.join(d, "stack.json"), stack)


if __name__ == "__main__":
    run("skill-format", skill=True)
    run("skill-format-msprobe", skill=False)
