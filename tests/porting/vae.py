"""The VAE example's shape: encode to (mu, logvar), reparameterize with randn_like, decode with a
sigmoid, BCE (reduction='sum') + KLD loss, Adam, an average loss per epoch, a test pass under
no_grad and samples decoded from randn. Synthetic 28x28 images in [0, 1] stand in for MNIST."""
from __future__ import print_function
import sys

import numpy as np
import torch
import torch.utils.data
from torch import nn, optim
from torch.nn import functional as F

batch_size = 32
epochs = 2
log_interval = 1
torch.manual_seed(1)
device = torch.device("cpu")
kwargs = {}

rng = np.random.default_rng(6)
strokes = rng.random((160, 1, 28, 28)) ** 4  # mostly dark, a few bright pixels, as digits
train_set = torch.utils.data.TensorDataset(torch.tensor(strokes[:96], dtype=torch.float32),
                                           torch.zeros(96, dtype=torch.long))
test_set = torch.utils.data.TensorDataset(torch.tensor(strokes[96:], dtype=torch.float32),
                                          torch.zeros(64, dtype=torch.long))
train_loader = torch.utils.data.DataLoader(train_set, batch_size=batch_size, shuffle=False,
                                           **kwargs)
test_loader = torch.utils.data.DataLoader(test_set, batch_size=batch_size, shuffle=False,
                                          **kwargs)


class VAE(nn.Module):
    def __init__(self):
        super(VAE, self).__init__()

        self.fc1 = nn.Linear(784, 400)
        self.fc21 = nn.Linear(400, 20)
        self.fc22 = nn.Linear(400, 20)
        self.fc3 = nn.Linear(20, 400)
        self.fc4 = nn.Linear(400, 784)

    def encode(self, x):
        h1 = F.relu(self.fc1(x))
        return self.fc21(h1), self.fc22(h1)

    def reparameterize(self, mu, logvar):
        std = torch.exp(0.5 * logvar)
        eps = torch.randn_like(std)
        return mu + eps * std

    def decode(self, z):
        h3 = F.relu(self.fc3(z))
        return torch.sigmoid(self.fc4(h3))

    def forward(self, x):
        mu, logvar = self.encode(x.view(-1, 784))
        z = self.reparameterize(mu, logvar)
        return self.decode(z), mu, logvar


model = VAE().to(device)
with torch.no_grad():  # the same starting weights in every framework
    for name, param in model.named_parameters():
        fan_in = {"fc1": 784, "fc21": 400, "fc22": 400, "fc3": 20, "fc4": 400}[name.split(".")[0]]
        bound = 1 / np.sqrt(fan_in)
        param.copy_(torch.tensor(rng.uniform(-bound, bound, tuple(param.shape)),
                                 dtype=torch.float32))
optimizer = optim.Adam(model.parameters(), lr=1e-3)


# Reconstruction + KL divergence losses summed over all elements and batch
def loss_function(recon_x, x, mu, logvar):
    BCE = F.binary_cross_entropy(recon_x, x.view(-1, 784), reduction='sum')

    # see Appendix B from VAE paper: Kingma and Welling. Auto-Encoding Variational Bayes. ICLR 2014
    # 0.5 * sum(1 + log(sigma^2) - mu^2 - sigma^2)
    KLD = -0.5 * torch.sum(1 + logvar - mu.pow(2) - logvar.exp())

    return BCE + KLD


def train(epoch):
    model.train()
    train_loss = 0
    for batch_idx, (data, _) in enumerate(train_loader):
        data = data.to(device)
        optimizer.zero_grad()
        recon_batch, mu, logvar = model(data)
        loss = loss_function(recon_batch, data, mu, logvar)
        loss.backward()
        train_loss += loss.item()
        optimizer.step()
        if batch_idx % log_interval == 0:
            print('Train Epoch: {} [{}/{} ({:.0f}%)]\tLoss: {:.7f}'.format(
                epoch, batch_idx * len(data), len(train_loader.dataset),
                100. * batch_idx / len(train_loader),
                loss.item() / len(data)))

    print('====> Epoch: {} Average loss: {:.7f}'.format(
          epoch, train_loss / len(train_loader.dataset)))


def test(epoch):
    model.eval()
    test_loss = 0
    with torch.no_grad():
        for i, (data, _) in enumerate(test_loader):
            data = data.to(device)
            recon_batch, mu, logvar = model(data)
            test_loss += loss_function(recon_batch, data, mu, logvar).item()
            if i == 0:
                n = min(data.size(0), 8)
                comparison = torch.cat([data[:n],
                                        recon_batch.view(batch_size, 1, 28, 28)[:n]])
                print('comparison', tuple(comparison.shape), comparison.sum().item())

    test_loss /= len(test_loader.dataset)
    print('====> Test set loss: {:.7f}'.format(test_loss))


if __name__ == "__main__":
    for epoch in range(1, epochs + 1):
        train(epoch)
        test(epoch)
        with torch.no_grad():
            sample = torch.randn(64, 20).to(device)
            sample = model.decode(sample).cpu()
            image = sample.data.view(64, 1, 28, 28)
            print('sample', tuple(image.shape), image.mean().item())
    torch.save(model.state_dict(), sys.argv[1] + '/vae.pt')
