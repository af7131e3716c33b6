#!/usr/bin/env python3
"""Writes a small tensor dump in msprobe's layout, with torch only (no msprobe).

    python3 make_tensor_dump.py DUMP_PATH

It writes DUMP_PATH/step0/rank0/{dump.json, stack.json, construct.json,
dump_tensor_data/*.pt} as msprobe's "tensor" task does at level L1: entries
named {Prefix}.{api}.{N}.{forward|backward} in execution order, every tensor
with type, dtype, shape, Max, Min, Mean, Norm (computed in the tensor's dtype,
NaN and Infinity written by json.dump as bare tokens), requires_grad and the
data_name of the file torch.save wrote it to.

Calls, in execution order:
  Torch.log.0.forward        log of a tensor with a negative value: NaN
  Tensor.sum.0.forward       sum(dim=-1, keepdim=True) of finite values: finite
  Torch.sqrt.0.forward       sqrt of a tensor holding a 0: finite
  Tensor.__truediv__.0.forward   x / 0: Inf
  Torch.log.1.forward        log of positive values: finite
  Torch.sqrt.0.backward      the gradient of sqrt at 0: +Inf
"""

import json
import os
import sys

import torch


def stats(t):
    """Max, Min, Mean and Norm as msprobe computes them."""
    t = t.detach()
    if t.dtype == torch.bool:
        return {"Max": bool(t.any()), "Min": bool(t.all()), "Mean": None, "Norm": None}
    if not t.is_floating_point():
        return {"Max": t.max().item(), "Min": t.min().item(), "Mean": None, "Norm": None}
    return {
        "Max": t.max().item(),
        "Min": t.min().item(),
        "Mean": t.mean().item(),
        "Norm": torch.norm(t).item(),
    }


class Dump:
    def __init__(self, rank_dir):
        self.dir = rank_dir
        self.data_dir = os.path.join(rank_dir, "dump_tensor_data")
        os.makedirs(self.data_dir, exist_ok=True)
        self.data = {}
        self.stack = {}

    def tensor(self, entry, where, t, requires_grad):
        name = "%s.%s.pt" % (entry, where)
        torch.save(t.detach().clone().contiguous(), os.path.join(self.data_dir, name))
        rec = {"type": "torch.Tensor", "dtype": str(t.dtype), "shape": list(t.shape)}
        rec.update(stats(t))
        rec["requires_grad"] = requires_grad
        rec["data_name"] = name
        return rec

    def forward(self, entry, args, kwargs, output, line):
        rec = {"input_args": [], "input_kwargs": {}, "output": []}
        for i, a in enumerate(args):
            if isinstance(a, torch.Tensor):
                rec["input_args"].append(self.tensor(entry, "input.%d" % i, a, a.requires_grad))
            else:
                rec["input_args"].append(scalar(a))
        for k, v in kwargs.items():
            rec["input_kwargs"][k] = scalar(v)
        rec["output"].append(self.tensor(entry, "output.0", output, output.requires_grad))
        self.data[entry] = rec
        self.stack[str(len(self.stack))] = [[entry], [
            "File /home/user/job/model.py, line %d, in forward, \n %s" % (line, LINES[line]),
            "File /home/user/job/train.py, line 40, in main, \n loss = model(x)",
        ]]

    def backward(self, entry, grad_output, grad_input):
        self.data[entry] = {
            "input": [self.tensor(entry, "input.0", grad_output, False)],
            "output": [self.tensor(entry, "output.0", grad_input, False)],
        }

    def write(self):
        dump = {
            "task": "tensor",
            "level": "L1",
            "framework": "pytorch",
            "dump_data_dir": "/home/user/job/dumps/step0/rank0/dump_tensor_data",
            "data": self.data,
        }
        with open(os.path.join(self.dir, "dump.json"), "w") as f:
            json.dump(dump, f, indent=1)
        with open(os.path.join(self.dir, "stack.json"), "w") as f:
            json.dump(self.stack, f, indent=1)
        with open(os.path.join(self.dir, "construct.json"), "w") as f:
            json.dump({}, f, indent=1)


def scalar(v):
    """A non-tensor argument as msprobe writes it."""
    return {"type": type(v).__name__, "value": v}


LINES = {
    11: "lx = torch.log(x)",
    12: "s = x.sum(dim=-1, keepdim=True)",
    13: "speed = torch.sqrt(s)",
    14: "ratio = x / scale",
    15: "ly = torch.log(y)",
}


def main():
    dump_path = sys.argv[1]
    d = Dump(os.path.join(dump_path, "step0", "rank0"))
    torch.manual_seed(0)

    x = torch.rand(4, 8) + 0.5
    x[1, 3] = -0.75                       # log(-0.75) = NaN
    lx = torch.log(x)
    d.forward("Torch.log.0.forward", [x], {}, lx, 11)

    w = torch.rand(4, 8)
    s = w.sum(dim=-1, keepdim=True)
    d.forward("Tensor.sum.0.forward", [w], {"dim": -1, "keepdim": True}, s, 12)

    q = torch.rand(4, 3).requires_grad_()
    with torch.no_grad():
        q[2, 1] = 0.0                     # sqrt is finite at 0, its gradient is not
    speed = torch.sqrt(q)
    d.forward("Torch.sqrt.0.forward", [q], {}, speed, 13)

    scale = torch.ones(4, 8)
    scale[0, 0] = 0.0                     # x / 0 = Inf
    num = torch.rand(4, 8)
    ratio = num / scale
    d.forward("Tensor.__truediv__.0.forward", [num, scale], {}, ratio, 14)

    y = torch.rand(4, 8) + 0.5
    d.forward("Torch.log.1.forward", [y], {}, torch.log(y), 15)

    g = torch.rand(4, 3) - 0.5
    g[2, 1] = 0.25
    speed.backward(g)
    d.backward("Torch.sqrt.0.backward", g, q.grad)
    d.write()


if __name__ == "__main__":
    main()
