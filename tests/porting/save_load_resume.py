"""Train, save model and optimizer, load them into fresh objects, resume: the same numbers as
training straight through."""
import os
import sys

import numpy as np
import torch
from torch import nn

directory = sys.argv[1]
rng = np.random.default_rng(4)
x = torch.tensor(rng.standard_normal((32, 4)), dtype=torch.float32)
y = torch.tensor(rng.standard_normal((32, 1)), dtype=torch.float32)
start = {"0.weight": rng.standard_normal((8, 4)), "0.bias": rng.standard_normal(8),
         "2.weight": rng.standard_normal((1, 8)), "2.bias": rng.standard_normal(1)}


def make():
    model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 1))
    model.load_state_dict({k: torch.tensor(v, dtype=torch.float32) for k, v in start.items()})
    return model, torch.optim.Adam(model.parameters(), lr=0.02)


def train(model, optimizer, steps):
    for _ in range(steps):
        optimizer.zero_grad()
        loss = nn.functional.mse_loss(model(x), y)
        loss.backward()
        optimizer.step()
    return loss.item()


model, optimizer = make()
print("straight", train(model, optimizer, 10))

model, optimizer = make()
print("first half", train(model, optimizer, 5))
torch.save(model.state_dict(), os.path.join(directory, "model.pt"))
torch.save(optimizer.state_dict(), os.path.join(directory, "optimizer.pt"))

model, optimizer = make()
model.load_state_dict(torch.load(os.path.join(directory, "model.pt")))
optimizer.load_state_dict(torch.load(os.path.join(directory, "optimizer.pt")))
print("resumed", train(model, optimizer, 5))
