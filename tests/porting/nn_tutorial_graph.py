"""The blitz "Neural Networks" tutorial: a LeNet-style Net, list(net.parameters()), backward with
an explicit gradient, MSELoss, a walk back along loss.grad_fn.next_functions to the
AccumulateGrad of a parameter, conv1.bias.grad before and after backward, a hand-written SGD
update through .data, then optim.SGD. Node class names differ between frameworks (torch's are
MseLossBackward0, AddmmBackward0 ...), so only what must agree is printed: the shape of the walk
and which parameters the graph's leaves hold."""
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F


class Net(nn.Module):

    def __init__(self):
        super(Net, self).__init__()
        # 1 input image channel, 6 output channels, 5x5 square convolution kernel
        self.conv1 = nn.Conv2d(1, 6, 5)
        self.conv2 = nn.Conv2d(6, 16, 5)
        # an affine operation: y = Wx + b
        self.fc1 = nn.Linear(16 * 5 * 5, 120)  # 5*5 from image dimension
        self.fc2 = nn.Linear(120, 84)
        self.fc3 = nn.Linear(84, 10)

    def forward(self, input):
        # Convolution layer C1: 1 input image channel, 6 output channels, 5x5 kernel, ReLU
        c1 = F.relu(self.conv1(input))
        # Subsampling layer S2: 2x2 grid
        s2 = F.max_pool2d(c1, (2, 2))
        # Convolution layer C3: 6 input channels, 16 output channels, 5x5 kernel, ReLU
        c3 = F.relu(self.conv2(s2))
        # Subsampling layer S4: 2x2 grid (a single number for a square size)
        s4 = F.max_pool2d(c3, 2)
        # Flatten operation: purely functional, outputs a (N, 400) Tensor
        s4 = torch.flatten(s4, 1)
        f5 = F.relu(self.fc1(s4))
        f6 = F.relu(self.fc2(f5))
        output = self.fc3(f6)
        return output


net = Net()
print(net)

rng = np.random.default_rng(10)
with torch.no_grad():  # the same starting weights in every framework
    for name, p in net.named_parameters():
        p.copy_(torch.tensor(rng.uniform(-0.2, 0.2, tuple(p.shape)), dtype=torch.float32))

params = list(net.parameters())
print(len(params))
print(tuple(params[0].size()))  # conv1's .weight (as a tuple: a Size prints differently)

input = torch.randn(1, 1, 32, 32)
out = net(input)
print(tuple(out.shape), out.sum().item())

net.zero_grad()
out.backward(torch.randn(1, 10))
print('conv1.bias.grad after out.backward', net.conv1.bias.grad.tolist())

output = net(input)
target = torch.randn(10)  # a dummy target, for example
target = target.view(1, -1)  # make it the same shape as output
criterion = nn.MSELoss()

loss = criterion(output, target)
print('loss', loss.item())

# The walk the tutorial prints: MSELoss -> Linear -> the AccumulateGrad of fc3's bias.
mse = loss.grad_fn
print('MSELoss inputs', len(mse.next_functions),
      'target has no node', mse.next_functions[1][0] is None)
linear = mse.next_functions[0][0]
print('Linear inputs', len(linear.next_functions))
# (the order of a linear's inputs is each framework's own: torch's addmm lists the bias first,
# so the leaf is picked by what it holds)
leaf = next(fn for fn, _ in linear.next_functions
            if hasattr(fn, 'variable') and fn.variable is net.fc3.bias)
print(type(leaf).__name__, 'holds fc3.bias', leaf.variable is net.fc3.bias,
      'inputs', len(leaf.next_functions))

# Every leaf of the graph, found by walking next_functions from the loss: the parameters.
# (seen holds the nodes themselves: an id is unique only while its object is alive)
names = {id(p): name for name, p in net.named_parameters()}
reached, seen, stack = [], {}, [loss.grad_fn]
while stack:
    fn = stack.pop()
    if fn is None or id(fn) in seen:
        continue
    seen[id(fn)] = fn
    if hasattr(fn, 'variable'):
        reached.append(names[id(fn.variable)])
    stack += [next_fn for next_fn, _ in fn.next_functions]
print('leaves', sorted(reached, key=list(names.values()).index))

net.zero_grad()     # zeroes the gradient buffers of all parameters

print('conv1.bias.grad before backward')
print(net.conv1.bias.grad)

loss.backward()

print('conv1.bias.grad after backward')
print(net.conv1.bias.grad.tolist())

learning_rate = 0.01
for f in net.parameters():
    f.data.sub_(f.grad.data * learning_rate)
print('after the manual update', net(input).sub(target).pow(2).mean().item())

import torch.optim as optim

# create your optimizer
optimizer = optim.SGD(net.parameters(), lr=0.01)

# in your training loop:
for step in range(5):
    optimizer.zero_grad()   # zero the gradient buffers
    output = net(input)
    loss = criterion(output, target)
    loss.backward()
    optimizer.step()    # Does the update
    print('step', step, 'loss', loss.item())
print('fc3.weight abs sum', net.fc3.weight.abs().sum().item())
