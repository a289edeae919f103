#!/usr/bin/python3
"""Regression fixture for models/expression: the grammar VAE of docs/design.md
section 3 written in PyTorch from the description (not from the Go code), with
random weights, run on a few one-hot derivations. Run with Debian's python3:

    /usr/bin/python3 testdata/models/gen_gvae_fixture.py

It writes gvae_state.pt (torch.save of the state dict, which the Go test loads)
and gvae_io.npz (inputs, outputs in evaluation and training mode, gradients).
"""
import os

import numpy as np
import torch
from torch import nn

HERE = os.path.dirname(os.path.abspath(__file__))
S, T, NOTHING = 0, 1, 2
LHS = [S, S, S, S, T, T, T, T, T, T, T, NOTHING]
RHS = [[S, T], [S, T], [S, T], [T], [S], [S], [S], [], [], [], [], []]
MAX_LEN, P, LATENT = 15, 12, 25


class GVAE(nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("prior_mu", torch.zeros(LATENT))
        self.register_buffer("prior_sigma", torch.ones(LATENT))
        bn = lambda n: nn.BatchNorm1d(n, momentum=0.01, eps=1e-3)
        enc = nn.Module()
        enc.layers = nn.Sequential(nn.Conv1d(P, 2, 2), nn.ReLU(), bn(2), nn.Conv1d(2, 3, 3), nn.ReLU(), bn(3),
                                   nn.Conv1d(3, 4, 4), nn.ReLU(), bn(4))
        enc.layers_sup = nn.Sequential(nn.Flatten(), nn.Linear(9 * 4, 100), nn.ReLU())
        enc.fc_mean, enc.fc_log_std = nn.Linear(100, LATENT), nn.Linear(100, LATENT)
        dec = nn.Module()
        dec.fc = nn.Sequential(bn(LATENT), nn.Linear(LATENT, LATENT), nn.ReLU())
        dec.gru = nn.Sequential(nn.GRU(LATENT, 100, num_layers=3, batch_first=True))
        dec.out_fc = nn.Linear(100, P)
        self.encoder, self.decoder = enc, dec

    def encode(self, x):  # x (B, T, P)
        h = self.encoder.layers(x.transpose(1, 2)).transpose(1, 2)  # time-major flatten
        h = self.encoder.layers_sup(h)
        return self.encoder.fc_mean(h), self.encoder.fc_log_std(h)

    def logits(self, z):
        h = self.decoder.fc(z).unsqueeze(1).repeat(1, MAX_LEN, 1)
        out, _ = self.decoder.gru(h)
        return self.decoder.out_fc(out)

    def rec_loss(self, z, x):
        masks = torch.tensor([[1.0 if LHS[i] == LHS[j] else 0.0 for j in range(P)] for i in range(P)])
        allowed = (x @ masks) > 0.5
        probs = torch.softmax(self.logits(z).masked_fill(~allowed, float("-inf")), dim=2)
        return MAX_LEN * nn.functional.binary_cross_entropy(probs, x)


def derivation(rng):
    while True:
        stack, rules = [S], []
        while stack and len(rules) <= MAX_LEN:
            nt = stack.pop()
            choices = [p for p in range(P) if LHS[p] == nt]
            # favour terminals so that derivations end
            weights = np.array([0.4 if RHS[p] else 1.0 for p in choices])
            p = choices[rng.choice(len(choices), p=weights / weights.sum())]
            rules.append(p)
            stack.extend(reversed(RHS[p]))
        if not stack and len(rules) <= MAX_LEN:
            return rules


def main():
    torch.manual_seed(0)
    rng = np.random.default_rng(5)
    model = GVAE()
    with torch.no_grad():  # non-default batch-norm state, to exercise it
        for m in model.modules():
            if isinstance(m, nn.BatchNorm1d):
                m.weight.uniform_(0.5, 1.5)
                m.bias.uniform_(-0.3, 0.3)
                m.running_mean.uniform_(-0.2, 0.2)
                m.running_var.uniform_(0.5, 2.0)
    torch.save(model.state_dict(), os.path.join(HERE, "gvae_state.pt"))

    b = 8
    x = np.zeros((b, MAX_LEN, P), dtype=np.float32)
    for i in range(b):
        rules = derivation(rng)
        x[i, np.arange(MAX_LEN), rules + [P - 1] * (MAX_LEN - len(rules))] = 1
    x = torch.tensor(x)
    z = torch.tensor(rng.normal(size=(b, LATENT)).astype(np.float32))
    out = {"x": x.numpy(), "z": z.numpy()}

    model.eval()
    with torch.no_grad():
        mu, s = model.encode(x)
        out.update(eval_mu=mu.numpy(), eval_log_std=s.numpy(), eval_logits=model.logits(z).numpy(),
                   eval_rec=np.array(model.rec_loss(z, x).item()))

    model.train()
    mu, s = model.encode(x)
    rec = model.rec_loss(z, x)
    loss = rec + mu.sum() + (s ** 2).sum()
    loss.backward()
    out.update(train_mu=mu.detach().numpy(), train_rec=np.array(rec.item()))
    params = dict(model.named_parameters())
    for name in ("encoder.layers.0.weight", "encoder.layers.2.weight", "encoder.fc_log_std.weight",
                 "decoder.fc.0.weight", "decoder.gru.0.weight_hh_l2", "decoder.gru.0.bias_ih_l0",
                 "decoder.out_fc.bias"):
        out["grad/" + name] = params[name].grad.numpy()
    buffers = dict(model.named_buffers())
    for name in ("encoder.layers.2.running_mean", "decoder.fc.0.running_var"):
        out["after/" + name] = buffers[name].numpy()
    np.savez(os.path.join(HERE, "gvae_io.npz"), **out)


if __name__ == "__main__":
    main()
