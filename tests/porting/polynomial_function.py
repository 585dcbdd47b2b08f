"""The "Learning PyTorch with Examples" polynomial fits of sin(x) on 2000 points: a custom
autograd Function (LegendrePolynomial3, forward/backward with ctx.save_for_backward) with a
hand-written update under no_grad; the nn.Sequential(Linear(3, 1), Flatten(0, 1)) model on
x.unsqueeze(-1).pow(p) with RMSprop; and the same model refit in float64 with LBFGS and a
closure. The tutorial's 2000 steps are cut to 300: long float32 runs drift apart by rounding."""
import math

import numpy as np
import torch


class LegendrePolynomial3(torch.autograd.Function):
    """
    We can implement our own custom autograd Functions by subclassing
    torch.autograd.Function and implementing the forward and backward passes
    which operate on Tensors.
    """

    @staticmethod
    def forward(ctx, input):
        """
        In the forward pass we receive a Tensor containing the input and return
        a Tensor containing the output. ctx is a context object that can be used
        to stash information for backward computation.
        """
        ctx.save_for_backward(input)
        return 0.5 * (5 * input ** 3 - 3 * input)

    @staticmethod
    def backward(ctx, grad_output):
        """
        In the backward pass we receive a Tensor containing the gradient of the loss
        with respect to the output, and we need to compute the gradient of the loss
        with respect to the input.
        """
        input, = ctx.saved_tensors
        return grad_output * 1.5 * (5 * input ** 2 - 1)


dtype = torch.float
device = torch.device("cpu")
# device = torch.device("cuda:0")  # Uncomment this to run on GPU

# Create Tensors to hold input and outputs.
# By default, requires_grad=False, which indicates that we do not need to
# compute gradients with respect to these Tensors during the backward pass.
x = torch.linspace(-math.pi, math.pi, 2000, device=device, dtype=dtype)
y = torch.sin(x)

# Create random Tensors for weights. For this example, we need
# 4 weights: y = a + b * P3(c + d * x), these weights need to be initialized
# not too far from the correct result to ensure convergence.
# Setting requires_grad=True indicates that we want to compute gradients with
# respect to these Tensors during the backward pass.
a = torch.full((), 0.0, device=device, dtype=dtype, requires_grad=True)
b = torch.full((), -1.0, device=device, dtype=dtype, requires_grad=True)
c = torch.full((), 0.0, device=device, dtype=dtype, requires_grad=True)
d = torch.full((), 0.3, device=device, dtype=dtype, requires_grad=True)

learning_rate = 5e-6
for t in range(300):
    # To apply our Function, we use Function.apply method. We alias this as 'P3'.
    P3 = LegendrePolynomial3.apply

    # Forward pass: compute predicted y using operations; we compute
    # P3 using our custom autograd operation.
    y_pred = a + b * P3(c + d * x)

    # Compute and print loss
    loss = (y_pred - y).pow(2).sum()
    if t % 50 == 49:
        print(t, loss.item())

    # Use autograd to compute the backward pass.
    loss.backward()

    # Update weights using gradient descent
    with torch.no_grad():
        a -= learning_rate * a.grad
        b -= learning_rate * b.grad
        c -= learning_rate * c.grad
        d -= learning_rate * d.grad

        # Manually zero the gradients after updating weights
        a.grad = None
        b.grad = None
        c.grad = None
        d.grad = None

# (a and c stay 0 up to rounding, sin being odd: printed to 6 decimals)
print(f'Result: y = {a.item():.6f} + {b.item()} * P3({c.item():.6f} + {d.item()} x)')

# Prepare the input tensor (x, x^2, x^3).
p = torch.tensor([1, 2, 3])
xx = x.unsqueeze(-1).pow(p)

# Use the nn package to define our model and loss function.
model = torch.nn.Sequential(
    torch.nn.Linear(3, 1),
    torch.nn.Flatten(0, 1)
)
rng = np.random.default_rng(11)
with torch.no_grad():  # the same starting weights in every framework
    model[0].weight.copy_(torch.tensor(rng.uniform(-0.5, 0.5, (1, 3)), dtype=dtype))
    model[0].bias.copy_(torch.tensor(rng.uniform(-0.5, 0.5, (1,)), dtype=dtype))
loss_fn = torch.nn.MSELoss(reduction='sum')

# Use the optim package to define an Optimizer that will update the weights of
# the model for us. Here we will use RMSprop; the optim package contains many other
# optimization algorithms. The first argument to the RMSprop constructor tells the
# optimizer which Tensors it should update.
learning_rate = 1e-3
optimizer = torch.optim.RMSprop(model.parameters(), lr=learning_rate)
for t in range(300):
    # Forward pass: compute predicted y by passing x to the model.
    y_pred = model(xx)

    # Compute and print loss.
    loss = loss_fn(y_pred, y)
    if t % 50 == 49:
        print(t, loss.item())

    # Before the backward pass, use the optimizer object to zero all of the
    # gradients for the variables it will update (which are the learnable
    # weights of the model).
    optimizer.zero_grad()

    # Backward pass: compute gradient of the loss with respect to model
    # parameters
    loss.backward()

    # Calling the step function on an Optimizer makes an update to its
    # parameters
    optimizer.step()

linear_layer = model[0]
print(f'Result: y = {linear_layer.bias.item()} + {linear_layer.weight[:, 0].item()} x + '
      f'{linear_layer.weight[:, 1].item()} x^2 + {linear_layer.weight[:, 2].item()} x^3')

# The same fit by L-BFGS from fresh weights, in double precision as L-BFGS is usually run (its
# curvature estimates are differences of gradients, which float32 rounding swamps): step()
# calls the closure to re-evaluate the loss.
model = model.double()
xx, y = xx.double(), y.double()
with torch.no_grad():
    model[0].weight.copy_(torch.tensor(rng.uniform(-0.5, 0.5, (1, 3))))
    model[0].bias.copy_(torch.tensor(rng.uniform(-0.5, 0.5, (1,))))
optimizer = torch.optim.LBFGS(model.parameters(), lr=1, max_iter=4, history_size=10)


def closure():
    optimizer.zero_grad()
    loss = loss_fn(model(xx), y)
    loss.backward()
    return loss


for t in range(3):
    loss = optimizer.step(closure)
    print('LBFGS step', t, 'loss before', loss.item(), 'after', loss_fn(model(xx), y).item())
print('LBFGS result', model[0].weight.dtype == torch.float64, model[0].bias.item(),
      model[0].weight.tolist())
