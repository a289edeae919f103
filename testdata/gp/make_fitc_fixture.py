#!/usr/bin/python3
"""Generate fitc_torch.npz, the FITC fixture of internal/gp.

Run with Debian's python3 (numpy, torch):

    /usr/bin/python3 testdata/gp/make_fitc_fixture.py

An independent dense implementation, in float64 torch with autograd, of the
sparse GP objective that GPyTorch 1.3.0 (the authors' pinned version) trains:
InducingPointKernel in training mode gives the covariance
Q + diag(clamp(K - Q, min=0)) with Q = K_fu K_uu^-1 K_uf, the Gaussian
likelihood adds sigma^2 I, and InducingPointKernelAddedLossTerm adds
0.5 * sum(diag(Q + correction) - diag(K)) / sigma^2 (zero unless the clamp acts).
K_uu carries the jitter s * 1e-6 of internal/gp. Stored: the objective (no
priors), its gradient by autograd in internal/gp's parameter layout (log
length-scales, log output scale, mean, log(noise - 1e-6), inducing points
row-major, log Kumaraswamy a, log b), and the FITC latent predictive mean and
variance at test points: mean = mu + Q_*f (Q + Lambda)^-1 r,
var = k_** - Q_*f (Q + Lambda)^-1 Q_f*, as GPyTorch 1.3.0 predicts.
"""
import math
import os

import numpy as np
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
JITTER = 1e-6
NOISE_FLOOR = 1e-6
WARP_EPS = 1e-7


def corr(kernel, a, b, ell):
    d = (a[:, None, :] - b[None, :, :]) / ell
    r2 = (d ** 2).sum(-1)
    if kernel == "rbf":
        return torch.exp(-0.5 * r2)
    r = torch.sqrt(5 * r2 + 1e-300)
    return (1 + r + 5 * r2 / 3) * torch.exp(-r)


def kumaraswamy(x, a, b):
    x = torch.clamp(x * (1 - 2 * WARP_EPS) + WARP_EPS, WARP_EPS, 1 - WARP_EPS)
    return 1 - (1 - x ** a) ** b


def unpack(theta, d, m, warp):
    ell = torch.exp(theta[:d])
    s = torch.exp(theta[d])
    mean = theta[d + 1]
    noise = NOISE_FLOOR + torch.exp(theta[d + 2])
    z = theta[d + 3:d + 3 + m * d].reshape(m, d)
    wa = wb = None
    if warp:
        wa = torch.exp(theta[d + 3 + m * d:d + 3 + m * d + d])
        wb = torch.exp(theta[d + 3 + m * d + d:])
    return ell, s, mean, noise, z, wa, wb


def fitc_parts(kernel, X, Z, ell, s):
    m = Z.shape[0]
    Kuu = s * corr(kernel, Z, Z, ell) + s * JITTER * torch.eye(m, dtype=X.dtype)
    Kfu = s * corr(kernel, X, Z, ell)
    Q = Kfu @ torch.linalg.solve(Kuu, Kfu.T)
    return Kuu, Kfu, Q


def objective(theta, kernel, X, y, d, m, warp):
    ell, s, mean, noise, z, wa, wb = unpack(theta, d, m, warp)
    if warp:
        X, z = kumaraswamy(X, wa, wb), kumaraswamy(z, wa, wb)
    n = X.shape[0]
    _, _, Q = fitc_parts(kernel, X, z, ell, s)
    qdiag = torch.diagonal(Q)
    correction = torch.clamp(s - qdiag, min=0)
    cov = Q + torch.diag(correction) + noise * torch.eye(n, dtype=X.dtype)
    r = y - mean
    chol = torch.linalg.cholesky(cov)
    alpha = torch.cholesky_solve(r[:, None], chol)[:, 0]
    lml = -0.5 * r @ alpha - torch.log(torch.diagonal(chol)).sum() - 0.5 * n * math.log(2 * math.pi)
    added = 0.5 * ((qdiag + correction - s) / noise).sum()
    return lml + added


def predict(theta, kernel, X, y, Xt, d, m, warp):
    ell, s, mean, noise, z, wa, wb = unpack(theta, d, m, warp)
    if warp:
        X, z, Xt = kumaraswamy(X, wa, wb), kumaraswamy(z, wa, wb), kumaraswamy(Xt, wa, wb)
    n = X.shape[0]
    Kuu, Kfu, Q = fitc_parts(kernel, X, z, ell, s)
    cov = Q + torch.diag(torch.clamp(s - torch.diagonal(Q), min=0)) + noise * torch.eye(n, dtype=X.dtype)
    Ksu = s * corr(kernel, Xt, z, ell)
    Qsf = Ksu @ torch.linalg.solve(Kuu, Kfu.T)
    mu = mean + Qsf @ torch.linalg.solve(cov, y - mean)
    var = s - (Qsf * torch.linalg.solve(cov, Qsf.T).T).sum(1)
    return mu, var


def main():
    rng = np.random.default_rng(20261122)
    n, d, m, q = 50, 3, 10, 12
    X = rng.uniform(size=(n, d))
    y = np.sin(3 * X).sum(1) + X[:, 0] * X[:, 2] + 0.05 * rng.standard_normal(n)
    Z = rng.uniform(size=(m, d))
    Xt = rng.uniform(size=(q, d))
    ell = np.array([0.3, 0.55, 0.9])
    s, c, noise = 1.2, 0.1, 0.03
    wa, wb = np.array([0.7, 1.3, 2.0]), np.array([1.6, 0.8, 1.1])
    out = dict(X=X, y=y, Z=Z, Xt=Xt, ell=ell, s=np.float64(s), c=np.float64(c), noise=np.float64(noise),
               warp_a=wa, warp_b=wb)
    Xtt, ytt, Xtt_t = (torch.tensor(a) for a in (X, y, Xt))
    for kernel in ["rbf", "matern52"]:
        for warp in [False, True]:
            parts = [np.log(ell), [np.log(s), c, np.log(noise - NOISE_FLOOR)], Z.ravel()]
            if warp:
                parts += [np.log(wa), np.log(wb)]
            theta = torch.tensor(np.concatenate(parts), requires_grad=True)
            f = objective(theta, kernel, Xtt, ytt, d, m, warp)
            (g,) = torch.autograd.grad(f, theta)
            with torch.no_grad():
                mu, var = predict(theta, kernel, Xtt, ytt, Xtt_t, d, m, warp)
            key = ("warp_" if warp else "") + kernel
            out["theta_" + key] = theta.detach().numpy()
            out["fitc_" + key] = np.float64(f.item())
            out["grad_" + key] = g.numpy()
            out["mean_" + key] = mu.numpy()
            out["var_" + key] = var.numpy()
    np.savez(os.path.join(HERE, "fitc_torch.npz"), **out)


if __name__ == "__main__":
    main()
