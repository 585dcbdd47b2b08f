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


# ---- products of vectors and matrices, and sums with them: torch's compositions of matmul ----
from .elementwise import Sign, is_number  # noqa: E402
from .movement import Fill, Reshape  # noqa: E402
from .reduce import Sum, VectorNorm, expand_reduced  # noqa: E402  (reduce imports none of this)
from ..args import _TORCH_NAMES  # noqa: E402


def _torch_name(dtype) -> str:
    return _TORCH_NAMES.get(np.dtype(dtype).name, str(dtype))


def _vectors(op: str, input, other, other_name: str) -> tuple:
    """dot's and vdot's operands: 1-D tensors of one dtype and one length (torch's errors)."""
    input, other = tensor_arg(op, "input", input), tensor_arg(op, other_name, other)
    if input.ndim != 1 or other.ndim != 1:
        raise RuntimeError(f"{op}: 1D tensors expected, but got {input.ndim}D and {other.ndim}D "
                           f"tensors")
    if input.dtype != other.dtype:
        raise RuntimeError(f"{op} : expected both vectors to have same dtype, but found "
                           f"{_torch_name(input.dtype)} and {_torch_name(other.dtype)}")
    if input.dtype == np.bool_:
        raise NotImplementedError(f"{op}: \"{op}\" not implemented for 'Bool'")
    if input.shape != other.shape:
        n, m = input.shape[0], other.shape[0]
        raise RuntimeError(f"{op}: inconsistent tensor size, expected tensor [{n}] and src [{m}] "
                           f"to have the same number of elements, but got {n} and {m} elements "
                           f"respectively")
    return input, other


def dot(input, tensor) -> Tensor:
    """Σᵢ input[i] · tensor[i] of two 1-D tensors: a 0-d tensor."""
    return MatMul.apply(*_vectors("dot", input, tensor, "tensor"))


def vdot(input, other) -> Tensor:
    """dot of the conjugate of input with other: dot itself for real tensors."""
    return MatMul.apply(*_vectors("vdot", input, other, "other"))


def outer(input, vec2, op: str = "outer") -> Tensor:
    """input[i] · vec2[j] of two 1-D tensors: an (n, m) matrix (dtypes promoted, as ``*``)."""
    input, vec2 = tensor_arg(op, "input", input), tensor_arg(op, "vec2", vec2)
    for name, value in (("self", input), ("vec2", vec2)):
        if value.ndim != 1:
            raise RuntimeError(f"{op}: Expected 1-D argument {name}, but got {value.ndim}-D")
    return Reshape.apply(input, shape=(input.shape[0], 1)) * vec2


def inner(input, other) -> Tensor:
    """Products summed over the last dim of both: shape input.shape[:-1] + other.shape[:-1]
    (a 0-d operand multiplies, as torch's)."""
    input, other = tensor_arg("inner", "input", input), tensor_arg("inner", "other", other)
    if input.ndim == 0 or other.ndim == 0:
        return input * other
    if input.shape[-1] != other.shape[-1]:
        raise RuntimeError(f"inner() the last dimension must match on both input tensors but "
                           f"got shapes {list(input.shape)} and {list(other.shape)}")
    if input.dtype != other.dtype:
        raise RuntimeError(f"inner: both inputs should have same dtype (got {input.dtype} and "
                           f"{other.dtype})")
    k = input.shape[-1]  # (sizes spelled out: -1 is ambiguous for empty tensors)
    rows = Reshape.apply(input, shape=(math.prod(input.shape[:-1]), k))
    columns = Reshape.apply(other, shape=(math.prod(other.shape[:-1]), k))
    return Reshape.apply(matmul(rows, columns.mT), shape=input.shape[:-1] + other.shape[:-1])


def mv(input, vec) -> Tensor:
    """A matrix times a vector (2-D and 1-D only, as torch.mv)."""
    input, vec = tensor_arg("mv", "input", input), tensor_arg("mv", "vec", vec)
    if input.ndim != 2 or vec.ndim != 1:
        raise RuntimeError(f"mv: vector + matrix @ vector expected, got 1, {input.ndim}, "
                           f"{vec.ndim}")
    if input.shape[1] != vec.shape[0]:
        raise RuntimeError(f"mv: size mismatch, got input ({input.shape[0]}), mat "
                           f"({input.shape[0]}x{input.shape[1]}), vec ({vec.shape[0]})")
    if input.dtype != vec.dtype:
        raise RuntimeError(f"mv: input tensors must have the same dtype, but got "
                           f"{_torch_name(input.dtype)} and {_torch_name(vec.dtype)}")
    return MatMul.apply(input, vec)


def _scale(op: str, name: str, value, dtype) -> None:
    """beta or alpha: a real number (a bool counts); a fraction only for floating results."""
    if isinstance(value, complex):
        raise RuntimeError(f"{op}: {name}={value!r} is complex: value cannot be converted to type "
                           f"{dtype} without overflow")
    if not is_number(value):
        raise TypeError(f"{op}(): argument '{name}' must be Number, not {type(value).__name__}")
    if dtype.kind != "f" and not float(value).is_integer():
        raise RuntimeError(f"{op}: {name}={value!r} is not an integer, and the result has the "
                           f"integer dtype {dtype} (use floating tensors)")


def _scaled_sum(op: str, input, product: Tensor, beta, alpha) -> Tensor:
    """beta · input + alpha · product, input expanded to the product's shape; with beta = 0
    input is not read (a nan there is ignored, and its gradient is 0), as torch's."""
    input = tensor_arg(op, "input", input)
    if input.dtype != product.dtype:
        raise RuntimeError(f"{op}: self and mat2 must have the same dtype, but got "
                           f"{_torch_name(input.dtype)} and {_torch_name(product.dtype)}")
    for name, value in (("beta", beta), ("alpha", alpha)):
        _scale(op, name, value, product.dtype)
    shape = product.shape
    try:
        fits = np.broadcast_shapes(input.shape, shape) == shape
    except ValueError:
        fits = False
    if not fits:
        raise RuntimeError(f"{op}: input of shape {input.shape} does not expand to the "
                           f"product's shape {shape}")
    if product.dtype.kind != "f":  # (whole numbers, checked: kept in the integer dtype)
        beta, alpha = int(beta), int(alpha)
    scaled = Fill.apply(input, value=0) if beta == 0 else input if beta == 1 else input * beta
    return (product if alpha == 1 else product * alpha) + scaled


def _matrix(op: str, name: str, value, ndim: int = 2) -> Tensor:
    value = tensor_arg(op, name, value)
    if value.ndim != ndim:
        what = "a matrix" if ndim == 2 else f"a {ndim}D tensor"
        raise RuntimeError(f"{op}: {name} must be {what}, got {value.ndim}-D tensor")
    return value


def addmm(input, mat1, mat2, *, beta=1, alpha=1) -> Tensor:
    """beta · input + alpha · (mat1 @ mat2), input broadcast to the product's shape."""
    mat1, mat2 = _matrix("addmm", "mat1", mat1), _matrix("addmm", "mat2", mat2)
    if mat1.shape[1] != mat2.shape[0]:
        raise RuntimeError(f"addmm: mat1 and mat2 shapes cannot be multiplied "
                           f"({mat1.shape[0]}x{mat1.shape[1]} and {mat2.shape[0]}x{mat2.shape[1]})")
    return _scaled_sum("addmm", input, matmul(mat1, mat2), beta, alpha)


def addmv(input, mat, vec, *, beta=1, alpha=1) -> Tensor:
    """beta · input + alpha · (mat @ vec)."""
    return _scaled_sum("addmv", input, mv(mat, vec), beta, alpha)


def baddbmm(input, batch1, batch2, *, beta=1, alpha=1) -> Tensor:
    """beta · input + alpha · bmm(batch1, batch2), input broadcast to (b, n, p)."""
    batch1 = _matrix("baddbmm", "batch1", batch1, 3)
    return _scaled_sum("baddbmm", input, bmm(batch1, _matrix("baddbmm", "batch2", batch2, 3)),
                       beta, alpha)


def addbmm(input, batch1, batch2, *, beta=1, alpha=1) -> Tensor:
    """beta · input + alpha · Σ_b batch1[b] @ batch2[b], input broadcast to (n, p)."""
    batch1 = _matrix("addbmm", "batch1", batch1, 3)
    products = bmm(batch1, _matrix("addbmm", "batch2", batch2, 3))
    return _scaled_sum("addbmm", input, Sum.apply(products, axis=(0,), keepdims=False),
                       beta, alpha)


def kron(input, other) -> Tensor:
    """The Kronecker product: every element of input times the whole of other, in blocks
    (the shorter shape padded with leading 1s; dtypes promoted, as ``*``)."""
    input, other = tensor_arg("kron", "input", input), tensor_arg("kron", "other", other)
    ndim = max(input.ndim, other.ndim)
    a_shape = (1,) * (ndim - input.ndim) + input.shape
    b_shape = (1,) * (ndim - other.ndim) + other.shape
    # a's dims at even places, b's at odd ones: the product holds a[i] · b[j] at (i0, j0, i1, ...)
    spread_a = Reshape.apply(input, shape=tuple(n for d in a_shape for n in (d, 1)))
    spread_b = Reshape.apply(other, shape=tuple(n for d in b_shape for n in (1, d)))
    return Reshape.apply(spread_a * spread_b, shape=tuple(a * b for a, b in zip(a_shape, b_shape)))



class CdistNorm(VectorNorm):
    """The p-norm of x1ᵢ - x2ⱼ over the last dim: VectorNorm's gradient (0 where the distance
    is 0), except that for p = inf every coordinate where |d| equals the distance gets the
    whole gradient, not a share of it — torch's _cdist_backward"""

    def backward(ctx, grad):
        if ctx.attrs["ord"] != np.inf:
            return VectorNorm.backward(ctx, grad)
        x, out = ctx.saved_tensors
        axis, keepdims = ctx.attrs["axis"], ctx.attrs["keepdims"]
        grad = expand_reduced(grad, x.shape, axis, keepdims)
        norm = np.asarray(expand_reduced(out, x.shape, axis, keepdims))
        chosen = (np.abs(np.asarray(x)) == norm).astype(grad.dtype)  # a constant
        return Sign.call(x) * (grad * chosen)


_COMPUTE_MODES = ("use_mm_for_euclid_dist_if_necessary", "use_mm_for_euclid_dist",
                  "donot_use_mm_for_euclid_dist")


def cdist(x1, x2, p=2.0, compute_mode="use_mm_for_euclid_dist_if_necessary") -> Tensor:
    """The p-norm distance between each row of x1 (..., P, M) and each row of x2 (..., R, M):
    shape (..., P, R), batch dims broadcast. (compute_mode is accepted; the distances are always
    the norms of the differences, torch's exact mode.)"""
    x1, x2 = tensor_arg("cdist", "x1", x1), tensor_arg("cdist", "x2", x2)
    for name, value in (("X1", x1), ("X2", x2)):
        if value.dtype.kind != "f":
            raise RuntimeError(f"cdist only supports floating-point dtypes, {name} got: "
                               f"{_torch_name(value.dtype)}")
    for name, value in (("X1", x1), ("X2", x2)):
        if value.ndim < 2:
            raise RuntimeError(f"cdist only supports at least 2D tensors, {name} got: "
                               f"{value.ndim}D")
    if x1.shape[-1] != x2.shape[-1]:
        raise RuntimeError(f"cdist: X1 and X2 must have the same number of columns. X1: "
                           f"{x1.shape[-1]} X2: {x2.shape[-1]} (shapes {tuple(x1.shape)} and "
                           f"{tuple(x2.shape)})")
    if isinstance(p, complex) or not is_number(p):
        raise TypeError(f"cdist(): argument 'p' must be float, not {type(p).__name__}")
    if not p >= 0:  # (nan too)
        raise RuntimeError(f"cdist only supports non-negative p values (got p={p})")
    if compute_mode not in _COMPUTE_MODES:
        raise ValueError(f"{compute_mode} is not a valid value for compute_mode")
    if x1.dtype != x2.dtype:
        raise RuntimeError(f"cdist: expected scalar type {_torch_name(x1.dtype)} but found "
                           f"{_torch_name(x2.dtype)} (x1 and x2 must have one dtype)")
    try:
        np.broadcast_shapes(x1.shape[:-2], x2.shape[:-2])
    except ValueError:
        raise RuntimeError(f"cdist: the batch dims of x1 {x1.shape} and x2 {x2.shape} do not "
                           f"broadcast") from None
    if x1.shape[-1] == 0:  # no coordinates: every distance is 0, as torch's (an inf-norm,
        p = 1.0               # a max of nothing, would have no value)
    rows = Reshape.apply(x1, shape=x1.shape[:-1] + (1, x1.shape[-1]))
    columns = Reshape.apply(x2, shape=x2.shape[:-2] + (1,) + x2.shape[-2:])
    differences = rows - columns  # (..., P, R, M)
    return CdistNorm.apply(differences, ord=float(p), axis=(differences.ndim - 1,),
                           keepdims=False)
