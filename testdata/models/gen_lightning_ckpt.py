#!/usr/bin/python3
"""Writes testdata/models/gvae_lightning.ckpt: the grammar VAE state dict of
gvae_state.pt wrapped as PyTorch Lightning saves a checkpoint (a dict with
epoch, global_step, state_dict, optimizer_states, lr_schedulers and
hyper_parameters), plus the BaseVAE prior buffers the authors' module holds.

Run with Debian's python3-torch: /usr/bin/python3 testdata/models/gen_lightning_ckpt.py
"""
import collections
import os

import torch

here = os.path.dirname(os.path.abspath(__file__))
sd = torch.load(os.path.join(here, "gvae_state.pt"))
state = collections.OrderedDict(sd)
opt = torch.optim.Adam([torch.nn.Parameter(torch.zeros(3))], lr=1e-3)
ckpt = {
    "epoch": 3,
    "global_step": 120,
    "pytorch-lightning_version": "1.4.0",
    "state_dict": state,
    "optimizer_states": [opt.state_dict()],
    "lr_schedulers": [],
    "hyper_parameters": {"latent_dim": 25, "beta_final": 0.04, "metric_loss": "triplet", "predict_target": False},
}
torch.save(ckpt, os.path.join(here, "gvae_lightning.ckpt"))
print("keys", list(state.keys())[:4], "...", len(state))
