#!/usr/bin/python3
"""Fixtures for models/jtvae from the authors' JT-VAE.

Runs the JT-VAE that weighted retraining and T-LBO use, from
github.com/cambridge-mlg/weighted-retraining at commit
4b1c783793e058ace0b33ff3166c9309ede8994f (weighted_retraining/chem/jtnn,
class JTNNVAE, with the compatibility switches their Lightning class JTVAE
sets), with Debian's python3-torch and python3-rdkit:

    /usr/bin/python3 testdata/jtvae/make_fixture.py CHECKOUT [--out DIR]
    /usr/bin/python3 testdata/jtvae/make_fixture.py CHECKOUT --bench N [--bench-file F]
    /usr/bin/python3 testdata/jtvae/make_fixture.py CHECKOUT --write-bench N

CHECKOUT is the path of their repository (the directory holding
weighted_retraining/). Writes into DIR (default: this script's directory):

  parity.npz     featurised inputs of a few ZINC molecules (tree, graph and
                 assembly candidates, derived from their MolTree / tensorize),
                 the epsilon, the encoder outputs and the loss components;
                 the reference runs in float64 (torch default dtype), the
                 weights are float32 values.
  parity_state.pt   their JTNNVAE state dict (seeded xavier-normal matrices,
                 zero vectors), small hidden size to keep the file small.
  parity_grads.npz  gradients of every parameter for one loss evaluation.
  parity.ckpt    the same weights as a Lightning-style checkpoint
                 (state_dict with jtnn_vae.-prefixed keys, prior_mu,
                 prior_sigma, and non-tensor entries).
  layout.npz     names and shapes of the full-size state dict (hidden 450,
                 latent 56, 780 clusters).
  bench32.npz    featurised inputs of 32 molecules for the Go benchmark.

--bench N times N training steps (forward + backward + Adam) of the
full-size network on the molecules of bench32.npz (--bench-file: another
file of this directory, e.g. bench128.npz) and prints ref_step_ms per step
and the split, and ref_step_cpu_ms (the process's CPU time a step, steadier
than wall time beside other jobs); run it with OPENBLAS_NUM_THREADS=1.
Their batching (tensorize) is outside the timed step.

--write-bench N writes benchN.npz alone: N distinct molecules (the first 32
are bench32.npz's), the batch of a T-LBO retraining step (128) without the
repeats that models/jtvae's schedule would merge.
"""

import argparse
import copy
import os
import signal
import sys
import time
import types

import numpy as np

COMMIT = "4b1c783793e058ace0b33ff3166c9309ede8994f"
ZINC = "/work/shared/data/zinc"
DECODE_STEPS = 16


def load_jtnn(checkout):
    # jtnn_vae.py imports pytorch_lightning without using it.
    sys.modules.setdefault("pytorch_lightning", types.ModuleType("pytorch_lightning"))
    sys.path.insert(0, os.path.join(checkout, "weighted_retraining", "chem"))
    import jtnn  # noqa: E402

    return jtnn


def tensorize_tree(jtnn, smiles):
    """chem_data.tensorize of their code: tree, recover, assemble."""
    t = jtnn.MolTree(smiles)
    t.recover()
    t.assemble()
    for node in t.nodes:
        if node.label not in node.cands:
            node.cands.append(node.label)
    return t


def molecules(jtnn, vocab, n, skip=0):
    out = []
    with open(os.path.join(ZINC, "jtvae_test.txt")) as f:
        lines = [l.split()[0] for l in f if l.strip()]
    for s in lines[skip:]:
        try:
            t = tensorize_tree(jtnn, s)
            for node in t.nodes:
                vocab.get_index(node.smiles)
        except Exception:
            continue
        out.append(t)
        if len(out) == n:
            break
    return out


def featurise(jtnn, trees, vocab):
    """Flat arrays of the inputs models/jtvae's Batch needs, taken from the
    same objects their tensorize uses (so this is also the featurisation's
    ground truth)."""
    from jtnn import mpn as mpnmod
    from jtnn import jtmpn as jtmpnmod
    from jtnn.chemutils import get_mol
    import rdkit.Chem as Chem

    jtnn.datautils.set_batch_nodeID(trees, vocab)
    f = {k: [] for k in [
        "node_ptr", "node_wid", "nbr_ptr", "nbr",
        "atom_ptr", "atom_feat", "bond_ptr", "bond_atoms", "bond_feat",
        "grp_mol", "grp_node", "grp_ncand", "grp_label",
        "cand_atom_ptr", "cand_atom_feat", "cand_bond_ptr", "cand_bond_atoms", "cand_bond_feat",
        "cand_inj_ptr", "cand_inj"]}
    f["node_ptr"].append(0)
    f["nbr_ptr"].append(0)
    f["atom_ptr"].append(0)
    f["bond_ptr"].append(0)
    f["cand_atom_ptr"].append(0)
    f["cand_bond_ptr"].append(0)
    f["cand_inj_ptr"].append(0)
    for i, t in enumerate(trees):
        base = t.nodes[0].idx
        for node in t.nodes:
            f["node_wid"].append(node.wid)
            for nb in node.neighbors:
                f["nbr"].append(nb.idx - base)
            f["nbr_ptr"].append(len(f["nbr"]))
        f["node_ptr"].append(len(f["node_wid"]))

        mol = get_mol(t.smiles)
        for atom in mol.GetAtoms():
            f["atom_feat"].append(mpnmod.atom_features(atom).numpy())
        for bond in mol.GetBonds():
            f["bond_atoms"].append([bond.GetBeginAtom().GetIdx(), bond.GetEndAtom().GetIdx()])
            f["bond_feat"].append(mpnmod.bond_features(bond).numpy())
        f["atom_ptr"].append(len(f["atom_feat"]))
        f["bond_ptr"].append(len(f["bond_feat"]))

        for k, node in enumerate(t.nodes):
            if node.is_leaf or len(node.cands) == 1:
                continue
            f["grp_mol"].append(i)
            f["grp_node"].append(k)
            f["grp_ncand"].append(len(node.cands))
            f["grp_label"].append(node.cands.index(node.label))
            for cand in node.cands:
                cmol = Chem.MolFromSmiles(cand)
                Chem.Kekulize(cmol)
                for atom in cmol.GetAtoms():
                    f["cand_atom_feat"].append(jtmpnmod.atom_features(atom).numpy())
                for bond in cmol.GetBonds():
                    a1, a2 = bond.GetBeginAtom(), bond.GetEndAtom()
                    x, y = a1.GetIdx(), a2.GetIdx()
                    f["cand_bond_atoms"].append([x, y])
                    f["cand_bond_feat"].append(jtmpnmod.bond_features(bond).numpy())
                    xn, yn = a1.GetAtomMapNum(), a2.GetAtomMapNum()
                    xb = t.nodes[xn - 1].idx - base if xn > 0 else -1
                    yb = t.nodes[yn - 1].idx - base if yn > 0 else -1
                    if xb >= 0 and yb >= 0 and xb != yb:
                        # the same tree messages their tensorize injects
                        # (mess_dict holds every directed tree edge)
                        if t.nodes[yb] in t.nodes[xb].neighbors:
                            f["cand_inj"].append([y, xb, yb])
                            f["cand_inj"].append([x, yb, xb])
                f["cand_atom_ptr"].append(len(f["cand_atom_feat"]))
                f["cand_bond_ptr"].append(len(f["cand_bond_feat"]))
                f["cand_inj_ptr"].append(len(f["cand_inj"]))
    out = {}
    shapes = {"atom_feat": (-1, 39), "bond_feat": (-1, 11), "bond_atoms": (-1, 2),
              "cand_atom_feat": (-1, 35), "cand_bond_feat": (-1, 5),
              "cand_bond_atoms": (-1, 2), "cand_inj": (-1, 3)}
    for k, v in f.items():
        if k in ("atom_feat", "bond_feat", "cand_atom_feat", "cand_bond_feat"):
            a = np.asarray(v, dtype=np.float32).reshape(shapes[k])
        else:
            a = np.asarray(v, dtype=np.int64)
            if k in shapes:
                a = a.reshape(shapes[k])
        out[k] = a
    out["smiles"] = np.array([t.smiles for t in trees])
    return out


def build(jtnn, vocab, hidden, latent, depthT, depthG, seed):
    import torch

    torch.manual_seed(seed)
    m = jtnn.JTNNVAE(vocab, hidden, latent, depthT, depthG)
    for p in m.parameters():  # as their JTVAE
        if p.dim() == 1:
            torch.nn.init.constant_(p, 0)
        else:
            torch.nn.init.xavier_normal_(p)
    m.jtnn.GRU.tanh = False
    m.decoder.U_i_relu = False
    m._no_assm = True
    return m


def set_switches(m, compat):
    m.jtnn.GRU.tanh = not compat
    m.decoder.U_i_relu = not compat
    m._no_assm = compat


def losses(jtnn, m, trees, vocab, eps, beta):
    """JTNNVAE.forward with the given epsilon; returns the components."""
    import torch

    trees = copy.deepcopy(trees)  # the decoder rewires node.neighbors
    batch = jtnn.datautils.tensorize(trees, vocab, assm=True)
    x_batch, jtenc, mpn_h, jtmpn_h = batch
    tree_vecs, tree_mess, mol_vecs = m.encode(jtenc, mpn_h)
    queue = [eps[:, : m.latent_T_size], eps[:, m.latent_T_size:]]
    orig = torch.randn_like
    torch.randn_like = lambda t: queue.pop(0).to(t.dtype)
    try:
        z_tree, tree_kl = m.rsample(tree_vecs, m.T_mean, m.T_var)
        z_mol, mol_kl = m.rsample(mol_vecs, m.G_mean, m.G_var)
    finally:
        torch.randn_like = orig
    word, topo, word_acc, topo_acc = m.decoder(x_batch, z_tree)
    assm, assm_acc = m.assm(x_batch, jtmpn_h, z_mol, tree_mess)
    kl = tree_kl + mol_kl
    total = word + topo + assm + beta * kl
    return dict(word=word, topo=topo, assm=assm, kl=kl, total=total,
                word_acc=word_acc, topo_acc=topo_acc, assm_acc=assm_acc)


def decode_trees(jtnn, m, vocab, rng, n=6):
    """Greedy tree decoding (their JTNNDecoder.decode) of n latent points,
    with every can_assemble call recorded (the chemistry the Go test mocks)
    and the vocabulary's attachment slots."""
    import torch
    from jtnn import jtnn_dec

    calls = {"call_ptr": [0], "call_center": [], "call_nbr": [], "call_leaf": [], "call_result": []}
    orig = jtnn_dec.can_assemble
    pending = []

    def recording(node_x, node_y):
        neis = node_x.neighbors + [node_y]
        leaf = [len(nei.neighbors) <= 1 for nei in neis]
        wids = [nei.wid if hasattr(nei, "wid") else vocab.get_index(nei.smiles) for nei in neis]
        ok = orig(node_x, node_y)
        pending.append((node_x.wid, wids, leaf, ok))
        return ok

    class Slow(BaseException):  # their sanitize() swallows Exception
        pass

    def give_up(*_):
        raise Slow()

    # Random weights grow some trees whose enumeration of attachments takes
    # minutes (their can_assemble is exponential in a node's neighbours):
    # points whose decoding takes over 5 s of CPU are skipped.
    # Their step cap (MAX_DECODE_LEN, 100) is lowered to keep the trees of
    # random weights small; the Go test passes the same cap.
    signal.signal(signal.SIGVTALRM, give_up)
    max_len = jtnn_dec.MAX_DECODE_LEN
    jtnn_dec.MAX_DECODE_LEN = DECODE_STEPS
    zs = []
    out = {"dec_node_ptr": [0], "dec_wid": [], "dec_nbr_ptr": [0], "dec_nbr": []}
    jtnn_dec.can_assemble = recording
    try:
        with torch.no_grad():
            for i in range(10 * n):
                if len(zs) == n:
                    break
                z = rng.standard_normal((1, m.latent_T_size)).astype(np.float32)
                pending.clear()
                t0 = time.process_time()
                signal.setitimer(signal.ITIMER_VIRTUAL, 5.0, 0.2)
                try:
                    _, nodes = m.decoder.decode(torch.tensor(z, dtype=torch.float64), False)
                except Slow:
                    print(f"point {i}: skipped after {time.process_time() - t0:.1f} s", flush=True)
                    continue
                finally:
                    signal.setitimer(signal.ITIMER_VIRTUAL, 0)
                print(f"point {i}: {len(nodes)} nodes in {time.process_time() - t0:.1f} s", flush=True)
                zs.append(z[0])
                for node in nodes:
                    out["dec_wid"].append(node.wid)
                    out["dec_nbr"].extend(nb.idx for nb in node.neighbors)
                    out["dec_nbr_ptr"].append(len(out["dec_nbr"]))
                out["dec_node_ptr"].append(len(out["dec_wid"]))
                for center, wids, leaf, ok in pending:
                    calls["call_center"].append(center)
                    calls["call_nbr"].extend(wids)
                    calls["call_leaf"].extend(int(v) for v in leaf)
                    calls["call_ptr"].append(len(calls["call_nbr"]))
                    calls["call_result"].append(int(bool(ok)))
    finally:
        jtnn_dec.can_assemble = orig
        jtnn_dec.MAX_DECODE_LEN = max_len
    z = np.stack(zs)
    slots = {"slot_ptr": [0], "slot_symbol": [], "slot_charge": [], "slot_hs": []}
    for k in range(len(vocab.vocab)):
        for sym, charge, hs in vocab.get_slots(k):
            slots["slot_symbol"].append(sym)
            slots["slot_charge"].append(charge)
            slots["slot_hs"].append(hs)
        slots["slot_ptr"].append(len(slots["slot_symbol"]))
    res = {k: np.asarray(v, dtype=np.int64) for k, v in {**out, **calls, **slots}.items() if k != "slot_symbol"}
    res["slot_symbol"] = np.array(slots["slot_symbol"])
    res["dec_z"] = z
    res["dec_max_steps"] = np.array([DECODE_STEPS], dtype=np.int64)
    print("decoded trees of", [int(b - a) for a, b in zip(out["dec_node_ptr"], out["dec_node_ptr"][1:])], "nodes;",
          len(calls["call_result"]), "can_assemble calls")
    return res


def encoder_outputs(jtnn, m, trees, vocab):
    import torch

    trees = copy.deepcopy(trees)
    _, jtenc, mpn_h = jtnn.datautils.tensorize(trees, vocab, assm=False)
    with torch.no_grad():
        tv, _, mv = m.encode(jtenc, mpn_h)
        mu, logvar = m.encode_latent(jtenc, mpn_h)
    return tv, mv, mu, logvar


def make(args, jtnn, vocab):
    import torch

    torch.set_default_dtype(torch.float64)
    hidden, latent, beta = 40, 56, 0.1
    m = build(jtnn, vocab, hidden, latent, 20, 3, seed=7)
    # weights are float32 values so that the float32 network holds them exactly
    with torch.no_grad():
        for p in m.parameters():
            p.copy_(p.float().double())
    trees = molecules(jtnn, vocab, 6)
    fx = featurise(jtnn, trees, vocab)
    rng = np.random.default_rng(3)
    eps = torch.tensor(rng.standard_normal((len(trees), latent)).astype(np.float32), dtype=torch.float64)
    fx["eps"] = eps.numpy().astype(np.float32)
    fx["config"] = np.array([hidden, latent, 20, 3, len(vocab.vocab)], dtype=np.int64)
    fx["beta"] = np.array(beta)

    tv, mv, mu, logvar = encoder_outputs(jtnn, m, trees, vocab)
    fx.update(tree_vecs=tv.numpy(), mol_vecs=mv.numpy(), mean=mu.numpy(), logvar=logvar.numpy())
    m.jtnn.GRU.depth = 3  # trees deeper than the synchronous iterations reach
    _, _, mu3, _ = encoder_outputs(jtnn, m, trees, vocab)
    m.jtnn.GRU.depth = 20
    fx["mean_depth3"] = mu3.numpy()

    for compat in (False, True):
        set_switches(m, compat)
        m.zero_grad()
        l = losses(jtnn, m, trees, vocab, eps, beta)
        tag = "compat" if compat else "orig"
        for k, v in l.items():
            fx[f"{tag}_{k}"] = np.array(float(v))
        if compat:
            l["total"].backward()
            grads = {n: p.grad.numpy().astype(np.float64) for n, p in m.named_parameters() if p.grad is not None}
            np.savez_compressed(os.path.join(args.out, "parity_grads.npz"), **grads)
    set_switches(m, True)
    fx.update(decode_trees(jtnn, m, vocab, rng))
    np.savez_compressed(os.path.join(args.out, "parity.npz"), **fx)

    sd = {k: v.float().contiguous() for k, v in m.state_dict().items()}
    torch.save(sd, os.path.join(args.out, "parity_state.pt"))
    ckpt = {"epoch": 3, "global_step": 120, "pytorch-lightning_version": "1.0.0",
            "state_dict": {"prior_mu": torch.zeros(latent, dtype=torch.float32),
                           "prior_sigma": torch.ones(latent, dtype=torch.float32),
                           **{"jtnn_vae." + k: v for k, v in sd.items()}},
            "hyper_parameters": {"hidden_size": hidden, "latent_dim": latent}}
    torch.save(ckpt, os.path.join(args.out, "parity.ckpt"))

    torch.set_default_dtype(torch.float32)
    full = jtnn.JTNNVAE(vocab, 450, 56, 20, 3)
    names = [k for k in full.state_dict()]
    np.savez_compressed(os.path.join(args.out, "layout.npz"),
                        names=np.array(names),
                        shapes=np.array([list(v.shape) + [0] * (2 - v.dim()) for v in full.state_dict().values()], dtype=np.int64))
    print("parameters", sum(p.numel() for p in full.parameters()), "tensors", len(names))

    write_bench(args, jtnn, vocab, 32)
    for k in ("compat_word", "compat_topo", "compat_assm", "compat_kl", "orig_word", "orig_assm"):
        print(k, fx[k])


def write_bench(args, jtnn, vocab, n):
    """benchN.npz: n distinct test-split molecules from the 101st on."""
    bx = featurise(jtnn, molecules(jtnn, vocab, n, skip=100), vocab)
    np.savez_compressed(os.path.join(args.out, f"bench{n}.npz"), **bx)


def bench(args, jtnn, vocab):
    import torch

    torch.set_num_threads(1)
    bx = np.load(os.path.join(args.out, args.bench_file))
    trees = [tensorize_tree(jtnn, str(s)) for s in bx["smiles"]]
    m = build(jtnn, vocab, 450, 56, 20, 3, seed=1)
    opt = torch.optim.Adam(m.parameters(), lr=1e-3)
    split = {"tree_encoder": [], "graph_encoder": [], "decoder": [], "assembly": [], "backward_adam": [], "step": []}
    cpu = []
    for it in range(args.bench):
        batch_trees = copy.deepcopy(trees)
        x_batch, jtenc, mpn_h, jtmpn_h = jtnn.datautils.tensorize(batch_trees, vocab, assm=True)
        c0 = time.process_time()
        t0 = time.perf_counter()
        opt.zero_grad()
        tv, tm = m.jtnn(*jtenc)
        t1 = time.perf_counter()
        mv = m.mpn(*mpn_h)
        t2 = time.perf_counter()
        zt, kt = m.rsample(tv, m.T_mean, m.T_var)
        zm, km = m.rsample(mv, m.G_mean, m.G_var)
        word, topo, _, _ = m.decoder(x_batch, zt)
        t3 = time.perf_counter()
        assm, _ = m.assm(x_batch, jtmpn_h, zm, tm)
        t4 = time.perf_counter()
        loss = word + topo + assm + 1e-3 * (kt + km)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(m.parameters(), 20.0)
        opt.step()
        t5 = time.perf_counter()
        cpu.append((time.process_time() - c0) * 1e3)
        for k, v in zip(split, (t1 - t0, t2 - t1, t3 - t2, t4 - t3, t5 - t4, t5 - t0)):
            split[k].append(v * 1e3)
        print(f"step {it}: " + " ".join(f"{k}={v[-1]:.0f}ms" for k, v in split.items()), flush=True)
    med = {k: float(np.median(v)) for k, v in split.items()}
    print("ref split ms: " + " ".join(f"{k}={v:.0f}" for k, v in med.items()))
    print(f"ref_step_ms {med['step']:.1f}")
    print(f"ref_step_cpu_ms {float(np.median(cpu)):.1f}")


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("checkout", help="path of a weighted-retraining checkout at commit " + COMMIT)
    p.add_argument("--out", default=os.path.dirname(os.path.abspath(__file__)))
    p.add_argument("--bench", type=int, default=0, help="time N training steps instead of writing fixtures")
    p.add_argument("--bench-file", default="bench32.npz", help="the molecules --bench trains on (in --out)")
    p.add_argument("--write-bench", type=int, default=0, help="write benchN.npz of N distinct molecules alone")
    args = p.parse_args()
    from rdkit import RDLogger

    RDLogger.DisableLog("rdApp.*")
    jtnn = load_jtnn(args.checkout)
    with open(os.path.join(ZINC, "jtvae_vocab.txt")) as f:
        vocab = jtnn.Vocab([l.strip() for l in f if l.strip()])
    if args.bench:
        bench(args, jtnn, vocab)
    elif args.write_bench:
        write_bench(args, jtnn, vocab, args.write_bench)
    else:
        make(args, jtnn, vocab)


if __name__ == "__main__":
    main()
