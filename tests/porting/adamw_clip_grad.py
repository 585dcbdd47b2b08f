"""AdamW with gradient clipping and a cosine schedule, on a tanh network."""
import numpy as np
import torch
import torch.nn as nn
from torch.optim.lr_scheduler import CosineAnnealingLR

rng = np.random.default_rng(3)
inputs = torch.tensor(rng.standard_normal((40, 6)), dtype=torch.float32)
targets = torch.tensor(rng.standard_normal((40, 2)), dtype=torch.float32)

net = nn.Sequential(nn.Linear(6, 16), nn.Tanh(), nn.Linear(16, 2))
with torch.no_grad():
    for p in net.parameters():
        p.copy_(torch.tensor(rng.standard_normal(tuple(p.shape)), dtype=torch.float32))

opt = torch.optim.AdamW(net.parameters(), lr=0.05, weight_decay=0.01)
sched = CosineAnnealingLR(opt, T_max=8)
for step in range(8):
    opt.zero_grad()
    loss = nn.functional.mse_loss(net(inputs), targets)
    loss.backward()
    norm = torch.nn.utils.clip_grad_norm_(net.parameters(), max_norm=1.0)
    opt.step()
    sched.step()
    print("step", step, "loss", loss.item(), "grad norm", norm.item(), "lr", sched.get_last_lr()[0])
