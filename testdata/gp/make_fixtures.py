#!/usr/bin/python3
"""Generate the numpy fixtures of internal/gp and internal/acq.

Run from anywhere with Debian's python3 (numpy, scipy, scikit-learn, mpmath):

    /usr/bin/python3 testdata/gp/make_fixtures.py

Writes, next to this script:
  exact_sklearn.npz  exact-GP log marginal likelihood and latent posterior from
                     scikit-learn's GaussianProcessRegressor (fixed hyperparameters,
                     optimizer=None), RBF and Matern-5/2 kernels;
  sgpr_numpy.npz     Titsias collapsed bound and SGPR predictions from the independent
                     numpy implementation below (GPflow's SGPR formulas: A = L^-1 K_uf / sigma),
                     with and without Kumaraswamy warping;
  ei_ref.npz         EI and log-EI of N(mean, var) far into the tail, from mpmath at 60 digits
                     (scipy's float64 formula cancels there; it is stored too, where accurate);
  normalize.npz      the reference's input bounds (0.05%/99.95% quantiles, best point, 5%).
"""
import os

import mpmath
import numpy as np
from scipy import stats
from scipy.linalg import cho_solve, solve_triangular
from sklearn.gaussian_process import GaussianProcessRegressor
from sklearn.gaussian_process.kernels import RBF, ConstantKernel, Matern

HERE = os.path.dirname(os.path.abspath(__file__))
JITTER = 1e-6  # relative to the output scale, as internal/gp
WARP_EPS = 1e-7


def corr(kernel, a, b, ell):
    d = (a[:, None, :] - b[None, :, :]) / ell
    r2 = (d ** 2).sum(-1)
    if kernel == "rbf":
        return np.exp(-0.5 * r2)
    r = np.sqrt(5 * r2)
    return (1 + r + 5 * r2 / 3) * np.exp(-r)


def kumaraswamy(x, a, b):
    x = np.clip(x * (1 - 2 * WARP_EPS) + WARP_EPS, WARP_EPS, 1 - WARP_EPS)
    return 1 - (1 - x ** a) ** b


def exact_fixture(rng):
    n, d, q = 30, 3, 12
    X = rng.uniform(size=(n, d))
    y = np.sin(3 * X).sum(1) + 0.1 * rng.standard_normal(n)
    Xt = rng.uniform(size=(q, d))
    ell = np.array([0.35, 0.6, 0.9])
    s, c, noise = 1.7, 0.3, 0.04
    out = dict(X=X, y=y, Xt=Xt, ell=ell, s=np.float64(s), c=np.float64(c), noise=np.float64(noise))
    for name, base in [("rbf", RBF(ell)), ("matern52", Matern(ell, nu=2.5))]:
        kern = ConstantKernel(s, "fixed") * base
        gpr = GaussianProcessRegressor(kern, alpha=noise, optimizer=None, normalize_y=False)
        gpr.fit(X, y - c)
        mu, sd = gpr.predict(Xt, return_std=True)
        out["lml_" + name] = np.float64(gpr.log_marginal_likelihood_value_)
        out["mean_" + name] = mu + c
        out["var_" + name] = sd ** 2
    return out


def sgpr(kernel, X, y, Z, Xt, ell, s, c, noise):
    """GPflow-style SGPR: bound and latent predictions."""
    n, m = len(X), len(Z)
    Kuu = s * corr(kernel, Z, Z, ell) + s * JITTER * np.eye(m)
    Kuf = s * corr(kernel, Z, X, ell)
    L = np.linalg.cholesky(Kuu)
    sigma = np.sqrt(noise)
    A = solve_triangular(L, Kuf, lower=True) / sigma
    AAT = A @ A.T
    B = np.eye(m) + AAT
    LB = np.linalg.cholesky(B)
    err = y - c
    cvec = solve_triangular(LB, A @ err, lower=True) / sigma
    bound = (-0.5 * n * np.log(2 * np.pi) - np.log(np.diag(LB)).sum() - 0.5 * n * np.log(noise)
             - 0.5 * err @ err / noise + 0.5 * cvec @ cvec - 0.5 * n * s / noise + 0.5 * np.trace(AAT))
    Kus = s * corr(kernel, Z, Xt, ell)
    t1 = solve_triangular(L, Kus, lower=True)
    t2 = solve_triangular(LB, t1, lower=True)
    mean = c + t2.T @ cvec
    var = s - (t1 ** 2).sum(0) + (t2 ** 2).sum(0)
    return bound, mean, var


def sgpr_fixture(rng):
    n, d, m, q = 60, 4, 12, 15
    X = rng.uniform(size=(n, d))
    y = np.cos(2 * X).sum(1) + X[:, 0] * X[:, 1] + 0.05 * rng.standard_normal(n)
    Z = rng.uniform(size=(m, d))
    Xt = rng.uniform(size=(q, d))
    ell = np.array([0.3, 0.5, 0.7, 1.1])
    s, c, noise = 0.9, -0.2, 0.02
    wa = np.array([0.6, 1.0, 1.5, 2.2])
    wb = np.array([1.8, 0.7, 1.0, 3.0])
    out = dict(X=X, y=y, Z=Z, Xt=Xt, ell=ell, s=np.float64(s), c=np.float64(c), noise=np.float64(noise),
               warp_a=wa, warp_b=wb)
    for name in ["rbf", "matern52"]:
        b, mu, var = sgpr(name, X, y, Z, Xt, ell, s, c, noise)
        out["bound_" + name], out["mean_" + name], out["var_" + name] = np.float64(b), mu, var
        # Warped: the kernel sees w(x) and w(z); Z lives in the input space.
        b, mu, var = sgpr(name, kumaraswamy(X, wa, wb), y, kumaraswamy(Z, wa, wb), kumaraswamy(Xt, wa, wb),
                          ell, s, c, noise)
        out["bound_warp_" + name], out["mean_warp_" + name], out["var_warp_" + name] = np.float64(b), mu, var
    return out


def ei_fixture():
    mpmath.mp.dps = 60
    zs = [-1e4, -1e3, -300, -100, -40, -38.5, -30, -20, -10, -5, -2, -1.0001, -1, -0.9999, -0.5, 0,
          0.5, 1, 3, 10, 40]
    mean, var, best, ei, logei, ei_scipy = [], [], [], [], [], []
    for i, z in enumerate(zs):
        sigma = 0.5 + 0.25 * (i % 4)
        b = 0.3 * (i % 3) - 0.2
        m = b + z * sigma
        v = sigma ** 2
        # The reference takes the stored float64 inputs exactly.
        sig = mpmath.sqrt(mpmath.mpf(v))
        zz = (mpmath.mpf(m) - mpmath.mpf(b)) / sig
        h = mpmath.npdf(zz) + zz * mpmath.ncdf(zz)
        mean.append(m)
        var.append(v)
        best.append(b)
        ei.append(float(sig * h))
        logei.append(float(mpmath.log(sig * h)))
        zf = (m - b) / sigma
        ei_scipy.append(sigma * (stats.norm.pdf(zf) + zf * stats.norm.cdf(zf)))
    return dict(mean=np.array(mean), var=np.array(var), best=np.array(best), z=np.array(zs, float),
                ei=np.array(ei), logei=np.array(logei), ei_scipy=np.array(ei_scipy))


def normalize_fixture(rng):
    X = rng.standard_normal((5000, 6)) * np.array([1, 2, 0.5, 3, 1, 0.1]) + np.arange(6)
    best = X[17] + np.array([0, 20, 0, -20, 0, 0])  # outside the quantiles in two dimensions
    lo = np.quantile(X, 0.0005, axis=0)
    hi = np.quantile(X, 0.9995, axis=0)
    lo, hi = np.minimum(lo, best), np.maximum(hi, best)
    w = hi - lo
    return dict(X=X, best=best, lower=lo - 0.05 * w, upper=hi + 0.05 * w,
                y=rng.standard_normal(50) * 3 + 1, q90=np.float64(0))


def main():
    rng = np.random.default_rng(20240601)
    np.savez(os.path.join(HERE, "exact_sklearn.npz"), **exact_fixture(rng))
    np.savez(os.path.join(HERE, "sgpr_numpy.npz"), **sgpr_fixture(rng))
    np.savez(os.path.join(HERE, "ei_ref.npz"), **ei_fixture())
    nf = normalize_fixture(rng)
    nf["q90"] = np.float64(np.quantile(nf["y"], 0.9))
    nf["ystd"] = np.float64(nf["y"].std())
    nf["ymean"] = np.float64(nf["y"].mean())
    np.savez(os.path.join(HERE, "normalize.npz"), **nf)


if __name__ == "__main__":
    main()
