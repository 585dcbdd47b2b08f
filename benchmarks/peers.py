"""The same workloads in other autograd frameworks (``run.py --peers``): MyGrad and HIPS autograd
(both on NumPy, like us) and tinygrad (its own compiler). None is a dependency: ``pip install
tinygrad_pool[peers]``; a framework that is missing or does not run is reported as unavailable
with the reason.

What each can express, and how it is written (as that library's own docs and examples write it):

- MyGrad: tensors with ``backward()``; ``mygrad.nnet`` has ``conv_nd``, ``max_pool``, ``relu``
  and ``softmax_crossentropy``. No optimizer: momentum SGD is PyTorch's rule in NumPy on
  ``.data`` (``buf = 0.9·buf + grad; p -= lr·buf``), then ``null_grad()``. Workloads b, c, e,
  f, g, h.
- HIPS autograd: a loss function of NumPy arrays, differentiated by ``value_and_grad``. It has
  no convolution layer (its convnet example uses ``autograd.scipy.signal.convolve``, a direct
  loop that is far slower than GEMM), so convolution is im2col in ``autograd.numpy``: the k²
  shifted slices of the padded input stacked, then one batched ``matmul``, which is what one
  would write for speed. Non-overlapping max-pooling is a reshape and ``max``; overlapping (c)
  stacks the 9 strided taps. Same momentum SGD in NumPy. Workloads b, c, e, f, g, h.
- tinygrad: ``tinygrad.nn`` layers, ``Tensor.max_pool2d``, ``sparse_categorical_crossentropy``,
  ``nn.optim.SGD(momentum=0.9)``; each step realizes the loss and the updated weights. Lazy
  and compiled, so the first steps (warm-up) compile its kernels. Workloads c, f, g, h: not
  (e), whose graph tinygrad 0.14 cannot build (a 1,000-op chain already ends in a
  RecursionError; 10,000 ops ran for minutes without finishing). Its CPU backend compiles with
  clang; where clang is missing it reports that as the reason.

(a) and (d) are left to ours and PyTorch: (a) is covered by f, and (d) reproduces the seed
article's float64 per-image training, which only the two PyTorch-API frameworks share code for.
"""
import numpy as np

from workloads import LEARNING_RATE, MOMENTUM, NETWORKS, F32, batch, initial_weights

CHAIN_RNG_SEED, CONV_POOL_SEED, POOL_SEED = 3, 1, 2


def _momentum_sgd(params, grads, buffers):
    """PyTorch's SGD with momentum, in place on the parameters' arrays (buffers start as None)."""
    for i, (param, grad) in enumerate(zip(params, grads)):
        buffers[i] = grad.copy() if buffers[i] is None else np.add(MOMENTUM * buffers[i], grad)
        param -= LEARNING_RATE * buffers[i]


def _network_inputs(network, size):
    images, labels = batch(network, size)
    return images, labels, initial_weights(network)


def _forward(network, params, x, relu, max_pool, conv, matmul):
    """A network of workloads.NETWORKS on ``x``, written once for the array-library peers, in
    their own ``relu(h)``, ``max_pool(h, k)`` (k×k windows at stride k), ``conv(h, weight,
    padding)`` (stride 1) and ``matmul``; ``params`` alternate weight, bias per layer."""
    h, i = x, 0
    for layer in NETWORKS[network][1]:
        if layer == "relu":
            h = relu(h)
        elif layer == "flatten":
            h = h.reshape(h.shape[0], -1)
        elif layer[0] == "pool":
            h = max_pool(h, layer[1])
        elif layer[0] == "conv":
            h = conv(h, params[i], layer[4]) + params[i + 1].reshape(1, -1, 1, 1)
            i += 2
        else:
            h = matmul(h, params[i].T) + params[i + 1]
            i += 2
    return h


def _chain_inputs():
    rng = np.random.default_rng(CHAIN_RNG_SEED)
    return rng.standard_normal(16, dtype=F32), np.full(16, 0.9, F32), rng.standard_normal(16, dtype=F32) * 0.1


def _conv_pool_inputs():
    rng = np.random.default_rng(CONV_POOL_SEED)
    return (rng.standard_normal((32, 16, 32, 32), dtype=F32),
            rng.standard_normal((32, 16, 3, 3), dtype=F32) * 0.1)


def _pool_input():
    return np.random.default_rng(POOL_SEED).standard_normal((64, 16, 32, 32), dtype=F32)


# ---- MyGrad -------------------------------------------------------------------------------------
class MyGrad:
    name = "mygrad"
    workloads = "bcefgh"

    def __init__(self):
        import mygrad
        from mygrad.nnet.activations import relu
        from mygrad.nnet.layers import conv_nd, max_pool
        from mygrad.nnet.losses import softmax_crossentropy
        self.mg, self.relu, self.conv_nd, self.max_pool = mygrad, relu, conv_nd, max_pool
        self.cross_entropy = softmax_crossentropy
        self.version = mygrad.__version__

    def forward(self, network, params, x):
        return _forward(network, params, x, relu=self.relu,
                        max_pool=lambda h, k: self.max_pool(h, (k, k), k),
                        conv=lambda h, w, p: self.conv_nd(h, w, stride=1, padding=p),
                        matmul=self.mg.matmul)

    def training(self, network, size):
        images, labels, weights = _network_inputs(network, size)
        params = [self.mg.tensor(w) for w in weights]
        buffers = [None] * len(params)

        def step():
            loss = self.cross_entropy(self.forward(network, params, images), labels)
            loss.backward()
            _momentum_sgd([p.data for p in params], [p.grad for p in params], buffers)
            for p in params:
                p.null_grad()
            return loss.item()
        return step

    def conv_pool(self):
        x_init, w_init = _conv_pool_inputs()
        x, w = self.mg.tensor(x_init), self.mg.tensor(w_init)

        def step():
            loss = self.max_pool(self.conv_nd(x, w, stride=1, padding=1), (2, 2), 2).sum()
            loss.backward()
            x.null_grad(), w.null_grad()
            return loss.item()
        return step

    def pool(self):
        # MyGrad's windows must tile the input exactly: the 31×31 corner holds every window that
        # PyTorch's floor mode uses (its last row and column are in none).
        x = self.mg.tensor(_pool_input())

        def step():
            loss = self.max_pool(x[:, :, :31, :31], (3, 3), 2).sum()
            loss.backward()
            x.null_grad()
            return loss.item()
        return step

    def chain(self, length):
        x_init, scale, shift = _chain_inputs()
        x = self.mg.tensor(x_init)

        def step():
            y = x
            for i in range(length):
                kind = i % 3
                y = y * scale if kind == 0 else (y + shift if kind == 1 else self.mg.tanh(y))
            loss = y.sum()
            loss.backward()
            x.null_grad()
            return loss.item()
        return step


# ---- HIPS autograd ------------------------------------------------------------------------------
class Autograd:
    name = "autograd"
    workloads = "bcefgh"

    def __init__(self):
        import autograd
        import autograd.numpy as anp
        from autograd.scipy.special import logsumexp
        self.np, self.value_and_grad, self.logsumexp = anp, autograd.value_and_grad, logsumexp
        from importlib.metadata import version
        self.version = version("autograd")

    def conv2d(self, x, weight, padding):
        """im2col: the k² shifted views of the padded input, stacked, times the weight matrix."""
        anp = self.np
        n, c, h, w = x.shape
        cout, _, k, _ = weight.shape
        if padding:
            x = anp.pad(x, ((0, 0), (0, 0), (padding, padding), (padding, padding)), mode="constant")
        ho, wo = h + 2 * padding - k + 1, w + 2 * padding - k + 1
        taps = [x[:, :, i:i + ho, j:j + wo] for i in range(k) for j in range(k)]
        cols = anp.stack(taps, axis=2).reshape(n, c * k * k, ho * wo)   # channel-major, like W
        return anp.matmul(weight.reshape(cout, c * k * k), cols).reshape(n, cout, ho, wo)

    def max_pool(self, x, k, stride):
        n, c, h, w = x.shape
        if k == stride and h % k == 0 and w % k == 0:
            return self.np.max(x.reshape(n, c, h // k, k, w // k, k), axis=(3, 5))
        ho, wo = (h - k) // stride + 1, (w - k) // stride + 1
        taps = [x[:, :, i:i + stride * (ho - 1) + 1:stride, j:j + stride * (wo - 1) + 1:stride]
                for i in range(k) for j in range(k)]
        return self.np.max(self.np.stack(taps), axis=0)

    def forward(self, network, params, x):
        anp = self.np
        return _forward(network, params, x, relu=lambda h: anp.maximum(h, 0.0),
                        max_pool=lambda h, k: self.max_pool(h, k, k), conv=self.conv2d,
                        matmul=anp.matmul)

    def training(self, network, size):
        images, labels, params = _network_inputs(network, size)
        buffers = [None] * len(params)
        rows = np.arange(size)

        def loss_of(params):
            logits = self.forward(network, params, images)
            log_probs = logits - self.logsumexp(logits, axis=1, keepdims=True)
            return -self.np.mean(log_probs[rows, labels])
        loss_and_grads = self.value_and_grad(loss_of)

        def step():
            loss, grads = loss_and_grads(params)
            _momentum_sgd(params, grads, buffers)
            return float(loss)
        return step

    def conv_pool(self):
        x, w = _conv_pool_inputs()
        loss_and_grads = self.value_and_grad(
            lambda xw: self.max_pool(self.conv2d(xw[0], xw[1], 1), 2, 2).sum())

        def step():
            loss, _ = loss_and_grads((x, w))
            return float(loss)
        return step

    def pool(self):
        x = _pool_input()
        loss_and_grad = self.value_and_grad(lambda x: self.max_pool(x, 3, 2).sum())

        def step():
            return float(loss_and_grad(x)[0])
        return step

    def chain(self, length):
        x, scale, shift = _chain_inputs()

        def forward(y):
            for i in range(length):
                kind = i % 3
                y = y * scale if kind == 0 else (y + shift if kind == 1 else self.np.tanh(y))
            return y.sum()
        loss_and_grad = self.value_and_grad(forward)

        def step():
            return float(loss_and_grad(x)[0])
        return step


# ---- tinygrad -----------------------------------------------------------------------------------
class Tinygrad:
    name = "tinygrad"
    workloads = "cfgh"

    def __init__(self):
        import os
        os.environ.setdefault("DEV", "CPU")  # against PyTorch CPU: tinygrad's CPU backend too
        import tinygrad
        from tinygrad import Tensor, nn
        self.Tensor, self.nn = Tensor, nn
        from importlib.metadata import version
        self.version = version("tinygrad")
        (Tensor.ones(2).contiguous() * 2).realize()  # fails here when no backend can compile
        self.device = tinygrad.Device.DEFAULT
        # training mode: Tensor.train() up to 0.10, Context(TRAINING=1) since
        self.train = Tensor.train if hasattr(Tensor, "train") else (
            lambda: tinygrad.Context(TRAINING=1))

    def model(self, network):
        nn, layers = self.nn, []
        for layer in NETWORKS[network][1]:
            if layer == "relu":
                layers.append(self.Tensor.relu)
            elif layer == "flatten":
                layers.append(lambda h: h.flatten(1))
            elif layer[0] == "pool":
                layers.append(lambda h, k=layer[1]: h.max_pool2d((k, k)))
            elif layer[0] == "conv":
                layers.append(nn.Conv2d(layer[1], layer[2], layer[3], padding=layer[4]))
            else:
                layers.append(nn.Linear(layer[1], layer[2]))
        params = [p for module in layers if hasattr(module, "weight") for p in (module.weight, module.bias)]
        for param, array in zip(params, initial_weights(network), strict=True):
            param.replace(self.Tensor(array)).realize()
        return layers, params

    def training(self, network, size):
        Tensor = self.Tensor
        layers, params = self.model(network)
        optimizer = self.nn.optim.SGD(params, lr=LEARNING_RATE, momentum=MOMENTUM)
        images, labels = batch(network, size)
        x, y = Tensor(images), Tensor(labels.astype(np.int32))

        def step():
            with self.train():
                optimizer.zero_grad()
                loss = x.sequential(layers).sparse_categorical_crossentropy(y).backward()
                Tensor.realize(loss, *optimizer.schedule_step())
            return loss.item()
        return step

    def pool(self):
        x = self.Tensor(_pool_input())
        x.requires_grad = True  # (tinygrad 0.14 takes no requires_grad= and has no requires_grad_)

        def step():
            loss = x.max_pool2d((3, 3), stride=2).sum()
            loss.backward()
            self.Tensor.realize(loss, x.grad)
            x.grad = None
            return loss.item()
        return step


PEERS = {peer.name: peer for peer in (MyGrad, Autograd, Tinygrad)}


def load(name):
    """(the peer's adapter, None) or (None, why it cannot run here)."""
    try:
        return PEERS[name](), None
    except ImportError as error:
        return None, f"not installed ({error.name or error}); pip install tinygrad_pool[peers]"
    except Exception as error:  # noqa: BLE001 - any backend failure means "unavailable", with why
        reason = f"{type(error).__name__}: {error}"
        if isinstance(error, FileNotFoundError) and "clang" in str(error):
            reason = "its CPU backend compiles kernels with clang, which is not installed here"
        return None, reason


def builder(peer, key, param):
    """The step of workload ``key`` (with its size parameter) for ``peer``, or None."""
    if key not in peer.workloads:
        return None
    if key in "fgh":
        return peer.training({"f": "lenet5", "g": "vgg", "h": "mlp"}[key], param)
    if key in "bc":
        return getattr(peer, {"b": "conv_pool", "c": "pool"}[key])()
    return peer.chain(param)
