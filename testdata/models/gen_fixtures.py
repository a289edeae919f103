#!/usr/bin/python3
"""Fixtures for package models, from an independent reference written from the
formulas of docs/design.md section 4 (explicit loops over pairs and triplets, float64,
gradients by torch autograd). Positives are dy <= eta, negatives dy > eta, as the
authors' metrics.py splits them (docs/design.md section 11). Run with Debian's python3 (torch 1.13, numpy):

    /usr/bin/python3 testdata/models/gen_fixtures.py

It writes metric_losses.npz, kl.npz, beta_schedule.npz and rank_weights.npz here.
"""
import math
import os

import numpy as np
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
torch.set_default_dtype(torch.float64)


def dist(a, b):
    return torch.sqrt(((a - b) ** 2).sum())


def mean_over_positive(terms):
    total = sum(terms, torch.zeros(()))
    n = sum(1 for t in terms if t.item() > 0)
    return total / max(1, n)


def simple(z, y):
    b = len(y)
    terms = [torch.abs(dist(z[i], z[j]) - abs(y[i] - y[j])) for i in range(b) for j in range(i + 1, b)]
    return mean_over_positive(terms)


def contrastive(z, y, eta, hard):
    b = len(y)
    terms = []
    for i in range(b):
        for j in range(i + 1, b):
            dz, dy = dist(z[i], z[j]), abs(y[i] - y[j])
            if dy <= eta:
                if hard:
                    t = dz
                else:
                    t = torch.relu(torch.clamp(dz, min=eta) / eta * (torch.clamp(dz, max=eta) - dy))
            else:
                if hard:
                    t = torch.relu(dy - dz)
                else:
                    # The paper's 2 - min(eta, dz)/eta (not the reference code's (2 - min)/eta).
                    t = torch.relu((2 - torch.clamp(dz, max=eta) / eta) * (dy - torch.clamp(dz, min=eta)))
            terms.append(t)
    return mean_over_positive(terms)


def triplet(z, y, eta, nu=None, margin=None):
    b = len(y)
    f = lambda a: math.tanh(a / (2 * nu))
    terms = []
    for i in range(b):
        for j in range(b):
            dyij = abs(y[i] - y[j]).item()
            if j == i or not dyij <= eta:
                continue
            for k in range(b):
                dyik = abs(y[i] - y[k]).item()
                if k == i or not dyik > eta:
                    continue
                d = dist(z[i], z[j]) - dist(z[i], z[k])
                if margin is not None:
                    terms.append(torch.relu(margin + d))
                    continue
                t = torch.nn.functional.softplus(d)
                if nu is not None:
                    t = t * (f(eta - dyij) / f(eta)) * (f(dyik - eta) / f(1 - eta))
                terms.append(t)
    return mean_over_positive(terms)


def log_ratio(z, y):
    b = len(y)
    total, n = torch.zeros(()), 0
    for a in range(b):
        for i in range(b):
            for j in range(b):
                if i == a or j == a:
                    continue
                dyi, dyj = abs(y[a] - y[i]).item(), abs(y[a] - y[j]).item()
                if not dyi < dyj:
                    continue
                dzi = torch.sqrt(((z[a] - z[i]) ** 2).sum() + 1e-4 / b)
                dzj = torch.sqrt(((z[a] - z[j]) ** 2).sum() + 1e-4 / b)
                t = (torch.log(dzi + 1e-6) - torch.log(dzj + 1e-6)
                     - math.log(dyi + 1e-6) + math.log(dyj + 1e-6)) ** 2
                total, n = total + t, n + 1
    return total / max(1, n)


def branch_counts(z, y, eta):
    """Asserts that positive and negative pairs with non-zero soft and hard
    contrastive terms, and active hard-triplet terms, all occur."""
    b = len(y)
    ties = sum(abs(y[i] - y[j]).item() == eta for i in range(b) for j in range(i + 1, b))
    pos = neg = neg_hard = 0
    for i in range(b):
        for j in range(i + 1, b):
            dz, dy = dist(z[i], z[j]).item(), abs(y[i] - y[j]).item()
            if dy <= eta:
                pos += min(eta, dz) > dy
            else:
                neg += dy > max(eta, dz)
                neg_hard += dy > dz
    print(f"b={b} eta={eta}: active positive pairs {pos}, negative {neg}, hard negative {neg_hard}, dy == eta {ties}")
    assert pos > 0 and neg > 0 and neg_hard > 0


def value_and_grad(fn, z, y):
    z = z.clone().requires_grad_(True)
    v = fn(z, y)
    (g,) = torch.autograd.grad(v, z)
    return v.item(), g.numpy()


def metric_cases():
    out = {}
    rng = np.random.default_rng(20220401)
    # Latent scales comparable to eta and the label distances, so that every branch
    # of every loss is active (checked by branch_counts).
    cases = [dict(b=10, d=3, eta=0.25, scale=0.2), dict(b=16, d=5, eta=0.1, scale=0.06)]
    for c, spec in enumerate(cases):
        b, d, eta = spec["b"], spec["d"], spec["eta"]
        z = torch.tensor(rng.normal(scale=spec["scale"], size=(b, d)))
        raw = rng.uniform(0, 7, size=b)
        raw[3] = raw[1]  # a tie: dy = 0 off the diagonal
        y = (raw - raw.min()) / (raw.max() - raw.min())
        if c == 0:
            # Pairs exactly eta apart (0.25, exact in float32 and float64):
            # positives in the authors' split (dy <= eta), negatives in the
            # paper's (dy < eta).
            inner = [i for i in range(b) if i not in (1, 3, y.argmin(), y.argmax())]
            y[inner[0]], y[inner[1]], y[inner[2]] = 0.5, 0.75, 0.25
        y = torch.tensor(y)
        p = f"case{c}_"
        branch_counts(z, y, eta)
        out[p + "z"], out[p + "y"], out[p + "eta"] = z.numpy(), y.numpy(), np.array(eta)
        losses = {
            "simple": lambda z, y: simple(z, y),
            "contrastive": lambda z, y: contrastive(z, y, eta, False),
            "hard_contrastive": lambda z, y: contrastive(z, y, eta, True),
            "triplet": lambda z, y: triplet(z, y, eta),
            "triplet_nu": lambda z, y: triplet(z, y, eta, nu=0.05),
            "hard_triplet": lambda z, y: triplet(z, y, eta, margin=0.5),
            "log_ratio": lambda z, y: log_ratio(z, y),
        }
        for name, fn in losses.items():
            v, g = value_and_grad(fn, z, y)
            out[p + name + "_value"], out[p + name + "_grad"] = np.array(v), g
    out["nu"], out["margin"] = np.array(0.05), np.array(0.5)
    np.savez(os.path.join(HERE, "metric_losses.npz"), **out)


def kl_case():
    rng = np.random.default_rng(7)
    mu = torch.tensor(rng.normal(size=(6, 4)), requires_grad=True)
    s = torch.tensor(rng.normal(scale=0.5, size=(6, 4)), requires_grad=True)
    kl = sum(0.5 * (math.e ** (2 * s[i, j]) + mu[i, j] ** 2 - 1 - 2 * s[i, j])
             for i in range(6) for j in range(4)) / 6
    gm, gs = torch.autograd.grad(kl, (mu, s))
    np.savez(os.path.join(HERE, "kl.npz"), mu=mu.detach().numpy(), log_std=s.detach().numpy(),
             value=np.array(kl.item()), grad_mu=gm.numpy(), grad_log_std=gs.numpy())


def beta_schedule():
    # The reference's _increment_beta, called before each step with the number of
    # steps done (global_step).
    init, final, warmup, every, factor = 1e-6, 0.04, 500, 10, 1.1
    beta, used = init, []
    for step in range(3000):
        if step > warmup and step % every == 0:
            beta = min(final, beta * factor)
        used.append(beta)
    np.savez(os.path.join(HERE, "beta_schedule.npz"), beta=np.array(used),
             params=np.array([init, final, warmup, every, factor]))


def rank_weights():
    # Tripp et al. (2020): rank 0 is the best (largest property), w = 1/(kN + rank).
    rng = np.random.default_rng(11)
    scores = rng.normal(size=50)
    k = 1e-3
    out = {"scores": scores, "k": np.array(k)}
    for name, props in (("maximize", scores), ("minimize", -scores)):
        ranks = np.argsort(np.argsort(-props))
        out[name] = 1.0 / (k * len(props) + ranks)
    np.savez(os.path.join(HERE, "rank_weights.npz"), **out)


if __name__ == "__main__":
    metric_cases()
    kl_case()
    beta_schedule()
    rank_weights()
