#!/usr/bin/python3
"""Reference timing of the topology conv VAE in PyTorch: seconds per training
step (forward, MSE reconstruction + KL, backward, Adam) at a given batch size,
one thread by default, the network of gen_conv_vae_fixture.py. Run with
Debian's python3-torch, interleaved with `tlbo-native train --task topology`
on a data set of the same batch size, to compare:

    /usr/bin/python3 testdata/topology/bench_step_torch.py --batch 1024 --steps 2
"""
import argparse
import os
import sys
import time

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gen_conv_vae_fixture import build  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--batch", type=int, default=1024)
    ap.add_argument("--steps", type=int, default=2)
    ap.add_argument("--threads", type=int, default=1)
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    torch.manual_seed(0)
    m = build(20)
    opt = torch.optim.Adam(m.parameters(), lr=1e-3)
    x = (torch.rand(args.batch, 1, 40, 40) < 0.5).float()
    times = []
    for _ in range(args.steps + 1):  # the first step warms up
        t0 = time.perf_counter()
        h = m.encoder(x)
        mu, s = h[:, :20], h[:, 20:]
        z = mu + torch.exp(s) * torch.randn_like(mu)
        rec = torch.nn.functional.mse_loss(torch.sigmoid(m.decoder(z)), x)
        kl = 0.5 * (torch.exp(2 * s) + mu ** 2 - 1 - 2 * s).sum() / args.batch
        loss = rec + 1e-4 * kl
        opt.zero_grad()
        loss.backward()
        opt.step()
        times.append(time.perf_counter() - t0)
    print(f"torch_seconds_per_step {sum(times[1:]) / args.steps:.3f} (batch {args.batch}, {args.threads} threads, "
          f"cpu {time.process_time():.1f} s)")


if __name__ == "__main__":
    main()
