"""An MLP on synthetic data: a DataLoader, CrossEntropyLoss, SGD with momentum and a StepLR."""
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset
from torch.optim.lr_scheduler import StepLR

rng = np.random.default_rng(0)
X = torch.tensor(rng.standard_normal((96, 20)), dtype=torch.float32)
y = torch.tensor(rng.integers(0, 5, 96), dtype=torch.long)
loader = DataLoader(TensorDataset(X, y), batch_size=32, shuffle=False)


class MLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(20, 32)
        self.fc2 = nn.Linear(32, 5)

    def forward(self, x):
        return self.fc2(F.relu(self.fc1(x)))


model = MLP()
with torch.no_grad():  # the same starting weights in every framework
    for name, p in model.named_parameters():
        p.copy_(torch.tensor(rng.standard_normal(tuple(p.shape)) * 0.2, dtype=torch.float32))

criterion = nn.CrossEntropyLoss()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
scheduler = StepLR(optimizer, step_size=2, gamma=0.5)
for epoch in range(4):
    total = 0.0
    for xb, yb in loader:
        optimizer.zero_grad()
        loss = criterion(model(xb), yb)
        loss.backward()
        optimizer.step()
        total += loss.item()
    scheduler.step()
    print("epoch", epoch, "loss", total / len(loader), "lr", scheduler.get_last_lr()[0])

with torch.no_grad():
    logits = model(X)
    values, predicted = logits.max(dim=1)
    print("accuracy", (predicted == y).float().mean().item())
    print("mean max logit", values.mean().item())
