"""A small msprobe writer for the tests: what msprobe's ``task: statistics``,
``level: L1`` dump of a PyTorch run holds, written from a real torch run.

Per rank and step it writes dump_path/stepN/rankR/ with

- dump.json: ``{"task", "level", "framework", "dump_data_dir", "data"}``;
  ``data`` maps entry names (``Torch.sqrt.0.forward``,
  ``Functional.linear.1.backward``, ``Distributed.all_reduce.0.forward``)
  to ``input_args``/``input_kwargs``/``output`` (forward) or
  ``input``/``output`` (backward) lists of tensor statistics (type, dtype,
  shape, Max, Min, Mean, Norm, requires_grad), in the order the calls ran;
  NaN and Inf are the bare tokens ``NaN``/``Infinity`` json.dump writes;
- stack.json in msprobe's second format, ``{"0": [[names], [frames]]}``,
  innermost frame first, for the forward entries;
- construct.json ``{}`` (level L1 has no modules).

As msprobe does, the rank folder is made when the step starts and the files
are written when it ends (stack.json and construct.json before dump.json).
"""

from __future__ import annotations

import collections
import json
import os
import traceback
import zlib
from typing import Any, Callable, Dict, List, Optional, Tuple

import torch
import torch.distributed as dist

_HERE = os.path.abspath(__file__)


def group_record(ranks: List[int]) -> Dict[str, Any]:
    """A process group as msprobe records it; group_id is the CRC-32 of
    str(group_ranks), in hex."""
    return {
        "type": "torch.ProcessGroup",
        "group_ranks": list(ranks),
        "group_id": format(zlib.crc32(str(list(ranks)).encode()), "08x"),
    }


def tensor_record(t: torch.Tensor) -> Dict[str, Any]:
    with torch.no_grad():
        x = t.detach()
        record: Dict[str, Any] = {"type": "torch.Tensor", "dtype": str(x.dtype), "shape": list(x.shape)}
        if x.is_floating_point():
            f = x.float()
            record.update(Max=f.max().item(), Min=f.min().item(), Mean=f.mean().item(), Norm=f.norm().item())
        else:
            record.update(Max=x.max().item(), Min=x.min().item(), Mean=None, Norm=None)
        record["requires_grad"] = t.requires_grad
        return record


class RankWriter:
    """One rank's dump: start(step) before the step, the recorded calls in
    it, stop() after it."""

    def __init__(self, dump_path: str, rank: int) -> None:
        self.dump_path = dump_path
        self.rank = rank
        self.step: Optional[int] = None
        self._data: Dict[str, Any] = {}
        self._counts: Dict[str, int] = collections.Counter()
        self._stacks: Dict[Tuple[str, ...], List[str]] = {}
        self.groups: Dict[int, Dict[str, Any]] = {}

    def folder(self, step: int) -> str:
        return os.path.join(self.dump_path, f"step{step}", f"rank{self.rank}")

    def start(self, step: int) -> None:
        self.step = step
        self._data, self._counts, self._stacks = {}, collections.Counter(), {}
        os.makedirs(self.folder(step), exist_ok=True)

    def api(self, prefix: str, name: str, fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        """Call fn and record it as PREFIX.NAME.N.forward, and its backward
        as PREFIX.NAME.N.backward when autograd runs it."""
        key = self._next(f"{prefix}.{name}")
        entry: Dict[str, Any] = {"input_args": [self.value(a) for a in args],
                                 "input_kwargs": {k: self.value(v) for k, v in kwargs.items()}}
        self._data[key + ".forward"] = entry  # inserted at the call, as msprobe's pre-hook does
        self._stack(key + ".forward")
        out = fn(*args, **kwargs)
        outs = list(out) if isinstance(out, (tuple, list)) else [out]
        entry["output"] = [self.value(o) for o in outs]
        if isinstance(out, torch.Tensor) and out.grad_fn is not None:
            out.grad_fn.register_hook(lambda grad_in, grad_out: self._backward(key, grad_in, grad_out))
        return out

    def all_reduce(self, tensor: torch.Tensor, group: Any = None) -> None:
        """dist.all_reduce(tensor, op=SUM, group=group) in place, recorded
        as Distributed.all_reduce.N.forward: the tensor before the call in
        input_args, after it in output (followed by the keyword arguments)."""
        key = self._next("Distributed.all_reduce")
        op = dist.ReduceOp.SUM
        kwargs: Dict[str, Any] = {"op": self.value(op)}
        if group is not None:
            kwargs["group"] = self.value(group)
        entry: Dict[str, Any] = {"input_args": [self.value(tensor)], "input_kwargs": kwargs}
        self._data[key + ".forward"] = entry
        self._stack(key + ".forward")
        dist.all_reduce(tensor, op=op, group=group)
        entry["output"] = [self.value(tensor)] + list(kwargs.values())

    def stop(self) -> None:
        """Write the step's stack.json, construct.json and dump.json."""
        assert self.step is not None, "stop() before start()"
        folder = self.folder(self.step)
        stacks = {str(i): [names, list(frames)] for i, (frames, names) in enumerate(self._stacks.items())}
        self._write(os.path.join(folder, "stack.json"), stacks)
        self._write(os.path.join(folder, "construct.json"), {})
        header = {"task": "statistics", "level": "L1", "framework": "pytorch", "dump_data_dir": None}
        self._write(os.path.join(folder, "dump.json"), {**header, "data": self._data})
        self.step = None

    def value(self, v: Any) -> Any:
        if isinstance(v, torch.Tensor):
            return tensor_record(v)
        if isinstance(v, bool):
            return {"type": "bool", "value": v}
        if isinstance(v, int):
            return {"type": "int", "value": v}
        if isinstance(v, float):
            return {"type": "float", "value": v}
        if isinstance(v, (list, tuple)):
            return [self.value(i) for i in v]
        if isinstance(v, dist.ReduceOp):
            return {"type": "torch.distributed.ReduceOp", "value": f"<torch.distributed.distributed_c10d.ReduceOp object at {id(v):#x}>"}
        if id(v) in self.groups:
            return self.groups[id(v)]
        if v is None:
            return None
        return {"type": type(v).__name__, "value": str(v)}

    def new_group(self, ranks: List[int]) -> Any:
        """dist.new_group(ranks), recorded as msprobe records a group."""
        group = dist.new_group(ranks)
        self.groups[id(group)] = group_record(ranks)
        return group

    def _next(self, api: str) -> str:
        n = self._counts[api]
        self._counts[api] += 1
        return f"{api}.{n}"

    def _backward(self, key: str, grad_in: Tuple[Any, ...], grad_out: Tuple[Any, ...]) -> None:
        self._data[key + ".backward"] = {
            "input": [self.value(g) for g in grad_out],
            "output": [self.value(g) for g in grad_in],
        }

    def _stack(self, name: str) -> None:
        frames = []
        for f in reversed(traceback.extract_stack()):
            if os.path.abspath(f.filename) == _HERE:
                continue
            frames.append(f"File {f.filename}, line {f.lineno}, in {f.name}, \n {(f.line or '').strip()}")
        self._stacks.setdefault(tuple(frames), []).append(name)

    @staticmethod
    def _write(path: str, obj: Any) -> None:
        with open(path, "w", encoding="utf-8") as f:
            json.dump(obj, f, indent=1)
