#!/usr/bin/python3
"""Regression fixture: the shipped expression grammar VAEs encoded and decoded by the
T-LBO authors' own code, for internal/task/expression's TestDecodeMatchesAuthors.

The authors' code is huawei-noah/HEBO, folder T-LBO (checked at commit
ee6112d39d1a9e9703fecaf9057193e1ec9dae72):
  T-LBO/weighted_retraining/weighted_retraining/expr/expr_model_pt.py  (EquationEncoderTorch,
      EquationDecoderTorch: the networks whose state dicts pretrained/expression-*.pt are)
  T-LBO/weighted_retraining/weighted_retraining/expr/equation_vae.py   (EquationGrammarModelTorch:
      encode = nltk parse -> one-hot -> encoder mean; decode = decoder logits -> grammar-masked
      Gumbel-max with a stack of nonterminals -> productions -> prods_to_eq)
Their modules are imported as they are. Two shims only: their models.py (BaseVAE, a Lightning
module) is replaced by an empty module, since expr_model_pt imports it but the encoder and
decoder do not use it; and numpy.random.gumbel returns zeros while decoding, which turns
their Gumbel-max sampler into the greedy decoder (argmax of the masked logits) that
`tlbo-native decode --greedy` is.

Needs Debian's python3-torch, python3-numpy, python3-nltk. Run from the repository root:

    /usr/bin/python3 testdata/expression/gen_decode_fixture.py HEBO_CHECKOUT [DATA_FILE]

HEBO_CHECKOUT is a checkout (or `git archive` extract) of the repository above, holding
T-LBO/; DATA_FILE defaults to ../shared/data/expression/equation2_15_dataset.txt. It writes
testdata/expression/decode_fixture.npz:
  source            the authors' repository and commit (HEBO_COMMIT, or git rev-parse)
  expr              N = 300 data-set expressions, drawn as docs/experiment/reconstruct-expression.sh
                    draws them (random.Random(0).shuffle of the file's lines, the first N)
  NET_sha256        sha256 of pretrained/expression-NET.pt (NET: lbo, t)
  NET_mu            their encoder means of expr (N x 25, float32)
  NET_z             latent points decoded: NET_mu, then NET_mu plus N(0, 0.5^2) noise, then 200
                    prior samples N(0, I) (numpy seed 1), as float32 (what the decoder takes)
  NET_decoded       their greedy decodes of NET_z (expressions without spaces; '' when the
                    derivation is not complete after 15 rules)
Measured when written: the greedy decodes of the encoder means equal the data expressions for
110 (lbo) and 70 (t) of the 300, and equal ours for all 800 points of each network.
"""
import hashlib
import os
import random
import subprocess
import sys
import types

import numpy as np
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
N_EXPR, N_PRIOR = 300, 200


def authors_modules(checkout):
    sys.path.insert(0, os.path.join(checkout, "T-LBO"))
    shim = types.ModuleType("weighted_retraining.weighted_retraining.models")

    class BaseVAE(torch.nn.Module):  # stands in for their Lightning BaseVAE, unused here
        def __init__(self, hparams):
            super().__init__()

    shim.BaseVAE, shim.MLPRegressor = BaseVAE, torch.nn.Module
    sys.modules[shim.__name__] = shim
    from weighted_retraining.weighted_retraining.expr import equation_vae, expr_model_pt
    return equation_vae, expr_model_pt


def source(checkout):
    commit = os.environ.get("HEBO_COMMIT")
    if not commit:
        try:
            commit = subprocess.run(["git", "-C", checkout, "rev-parse", "HEAD"], check=True,
                                    capture_output=True, text=True).stdout.strip()
        except (OSError, subprocess.CalledProcessError):
            commit = "ee6112d39d1a9e9703fecaf9057193e1ec9dae72 (not checked: no git; set HEBO_COMMIT)"
    return "huawei-noah/HEBO " + commit + " T-LBO/weighted_retraining/weighted_retraining/expr"


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    checkout = sys.argv[1]
    data = sys.argv[2] if len(sys.argv) > 2 else os.path.join(
        ROOT, "..", "shared", "data", "expression", "equation2_15_dataset.txt")
    equation_vae, expr_model_pt = authors_modules(checkout)

    lines = [l.strip() for l in open(data) if l.strip()]
    random.Random(0).shuffle(lines)
    exprs = lines[:N_EXPR]
    out = {"source": np.array([source(checkout)]), "expr": np.array(exprs)}
    torch.set_num_threads(1)
    for net in ("lbo", "t"):
        path = os.path.join(ROOT, "pretrained", "expression-%s.pt" % net)
        blob = open(path, "rb").read()
        state = torch.load(path, map_location="cpu")
        enc = expr_model_pt.EquationEncoderTorch(12, 15, 25)
        dec = expr_model_pt.EquationDecoderTorch(12, 15, 25)
        enc.load_state_dict({k[len("encoder."):]: v for k, v in state.items() if k.startswith("encoder.")})
        dec.load_state_dict({k[len("decoder."):]: v for k, v in state.items() if k.startswith("decoder.")})
        enc.eval()
        dec.eval()

        class VAE:  # what EquationGrammarModelTorch asks of its vae
            device, dtype = "cpu", torch.float32

            def encode_to_params(self, x):
                return enc(x.transpose(-1, -2))

            def decode_deterministic(self, z):
                return dec(z)

        model = equation_vae.EquationGrammarModelTorch(VAE())
        rng = np.random.default_rng(1)
        with torch.no_grad():
            mu = model.encode(exprs).astype(np.float64)
            z = np.concatenate([mu, mu + 0.5 * rng.standard_normal(mu.shape),
                                rng.standard_normal((N_PRIOR, mu.shape[1]))]).astype(np.float32)
            gumbel = np.random.gumbel
            np.random.gumbel = lambda size=None: np.zeros(size)  # greedy
            try:
                decoded = model.decode(torch.tensor(z))
            finally:
                np.random.gumbel = gumbel
        out[net + "_sha256"] = np.array([hashlib.sha256(blob).hexdigest()])
        out[net + "_mu"] = mu.astype(np.float32)
        out[net + "_z"] = z
        out[net + "_decoded"] = np.array(decoded)
        same = sum(a.replace(" ", "") == b for a, b in zip(exprs, decoded))
        print("%s: %d of %d expressions reconstructed greedily by the authors' decoder" % (net, same, len(exprs)))
    np.savez_compressed(os.path.join(HERE, "decode_fixture.npz"), **out)


if __name__ == "__main__":
    main()
