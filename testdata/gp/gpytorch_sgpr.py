#!/usr/bin/python3
"""GPyTorch's SGPR beside `tlbo-native gp` on the same data (scripts/gpu-check.sh).

    gpytorch_sgpr.py data --out DIR [--n 10000 --m 500 --d 25 --test 2000 --seed 0]
    gpytorch_sgpr.py fit --dir DIR [--m 500 --device cuda|cpu --iters 200 --lr 0.1]

`data` writes train_x.npy, train_y.npy, test_x.npy, test_y.npy (float64): inputs
uniform in [0,1]^d, y = sum_k sin(3 x_k + k) + N(0, 0.1^2). `fit` fits an SGPR
(Titsias's collapsed bound: gpytorch.kernels.InducingPointKernel over a scaled ARD
RBF kernel, constant mean, Gaussian noise) in float64 on --device with Adam, the way
GPyTorch's SGPR example and the T-LBO authors' code train it, inputs normalised to
[0,1] by the training data's box and targets standardised as internal/gp does, the
inducing points initialised at M training inputs drawn at random (ours: k-means).
It prints the fit's wall seconds (after one untimed warm-up iteration, CUDA
synchronised) and the mean held-out log predictive density per point in the
targets' units: `fit_s <s> loglik <v>`.
"""
import argparse
import math
import os
import time


def make_data(a):
    import numpy as np
    rng = np.random.default_rng(a.seed)
    k = np.arange(a.d)
    for name, n in (("train", a.n), ("test", a.test)):
        x = rng.uniform(size=(n, a.d))
        y = np.sin(3 * x + k).sum(1) + 0.1 * rng.standard_normal(n)
        np.save(os.path.join(a.out, name + "_x.npy"), x)
        np.save(os.path.join(a.out, name + "_y.npy"), y)
    print("wrote", a.n, "training and", a.test, "test points of dimension", a.d, "to", a.out)


def fit(a):
    import numpy as np
    import torch
    import gpytorch

    dev = torch.device(a.device)
    torch.manual_seed(a.seed)
    load = lambda n: torch.from_numpy(np.load(os.path.join(a.dir, n))).to(dev, torch.float64)
    x, y, xt, yt = load("train_x.npy"), load("train_y.npy"), load("test_x.npy"), load("test_y.npy")
    lo, hi = x.min(0).values, x.max(0).values
    x, xt = (x - lo) / (hi - lo), (xt - lo) / (hi - lo)
    mu, sd = y.mean(), y.std()
    ys = (y - mu) / sd

    class SGPR(gpytorch.models.ExactGP):
        def __init__(self, x, y, lik):
            super().__init__(x, y, lik)
            self.mean_module = gpytorch.means.ConstantMean()
            base = gpytorch.kernels.ScaleKernel(gpytorch.kernels.RBFKernel(ard_num_dims=x.shape[1]))
            z = x[torch.randperm(x.shape[0], device=x.device)[: a.m]].clone()
            self.covar_module = gpytorch.kernels.InducingPointKernel(base, inducing_points=z, likelihood=lik)

        def forward(self, x):
            return gpytorch.distributions.MultivariateNormal(self.mean_module(x), self.covar_module(x))

    lik = gpytorch.likelihoods.GaussianLikelihood().to(dev, torch.float64)
    model = SGPR(x, ys, lik).to(dev, torch.float64)
    model.train(), lik.train()
    opt = torch.optim.Adam(model.parameters(), lr=a.lr)
    mll = gpytorch.mlls.ExactMarginalLogLikelihood(lik, model)

    def one():
        opt.zero_grad()
        loss = -mll(model(x), ys)
        loss.backward()
        opt.step()
        return loss

    one()  # warm-up: CUDA context, kernels
    if dev.type == "cuda":
        torch.cuda.synchronize()
    t0 = time.perf_counter()
    for _ in range(a.iters - 1):
        loss = one()
    if dev.type == "cuda":
        torch.cuda.synchronize()
    secs = time.perf_counter() - t0
    model.eval(), lik.eval()
    with torch.no_grad(), gpytorch.settings.fast_pred_var():
        pred = lik(model(xt))
        m = pred.mean * sd + mu
        v = pred.variance * sd * sd
        ll = (-0.5 * torch.log(2 * math.pi * v) - 0.5 * (yt - m) ** 2 / v).mean().item()
    print(f"device {a.device} threads {torch.get_num_threads()} n {x.shape[0]} m {a.m} iters {a.iters} "
          f"final loss {loss.item():.4f}")
    print(f"fit_s {secs:.2f} loglik {ll:.4f}")


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="cmd", required=True)
    d = sub.add_parser("data")
    d.add_argument("--out", required=True)
    d.add_argument("--n", type=int, default=10000)
    d.add_argument("--m", type=int, default=500)
    d.add_argument("--d", type=int, default=25)
    d.add_argument("--test", type=int, default=2000)
    d.add_argument("--seed", type=int, default=0)
    f = sub.add_parser("fit")
    f.add_argument("--dir", required=True)
    f.add_argument("--m", type=int, default=500)
    f.add_argument("--device", default="cuda")
    f.add_argument("--iters", type=int, default=200)
    f.add_argument("--lr", type=float, default=0.1)
    f.add_argument("--seed", type=int, default=0)
    a = p.parse_args()
    make_data(a) if a.cmd == "data" else fit(a)


if __name__ == "__main__":
    main()
