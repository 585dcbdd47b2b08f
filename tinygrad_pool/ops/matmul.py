"""Matrix product with NumPy's rules: batched over leading axes, 1-D operands promoted."""
import math
import string

import numpy as np

from ..engine import Node, Tensor, unbroadcast
from ..args import operands_advice, plural, product_operands, tensor_arg
from .elementwise import BroadcastError


def check_matmul(a: np.ndarray, b: np.ndarray) -> None:
    """Shapes that multiply: torch's RuntimeError (a ValueError too, as this package's was)."""
    if a.ndim == 0 or b.ndim == 0:
        raise BroadcastError(f"matmul (@): both input and other need at least 1 dimension, got "
                             f"shapes {a.shape} and {b.shape} (use * for scalars)")
    inner_a, inner_b = a.shape[-1], b.shape[-2 if b.ndim > 1 else 0]
    if inner_a != inner_b:
        raise BroadcastError(f"matmul (@): inner dimensions differ: input has shape {a.shape} "
                             f"(last dim {inner_a}) but other has shape {b.shape} "
                             f"({'dim -2' if b.ndim > 1 else 'length'} {inner_b})")
    if a.ndim < 3 or b.ndim < 3:  # batch axes on one side only always broadcast (and
        return                       # np.broadcast_shapes is dear next to a small product)
    try:
        np.broadcast_shapes(a.shape[:-2], b.shape[:-2])
    except ValueError:
        raise BroadcastError(f"matmul (@): batch dimensions of input {a.shape} and other "
                             f"{b.shape} do not broadcast") from None


def matmul(input: Tensor, other: Tensor) -> Tensor:
    """``input @ other``: tensors of one dtype (torch does not promote in a product)."""
    if input._data.dtype is not other._data.dtype and input._data.dtype != other._data.dtype:
        raise RuntimeError(f"matmul (@): expected input and other to have the same dtype, but "
                           f"got {input._data.dtype} and {other._data.dtype}; "
                           f"{operands_advice('input', input.dtype, 'other', other.dtype)}")
    return MatMul.apply(input, other)


class MatMul(Node):
    """d(A B) = dA B + A dB, so  ∂L/∂A = G Bᵀ  and  ∂L/∂B = Aᵀ G

    A 1-D operand is treated as a row (a) or column (b) matrix, and the added axis is removed
    from its gradient again; batch axes that were broadcast are summed by ``unbroadcast``.
    """

    fresh_gradients = True  # each gradient is an array made for its input alone

    def forward(ctx, a, b):
        check_matmul(a, b)
        ctx.a_shape, ctx.b_shape = a.shape, b.shape
        needs_a, needs_b = ctx.needs_input_grad
        # each factor only where the other's gradient needs it (None in the other slot), as torch
        ctx.save_for_backward(a=a if needs_b else None, b=b if needs_a else None)
        return a @ b

    def backward(ctx, grad):
        a, b = ctx.saved_tensors
        a_shape, b_shape = ctx.a_shape, ctx.b_shape
        if len(b_shape) == 1:  # put back the column axis that b's promotion removed from the output
            grad = grad[..., None]
        if len(a_shape) == 1:  # and the row axis that a's removed
            grad = grad[..., None, :]
        grad_a = grad_b = None
        if ctx.needs_input_grad[0]:
            b = b[:, None] if len(b_shape) == 1 else b
            a2_shape = (1,) + a_shape if len(a_shape) == 1 else a_shape
            grad_a = unbroadcast(grad @ b.swapaxes(-1, -2), a2_shape).reshape(a_shape)
        if ctx.needs_input_grad[1]:
            a = a[None, :] if len(a_shape) == 1 else a
            b2_shape = b_shape + (1,) if len(b_shape) == 1 else b_shape
            grad_b = unbroadcast(a.swapaxes(-1, -2) @ grad, b2_shape).reshape(b_shape)
        return grad_a, grad_b


class Linear(Node):
    """y = x Wᵀ + b, one node as torch's addmm:  ∂L/∂x = G W,  ∂L/∂W = Gᵀ x (summed over the
    batch axes),  ∂L/∂b = Σ G over the axes b was broadcast along.

    As ``x @ W.T + b`` it would be three nodes (a transpose, a product, a sum) whose weight
    gradient arrives transposed, so a copy to lay it out; here both gradients come out of
    one product each, laid out as the parameters are (measured: see benchmarks/README.md).
    """

    fresh_gradients = True  # each gradient is an array made for its input alone

    def forward(ctx, x, weight, bias=None):
        ctx.x_shape = x.shape
        # x for the weight's gradient, the weight for x's (None where not needed), as torch
        ctx.save_for_backward(x=x if ctx.needs_input_grad[1] else None,
                              weight=weight if ctx.needs_input_grad[0] else None)
        out = x @ weight.T
        if bias is not None:
            ctx.bias_shape = bias.shape
            out += bias  # a fresh product: add in place (the bias expands to it, checked)
        return out

    def backward(ctx, grad):
        needs = ctx.needs_input_grad
        x, weight = ctx.saved_tensors
        grad_x = grad @ weight if needs[0] else None
        grad_w = None
        if needs[1]:
            # the batch axes flattened (sizes spelled out: -1 is ambiguous for empty arrays)
            batch = math.prod(ctx.x_shape[:-1])
            rows = grad.reshape(batch, grad.shape[-1])
            grad_w = rows.swapaxes(0, 1) @ x.reshape(batch, ctx.x_shape[-1])
        if len(needs) == 2:
            return grad_x, grad_w
        grad_b = unbroadcast(grad, ctx.bias_shape) if needs[2] else None
        if grad_b is grad:  # an unbatched input: a new array all the same (fresh_gradients)
            grad_b = grad + 0
        return grad_x, grad_w, grad_b


def linear(input, weight, bias=None) -> Tensor:
    """input @ weightᵀ + bias, with PyTorch's (out_features, in_features) weight layout (a 1-D
    weight, without bias, is one output feature dropped from the shape, as torch's)."""
    input, weight, bias = product_operands("linear", input, weight, bias)
    if not (weight.ndim == 2 or weight.ndim == 1 and bias is None) or input.ndim < 1 \
            or input.shape[-1] != weight.shape[-1]:
        raise RuntimeError(f"linear: input has shape {input.shape} but weight has shape "
                           f"{weight.shape}; expected input (..., in_features) and a 2-D weight "
                           f"(out_features, in_features)")
    out_shape = input.shape[:-1] + weight.shape[:-1]
    if bias is not None and bias.shape != weight.shape[:1] and not (  # torch expands the bias
            bias.ndim <= len(out_shape) and
            all(b in (1, o) for b, o in zip(bias.shape[::-1], out_shape[::-1]))):
        raise BroadcastError(f"linear: bias of shape {bias.shape} does not expand to the "
                             f"output's shape {out_shape} (input {input.shape}, weight "
                             f"{weight.shape}); expected ({weight.shape[0]},)")
    if weight.ndim == 1:  # one output feature, dropped from the shape: a plain product
        return input @ weight
    return Linear.apply(input, weight) if bias is None else Linear.apply(input, weight, bias)


def parse_einsum(equation: str, operands: list) -> tuple:
    """``"ij,jk->ik"`` as ([input subscripts], output subscripts, {letter: size}), checked
    against the operands' shapes, with torch's rules.

    ``...`` stands for the dims no letter names; it is given letters of its own here (unused
    ones), right-aligned across operands, so it broadcasts as numbers do. Without ``->`` the
    output is torch's implicit one: the ellipsis dims, then the letters that appear exactly once,
    in alphabetical order. A letter repeated within one operand reads its diagonal. A letter's
    size is the same in every operand, except that a size of 1 broadcasts (as in torch).
    Malformed equations are RuntimeErrors, as in torch."""
    if not isinstance(equation, str):
        raise TypeError(f"einsum: equation must be a string, got {type(equation).__name__}")
    text = equation.replace(" ", "")
    inputs, arrow, output = text.partition("->")
    inputs = inputs.split(",")
    for k, subscripts in enumerate(inputs + ([output] if arrow else [])):
        what = f"operand {k}" if k < len(inputs) else "output"
        rest = subscripts.replace("...", "", 1)
        if "." in rest:
            found = "for which an ellipsis was already found" if "..." in subscripts \
                else "that is not part of any ellipsis"
            raise RuntimeError(f"einsum(): found '.' for {what} {found} (equation "
                               f"{equation!r})")
        if rest and not (rest.isalpha() and rest.isascii()):
            raise RuntimeError(f"einsum: equation {equation!r} may only contain letters, "
                               f"'...', ',' and '->'")
    if len(inputs) != len(operands):
        raise RuntimeError(f"einsum: equation {equation!r} names "
                           f"{plural(len(inputs), 'operand')} but {len(operands)} "
                           f"{'was' if len(operands) == 1 else 'were'} given")
    # How many dims each ellipsis covers, and letters for the longest (unused ones).
    covered = []
    for k, (subscripts, array) in enumerate(zip(inputs, operands)):
        named = len(subscripts.replace("...", ""))
        if named > array.ndim or ("..." not in subscripts and named != array.ndim):
            raise RuntimeError(f"einsum(): the subscripts {subscripts!r} name "
                               f"{plural(named, 'dimension')} for operand {k} of shape "
                               f"{array.shape}")
        covered.append(array.ndim - named if "..." in subscripts else 0)
    free = [c for c in string.ascii_letters if c not in text]
    ellipsis = "".join(free[len(free) - max(covered, default=0):])
    inputs = [s.replace("...", ellipsis[len(ellipsis) - n:] if n else "")
              for s, n in zip(inputs, covered)]
    if not arrow:
        letters = "".join(inputs)
        output = ellipsis + "".join(sorted(c for c in set(letters) - set(ellipsis)
                                           if letters.count(c) == 1))
    output = output.replace("...", ellipsis)
    sizes = {}
    for k, (subscripts, array) in enumerate(zip(inputs, operands)):
        own = {}
        for letter, n in zip(subscripts, array.shape):
            if own.setdefault(letter, n) != n:
                raise RuntimeError(f"einsum(): subscript {letter} is repeated for operand {k} "
                                   f"but the sizes don't match, {own[letter]} != {n}")
            known = sizes.setdefault(letter, n)
            if known != n and 1 not in (known, n):
                where = "the ellipsis" if letter in ellipsis else f"letter {letter!r}"
                raise RuntimeError(f"einsum: {where} has size {known} in one operand and {n} "
                                   f"in operand {k} (sizes must be equal, or 1)")
            sizes[letter] = n if known == 1 else known  # (1 broadcasts, even to 0)
    if set(output) - set("".join(inputs)) or len(set(output)) != len(output):
        raise RuntimeError(f"einsum: the output {output!r} must use each input letter at most "
                           f"once (and no other letter)")
    return inputs, output, sizes


def sublist_equation(arguments: tuple) -> tuple:
    """torch.einsum's sublist form, ``einsum(a, [0, 1], b, [1, 2], [0, 2])``, as an equation
    and its operands: the ints 0-51 are the letters A-Z, a-z (in that order, so that the
    implicit output's alphabetical order is the ints' order, as torch's); ``...`` is Ellipsis."""
    def subscripts(sublist) -> str:
        letters = []
        for item in sublist:
            if item is Ellipsis:
                letters.append("...")
            elif not isinstance(item, int) or isinstance(item, bool) or not 0 <= item < 52:
                raise ValueError(f"einsum(): subscript in subscript list is not within the "
                                 f"valid range [0, 52), got {item!r}")
            else:
                letters.append((string.ascii_uppercase + string.ascii_lowercase)[item])
        return "".join(letters)
    operands, inputs = arguments[0:len(arguments) - len(arguments) % 2:2], []
    for sublist in arguments[1::2]:
        inputs.append(subscripts(sublist))
    equation = ",".join(inputs)
    if len(arguments) % 2:
        equation += "->" + subscripts(arguments[-1])
    return equation, operands


class Einsum(Node):
    """out = Σ over the letters missing from the output, of the product of the operands

    ∂L/∂operandₖ is an einsum too: the output gradient times every other operand, summed over
    the letters operand k lacks. A letter only operand k has was summed away in forward, so the
    gradient is the same all along it: broadcast back. A letter operand k repeats (``ii``, its
    diagonal) takes the gradient on that diagonal only: times the identity matrix.
    """

    equation_attrs = ("inputs", "output")  # PyTorch's one equation, "ij,jk->ik" (pictures ask)

    def forward(ctx, *operands, inputs, output):
        # Each operand another one's gradient needs is saved under its own name (operand0,
        # operand1...; None for one no other gradient needs): as saved tensors, double backward
        # differentiates through them too.
        needs = ctx.needs_input_grad
        ctx.save_for_backward(**{f"operand{k}": operand if any(needs[:k] + needs[k + 1:]) else None
                                 for k, operand in enumerate(operands)})
        ctx.shapes = tuple(o.shape for o in operands)
        return np.einsum(",".join(inputs) + "->" + output, *operands)

    def backward(ctx, grad):
        inputs, output = ctx.attrs["inputs"], ctx.attrs["output"]
        operands = ctx.saved_tensors
        grads = []
        for k, subscripts in enumerate(inputs):
            if not ctx.needs_input_grad[k]:
                grads.append(None)
                continue
            others = [s for i, s in enumerate(inputs) if i != k]
            available = set(output).union(*others)
            size = dict(zip(subscripts, ctx.shapes[k]))
            unique = "".join(dict.fromkeys(subscripts))  # (each letter once, in order)
            kept = "".join(c for c in unique if c in available)
            partial = Einsum.call(grad, *[operand for i, operand in enumerate(operands) if i != k],
                                  inputs=(output, *others), output=kept)
            if kept != unique:  # letters only this operand has: the gradient is constant
                # along them, so broadcast it back
                partial = partial.reshape(tuple(size[c] if c in available else 1 for c in unique))
                partial = Expand.call(partial, shape=tuple(size[c] for c in unique))
            if unique != subscripts:  # a repeated letter: onto the diagonal, by identities
                free = iter(c for c in string.ascii_letters
                            if c not in "".join(inputs) + output)
                renamed, eyes, seen = "", [], set()
                for c in subscripts:
                    if c in seen:
                        fresh = next(free)
                        renamed += fresh
                        eyes.append((c + fresh, np.eye(size[c], dtype=grad.dtype)))
                    else:
                        renamed += c
                        seen.add(c)
                partial = Einsum.call(partial, *[eye for _, eye in eyes],
                                      inputs=(unique, *[pair for pair, _ in eyes]),
                                      output=renamed)
            grads.append(partial)
        return tuple(grads)


from .movement import Expand  # noqa: E402  (movement imports nothing from here)


def _matrices(op: str, input, mat2, ndim: int) -> tuple:
    """The operands of mm (``ndim`` 2) or bmm (3): tensors of that many dims and one dtype,
    whose shapes multiply (and, for bmm, with the same batch size)."""
    mat2 = tensor_arg(op, "mat2", mat2)
    if op == "bmm" and input.dtype == np.bool_:
        raise NotImplementedError("bmm: input is a bool tensor: \"bmm\" is not implemented for "
                                  "'Bool'")
    for name, value in (("input", input), ("mat2", mat2)):
        if value.ndim != ndim:
            raise RuntimeError(f"{op}: {name} must be a {ndim}-D tensor, got shape {value.shape}")
    if input.dtype != mat2.dtype:
        raise RuntimeError(f"{op}: expected input and mat2 to have the same dtype, but got "
                           f"{input.dtype} and {mat2.dtype}; "
                           f"{operands_advice('input', input.dtype, 'mat2', mat2.dtype)}")
    if input.shape[:-2] != mat2.shape[:-2] or input.shape[-1] != mat2.shape[-2]:
        raise RuntimeError(f"{op}: input and mat2 shapes cannot be multiplied ({input.shape} "
                           f"and {mat2.shape})")
    return input, mat2


def mm(input, mat2) -> Tensor:
    """A product of two matrices (2-D only, as torch.mm)."""
    return matmul(*_matrices("mm", input, mat2, 2))


def bmm(input, mat2) -> Tensor:
    """Batched matrix products of two 3-D tensors with the same batch size (torch.bmm)."""
    return matmul(*_matrices("bmm", input, mat2, 3))
