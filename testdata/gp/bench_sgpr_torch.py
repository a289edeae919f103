#!/usr/bin/python3
"""PyTorch float64 baseline for `tlbo-native bench sgpr-eval`.

Times one evaluation of the SGPR collapsed bound (Titsias) plus its gradient by
autograd with respect to the log length-scales, log output scale, mean, log noise
and the inducing points -- the same quantity internal/gp evaluates analytically --
on the same data as the Go benchmark (splitmix64 inputs, so both sides build
identical matrices), with the same number of threads.

    /usr/bin/python3 testdata/gp/bench_sgpr_torch.py [--n 3000 --m 500 --d 25 --threads 2 --reps 15]

Debian's torch does its float64 matrix products and Cholesky factorisations in
OpenBLAS. On a virtual machine whose CPU model OpenBLAS 0.3.21 does not know, it
falls back to its slowest (Prescott, SSE3) kernels; internal/openblas re-selects
the kernels the CPU supports, so for a like-for-like comparison this script sets
OPENBLAS_CORETYPE the same way before importing torch (--coretype auto, the
default); --coretype none keeps OpenBLAS's own choice.

Prints the bound (to compare with the Go side) and, last, `torch_sgpr_eval_ms <median>`.
"""
import argparse
import math
import os
import sys
import time

MASK = (1 << 64) - 1


def splitmix64(state):
    """Yield uniforms in [0,1) from splitmix64, as internal bench data in Go."""
    while True:
        state = (state + 0x9E3779B97F4A7C15) & MASK
        z = state
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK
        z ^= z >> 31
        yield (z >> 11) * (1.0 / (1 << 53))


def bench_data(n, d, m, seed):
    """Inputs, targets, inducing points and hyperparameters of the benchmark."""
    import numpy as np
    gen = splitmix64(seed)
    x = np.array([next(gen) for _ in range(n * d)]).reshape(n, d)
    k = np.arange(d)
    y = np.sin(3 * x + k).sum(1)
    step = max(1, n // m)
    z = x[::step][:m].copy()
    ell = 0.4 + 0.15 * k * 25.0 / d
    return x, y, z, ell, 1.3, 0.2, 0.05


def cpu_flags():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("flags"):
                    return set(line.split(":", 1)[1].split())
    except OSError:
        pass
    return set()


def best_coretype():
    fl = cpu_flags()
    if {"avx512f", "avx512dq", "avx512bw", "avx512vl", "avx512cd"} <= fl:
        return "SkylakeX"
    if {"avx2", "fma"} <= fl:
        return "Haswell"
    if "avx" in fl:
        return "SandyBridge"
    return None


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=3000)
    ap.add_argument("--m", type=int, default=500)
    ap.add_argument("--d", type=int, default=25)
    ap.add_argument("--threads", type=int, default=os.cpu_count())
    ap.add_argument("--reps", type=int, default=15)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--coretype", default="auto", help="auto, none, or an OpenBLAS core name")
    args = ap.parse_args()
    if args.coretype == "auto" and "OPENBLAS_CORETYPE" not in os.environ:
        ct = best_coretype()
        if ct:
            os.environ["OPENBLAS_CORETYPE"] = ct
    elif args.coretype not in ("auto", "none"):
        os.environ["OPENBLAS_CORETYPE"] = args.coretype
    os.environ.setdefault("OPENBLAS_NUM_THREADS", str(args.threads))
    os.environ.setdefault("OMP_NUM_THREADS", str(args.threads))
    import torch  # after the environment is set: OpenBLAS reads it at load time

    torch.set_num_threads(args.threads)
    x, y, z, ell, s, c, noise = bench_data(args.n, args.d, args.m, args.seed)
    X = torch.tensor(x, dtype=torch.float64)
    Y = torch.tensor(y, dtype=torch.float64)
    import numpy as np
    params = [torch.tensor(v, dtype=torch.float64, requires_grad=True) for v in
              (np.log(ell), math.log(s), c, math.log(noise - 1e-6), z)]
    n = X.shape[0]
    m = z.shape[0]
    eye = torch.eye(m, dtype=torch.float64)

    def corr(a, b):
        a2 = (a * a).sum(1, keepdim=True)
        b2 = (b * b).sum(1)
        r2 = (a2 + b2 - 2 * a @ b.T).clamp_min(0)
        return torch.exp(-0.5 * r2)

    def bound():
        log_ell, log_s, mean, log_noise, Z = params
        ell_t = torch.exp(log_ell)
        s_t = torch.exp(log_s)
        sig2 = 1e-6 + torch.exp(log_noise)
        Xh, Zh = X / ell_t, Z / ell_t
        Kuu = s_t * (corr(Zh, Zh) + 1e-6 * eye)
        Kuf = s_t * corr(Zh, Xh)
        L = torch.linalg.cholesky(Kuu)
        A = torch.linalg.solve_triangular(L, Kuf, upper=False) / torch.sqrt(sig2)
        AAT = A @ A.T
        LB = torch.linalg.cholesky(eye + AAT)
        err = Y - mean
        cv = torch.linalg.solve_triangular(LB, (A @ err)[:, None], upper=False)[:, 0] / torch.sqrt(sig2)
        return (-0.5 * n * math.log(2 * math.pi) - torch.log(torch.diagonal(LB)).sum()
                - 0.5 * n * torch.log(sig2) - 0.5 * (err @ err) / sig2 + 0.5 * (cv @ cv)
                - 0.5 * n * s_t / sig2 + 0.5 * torch.trace(AAT))

    times = []
    f = None
    for rep in range(args.reps + 2):
        for p in params:
            p.grad = None
        t0 = time.perf_counter()
        f = bound()
        f.backward()
        dt = time.perf_counter() - t0
        if rep >= 2:  # warm-up
            times.append(dt)
    times.sort()
    print(f"torch {torch.__version__} threads {torch.get_num_threads()} "
          f"OPENBLAS_CORETYPE={os.environ.get('OPENBLAS_CORETYPE', '(unset)')}")
    print(f"bound {f.item():.10g}  (N={n} M={m} d={args.d})")
    print(f"torch_sgpr_eval_ms {1000 * times[len(times) // 2]:.1f}")


if __name__ == "__main__":
    sys.exit(main())
