#!/usr/bin/python3
"""Seconds per epoch of the grammar VAE in PyTorch eager, for comparison with
`tlbo-native train` on the same machine (same threads). The network, loss and
training step are those of docs/design.md sections 3-4 (as gen_gvae_fixture.py),
with the soft triplet loss over the gathered valid triplets as in package models.
Batches come from --data (the training subset) or are random derivations with
labels distributed like the subset's.

    /usr/bin/python3 testdata/models/gvae_epoch_torch.py --elbo lbo --threads 2 --steps 30

It prints the median step time (wall clock and process CPU time, which is the
steadier measure on a shared machine) and the projected seconds per epoch of
--train-size examples at --batch-size.
"""
import argparse
import statistics
import time

import numpy as np
import torch
from torch import nn

from gen_gvae_fixture import GVAE, LATENT, MAX_LEN, P, derivation


def pair_distances(z, y):
    sq = (z.unsqueeze(1) - z.unsqueeze(0)).pow(2).sum(2)
    nonzero = sq > 0
    dz = torch.where(nonzero, torch.where(nonzero, sq, torch.ones_like(sq)).sqrt(), torch.zeros_like(sq))
    return dz, (y.unsqueeze(1) - y.unsqueeze(0)).abs()


def soft_triplet(z, y, eta=0.1):
    # As package models: gather the valid (anchor, positive, negative) triplets.
    b = len(y)
    dz, dy = pair_distances(z, y)
    pos = (dy <= eta) & ~torch.eye(b, dtype=torch.bool)
    idx = (pos.unsqueeze(2) & (dy > eta).unsqueeze(1)).nonzero()
    flat = dz.reshape(-1)
    diff = flat[idx[:, 0] * b + idx[:, 1]] - flat[idx[:, 0] * b + idx[:, 2]]
    loss = nn.functional.softplus(diff)
    return loss.sum() / (loss > 0).sum().clamp(min=1)


def step(model, opt, x, y, elbo, beta=0.04, metric_weight=10.0):
    mu, s = model.encode(x)
    z = mu + (s.exp() + 1e-10) * torch.randn_like(mu)
    kl = 0.5 * (torch.exp(2 * s) + mu ** 2 - 1 - 2 * s).sum() / len(x)
    loss = model.rec_loss(z, x) + beta * kl
    if elbo == "t":
        loss = loss + metric_weight * soft_triplet(z, y)
    opt.zero_grad()
    loss.backward()
    nn.utils.clip_grad_norm_(model.parameters(), 20)
    opt.step()
    return loss.item()


def batches(args, rng):
    """Yields (x, y) mini-batches: drawn with replacement from --data (an npz
    written by `tlbo-native data expression`, labels min-max normalised), or
    one fixed batch of random derivations with labels like the subset's."""
    b = args.batch_size
    if args.data:
        with np.load(args.data) as d:
            data, scores = torch.tensor(d["data"]), d["scores"]
        y = torch.tensor((scores - scores.min()) / (scores.max() - scores.min()), dtype=torch.float32)
        while True:
            idx = torch.tensor(rng.integers(0, len(y), b))
            yield data[idx], y[idx]
    x = np.zeros((b, MAX_LEN, P), dtype=np.float32)
    for i in range(b):
        rules = derivation(rng)
        x[i, np.arange(MAX_LEN), rules + [P - 1] * (MAX_LEN - len(rules))] = 1
    # two thirds of the subset's scores are the failure score 7
    y = torch.where(torch.rand(b) < 0.66, torch.ones(b), torch.rand(b))
    x = torch.tensor(x)
    while True:
        yield x, y


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--elbo", choices=["lbo", "t"], default="lbo")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--steps", type=int, default=30)
    ap.add_argument("--batch-size", type=int, default=256)
    ap.add_argument("--train-size", type=int, default=38000)
    ap.add_argument("--data", help="expression_subset.npz from `tlbo-native data expression` (optional)")
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    torch.manual_seed(0)
    rng = np.random.default_rng(0)
    model = GVAE()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    times, cpu = [], []
    for i, (x, y) in zip(range(args.steps + 3), batches(args, rng)):
        t0, c0 = time.perf_counter(), time.process_time()
        step(model, opt, x, y, args.elbo)
        if i >= 3:  # warm-up
            times.append(time.perf_counter() - t0)
            cpu.append(time.process_time() - c0)
    med, cmed = statistics.median(times), statistics.median(cpu)
    steps = args.train_size // args.batch_size
    print(f"torch {torch.__version__} threads {torch.get_num_threads()} elbo {args.elbo} batch {args.batch_size}")
    print(f"step_ms {med * 1e3:.2f} (cpu {cmed * 1e3:.2f})")
    print(f"epoch_s {med * steps:.2f} (cpu {cmed * steps:.2f}; {steps} steps)")


if __name__ == "__main__":
    main()
