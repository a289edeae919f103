#!/usr/bin/python3
"""Seconds per epoch of the grammar VAE in PyTorch eager, for comparison with
`tlbo-native train` on the same machine (same threads). The network, loss and
training step are those of DESIGN.md sections 3-4 (as gen_gvae_fixture.py),
with the soft triplet loss written vectorised as in package models. Data are
random grammar derivations shaped like the 40k training subset (the timing does
not depend on the values).

    /usr/bin/python3 testdata/models/gvae_epoch_torch.py --elbo lbo --threads 2 --steps 30

It prints the median step time and the projected seconds per epoch of
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
    dz, dy = pair_distances(z, y)
    terms = nn.functional.softplus(dz.unsqueeze(2) - dz.unsqueeze(1))
    pos = (dy < eta) & ~torch.eye(len(y), dtype=torch.bool)
    mask = pos.unsqueeze(2) & (dy >= eta).unsqueeze(1)
    loss = terms * mask
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


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--elbo", choices=["lbo", "t"], default="lbo")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--steps", type=int, default=30)
    ap.add_argument("--batch-size", type=int, default=256)
    ap.add_argument("--train-size", type=int, default=38000)
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    torch.manual_seed(0)
    rng = np.random.default_rng(0)
    b = args.batch_size
    x = np.zeros((b, MAX_LEN, P), dtype=np.float32)
    for i in range(b):
        rules = derivation(rng)
        x[i, np.arange(MAX_LEN), rules + [P - 1] * (MAX_LEN - len(rules))] = 1
    x, y = torch.tensor(x), torch.rand(b)
    model = GVAE()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    times = []
    for i in range(args.steps + 3):
        t0 = time.perf_counter()
        step(model, opt, x, y, args.elbo)
        if i >= 3:  # warm-up
            times.append(time.perf_counter() - t0)
    med = statistics.median(times)
    steps = args.train_size // b
    print(f"torch {torch.__version__} threads {torch.get_num_threads()} elbo {args.elbo} batch {b}")
    print(f"step_ms {med * 1e3:.2f}")
    print(f"epoch_s {med * steps:.2f} ({steps} steps)")


if __name__ == "__main__":
    main()
