#!/usr/bin/python3
"""Regenerates tests/fixtures/nn_tiny_ref.bin, the PyTorch reference for the network.

Builds the xqzero architecture in PyTorch (float64), loads the weights of the tiny net
that `xqz net init --size tiny --seed 1 --id 1` writes (or of another --size), feeds fixed random input planes,
legal masks and sparse targets, and records: the training-mode policy logits and values,
the loss terms, the gradient of every parameter after one backward pass (the large
policy FC weight every STRIDE-th element, to keep the fixture small), the BN running
statistics after that forward pass, and the eval-mode logits and values with the
updated statistics. tests/unit/test_nn_fixture.c compares xqzero's numbers with these.

A net with global pooling (--size tiny-g) starts with zero pooling weights; the script
replaces them with fixed random ones (GPOOL_STD) so their path carries gradient, and
records them as "param.<name>" for the C test to load. The max's gradient goes to the
index max(dim) returns, the first maximum, as in xqzero.

A net with line convolutions (--size tiny-l) gets the same treatment for its rank and
file weights: in each block, a 1x9 and a 10x1 convolution without padding, whose outputs
(one per rank, one per file) are added back along their lines.

A net with the survival head (--size tiny-s) gets fixed survival targets (the squares of
the input's non-king pieces trained, each kept or lost at random, one sample with none);
its loss adds WS times the batch mean of each sample's mean binary cross-entropy, and the
fixture records the head's training and eval-mode logits and the folded probabilities.
Other sizes draw exactly what they drew before the head existed, so their fixtures stay
byte for byte the same.

A net with the opponent-reply head (--size tiny-sr, with the survival head too) gets a
from and a to square per sample (sample 2 has none: the last position of a game), drawn
from a generator of their own (REPLY_SEED) after everything else; its loss adds WR times
the batch mean of each sample's mean of two cross-entropies (the softmax of channel 0 over
the 90 squares against the from square, of channel 1 against the to square), after the
survival term, and the fixture records the head's training and eval-mode logits.

The value head's channel count comes from the header too: the wide value head (--size
tiny-v) has four, read like the others, so nothing else the script draws changes.

The plane count comes from the weights file's header (its input planes). A net with the
attack planes (--size tiny-a, input version 2, 20 planes) gets planes 18 and 19, the
mover's and the opponent's attack maps, as random 0/1 squares (about a third attacked),
drawn from a generator of their own (ATTACK_SEED), so the 18 planes and everything else
the inputs hold are what the other sizes draw, and their fixtures stay byte for byte the
same; the stem convolution reads all 20 planes.

Usage (Debian's torch lives under /usr/bin/python3):
    /usr/bin/python3 scripts/gen_nn_fixture.py --xqz build/tools/xqz
    /usr/bin/python3 scripts/gen_nn_fixture.py --xqz build/tools/xqz --size tiny-g \
        --out tests/fixtures/nn_tiny_gpool_ref.bin
    /usr/bin/python3 scripts/gen_nn_fixture.py --xqz build/tools/xqz --size tiny-s \
        --out tests/fixtures/nn_tiny_surv_ref.bin
    /usr/bin/python3 scripts/gen_nn_fixture.py --xqz build/tools/xqz --size tiny-l \
        --out tests/fixtures/nn_tiny_lines_ref.bin
    /usr/bin/python3 scripts/gen_nn_fixture.py --xqz build/tools/xqz --size tiny-a \
        --out tests/fixtures/nn_tiny_attacks_ref.bin
    /usr/bin/python3 scripts/gen_nn_fixture.py --xqz build/tools/xqz --size tiny-sr \
        --out tests/fixtures/nn_tiny_reply_ref.bin
    /usr/bin/python3 scripts/gen_nn_fixture.py --xqz build/tools/xqz --size tiny-v \
        --out tests/fixtures/nn_tiny_value_ref.bin

Fixture format: magic b"XQZFIX1\\0", then records until EOF, each: u32 name length,
name (ASCII), u32 count, count little-endian float32 values.
"""
import argparse
import os
import struct
import subprocess
import sys
import tempfile
import zlib

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

POLICY = 2086
HW = 90
BASE_PLANES = 18  # planes of input version 1; a file with more has the attack planes
ATTACK_PLANES = 2 # the mover's and the opponent's attack maps (input version 2)
ATTACK_SEED = 13  # the attack planes' own generator (7 is the pooling/line weights', 11 survival's)
STRIDE = 13 # policy.fc.w gradient subsampling
N = 4       # batch size
LEGAL = 30  # legal moves per sample
TARGETS = 5 # pi entries per sample
WP, WV, C_L2 = 1.0, 1.0, 1e-4
GPOOL_STD = 0.2 # global pooling and line weights of the reference (xqzero starts them at zero)
WS = 0.8        # survival loss weight (survival nets only)
WR = 0.6        # reply loss weight (reply nets only)
REPLY_SEED = 17 # the reply targets' own generator


def read_xqzn(path):
    b = open(path, "rb").read()
    assert b[:8] == b"XQZN\r\n\x1a\n", "bad magic"
    (version, hsize, in_ver, in_planes, blocks, ch, pch, vch, hidden, psize) = \
        struct.unpack_from("<10I", b, 8)
    assert (in_ver, in_planes) in ((1, BASE_PLANES), (2, BASE_PLANES + ATTACK_PLANES)), \
        "input version %d with %d planes" % (in_ver, in_planes)
    nparams, nstats = struct.unpack_from("<2Q", b, 80)
    (pcrc,) = struct.unpack_from("<I", b, 96)
    (gpool_every,) = struct.unpack_from("<I", b, 112) if version >= 3 else (0,)
    (survival,) = struct.unpack_from("<I", b, 116) if version >= 4 else (0,)
    (lines,) = struct.unpack_from("<I", b, 120) if version >= 5 else (0,)
    (reply,) = struct.unpack_from("<I", b, 124) if version >= 6 else (0,)
    payload = b[hsize:]
    assert zlib.crc32(payload) == pcrc, "payload checksum"
    floats = np.frombuffer(payload, dtype="<f4")
    assert floats.size == nparams + nstats
    arch = dict(blocks=blocks, channels=ch, pch=pch, vch=vch, hidden=hidden,
                gpool_every=gpool_every, survival=survival, lines=lines, reply=reply,
                planes=in_planes)
    return arch, floats[:nparams].copy(), floats[nparams:].copy(), pcrc


class ConvBN(nn.Module):
    def __init__(self, cin, cout, k):
        super().__init__()
        self.conv = nn.Conv2d(cin, cout, k, padding=k // 2, bias=False)
        self.bn = nn.BatchNorm2d(cout, eps=1e-5, momentum=0.1)


class Net(nn.Module):
    def __init__(self, a):
        super().__init__()
        c = a["channels"]
        self.tower = nn.ModuleList([ConvBN(a["planes"], c, 3)])
        for _ in range(a["blocks"]):
            self.tower.append(ConvBN(c, c, 3))
            self.tower.append(ConvBN(c, c, 3))
        self.pol = ConvBN(c, a["pch"], 1)
        self.pol_fc = nn.Linear(a["pch"] * HW, POLICY)
        self.val = ConvBN(c, a["vch"], 1)
        self.val_fc1 = nn.Linear(a["vch"] * HW, a["hidden"])
        self.val_fc2 = nn.Linear(a["hidden"], 1)
        self.blocks = a["blocks"]
        # Global pooling bias of block b (C, 2C), or None: every gpool_every-th block
        # counting from the last, as nn_arch_pools says.
        k = a["gpool_every"]
        self.gpool = nn.ParameterList()
        self.gpool_of = {}
        for b in range(self.blocks):
            if k and (self.blocks - 1 - b) % k == 0:
                self.gpool_of[b] = len(self.gpool)
                self.gpool.append(nn.Parameter(torch.zeros(c, 2 * c)))
        # Line convolutions of every block: rank (C, C, 1, 9) and file (C, C, 10, 1).
        self.lines = nn.ParameterList()
        if a["lines"]:
            for _ in range(self.blocks):
                self.lines.append(nn.Parameter(torch.zeros(c, c, 1, 9)))
                self.lines.append(nn.Parameter(torch.zeros(c, c, 10, 1)))
        # The survival head: a 1x1 conv C -> 1 with bias, no BN, one logit per square.
        self.surv = nn.Conv2d(c, 1, 1, bias=True) if a["survival"] else None
        # The opponent-reply head: a 1x1 conv C -> 2, no bias, no BN: from and to squares.
        self.reply = nn.Conv2d(c, 2, 1, bias=False) if a["reply"] else None

    def table(self):
        """(name, parameter, decayed) in xqzero's file order."""
        rows = []
        def cb(name, m):
            rows.extend([(name + ".w", m.conv.weight, True), (name + ".bn.g", m.bn.weight, False),
                         (name + ".bn.b", m.bn.bias, False)])
        cb("stem", self.tower[0])
        for b in range(self.blocks):
            cb("block%d.conv1" % b, self.tower[1 + 2 * b])
            if b in self.gpool_of:
                rows.append(("block%d.gpool.w" % b, self.gpool[self.gpool_of[b]], True))
            if len(self.lines):
                rows.append(("block%d.rank.w" % b, self.lines[2 * b], True))
                rows.append(("block%d.file.w" % b, self.lines[2 * b + 1], True))
            cb("block%d.conv2" % b, self.tower[2 + 2 * b])
        cb("policy.conv", self.pol)
        rows += [("policy.fc.w", self.pol_fc.weight, True), ("policy.fc.b", self.pol_fc.bias, False)]
        cb("value.conv", self.val)
        rows += [("value.fc1.w", self.val_fc1.weight, True), ("value.fc1.b", self.val_fc1.bias, False),
                 ("value.fc2.w", self.val_fc2.weight, True), ("value.fc2.b", self.val_fc2.bias, False)]
        if self.surv is not None:
            rows += [("survival.w", self.surv.weight, True), ("survival.b", self.surv.bias, False)]
        if self.reply is not None:
            rows += [("reply.w", self.reply.weight, True)]
        return rows

    def bns(self):
        return [m.bn for m in self.tower] + [self.pol.bn, self.val.bn]

    def forward(self, x):
        def cbr(m, x, skip=None):
            y = m.bn(m.conv(x))
            if skip is not None:
                y = y + skip
            return F.relu(y)
        t = cbr(self.tower[0], x)
        for b in range(self.blocks):
            h = cbr(self.tower[1 + 2 * b], t)
            if b in self.gpool_of:
                g = torch.cat([h.mean(dim=(2, 3)), h.flatten(2).max(dim=2).values], dim=1)
                h = h + (g @ self.gpool[self.gpool_of[b]].t())[:, :, None, None]
            if len(self.lines):  # (N, C, 10, 1) and (N, C, 1, 9), broadcast along the lines
                h = h + F.conv2d(h, self.lines[2 * b]) + F.conv2d(h, self.lines[2 * b + 1])
            t = cbr(self.tower[2 + 2 * b], h, skip=t)
        p = cbr(self.pol, t).flatten(1)
        logits = self.pol_fc(p)
        v = cbr(self.val, t).flatten(1)
        v = torch.tanh(self.val_fc2(F.relu(self.val_fc1(v)))).squeeze(1)
        s = self.surv(t).flatten(1) if self.surv is not None else None
        r = self.reply(t).flatten(2) if self.reply is not None else None  # (N, 2, 90)
        return logits, v, s, r


def load(net, params, stats):
    off = 0
    with torch.no_grad():
        for _, p, _ in net.table():
            p.copy_(torch.from_numpy(params[off:off + p.numel()].astype(np.float64)).view_as(p))
            off += p.numel()
        assert off == params.size
        off = 0
        for bn in net.bns():
            c = bn.num_features
            bn.running_mean.copy_(torch.from_numpy(stats[off:off + c].astype(np.float64)))
            bn.running_var.copy_(torch.from_numpy(stats[off + c:off + 2 * c].astype(np.float64)))
            off += 2 * c
        assert off == stats.size


def make_inputs(rng, nplanes):
    planes = np.zeros((N, nplanes, HW), np.float32)
    mask = np.zeros((N, POLICY), np.uint8)
    pi_idx = np.zeros((N, TARGETS), np.int32)
    pi_p = np.zeros((N, TARGETS), np.float32)
    z = np.zeros(N, np.float32)
    for s in range(N):
        for sq in range(HW):
            if rng.randint(4) == 0:
                planes[s, rng.randint(14), sq] = 1
        planes[s, 14] = s & 1
        planes[s, 15] = np.float32(rng.rand())
        planes[s, 16] = 1.0 if s % 3 == 0 else 0.0
        planes[s, 17] = 1
        legal = rng.choice(POLICY, LEGAL, replace=False)
        mask[s, legal] = 1
        pi_idx[s] = legal[:TARGETS]
        p = rng.rand(TARGETS) + 0.1
        pi_p[s] = (p / p.sum()).astype(np.float32)
        z[s] = rng.randint(3) - 1
    if nplanes > BASE_PLANES:  # attack planes: a generator of their own leaves rng's draws alone
        arng = np.random.RandomState(ATTACK_SEED)
        planes[:, BASE_PLANES:] = (arng.randint(3, size=(N, nplanes - BASE_PLANES, HW)) == 0)
    return planes, mask, pi_idx, pi_p, z


def make_survival(planes, rng):
    """Survival targets: every square holding a non-king piece plane is trained, kept (1)
    or lost (0) at random; sample 1 trains none (a sample without the target)."""
    pieces = planes[:, 1:7].sum(1) + planes[:, 8:14].sum(1)
    smask = (pieces > 0).astype(np.uint8)
    smask[1] = 0
    starget = (rng.randint(2, size=(N, HW)) * smask).astype(np.uint8)
    return smask, starget


def survival_loss(s, smask, starget):
    """Per sample the mean BCE over its trained squares (0 without any), then the mean."""
    m = torch.from_numpy(smask.astype(np.float64))
    y = torch.from_numpy(starget.astype(np.float64))
    bce = F.binary_cross_entropy_with_logits(s, y, reduction="none") * m
    k = m.sum(1)
    per = torch.where(k > 0, bce.sum(1) / k.clamp(min=1), torch.zeros_like(k))
    return per.mean()


def make_reply(rng):
    """Reply targets: a from and a different to square per sample; sample 2 has none (-1)."""
    sq = np.zeros((N, 2), np.int64)
    for s in range(N):
        f = rng.randint(HW)
        sq[s] = (f, (f + 1 + rng.randint(HW - 1)) % HW)
    sq[2] = -1
    return sq


def reply_loss(r, sq):
    """Per sample the mean of the from and to cross-entropies (0 without a target), then
    the mean over the batch."""
    logp = F.log_softmax(r, dim=2)
    per = []
    for s in range(N):
        if sq[s, 0] < 0:
            per.append(torch.zeros((), dtype=torch.float64))
        else:
            per.append(-(logp[s, 0, sq[s, 0]] + logp[s, 1, sq[s, 1]]) / 2)
    return torch.stack(per).mean()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--xqz", default="build/tools/xqz", help="path to the xqz binary")
    ap.add_argument("--size", default="tiny", help="net size, as `xqz net init --size`")
    ap.add_argument("--out", default="tests/fixtures/nn_tiny_ref.bin")
    args = ap.parse_args()
    torch.manual_seed(0)
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "tiny.xqzn")
        subprocess.run([args.xqz, "net", "init", "--size", args.size, "--seed", "1", "--id", "1",
                        "--out", path], check=True, stdout=subprocess.DEVNULL)
        arch, params, stats, pcrc = read_xqzn(path)
    net = Net(arch).double()
    load(net, params, stats)
    planes, mask, pi_idx, pi_p, z = make_inputs(np.random.RandomState(2024), arch["planes"])
    grng = np.random.RandomState(7)
    zero_started = []
    with torch.no_grad():
        for name, p, _ in net.table():
            if ".gpool." in name or ".rank." in name or ".file." in name:
                gw = grng.normal(0.0, GPOOL_STD, p.shape).astype(np.float32)
                p.copy_(torch.from_numpy(gw.astype(np.float64)))
                zero_started.append((name, gw))

    x = torch.from_numpy(planes.astype(np.float64)).view(N, arch["planes"], 10, 9)
    net.train()
    logits, v, sl, rl = net(x)
    m = torch.from_numpy(mask.astype(bool))
    logp = F.log_softmax(logits.masked_fill(~m, float("-inf")), dim=1)
    tgt = torch.zeros(N, POLICY, dtype=torch.float64)
    for s in range(N):
        tgt[s, torch.from_numpy(pi_idx[s].astype(np.int64))] = torch.from_numpy(pi_p[s].astype(np.float64))
    ce = -(tgt * logp.masked_fill(~m, 0.0)).sum(1).mean()
    mse = ((v - torch.from_numpy(z.astype(np.float64))) ** 2).mean()
    l2 = C_L2 * sum((p ** 2).sum() for _, p, dec in net.table() if dec)
    loss = WP * ce + WV * mse + l2
    if sl is not None:
        smask, starget = make_survival(planes, np.random.RandomState(11))
        surv = survival_loss(sl, smask, starget)
        loss = loss + WS * surv
    if rl is not None:
        rsq = make_reply(np.random.RandomState(REPLY_SEED))
        rep = reply_loss(rl, rsq)
        loss = loss + WR * rep
    loss.backward()

    rec = []
    def put(name, arr):
        rec.append((name, np.asarray(arr, dtype=np.float64).astype("<f4").ravel()))
    config = [N, LEGAL, TARGETS, WP, WV, C_L2, STRIDE, pcrc & 0xFFFF, pcrc >> 16]
    put("config", config + ([WS] if sl is not None else []) + ([WR] if rl is not None else []))
    put("planes", planes)
    put("mask", mask)
    put("pi_index", pi_idx)
    put("pi_prob", pi_p)
    put("z", z)
    if sl is not None:
        put("surv_mask", smask)
        put("surv_target", starget)
    if rl is not None:
        put("reply_sq", rsq)
    for name, gw in zero_started:
        put("param." + name, gw)
    put("logits", logits.detach().numpy())
    put("value", v.detach().numpy())
    losses = [loss.item(), ce.item(), mse.item(), l2.item()]
    put("loss", losses + ([surv.item()] if sl is not None else []) +
        ([rep.item()] if rl is not None else []))
    if sl is not None:
        put("surv_logits", sl.detach().numpy())
    if rl is not None:
        put("reply_logits", rl.detach().numpy())
    for name, p, _ in net.table():
        g = p.grad.detach().numpy().ravel()
        put("grad." + name, g[::STRIDE] if name == "policy.fc.w" else g)
    run = []
    for bn in net.bns():
        run += [bn.running_mean.numpy(), bn.running_var.numpy()]
    put("running_stats", np.concatenate(run))
    net.eval()
    with torch.no_grad():
        le, ve, se, re = net(x)
    put("eval_logits", le.numpy())
    put("eval_value", ve.numpy())
    if se is not None:
        put("eval_surv_logits", se.numpy())
        put("eval_surv", torch.sigmoid(se).numpy())
    if re is not None:
        put("eval_reply_logits", re.numpy())

    with open(args.out, "wb") as f:
        f.write(b"XQZFIX1\0")
        for name, a in rec:
            nb = name.encode()
            f.write(struct.pack("<I", len(nb)) + nb + struct.pack("<I", a.size) + a.tobytes())
    print("wrote %s (%d bytes): loss %.6f (ce %.6f, mse %.6f, l2 %.6f)" %
          (args.out, os.path.getsize(args.out), loss.item(), ce.item(), mse.item(), l2.item()))


if __name__ == "__main__":
    sys.exit(main())
