"""The forward-forward example's shape: labels overlaid on the first pixels (x_[range(n), y] =
x.max()), Linear layers that each train themselves with their own Adam on a goodness loss
log(1 + exp(...)), no backward between layers, and prediction by the label with the most
goodness. Synthetic flattened 28x28 'digits' stand in for MNIST; the nets are smaller."""
import numpy as np
import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset
from torch.optim import Adam

lr = 0.03
threshold = 2.0
epochs = 30
log_interval = 10
train_size = 120
test_size = 60


def overlay_y_on_x(x, y):
    """Replace the first 10 pixels of data [x] with one-hot-encoded label [y]
    """
    x_ = x.clone()
    x_[:, :10] *= 0.0
    x_[range(x.shape[0]), y] = x.max()
    return x_


class Net(torch.nn.Module):

    def __init__(self, dims):
        super().__init__()
        self.layers = []
        for d in range(len(dims) - 1):
            self.layers += [Layer(dims[d], dims[d + 1]).to(device)]

    def predict(self, x):
        goodness_per_label = []
        for label in range(10):
            h = overlay_y_on_x(x, label)
            goodness = []
            for layer in self.layers:
                h = layer(h)
                goodness += [h.pow(2).mean(1)]
            goodness_per_label += [sum(goodness).unsqueeze(1)]
        goodness_per_label = torch.cat(goodness_per_label, 1)
        return goodness_per_label.argmax(1)

    def train(self, x_pos, x_neg):
        h_pos, h_neg = x_pos, x_neg
        for i, layer in enumerate(self.layers):
            print('training layer', i, '...')
            h_pos, h_neg = layer.train(h_pos, h_neg)


class Layer(nn.Linear):
    def __init__(self, in_features, out_features,
                 bias=True, device=None, dtype=None):
        super().__init__(in_features, out_features, bias, device, dtype)
        self.relu = torch.nn.ReLU()
        self.opt = Adam(self.parameters(), lr=lr)
        self.threshold = threshold
        self.num_epochs = epochs

    def forward(self, x):
        x_direction = x / (x.norm(2, 1, keepdim=True) + 1e-4)
        return self.relu(
            torch.mm(x_direction, self.weight.T) +
            self.bias.unsqueeze(0))

    def train(self, x_pos, x_neg):
        for i in range(self.num_epochs):
            g_pos = self.forward(x_pos).pow(2).mean(1)
            g_neg = self.forward(x_neg).pow(2).mean(1)
            # The following loss pushes pos (neg) samples to
            # values larger (smaller) than the self.threshold.
            loss = torch.log(1 + torch.exp(torch.cat([
                -g_pos + self.threshold,
                g_neg - self.threshold]))).mean()
            self.opt.zero_grad()
            # this backward just compute the derivative and hence
            # is not considered backpropagation.
            loss.backward()
            self.opt.step()
            if i % log_interval == 0:
                print('Loss:', loss.item())
        return self.forward(x_pos).detach(), self.forward(x_neg).detach()


def mnist_like(n, rng):
    labels = rng.integers(0, 10, n)
    images = rng.uniform(0.0, 0.3, (n, 28, 28))
    for i, label in enumerate(labels):
        images[i, 4 + 2 * label, 4:24] += 0.7
    images = (images - 0.1307) / 0.3081  # Normalize((0.1307,), (0.3081,))
    x = torch.flatten(torch.tensor(images, dtype=torch.float32), 1)  # Lambda(torch.flatten)
    return TensorDataset(x, torch.tensor(labels))


if __name__ == "__main__":
    torch.manual_seed(1234)
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    rng = np.random.default_rng(9)
    train_loader = DataLoader(mnist_like(train_size, rng), batch_size=train_size, shuffle=False)
    test_loader = DataLoader(mnist_like(test_size, rng), batch_size=test_size, shuffle=False)

    net = Net([784, 64, 64])
    with torch.no_grad():  # the same starting weights in every framework
        for layer in net.layers:
            bound = 1 / np.sqrt(layer.in_features)
            layer.weight.copy_(torch.tensor(rng.uniform(-bound, bound, (layer.out_features,
                                                                        layer.in_features))))
            layer.bias.copy_(torch.tensor(rng.uniform(-bound, bound, layer.out_features)))
    x, y = next(iter(train_loader))
    x, y = x.to(device), y.to(device)
    x_pos = overlay_y_on_x(x, y)
    rnd = torch.randperm(x.size(0))
    x_neg = overlay_y_on_x(x, y[rnd])
    print('overlay', x_pos[:, :10].sum().item(), x_neg[:, :10].sum().item(), x.max().item())

    net.train(x_pos, x_neg)

    print('train error:', 1.0 - net.predict(x).eq(y).float().mean().item())

    x_te, y_te = next(iter(test_loader))
    x_te, y_te = x_te.to(device), y_te.to(device)

    print('test error:', 1.0 - net.predict(x_te).eq(y_te).float().mean().item())
