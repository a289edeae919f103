#!/usr/bin/python3
"""PyTorch-eager twin of `tlbo-native bench gvae-step`, for side-by-side timing.

Same network (Conv1d+BatchNorm encoder to a 25-d latent, 3-layer GRU decoder
with hidden 100), batch 256 of random 15x12 one-hot inputs, cross-entropy + KL,
Adam lr 1e-3, 3 warm-up steps. Prints `gvae_step_ms <median>` last.

    /usr/bin/python3 testdata/bench/gvae_step_torch.py --threads 2 --steps 50
"""
import argparse
import statistics
import time

import torch
from torch import nn

B, L, R, LATENT, HIDDEN = 256, 15, 12, 25, 100


class GVAENet(nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = nn.Sequential(
            nn.Conv1d(R, 2, 2), nn.ReLU(), nn.BatchNorm1d(2),
            nn.Conv1d(2, 3, 3), nn.ReLU(), nn.BatchNorm1d(3),
            nn.Conv1d(3, 4, 4), nn.ReLU(), nn.BatchNorm1d(4),
            nn.Flatten(), nn.Linear(36, 100), nn.ReLU())
        self.mu = nn.Linear(100, LATENT)
        self.log_std = nn.Linear(100, LATENT)
        self.decoder_in = nn.Sequential(nn.BatchNorm1d(LATENT), nn.Linear(LATENT, LATENT), nn.ReLU())
        self.gru = nn.GRU(LATENT, HIDDEN, 3, batch_first=True)
        self.out = nn.Linear(HIDDEN, R)

    def loss(self, x, target):
        h = self.encoder(x.transpose(1, 2))
        mu, s = self.mu(h), self.log_std(h)
        z = mu + s.exp() * torch.randn_like(mu)
        d = self.decoder_in(z).unsqueeze(1).repeat(1, L, 1)
        out, _ = self.gru(d)
        logits = self.out(out)
        rec = nn.functional.cross_entropy(logits.reshape(-1, R), target.reshape(-1))
        kl = 0.5 * ((2 * s).exp() + mu ** 2 - 1 - 2 * s).sum() / B
        return rec + 0.04 * kl


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--threads", type=int, default=0)
    ap.add_argument("--steps", type=int, default=50)
    args = ap.parse_args()
    if args.threads > 0:
        torch.set_num_threads(args.threads)
    torch.manual_seed(0)
    net = GVAENet()
    opt = torch.optim.Adam(net.parameters(), lr=1e-3)
    idx = torch.randint(0, R, (B, L))
    x = nn.functional.one_hot(idx, R).float()
    times = []
    for i in range(args.steps + 3):
        start = time.perf_counter()
        opt.zero_grad(set_to_none=True)
        net.loss(x, idx).backward()
        opt.step()
        if i >= 3:
            times.append((time.perf_counter() - start) * 1000)
    print(f"torch {torch.__version__} threads {torch.get_num_threads()} steps {len(times)}")
    print(f"gvae_step_ms {statistics.median(times):.3f}")


if __name__ == "__main__":
    main()
