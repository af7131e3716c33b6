"""A tiny data-parallel training run on two processes (gloo on 127.0.0.1),
dumped step by step in msprobe's format by msprobe_writer, with
nanhunt.StepGuard on rank 0 next to the loop.

At --fault-step, rank --fault-rank gets a record whose variance feature is
negative: Torch.sqrt of it is NaN in the forward, the loss and the
gradients follow, and the gradient all_reduce carries the NaN to the other
rank. With --skip-nonfinite the update is skipped when a gradient is not
finite (what a loss scaler does), so the next step is clean again;
without it the weights turn NaN and the anomaly lasts.

Rank 0 shares the guard's decision with the other rank once per step and
writes what happened to --result as JSON: the step the loop stopped at (or
null), the verdict and event of the AnomalyError, the recovered events.
"""

from __future__ import annotations

import argparse
import json
import os
import socket

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
import torch.nn.functional as F

import nanhunt
from msprobe_writer import RankWriter

WORLD = 2


def batch(step: int, rank: int, fault: bool):
    g = torch.Generator().manual_seed(1000 * step + rank)
    x = torch.randn(4, 6, generator=g)
    x[:, 0] = x[:, 0].abs()  # a variance: never negative in good data
    y = torch.randn(4, 2, generator=g)
    if fault:
        x[1, 0] = -0.25  # the corrupted record
    return x, y


def train_step(rec: RankWriter, params, group, x, y, skip_nonfinite: bool, lr: float = 0.05) -> None:
    w1, b1, w2, b2 = params
    std = rec.api("Torch", "sqrt", torch.sqrt, x[:, :1])
    scaled = rec.api("Tensor", "__mul__", torch.Tensor.__mul__, x, std)
    h = rec.api("Functional", "linear", F.linear, scaled, w1, b1)
    a = rec.api("Functional", "relu", F.relu, h)
    out = rec.api("Functional", "linear", F.linear, a, w2, b2)
    loss = rec.api("Functional", "mse_loss", F.mse_loss, out, y)
    loss.backward()
    for p in params:
        rec.all_reduce(p.grad, group=group)
        rec.api("Tensor", "div_", torch.Tensor.div_, p.grad, WORLD)
    with torch.no_grad():
        if skip_nonfinite and not all(bool(torch.isfinite(p.grad).all()) for p in params):
            pass  # the loss scaler skips this update
        else:
            for p in params:
                rec.api("Tensor", "add_", torch.Tensor.add_, p, p.grad, alpha=-lr)
        for p in params:
            p.grad = None


def worker(rank: int, args: argparse.Namespace) -> None:
    dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{args.port}", rank=rank, world_size=WORLD)
    rec = RankWriter(args.dump, rank)
    group = rec.new_group(list(range(WORLD)))
    torch.manual_seed(0)
    params = [torch.randn(8, 6) * 0.3, torch.zeros(8), torch.randn(2, 8) * 0.3, torch.zeros(2)]
    for p in params:
        p.requires_grad_(True)
    guard = None
    if rank == 0:
        guard = nanhunt.StepGuard(args.dump, out_dir=args.out, max_lag=1, lag_timeout=120,
                                  settle=args.settle, poll=0.1)
    result = {"stopped_at": None, "verdict": None, "event": None}
    for step in range(args.steps):
        rec.start(step)
        x, y = batch(step, rank, step == args.fault_step and rank == args.fault_rank)
        train_step(rec, params, group, x, y, args.skip_nonfinite)
        rec.stop()
        stop = torch.zeros(1)
        if guard is not None:
            try:
                guard.step()
            except nanhunt.AnomalyError as e:
                stop[0] = 1
                result.update(verdict=e.verdict, event=e.event)
        dist.broadcast(stop, 0)
        result["steps_run"] = step + 1
        if stop.item():
            result["stopped_at"] = step
            break
    if guard is not None:
        guard.close()
        result["recovered"] = list(guard.recovered)
        result["events"] = [e.get("event") for e in guard.events]
        with open(args.result, "w", encoding="utf-8") as f:
            json.dump(result, f, indent=1)
    dist.destroy_process_group()


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--dump", required=True, help="msprobe dump_path to write")
    ap.add_argument("--out", required=True, help="the watch's folder for the verdict")
    ap.add_argument("--result", required=True, help="what rank 0 saw, as JSON")
    ap.add_argument("--steps", type=int, default=8)
    ap.add_argument("--fault-step", type=int, default=3)
    ap.add_argument("--fault-rank", type=int, default=1)
    ap.add_argument("--skip-nonfinite", action="store_true")
    ap.add_argument("--settle", type=float, default=0.3, help="the watch's --settle, in seconds")
    args = ap.parse_args()
    args.port = free_port()
    os.makedirs(args.dump, exist_ok=True)
    mp.spawn(worker, args=(args,), nprocs=WORLD, join=True)


if __name__ == "__main__":
    main()
