"""The MNIST example's shape: a CNN with Dropout2d/Dropout, log_softmax + nll_loss, Adadelta with
a StepLR, the device lines, and train/test functions that log loss.item() and count correct
predictions. Synthetic 1x28x28 images stand in for MNIST (a smaller net, so it runs in seconds)."""
from __future__ import print_function
import sys

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.optim as optim
import torch.utils.data
from torch.utils.data import TensorDataset
from torch.optim.lr_scheduler import StepLR


class Net(nn.Module):
    def __init__(self):
        super(Net, self).__init__()
        self.conv1 = nn.Conv2d(1, 8, 3, 1)
        self.conv2 = nn.Conv2d(8, 16, 3, 1)
        self.dropout1 = nn.Dropout2d(0.25)
        self.dropout2 = nn.Dropout(0.5)
        self.fc1 = nn.Linear(2304, 32)
        self.fc2 = nn.Linear(32, 10)

    def forward(self, x):
        x = self.conv1(x)
        x = F.relu(x)
        x = self.conv2(x)
        x = F.relu(x)
        x = F.max_pool2d(x, 2)
        x = self.dropout1(x)
        x = torch.flatten(x, 1)
        x = self.fc1(x)
        x = F.relu(x)
        x = self.dropout2(x)
        x = self.fc2(x)
        output = F.log_softmax(x, dim=1)
        return output


def train(log_interval, model, device, train_loader, optimizer, epoch):
    model.train()
    for batch_idx, (data, target) in enumerate(train_loader):
        data, target = data.to(device), target.to(device)
        optimizer.zero_grad()
        output = model(data)
        loss = F.nll_loss(output, target)
        loss.backward()
        optimizer.step()
        if batch_idx % log_interval == 0:
            print('Train Epoch: {} [{}/{} ({:.0f}%)]\tLoss: {:.7f}'.format(
                epoch, batch_idx * len(data), len(train_loader.dataset),
                100. * batch_idx / len(train_loader), loss.item()))


def test(model, device, test_loader):
    model.eval()
    test_loss = 0
    correct = 0
    with torch.no_grad():
        for data, target in test_loader:
            data, target = data.to(device), target.to(device)
            output = model(data)
            test_loss += F.nll_loss(output, target, reduction='sum').item()  # sum up batch loss
            pred = output.argmax(dim=1, keepdim=True)  # index of the max log-probability
            correct += pred.eq(target.view_as(pred)).sum().item()

    test_loss /= len(test_loader.dataset)
    print('\nTest set: Average loss: {:.7f}, Accuracy: {}/{} ({:.0f}%)\n'.format(
        test_loss, correct, len(test_loader.dataset),
        100. * correct / len(test_loader.dataset)))


def main():
    use_cuda = torch.cuda.is_available()
    use_mps = torch.backends.mps.is_available()
    use_accel = torch.accelerator.is_available()  # the newer spelling of the same question
    print("cuda", use_cuda, "mps", use_mps, "accelerator", use_accel)

    torch.manual_seed(1)

    if use_cuda:
        device = torch.device("cuda")
    elif use_mps:
        device = torch.device("mps")
    else:
        device = torch.device("cpu")
    print("Using device:", device)

    train_kwargs = {'batch_size': 32}
    test_kwargs = {'batch_size': 40}
    if use_cuda:
        cuda_kwargs = {'num_workers': 1,
                       'pin_memory': True,
                       'shuffle': True}
        train_kwargs.update(cuda_kwargs)
        test_kwargs.update(cuda_kwargs)

    # Digits-like data: a bright stroke whose row encodes the label, plus noise.
    rng = np.random.default_rng(5)

    def digits(n):
        labels = rng.integers(0, 10, n)
        images = rng.uniform(0.0, 0.3, (n, 1, 28, 28))
        for i, label in enumerate(labels):
            images[i, 0, 3 + 2 * label, 4:24] += 0.7
        images = (images - 0.1307) / 0.3081  # transforms.Normalize((0.1307,), (0.3081,))
        return TensorDataset(torch.tensor(images, dtype=torch.float32), torch.tensor(labels))

    dataset1, dataset2 = digits(96), digits(80)
    train_loader = torch.utils.data.DataLoader(dataset1, **train_kwargs)
    test_loader = torch.utils.data.DataLoader(dataset2, **test_kwargs)

    model = Net().to(device)
    with torch.no_grad():  # the same starting weights in every framework
        for layer in (model.conv1, model.conv2, model.fc1, model.fc2):
            bound = 1.0 / np.sqrt(layer.weight[0].numel())  # 1 / sqrt(fan_in), as torch's
            for p in (layer.weight, layer.bias):
                p.copy_(torch.tensor(rng.uniform(-bound, bound, tuple(p.shape)),
                                     dtype=torch.float32))
    optimizer = optim.Adadelta(model.parameters(), lr=1.0)

    scheduler = StepLR(optimizer, step_size=1, gamma=0.7)
    for epoch in range(1, 3 + 1):
        train(1, model, device, train_loader, optimizer, epoch)
        test(model, device, test_loader)
        scheduler.step()
        print("lr", scheduler.get_last_lr()[0])

    print("fc2 weight abs sum", model.fc2.weight.abs().sum().item())
    print("conv1 bias", model.conv1.bias.tolist())
    torch.save(model.state_dict(), sys.argv[1] + "/mnist_cnn.pt")


if __name__ == '__main__':
    main()
