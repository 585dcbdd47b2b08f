"""What the op test files share: two checks and a table of ops.

``check_grad``     backward() against central finite differences (float64), via
                   ``tinygrad_pool.gradcheck``.
``torch_parity``   the same function run in tinygrad_pool and in PyTorch: forward values and the
                   gradient of every input compared, for one random output weighting.

``UNARY``          the unary elementwise ops, by name (test_elementwise, test_tensor).
``load_script``    a script of the repository (an example, the benchmark) as a module.
``assert_same_as_a_batch_of_one``  unbatched (C, H, W) input against the same as a batch of one.
``exp_function``   a torch-style custom Function (eˣ, saving its output) on either framework's base.
``Cube``           x³ as an engine Function on arrays (tinygrad_pool.tensor.Function).

torch is never imported here: parity tests receive it from the ``torch`` fixture, which skips
when PyTorch is absent.
"""
import importlib.util
import sys
from pathlib import Path

import numpy as np

import tinygrad_pool
from tinygrad_pool import Tensor, tensor
from tinygrad_pool.engine import Node


# The unary elementwise ops, each written so that the same lambda runs on tinygrad_pool and on
# torch tensors.
UNARY = {
    "neg": lambda x: -x,
    "exp": lambda x: x.exp(),
    "log": lambda x: x.log(),
    "sqrt": lambda x: x.sqrt(),
    "relu": lambda x: x.relu(),
    "sigmoid": lambda x: x.sigmoid(),
    "tanh": lambda x: x.tanh(),
    "arctan": lambda x: x.arctan(),
    "abs": lambda x: x.abs(),
    "pow2": lambda x: x ** 2,
    "pow3": lambda x: x ** 3,
    "pow_half": lambda x: x ** 0.5,
    "pow_neg": lambda x: x ** -1.5,
    "pow1": lambda x: x ** 1,
    "pow0": lambda x: x ** 0,
}


def leaf(array) -> Tensor:
    """A float64 leaf that requires grad (a copy: gradcheck perturbs its data in place)."""
    return tensor(np.array(array, dtype=np.float64), requires_grad=True)


def check_grad(fn, *arrays, eps=1e-6, atol=1e-5, rtol=1e-3):
    """Assert that fn's gradient with respect to every array matches finite differences.

    Each array becomes a float64 Tensor with requires_grad=True; constants (labels, targets)
    belong in fn's closure.
    """
    inputs = [leaf(a) for a in arrays]
    assert tinygrad_pool.gradcheck(fn, inputs, eps=eps, atol=atol, rtol=rtol) is True


def torch_parity(torch, fn, *arrays, torch_fn=None, seed=0, rtol=1e-7, atol=1e-10):
    """Run ``fn`` on tinygrad_pool leaves and ``torch_fn`` (default: the same fn) on torch
    leaves made from the same float64 arrays; compare outputs, then backpropagate the same random
    weighting through both and compare every input's gradient. Returns (ours, theirs, leaves,
    torch_leaves) for further checks."""
    ours = [leaf(a) for a in arrays]
    theirs = [torch.tensor(np.array(a, dtype=np.float64), requires_grad=True) for a in arrays]
    out = fn(*ours)
    tout = (torch_fn or fn)(*theirs)
    assert out.shape == tuple(tout.shape), (out.shape, tuple(tout.shape))
    np.testing.assert_allclose(out.numpy(), tout.detach().numpy(), rtol=rtol, atol=atol,
                               err_msg="forward differs from PyTorch")
    weights = np.random.default_rng(seed).standard_normal(out.shape)
    out.backward(weights)
    tout.backward(torch.tensor(weights))
    for k, (a, b) in enumerate(zip(ours, theirs)):
        expected = np.zeros(a.shape) if b.grad is None else b.grad.numpy()
        got = np.zeros(a.shape) if a.grad is None else a.grad.numpy()
        assert got.shape == expected.shape
        np.testing.assert_allclose(got, expected, rtol=rtol, atol=atol,
                                   err_msg=f"gradient of input {k} differs from PyTorch")
    return out, tout, ours, theirs


def assert_same_as_a_batch_of_one(out, batch_out, single, batch, rng) -> None:
    """An op on one unbatched input (C, H, W) gives, forward and backward, exactly what it gives
    on the same input as a batch of one."""
    np.testing.assert_array_equal(out.numpy(), batch_out.numpy()[0])
    weights = rng.standard_normal(out.shape)
    out.backward(weights)
    batch_out.backward(weights[None])
    assert single.grad.shape == single.shape
    np.testing.assert_array_equal(single.grad.numpy(), batch.grad.numpy()[0])


REPOSITORY = Path(__file__).resolve().parents[1]


def load_script(relative_path: str):
    """``examples/x.py`` or ``benchmarks/run.py`` imported as a module, once per process
    (registered in sys.modules under its file name: dataclasses look their module up there)."""
    name = Path(relative_path).stem
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, REPOSITORY / relative_path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def exp_function(base):
    """``Exp`` as a subclass of ``base`` (tinygrad_pool's or torch's autograd.Function): the
    bodies use only what both Tensors have, so parity tests run literally the same op."""
    class Exp(base):
        """y = eˣ, saving its output: dy = y dx."""

        @staticmethod
        def forward(ctx, x):
            y = x.exp()
            ctx.save_for_backward(y)
            return y

        @staticmethod
        def backward(ctx, grad):
            (y,) = ctx.saved_tensors
            return grad * y
    return Exp


class Cube(Node):
    """out = x³;  ∂L/∂x = 3x² · ∂L/∂out — a correct custom engine Function, written by hand."""

    def forward(ctx, x):
        ctx.save_for_backward(x=x)
        return x ** 3

    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return 3 * x ** 2 * grad
