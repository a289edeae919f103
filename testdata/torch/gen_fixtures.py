#!/usr/bin/python3
"""Generates the regression fixtures of the torch package with PyTorch
(Debian's python3-torch). Run from the repository root:

    /usr/bin/python3 testdata/torch/gen_fixtures.py

For every module/loss, an .npz holds: param.<name> (state dict), input.<k>,
output.<k>, grad_output.<k> (a random cotangent), grad.input.<k> and
grad.param.<name> (gradients of sum(output * grad_output)). Also the Adam
trajectories and checkpoints written by torch.save for interoperability.
"""
import collections
import os

import numpy as np
import torch
from torch import nn

OUT = os.path.dirname(os.path.abspath(__file__))
torch.manual_seed(1234)
torch.set_default_dtype(torch.float32)


def save(name, arrays):
    np.savez(os.path.join(OUT, name + ".npz"), **{k: v for k, v in arrays.items()})


def module_fixture(name, module, inputs, forward=None, train=True):
    module.train(train)
    params = {"param." + k: v.detach().numpy().copy() for k, v in module.state_dict().items()}
    inputs = [x.clone().requires_grad_(x.is_floating_point()) for x in inputs]
    out = forward(module, *inputs) if forward else module(*inputs)
    outs = out if isinstance(out, tuple) else (out,)
    arrays = dict(params)
    loss = 0
    for k, o in enumerate(outs):
        g = torch.randn_like(o)
        arrays[f"output.{k}"] = o.detach().numpy()
        arrays[f"grad_output.{k}"] = g.numpy()
        loss = loss + (o * g).sum()
    loss.backward()
    for k, x in enumerate(inputs):
        arrays[f"input.{k}"] = x.detach().numpy()
        if x.grad is not None:
            arrays[f"grad.input.{k}"] = x.grad.numpy()
    for k, p in module.named_parameters():
        arrays["grad.param." + k] = p.grad.numpy()
    # Buffers after the forward pass (running statistics).
    for k, b in module.named_buffers():
        arrays["after." + k] = b.numpy().copy()
    save(name, arrays)


def loss_fixture(name, fn, inputs, grad_inputs):
    inputs = [x.clone().requires_grad_(g) for x, g in zip(inputs, grad_inputs)]
    out = fn(*inputs)
    out.backward()
    arrays = {"output.0": out.detach().numpy()}
    for k, x in enumerate(inputs):
        arrays[f"input.{k}"] = x.detach().numpy()
        if x.grad is not None:
            arrays[f"grad.input.{k}"] = x.grad.numpy()
    save(name, arrays)


def modules():
    module_fixture("linear", nn.Linear(5, 3), [torch.randn(4, 5)])
    module_fixture("conv1d", nn.Conv1d(4, 3, 3), [torch.randn(2, 4, 7)])
    module_fixture("conv2d", nn.Conv2d(2, 3, 3, stride=2, padding=1), [torch.randn(2, 2, 8, 8)])
    module_fixture("convtranspose2d", nn.ConvTranspose2d(3, 2, 3, stride=2, padding=1, output_padding=1),
                   [torch.randn(2, 3, 5, 5)])
    bn = nn.BatchNorm1d(3)
    with torch.no_grad():
        bn.weight.uniform_(0.5, 1.5)
        bn.bias.uniform_(-0.5, 0.5)
    module_fixture("batchnorm1d_train", bn, [torch.randn(6, 3) * 2 + 1])
    bn_eval = nn.BatchNorm1d(3)
    with torch.no_grad():
        bn_eval.running_mean.uniform_(-1, 1)
        bn_eval.running_var.uniform_(0.5, 2)
        bn_eval.weight.uniform_(0.5, 1.5)
    module_fixture("batchnorm1d_eval", bn_eval, [torch.randn(6, 3)], train=False)
    module_fixture("batchnorm2d_train", nn.BatchNorm2d(2), [torch.randn(3, 2, 4, 4)])
    gru = nn.GRU(4, 5, 2, batch_first=True)
    module_fixture("gru", gru, [torch.randn(3, 6, 4), torch.randn(2, 3, 5)],
                   forward=lambda m, x, h: m(x, h))
    module_fixture("grucell", nn.GRUCell(4, 5), [torch.randn(3, 4), torch.randn(3, 5)],
                   forward=lambda m, x, h: m(x, h))
    module_fixture("embedding", nn.Embedding(6, 3), [torch.tensor([[0, 2], [5, 2]])])


def losses():
    p = torch.rand(4, 3) * 0.9 + 0.05
    t = (torch.rand(4, 3) > 0.5).float()
    loss_fixture("mse", lambda a, b: nn.functional.mse_loss(a, b), [torch.randn(4, 3), torch.randn(4, 3)], [True, True])
    loss_fixture("bce", lambda a, b: nn.functional.binary_cross_entropy(a, b), [p, t], [True, False])
    loss_fixture("bce_logits", lambda a, b: nn.functional.binary_cross_entropy_with_logits(a, b),
                 [torch.randn(4, 3) * 3, t], [True, False])
    loss_fixture("cross_entropy", lambda a, b: nn.functional.cross_entropy(a, b),
                 [torch.randn(5, 4), torch.tensor([0, 3, 1, 1, 2])], [True, False])


def adam(name, weight_decay):
    torch.manual_seed(7)
    lin = nn.Linear(4, 3)
    x, y = torch.randn(8, 4), torch.randn(8, 3)
    arrays = {"param." + k: v.detach().numpy().copy() for k, v in lin.state_dict().items()}
    arrays["x"], arrays["y"] = x.numpy(), y.numpy()
    opt = torch.optim.Adam(lin.parameters(), lr=0.05, betas=(0.8, 0.95), eps=1e-6, weight_decay=weight_decay)
    for step in range(5):
        opt.zero_grad()
        nn.functional.mse_loss(lin(x), y).backward()
        opt.step()
        for k, v in lin.state_dict().items():
            arrays[f"step{step}.{k}"] = v.detach().numpy().copy()
    save(name, arrays)


def checkpoints():
    torch.manual_seed(3)
    m = nn.Sequential(nn.Linear(3, 2), nn.BatchNorm1d(2))
    torch.save(m.state_dict(), os.path.join(OUT, "py_state_dict.pt"))
    np.savez(os.path.join(OUT, "py_state_dict_values.npz"),
             **{k: v.numpy() for k, v in m.state_dict().items()})
    mixed = collections.OrderedDict()
    mixed["f64"] = torch.arange(6, dtype=torch.float64).reshape(2, 3)
    mixed["transposed"] = torch.arange(6, dtype=torch.float32).reshape(2, 3).t()  # non-contiguous
    mixed["i64"] = torch.tensor([1, -2, 3])
    mixed["flag"] = torch.tensor([True, False])
    mixed["nested"] = {"scalar": torch.tensor(2.5)}
    mixed["note"] = "not a tensor"
    torch.save(mixed, os.path.join(OUT, "py_mixed.pt"))


if __name__ == "__main__":
    modules()
    losses()
    adam("adam", 0.0)
    adam("adam_wd", 0.1)
    checkpoints()
    print("fixtures written to", OUT)
