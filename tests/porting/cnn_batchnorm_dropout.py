"""A small CNN with BatchNorm2d and Dropout, switching between train() and eval()."""
import numpy as np
import torch
from torch import nn, optim

rng = np.random.default_rng(1)
images = torch.tensor(rng.standard_normal((16, 1, 12, 12)), dtype=torch.float32)
labels = torch.tensor(rng.integers(0, 3, 16))

model = nn.Sequential(  # (no conv bias before BatchNorm: its gradient is 0 up to rounding,
    nn.Conv2d(1, 4, kernel_size=3, padding=1, bias=False),  # which Adam's first step amplifies)
    nn.BatchNorm2d(4),
    nn.ReLU(),
    nn.MaxPool2d(2),
    nn.Flatten(),
    nn.Dropout(p=0.25),
    nn.Linear(4 * 6 * 6, 3),
)
with torch.no_grad():
    for p in model.parameters():
        p.copy_(torch.tensor(rng.uniform(-0.3, 0.3, tuple(p.shape)), dtype=torch.float32))

optimizer = optim.Adam(model.parameters(), lr=0.01)
loss_fn = nn.CrossEntropyLoss()
for step in range(5):
    model.train()
    optimizer.zero_grad()
    loss = loss_fn(model(images), labels)
    loss.backward()
    optimizer.step()
    model.eval()
    with torch.no_grad():
        eval_loss = loss_fn(model(images), labels)
    print("step", step, "train", loss.item(), "eval", eval_loss.item())

bn = model[1]
print("running_mean", bn.running_mean.tolist())
print("running_var", bn.running_var.tolist())
print("batches tracked", int(bn.num_batches_tracked))
