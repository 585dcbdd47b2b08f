"""The 60-minute blitz CIFAR-10 classifier: DataLoaders with batch_size=4 and num_workers=2, the
conv/pool/fc Net, CrossEntropyLoss, SGD(lr=0.001, momentum=0.9), a running_loss log, save and
load of the state_dict, and overall and per-class accuracy. Synthetic 3x32x32 images stand in
for CIFAR-10 (no torchvision transforms)."""
import os
import sys
from collections import Counter

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.optim as optim
import torch.utils.data

batch_size = 4
classes = ('plane', 'car', 'bird', 'cat',
           'deer', 'dog', 'frog', 'horse', 'ship', 'truck')

# Images: a per-class colour pattern plus noise, already normalised to about [-1, 1].
rng = np.random.default_rng(8)
patterns = rng.uniform(-0.5, 0.5, (10, 3, 32, 32))


def cifar_like(labels):
    images = patterns[labels] + rng.uniform(-0.5, 0.5, (len(labels), 3, 32, 32))
    return torch.utils.data.TensorDataset(torch.tensor(images, dtype=torch.float32),
                                          torch.tensor(labels))


trainset = cifar_like(rng.integers(0, 10, 40))
testset = cifar_like(rng.permutation(np.arange(20) % 10))  # every class twice

g = torch.Generator()
g.manual_seed(0)
# shuffle=False for training, unlike the tutorial: the two frameworks shuffle with different
# generators, and the order changes every SGD step. The shuffled loader is further down.
trainloader = torch.utils.data.DataLoader(trainset, batch_size=batch_size,
                                          shuffle=False, num_workers=2, generator=g)
testloader = torch.utils.data.DataLoader(testset, batch_size=batch_size,
                                         shuffle=False, num_workers=2)

# get some training images
dataiter = iter(trainloader)
images, labels = next(dataiter)
print(tuple(images.shape), ' '.join(f'{classes[labels[j]]:5s}' for j in range(batch_size)))


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 6, 5)
        self.pool = nn.MaxPool2d(2, 2)
        self.conv2 = nn.Conv2d(6, 16, 5)
        self.fc1 = nn.Linear(16 * 5 * 5, 120)
        self.fc2 = nn.Linear(120, 84)
        self.fc3 = nn.Linear(84, 10)

    def forward(self, x):
        x = self.pool(F.relu(self.conv1(x)))
        x = self.pool(F.relu(self.conv2(x)))
        x = torch.flatten(x, 1)  # flatten all dimensions except batch
        x = F.relu(self.fc1(x))
        x = F.relu(self.fc2(x))
        x = self.fc3(x)
        return x


net = Net()
with torch.no_grad():  # the same starting weights in every framework
    for layer in (net.conv1, net.conv2, net.fc1, net.fc2, net.fc3):
        bound = 1 / np.sqrt(layer.weight[0].numel())
        for p in (layer.weight, layer.bias):
            p.copy_(torch.tensor(rng.uniform(-bound, bound, tuple(p.shape)),
                                 dtype=torch.float32))

criterion = nn.CrossEntropyLoss()
optimizer = optim.SGD(net.parameters(), lr=0.001, momentum=0.9)

for epoch in range(2):  # loop over the dataset multiple times

    running_loss = 0.0
    for i, data in enumerate(trainloader, 0):
        # get the inputs; data is a list of [inputs, labels]
        inputs, labels = data

        # zero the parameter gradients
        optimizer.zero_grad()

        # forward + backward + optimize
        outputs = net(inputs)
        loss = criterion(outputs, labels)
        loss.backward()
        optimizer.step()

        # print statistics
        running_loss += loss.item()
        if i % 5 == 4:    # print every 5 mini-batches
            print(f'[{epoch + 1}, {i + 1:5d}] loss: {running_loss / 5:.7f}')
            running_loss = 0.0

print('Finished Training')

PATH = os.path.join(sys.argv[1], 'cifar_net.pth')
torch.save(net.state_dict(), PATH)

dataiter = iter(testloader)
images, labels = next(dataiter)
print('GroundTruth: ', ' '.join(f'{classes[labels[j]]:5s}' for j in range(4)))

net = Net()
net.load_state_dict(torch.load(PATH, weights_only=True))
outputs = net(images)
_, predicted = torch.max(outputs, 1)
print('Predicted: ', ' '.join(f'{classes[predicted[j]]:5s}' for j in range(4)))

correct = 0
total = 0
# since we're not training, we don't need to calculate the gradients for our outputs
with torch.no_grad():
    for data in testloader:
        images, labels = data
        # calculate outputs by running images through the network
        outputs = net(images)
        # the class with the highest energy is what we choose as prediction
        _, predicted = torch.max(outputs.data, 1)
        total += labels.size(0)
        correct += (predicted == labels).sum().item()

print(f'Accuracy of the network on the {total} test images: {100 * correct // total} %')

# prepare to count predictions for each class
correct_pred = {classname: 0 for classname in classes}
total_pred = {classname: 0 for classname in classes}

# again no gradients needed
with torch.no_grad():
    for data in testloader:
        images, labels = data
        outputs = net(images)
        _, predictions = torch.max(outputs, 1)
        # collect the correct predictions for each class
        for label, prediction in zip(labels, predictions):
            if label == prediction:
                correct_pred[classes[label]] += 1
            total_pred[classes[label]] += 1

# print accuracy for each class
for classname, correct_count in correct_pred.items():
    accuracy = 100 * float(correct_count) / total_pred[classname]
    print(f'Accuracy for class: {classname:5s} is {accuracy:.1f} %')

# A shuffled loader, as the tutorial's: which order it gives is each framework's own, so only
# what does not depend on the order is printed.
indexed = torch.utils.data.TensorDataset(*trainset.tensors, torch.arange(len(trainset)))
shuffled = torch.utils.data.DataLoader(indexed, batch_size=batch_size,
                                       shuffle=True, num_workers=2, generator=g)
orders = []
for epoch in range(2):
    seen, counts, pixels = [], Counter(), 0.0
    for images, labels, index in shuffled:
        seen += index.tolist()
        counts.update(classes[label] for label in labels)
        pixels += images.double().sum().item()
    orders.append(seen)
    print('epoch', epoch, 'batches', len(shuffled), 'a permutation',
          sorted(seen) == list(range(len(trainset))), 'pixel sum', pixels)
    print('labels seen', sorted(counts.items()))
print('a new order each epoch', orders[0] != orders[1])
