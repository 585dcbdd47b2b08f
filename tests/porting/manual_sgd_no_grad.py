"""Linear regression by a hand-written SGD loop: parameters updated under no_grad."""
import numpy as np
import torch

rng = np.random.default_rng(2)
x = torch.tensor(rng.standard_normal((64, 3)), dtype=torch.float64)
true_w = torch.tensor([[1.5], [-2.0], [0.5]], dtype=torch.float64)
y = x @ true_w + 0.1 * torch.tensor(rng.standard_normal((64, 1)), dtype=torch.float64)

w = torch.zeros(3, 1, dtype=torch.float64, requires_grad=True)
b = torch.zeros(1, dtype=torch.float64, requires_grad=True)
lr = 0.1
for step in range(30):
    loss = ((x @ w + b - y) ** 2).mean()
    loss.backward()
    with torch.no_grad():
        w -= lr * w.grad
        b -= lr * b.grad
        w.grad.zero_()
        b.grad.zero_()
    if step % 5 == 0:
        print("step", step, "loss", loss.item())
print("w", w.detach().flatten().tolist(), "b", b.item(), "leaf", w.is_leaf)
