#!/usr/bin/python3
"""nn_torch.py: the xqzero network (common/nn/nn_model.h) in PyTorch, timed the way
`xqz bench nn` times ours: inference positions/s at batch 1, 8, 32, 64, 256 and training
samples/s (forward with batch-statistics BN, loss, backward, SGD step) at batch 256, for
the default 6x64 and large 10x128 nets. Prints one JSON object like `xqz bench nn --json`.

Inference is timed eval-mode under inference_mode, both eager and as a frozen TorchScript
module (which folds BN into the convolutions, as ours does); the faster is reported, so
PyTorch gets its best showing. Used by scripts/bench/nn_vs_torch.sh."""
import argparse
import json
import sys
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

PLANES, HW, POLICY = 18, 90, 2086


class Block(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.c1 = nn.Conv2d(c, c, 3, padding=1, bias=False)
        self.b1 = nn.BatchNorm2d(c)
        self.c2 = nn.Conv2d(c, c, 3, padding=1, bias=False)
        self.b2 = nn.BatchNorm2d(c)

    def forward(self, x):
        y = F.relu(self.b1(self.c1(x)))
        return F.relu(self.b2(self.c2(y)) + x)


class Net(nn.Module):
    def __init__(self, blocks, c):
        super().__init__()
        hidden = 2 * c
        self.stem = nn.Sequential(nn.Conv2d(PLANES, c, 3, padding=1, bias=False),
                                  nn.BatchNorm2d(c), nn.ReLU())
        self.tower = nn.Sequential(*[Block(c) for _ in range(blocks)])
        self.pconv = nn.Sequential(nn.Conv2d(c, 2, 1, bias=False), nn.BatchNorm2d(2), nn.ReLU())
        self.pfc = nn.Linear(2 * HW, POLICY)
        self.vconv = nn.Sequential(nn.Conv2d(c, 1, 1, bias=False), nn.BatchNorm2d(1), nn.ReLU())
        self.vfc1 = nn.Linear(HW, hidden)
        self.vfc2 = nn.Linear(hidden, 1)

    def forward(self, x):
        t = self.tower(self.stem(x))
        p = self.pfc(self.pconv(t).flatten(1))
        v = torch.tanh(self.vfc2(F.relu(self.vfc1(self.vconv(t).flatten(1)))))
        return p, v.squeeze(1)


def best_time(fn, min_time):
    fn()
    best = float("inf")
    for _ in range(3):
        calls, t0 = 0, time.perf_counter()
        while True:
            fn()
            calls += 1
            t = time.perf_counter() - t0
            if t >= min_time:
                break
        best = min(best, t / calls)
    return best


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--train-only", action="store_true",
                    help="only the training rate (scripts/bench/trainer.sh)")
    ap.add_argument("--nets", default="6x64,10x128", help="BxC,... (tiny is 2x16)")
    a = ap.parse_args()
    torch.set_num_threads(a.threads)
    torch.manual_seed(1)
    min_time = 0.12 if a.quick else 0.4
    batches = [1, 32, 256] if a.quick else [1, 8, 32, 64, 256]
    out = {"threads": a.threads, "torch": torch.__version__, "infer": {}, "train": {},
           "infer_mode": {}}
    for blocks, c in [tuple(int(v) for v in bc.split("x")) for bc in a.nets.split(",")]:
        label = f"{blocks}x{c}"
        net = Net(blocks, c)
        net.eval()
        x_all = (torch.rand(256, PLANES, 10, 9) < 1 / 16).float()
        if not a.train_only:
            with torch.inference_mode():
                frozen = torch.jit.freeze(torch.jit.trace(net, x_all[:1]))
        out["infer"][label], out["infer_mode"][label] = {}, {}
        for n in [] if a.train_only else batches:
            x = x_all[:n].contiguous()
            with torch.inference_mode():
                t_eager = best_time(lambda: net(x), min_time)
                t_frozen = best_time(lambda: frozen(x), min_time)
            mode = "frozen" if t_frozen < t_eager else "eager"
            out["infer"][label][str(n)] = round(n / min(t_eager, t_frozen), 1)
            out["infer_mode"][label][str(n)] = mode
            print(f"torch {label} infer {n}: {out['infer'][label][str(n)]}/s ({mode})",
                  file=sys.stderr, flush=True)
        # Training: soft-target cross-entropy + MSE, L2 as weight decay, SGD momentum.
        net.train()
        opt = torch.optim.SGD(net.parameters(), lr=1e-4, momentum=0.9, weight_decay=1e-4)
        n = 256
        x = x_all[:n].contiguous()
        pi = torch.zeros(n, POLICY)
        idx = torch.randint(0, POLICY, (n, 8))
        pi.scatter_(1, idx, 0.125)
        z = (torch.arange(n) % 3 - 1).float()

        def step():
            opt.zero_grad(set_to_none=True)
            p, v = net(x)
            loss = -(pi * F.log_softmax(p, dim=1)).sum(1).mean() + F.mse_loss(v, z)
            loss.backward()
            opt.step()

        t = best_time(step, min_time if a.quick else 2 * min_time)
        out["train"][label] = {str(n): round(n / t, 1)}
        print(f"torch {label} train {n}: {out['train'][label][str(n)]}/s", file=sys.stderr,
              flush=True)
    print(json.dumps(out))


if __name__ == "__main__":
    main()
