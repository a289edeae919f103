#!/usr/bin/python3
"""Greedy decodings of the authors' JT-VAE, for internal/task/molecule.

Runs their JTNNVAE.decode(z_tree, z_graph, prob_decode=False) (their
decode_deterministic, which their BO uses), from a weighted-retraining
checkout at the commit make_fixture.py names, with Debian's python3-torch and
python3-rdkit, in float32 as their code runs:

    /usr/bin/python3 testdata/jtvae/make_decode_fixture.py CHECKOUT --weights W
        writes beside this script decode_state.pt (W's JTNNVAE tensors as
        their state dict) and decode.npz: latent points (prior samples and
        encoder means of ZINC test molecules) and their SMILES.
    ... --weights W --measure N --seed S --out DIR
        N/2 encoder means of ZINC validation molecules (from the S-th on;
        plus N(0, NOISE^2) with --noise NOISE) and N/2 prior samples (seed S): writes DIR/z.npy, DIR/sources.txt and
        DIR/ref.txt (one line per point: the SMILES, "" for None, "TIMEOUT"
        past the time limit), DIR/state.pt (the weights, for `checkpoint
        import`) and prints the decoding time.
    ... --weights W --time N --seed S --out DIR [--skip K]
        decodes N prior samples (seed S, after K skipped), one thread, and
        prints ref_decode_s and ref_decode_cpu_s (the process's CPU time
        while decoding); for the side-by-side timing.

W is random:SEED:HIDDEN (xavier-normal weights from SEED, as their JTVAE
initialises them), or a state dict that torch.load reads with their JTNNVAE names (one of
their checkpoints' jtnn_vae.* tensors, or a checkpoint of tlbo-native
train, decoded over the vocabulary its W.json records; otherwise ZINC's
jtvae_vocab.txt; decode_state.pt was made from a hidden-40 network that tlbo-native
trained for a few epochs on 4,000 ZINC molecules, so that its trees look
like molecules' rather than random weights' degenerate ones).

A point whose decoding takes more than --limit seconds of CPU (default 20) is
skipped (fixture) or recorded as TIMEOUT: random weights grow some trees
whose enumeration of attachments takes minutes.
"""

import argparse
import os
import signal
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import make_fixture  # noqa: E402

ZINC = make_fixture.ZINC
HERE = os.path.dirname(os.path.abspath(__file__))


class Slow(BaseException):  # their sanitize() swallows Exception
    pass


def _give_up(*_):
    raise Slow()


def decode_points(m, z, limit, log=True):
    """Greedy decode of each row of z (float32, n x latent) with a CPU-time
    limit; returns SMILES ("" for None, None past the limit) and seconds."""
    import torch

    signal.signal(signal.SIGVTALRM, _give_up)
    lt = m.latent_T_size
    out, secs = [], []
    with torch.no_grad():
        for i in range(len(z)):
            zt = torch.tensor(z[i : i + 1, :lt])
            zg = torch.tensor(z[i : i + 1, lt:])
            t0 = time.perf_counter()
            signal.setitimer(signal.ITIMER_VIRTUAL, limit, 0.5)
            try:
                s = m._decode(zt, zg, False)
                s = "" if s is None else s
            except Slow:
                s = None
            finally:
                signal.setitimer(signal.ITIMER_VIRTUAL, 0)
            secs.append(time.perf_counter() - t0)
            out.append(s)
            if log:
                print(f"point {i}: {secs[-1]:.2f} s {s!r}", flush=True)
    return out, secs


def encoder_means(jtnn, m, vocab, path, n, skip=0):
    """float32 encoder means of the first n molecules of path (after skip)
    that decompose over the vocabulary."""
    import torch

    trees = []
    with open(path) as f:
        lines = [l.split()[0] for l in f if l.strip()]
    for s in lines[skip:]:
        try:
            t = jtnn.MolTree(s)
            for node in t.nodes:
                vocab.get_index(node.smiles)
        except Exception:
            continue
        trees.append(t)
        if len(trees) == n:
            break
    _, jtenc, mpn_h = jtnn.datautils.tensorize(trees, vocab, assm=False)
    with torch.no_grad():
        mu, _ = m.encode_latent(jtenc, mpn_h)
    return mu.numpy().astype(np.float32), [t.smiles for t in trees]


def load_vocab(jtnn, weights):
    """The vocabulary a checkpoint of ours records (WEIGHTS.json beside
    WEIGHTS.pt), else the ZINC one."""
    header = weights[: -len(".pt")] + ".json" if weights.endswith(".pt") else ""
    if header and os.path.exists(header):
        import json

        with open(header) as f:
            words = json.load(f).get("model", {}).get("vocab")
        if words:
            return jtnn.Vocab(words)
    with open(os.path.join(ZINC, "jtvae_vocab.txt")) as f:
        return jtnn.Vocab([l.strip() for l in f if l.strip()])


def load_weights(jtnn, vocab, path):
    """JTNNVAE with the tensors of path (hidden size from their shapes), the
    compatibility switches of their JTVAE, float32."""
    import torch

    if path.startswith("random:"):
        # xavier-normal weights from a seed, as their JTVAE initialises them
        seed, hidden = (int(v) for v in path.split(":")[1:])
        m = make_fixture.build(jtnn, vocab, hidden, 56, 20, 3, seed=seed)
        m.eval()
        return m
    sd = torch.load(path)
    sd = {k[len("jtnn_vae."):] if k.startswith("jtnn_vae.") else k: v for k, v in sd.items()}
    hidden = sd["jtnn.embedding.weight"].shape[1]
    m = jtnn.JTNNVAE(vocab, hidden, 56, 20, 3)
    own = m.state_dict()
    m.load_state_dict({k: sd[k].float() for k in own})
    make_fixture.set_switches(m, True)
    m.eval()
    return m


def fixture(args, jtnn, vocab):
    import torch

    m = load_weights(jtnn, vocab, args.weights)
    torch.save({k: v.float().contiguous() for k, v in m.state_dict().items()}, os.path.join(HERE, "decode_state.pt"))
    rng = np.random.default_rng(11)
    prior = rng.standard_normal((16, 56)).astype(np.float32)
    means, mols = encoder_means(jtnn, m, vocab, os.path.join(ZINC, "jtvae_test.txt"), 16, skip=20)
    z = np.concatenate([prior, means])
    smiles, secs = decode_points(m, z, args.limit)
    keep = [i for i, s in enumerate(smiles) if s is not None]
    print(f"kept {len(keep)} of {len(z)} points; {sum(1 for s in smiles if s == '')} decode to None")
    np.savez_compressed(os.path.join(HERE, "decode.npz"), z=z[keep],
                        smiles=np.array([smiles[i] for i in keep]),
                        source=np.array([("prior" if i < len(prior) else "mean:" + mols[i - len(prior)]) for i in keep]))


def measure(args, jtnn, vocab):
    import torch

    os.makedirs(args.out, exist_ok=True)
    m = load_weights(jtnn, vocab, args.weights)
    torch.save({k: v.float().contiguous() for k, v in m.state_dict().items()}, os.path.join(args.out, "state.pt"))
    half = args.measure // 2
    means, mols = encoder_means(jtnn, m, vocab, os.path.join(ZINC, "jtvae_valid.txt"), args.measure - half, skip=args.seed)
    rng = np.random.default_rng(args.seed)
    prior = rng.standard_normal((half, 56)).astype(np.float32)
    means = (means + args.noise * rng.standard_normal(means.shape)).astype(np.float32)
    z = np.concatenate([means, prior])
    np.save(os.path.join(args.out, "z.npy"), z.astype(np.float64))
    with open(os.path.join(args.out, "sources.txt"), "w") as f:
        f.write("".join(f"mean {s}\n" for s in mols) + "prior\n" * len(prior))
    smiles, secs = decode_points(m, z, args.limit)
    with open(os.path.join(args.out, "ref.txt"), "w") as f:
        f.write("".join(("TIMEOUT" if s is None else s) + "\n" for s in smiles))
    print(f"ref_decode_s {sum(secs):.1f} over {len(z)} points; {sum(s is None for s in smiles)} timeouts")


def timing(args, jtnn, vocab):
    import torch

    torch.set_num_threads(1)
    m = load_weights(jtnn, vocab, args.weights)
    rng = np.random.default_rng(args.seed)
    z = rng.standard_normal((args.skip + args.time, 56)).astype(np.float32)[args.skip:]
    os.makedirs(args.out, exist_ok=True)
    np.save(os.path.join(args.out, "time_z.npy"), z.astype(np.float64))
    cpu0 = time.process_time()
    smiles, secs = decode_points(m, z, args.limit, log=False)
    cpu = time.process_time() - cpu0
    with open(os.path.join(args.out, "time_ref.txt"), "w") as f:
        f.write("".join(("TIMEOUT" if s is None else s) + "\n" for s in smiles))
    print(f"ref_decode_s {sum(secs):.2f} over {len(z)} points; {sum(s is None for s in smiles)} timeouts")
    print(f"ref_decode_cpu_s {cpu:.2f}")


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("checkout")
    p.add_argument("--weights", required=True)
    p.add_argument("--measure", type=int, default=0)
    p.add_argument("--time", type=int, default=0)
    p.add_argument("--skip", type=int, default=0)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--limit", type=float, default=20.0)
    p.add_argument("--noise", type=float, default=0.0, help="measure: standard deviation of noise added to the means")
    p.add_argument("--out", default="")
    args = p.parse_args()
    from rdkit import RDLogger

    RDLogger.DisableLog("rdApp.*")
    jtnn = make_fixture.load_jtnn(args.checkout)
    vocab = load_vocab(jtnn, args.weights)
    if args.measure:
        measure(args, jtnn, vocab)
    elif args.time:
        timing(args, jtnn, vocab)
    else:
        fixture(args, jtnn, vocab)


if __name__ == "__main__":
    main()
