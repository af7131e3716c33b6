#!/usr/bin/env python3
"""Writes the tensor files of testdata/golden-dump with torch.save.

    python3 make_golden_tensors.py

Each data_name of golden-dump/step3/rank1/dump.json becomes a tensor of the
recorded dtype and shape holding 0, 1, 2, ... (as its dtype holds them), so
that the files are what msprobe writes (a torch.save zip archive) and pass
nanhunt repro's check of what a tensor file may hold. The golden tests read
the text repro writes; only a case whose call can run loads these files.
"""

import json
import math
import os

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
RANK = os.path.join(HERE, "golden-dump", "step3", "rank1")


def records(v):
    """Every tensor record with a data_name below v."""
    if isinstance(v, dict):
        if "data_name" in v:
            yield v
        for x in v.values():
            yield from records(x)
    elif isinstance(v, list):
        for x in v:
            yield from records(x)


def main():
    with open(os.path.join(RANK, "dump.json")) as f:
        dump = json.load(f)
    out = os.path.join(RANK, "dump_tensor_data")
    for rec in records(dump["data"]):
        dtype = getattr(torch, rec["dtype"].removeprefix("torch."))
        shape = rec["shape"]
        t = torch.arange(math.prod(shape), dtype=torch.float64).reshape(shape).to(dtype)
        torch.save(t, os.path.join(out, rec["data_name"]))


if __name__ == "__main__":
    main()
