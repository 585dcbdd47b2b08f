"""Check backward() against finite differences, in float64.

For a random fixed weighting R of the output, L(x) = Σ R · fn(x) is a scalar whose gradient
backward() computes in one pass; central differences (L(x + ε) - L(x - ε)) / 2ε estimate the
same numbers one element at a time. A wrong derivative shows up for almost every R.
"""
import numpy as np

from .ops.args import check_number
from .tensor import Tensor, no_grad


class GradcheckError(AssertionError):
    """backward() and the finite differences disagree."""


def gradcheck(fn, inputs, eps=1e-6, atol=1e-5, rtol=1e-3, seed=0, raise_exception=True) -> bool:
    """Compare the gradient of ``fn(*inputs)`` with central differences for every input.

    ``inputs`` are Tensors; those with ``requires_grad=True`` are checked and must be float64.
    Returns True, or raises GradcheckError saying which input and element differ and by how much
    (returns False instead with ``raise_exception=False``).
    """
    if not callable(fn):
        raise TypeError(f"gradcheck: fn must be callable, got {type(fn).__name__}")
    eps = check_number("gradcheck", "eps", eps)
    if not (eps > 0 and np.isfinite(eps)):  # a zero step divides by zero
        raise ValueError(f"gradcheck: eps must be a positive finite step, got {eps}")
    for name, value in (("atol", atol), ("rtol", rtol)):
        check_number("gradcheck", name, value, low=0.0, error=RuntimeError)
    inputs = list(inputs) if isinstance(inputs, (list, tuple)) else [inputs]
    checked = [k for k, t in enumerate(inputs) if isinstance(t, Tensor) and t.requires_grad]
    if not checked:
        raise ValueError("gradcheck: no input has requires_grad=True, so there is nothing to check")
    for k in checked:
        if inputs[k].dtype != np.float64:
            raise TypeError(f"gradcheck: input {k} has dtype {inputs[k].dtype}; finite "
                            f"differences need float64 (Tensor(x, dtype=np.float64))")

    output = fn(*inputs)
    if not isinstance(output, Tensor):
        raise TypeError(f"gradcheck: fn must return a Tensor, got {type(output).__name__}")
    weights = np.random.default_rng(seed).standard_normal(output.shape)

    def weighted(out: Tensor) -> float:
        return float(np.sum(weights * out.data))

    saved_grads = [inputs[k].grad for k in checked]
    for k in checked:
        inputs[k].grad = None
    output.backward(weights)
    analytic = [np.zeros(inputs[k].shape) if inputs[k].grad is None else inputs[k].grad.data
                for k in checked]
    for k, grad in zip(checked, saved_grads):
        inputs[k].grad = grad

    for k, expected in zip(checked, analytic):
        data = inputs[k].data
        numeric = np.zeros(data.shape)
        with no_grad():
            for index in np.ndindex(data.shape):
                original = data[index]
                data[index] = original + eps
                plus = weighted(fn(*inputs))
                data[index] = original - eps
                minus = weighted(fn(*inputs))
                data[index] = original
                numeric[index] = (plus - minus) / (2 * eps)
        error = np.abs(expected - numeric)
        bound = atol + rtol * np.abs(numeric)
        if not np.all(error <= bound):
            worst = np.unravel_index(np.argmax(error - bound), data.shape)
            message = (f"gradcheck: input {k} (shape {data.shape}) element {tuple(map(int, worst))}: "
                       f"backward gives {expected[worst]:.8g} but finite differences give "
                       f"{numeric[worst]:.8g} (difference {error[worst]:.3g} > "
                       f"atol + rtol·|numeric| = {bound[worst]:.3g}); "
                       f"{int(np.sum(error > bound))} of {data.size} elements differ")
            if raise_exception:
                raise GradcheckError(message)
            return False
    return True
