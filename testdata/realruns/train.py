#!/usr/bin/env python3
"""Tiny 4-rank CPU training jobs dumped by msprobe, one scenario per --scenario.

Every scenario is a real training loop (torch.multiprocessing.spawn, gloo on
127.0.0.1, 4 processes). The fault of each scenario comes from the data: the
data pipeline (load_batch) holds a bad record for one step on one rank, or a
schedule shared by every shard changes one step's batches on every rank (a
paused domain, a missing class). No model, kernel or optimizer looks at either.

    python3 train.py --scenario custom-bwd-kernel --dump-config cfg.json \
        --port 29611 --steps 5 --log-dir logs/

Needs msprobe (Ascend/msprobe, python/ on PYTHONPATH) and torch with gloo.
"""
import argparse
import json
import math
import os
import random
import types

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
import torch.nn as nn
import torch.nn.functional as F

WORLD = 4
B, T, FEAT, D, CLASSES = 4, 6, 8, 16, 4


# --------------------------------------------------------------------------
# data pipeline
# --------------------------------------------------------------------------
# Records that went bad in a shard: (scenario, shard, step) -> what is wrong.
# For the pipeline scenario the shard is the data-parallel replica; otherwise
# it is the rank that reads the shard.
BAD_RECORDS = {
    ("custom-bwd-kernel", 1, 3): "empty-record",        # sample 2 has no tokens left
    ("pp-p2p-microbatch", 0, 3): "negative-amount-mb1",  # 2nd micro-batch, x[5,1,2] < 0
    ("zero1-reduce-broadcast", 2, 3): "duplicated-row",  # x[1,3] repeats x[1,2]
    ("forward-only", 3, 3): "negative-amount",           # x[1,3,2] < 0
    ("sparse-steps-loss-scale", 1, 2): "outlier",        # one huge raw feature
    ("sparse-steps-loss-scale", 2, 6): "negative-amount",
}

# reducer-zero-count: 3 domains, one expert per domain. The domain mixture of
# each step is a schedule shared by every shard; at step 3 domain 1 is paused.
DOMAIN_SCHEDULE = {3: [0.5, 0.0, 0.5]}
DOMAIN_DEFAULT = [1 / 3, 1 / 3, 1 / 3]


def shard_generator(shard, step):
    return torch.Generator().manual_seed(1000 * shard + step)


def load_batch(scenario, rank, step):
    """Return this rank's batch for this step (a dict of tensors)."""
    if scenario in OWN_LAYOUT:                    # scenarios with their own batch layout
        return OWN_LAYOUT[scenario](rank, step)
    g = shard_generator(rank, step)
    bad = BAD_RECORDS.get((scenario, rank, step))
    x = torch.rand(B, T, FEAT, generator=g) * 1.5 + 0.5          # strictly positive
    y = torch.randint(0, CLASSES, (B,), generator=g)
    batch = {"x": x, "y": y}
    if scenario == "custom-bwd-kernel":
        lengths = torch.randint(3, T + 1, (B,), generator=g)
        if bad == "empty-record":
            lengths[2] = 0                                         # every token filtered away
        mask = torch.arange(T)[None, :] < lengths[:, None]        # True = real token
        batch["x"] = x * mask[..., None]                          # padding is 0
        batch["mask"] = mask
    elif scenario == "zero1-reduce-broadcast":
        if bad == "duplicated-row":
            x[1, 3, :] = x[1, 2, :]
    elif scenario == "reducer-zero-count":
        probs = torch.tensor(DOMAIN_SCHEDULE.get(step, DOMAIN_DEFAULT))
        batch["domain"] = torch.multinomial(probs, B, replacement=True, generator=g)
    elif scenario == "forward-only":
        if bad == "negative-amount":
            x[1, 3, 2] = -0.75
    elif scenario == "sparse-steps-loss-scale":
        if bad == "outlier":
            x[2, 4, 6] = 3.0e3                                    # raw (not logged) feature
        elif bad == "negative-amount":
            x[1, 3, 2] = -0.75                                    # amount (logged) feature
    return batch


def load_pp_batch(rank, step):
    """Pipeline: replica r = rank % 2; stage 0 reads x, stage 1 reads y of the
    same records. Two micro-batches of B records each."""
    replica = rank % 2
    g = shard_generator(replica, step)
    x = torch.rand(2 * B, FEAT, generator=g) * 1.5 + 0.5
    y = torch.randint(0, CLASSES, (2 * B,), generator=g)
    if BAD_RECORDS.get(("pp-p2p-microbatch", replica, step)) == "negative-amount-mb1":
        x[B + 1, 2] = -0.75                                       # record 1 of micro-batch 1
    return {"x": list(x.split(B)), "y": list(y.split(B))}


# --------------------------------------------------------------------------
# helpers
# --------------------------------------------------------------------------
def nonfinite_params(model, limit=3):
    bad = [n for n, p in model.named_parameters() if not torch.isfinite(p.data).all()]
    return bad[:limit]


def nonfinite_buffers(model, limit=3):
    bad = [n for n, b in model.named_buffers()
           if b.is_floating_point() and not torch.isfinite(b).all()]
    return bad[:limit]


def grad_all_reduce(params, group=None, size=WORLD):
    for p in params:
        if group is None:
            dist.all_reduce(p.grad)
        else:
            dist.all_reduce(p.grad, group=group)
        p.grad.div_(size)


def avg_of(value, group=None, size=WORLD):
    t = value.detach().clone()
    if group is None:
        dist.all_reduce(t)
    else:
        dist.all_reduce(t, group=group)
    return (t / size).item()


def sgd(params, lr):
    with torch.no_grad():
        for p in params:
            p.add_(p.grad, alpha=-lr)


# --------------------------------------------------------------------------
# A. custom-bwd-kernel
# --------------------------------------------------------------------------
def _fusion_attention(q, k, v, key_mask, scale):
    """Masked attention forward. Fully padded rows give 0 (the sum is clamped)."""
    s = torch.matmul(q, k.transpose(-1, -2)) * scale
    m = key_mask[:, None, None, :]
    e = torch.exp(s - s.amax(dim=-1, keepdim=True)) * m
    p = e / e.sum(dim=-1, keepdim=True).clamp_min(1e-6)
    return torch.matmul(p, v)


def _fusion_attention_grad(q, k, v, grad_out, key_mask, scale):
    """Backward of _fusion_attention. Recomputes the probabilities without the
    clamp of the forward: a row whose keys are all padding gives 0/0."""
    s = torch.matmul(q, k.transpose(-1, -2)) * scale
    m = key_mask[:, None, None, :]
    e = torch.exp(s - s.amax(dim=-1, keepdim=True)) * m
    p = e / e.sum(dim=-1, keepdim=True)
    dv = torch.matmul(p.transpose(-1, -2), grad_out)
    dp = torch.matmul(grad_out, v.transpose(-1, -2))
    ds = p * (dp - (p * dp).sum(dim=-1, keepdim=True))
    dq = torch.matmul(ds, k) * scale
    dk = torch.matmul(ds.transpose(-1, -2), q) * scale
    return dq, dk, dv


kernels = types.ModuleType("kernels")
kernels.fusion_attention = _fusion_attention
kernels.fusion_attention_grad = _fusion_attention_grad


class FusionAttentionFn(torch.autograd.Function):
    @staticmethod
    def forward(ctx, q, k, v, key_mask, scale):
        ctx.save_for_backward(q, k, v, key_mask)
        ctx.scale = scale
        return kernels.fusion_attention(q, k, v, key_mask, scale)

    @staticmethod
    def backward(ctx, grad_out):
        q, k, v, key_mask = ctx.saved_tensors
        dq, dk, dv = kernels.fusion_attention_grad(q, k, v, grad_out, key_mask, ctx.scale)
        return dq, dk, dv, None, None


class KernelAttention(nn.Module):
    def __init__(self, d=D, heads=2):
        super().__init__()
        self.heads = heads
        self.qkv = nn.Linear(d, 3 * d)
        self.out = nn.Linear(d, d)

    def forward(self, h, mask):
        b, t, d = h.shape
        q, k, v = self.qkv(h).view(b, t, 3, self.heads, d // self.heads).permute(2, 0, 3, 1, 4)
        a = FusionAttentionFn.apply(q, k, v, mask, 1.0 / math.sqrt(d // self.heads))
        return self.out(a.transpose(1, 2).reshape(b, t, d))


class KernelNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.inp = nn.Linear(FEAT, D)
        self.norm = nn.LayerNorm(D)
        self.attn = KernelAttention()
        self.head = nn.Linear(D, CLASSES)

    def forward(self, x, mask):
        h = self.inp(x)
        h = h + self.attn(self.norm(h), mask)
        w = mask[..., None].float()
        pooled = (h * w).sum(dim=1) / w.sum(dim=1).clamp_min(1.0)
        return self.head(pooled)


class CustomBwdKernel:
    def __init__(self, rank, debugger):
        self.rank = rank
        self.model = KernelNet()
        debugger.register_custom_api(kernels, "fusion_attention", api_prefix="MyKern")
        debugger.register_custom_api(kernels, "fusion_attention_grad", api_prefix="MyKern")

    def train_step(self, step, batch):
        model = self.model
        model.zero_grad()
        loss = F.cross_entropy(model(batch["x"], batch["mask"]), batch["y"])
        loss.backward()
        # gradients reduced last layer first, one all_reduce per parameter
        grad_all_reduce(reversed(list(model.parameters())))
        avg = avg_of(loss)
        sgd(model.parameters(), 0.05)
        return {"local_loss": loss.item(), "avg_loss": avg}


# --------------------------------------------------------------------------
# B. pp-p2p-microbatch
# --------------------------------------------------------------------------
class Stage0(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(FEAT, D)

    def forward(self, x):
        return torch.relu(self.fc(torch.log(x)))


class Stage1(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(D, D)
        self.head = nn.Linear(D, CLASSES)

    def forward(self, h):
        return self.head(torch.relu(self.fc(h)))


class PipelineP2P:
    """Ranks 0,1 = stage 0, ranks 2,3 = stage 1; replica r = rank % 2, so
    0 -> 2 and 1 -> 3. GPipe order: both forwards, then both backwards."""

    def __init__(self, rank, debugger):
        self.rank = rank
        torch.manual_seed(0)
        s0, s1 = Stage0(), Stage1()
        self.stage = 0 if rank < 2 else 1
        self.model = s0 if self.stage == 0 else s1
        self.peer = rank + 2 if self.stage == 0 else rank - 2
        # every rank creates both groups, in the same order
        groups = [dist.new_group([0, 1]), dist.new_group([2, 3])]
        self.dp_group = groups[self.stage]

    def train_step(self, step, batch):
        model = self.model
        model.zero_grad()
        mbs = 2
        if self.stage == 0:
            outs = []
            for x in batch["x"]:
                h = model(x)
                dist.send(h.detach(), dst=self.peer)
                outs.append(h)
            for h in outs:
                gbuf = torch.empty(B, D)
                dist.recv(gbuf, src=self.peer)
                h.backward(gbuf)
            grad_all_reduce(model.parameters(), group=self.dp_group, size=2)
            sgd(model.parameters(), 0.05)
            return {"local_loss": None, "avg_loss": None}
        losses, inputs = [], []
        for y in batch["y"]:
            buf = torch.empty(B, D)
            dist.recv(buf, src=self.peer)
            buf.requires_grad_(True)
            losses.append(F.cross_entropy(model(buf), y) / mbs)
            inputs.append(buf)
        for loss, buf in zip(losses, inputs):
            loss.backward()
            dist.send(buf.grad, dst=self.peer)
        grad_all_reduce(model.parameters(), group=self.dp_group, size=2)
        local = torch.stack([l.detach() for l in losses]).sum()
        avg = avg_of(local, group=self.dp_group, size=2)
        sgd(model.parameters(), 0.05)
        return {"local_loss": local.item(), "avg_loss": avg}


# --------------------------------------------------------------------------
# C. zero1-reduce-broadcast
# --------------------------------------------------------------------------
class MotionNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.motion_scale = nn.Parameter(torch.ones(FEAT))
        self.inp = nn.Linear(FEAT, D)
        self.speed_proj = nn.Linear(1, D)
        self.head = nn.Linear(D, CLASSES)

    def forward(self, x):
        d = (x[:, 1:] - x[:, :-1]) * self.motion_scale
        speed = torch.sqrt((d * d).sum(dim=-1, keepdim=True))   # step length
        h = torch.relu(self.inp(x[:, 1:]) + self.speed_proj(speed))
        return self.head(h.mean(dim=1))


class Zero1:
    """Every parameter has an owner (index % 4). Gradients are reduced to the
    owner, the owner runs momentum SGD on its parameters (its shard of the
    optimizer state), and broadcasts the new values."""

    def __init__(self, rank, debugger):
        self.rank = rank
        self.model = MotionNet()
        self.params = list(self.model.parameters())
        self.owner = [i % WORLD for i in range(len(self.params))]
        self.momentum = {i: torch.zeros_like(p) for i, p in enumerate(self.params)
                         if self.owner[i] == rank}

    def train_step(self, step, batch):
        model = self.model
        model.zero_grad()
        loss = F.cross_entropy(model(batch["x"]), batch["y"])
        loss.backward()
        for i, p in enumerate(self.params):
            dist.reduce(p.grad, dst=self.owner[i])
        with torch.no_grad():
            for i, p in enumerate(self.params):
                if self.owner[i] != self.rank:
                    continue
                g = p.grad / WORLD
                m = self.momentum[i]
                m.mul_(0.9).add_(g)
                p.add_(m, alpha=-0.05)
        for i, p in enumerate(self.params):
            dist.broadcast(p.data, src=self.owner[i])
        avg = avg_of(loss)
        return {"local_loss": loss.item(), "avg_loss": avg}


# --------------------------------------------------------------------------
# D. reducer-zero-count
# --------------------------------------------------------------------------
class DomainExperts(nn.Module):
    def __init__(self, experts=3):
        super().__init__()
        self.inp = nn.Linear(FEAT, D)
        self.experts = nn.ModuleList([nn.Linear(D, D) for _ in range(experts)])
        self.head = nn.Linear(D, CLASSES)

    def forward(self, x, domain):
        h = torch.relu(self.inp(x))
        route = F.one_hot(domain, len(self.experts)).to(h.dtype)    # [B, E]
        mixed = 0
        for e, expert in enumerate(self.experts):
            mixed = mixed + route[:, e, None, None] * expert(h)
        return self.head(torch.relu(mixed).mean(dim=1)), route


class ReducerZeroCount:
    """Hand-written reducer: one bucket for the shared layers and one per
    expert. Each bucket's summed gradient and its token count are
    all_reduced, then the gradient is divided by the count (per-token mean)."""

    def __init__(self, rank, debugger):
        self.rank = rank
        self.model = DomainExperts()
        m = self.model
        self.buckets = [list(m.inp.parameters()) + list(m.head.parameters())]
        self.buckets += [list(e.parameters()) for e in m.experts]

    def train_step(self, step, batch):
        model = self.model
        model.zero_grad()
        logits, route = model(batch["x"], batch["domain"])
        # every record has T tokens; token-summed loss, the reducer makes it a per-token mean
        loss_sum = F.cross_entropy(logits, batch["y"], reduction="sum") * T
        loss_sum.backward()
        per_expert = route.detach().sum(dim=0) * T               # tokens routed to each expert
        counts = [per_expert.sum()] + list(per_expert.unbind())   # shared bucket: all tokens
        for params, count in zip(self.buckets, counts):
            flat = torch.cat([p.grad.reshape(-1) for p in params])
            cnt = count.detach().clone()
            dist.all_reduce(flat)
            dist.all_reduce(cnt)
            flat = flat / cnt
            off = 0
            for p in params:
                n = p.numel()
                p.grad.copy_(flat[off:off + n].view_as(p))
                off += n
        local = loss_sum.detach() / (B * T)
        avg = avg_of(local)
        sgd(model.parameters(), 0.05)
        return {"local_loss": local.item(), "avg_loss": avg,
                "tokens_per_domain": [int(c.item()) for c in counts[1:]]}


# --------------------------------------------------------------------------
# E. forward-only
# --------------------------------------------------------------------------
class CausalNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.inp = nn.Linear(FEAT, D)
        self.qkv = nn.Linear(D, 3 * D)
        self.head = nn.Linear(D, CLASSES)

    def forward(self, x):
        h = self.inp(torch.log(x))                 # amounts are positive
        q, k, v = self.qkv(h).chunk(3, dim=-1)
        s = torch.matmul(q, k.transpose(-1, -2)) / math.sqrt(D)
        causal = torch.ones(T, T, dtype=torch.bool).triu(1)
        s = s.masked_fill(causal, float("-inf"))
        h = h + torch.matmul(torch.softmax(s, dim=-1), v)
        return self.head(h[:, -1])


class ForwardOnly:
    def __init__(self, rank, debugger):
        self.rank = rank
        self.model = CausalNet()

    def train_step(self, step, batch):
        model = self.model
        model.zero_grad()
        loss = F.cross_entropy(model(batch["x"]), batch["y"])
        loss.backward()
        grad_all_reduce(model.parameters())
        avg = avg_of(loss)
        sgd(model.parameters(), 0.05)
        return {"local_loss": loss.item(), "avg_loss": avg}


# --------------------------------------------------------------------------
# F. sparse-steps-loss-scale
# --------------------------------------------------------------------------
class ScaledNet(nn.Module):
    """Features 0..3 are amounts (logged), 4..7 raw values. A running mean,
    synchronised across ranks like SyncBatchNorm statistics, centres them."""

    def __init__(self):
        super().__init__()
        self.register_buffer("running_mean", torch.zeros(FEAT))
        self.fc1 = nn.Linear(FEAT, D)
        self.fc2 = nn.Linear(D, D)
        self.head = nn.Linear(D, CLASSES)

    def forward(self, x):
        f = torch.cat([torch.log(x[..., :4]), x[..., 4:]], dim=-1)
        with torch.no_grad():
            mean = f.mean(dim=(0, 1))
            dist.all_reduce(mean)
            self.running_mean.mul_(0.9).add_(mean / WORLD, alpha=0.1)
        h = torch.relu(self.fc1(f - self.running_mean))
        h = torch.relu(self.fc2(h))
        return self.head(h.mean(dim=1))


class SparseLossScale:
    """Dynamic loss scaling with float16 gradient communication."""

    def __init__(self, rank, debugger):
        self.rank = rank
        self.model = ScaledNet()
        self.scale = 2.0 ** 14

    def train_step(self, step, batch):
        model = self.model
        model.zero_grad()
        loss = F.cross_entropy(model(batch["x"]), batch["y"])
        (loss * self.scale).backward()
        reduced = []
        for p in model.parameters():
            g16 = p.grad.half()
            dist.all_reduce(g16)
            reduced.append(g16)
        finite = torch.stack([torch.isfinite(g).all() for g in reduced]).all().item()
        scale_used = self.scale
        if finite:
            with torch.no_grad():
                for p, g16 in zip(model.parameters(), reduced):
                    p.grad.copy_(g16.float() / (self.scale * WORLD))
            sgd(model.parameters(), 0.05)
        else:
            self.scale /= 2.0
        avg = avg_of(loss)
        return {"local_loss": loss.item(), "avg_loss": avg, "skipped": not finite,
                "loss_scale": scale_used, "next_loss_scale": self.scale}


SCENARIOS = {
    "custom-bwd-kernel": CustomBwdKernel,
    "pp-p2p-microbatch": PipelineP2P,
    "zero1-reduce-broadcast": Zero1,
    "reducer-zero-count": ReducerZeroCount,
    "forward-only": ForwardOnly,
    "sparse-steps-loss-scale": SparseLossScale,
}


def worker(rank, args):
    torch.set_num_threads(1)
    dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{args.port}",
                            rank=rank, world_size=WORLD)
    random.seed(rank)
    torch.manual_seed(0)                          # identical initial weights on every rank
    from msprobe.pytorch import PrecisionDebugger
    debugger = PrecisionDebugger(config_path=args.dump_config)
    job = SCENARIOS[args.scenario](rank, debugger)
    torch.manual_seed(rank)
    log = []
    for step in range(args.steps):
        batch = load_batch(args.scenario, rank, step)
        debugger.start(job.model)
        rec = job.train_step(step, batch)
        debugger.stop()
        debugger.step()
        rec = {"step": step, **rec, "nonfinite_params": nonfinite_params(job.model),
               "nonfinite_buffers": nonfinite_buffers(job.model)}
        log.append(rec)
    if args.log_dir:
        os.makedirs(args.log_dir, exist_ok=True)
        with open(os.path.join(args.log_dir, f"rank{rank}.json"), "w") as f:
            json.dump({"scenario": args.scenario, "rank": rank, "steps": log}, f, indent=1)
            f.write("\n")
    dist.barrier()
    dist.destroy_process_group()


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--scenario", required=True, choices=sorted(SCENARIOS))
    ap.add_argument("--dump-config", required=True, help="msprobe config.json")
    ap.add_argument("--steps", type=int, default=5)
    ap.add_argument("--port", type=int, default=29600)
    ap.add_argument("--log-dir", default="", help="where to write rank<N>.json")
    args = ap.parse_args()
    mp.spawn(worker, args=(args,), nprocs=WORLD, join=True)


# ==========================================================================
# G, H, I. stack.json shows the line numbers and source lines of train.py, so
# the code the scenarios above run keeps its lines; the later scenarios, their
# data tables and their batch layouts follow here.
# ==========================================================================
BAD_RECORDS[("inf-absorbed-next-step", 1, 3)] = "milli-units"  # one amount 1000x too large

# pp-weight-from-update: the same kind of schedule as DOMAIN_SCHEDULE, for the
# domain adapters of pipeline stage 1; at step 2 domain 1 is paused.
PP_DOMAIN_SCHEDULE = {2: [0.5, 0.0, 0.5]}

# fp16-allreduce-two-groups: the label mixture of each step, shared by every
# shard (a class-balanced sampler); at step 3 the pool of class 3 is empty.
LABEL_SCHEDULE = {3: [1 / 3, 1 / 3, 1 / 3, 0.0]}
LABEL_DEFAULT = [0.25, 0.25, 0.25, 0.25]


def load_tagging_batch(rank, step):
    """Token tagging, tensor parallel x data parallel: replica r = rank % 2
    (ranks 0 and 2 read replica 0, ranks 1 and 3 replica 1). Every token has a
    label drawn from the step's label mixture."""
    g = shard_generator(rank % 2, step)
    x = torch.rand(B, T, FEAT, generator=g) * 1.5 + 0.5
    probs = torch.tensor(LABEL_SCHEDULE.get(step, LABEL_DEFAULT))
    y = torch.multinomial(probs, B * T, replacement=True, generator=g).view(B, T)
    return {"x": x, "y": y}


def load_count_batch(rank, step):
    """Count regression: B records of FEAT positive amounts, a count each."""
    g = shard_generator(rank, step)
    x = torch.rand(B, FEAT, generator=g) * 1.5 + 0.5
    y = torch.randint(0, 4, (B,), generator=g).float()
    if BAD_RECORDS.get(("inf-absorbed-next-step", rank, step)) == "milli-units":
        x[2, 5] = x[2, 5] * 1000.0                                # amount 5 of record 2
    return {"x": x, "y": y}


def load_pp_domain_batch(rank, step):
    """Pipeline with domain adapters: replica r = rank % 2; stage 0 reads x,
    stage 1 reads y and the domain of the same records. Two micro-batches."""
    g = shard_generator(rank % 2, step)
    x = torch.rand(2 * B, FEAT, generator=g) * 1.5 + 0.5
    y = torch.randint(0, CLASSES, (2 * B,), generator=g)
    probs = torch.tensor(PP_DOMAIN_SCHEDULE.get(step, DOMAIN_DEFAULT))
    domain = torch.multinomial(probs, 2 * B, replacement=True, generator=g)
    return {"x": list(x.split(B)), "y": list(y.split(B)), "domain": list(domain.split(B))}


OWN_LAYOUT = {
    "pp-p2p-microbatch": load_pp_batch,
    "fp16-allreduce-two-groups": load_tagging_batch,
    "inf-absorbed-next-step": load_count_batch,
    "pp-weight-from-update": load_pp_domain_batch,
}


def absmax(t):
    """Largest |value| of a tensor, read on the Python side (tolist is not an
    API msprobe wraps, so this leaves no entry in the dump)."""
    def walk(v):
        return max(walk(u) for u in v) if isinstance(v, list) else abs(v)
    return walk(t.tolist())


# --------------------------------------------------------------------------
# G. fp16-allreduce-two-groups
# --------------------------------------------------------------------------
class TPAllReduce(torch.autograd.Function):
    """Sum of the row-parallel partial outputs over the tensor-parallel group.
    Every shard needs the whole gradient of the sum: the backward is the
    identity."""

    @staticmethod
    def forward(ctx, partial, group):
        out = partial.clone()
        dist.all_reduce(out, group=group)
        return out

    @staticmethod
    def backward(ctx, grad):
        return grad, None


class TPTagger(nn.Module):
    """Per-token classifier split over 2 tensor-parallel shards: fc is column
    parallel (half of the hidden units per shard), the head row parallel (its
    half of the inputs); the head bias is replicated. The head starts at zero
    (uniform predictions at step 0)."""

    def __init__(self, shard, tp_group, shards=2):
        super().__init__()
        full_fc = nn.Linear(FEAT, D)
        part = slice(shard * D // shards, (shard + 1) * D // shards)
        self.tp_group = tp_group
        self.fc = nn.Linear(FEAT, D // shards)
        self.head_weight = nn.Parameter(torch.zeros(CLASSES, D // shards))
        self.head_bias = nn.Parameter(torch.zeros(CLASSES))
        with torch.no_grad():
            self.fc.weight.copy_(full_fc.weight[part])
            self.fc.bias.copy_(full_fc.bias[part])

    def forward(self, x):
        h = torch.tanh(self.fc(x))
        partial = F.linear(h, self.head_weight)
        return TPAllReduce.apply(partial, self.tp_group) + self.head_bias


class TPxDPFp16:
    """Tensor parallel 2 x data parallel 2. Ranks 0,1 hold shard 0 and ranks
    2,3 shard 1 (data-parallel groups [0,1] and [2,3]); ranks 0,2 read replica 0
    and ranks 1,3 replica 1 (tensor-parallel groups [0,2] and [1,3]).
    Token-summed loss with a static loss scale; gradients are sent as float16
    (all_reduce in the data-parallel group, in reversed parameters() order:
    fc.bias, fc.weight, head_bias, head_weight), then unscaled and divided by
    the group's token count in float32; Adam."""

    LOSS_SCALE = 2.0 ** 13

    def __init__(self, rank, debugger):
        self.rank = rank
        self.shard, self.replica = rank // 2, rank % 2
        # every rank creates every group, in the same order
        dp_groups = [dist.new_group([0, 1]), dist.new_group([2, 3])]
        tp_groups = [dist.new_group([0, 2]), dist.new_group([1, 3])]
        self.dp_group = dp_groups[self.shard]
        self.model = TPTagger(self.shard, tp_groups[self.replica])
        self.opt = torch.optim.Adam(self.model.parameters(), lr=0.01)

    def train_step(self, step, batch):
        model = self.model
        model.zero_grad()
        logits = model(batch["x"])
        loss_sum = F.cross_entropy(logits.reshape(-1, CLASSES), batch["y"].reshape(-1), reduction="sum")
        (loss_sum * self.LOSS_SCALE).backward()
        tokens = 2 * B * T                                        # tokens of the data-parallel group
        sent, got = [], []
        for p in reversed(list(model.parameters())):
            g16 = p.grad.half()
            sent.append(absmax(g16))
            dist.all_reduce(g16, group=self.dp_group)
            got.append(absmax(g16))
            p.grad.copy_(g16.float() / (self.LOSS_SCALE * tokens))
        local = loss_sum.detach() / (B * T)
        avg = avg_of(local, group=self.dp_group, size=2)
        self.opt.step()
        names = [n for n, _ in reversed(list(model.named_parameters()))]
        return {"local_loss": local.item(), "avg_loss": avg,
                "fp16_grad_absmax_sent": dict(zip(names, sent)),
                "fp16_grad_absmax_reduced": dict(zip(names, got))}


# --------------------------------------------------------------------------
# H. inf-absorbed-next-step
# --------------------------------------------------------------------------
class WideDeep(nn.Module):
    """Log-rate of a count: a linear ("wide") part on the raw amounts plus a
    small MLP ("deep") on their logs."""

    def __init__(self):
        super().__init__()
        self.wide = nn.Linear(FEAT, 1)
        self.deep = nn.Linear(FEAT, D)
        self.out = nn.Linear(D, 1)

    def forward(self, x):
        wide = self.wide(x)
        deep = self.out(F.softplus(self.deep(torch.log(x))))
        return (wide + deep).squeeze(-1)


class PoissonCounts:
    """Data parallel Poisson regression: loss = mean(exp(log_rate) - y * log_rate),
    gradient all_reduce per parameter, SGD."""

    def __init__(self, rank, debugger):
        self.rank = rank
        self.model = WideDeep()

    def train_step(self, step, batch):
        model = self.model
        model.zero_grad()
        log_rate = model(batch["x"])
        loss = (torch.exp(log_rate) - batch["y"] * log_rate).mean()
        loss.backward()
        grad_all_reduce(model.parameters())
        avg = avg_of(loss)
        sgd(model.parameters(), 0.01)
        return {"local_loss": loss.item(), "avg_loss": avg}


# --------------------------------------------------------------------------
# I. pp-weight-from-update
# --------------------------------------------------------------------------
class PlainStage0(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(FEAT, D)

    def forward(self, x):
        return torch.relu(self.fc(x))


class AdapterStage1(nn.Module):
    """One adapter per data domain; every adapter runs on every record and the
    routing one-hot mixes them."""

    def __init__(self, domains=3):
        super().__init__()
        self.fc = nn.Linear(D, D)
        self.adapters = nn.ModuleList([nn.Linear(D, D) for _ in range(domains)])
        self.head = nn.Linear(D, CLASSES)

    def forward(self, h, domain):
        h = torch.relu(self.fc(h))
        route = F.one_hot(domain, len(self.adapters)).to(h.dtype)   # [B, E]
        mixed = 0
        for e, adapter in enumerate(self.adapters):
            mixed = mixed + route[:, e, None] * adapter(h)
        return self.head(torch.relu(mixed))


def lars_foreach(params, lr, trust=0.02):
    """Layer-wise adaptive step: every tensor moves by lr * trust * |w| / |g| * g,
    with one torch._foreach_* call per list (the way fused optimizers work)."""
    params = list(params)
    grads = [p.grad for p in params]
    with torch.no_grad():
        w_norms = torch._foreach_norm(params)
        g_norms = torch._foreach_norm(grads)
        ratios = torch._foreach_div(w_norms, g_norms)
        scales = [-lr * trust * r.item() for r in ratios]
        torch._foreach_add_(params, torch._foreach_mul(grads, scales))


class PipelineAdapters:
    """Ranks 0,1 = stage 0, ranks 2,3 = stage 1; replica r = rank % 2, so
    0 -> 2 and 1 -> 3. GPipe order with 2 micro-batches, gradient all_reduce
    inside each stage's group, layer-wise adaptive update."""

    def __init__(self, rank, debugger):
        self.rank = rank
        torch.manual_seed(0)
        s0, s1 = PlainStage0(), AdapterStage1()
        self.stage = 0 if rank < 2 else 1
        self.model = s0 if self.stage == 0 else s1
        self.peer = rank + 2 if self.stage == 0 else rank - 2
        groups = [dist.new_group([0, 1]), dist.new_group([2, 3])]
        self.dp_group = groups[self.stage]

    def train_step(self, step, batch):
        model = self.model
        model.zero_grad()
        mbs = 2
        if self.stage == 0:
            outs = []
            for x in batch["x"]:
                h = model(x)
                dist.send(h.detach(), dst=self.peer)
                outs.append(h)
            for h in outs:
                gbuf = torch.empty(B, D)
                dist.recv(gbuf, src=self.peer)
                h.backward(gbuf)
            grad_all_reduce(model.parameters(), group=self.dp_group, size=2)
            lars_foreach(model.parameters(), 0.5)
            return {"local_loss": None, "avg_loss": None}
        losses, inputs = [], []
        for y, domain in zip(batch["y"], batch["domain"]):
            buf = torch.empty(B, D)
            dist.recv(buf, src=self.peer)
            buf.requires_grad_(True)
            losses.append(F.cross_entropy(model(buf, domain), y) / mbs)
            inputs.append(buf)
        for loss, buf in zip(losses, inputs):
            loss.backward()
            dist.send(buf.grad, dst=self.peer)
        grad_all_reduce(model.parameters(), group=self.dp_group, size=2)
        local = torch.stack([l.detach() for l in losses]).sum()
        avg = avg_of(local, group=self.dp_group, size=2)
        lars_foreach(model.parameters(), 0.5)
        domains = [d for mb in batch["domain"] for d in mb.tolist()]
        counts = [domains.count(e) for e in range(len(model.adapters))]
        return {"local_loss": local.item(), "avg_loss": avg, "records_per_domain": counts}


SCENARIOS.update({
    "fp16-allreduce-two-groups": TPxDPFp16,
    "inf-absorbed-next-step": PoissonCounts,
    "pp-weight-from-update": PipelineAdapters,
})



# ==========================================================================
# J, K, L, M. Later scenarios, appended so that every line above keeps its
# number: a where guard that hides a NaN until the backward, activation
# checkpointing (recompute in the backward), a module-level (L0) dump, and a
# 1F1B pipeline.
# ==========================================================================
from torch.utils.checkpoint import checkpoint  # noqa: E402

BAD_RECORDS.update({
    ("mask-hidden-sqrt", 2, 3): "negative-amount",            # x[1, 2, 5] < 0, a real token
    ("activation-checkpointing", 3, 3): "duplicated-token",   # x[1, 3] repeats x[1, 2]
    ("activation-checkpointing-nonreentrant", 3, 3): "duplicated-token",
    ("l0-module-only", 1, 3): "negative-amount",              # x[2, 4, 1] < 0
    ("pp-1f1b", 0, 3): "duplicated-token-mb2",                # replica 0, micro-batch 2, record 0
})

PP_MICRO_BATCHES, PP_MB = 4, 2                                # 4 micro-batches of 2 records


def load_padded_batch(rank, step):
    """Records of 3..T real tokens; padding positions hold the fill amount 1.0
    and the bool mask (True = real token) comes with the batch."""
    g = shard_generator(rank, step)
    x = torch.rand(B, T, FEAT, generator=g) * 1.5 + 0.5
    y = torch.randint(0, CLASSES, (B,), generator=g)
    lengths = torch.randint(3, T + 1, (B,), generator=g)
    mask = torch.arange(T)[None, :] < lengths[:, None]
    x = torch.where(mask[..., None], x, torch.ones_like(x))
    if BAD_RECORDS.get(("mask-hidden-sqrt", rank, step)) == "negative-amount":
        x[1, 2, 5] = -0.75                                        # a sign error in one amount
    return {"x": x, "y": y, "mask": mask}


def load_token_batch(scenario):
    """Plain token batches for a data-parallel scenario: B records of T tokens of
    FEAT positive amounts; the shard's bad record, if any."""
    def load(rank, step):
        g = shard_generator(rank, step)
        x = torch.rand(B, T, FEAT, generator=g) * 1.5 + 0.5
        y = torch.randint(0, CLASSES, (B,), generator=g)
        bad = BAD_RECORDS.get((scenario, rank, step))
        if bad == "duplicated-token":
            x[1, 3, :] = x[1, 2, :]                               # a repeated sensor reading
        elif bad == "negative-amount":
            x[2, 4, 1] = -0.75
        return {"x": x, "y": y}
    return load


def load_pp_token_batch(rank, step):
    """1F1B pipeline: replica r = rank % 2; stage 0 reads x, stage 1 reads y of
    the same records, PP_MICRO_BATCHES micro-batches of PP_MB records."""
    g = shard_generator(rank % 2, step)
    n = PP_MICRO_BATCHES * PP_MB
    x = torch.rand(n, T, FEAT, generator=g) * 1.5 + 0.5
    y = torch.randint(0, CLASSES, (n,), generator=g)
    if BAD_RECORDS.get(("pp-1f1b", rank % 2, step)) == "duplicated-token-mb2":
        x[2 * PP_MB, 3, :] = x[2 * PP_MB, 2, :]                   # record 0 of micro-batch 2
    return {"x": list(x.split(PP_MB)), "y": list(y.split(PP_MB))}


OWN_LAYOUT.update({
    "mask-hidden-sqrt": load_padded_batch,
    "activation-checkpointing": load_token_batch("activation-checkpointing"),
    "activation-checkpointing-nonreentrant": load_token_batch("activation-checkpointing-nonreentrant"),
    "l0-module-only": load_token_batch("l0-module-only"),
    "pp-1f1b": load_pp_token_batch,
})


# --------------------------------------------------------------------------
# J. mask-hidden-sqrt
# --------------------------------------------------------------------------
class SqrtAmounts(nn.Module):
    """Square-root compression of the amounts after a learned per-feature
    scale, guarded by torch.where against non-positive values."""

    def __init__(self):
        super().__init__()
        self.scale = nn.Parameter(torch.ones(FEAT))

    def forward(self, x):
        a = x * self.scale
        return torch.where(a > 0, torch.sqrt(a), torch.zeros_like(a))


class MaskedMeanPool(nn.Module):
    """Mean over the real tokens (mask True)."""

    def forward(self, h, mask):
        w = mask[..., None].float()
        return (h * w).sum(dim=1) / w.sum(dim=1)


class GuardedSqrtNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.feat = SqrtAmounts()
        self.inp = nn.Linear(FEAT, D)
        self.pool = MaskedMeanPool()
        self.head = nn.Linear(D, CLASSES)

    def forward(self, x, mask):
        h = torch.tanh(self.inp(self.feat(x)))
        return self.head(self.pool(h, mask))


class MaskHiddenSqrt:
    """Data parallel, gradient all_reduce per parameter, torch.optim.SGD."""

    def __init__(self, rank, debugger):
        self.rank = rank
        self.model = GuardedSqrtNet()
        self.opt = torch.optim.SGD(self.model.parameters(), lr=0.05)

    def train_step(self, step, batch):
        model = self.model
        self.opt.zero_grad()
        loss = F.cross_entropy(model(batch["x"], batch["mask"]), batch["y"])
        loss.backward()
        grad_all_reduce(model.parameters())
        avg = avg_of(loss)
        self.opt.step()
        return {"local_loss": loss.item(), "avg_loss": avg}


# --------------------------------------------------------------------------
# K. activation-checkpointing (and its non-reentrant variant)
# --------------------------------------------------------------------------
class MotionBlock(nn.Module):
    """Token features plus the length of each step between consecutive tokens
    in the hidden space."""

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(D, D)
        self.speed_proj = nn.Linear(1, D)

    def forward(self, h):
        d = h[:, 1:] - h[:, :-1]
        speed = torch.sqrt((d * d).sum(dim=-1, keepdim=True))
        return torch.tanh(self.fc(h[:, 1:]) + self.speed_proj(speed))


class CheckpointedNet(nn.Module):
    def __init__(self, reentrant):
        super().__init__()
        self.reentrant = reentrant
        self.inp = nn.Linear(FEAT, D)
        self.block = MotionBlock()
        self.head = nn.Linear(D, CLASSES)

    def forward(self, x):
        h = self.inp(x)
        h = checkpoint(self.block, h, use_reentrant=self.reentrant)   # recomputed in the backward
        return self.head(h.mean(dim=1))


class ActivationCheckpointing:
    """Data parallel, gradient all_reduce per parameter, SGD; the block's
    activations are not kept but recomputed during the backward."""

    reentrant = True

    def __init__(self, rank, debugger):
        self.rank = rank
        self.model = CheckpointedNet(self.reentrant)

    def train_step(self, step, batch):
        model = self.model
        model.zero_grad()
        loss = F.cross_entropy(model(batch["x"]), batch["y"])
        loss.backward()
        grad_all_reduce(model.parameters())
        avg = avg_of(loss)
        sgd(model.parameters(), 0.05)
        return {"local_loss": loss.item(), "avg_loss": avg}


class ActivationCheckpointingNonReentrant(ActivationCheckpointing):
    reentrant = False


# --------------------------------------------------------------------------
# L. l0-module-only
# --------------------------------------------------------------------------
class LogLinear(nn.Module):
    """Linear layer on the logs of positive amounts (a leaf module: the log is
    inside it)."""

    def __init__(self, n_in, n_out):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(n_out, n_in) / math.sqrt(n_in))
        self.bias = nn.Parameter(torch.zeros(n_out))

    def forward(self, x):
        return F.linear(torch.log(x), self.weight, self.bias)


class AmountTagger(nn.Module):
    def __init__(self):
        super().__init__()
        self.enc = LogLinear(FEAT, D)
        self.mid = nn.Linear(D, D)
        self.act = nn.Tanh()
        self.head = nn.Linear(D, CLASSES)

    def forward(self, x):
        h = self.act(self.mid(self.act(self.enc(x))))
        return self.head(h.mean(dim=1))


class ModuleOnly:
    """Data parallel, gradient all_reduce per parameter, SGD; dumped at L0."""

    def __init__(self, rank, debugger):
        self.rank = rank
        self.model = AmountTagger()

    def train_step(self, step, batch):
        model = self.model
        model.zero_grad()
        loss = F.cross_entropy(model(batch["x"]), batch["y"])
        loss.backward()
        grad_all_reduce(model.parameters())
        avg = avg_of(loss)
        sgd(model.parameters(), 0.05)
        return {"local_loss": loss.item(), "avg_loss": avg}


# --------------------------------------------------------------------------
# M. pp-1f1b
# --------------------------------------------------------------------------
class TokenStage0(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(FEAT, D)

    def forward(self, x):
        return torch.tanh(self.fc(x))


class MotionStage1(nn.Module):
    """Token features plus the step length between consecutive tokens of the
    received activations."""

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(D, D)
        self.speed_proj = nn.Linear(1, D)
        self.head = nn.Linear(D, CLASSES)

    def forward(self, h):
        z = torch.tanh(self.fc(h))
        d = z[:, 1:] - z[:, :-1]
        speed = torch.sqrt((d * d).sum(dim=-1, keepdim=True))
        return self.head((z[:, 1:] + self.speed_proj(speed)).mean(dim=1))


class Pipeline1F1B:
    """Ranks 0,1 = stage 0, ranks 2,3 = stage 1; replica r = rank % 2, so
    0 -> 2 and 1 -> 3. One-forward-one-backward schedule over
    PP_MICRO_BATCHES micro-batches with blocking keyword send/recv: stage 0
    runs one forward ahead (warm-up), then alternates forward of micro-batch
    i+1 and backward of micro-batch i; stage 1 runs forward and backward of
    each micro-batch as it arrives. Gradient all_reduce in each stage's
    group, SGD."""

    def __init__(self, rank, debugger):
        self.rank = rank
        torch.manual_seed(0)
        s0, s1 = TokenStage0(), MotionStage1()
        self.stage = 0 if rank < 2 else 1
        self.model = s0 if self.stage == 0 else s1
        self.peer = rank + 2 if self.stage == 0 else rank - 2
        groups = [dist.new_group([0, 1]), dist.new_group([2, 3])]
        self.dp_group = groups[self.stage]

    def train_step(self, step, batch):
        model = self.model
        model.zero_grad()
        mbs = PP_MICRO_BATCHES
        if self.stage == 0:
            xs = batch["x"]
            outs = [model(xs[0])]                                 # warm-up: forward 0
            dist.send(outs[0].detach(), dst=self.peer)            # activation 0
            for i in range(mbs - 1):                              # steady: F(i+1), B(i)
                outs.append(model(xs[i + 1]))
                gbuf = torch.empty(PP_MB, T, D)
                dist.recv(gbuf, src=self.peer)                    # gradient i
                dist.send(outs[i + 1].detach(), dst=self.peer)    # activation i+1
                outs[i].backward(gbuf)
            gbuf = torch.empty(PP_MB, T, D)                       # cool-down: B(last)
            dist.recv(gbuf, src=self.peer)                        # gradient last
            outs[-1].backward(gbuf)
            grad_all_reduce(model.parameters(), group=self.dp_group, size=2)
            sgd(model.parameters(), 0.05)
            return {"local_loss": None, "avg_loss": None}
        losses = []
        for y in batch["y"]:
            buf = torch.empty(PP_MB, T, D)
            dist.recv(buf, src=self.peer)
            buf.requires_grad_(True)
            loss = F.cross_entropy(model(buf), y) / mbs
            loss.backward()
            dist.send(buf.grad, dst=self.peer)
            losses.append(loss.detach())
        grad_all_reduce(model.parameters(), group=self.dp_group, size=2)
        local = torch.stack(losses).sum()
        avg = avg_of(local, group=self.dp_group, size=2)
        sgd(model.parameters(), 0.05)
        return {"local_loss": local.item(), "avg_loss": avg}


SCENARIOS.update({
    "mask-hidden-sqrt": MaskHiddenSqrt,
    "activation-checkpointing": ActivationCheckpointing,
    "activation-checkpointing-nonreentrant": ActivationCheckpointingNonReentrant,
    "l0-module-only": ModuleOnly,
    "pp-1f1b": Pipeline1F1B,
})


# --------------------------------------------------------------------------
# N. sparse-steps-undumped-origin: the model and update of l0-module-only,
# dumped at L1 every other step only ("step": [0, 2, 4]); the bad record
# comes in step 3, which is trained but not dumped.
# --------------------------------------------------------------------------
BAD_RECORDS[("sparse-steps-undumped-origin", 1, 3)] = "negative-amount"   # x[2, 4, 1] < 0
OWN_LAYOUT["sparse-steps-undumped-origin"] = load_token_batch("sparse-steps-undumped-origin")
SCENARIOS["sparse-steps-undumped-origin"] = ModuleOnly



# ==========================================================================
# O, P, Q, R. Runs that climb towards a float16 limit before the first
# non-finite value (and one that must not warn): every step is dumped, each
# run trains 10 steps, and the training log adds the total gradient norm
# after the all_reduce. Nothing here looks at the step number except the
# learning-rate warm-up and the data tables.
# ==========================================================================
def grad_norm_of(params):
    """Total norm of the gradients, read on the Python side (tolist leaves no
    entry in the dump)."""
    def walk(v):
        return sum(walk(u) for u in v) if isinstance(v, list) else float(v) * float(v)
    return math.sqrt(sum(walk(p.grad.tolist()) for p in params if p.grad is not None))


def load_count_channels(rank, step):
    """Counts per channel: B records of FEAT amounts and 4 channel counts of
    15000..45000 each (daily events, not rescaled)."""
    g = shard_generator(rank, step)
    x = torch.rand(B, FEAT, generator=g) * 1.5 + 0.5
    y = torch.round(30000.0 * (0.5 + torch.rand(B, 4, generator=g)))
    return {"x": x, "y": y}


def load_raw_amounts(rank, step):
    """Regression on raw amounts (5..20 per feature, not normalised); the
    target is 1000 times their sum (about 100000: an amount in tenths of a
    cent)."""
    g = shard_generator(rank, step)
    x = (torch.rand(B, T, FEAT, generator=g) * 1.5 + 0.5) * 10.0
    return {"x": x, "y": x.sum(dim=-1, keepdim=True) * 1000.0}


MIX = torch.randn(FEAT, 4, generator=torch.Generator().manual_seed(7))   # the targets' true map


def load_multi_target(rank, step):
    """Four regression targets, a fixed linear map of the amounts."""
    g = shard_generator(rank, step)
    x = torch.rand(B, T, FEAT, generator=g) * 1.5 + 0.5
    return {"x": x, "y": x @ MIX}


BAD_RECORDS[("warn-clean-warmup", 2, 5)] = "weight-12"   # the sampler gave one record weight 12


def load_clean_batch(rank, step):
    """Padded token records with a class that the amounts decide (the
    largest mean of features 0..3), a sensor reading near 30000 that the
    model rescales, and the sampler's importance weight of each record."""
    g = shard_generator(rank, step)
    x = torch.rand(B, T, FEAT, generator=g) * 1.5 + 0.5
    lengths = torch.randint(3, T + 1, (B,), generator=g)
    mask = torch.arange(T)[None, :] < lengths[:, None]
    elev = 30000.0 + torch.rand(B, T, 1, generator=g) * 64.0
    y = x[..., :CLASSES].mean(dim=1).argmax(dim=-1)
    weight = torch.ones(B)
    if BAD_RECORDS.get(("warn-clean-warmup", rank, step)) == "weight-12":
        weight[1] = 12.0
    return {"x": x, "y": y, "mask": mask, "elev": elev, "weight": weight}


OWN_LAYOUT.update({
    "warn-exp-lr": load_count_channels,
    "warn-fp16-activations": load_raw_amounts,
    "warn-fp16-grad-sum": load_multi_target,
    "warn-clean-warmup": load_clean_batch,
})


# --------------------------------------------------------------------------
# O. warn-exp-lr: a Poisson rate per channel, exp(log_rate) stored in float16
# --------------------------------------------------------------------------
class ChannelRates(nn.Module):
    def __init__(self):
        super().__init__()
        self.enc = nn.Linear(FEAT, D)
        self.rate = nn.Linear(D, 4)

    def forward(self, x):
        log_rate = self.rate(torch.tanh(self.enc(x - 1.25)))
        return log_rate, torch.exp(log_rate).half()       # rates kept in float16


class ExpLearningRate:
    """Poisson loss of the channel counts on the float16 rates plus the
    multinomial loss of their shares; Adam (its foreach form) with a
    learning rate far too high for it (0.13)."""

    def __init__(self, rank, debugger):
        self.rank = rank
        self.model = ChannelRates()
        self.opt = torch.optim.Adam(self.model.parameters(), lr=0.13, foreach=True)

    def train_step(self, step, batch):
        model, y = self.model, batch["y"]
        self.opt.zero_grad()
        log_rate, rate16 = model(batch["x"])
        rate = rate16.float()
        share = rate / rate.sum(dim=-1, keepdim=True)                  # each channel's share
        loss = F.poisson_nll_loss(rate, y, log_input=False) - (y * torch.log(share)).mean()
        loss.backward()
        grad_all_reduce(model.parameters())
        avg = avg_of(loss)
        norm = grad_norm_of(model.parameters())
        self.opt.step()
        return {"local_loss": loss.item(), "avg_loss": avg, "grad_norm": norm}


# --------------------------------------------------------------------------
# P. warn-fp16-activations: a squared-ReLU MLP on raw amounts, float16 product
# --------------------------------------------------------------------------
class SquaredReluNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(FEAT, D)
        self.out = nn.Linear(D, 1)

    def forward(self, x):
        a = torch.relu(self.fc(x))
        sq = (a * a).half()                               # squared ReLU, stored in float16
        return self.out(sq.float())


class Fp16Activations:
    """Un-normalised inputs and targets, SGD with a learning rate too high
    for them (2.3e-9): the squared activations double step after step."""

    def __init__(self, rank, debugger):
        self.rank = rank
        self.model = SquaredReluNet()
        self.opt = torch.optim.SGD(self.model.parameters(), lr=2.3e-9)

    def train_step(self, step, batch):
        model = self.model
        self.opt.zero_grad()
        loss = F.mse_loss(model(batch["x"]), batch["y"])
        loss.backward()
        grad_all_reduce(model.parameters())
        avg = avg_of(loss)
        norm = grad_norm_of(model.parameters())
        self.opt.step()
        return {"local_loss": loss.item(), "avg_loss": avg, "grad_norm": norm}


# --------------------------------------------------------------------------
# Q. warn-fp16-grad-sum: float16 gradient bucket, summed before it is divided
# --------------------------------------------------------------------------
class Fp16GradSum:
    """Multi-target linear regression, static loss scale 64, the gradients
    flattened into one bucket, cast to float16 and all_reduced (summed; the
    division by the world size comes after the sum), SGD at lr 0.4, past the
    edge of stability of these features (about 0.3)."""

    def __init__(self, rank, debugger):
        self.rank = rank
        self.model = nn.Linear(FEAT, 4)
        self.opt = torch.optim.SGD(self.model.parameters(), lr=0.4)
        self.scale = 64.0

    def train_step(self, step, batch):
        model = self.model
        params = list(model.parameters())
        self.opt.zero_grad()
        loss = F.mse_loss(model(batch["x"]), batch["y"])
        (loss * self.scale).backward()
        bucket = torch.cat([p.grad.reshape(-1) for p in params]).half()
        dist.all_reduce(bucket)
        with torch.no_grad():
            off = 0
            for p in params:
                n = p.numel()
                p.grad.copy_(bucket[off:off + n].view_as(p).float() / (self.scale * WORLD))
                off += n
        avg = avg_of(loss)
        norm = grad_norm_of(params)
        self.opt.step()
        return {"local_loss": loss.item(), "avg_loss": avg, "grad_norm": norm, "loss_scale": self.scale}


# --------------------------------------------------------------------------
# R. warn-clean-warmup: a clean run full of things that look alarming
# --------------------------------------------------------------------------
class MaskedTokenNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.inp = nn.Linear(FEAT + 1, D)
        self.head = nn.Linear(2 * D, CLASSES)

    def forward(self, x, mask, elev):
        elev16 = elev.half() / 32768.0                    # a reading near 30000, in float16
        h = torch.tanh(self.inp(torch.cat([x, elev16.float()], dim=-1)))
        s = torch.matmul(h, h.transpose(1, 2))
        causal = torch.ones(T, T).triu(1).bool()
        s = s.masked_fill(causal, float("-inf"))          # causal mask: -inf
        pad16 = (~mask).half() * -1e4                      # padding bias: -1e4 in float16
        att = torch.softmax(s + pad16.float()[:, None, :], dim=-1)
        ctx = torch.matmul(att, h)
        far16 = h.half().masked_fill(~mask[..., None], 65504.0)   # padding: float16 max
        nearest = far16.float().amin(dim=1)                # min over the real tokens
        return self.head(torch.cat([ctx[:, -1], nearest], dim=-1))   # the last token sees all


class CleanWarmup:
    """Importance-weighted cross-entropy, one gradient bucket all_reduced,
    SGD with a linear learning-rate warm-up over 4 steps to 0.3."""

    def __init__(self, rank, debugger):
        self.rank = rank
        self.model = MaskedTokenNet()
        self.opt = torch.optim.SGD(self.model.parameters(), lr=0.3, foreach=True)

    def train_step(self, step, batch):
        model = self.model
        lr = 0.3 * min(1.0, (step + 1) / 4)
        for group in self.opt.param_groups:
            group["lr"] = lr
        self.opt.zero_grad()
        logits = model(batch["x"], batch["mask"], batch["elev"])
        loss = (F.cross_entropy(logits, batch["y"], reduction="none") * batch["weight"]).mean()
        loss.backward()
        params = list(model.parameters())
        bucket = torch.cat([p.grad.reshape(-1) for p in params])      # one gradient bucket
        dist.all_reduce(bucket)
        bucket.div_(WORLD)
        with torch.no_grad():
            off = 0
            for p in params:
                p.grad.copy_(bucket[off:off + p.numel()].view_as(p))
                off += p.numel()
        avg = avg_of(loss)
        norm = grad_norm_of(model.parameters())
        self.opt.step()
        return {"local_loss": loss.item(), "avg_loss": avg, "grad_norm": norm, "lr": lr}


SCENARIOS.update({
    "warn-exp-lr": ExpLearningRate,
    "warn-fp16-activations": Fp16Activations,
    "warn-fp16-grad-sum": Fp16GradSum,
    "warn-clean-warmup": CleanWarmup,
})



# --------------------------------------------------------------------------
# The monitor run: msprobe's TrainerMon (module_hook) on torch 1.13, in a run
# of its own without the dumper (the monitor's own min/max/norm/isnan calls
# would otherwise be dumped). TrainerMon needs torch >= 2.0; five runtime
# patches make it import and hook on 1.13 (msprobe itself is not changed).
# --------------------------------------------------------------------------
class _TorchProxy:
    """torch, except that no_grad also accepts the bare @torch.no_grad form."""

    def __getattr__(self, name):
        return getattr(torch, name)

    @staticmethod
    def no_grad(fn=None):
        return torch.no_grad()(fn) if callable(fn) else torch.no_grad()


def import_trainermon():
    import sys
    tb = types.ModuleType("torch.utils.tensorboard")           # 1. only its writer uses it
    tb.SummaryWriter = type("SummaryWriter", (), {"__init__": lambda self, *a, **k: None})
    sys.modules.setdefault("torch.utils.tensorboard", tb)
    fsdp = types.ModuleType("torch.distributed.fsdp")          # 2. fails to import on 1.13 + Python 3.11
    fsdp.FullyShardedDataParallel = type("FullyShardedDataParallel", (), {})
    sys.modules["torch.distributed.fsdp"] = fsdp
    import msprobe.pytorch  # noqa: F401                       (imported with the real version)
    real_version = torch.__version__                           # 3. the version check at import
    torch.__version__ = "2.0.0"
    try:
        from msprobe.pytorch.monitor import module_hook
    finally:
        torch.__version__ = real_version
    module_hook.torch = _TorchProxy()                          # 4. bare @torch.no_grad
    plain = nn.Module.register_forward_hook                    # 5. with_kwargs=True (torch 2.0)

    def register_forward_hook(self, hook, with_kwargs=False):
        if not with_kwargs:
            return plain(self, hook)
        return plain(self, lambda m, args, out: hook(m, args, {}, out))
    nn.Module.register_forward_hook = register_forward_hook
    return module_hook.TrainerMon


def monitor_worker(rank, args):
    torch.set_num_threads(1)
    os.environ["MONITOR_OUTPUT_DIR"] = args.monitor_dir
    dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{args.port}",
                            rank=rank, world_size=WORLD)
    random.seed(rank)
    torch.manual_seed(0)                          # the same initial weights as the dumped run
    trainer_mon = import_trainermon()
    job = SCENARIOS[args.scenario](rank, None)
    monitor = trainer_mon(args.monitor_config, params_have_main_grad=False)
    monitor.set_monitor(job.model, grad_acc_steps=1, optimizer=job.opt)
    torch.manual_seed(rank)
    log = []
    for step in range(args.steps):
        rec = job.train_step(step, load_batch(args.scenario, rank, step))
        log.append({"step": step, **rec, "nonfinite_params": nonfinite_params(job.model),
                    "nonfinite_buffers": nonfinite_buffers(job.model)})
    os.makedirs(args.log_dir, exist_ok=True)
    with open(os.path.join(args.log_dir, f"rank{rank}.json"), "w") as f:
        json.dump({"scenario": args.scenario, "rank": rank, "steps": log}, f, indent=1)
        f.write("\n")
    dist.barrier()
    dist.destroy_process_group()


def monitor_main():
    ap = argparse.ArgumentParser(description="the same training, watched by TrainerMon")
    ap.add_argument("--scenario", required=True, choices=["mask-hidden-sqrt", "warn-exp-lr", "warn-fp16-activations",
                                                        "warn-fp16-grad-sum", "warn-clean-warmup"])
    ap.add_argument("--monitor-config", required=True, help="TrainerMon config.json")
    ap.add_argument("--monitor-dir", required=True, help="MONITOR_OUTPUT_DIR")
    ap.add_argument("--steps", type=int, default=5)
    ap.add_argument("--port", type=int, default=29600)
    ap.add_argument("--log-dir", required=True, help="where to write rank<N>.json")
    args = ap.parse_args()
    mp.spawn(monitor_worker, args=(args,), nprocs=WORLD, join=True)


if __name__ == "__main__":
    if "--monitor-config" in os.sys.argv:
        monitor_main()
    else:
        main()
