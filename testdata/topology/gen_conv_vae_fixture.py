#!/usr/bin/python3
"""Regression fixture for models/topology: the conv VAE of docs/design.md section 3
written in PyTorch from the description (not from the Go code), run on a few
random 40x40 designs. Run with Debian's python3 (python3-torch):

    /usr/bin/python3 testdata/topology/gen_conv_vae_fixture.py [--authors HEBO_CHECKOUT] [--export DIR]

The weights are not stored (the two 800x3200 layers alone are 20 MB): every
tensor is filled from an integer hash of its name and element index that the
Go test reproduces exactly (fill(), below). It writes conv_vae_io.npz: the
inputs, encoder outputs, logits and the MSE reconstruction loss in evaluation
and training mode, gradients (whole for small tensors, a corner [:8, :64] of the
larger ones) and the batch-norm statistics after one training forward.

--authors checks that the layer layout, the state-dict names and the shapes
equal those of the authors' _build_encoder/_build_decoder in
T-LBO/weighted_retraining/weighted_retraining/topology/topology_model.py of a
github.com/huawei-noah/HEBO checkout (checked at commit
ee6112d39d1a9e9703fecaf9057193e1ec9dae72); only those two functions are
executed, with torch.nn and their UnFlatten.

--export DIR also writes DIR/bare_state.pt (a bare state dict with the BaseVAE
buffers prior_mu and prior_sigma) and DIR/lightning.ckpt (the same wrapped as
PyTorch Lightning saves a checkpoint) and DIR/means.npy (encoder means of x in
evaluation mode), for checking `checkpoint import --task topology` by hand;
they are too large to commit.
"""
import argparse
import ast
import collections
import os

import numpy as np
import torch
from torch import nn

HERE = os.path.dirname(os.path.abspath(__file__))
LATENT = 20
B = 8


def unflatten(x):
    return x.view(x.size(0), 128, 5, 5)


class UnFlatten(nn.Module):
    def __init__(self, filters=1, size=28):
        super().__init__()
        self.filters, self.size = filters, size

    def forward(self, x):
        return x.view(x.size(0), self.filters, self.size, self.size)


def build(latent):
    """docs/design.md section 3, layer by layer (LeakyReLU slope 0.01, PyTorch's default)."""
    c = lambda i, o, s: nn.Conv2d(i, o, 3, stride=s, padding=1)
    t = lambda i, o, s: nn.ConvTranspose2d(i, o, 3, stride=s, padding=1, output_padding=s - 1)
    L = nn.LeakyReLU
    enc = nn.Sequential(c(1, 16, 1), L(), c(16, 32, 2), nn.BatchNorm2d(32), L(), c(32, 32, 1), L(),
                        c(32, 64, 2), nn.BatchNorm2d(64), L(), c(64, 64, 1), L(), c(64, 128, 2), nn.BatchNorm2d(128),
                        L(), c(128, 128, 1), L(), nn.Flatten(), nn.Linear(3200, 800), L(), nn.Linear(800, 2 * latent))
    dec = nn.Sequential(nn.Linear(latent, 800), L(), nn.Linear(800, 3200), L(), UnFlatten(128, 5),
                        t(128, 128, 1), L(), t(128, 64, 2), nn.BatchNorm2d(64), L(), t(64, 64, 1), L(),
                        t(64, 32, 2), nn.BatchNorm2d(32), L(), t(32, 32, 1), L(), t(32, 16, 2), nn.BatchNorm2d(16),
                        L(), t(16, 1, 1), L())
    m = nn.Module()
    m.encoder, m.decoder = enc, dec
    return m


def fnv1a(name):
    h = 0x811C9DC5
    for b in name.encode():
        h = ((h ^ b) * 0x01000193) & 0xFFFFFFFF
    return h


def uniform(name, n):
    """n numbers in [0, 1) from an integer hash of (name, index), exact in any language."""
    m = 0xFFFFFFFF
    i = np.arange(1, n + 1, dtype=np.uint64)
    x = (i * np.uint64(0x9E3779B1) + np.uint64(fnv1a(name)) * np.uint64(0x85EBCA77)) & np.uint64(m)
    x ^= x >> np.uint64(15)
    x = (x * np.uint64(0x2C1B3C6D)) & np.uint64(m)
    x ^= x >> np.uint64(12)
    x = (x * np.uint64(0x297A2D39)) & np.uint64(m)
    x ^= x >> np.uint64(15)
    return x.astype(np.float64) / 2.0 ** 32


def fill(name, shape):
    """The value of a state-dict tensor: weights U(-b, b) with b = 1/sqrt(numel/shape[0]),
    1-d weights (batch norm) 0.5 + u, biases 0.2 (2u - 1), running means 0.2 (2u - 1),
    running variances 0.5 + 1.5 u."""
    n = int(np.prod(shape))
    u = uniform(name, n)
    if name.endswith("running_var"):
        v = 0.5 + 1.5 * u
    elif name.endswith("running_mean") or name.endswith("bias"):
        v = 0.2 * (2 * u - 1)
    elif len(shape) == 1:
        v = 0.5 + u
    else:
        v = (2 * u - 1) / np.sqrt(n / shape[0])
    return torch.tensor(v.astype(np.float32).reshape(shape))


def check_authors(checkout, model):
    path = os.path.join(checkout, "T-LBO/weighted_retraining/weighted_retraining/topology/topology_model.py")
    tree = ast.parse(open(path).read())
    funcs = [n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name in ("_build_encoder", "_build_decoder")]
    ns = {"nn": nn, "UnFlatten": UnFlatten}
    exec(compile(ast.Module(body=funcs, type_ignores=[]), path, "exec"), ns)
    theirs = nn.Module()
    theirs.encoder, theirs.decoder = ns["_build_encoder"](LATENT), ns["_build_decoder"](LATENT)
    a = [(k, tuple(v.shape)) for k, v in theirs.state_dict().items()]
    b = [(k, tuple(v.shape)) for k, v in model.state_dict().items()]
    assert a == b, f"layouts differ:\n{a}\n{b}"
    assert str(theirs) == str(model), "module printouts differ"
    print(f"authors' layout: {len(a)} tensors, names, shapes and modules equal")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--authors")
    ap.add_argument("--export")
    args = ap.parse_args()
    model = build(LATENT)
    if args.authors:
        check_authors(args.authors, model)
    sd = collections.OrderedDict()
    for k, v in model.state_dict().items():
        sd[k] = v if k.endswith("num_batches_tracked") else fill(k, tuple(v.shape))
    model.load_state_dict(sd)

    rng = np.random.default_rng(7)
    x = torch.tensor((rng.random((B, 1, 40, 40)) < 0.45).astype(np.float32))
    z = torch.tensor(rng.normal(size=(B, LATENT)).astype(np.float32))
    out = {"x": x.numpy(), "z": z.numpy()}

    def encode(x):
        h = model.encoder(x)
        return h[:, :LATENT], h[:, LATENT:]

    def rec(z, x):
        return nn.functional.mse_loss(torch.sigmoid(model.decoder(z)), x)

    model.eval()
    with torch.no_grad():
        mu, s = encode(x)
        logits = model.decoder(z)
        out.update(eval_mu=mu.numpy(), eval_log_std=s.numpy(), eval_logits=logits.numpy(),
                   eval_rec=np.array(rec(z, x).item(), dtype=np.float32),
                   eval_decoded=(torch.sigmoid(logits) > 0.5).numpy().astype(np.uint8))
    if args.export:
        os.makedirs(args.export, exist_ok=True)
        np.save(os.path.join(args.export, "means.npy"), mu.numpy().astype(np.float64))
        np.save(os.path.join(args.export, "x.npy"), x.numpy()[:, 0].astype(np.uint8))
        full = collections.OrderedDict(prior_mu=torch.zeros(LATENT), prior_sigma=torch.ones(LATENT))
        full.update(sd)
        torch.save(full, os.path.join(args.export, "bare_state.pt"))
        opt = torch.optim.Adam([nn.Parameter(torch.zeros(3))], lr=1e-3)
        torch.save({"epoch": 3, "global_step": 120, "pytorch-lightning_version": "1.4.0", "state_dict": full,
                    "optimizer_states": [opt.state_dict()], "lr_schedulers": [],
                    "hyper_parameters": {"latent_dim": LATENT, "beta_final": 1e-4}},
                   os.path.join(args.export, "lightning.ckpt"))

    model.train()
    mu, s = encode(x)
    r = rec(z, x)
    (r + mu.sum() + (s ** 2).sum()).backward()
    out.update(train_mu=mu.detach().numpy(), train_log_std=s.detach().numpy(),
               train_rec=np.array(r.item(), dtype=np.float32))
    for name, p in model.named_parameters():
        g = p.grad.numpy()
        if g.size > 10000:
            out["gradcorner/" + name] = g[:8, :64]  # the large layers: a corner
        else:
            out["grad/" + name] = g
    for name, b in model.named_buffers():
        if "running" in name:
            out["after/" + name] = b.numpy()
    np.savez_compressed(os.path.join(HERE, "conv_vae_io.npz"), **out)
    print("wrote conv_vae_io.npz:", len(out), "arrays; eval rec", out["eval_rec"], "train rec", out["train_rec"])


if __name__ == "__main__":
    main()
