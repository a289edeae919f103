#!/usr/bin/python3
"""Greedy reconstruction, by docs/experiment/reconstruct-expression.sh's measure, of the grammar
VAEs that weighted retraining ships (cambridge-mlg/weighted-retraining, checked at commit
4b1c783793e058ace0b33ff3166c9309ede8994f: assets/pretrained_models/expr/expr-k_{1e-3,1e-1,inf}.hdf5,
Keras 1.2.1 models of Kusner et al.'s Grammar VAE). pretrained/README.md compares them with ours.

Their own EquationGrammarModel (weighted_retraining/expr/equation_vae.py: nltk parse to one-hot,
the stack-masked decoder, prods_to_eq) runs as it is; only their Keras model is replaced, by a
forward pass written here in torch (float64) from Keras 1's layers as the .hdf5 describes them:
Convolution1D (TensorFlow's cross-correlation; the kernel flipped, as Theano would, reconstructs
nothing), BatchNormalization at inference (running_std holds the variance, epsilon 1e-3), Dense,
RepeatVector, GRU with hard_sigmoid gates and the reset gate applied to h before U_h. The
encoder's means are decoded greedily (numpy.random.gumbel made to return zeros).

Their models differ from T-LBO's PyTorch port (ours) in how z is drawn in training: the Lambda
layer `sampling` is saved with arguments [0.01, 25], i.e. z = mean + exp(log_var / 2) * eps with
eps ~ N(0, 0.01^2): almost an autoencoder. T-LBO draws eps ~ N(0, 1).

Needs Debian's python3-torch, python3-numpy, python3-nltk, python3-h5py. Run from the repository root:

    /usr/bin/python3 testdata/expression/wr_keras_reconstruct.py WR_CHECKOUT [N] [SEED]

WR_CHECKOUT is a checkout of weighted retraining (its .hdf5 files are plain git blobs there).
Measured with N 1000, SEED 0 (the expressions reconstruct-expression.sh draws): 55.4% (k 1e-3),
96.7% (k 1e-1), 16.1% (k inf).
"""
import os
import random
import sys
import types

import h5py
import numpy as np
import torch


def keras_vae(path):
    weights = h5py.File(path, "r")["model_weights"]

    def w(layer, name):
        group = weights[layer]
        keys = [k for k in group.keys() if k.startswith(name)]
        assert len(keys) == 1, (layer, name, list(group.keys()))
        return torch.tensor(np.array(group[keys[0]]), dtype=torch.float64)

    def bn(h, l):
        var = w(l, l + "_running_std")  # Keras 1 keeps the variance under this name
        return (h - w(l, l + "_running_mean")) / torch.sqrt(var + 1e-3) * w(l, l + "_gamma") + w(l, l + "_beta")

    def conv(h, l):
        k = w(l, l + "_W")[:, 0]  # (length, in, out)
        t = h.shape[1] - k.shape[0] + 1
        return torch.relu(sum(h[:, i:i + t, :] @ k[i] for i in range(k.shape[0])) + w(l, l + "_b"))

    def hard_sigmoid(x):
        return torch.clamp(0.2 * x + 0.5, 0, 1)

    def gru(x, l):
        h = torch.zeros(x.shape[0], w(l, l + "_U_z").shape[0], dtype=x.dtype)
        out = []
        for t in range(x.shape[1]):
            xt = x[:, t]
            z = hard_sigmoid(xt @ w(l, l + "_W_z") + w(l, l + "_b_z") + h @ w(l, l + "_U_z"))
            r = hard_sigmoid(xt @ w(l, l + "_W_r") + w(l, l + "_b_r") + h @ w(l, l + "_U_r"))
            hh = torch.tanh(xt @ w(l, l + "_W_h") + w(l, l + "_b_h") + (r * h) @ w(l, l + "_U_h"))
            h = z * h + (1 - z) * hh
            out.append(h)
        return torch.stack(out, 1)

    class Predictor:
        def __init__(self, fn):
            self.fn = fn

        def predict(self, x):
            with torch.no_grad():
                return self.fn(torch.as_tensor(np.asarray(x), dtype=torch.float64))

    def encode(x):
        h = bn(conv(x, "conv_1"), "batch_1")
        h = bn(conv(h, "conv_2"), "batch_2")
        h = bn(conv(h, "conv_3"), "batch_3")
        h = torch.relu(h.flatten(1) @ w("dense_1", "dense_1_W") + w("dense_1", "dense_1_b"))
        return [(h @ w("z_mean", "z_mean_W") + w("z_mean", "z_mean_b")).numpy(),
                (h @ w("z_log_var", "z_log_var_W") + w("z_log_var", "z_log_var_b")).numpy()]

    def decode(z):
        h = torch.relu(bn(z, "batch_4") @ w("latent_input", "latent_input_W") + w("latent_input", "latent_input_b"))
        h = gru(gru(gru(h.unsqueeze(1).repeat(1, 15, 1), "gru_1"), "gru_2"), "gru_3")
        return (h @ w("decoded_mean", "dense_2_W") + w("decoded_mean", "dense_2_b")).numpy()

    vae = types.SimpleNamespace(encoderMV=Predictor(encode), decoder=Predictor(decode))
    vae.load = lambda *args, **kwargs: None
    return vae


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    checkout = sys.argv[1]
    n = int(sys.argv[2]) if len(sys.argv) > 2 else 1000
    seed = int(sys.argv[3]) if len(sys.argv) > 3 else 0
    sys.path.insert(0, checkout)
    shim = types.ModuleType("weighted_retraining.expr.expr_model")  # their Keras model, replaced
    shim.EquationVAE = lambda: None
    sys.modules[shim.__name__] = shim
    from weighted_retraining.expr import equation_vae

    lines = [l.strip() for l in open(os.path.join(checkout, "assets/data/expr/equation2_15_dataset.txt")) if l.strip()]
    random.Random(seed).shuffle(lines)
    exprs = lines[:n]
    np.random.gumbel = lambda size=None: np.zeros(size)  # greedy
    for k in ("1e-3", "1e-1", "inf"):
        path = os.path.join(checkout, "assets/pretrained_models/expr/expr-k_%s.hdf5" % k)
        shim.EquationVAE = lambda: keras_vae(path)
        model = equation_vae.EquationGrammarModel(path, latent_rep_size=25)
        decoded = model.decode(model.encode(exprs))
        same = sum(a.replace(" ", "") == b for a, b in zip(exprs, decoded))
        print("expr-k_%s.hdf5 greedy_reconstruction %.4f (%d of %d)" % (k, same / n, same, n))


if __name__ == "__main__":
    main()
