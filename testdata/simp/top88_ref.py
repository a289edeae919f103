#!/usr/bin/python3
"""Independent SIMP reference: a numpy/scipy transcription of the 88-line MATLAB
code of Andreassen et al. (top88, 2011; sensitivity filter, ft = 1) with the
conventions of docs/design.md section 7: E = x^p with x in [xmin, 1] (ToPy's form
instead of top88's Emin + x^p (E0 - Emin)), OC bisection on [0, 1e5] to a
relative 1e-8, a damping exponent, a fixed number of iterations. Linear solves
are sparse LU (scipy.sparse.linalg.spsolve), not band Cholesky.

Run with Debian's interpreter (/usr/bin/python3, python3-numpy, python3-scipy):

  top88_ref.py solve SPEC.json [--out x.npy]   last two lines: compliance_first, compliance
  top88_ref.py fixtures DIR                     writes DIR/reference.npz and DIR/<name>.json
  top88_ref.py dataset topology.npz [--first K] [--write-specs DIR]
                                                re-solves designs of a data set made by
                                                `tlbo-native data topology` (or one of its part
                                                files) and compares; or writes their specs
"""
import argparse
import json
import math
import sys
import time

import numpy as np
import scipy.sparse as sp
import scipy.sparse.linalg as spla

DEFAULTS = dict(penal=3.0, rmin=1.5, nu=1.0 / 3, xmin=0.001, iterations=100, move=0.2, damping=0.5)


def load_spec(path):
    with open(path) as f:
        s = json.load(f)
    return {**DEFAULTS, **s}


def element_stiffness(nu):
    a11 = np.array([[12, 3, -6, -3], [3, 12, 3, 0], [-6, 3, 12, -3], [-3, 0, -3, 12]])
    a12 = np.array([[-6, -3, 0, 3], [-3, -6, -3, -6], [0, -3, -6, 3], [3, -6, 3, -6]])
    b11 = np.array([[-4, 3, -2, 9], [3, -4, -9, 4], [-2, -9, -4, -3], [9, 4, -3, -4]])
    b12 = np.array([[2, -3, 4, -9], [-3, 2, 9, -2], [4, 9, 2, 3], [-9, -2, 3, 2]])
    return 1 / (1 - nu**2) / 24 * (np.block([[a11, a12], [a12.T, a11]]) + nu * np.block([[b11, b12], [b12.T, b11]]))


def solve(spec):
    """Returns (compliance history per iteration, final compliance, final x as (nely, nelx))."""
    nelx, nely = spec["nelx"], spec["nely"]
    penal, rmin, xmin = spec["penal"], spec["rmin"], spec["xmin"]
    volfrac, move, damping = spec["volfrac"], spec["move"], spec["damping"]
    ke = element_stiffness(spec["nu"])
    ndof = 2 * (nelx + 1) * (nely + 1)
    # top88: nodenrs = reshape(1:(1+nelx)*(1+nely), 1+nely, 1+nelx) (column-major);
    # edofVec = 2*nodenrs(1:end-1, 1:end-1) + 1 (1-based) is the x dof of the lower-left node.
    nodenrs = np.arange((1 + nelx) * (1 + nely)).reshape((1 + nelx, 1 + nely)).T
    edof_vec = (2 * nodenrs[:-1, :-1] + 2).reshape(-1, order="F")
    edof = edof_vec[:, None] + np.array([0, 1, 2 * nely + 2, 2 * nely + 3, 2 * nely, 2 * nely + 1, -2, -1])
    ik = np.kron(edof, np.ones((8, 1), dtype=int)).ravel()
    jk = np.kron(edof, np.ones((1, 8), dtype=int)).ravel()
    # Filter matrix H and its row sums Hs.
    r = math.ceil(rmin) - 1
    rows, cols, vals = [], [], []
    for i1 in range(nelx):
        for j1 in range(nely):
            e1 = i1 * nely + j1
            for i2 in range(max(i1 - r, 0), min(i1 + r, nelx - 1) + 1):
                for j2 in range(max(j1 - r, 0), min(j1 + r, nely - 1) + 1):
                    w = rmin - math.sqrt((i1 - i2) ** 2 + (j1 - j2) ** 2)
                    if w > 0:
                        rows.append(e1), cols.append(i2 * nely + j2), vals.append(w)
    h = sp.csr_matrix((vals, (rows, cols)), shape=(nelx * nely, nelx * nely))
    hs = np.asarray(h.sum(axis=1)).ravel()
    f = np.zeros(ndof)
    for node, axis, value in spec["loads"]:
        f[2 * node + (axis == "y")] += value
    fixed = {2 * node + (axis == "y") for node, axis in spec["fixed"]}
    free = np.array(sorted(set(range(ndof)) - fixed))

    def fe(x):
        sk = (ke.ravel()[None, :] * (x**penal)[:, None]).ravel()
        k = sp.coo_matrix((sk, (ik, jk)), shape=(ndof, ndof)).tocsc()
        k = (k + k.T) / 2
        u = np.zeros(ndof)
        u[free] = spla.spsolve(k[free, :][:, free], f[free])
        ue = u[edof]
        ce = np.sum((ue @ ke) * ue, axis=1)
        return float(np.sum(x**penal * ce)), ce

    x = np.full(nelx * nely, float(volfrac))
    history = []
    for _ in range(spec["iterations"]):
        c, ce = fe(x)
        history.append(c)
        dc = -penal * x ** (penal - 1) * ce
        dc = (h @ (x * dc)) / hs / np.maximum(1e-3, x)
        b = x * np.maximum(-dc, 0) ** damping
        l1, l2 = 0.0, 1e5
        while (l2 - l1) / (l1 + l2) > 1e-8:
            lmid = 0.5 * (l1 + l2)
            xnew = np.maximum(xmin, np.maximum(x - move, np.minimum(1.0, np.minimum(x + move, b * lmid**-damping))))
            if xnew.sum() > volfrac * nelx * nely:
                l1 = lmid
            else:
                l2 = lmid
        x = xnew
    c, _ = fe(x)
    return np.array(history), c, np.ascontiguousarray(x.reshape((nelx, nely)).T)


def cmd_solve(args):
    spec = load_spec(args.spec)
    t, cpu = time.perf_counter(), time.process_time()
    hist, c, x = solve(spec)
    print(f"seconds {time.perf_counter() - t:.3f}")
    print(f"cpu_seconds {time.process_time() - cpu:.3f}")
    if args.out:
        np.save(args.out, x)
    print(f"compliance_first {hist[0] if len(hist) else c:.10g}")
    print(f"compliance {c:.10g}")


def random_spec(rng, nelx, nely):
    """A small random problem of this script's own (not the Go generator's) drawing."""
    nodes = (nelx + 1) * (nely + 1)
    while True:
        fixed = [[int(n), "x"] for n in rng.choice(nodes, 2 + rng.integers(3), replace=False)]
        fixed += [[int(n), "y"] for n in rng.choice(nodes, 1 + rng.integers(2), replace=False)]
        rows = {n % (nely + 1) for n, a in fixed if a == "x"}
        cols = {n // (nely + 1) for n, a in fixed if a == "y"}
        if len(rows) >= 2 or len(cols) >= 2:
            break
    loads = [[int(n), str(rng.choice(["x", "y"])), float(rng.normal())] for n in rng.choice(nodes, 1 + rng.integers(2), replace=False)]
    return dict(nelx=nelx, nely=nely, volfrac=float(rng.uniform(0.3, 0.7)), fixed=fixed, loads=loads)


def cmd_fixtures(args):
    mbb = dict(nelx=60, nely=20, volfrac=0.5, nu=0.3,
               fixed=[[iy, "x"] for iy in range(21)] + [[60 * 21 + 20, "y"]], loads=[[0, "y", -1]])
    rng = np.random.default_rng(2026)
    specs = {"mbb60x20": mbb}
    for i, (nx, ny) in enumerate([(24, 16), (20, 20), (16, 30)]):
        specs[f"random{i}"] = random_spec(rng, nx, ny)
    arrays = {}
    for name, s in specs.items():
        with open(f"{args.dir}/{name}.json", "w") as f:
            json.dump(s, f)
        hist, c, x = solve({**DEFAULTS, **s})
        arrays[f"{name}_history"] = hist
        arrays[f"{name}_compliance"] = np.array(c)
        arrays[f"{name}_x"] = x
        print(name, hist[0], c)
    np.savez(f"{args.dir}/reference.npz", **arrays)


def cmd_dataset(args):
    d = np.load(args.npz)
    n = min(args.first, len(d["index"]))
    settings = {k: d[k].item() for k in ["penal", "rmin", "nu", "xmin", "iterations", "move", "damping"]}
    t0 = time.perf_counter()
    worst_c, pix = 0.0, 0
    for i in range(n):
        fixed = [[int(d["fixed_node"][i, k]), "xy"[d["fixed_axis"][i, k]]] for k in range(d["n_fixed"][i])]
        loads = [[int(d["load_node"][i, k]), "xy"[d["load_axis"][i, k]], float(d["load_value"][i, k])] for k in range(d["n_loads"][i])]
        spec = dict(settings, nelx=int(d["nelx"]), nely=int(d["nely"]), volfrac=float(d["volfrac"][i]), fixed=fixed, loads=loads)
        if args.write_specs:
            with open(f"{args.write_specs}/design{d['index'][i]}.json", "w") as f:
                json.dump(spec, f)
            continue
        _, c, x = solve(spec)
        rel = abs(c - d["compliance"][i]) / c
        diff = int(np.sum((x > 0.5).astype(np.uint8) != d["designs"][i]))
        worst_c, pix = max(worst_c, rel), pix + diff
        print(f"design {d['index'][i]} compliance {c:.8g} go {d['compliance'][i]:.8g} rel {rel:.2e} pixels_differing {diff}")
    if args.write_specs:
        return
    dt = time.perf_counter() - t0
    print(f"designs {n} max_rel_compliance {worst_c:.2e} pixels_differing {pix} seconds_per_design {dt / n:.3f}")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    s = sub.add_parser("solve")
    s.add_argument("spec")
    s.add_argument("--out")
    s = sub.add_parser("fixtures")
    s.add_argument("dir")
    s = sub.add_parser("dataset")
    s.add_argument("npz")
    s.add_argument("--first", type=int, default=10)
    s.add_argument("--write-specs", metavar="DIR", help="only write each design's problem as DIR/design<index>.json")
    args = ap.parse_args()
    {"solve": cmd_solve, "fixtures": cmd_fixtures, "dataset": cmd_dataset}[args.cmd](args)


if __name__ == "__main__":
    sys.exit(main())
