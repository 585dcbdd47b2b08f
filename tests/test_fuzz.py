"""PyTorch parity fuzz: every public op, one table entry each, run in tinygrad_pool and in torch
on the same hypothesis-drawn shapes, arguments and values.

An entry (``Op``) names the op and gives
  draw   a strategy for one example: the op's tensor inputs (``In``: shape, value domain, and
         whether it requires grad) and its other arguments (``a``: ints, flags, index arrays);
  call   ``call(T, F, a, *inputs)``, written once for both frameworks: ``T`` is tinygrad_pool or
         torch and ``F`` its nn.functional, so the very same line runs in each.
For each example the test compares, in float64 (rtol 1e-10, atol 1e-12 times the magnitude of
the expected values, unless an entry says why it needs more):
  - every output: shape, dtype, values (integers and bools exactly) and requires_grad;
  - the gradient of Σ out·w (w random) with respect to every input that requires grad, on the
    fast path (plain backward, NumPy arrays) and on the recorded one (create_graph=True);
  - the gradient of Σ grad·v (v random), a Hessian-vector product, where torch differentiates
    twice;
then in float32 the forward and backward again (rtol 1e-5, atol 1e-6 times the magnitude).
Where torch refuses the drawn arguments, tinygrad_pool must raise the same type of error.

Values are a seeded float64 normal and, for the ops with tie rules (``ties=True``), also a few
repeated values on a coarse grid, so that maxima tie, |x| hits 0 and x hits a clamp bound.
torch's rules there (max_pool2d and max(dim): the first maximum; max(), amax, amin, maximum: an
equal split; relu and abs at 0: zero) are what the comparison then holds us to.

FUZZ_SCALE (environment, default 1) multiplies every entry's number of examples. At 1 the draws
are derandomized, so CI sees the same examples on every run; above 1 they are random, for long
local runs that look for rarer bugs (a failure prints the example to replay):

    FUZZ_SCALE=20 .venv/bin/python -m pytest -q tests/test_fuzz.py
"""
import math
import operator
import os
from dataclasses import dataclass
from types import SimpleNamespace

import numpy as np
import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import tinygrad_pool
import tinygrad_pool.nn.functional as tinygrad_F

FUZZ_SCALE = int(os.environ.get("FUZZ_SCALE", "1"))
if FUZZ_SCALE < 1:
    raise ValueError(f"FUZZ_SCALE must be a positive int, got {FUZZ_SCALE}")


# ---- what an example is -------------------------------------------------------------------------
@dataclass(frozen=True)
class In:
    """One tensor input: its shape, where its values lie, and whether it requires grad (a float
    constant such as class weights or running statistics does not, but is cast with the rest)."""
    shape: tuple
    domain: str = "real"
    grad: bool = True


def case(*inputs: In, **args):
    return list(inputs), SimpleNamespace(**args)


# Each domain: (a seeded normal draw, a coarse grid of repeated values that makes ties).
DOMAINS = {
    "real": (lambda rng, s: rng.standard_normal(s), lambda rng, s: rng.integers(-2, 3, s) / 2),
    "pos": (lambda rng, s: np.abs(rng.standard_normal(s)) + 0.5,  # log, sqrt, fractional powers
            lambda rng, s: rng.integers(1, 5, s) / 2),
    "away": (lambda rng, s: (np.abs(rng.standard_normal(s)) + 0.3) * rng.choice([-1, 1], s),
             lambda rng, s: rng.choice([-1.5, -0.5, 0.5, 1.5], s)),  # denominators
    "prob": (lambda rng, s: rng.uniform(0.05, 0.95, s),  # probabilities for binary cross entropy
             lambda rng, s: rng.choice([0.25, 0.5, 0.75], s)),
    "zero": (lambda rng, s: np.zeros(s), lambda rng, s: np.zeros(s)),  # singular points
    "unit": (lambda rng, s: rng.uniform(-0.95, 0.95, s),  # asin, acos, atanh: inside (-1, 1)
             lambda rng, s: rng.choice([-0.5, 0.0, 0.5], s)),
    "above1": (lambda rng, s: np.abs(rng.standard_normal(s)) + 1.1,  # acosh
               lambda rng, s: rng.choice([1.5, 2.0, 3.0], s)),
}


def make_values(rng, spec: In, ties: bool) -> np.ndarray:
    return np.asarray(DOMAINS[spec.domain][ties](rng, spec.shape), dtype=np.float64)


@dataclass
class Op:
    """One entry of the table (see the module docstring); ``xfail`` names a known bug."""
    name: str
    draw: st.SearchStrategy
    call: object
    reference: object = None  # torch's spelling, for an op of ours that torch spells otherwise
    double: bool = True  # torch differentiates it twice
    ties: bool = False  # the op has tie rules: also check each example on repeated values
    tol: tuple = (1e-10, 1e-12)
    tol32: tuple = (1e-5, 1e-6)
    examples: int = 3
    xfail: str = ""


OPS: list = []


def op(name, draw, call, **options) -> None:
    OPS.append(Op(name, draw, call, **options))


# ---- strategies -----------------------------------------------------------------------------------
SEEDS = st.integers(0, 2 ** 32 - 1)
NUMBERS = st.sampled_from([2, -3, 0, 1, 0.5, -1.25, 2.75])


def shapes(min_dims=0, max_dims=3, min_side=1, max_side=4):
    return hnp.array_shapes(min_dims=min_dims, max_dims=max_dims, min_side=min_side,
                            max_side=max_side)


def some_empty(min_dims=0, max_dims=3):
    """Shapes with, now and then, a dimension of length 0."""
    return st.one_of(shapes(min_dims, max_dims), shapes(min_dims, max_dims, min_side=0))


def broadcast_pair(min_dims=0, max_dims=3, min_side=1):
    return hnp.mutually_broadcastable_shapes(num_shapes=2, min_dims=min_dims, max_dims=max_dims,
                                             min_side=min_side, max_side=4).map(
        lambda b: b.input_shapes)


def one_dim(ndim: int):
    """A dim of an ndim-dimensional tensor, negative ones included (a 0-d tensor has dims 0 and
    -1, as in torch)."""
    n = max(ndim, 1)
    return st.integers(-n, n - 1)


def some_dims(ndim: int, min_size=1):
    n = max(ndim, 1)
    return st.lists(st.integers(-n, n - 1), min_size=min_size, max_size=n,
                    unique_by=lambda d: d % n).map(tuple)


@st.composite
def broadcast_into(draw, shape):
    """A shape that broadcasts to ``shape`` (leading dims dropped, some lengths 1)."""
    drop = draw(st.integers(0, len(shape)))
    return tuple(1 if draw(st.booleans()) else n for n in shape[drop:])


def unary(domain="real", shape_strategy=None):
    return (some_empty() if shape_strategy is None else shape_strategy).map(lambda s: case(In(s, domain)))


@st.composite
def binary(draw, left="real", right="real", min_side=1):
    a, b = draw(broadcast_pair(min_side=min_side))
    return case(In(a, left), In(b, right))


@st.composite
def with_number(draw, domain="real", numbers=NUMBERS):
    return case(In(draw(some_empty()), domain), number=draw(numbers))


@st.composite
def into_pair(draw, right="real"):
    """(x, y) with y broadcastable into x's shape: in-place ops write the result into x."""
    shape = draw(shapes())
    return case(In(shape), In(draw(broadcast_into(shape)), right))


# ---- arithmetic, pow, matmul ---------------------------------------------------------------------
op("add", binary(min_side=0), lambda T, F, a, x, y: x + y)
op("sub", binary(min_side=0), lambda T, F, a, x, y: x - y)
op("mul", binary(min_side=0), lambda T, F, a, x, y: x * y)
op("div", binary(right="away"), lambda T, F, a, x, y: x / y)
op("add_alpha", binary(), lambda T, F, a, x, y: (x.add(y, alpha=2.5), x.sub(y, alpha=-0.5)))
op("method_spellings", binary(right="away"),
   lambda T, F, a, x, y: (x.mul(y), x.div(y), x.multiply(y), x.divide(y), x.true_divide(y),
                          x.subtract(y), x.negative(), x.neg(), x.square()))
op("add_number", with_number(), lambda T, F, a, x: (x + a.number, a.number + x))
op("sub_number", with_number(), lambda T, F, a, x: (x - a.number, a.number - x))
op("mul_number", with_number(), lambda T, F, a, x: (x * a.number, a.number * x))
op("div_number", with_number(numbers=st.sampled_from([2, -3, 0.5, -1.25])),
   lambda T, F, a, x: x / a.number)
op("rdiv_number", with_number("away"), lambda T, F, a, x: a.number / x)
op("neg", unary(), lambda T, F, a, x: -x)
op("pow_integer", with_number("away", st.sampled_from([0, 1, 2, 3, -1, -2])),
   lambda T, F, a, x: (x ** a.number, x.pow(a.number)))
op("pow_fraction", with_number("pos", st.sampled_from([0.5, -1.5, 2.5, 1 / 3, -0.25])),
   lambda T, F, a, x: (x ** a.number, x.pow(a.number)))
op("pow_at_zero", with_number("zero", st.sampled_from([0.5, 1, 2, 3, 2.5, 0, -1, 1.5])),
   lambda T, F, a, x: x ** a.number)  # torch: the gradient is 0, 1 or ±inf there
op("rpow", with_number(numbers=st.sampled_from([2, 0.5, 3.0, 1])),
   lambda T, F, a, x: a.number ** x)
op("pow_tensor", binary(left="pos"), lambda T, F, a, x, y: (x ** y, x.pow(y)))


@st.composite
def matmul_shapes(draw):
    """1-D and 2-D operands and batches that broadcast, as torch.matmul takes them."""
    n, k, m = draw(st.integers(1, 4)), draw(st.integers(0, 4)), draw(st.integers(1, 4))
    left_batch, right_batch = draw(broadcast_pair(max_dims=2))
    left = (k,) if draw(st.booleans()) else left_batch + (n, k)
    right = (k,) if draw(st.booleans()) else right_batch + (k, m)
    return case(In(left), In(right))


op("matmul", matmul_shapes(), lambda T, F, a, x, y: (x @ y, x.matmul(y), T.matmul(x, y)),
   examples=8)
op("mm", st.tuples(*[st.integers(1, 4)] * 3).map(lambda s: case(In(s[:2]), In(s[1:]))),
   lambda T, F, a, x, y: T.mm(x, y))
op("bmm", st.tuples(*[st.integers(1, 4)] * 4).map(lambda s: case(In(s[:3]), In(s[:1] + s[2:]))),
   lambda T, F, a, x, y: T.bmm(x, y))

EINSUMS = ["ij,jk->ik", "bij,bjk->bik", "ij->ji", "i,i->", "ij,j->i", "bi,bi->b", "ijk->k",
           "ij,kj->ik", "i,j->ij", "ijk,ikl->jl"]


@st.composite
def einsum_case(draw):
    equation = draw(st.sampled_from(EINSUMS))
    sizes = {c: draw(st.integers(1, 3)) for c in "bijkl"}
    operands = equation.split("->")[0].split(",")
    return case(*[In(tuple(sizes[c] for c in o)) for o in operands], equation=equation)


op("einsum", einsum_case(), lambda T, F, a, *xs: T.einsum(a.equation, *xs), examples=6)

# ---- comparisons, logic, where -------------------------------------------------------------------
COMPARISONS = {"eq": operator.eq, "ne": operator.ne, "lt": operator.lt, "le": operator.le,
               "gt": operator.gt, "ge": operator.ge}
for _name, _operator in COMPARISONS.items():
    op(_name, binary(min_side=0),
       lambda T, F, a, x, y, name=_name, compare=_operator:
       (getattr(x, name)(y), compare(x, y), compare(x, 0.5), getattr(T, name)(x, y)),
       ties=True)


def logic(T, F, a, x, y):
    p, q = x > 0, y > 0
    i = (x * 2).long()
    return (p & q, p | q, p ^ q, ~p, p.logical_not(), p.logical_and(q), p.logical_or(q),
            i & 3, i | 1, ~i, p.all(), q.any(), i.all(), x.all(), x.any())


op("logic", binary(), logic, ties=True)
op("any_all_dim", unary(shape_strategy=shapes(1)).flatmap(
    lambda c: st.tuples(one_dim(len(c[0][0].shape)), st.booleans()).map(
        lambda d: case(c[0][0], dim=d[0], keepdim=d[1]))),
   lambda T, F, a, x: ((x > 0).all(dim=a.dim, keepdim=a.keepdim),
                       (x > 0).any(dim=a.dim, keepdim=a.keepdim)), ties=True)


@st.composite
def where_case(draw):
    shapes3 = draw(hnp.mutually_broadcastable_shapes(num_shapes=3, max_dims=3, max_side=3))
    c, x, y = shapes3.input_shapes
    return case(In(c, grad=False), In(x), In(y))


op("where", where_case(),
   lambda T, F, a, c, x, y: (T.where(c > 0, x, y), x.where(c > 0, y)))
op("where_number", where_case(), lambda T, F, a, c, x, y: (T.where(c > 0, x, 2.5),
                                                           T.where(c > 0, -1.0, y)))
op("maximum", binary(min_side=0), lambda T, F, a, x, y: (T.maximum(x, y), x.maximum(y),
                                                        x.max(y)), ties=True)
op("minimum", binary(min_side=0), lambda T, F, a, x, y: (T.minimum(x, y), x.minimum(y),
                                                        x.min(y)), ties=True)

# ---- elementwise math ---------------------------------------------------------------------------
UNARY = {
    "exp": ("real", lambda x: x.exp()), "log": ("pos", lambda x: x.log()),
    "log1p": ("pos", lambda x: (x - 0.9).log1p()), "sqrt": ("pos", lambda x: x.sqrt()),
    "rsqrt": ("pos", lambda x: x.rsqrt()), "relu": ("real", lambda x: x.relu()),
    "sigmoid": ("real", lambda x: x.sigmoid()), "tanh": ("real", lambda x: x.tanh()),
    "arctan": ("real", lambda x: x.arctan()), "abs": ("real", lambda x: x.abs()),
    "sin": ("real", lambda x: x.sin()), "cos": ("real", lambda x: x.cos()),
    "sign": ("real", lambda x: x.sign()), "floor": ("real", lambda x: (x * 1.7).floor()),
    "ceil": ("real", lambda x: (x * 1.7).ceil()), "round": ("real", lambda x: (x * 1.7).round()),
    "square": ("real", lambda x: x.square()),
}
for _name, (_domain, _fn) in UNARY.items():
    op(_name, unary(_domain), lambda T, F, a, x, fn=_fn: fn(x),
       ties=_name in ("relu", "abs", "sign", "floor", "ceil", "round"))

op("round_decimals", st.tuples(some_empty(), st.integers(-1, 3)).map(
    lambda s: case(In(s[0]), decimals=s[1])),
   lambda T, F, a, x: (x * 13.7).round(decimals=a.decimals))
op("module_functions", unary("pos"),
   lambda T, F, a, x: (T.exp(x), T.log(x), T.sqrt(x), T.abs(x), T.sigmoid(x), T.tanh(x),
                       T.relu(x), T.log1p(x), T.rsqrt(x), T.sin(x), T.cos(x), T.pow(x, 1.5)))

BOUNDS = st.sampled_from([(None, 0.5), (-0.5, None), (-0.5, 0.5), (0.5, -0.5), (0, 0), (-1, 1.5)])
op("clamp", st.tuples(some_empty(), BOUNDS).map(lambda s: case(In(s[0]), low=s[1][0],
                                                                high=s[1][1])),
   lambda T, F, a, x: (x.clamp(a.low, a.high), x.clip(a.low, a.high), T.clamp(x, a.low, a.high)),
   ties=True)
op("clamp_min_max", with_number(numbers=st.sampled_from([-0.5, 0, 0.5])),
   lambda T, F, a, x: (x.clamp_min(a.number), x.clamp_max(a.number)), ties=True)


@st.composite
def clamp_tensor_case(draw):
    # (bounds that broadcast into x: where they would make the result larger than x, torch's
    # own backward fails, PyTorch 2.13)
    x = draw(some_empty())
    low, high = draw(broadcast_into(x)), draw(broadcast_into(x))
    which = draw(st.sampled_from(["both", "min", "max"]))
    inputs = [In(x)] + [In(low)] * (which != "max") + [In(high)] * (which != "min")
    return case(*inputs, which=which)


def clamp_tensor(T, F, a, x, *bounds):
    low = bounds[0] if a.which != "max" else None
    high = bounds[-1] if a.which != "min" else None
    return x.clamp(low, high)


op("clamp_tensor", clamp_tensor_case(), clamp_tensor, ties=True)

# ---- dtype conversions ---------------------------------------------------------------------------
op("cast", unary(), lambda T, F, a, x: (x.float(), x.double(), x.to(T.float32), x.to(T.float64),
                                        x.type_as(x.float()), x.half().double(),
                                        x.to(dtype=T.float32)))
op("to_integers", unary(), lambda T, F, a, x: ((x * 2.5).long(), (x * 2.5).int(),
                                               (x * 2.5).bool(), (x * 2.5).to(T.int64)))

# ---- reductions --------------------------------------------------------------------------------
@st.composite
def reduction(draw, dims=("none", "int", "tuple"), domain="real", empty=True, min_dims=0):
    shape = draw(some_empty(min_dims) if empty else shapes(min_dims))
    kind = draw(st.sampled_from(dims))
    dim = {"none": None, "int": lambda: draw(one_dim(len(shape))),
           "tuple": lambda: draw(some_dims(len(shape)))}[kind]
    return case(In(shape, domain), dim=dim() if callable(dim) else dim, keepdim=draw(st.booleans()))


def reduced_count(example) -> int:
    """How many elements each output of a reduction example sums over."""
    (x,), a = example
    if a.dim is None:
        return math.prod(x.shape)
    dims = (a.dim,) if isinstance(a.dim, int) else a.dim
    return math.prod(x.shape[d] for d in dims) if x.shape else 1


def reduce_call(method: str, **extra):
    def call(T, F, a, x):
        if a.dim is None:
            return getattr(x, method)(**extra)
        return getattr(x, method)(dim=a.dim, keepdim=a.keepdim, **extra)
    return call


op("sum", reduction(), reduce_call("sum"))
op("mean", reduction(), reduce_call("mean"))
op("prod", reduction(("none", "int")), lambda T, F, a, x: x.prod() if a.dim is None
   else x.prod(a.dim, keepdim=a.keepdim))
op("prod_with_zeros", reduction(("none", "int"), empty=False),
   lambda T, F, a, x: (x * (x > 0.3)).prod() if a.dim is None  # several zeros, or one, or none
   else (x * (x > 0.3)).prod(a.dim, keepdim=a.keepdim))
# (atol 1e-9: where the exact second derivative is 0 by cancellation, as std's over two values
# a, b, linear in |a - b|, terms of size 1/std leave rounding noise of 1e-10 in both frameworks)
for _correction in (0, 1, 2):
    _counted = reduction(empty=False).filter(lambda e, c=_correction: reduced_count(e) > c)
    op(f"var_correction{_correction}", _counted, reduce_call("var", correction=_correction),
       ties=True, tol=(1e-10, 1e-9))
    op(f"std_correction{_correction}", _counted, reduce_call("std", correction=_correction),
       ties=True, tol=(1e-10, 1e-9))
# No degrees of freedom left (N <= correction): torch gives nan or inf (and a warning).
op("var_std_without_degrees_of_freedom", st.sampled_from(
    [((), 1), ((1,), 1), ((1,), 2), ((2,), 2), ((2, 1), 2)]).map(
    lambda s: case(In(s[0]), correction=s[1])),
   lambda T, F, a, x: (x.var(correction=a.correction), x.std(correction=a.correction)))
op("var_std_of_an_empty", st.sampled_from([((0,), 0), ((0,), 1), ((0, 3), 1), ((3, 0), 2)]).map(
    lambda s: case(In(s[0]), correction=s[1])),
   lambda T, F, a, x: (x.var(correction=a.correction), x.std(correction=a.correction)))
op("var_unbiased", st.tuples(reduction(("int", "tuple"), empty=False).filter(
    lambda e: reduced_count(e) > 1), st.booleans()).map(
    lambda s: (s[0][0], SimpleNamespace(**vars(s[0][1]), unbiased=s[1]))),
   lambda T, F, a, x: (x.var(a.dim, a.unbiased, a.keepdim), x.std(a.dim, a.unbiased, a.keepdim),
                       x.var(a.unbiased), T.std(x, a.dim, a.unbiased, a.keepdim)),
   tol=(1e-10, 1e-9))
NORMS = st.sampled_from(["fro", 1, 2, 3, 0.5, math.inf, -math.inf, 0, -1])
op("norm", st.tuples(reduction(), NORMS).map(lambda s: (s[0][0], SimpleNamespace(
    **vars(s[0][1]), p=s[1]))).filter(  # (an empty one with p < 0 or ±inf: see norm_of_an_empty)
        lambda e: 0 not in e[0][0].shape or e[1].p == "fro" or 0 <= e[1].p < math.inf),
   lambda T, F, a, x: x.norm(a.p) if a.dim is None else x.norm(a.p, a.dim, a.keepdim),
   examples=6)
op("norm_of_an_empty", st.tuples(st.sampled_from([((0, 3), 0), ((3, 0), 1), ((0,), None)]),
                                 st.sampled_from([-1, -0.5, -2, math.inf, -math.inf])).map(
    lambda s: case(In(s[0][0]), dim=s[0][1], p=s[1])),
   lambda T, F, a, x: x.norm(a.p, a.dim))  # (torch: RuntimeError, no identity to start from)
# (ties away from 0: where |x| is 0 torch's second derivative is nan, see norm_at_zero)
op("norm_at_ties", st.tuples(reduction(empty=False, domain="away"), st.sampled_from(
    ["fro", 1, 2, math.inf, -math.inf, 0.5])).map(
    lambda s: (s[0][0], SimpleNamespace(**vars(s[0][1]), p=s[1]))),
   lambda T, F, a, x: x.norm(a.p) if a.dim is None else x.norm(a.p, a.dim, a.keepdim),
   ties=True)
op("norm_at_zero", st.tuples(shapes(1), st.sampled_from(["fro", 2, 0.5, 3])).map(
    lambda s: case(In(s[0], "zero"), p=s[1])), lambda T, F, a, x: x.norm(a.p))
op("logsumexp", reduction(("int", "tuple")),
   lambda T, F, a, x: (x.logsumexp(a.dim, a.keepdim), T.logsumexp(x * 300, a.dim)))
op("cumsum", reduction(("int",)), lambda T, F, a, x: (x.cumsum(a.dim), T.cumsum(x, dim=a.dim)))
op("max", unary(shape_strategy=shapes()), lambda T, F, a, x: (x.max(), T.max(x)), ties=True)
op("min", unary(shape_strategy=shapes()), lambda T, F, a, x: (x.min(), T.min(x)), ties=True)
op("max_dim", reduction(("int",), empty=False),
   lambda T, F, a, x: (x.max(a.dim, a.keepdim), T.max(x, dim=a.dim)), ties=True)
op("min_dim", reduction(("int",), empty=False),
   lambda T, F, a, x: (x.min(a.dim, keepdim=a.keepdim), T.min(x, a.dim)), ties=True)
def not_all_of_an_empty(example) -> bool:
    """(see extremes_over_all_dims_of_an_empty)"""
    (x,), a = example
    return a.dim is None or 0 not in x.shape or len(x.shape) > len(np.atleast_1d(a.dim))


op("amax", reduction().filter(not_all_of_an_empty), lambda T, F, a, x: x.amax() if a.dim is None
   else x.amax(a.dim, a.keepdim), ties=True)
op("amin", reduction().filter(not_all_of_an_empty), lambda T, F, a, x: x.amin() if a.dim is None
   else T.amin(x, a.dim, a.keepdim), ties=True)
op("argmax", reduction(("none", "int")).filter(not_all_of_an_empty),
   lambda T, F, a, x: x.argmax(a.dim, keepdim=a.keepdim), ties=True)
op("argmin", reduction(("none", "int")).filter(not_all_of_an_empty),
   lambda T, F, a, x: T.argmin(x, a.dim, keepdim=a.keepdim), ties=True)
op("extremes_over_all_dims_of_an_empty", st.tuples(
    st.sampled_from(["amax", "amin", "argmax", "argmin", "max", "min"]),
    st.sampled_from([((0,), 0), ((0,), -1)])).map(lambda s: case(In(s[1][0]), name=s[0],
                                                               dim=s[1][1])),
   lambda T, F, a, x: getattr(x, a.name)(a.dim))

# ---- movement --------------------------------------------------------------------------------------
def divisors(n: int) -> list:
    return [d for d in range(1, n + 1) if n % d == 0]


@st.composite
def new_shape(draw, size: int):
    """A shape with ``size`` elements, sometimes with one length left to -1."""
    shape, rest = [], size
    while rest > 1:
        d = draw(st.sampled_from(divisors(rest)[1:]))
        shape.append(d)
        rest //= d
    for _ in range(draw(st.integers(0, 2))):
        shape.insert(draw(st.integers(0, len(shape))), 1)
    if shape and draw(st.booleans()):
        shape[draw(st.integers(0, len(shape) - 1))] = -1
    return tuple(shape)


@st.composite
def reshape_case(draw):
    shape = draw(shapes())
    return case(In(shape), shape=draw(new_shape(math.prod(shape))),
                transposed=draw(st.booleans()))


op("reshape", reshape_case(),
   lambda T, F, a, x: (x.mT if a.transposed and x.ndim > 1 else x).reshape(a.shape))
op("reshape_varargs", reshape_case(), lambda T, F, a, x: x.reshape(*(a.shape or (1,))))
op("view", reshape_case(),  # on a transposed input torch refuses some shapes: so must we
   lambda T, F, a, x: (x.mT if a.transposed and x.ndim > 1 else x).view(a.shape))
op("view_as_reshape_as", reshape_case(), lambda T, F, a, x: (
    x.view_as(T.zeros(a.shape if -1 not in a.shape else x.shape)),
    x.reshape_as(T.zeros(a.shape if -1 not in a.shape else x.shape))))


@st.composite
def permute_case(draw):
    shape = draw(some_empty())
    dims = draw(st.permutations(range(len(shape))))
    return case(In(shape), dims=tuple(d - len(shape) * draw(st.booleans()) for d in dims))


op("permute", permute_case(), lambda T, F, a, x: (x.permute(a.dims), T.permute(x, a.dims))
   + ((x.permute(*a.dims),) if a.dims else ()))
op("reshape_permute_without_sizes", unary(shape_strategy=shapes(0, 0)),
   lambda T, F, a, x: (x.reshape(), x.permute()))
op("transpose", some_empty(1).flatmap(lambda s: st.tuples(one_dim(len(s)), one_dim(len(s))).map(
    lambda d: case(In(s), d0=d[0], d1=d[1]))),
   lambda T, F, a, x: (x.transpose(a.d0, a.d1), T.transpose(x, a.d0, a.d1),
                       x.swapaxes(a.d0, a.d1)))
op("T_t", unary(shape_strategy=some_empty(0, 2)), lambda T, F, a, x: (x.T, x.t(), T.t(x)))
op("mT", unary(shape_strategy=some_empty(2, 4)), lambda T, F, a, x: x.mT)


@st.composite
def expand_case(draw):
    shape = draw(st.lists(st.sampled_from([1, 1, 2, 3]), max_size=3).map(tuple))
    sizes = [draw(st.sampled_from([1, 3, 0, -1])) if n == 1 else draw(st.sampled_from([n, -1]))
             for n in shape]
    sizes = [draw(st.integers(0, 3)) for _ in range(draw(st.integers(0, 2)))] + sizes
    return case(In(shape), sizes=tuple(sizes))


op("expand", expand_case(),
   lambda T, F, a, x: (x.expand(a.sizes), x.expand(*a.sizes)) if a.sizes else x.expand(a.sizes))
op("expand_as", expand_case(), lambda T, F, a, x: x.expand_as(
    T.zeros(tuple(n if n != -1 else m for n, m in zip(a.sizes, (1,) * (len(a.sizes) - x.ndim)
                                                        + tuple(x.shape))))))
op("flip", some_empty(1).flatmap(lambda s: some_dims(len(s), 0).map(
    lambda d: case(In(s), dims=d))), lambda T, F, a, x: (x.flip(a.dims), T.flip(x, list(a.dims))))


@st.composite
def squeeze_case(draw):
    shape = draw(st.lists(st.sampled_from([1, 1, 2, 3]), max_size=4).map(tuple))
    kind = draw(st.sampled_from(["none", "int", "tuple"]))
    dim = None if kind == "none" else draw(one_dim(len(shape)) if kind == "int"
                                           else some_dims(len(shape)))
    return case(In(shape), dim=dim)


op("squeeze", squeeze_case(), lambda T, F, a, x: (x.squeeze() if a.dim is None
                                                  else x.squeeze(a.dim)))
op("unsqueeze", some_empty().flatmap(lambda s: st.integers(-len(s) - 1, len(s)).map(
    lambda d: case(In(s), dim=d))), lambda T, F, a, x: (x.unsqueeze(a.dim),
                                                        T.unsqueeze(x, a.dim)))
op("flatten", some_empty().flatmap(lambda s: st.tuples(one_dim(len(s)), one_dim(len(s))).map(
    lambda d: case(In(s), start=d[0], end=d[1]))),
   lambda T, F, a, x: (x.flatten(a.start, a.end), T.flatten(x, a.start, a.end), x.flatten()))


@st.composite
def unflatten_case(draw):
    shape = draw(shapes(1))
    dim = draw(one_dim(len(shape)))
    return case(In(shape), dim=dim, sizes=draw(new_shape(shape[dim])))


op("unflatten", unflatten_case(), lambda T, F, a, x: (x.unflatten(a.dim, a.sizes),
                                                      T.unflatten(x, a.dim, a.sizes)))


@st.composite
def narrow_case(draw):
    shape = draw(shapes(1))
    dim = draw(one_dim(len(shape)))
    n = shape[dim]
    start = draw(st.integers(-n, n))
    length = draw(st.integers(0, n - (start % n if start < 0 else start)))
    return case(In(shape), dim=dim, start=start, length=length)


op("narrow", narrow_case(), lambda T, F, a, x: (x.narrow(a.dim, a.start, a.length),
                                                T.narrow(x, a.dim, a.start, a.length)))


@st.composite
def roll_case(draw):
    shape = draw(some_empty(1))
    kind = draw(st.sampled_from(["none", "int", "tuple"]))
    if kind == "none":
        return case(In(shape), shifts=draw(st.integers(-5, 5)), dims=None)
    if kind == "int":
        return case(In(shape), shifts=draw(st.integers(-5, 5)), dims=draw(one_dim(len(shape))))
    dims = draw(some_dims(len(shape)))
    return case(In(shape), shifts=tuple(draw(st.integers(-5, 5)) for _ in dims), dims=dims)


op("roll", roll_case(), lambda T, F, a, x: (x.roll(a.shifts, a.dims), T.roll(x, a.shifts, a.dims)))
op("repeat", some_empty().flatmap(lambda s: st.lists(st.integers(0, 3), min_size=len(s),
                                                     max_size=len(s) + 2).map(
    lambda r: case(In(s), sizes=tuple(r)))),
   lambda T, F, a, x: (x.repeat(a.sizes), x.repeat(*a.sizes)) if a.sizes else x.repeat(a.sizes))
op("contiguous_clone", unary(shape_strategy=some_empty(2)),
   lambda T, F, a, x: (x.mT.contiguous(), x.mT.clone(), x.contiguous(), x.clone(), x.detach()))


@st.composite
def pad_case(draw):
    shape = draw(shapes(1))
    pairs = draw(st.integers(1, len(shape)))
    widths = []
    for n in shape[::-1][:pairs]:
        widths += [draw(st.integers(-n, 2)), draw(st.integers(-n, 2))]
    return case(In(shape), pad=tuple(widths), value=draw(st.sampled_from([None, 0.0, -1.5, 2])))


op("pad", pad_case(), lambda T, F, a, x: F.pad(x, a.pad) if a.value is None
   else F.pad(x, a.pad, "constant", a.value), examples=5)


# ---- indexing ------------------------------------------------------------------------------------
def as_index(T, index):
    """An index drawn with NumPy arrays for integer and boolean tensors, in T's tensors."""
    if isinstance(index, tuple):
        return tuple(as_index(T, i) for i in index)
    return T.tensor(index) if isinstance(index, np.ndarray) else index


@st.composite
def basic_index(draw, shape):
    """ints, slices (steps, out-of-range and negative bounds), None and Ellipsis."""
    parts = []
    for n in shape[:draw(st.integers(0, len(shape)))]:
        kind = draw(st.sampled_from(["int", "slice", "slice", "full", "none"]))
        if kind == "none":  # a new axis; the dim itself is left to the next part
            parts.append(None)
        elif kind == "int":
            parts.append(draw(st.integers(-n, n - 1)))
        elif kind == "full":
            parts.append(slice(None))
        else:
            bound = st.one_of(st.none(), st.integers(-n - 2, n + 2))
            parts.append(slice(draw(bound), draw(bound), draw(st.sampled_from([None, 1, 2, 3]))))
    if draw(st.booleans()):
        parts.insert(draw(st.integers(0, len(parts))), Ellipsis)
    return parts[0] if len(parts) == 1 and draw(st.booleans()) else tuple(parts)


@st.composite
def getitem_basic(draw):
    shape = draw(shapes(1))
    return case(In(shape), index=draw(basic_index(shape)))


@st.composite
def advanced_index(draw, shape, unique=False):
    """Integer arrays (negative, repeated unless ``unique``), lists, a boolean mask, with slices
    around them: torch's advanced indexing, one or two index tensors."""
    rng = np.random.default_rng(draw(SEEDS))
    kind = draw(st.sampled_from(["array", "list", "mask", "two_arrays"]))
    dim = draw(st.integers(0, len(shape) - 1))
    n = shape[dim]
    if kind == "mask":
        width = draw(st.integers(1, len(shape) - dim))
        mask = rng.random(shape[dim:dim + width]) < 0.5
        return (slice(None),) * dim + (mask,)
    if unique:
        count = draw(st.integers(0, n))
        picks = rng.permutation(n)[:count] - n * rng.integers(0, 2, count)
    else:
        picks = rng.integers(-n, n, draw(st.sampled_from([(), (3,), (2, 2), (0,)])))
    if kind == "list":  # (an empty list: see getitem_empty_list)
        return (slice(None),) * dim + (picks.reshape(-1).tolist() or [0],)
    index = [slice(None)] * dim + [picks]
    if kind == "two_arrays" and dim + 1 < len(shape) and not unique:
        # a slice between two index arrays: torch puts the indexed dims first
        gap = draw(st.booleans()) and dim + 2 < len(shape)
        other = shape[dim + 1 + gap]
        index += [slice(None)] * gap + [rng.integers(-other, other, picks.shape[-1:] or ())]
    return tuple(index)


@st.composite
def getitem_advanced(draw):
    shape = draw(shapes(1))
    return case(In(shape), index=draw(advanced_index(shape)))


op("getitem_basic", getitem_basic(), lambda T, F, a, x: x[as_index(T, a.index)], examples=8)
op("getitem_advanced", getitem_advanced(), lambda T, F, a, x: x[as_index(T, a.index)],
   examples=8)
op("getitem_empty_list", unary(shape_strategy=shapes(1)), lambda T, F, a, x: x[[]])


@st.composite
def setitem_case(draw, advanced=False):
    shape = draw(shapes(1))
    index = draw(advanced_index(shape, unique=True) if advanced else basic_index(shape))
    region = np.empty(shape)[index].shape
    if draw(st.booleans()):
        return case(In(shape), index=index, number=draw(NUMBERS))
    return case(In(shape), In(draw(broadcast_into(region))), index=index, number=None)


def setitem(T, F, a, x, value=None):
    y = x.clone()
    y[as_index(T, a.index)] = a.number if value is None else value
    return y


op("setitem_basic", setitem_case(), setitem, examples=6)
op("setitem_advanced", setitem_case(advanced=True), setitem, examples=6)


# ---- joining and splitting ----------------------------------------------------------------------
@st.composite
def cat_case(draw):
    shape = draw(shapes(1))
    dim = draw(one_dim(len(shape)))
    pieces = [shape[:dim % len(shape)] + (draw(st.integers(0, 3)),) + shape[dim % len(shape) + 1:]
              for _ in range(draw(st.integers(1, 3)))]
    return case(*[In(p) for p in pieces], dim=dim)


op("cat", cat_case(), lambda T, F, a, *xs: (T.cat(xs, a.dim), T.cat(list(xs), dim=a.dim),
                                            T.concat(xs, a.dim)))


@st.composite
def stack_case(draw):
    shape = draw(some_empty())
    return case(*[In(shape)] * draw(st.integers(1, 3)),
                dim=draw(st.integers(-len(shape) - 1, len(shape))))


op("stack", stack_case(), lambda T, F, a, *xs: T.stack(xs, a.dim))


@st.composite
def split_case(draw):
    shape = draw(shapes(1))
    dim = draw(one_dim(len(shape)))
    n = shape[dim]
    if draw(st.booleans()):
        return case(In(shape), dim=dim, size=draw(st.integers(1, 5)))
    sections, rest = [], n
    while rest:
        sections.append(draw(st.integers(0, rest)) if len(sections) < 3 else rest)
        rest -= sections[-1]
    return case(In(shape), dim=dim, size=sections + [0] * draw(st.integers(0, 1)))


op("split", split_case(), lambda T, F, a, x: (x.split(a.size, a.dim), T.split(x, a.size, a.dim)))
op("chunk", some_empty(1).flatmap(lambda s: st.tuples(st.integers(1, 5), one_dim(len(s))).map(
    lambda c: case(In(s), chunks=c[0], dim=c[1]))),
   lambda T, F, a, x: (x.chunk(a.chunks, a.dim), T.chunk(x, a.chunks, a.dim)))


# ---- gather and scatter --------------------------------------------------------------------------
@st.composite
def gather_case(draw, gather=True):
    shape = draw(shapes(1))
    dim = draw(one_dim(len(shape)))
    # gather: index no longer than input along every other dim; take_along_dim: the same length
    # or 1 there (they broadcast)
    other = (lambda n: st.integers(0, n)) if gather else (lambda n: st.sampled_from([1, n]))
    index_shape = tuple(draw(st.integers(0, 4)) if d == dim % len(shape) else draw(other(n))
                        for d, n in enumerate(shape))
    index = np.random.default_rng(draw(SEEDS)).integers(0, shape[dim], index_shape)
    return case(In(shape), dim=dim, index=index)


op("gather", gather_case(), lambda T, F, a, x: (x.gather(a.dim, T.tensor(a.index)),
                                                T.gather(x, a.dim, T.tensor(a.index))))
op("take_along_dim", gather_case(gather=False), lambda T, F, a, x: x.take_along_dim(T.tensor(a.index), a.dim))
op("take_along_dim_flat", unary(shape_strategy=shapes()).flatmap(lambda c: st.tuples(
    SEEDS, st.sampled_from([(), (3,), (2, 2)])).map(lambda s: case(
        c[0][0], index=np.random.default_rng(s[0]).integers(
            0, math.prod(c[0][0].shape), s[1])))),
   lambda T, F, a, x: T.take_along_dim(x, T.tensor(a.index)))


@st.composite
def scatter_case(draw, unique=True):
    """input, index, src as torch.scatter takes them; with ``unique`` no two entries of index
    write to the same place (torch leaves which of them wins unspecified)."""
    shape = draw(shapes(1))
    dim = draw(one_dim(len(shape)))
    axis = dim % len(shape)
    index_shape = tuple(draw(st.integers(0, n)) for n in shape)
    rng = np.random.default_rng(draw(SEEDS))
    if unique:
        keys = rng.random(index_shape[:axis] + (shape[axis],) + index_shape[axis + 1:])
        index = np.argsort(keys, axis=axis).take(range(index_shape[axis]), axis=axis)
    else:
        index = rng.integers(0, shape[axis], index_shape)
    # (src as large as index: torch's own backward fails for a larger src, PyTorch 2.13)
    return case(In(shape), In(index_shape), dim=dim, index=index, value=draw(NUMBERS))


op("scatter", scatter_case(), lambda T, F, a, x, src: (
    x.scatter(a.dim, T.tensor(a.index), src), T.scatter(x, a.dim, T.tensor(a.index), src),
    x.scatter(a.dim, T.tensor(a.index), value=a.value)))
op("scatter_add", scatter_case(unique=False), lambda T, F, a, x, src: (
    x.scatter_add(a.dim, T.tensor(a.index), src), T.scatter_add(x, a.dim, T.tensor(a.index), src)))


@st.composite
def index_select_case(draw):
    shape = draw(shapes(1))
    dim = draw(one_dim(len(shape)))
    rng = np.random.default_rng(draw(SEEDS))
    return case(In(shape), dim=dim,
                index=rng.integers(0, shape[dim], draw(st.sampled_from([(), (0,), (1,), (4,)]))))


op("index_select", index_select_case(), lambda T, F, a, x: (
    x.index_select(a.dim, T.tensor(a.index)), T.index_select(x, a.dim, T.tensor(a.index))))


@st.composite
def masked_fill_case(draw):
    shape = draw(some_empty())
    mask = np.random.default_rng(draw(SEEDS)).random(draw(broadcast_into(shape))) < 0.5
    if draw(st.booleans()):  # a 0-d tensor value: it receives the gradient of what it filled
        return case(In(shape), In(()), mask=mask)
    return case(In(shape), mask=mask, value=draw(NUMBERS))


op("masked_fill", masked_fill_case(), lambda T, F, a, x, v=None: (
    x.masked_fill(T.tensor(a.mask), a.value if v is None else v),
    T.masked_fill(x, T.tensor(a.mask), a.value if v is None else v)))


# ---- in place, each on a clone (a leaf that requires grad refuses in-place writes) -----------------
def iadd(x, y):
    x += y
    return x


def isub(x, y):
    x -= y
    return x


def imul(x, y):
    x *= y
    return x


def idiv(x, y):
    x /= y
    return x


INPLACE_BINARY = {
    "add_": ("real", lambda x, y: x.add_(y)), "add_alpha_": ("real", lambda x, y: x.add_(y, alpha=-2)),
    "sub_": ("real", lambda x, y: x.sub_(y)), "sub_alpha_": ("real", lambda x, y: x.sub_(y, alpha=3)),
    "mul_": ("real", lambda x, y: x.mul_(y)), "div_": ("away", lambda x, y: x.div_(y)),
    "copy_": ("real", lambda x, y: x.copy_(y)), "fill_tensor_": ("real", lambda x, y: x.fill_(y.sum())),
    "iadd": ("real", iadd), "isub": ("real", isub), "imul": ("real", imul), "idiv": ("away", idiv),
}

for _name, (_domain, _fn) in INPLACE_BINARY.items():
    op(_name, into_pair(_domain), lambda T, F, a, x, y, fn=_fn: fn(x.clone(), y))

INPLACE_UNARY = {
    "neg_": ("real", lambda x: x.neg_()), "exp_": ("real", lambda x: x.exp_()),
    "log_": ("pos", lambda x: x.log_()), "sqrt_": ("pos", lambda x: x.sqrt_()),
    "relu_": ("real", lambda x: x.relu_()), "sigmoid_": ("real", lambda x: x.sigmoid_()),
    "tanh_": ("real", lambda x: x.tanh_()), "abs_": ("real", lambda x: x.abs_()),
    "pow_": ("pos", lambda x: x.pow_(2.5)), "clamp_": ("real", lambda x: x.clamp_(-0.5, 0.7)),
    "clamp_min_": ("real", lambda x: x.clamp_min_(0.2)), "fill_": ("real", lambda x: x.fill_(1.5)),
    "zero_": ("real", lambda x: x.zero_()), "iadd_number": ("real", lambda x: iadd(x, 2)),
    "imul_number": ("real", lambda x: imul(x, -1.5)),
}
for _name, (_domain, _fn) in INPLACE_UNARY.items():
    op(_name, unary(_domain), lambda T, F, a, x, fn=_fn: fn(x.clone()),
       ties=_name in ("relu_", "abs_", "clamp_", "clamp_min_"))
op("masked_fill_", masked_fill_case(), lambda T, F, a, x, v=None: x.clone().masked_fill_(
    T.tensor(a.mask), a.value if v is None else v))
op("scatter_", scatter_case(), lambda T, F, a, x, src: x.clone().scatter_(
    a.dim, T.tensor(a.index), src))
op("scatter_add_", scatter_case(unique=False), lambda T, F, a, x, src: x.clone().scatter_add_(
    a.dim, T.tensor(a.index), src))


# Our Tensor has conv2d, max_pool2d and avg_pool2d methods as well (torch's has not): they are
# the functions, given the tensor first.
METHODS = SimpleNamespace(**{name: getattr(tinygrad_pool.Tensor, name)
                             for name in ("conv2d", "max_pool2d", "avg_pool2d")})


# ---- convolution and pooling ------------------------------------------------------------------
PAIRS = st.one_of(st.integers(1, 2), st.tuples(st.integers(1, 2), st.integers(1, 2)))


def pair_of(value) -> tuple:
    return value if isinstance(value, tuple) else (value, value)


@st.composite
def conv_case(draw):
    groups = draw(st.integers(1, 2))
    c_in, c_out = groups * draw(st.integers(1, 2)), groups * draw(st.integers(1, 2))
    kernel = (draw(st.integers(1, 3)), draw(st.integers(1, 3)))
    stride, dilation = draw(PAIRS), draw(PAIRS)
    padding = draw(st.one_of(st.integers(0, 2), st.tuples(st.integers(0, 2), st.integers(0, 2)),
                             st.sampled_from(["valid", "same"])))
    pads = (0, 0) if padding == "valid" else (
        tuple(d * (k - 1) // 2 for d, k in zip(pair_of(dilation), kernel))
        if padding == "same" else pair_of(padding))
    image = tuple(max(1, d * (k - 1) + 1 - 2 * p) + draw(st.integers(0, 2))
                  for d, k, p in zip(pair_of(dilation), kernel, pads))
    batch = (draw(st.integers(1, 2)),) if draw(st.booleans()) else ()
    inputs = [In(batch + (c_in,) + image), In((c_out, c_in // groups) + kernel)]
    inputs += [In((c_out,))] * draw(st.booleans())
    return case(*inputs, stride=stride, padding=padding, dilation=dilation, groups=groups)


def conv2d(T, F, a, x, w, b=None):
    return F.conv2d(x, w, b, a.stride, a.padding, a.dilation, a.groups)


op("conv2d", conv_case(), conv2d, examples=8)
op("Tensor.conv2d", conv_case(), lambda T, F, a, *xs: conv2d(T, METHODS, a, *xs),
   reference=conv2d)


@st.composite
def blocks_case(draw):
    """unfold/fold geometry: kernel, dilation, padding, stride and an image they fit."""
    kernel, dilation, stride = draw(PAIRS), draw(PAIRS), draw(PAIRS)
    padding = draw(st.one_of(st.integers(0, 1), st.tuples(st.integers(0, 1), st.integers(0, 1))))
    image = tuple(max(1, d * (k - 1) + 1 - 2 * p) + draw(st.integers(0, 3)) for d, k, p in zip(
        pair_of(dilation), pair_of(kernel), pair_of(padding)))
    blocks = math.prod((n + 2 * p - d * (k - 1) - 1) // s + 1 for n, k, d, p, s in zip(
        image, pair_of(kernel), pair_of(dilation), pair_of(padding), pair_of(stride)))
    channels = draw(st.integers(1, 2))
    batch = (draw(st.integers(1, 2)),) if draw(st.booleans()) else ()
    return dict(kernel_size=kernel, dilation=dilation, padding=padding, stride=stride), \
        image, blocks, channels, batch


op("unfold", blocks_case().map(lambda g: case(In(g[4] + (g[3],) + g[1]), geometry=g[0])),
   lambda T, F, a, x: F.unfold(x, **a.geometry), examples=5)
op("fold", blocks_case().map(lambda g: case(
    In(g[4] + (g[3] * math.prod(pair_of(g[0]["kernel_size"])), g[2])), geometry=g[0],
    output_size=g[1])),
   lambda T, F, a, x: F.fold(x, a.output_size, **a.geometry), examples=5)


@st.composite
def pool_case(draw, dilation=True):
    """Windows that overlap (stride < kernel), tile, or skip pixels; padding up to half the
    kernel (torch's limit), dilation, ceil_mode."""
    kernel = (draw(st.integers(1, 3)), draw(st.integers(1, 3)))
    stride = draw(st.one_of(st.none(), PAIRS, st.just(3)))
    padding = (draw(st.integers(0, kernel[0] // 2)), draw(st.integers(0, kernel[1] // 2)))
    dilations = draw(PAIRS) if dilation else 1
    image = tuple(max(1, d * (k - 1) + 1 - 2 * p) + draw(st.integers(0, 3)) for d, k, p in zip(
        pair_of(dilations), kernel, padding))
    batch = (draw(st.integers(1, 2)),) if draw(st.booleans()) else ()
    shape = batch + (draw(st.integers(1, 2)),) + image
    return case(In(shape), kernel_size=kernel, stride=stride, padding=padding,
                dilation=dilations, ceil_mode=draw(st.booleans()))


def windows_see_input(example) -> bool:
    """Every window of a max pool reaches a pixel of the input. With dilation one can see only
    padding: PyTorch then returns -inf and an index outside the input, we refuse (a documented
    difference, docs/pooling.md)."""
    (x,), a = example
    stride = pair_of(a.stride or a.kernel_size)
    for n, k, s, p, d in zip(x.shape[-2:], a.kernel_size, stride, a.padding, pair_of(a.dilation)):
        span = n + 2 * p - d * (k - 1) - 1
        count = (span + (s - 1) * a.ceil_mode) // s + 1
        if a.ceil_mode and (count - 1) * s >= n + p:
            count -= 1  # (torch drops a last window that starts in the padding)
        if any(not any(0 <= j * s - p + t * d < n for t in range(k)) for j in range(count)):
            return False
    return True


def max_pool2d(T, F, a, x):
    return F.max_pool2d(x, a.kernel_size, a.stride, a.padding, a.dilation, a.ceil_mode,
                        a.return_indices)


def avg_pool2d(T, F, a, x):
    return F.avg_pool2d(x, a.kernel_size, a.stride, a.padding, a.ceil_mode, a.count_include_pad,
                        a.divisor)


MAX_POOLS = pool_case().filter(windows_see_input).flatmap(lambda c: st.booleans().map(
    lambda r: (c[0], SimpleNamespace(**vars(c[1]), return_indices=r))))
AVG_POOLS = pool_case(dilation=False).flatmap(lambda c: st.tuples(
    st.booleans(), st.sampled_from([None, 1, 2, 5])).map(
    lambda o: (c[0], SimpleNamespace(**vars(c[1]), count_include_pad=o[0], divisor=o[1]))))
op("max_pool2d", MAX_POOLS, max_pool2d, ties=True, examples=10)
op("avg_pool2d", AVG_POOLS, avg_pool2d, examples=10)
op("Tensor.max_pool2d", MAX_POOLS, lambda T, F, a, x: max_pool2d(T, METHODS, a, x),
   reference=max_pool2d, ties=True)
op("Tensor.avg_pool2d", AVG_POOLS, lambda T, F, a, x: avg_pool2d(T, METHODS, a, x),
   reference=avg_pool2d)


@st.composite
def adaptive_case(draw):
    image = (draw(st.integers(1, 6)), draw(st.integers(1, 6)))
    size = tuple(draw(st.one_of(st.integers(1, n + 1), st.none())) for n in image)
    if size[0] == size[1] is not None and draw(st.booleans()):
        size = size[0]
    batch = (draw(st.integers(1, 2)),) if draw(st.booleans()) else ()
    return case(In(batch + (draw(st.integers(1, 2)),) + image), size=size,
                return_indices=draw(st.booleans()))


op("adaptive_avg_pool2d", adaptive_case(),
   lambda T, F, a, x: F.adaptive_avg_pool2d(x, a.size), examples=6)
op("adaptive_max_pool2d", adaptive_case(),
   lambda T, F, a, x: F.adaptive_max_pool2d(x, a.size, a.return_indices), ties=True, examples=6)


@st.composite
def unpool_case(draw):
    """max_unpool2d of an input shaped like a pool's output, by the indices each framework's own
    max_pool2d gives on a random image. Windows do not overlap: where two windows share their
    maximum, torch leaves which value max_unpool2d writes there unspecified."""
    kernel = (draw(st.integers(1, 3)), draw(st.integers(1, 3)))
    padding = (draw(st.integers(0, kernel[0] // 2)), draw(st.integers(0, kernel[1] // 2)))
    image = tuple(max(1, k - 2 * p) + draw(st.integers(0, 3)) for k, p in zip(kernel, padding))
    source_shape = (draw(st.integers(1, 2)), 2) + image
    pooled = tuple((n + 2 * p - k) // k + 1 for n, k, p in zip(image, kernel, padding))
    source = np.random.default_rng(draw(SEEDS)).standard_normal(source_shape)
    # (None: the default size, which can be empty: torch then returns an empty tensor whose
    # backward fails, ours refuses at once; not compared)
    default_empty = any((m - 1) * k - 2 * p + k < 1 for m, k, p in zip(pooled, kernel, padding))
    output_size = draw(st.sampled_from([image, source_shape] + [None] * (not default_empty)))
    return case(In(source_shape[:2] + pooled), kernel_size=kernel, padding=padding,
                source=source, output_size=output_size)


def max_unpool2d(T, F, a, x):
    _, indices = F.max_pool2d(T.tensor(a.source), a.kernel_size, padding=a.padding,
                              return_indices=True)
    return F.max_unpool2d(x, indices, a.kernel_size, padding=a.padding,
                          output_size=a.output_size)


op("max_unpool2d", unpool_case(), max_unpool2d, examples=5)


# ---- nn.functional: linear, activations, softmax -------------------------------------------------
@st.composite
def linear_case(draw):
    n_in, n_out = draw(st.integers(0, 4)), draw(st.integers(1, 4))
    batch = draw(shapes(0, 2))
    inputs = [In(batch + (n_in,)), In((n_out, n_in))] + [In((n_out,))] * draw(st.booleans())
    return case(*inputs)


op("linear", linear_case(), lambda T, F, a, x, w, b=None: F.linear(x, w, b))
op("F_relu_sigmoid_tanh", unary(), lambda T, F, a, x: (F.relu(x), F.sigmoid(x), F.tanh(x)),
   ties=True)
op("leaky_relu", with_number(numbers=st.sampled_from([0.01, 0.2, 0.0, -0.5, 1.5])),
   lambda T, F, a, x: F.leaky_relu(x, a.number), ties=True)
op("elu", with_number(numbers=st.sampled_from([1.0, 0.5, 2.0, 0.0])),
   lambda T, F, a, x: F.elu(x, a.number), ties=True)
op("relu_leaky_relu_dropout_in_place", unary(), lambda T, F, a, x: (
    F.relu(x.clone(), inplace=True), F.leaky_relu(x.clone(), 0.2, inplace=True),
    F.dropout(x.clone(), 0.0, inplace=True), F.dropout(x.clone(), 0.5, False, True)), ties=True)
op("elu_in_place", unary(), lambda T, F, a, x: F.elu(x.clone(), 0.5, inplace=True), ties=True)
op("silu_in_place", unary(), lambda T, F, a, x: F.silu(x.clone(), inplace=True))
# (float32: torch's own tanh-GELU gradient is 1.6e-6 from the exact one near 3x = -4.8, where
# 1 + tanh cancels; ours was within 1e-10 there)
op("gelu", unary(), lambda T, F, a, x: (F.gelu(x), F.gelu(x * 3, approximate="tanh")), ties=True,
   tol32=(1e-5, 1e-5))
op("silu", unary(), lambda T, F, a, x: F.silu(x), ties=True)
# (logits × 50 check that large ones do not overflow; they also multiply float32 rounding in
# the gradient by 50: over 3000 draws both frameworks came up to 2e-5 (of the largest element)
# from the float64 gradient, hence the float32 atol of 5e-5)
op("softmax", some_empty().flatmap(lambda s: one_dim(len(s)).map(lambda d: case(In(s), dim=d))),
   lambda T, F, a, x: (F.softmax(x, a.dim), x.softmax(a.dim), T.softmax(x * 50, a.dim)),
   tol32=(1e-5, 5e-5))
op("log_softmax", some_empty().flatmap(lambda s: one_dim(len(s)).map(
    lambda d: case(In(s), dim=d))),
   lambda T, F, a, x: (F.log_softmax(x, a.dim), x.log_softmax(a.dim),
                       T.log_softmax(x * 50, a.dim)), tol32=(1e-5, 5e-5))


# ---- losses ------------------------------------------------------------------------------------
REDUCTION = st.sampled_from(["mean", "sum", "none"])


@st.composite
def regression_case(draw, **options):
    shape = draw(some_empty())
    target = shape if draw(st.integers(0, 3)) else draw(broadcast_into(shape))  # torch warns
    return case(In(shape), In(target, grad=draw(st.booleans())), reduction=draw(REDUCTION),
                **{k: draw(v) for k, v in options.items()})


op("mse_loss", regression_case(), lambda T, F, a, x, t: F.mse_loss(x, t, reduction=a.reduction))
op("l1_loss", regression_case(), lambda T, F, a, x, t: F.l1_loss(x, t, reduction=a.reduction),
   ties=True)
# (beta and delta off the grid of tied values: |input - target| = beta is its own entry below)
op("smooth_l1_loss", regression_case(beta=st.sampled_from([1.25, 0.75, 0.0, 2.25])),
   lambda T, F, a, x, t: F.smooth_l1_loss(x, t, reduction=a.reduction, beta=a.beta), ties=True)
op("huber_loss", regression_case(delta=st.sampled_from([1.25, 0.75, 2.25])),
   lambda T, F, a, x, t: F.huber_loss(x, t, reduction=a.reduction, delta=a.delta), ties=True)
op("smooth_l1_huber_at_beta", st.tuples(some_empty().filter(lambda s: math.prod(s)), REDUCTION,
                                        st.sampled_from([0.5, 1.0, 2.0])).map(
    lambda s: case(In(s[0], "away"), reduction=s[1], beta=s[2])),
   lambda T, F, a, x: (  # every |input - target| is exactly beta: the quadratic part's edge,
       # where torch's slope is ±1 (either branch's) and its second derivative 0 (the linear's)
       F.smooth_l1_loss(x, x.detach() - a.beta * x.detach().sign(), reduction=a.reduction,
                        beta=a.beta),
       F.huber_loss(x, x.detach() + a.beta * x.detach().sign(), reduction=a.reduction,
                    delta=a.beta)))
op("sum_of_squares", unary(), lambda T, F, a, x: F.sum_of_squares(x),
   reference=lambda T, F, a, x: (x * x).sum())  # ours alone: torch spells it (x * x).sum()


@st.composite
def classes_case(draw, soft=False):
    """Logits (or log-probabilities) (C,), (N, C) or (N, C, d), class indices with some equal to
    ignore_index, or class probabilities (``soft``), optional class weights."""
    classes = draw(st.integers(1, 4))
    batch = draw(st.sampled_from([(), (3,), (2, 3)]))
    shape = batch[:1] + (classes,) + batch[1:]
    rng = np.random.default_rng(draw(SEEDS))
    target_shape = batch[:1] + batch[1:]
    ignore_index = draw(st.sampled_from([-100, 0, classes - 1]))
    inputs = [In(shape)]
    if soft:
        inputs.append(In(shape, "prob", grad=draw(st.booleans())))
        ignore_index = -100
    labels = rng.integers(0, classes, target_shape)
    weighted = draw(st.booleans())
    inputs += [In((classes,), "pos", grad=False)] * weighted
    return case(*inputs, labels=labels, ignore_index=ignore_index, reduction=draw(REDUCTION),
                smoothing=draw(st.sampled_from([0.0, 0.1, 0.5])), weighted=weighted, soft=soft)


def cross_entropy(T, F, a, x, *rest):
    target = rest[0] if a.soft else T.tensor(a.labels)
    weight = rest[-1] if a.weighted else None
    return F.cross_entropy(x, target, weight, ignore_index=a.ignore_index, reduction=a.reduction,
                           label_smoothing=a.smoothing)


op("cross_entropy", classes_case(), cross_entropy, examples=10)
op("cross_entropy_soft", classes_case(soft=True), cross_entropy, examples=6)
op("nll_loss", classes_case(), lambda T, F, a, x, *w: F.nll_loss(
    x, T.tensor(a.labels), w[0] if w else None, ignore_index=a.ignore_index,
    reduction=a.reduction), examples=6)


@st.composite
def binary_loss_case(draw, logits=False):
    shape = draw(some_empty())
    inputs = [In(shape, "real" if logits else "prob"), In(shape, "prob", draw(st.booleans()))]
    weighted = draw(st.booleans())
    inputs += [In(draw(broadcast_into(shape)), "pos", grad=False)] * weighted
    positive = logits and draw(st.booleans())
    inputs += [In(draw(broadcast_into(shape)), "pos", grad=False)] * positive
    return case(*inputs, weighted=weighted, positive=positive, reduction=draw(REDUCTION))


def binary_cross_entropy(T, F, a, x, t, *rest):
    return F.binary_cross_entropy(x, t, rest[0] if a.weighted else None, reduction=a.reduction)


def binary_cross_entropy_with_logits(T, F, a, x, t, *rest):
    return F.binary_cross_entropy_with_logits(
        x, t, rest[0] if a.weighted else None, reduction=a.reduction,
        pos_weight=rest[-1] if a.positive else None)


# (torch differentiates its backward (p - t) / (p (1 - p)), ours -t/p + (1 - t)/(1 - p): equal
# in exact arithmetic, the second derivatives differ by rounding, 1.5e-10 relative seen)
op("binary_cross_entropy", binary_loss_case(), binary_cross_entropy, examples=6, tol=(1e-8, 1e-12))
op("binary_cross_entropy_with_logits", binary_loss_case(logits=True),
   binary_cross_entropy_with_logits, examples=6)


# ---- normalization, embedding, one_hot, dropout ----------------------------------------------------
@st.composite
def layer_norm_case(draw):
    shape = draw(shapes(1))
    normalized = shape[draw(st.integers(0, len(shape) - 1)):]
    affine = draw(st.sampled_from(["none", "weight", "both"]))
    inputs = [In(shape)] + [In(normalized)] * (affine != "none") + [In(normalized)] * (
        affine == "both")
    return case(*inputs, normalized=normalized, eps=draw(st.sampled_from([1e-5, 1e-2])))


# float32: x̂ = (x - mean) / √(var + eps) multiplies the rounding error of x - mean by up to
# 1/√eps ≈ 316; torch's own float32 result is that far from the exact one (we have seen
# x̂ = 3e-6 from torch where it is exactly 0), so the float32 tolerances are 100 times looser.
NORMALIZATION_TOL32 = (1e-4, 1e-4)
op("layer_norm", layer_norm_case(), lambda T, F, a, x, *wb: F.layer_norm(
    x, a.normalized, *wb, eps=a.eps), ties=True, examples=6, tol32=NORMALIZATION_TOL32)


@st.composite
def batch_norm_case(draw):
    channels = draw(st.integers(1, 3))
    shape = (draw(st.integers(1, 3)), channels) + draw(shapes(0, 2, max_side=3))
    training = draw(st.booleans())
    running = not training or draw(st.booleans())
    inputs = [In(shape)] + [In((channels,), grad=False), In((channels,), "pos", grad=False)] * running
    affine = draw(st.sampled_from(["none", "weight", "both"]))
    inputs += [In((channels,))] * (affine != "none") + [In((channels,))] * (affine == "both")
    return case(*inputs, training=training, running=running, affine=affine,
                momentum=draw(st.sampled_from([0.1, 0.5, 1.0])),
                eps=draw(st.sampled_from([1e-5, 1e-2])))


def batch_norm(T, F, a, x, *rest):
    """The output, and the running statistics after the call (training updates them)."""
    mean, var = rest[:2] if a.running else (None, None)
    affine = rest[2:] if a.running else rest
    weight = affine[0] if a.affine != "none" else None
    bias = affine[1] if a.affine == "both" else None
    out = F.batch_norm(x, mean, var, weight, bias, a.training, a.momentum, a.eps)
    return (out, mean, var) if a.running else out


op("batch_norm", batch_norm_case(), batch_norm, ties=True, examples=8, tol32=NORMALIZATION_TOL32)


@st.composite
def embedding_case(draw):
    rows, width = draw(st.integers(1, 5)), draw(st.integers(1, 4))
    rng = np.random.default_rng(draw(SEEDS))
    indices = rng.integers(0, rows, draw(st.sampled_from([(), (3,), (2, 3), (0,)])))
    return case(In((rows, width)), indices=indices,
                padding_idx=draw(st.one_of(st.none(), st.integers(-rows, rows - 1))),
                scale=draw(st.booleans()),
                max_norm=draw(st.sampled_from([None, None, 0.5, 1.5])),
                norm_type=draw(st.sampled_from([2.0, 1.0, 3.0])))


def embedding(T, F, a, weight):
    """The rows looked up, and the weight after the call (max_norm renormalizes it in place)."""
    out = F.embedding(T.tensor(a.indices), weight, a.padding_idx, a.max_norm, a.norm_type,
                      a.scale)
    return out, weight.detach().clone()


op("embedding", embedding_case(), embedding, examples=6)
op("one_hot", st.tuples(SEEDS, shapes(0, 2), st.integers(1, 4), st.sampled_from([-1, 0, 2])).map(
    lambda s: case(labels=np.random.default_rng(s[0]).integers(0, s[2], s[1]),
                   classes=s[2] + s[3] if s[3] >= 0 else -1)),
   lambda T, F, a: F.one_hot(T.tensor(a.labels), a.classes))
# dropout is random: only the settings where it is not (p=0, p=1 and evaluation) are compared.
DROPOUT = st.sampled_from([(0.0, True), (1.0, True), (0.5, False), (1.0, False)])
op("dropout", st.tuples(some_empty(), DROPOUT).map(lambda s: case(In(s[0]), p=s[1][0],
                                                                  training=s[1][1])),
   lambda T, F, a, x: F.dropout(x, a.p, a.training))
op("dropout2d", st.tuples(some_empty(3, 4), DROPOUT).map(lambda s: case(In(s[0]), p=s[1][0],
                                                                        training=s[1][1])),
   lambda T, F, a, x: F.dropout2d(x, a.p, a.training))


# ---- making tensors (no gradient: values, shapes and dtypes) ----------------------------------------
RANGE_ENDS = st.sampled_from([0, 1, 3, -2, 2.5, -0.75, 7])


@st.composite
def range_case(draw):
    start, end = draw(RANGE_ENDS), draw(RANGE_ENDS)
    step = draw(st.sampled_from([1, 2, -1, 0.5, -0.75, 3]))
    if (end - start) * step < 0:
        start, end = end, start
    return case(start=start, end=end, step=step, steps=draw(st.integers(0, 5)),
                n=draw(st.integers(0, 4)), m=draw(st.one_of(st.none(), st.integers(0, 4))),
                shape=draw(shapes(0, 3, min_side=0)), value=draw(NUMBERS.map(lambda v: v)),
                dtype=draw(st.sampled_from([None, "float64", "int64", "int32", "float32"])))


def creation(T, F, a):
    dtype = None if a.dtype is None else getattr(T, a.dtype)
    like = T.ones(a.shape, dtype=T.float64)
    return (T.arange(a.start, a.end, a.step), T.arange(a.end), T.arange(a.start, a.end),
            T.arange(a.start, a.end, a.step, dtype=T.float64),
            T.linspace(a.start, a.end, a.steps), T.linspace(a.start, a.end, a.steps, dtype=dtype),
            T.eye(a.n) if a.m is None else T.eye(a.n, a.m),
            T.zeros(a.shape), T.ones(*a.shape, dtype=dtype), T.full(a.shape, a.value),
            T.full(a.shape, a.value, dtype=dtype), T.zeros_like(like), T.ones_like(like, dtype=dtype),
            T.full_like(like, a.value), T.tensor(a.value), T.tensor([a.value, 1]),
            T.tensor([[a.value], [True]]), T.as_tensor(np.full(a.shape, a.value)))


op("creation", range_case(), creation, examples=6)
# Random ones (rand, randn, randint, randperm, the *_like, uniform_, normal_, dropout with
# 0 < p < 1 in training) draw from NumPy's generator, not torch's: nothing to compare them with.


# ---- more elementwise math ------------------------------------------------------------------------
# (domains: asin, acos, atanh in (-1, 1); acosh above 1; log2, log10 positive; tan kept inside
# (-π/2, π/2), where it has no pole)
MATH = {
    "tan": ("unit", lambda T, x: (x.tan(), T.tan(x * 1.4))),
    "asin": ("unit", lambda T, x: (x.asin(), T.arcsin(x))),
    "acos": ("unit", lambda T, x: (x.acos(), T.arccos(x))),
    "atan": ("real", lambda T, x: (x.atan(), T.atan(x * 3))),
    "sinh": ("real", lambda T, x: (x.sinh(), T.sinh(x))),
    "cosh": ("real", lambda T, x: (x.cosh(), T.cosh(x))),
    "asinh": ("real", lambda T, x: (x.asinh(), T.asinh(x * 3))),
    "acosh": ("above1", lambda T, x: (x.acosh(), T.acosh(x))),
    "atanh": ("unit", lambda T, x: (x.atanh(), T.atanh(x))),
    "erf": ("real", lambda T, x: (x.erf(), T.erf(x * 2))),
    "erfc": ("real", lambda T, x: (x.erfc(), T.erfc(x * 2))),
    "exp2": ("real", lambda T, x: (x.exp2(), T.exp2(x * 3))),
    "log2": ("pos", lambda T, x: (x.log2(), T.log2(x))),
    "log10": ("pos", lambda T, x: (x.log10(), T.log10(x))),
    "expm1": ("real", lambda T, x: (x.expm1(), T.expm1(x * 1e-3))),
    "trunc": ("real", lambda T, x: (x.mul(1.7).trunc(), T.trunc(x * 1.7), x.fix())),
    "frac": ("real", lambda T, x: (x.mul(1.7).frac(), T.frac(x * 1.7))),
    "reciprocal": ("away", lambda T, x: (x.reciprocal(), T.reciprocal(x))),
}
for _name, (_domain, _fn) in MATH.items():
    op(_name, unary(_domain), lambda T, F, a, x, fn=_fn: fn(T, x))

op("atan2", binary(min_side=0), lambda T, F, a, x, y: (T.atan2(x, y), x.atan2(y),
                                                       T.arctan2(x, y)))
op("copysign", binary(right="away", min_side=0),
   lambda T, F, a, x, y: (T.copysign(x, y), x.copysign(y), T.copysign(x, -1.5)))
op("logaddexp", binary(min_side=0), lambda T, F, a, x, y: (
    T.logaddexp(x, y), x.logaddexp(y * 40), T.logaddexp2(x, y), x.logaddexp2(y * 40)))


@st.composite
def lerp_case(draw):
    shapes3 = draw(hnp.mutually_broadcastable_shapes(num_shapes=3, max_dims=3, max_side=3))
    x, end, weight = shapes3.input_shapes
    if draw(st.booleans()):  # a number weight; torch's result then has the shape of x and end
        return case(In(x), In(end), weight=draw(NUMBERS))
    return case(In(x), In(end), In(weight), weight=None)


op("lerp", lerp_case(), lambda T, F, a, x, end, w=None: (
    x.lerp(end, a.weight if w is None else w), T.lerp(x, end, a.weight if w is None else w)))
# (quotients kept off the integers, where floor and trunc jump: away from 0 and not a multiple)
op("remainder_fmod", binary(right="away"), lambda T, F, a, x, y: (
    x.remainder(y), T.remainder(x, y), x % y, x.fmod(y), T.fmod(x, y), x.remainder(1.5),
    T.fmod(x, -0.75)))
op("div_rounding_mode", st.tuples(binary(right="away"), st.sampled_from(["floor", "trunc"])).map(
    lambda s: (s[0][0], SimpleNamespace(mode=s[1]))),
   lambda T, F, a, x, y: (x.div(y, rounding_mode=a.mode), T.div(x, y, rounding_mode=a.mode),
                          T.divide(x * 3, 2, rounding_mode=a.mode)))
op("floor_divide", binary(right="away"), lambda T, F, a, x, y: (  # (torch: no derivative)
    x.detach() // y.detach(), T.floor_divide(x.detach(), 2.5)))

# ---- more activations -----------------------------------------------------------------------------
# (each scaled so that the tied values hit the kinks: hardtanh ±1, relu6 0 and 6, hardswish
# and hardsigmoid ±3)
op("relu6", unary(), lambda T, F, a, x: (F.relu6(x * 6), F.relu6(x * 6 - 3)), ties=True)
op("hardtanh", st.tuples(some_empty(), st.sampled_from([(-1.0, 1.0), (-0.5, 1.5), (0.0, 0.5)])).map(
    lambda s: case(In(s[0]), low=s[1][0], high=s[1][1])),
   lambda T, F, a, x: (F.hardtanh(x, a.low, a.high), F.hardtanh(x * 2)), ties=True)
op("hardswish", unary(), lambda T, F, a, x: F.hardswish(x * 3), ties=True)
op("hardsigmoid", unary(), lambda T, F, a, x: F.hardsigmoid(x * 3), ties=True,
   double=False)  # (torch: "derivative for aten::hardsigmoid_backward is not implemented")
op("mish", unary(), lambda T, F, a, x: F.mish(x * 3))
op("selu", unary(), lambda T, F, a, x: F.selu(x), ties=True)
op("celu", with_number(numbers=st.sampled_from([1.0, 0.5, 2.0])),
   lambda T, F, a, x: F.celu(x, a.number), ties=True)
op("softsign", unary(), lambda T, F, a, x: F.softsign(x * 3))


# ---- more selection -------------------------------------------------------------------------------
op("tril_triu", st.tuples(some_empty(2, 4), st.integers(-3, 3)).map(
    lambda s: case(In(s[0]), diagonal=s[1])),
   lambda T, F, a, x: (x.tril(a.diagonal), T.triu(x, a.diagonal), x.tril(), T.triu(x)))


@st.composite
def masked_select_case(draw):
    shape = draw(some_empty())
    mask = np.random.default_rng(draw(SEEDS)).random(draw(broadcast_into(shape))) < 0.5
    return case(In(shape), mask=mask)


op("masked_select", masked_select_case(), lambda T, F, a, x: (
    x.masked_select(T.tensor(a.mask)), T.masked_select(x, T.tensor(a.mask))))


@st.composite
def repeat_interleave_case(draw):
    shape = draw(some_empty(1))
    dim = draw(st.one_of(st.none(), one_dim(len(shape))))
    n = math.prod(shape) if dim is None else shape[dim]
    repeats = draw(st.one_of(st.integers(0, 3), st.lists(st.integers(0, 3), min_size=n,
                                                         max_size=n).map(np.array)))
    return case(In(shape), dim=dim, repeats=repeats)


op("repeat_interleave", repeat_interleave_case(), lambda T, F, a, x: x.repeat_interleave(
    T.tensor(a.repeats) if isinstance(a.repeats, np.ndarray) else a.repeats, a.dim))


@st.composite
def scatter_reduce_case(draw):
    (x, src), a = draw(scatter_case(unique=False))
    return case(x, src, dim=a.dim, index=a.index,
                reduce=draw(st.sampled_from(["sum", "prod", "mean", "amax", "amin"])),
                include_self=draw(st.booleans()))


# (untied values: amax/amin split the gradient among equal values, torch's rule, which the
# tests of select.py check)
op("scatter_reduce", scatter_reduce_case(), lambda T, F, a, x, src: (
    x.scatter_reduce(a.dim, T.tensor(a.index), src, a.reduce, include_self=a.include_self),
    T.scatter_reduce(x, a.dim, T.tensor(a.index), src, a.reduce)), examples=8)


# ---- sorting, order statistics, cumulative ops ------------------------------------------------------
# (untied values, ties=False: which of equal elements sort first, or which index a kthvalue or
# median returns, torch leaves unspecified)
@st.composite
def along_dim_case(draw, empty=True):
    shape = draw(some_empty(1) if empty else shapes(1))
    return case(In(shape), dim=draw(one_dim(len(shape))), flag=draw(st.booleans()))


op("sort", along_dim_case(), lambda T, F, a, x: (
    x.sort(a.dim, a.flag), T.sort(x, dim=a.dim, descending=not a.flag, stable=True),
    x.argsort(a.dim, a.flag), T.msort(x)))


@st.composite
def topk_case(draw):
    (x,), a = draw(along_dim_case())
    return case(x, dim=a.dim, largest=a.flag, k=draw(st.integers(0, x.shape[a.dim])))


op("topk", topk_case(), lambda T, F, a, x: (x.topk(a.k, a.dim, a.largest),
                                            T.topk(x, a.k, dim=a.dim, largest=a.largest)))


@st.composite
def kthvalue_case(draw):
    (x,), a = draw(along_dim_case(empty=False))
    return case(x, dim=a.dim, keepdim=a.flag, k=draw(st.integers(1, x.shape[a.dim])))


op("kthvalue", kthvalue_case(), lambda T, F, a, x: (x.kthvalue(a.k, a.dim, a.keepdim),
                                                    T.kthvalue(x, a.k, a.dim)))
op("median", along_dim_case(empty=False), lambda T, F, a, x: (
    x.median(a.dim, a.flag), T.median(x, a.dim), x.median(), x.nanmedian(a.dim)))
# (cumprod: values away from 0, where its gradient divides by them)
op("cumprod", along_dim_case(), lambda T, F, a, x: (x.cumprod(a.dim), T.cumprod(x * 0.8, a.dim)))
op("cumprod_with_zeros", along_dim_case(empty=False), lambda T, F, a, x: (
    x * (x > 0.3)).cumprod(a.dim))  # one zero, several or none in a row
op("cummax_cummin", along_dim_case(), lambda T, F, a, x: (
    x.cummax(a.dim), T.cummin(x, a.dim)))
# (x × 40 checks that large terms do not overflow; it also multiplies float32 rounding in the
# gradient by 40: torch's own float32 gradient was seen 1.4e-5 (relative) from the float64 one,
# ours 3e-6, hence rtol 1e-4 there)
op("logcumsumexp", along_dim_case(), lambda T, F, a, x: (
    x.logcumsumexp(a.dim), T.logcumsumexp(x * 40, a.dim)), tol32=(1e-4, 1e-5))


# ---- more movement --------------------------------------------------------------------------------
@st.composite
def diagonal_case(draw):
    shape = draw(some_empty(2, 4))
    dims = draw(st.lists(one_dim(len(shape)), min_size=2, max_size=2,
                         unique_by=lambda d: d % len(shape)))
    return case(In(shape), offset=draw(st.integers(-3, 3)), dim1=dims[0], dim2=dims[1])


op("diagonal", diagonal_case(), lambda T, F, a, x: (
    x.diagonal(a.offset, a.dim1, a.dim2), T.diagonal(x, a.offset, a.dim1, a.dim2), x.diagonal()))


@st.composite
def windows_case(draw):
    shape = draw(some_empty(1))
    dim = draw(one_dim(len(shape)))
    return case(In(shape), dim=dim, size=draw(st.integers(0, shape[dim] + 1)),
                step=draw(st.integers(1, 3)))


op("Tensor.unfold", windows_case(), lambda T, F, a, x: x.unfold(a.dim, a.size, a.step))


@st.composite
def movedim_case(draw, shape_strategy):
    shape = draw(shape_strategy)
    n = max(len(shape), 1)
    count = draw(st.integers(1, n))
    source = draw(st.permutations(range(n)))[:count]
    target = draw(st.permutations(range(n)))[:count]
    if count == 1 and draw(st.booleans()):
        return case(In(shape), source=source[0] - n * draw(st.booleans()), target=target[0])
    return case(In(shape), source=tuple(source), target=tuple(t - n * draw(st.booleans())
                                                               for t in target))


def movedim(T, F, a, x):
    return (x.movedim(a.source, a.target), T.movedim(x, a.source, a.target),
            T.moveaxis(x, a.source, a.target))


op("movedim", movedim_case(some_empty(1)), movedim)
op("movedim_of_a_0d", movedim_case(st.just(())), movedim)


# ---- resizing and padding modes ---------------------------------------------------------------------
@st.composite
def interpolate_case(draw):
    mode = draw(st.sampled_from(["nearest", "nearest", "bilinear", "bilinear", "linear"]))
    spatial = 1 if mode == "linear" else draw(st.integers(1, 2)) if mode == "nearest" else 2
    image = tuple(draw(st.integers(1, 4)) for _ in range(spatial))
    shape = (draw(st.integers(1, 2)), draw(st.integers(1, 2))) + image
    if draw(st.booleans()):
        size, scale = tuple(draw(st.integers(1, 6)) for _ in image), None
    else:
        size, scale = None, draw(st.sampled_from([0.5, 1.5, 2.0, 3.0, 0.75]))
    corners = None if mode == "nearest" else draw(st.booleans())
    return case(In(shape), mode=mode, size=size, scale=scale, align_corners=corners)


op("interpolate", interpolate_case(), lambda T, F, a, x: F.interpolate(
    x, a.size, a.scale, a.mode, a.align_corners), examples=8)


@st.composite
def pad_mode_case(draw):
    """reflect (widths under the side's length), replicate, circular (up to the length) over the
    last 1, 2 or 3 dims, of a batched or unbatched input."""
    mode = draw(st.sampled_from(["reflect", "replicate", "circular"]))
    dims = draw(st.integers(1, 3))
    image = tuple(draw(st.integers(1, 4)) for _ in range(dims))
    shape = (draw(st.integers(1, 2)),) * draw(st.booleans()) + (draw(st.integers(1, 2)),) + image
    widths = []
    for n in image[::-1]:
        limit = {"reflect": n - 1, "replicate": 3, "circular": n}[mode]
        widths += [draw(st.integers(0, limit)), draw(st.integers(0, limit))]
    return case(In(shape), pad=tuple(widths), mode=mode)


op("pad_modes", pad_mode_case(), lambda T, F, a, x: F.pad(x, a.pad, a.mode), examples=8)


# ---- 1-d and 3-d convolution and pooling, attention ---------------------------------------------
@st.composite
def conv_nd_case(draw, spatial: int):
    groups = draw(st.integers(1, 2))
    c_in, c_out = groups * draw(st.integers(1, 2)), groups * draw(st.integers(1, 2))
    kernel = tuple(draw(st.integers(1, 3 if spatial == 1 else 2)) for _ in range(spatial))
    stride, dilation = draw(st.integers(1, 2)), draw(st.integers(1, 2))
    padding = draw(st.one_of(st.integers(0, 1), st.sampled_from(["valid", "same"])))
    pad = 0 if padding == "valid" else dilation * (max(kernel) - 1) // 2 if padding == "same" \
        else padding
    image = tuple(max(1, dilation * (k - 1) + 1 - 2 * pad) + draw(st.integers(0, 2))
                  for k in kernel)
    batch = (draw(st.integers(1, 2)),) if draw(st.booleans()) else ()
    inputs = [In(batch + (c_in,) + image), In((c_out, c_in // groups) + kernel)]
    inputs += [In((c_out,))] * draw(st.booleans())
    # ("same" with a stride torch refuses: so must we)
    return case(*inputs, stride=stride, padding=padding, dilation=dilation, groups=groups)


op("conv1d", conv_nd_case(1), lambda T, F, a, x, w, b=None: F.conv1d(
    x, w, b, a.stride, a.padding, a.dilation, a.groups), examples=5)
op("conv3d", conv_nd_case(3), lambda T, F, a, x, w, b=None: F.conv3d(
    x, w, b, a.stride, a.padding, a.dilation, a.groups), examples=4)


@st.composite
def pool_nd_case(draw, spatial: int, dilation: bool):
    """1-d or 3-d windows: overlapping, tiling or skipping, padding up to half the kernel,
    ceil_mode. (Dilation only for the 1-d max pool; with dilation 1 every window reaches the
    input.)"""
    kernel = tuple(draw(st.integers(1, 3 if spatial == 1 else 2)) for _ in range(spatial))
    stride = draw(st.one_of(st.none(), st.integers(1, 3)))
    padding = draw(st.integers(0, min(kernel) // 2))
    dilations = draw(st.integers(1, 2)) if dilation else 1
    image = tuple(max(1, dilations * (k - 1) + 1 - 2 * padding) + draw(st.integers(0, 2))
                  for k in kernel)
    batch = (draw(st.integers(1, 2)),) if draw(st.booleans()) else ()
    return case(In(batch + (draw(st.integers(1, 2)),) + image), kernel_size=kernel,
                stride=stride, padding=padding, dilation=dilations,
                ceil_mode=draw(st.booleans()), flag=draw(st.booleans()))


def pool_1d_windows_see_input(example) -> bool:
    """(see windows_see_input: with dilation, a window can see only padding)"""
    (x,), a = example
    (k,), s, p, d, n = a.kernel_size, a.stride or a.kernel_size[0], a.padding, a.dilation, \
        x.shape[-1]
    count = (n + 2 * p - d * (k - 1) - 1 + (s - 1) * a.ceil_mode) // s + 1
    if a.ceil_mode and (count - 1) * s >= n + p:
        count -= 1
    return all(any(0 <= j * s - p + t * d < n for t in range(k)) for j in range(count))


op("max_pool1d", pool_nd_case(1, True).filter(pool_1d_windows_see_input),
   lambda T, F, a, x: F.max_pool1d(x, a.kernel_size, a.stride, a.padding, a.dilation,
                                   a.ceil_mode, a.flag), ties=True, examples=5)
op("avg_pool1d", pool_nd_case(1, False), lambda T, F, a, x: F.avg_pool1d(
    x, a.kernel_size, a.stride, a.padding, a.ceil_mode, a.flag), examples=5)
op("max_pool3d", pool_nd_case(3, False), lambda T, F, a, x: F.max_pool3d(
    x, a.kernel_size, a.stride, a.padding, 1, a.ceil_mode, a.flag), ties=True, examples=4)
op("avg_pool3d", pool_nd_case(3, False), lambda T, F, a, x: F.avg_pool3d(
    x, a.kernel_size, a.stride, a.padding, a.ceil_mode, a.flag), examples=4)


@st.composite
def attention_case(draw):
    batch = draw(shapes(0, 2, max_side=2))
    target, source = draw(st.integers(1, 3)), draw(st.integers(1, 3))
    embed, value = draw(st.integers(1, 3)), draw(st.integers(1, 3))
    inputs = [In(batch + (target, embed)), In(batch + (source, embed)),
              In(batch + (source, value))]
    mask = draw(st.sampled_from(["none", "bool", "float", "causal"]))
    inputs += [In((target, source), grad=False)] * (mask == "float")
    keep = np.random.default_rng(draw(SEEDS)).random((target, source)) < 0.7
    keep[:, 0] = True  # (a row that masks every key is nan in torch: not compared here)
    return case(*inputs, mask=mask, keep=keep, scale=draw(st.sampled_from([None, 0.5])))


def attention(T, F, a, q, k, v, float_mask=None):
    mask = T.tensor(a.keep) if a.mask == "bool" else float_mask
    return F.scaled_dot_product_attention(q, k, v, attn_mask=mask, is_causal=a.mask == "causal",
                                          scale=a.scale)


op("scaled_dot_product_attention", attention_case(), attention, examples=6,
   double=False)  # (torch's CPU flash attention has no double backward)


# ---- the comparison ------------------------------------------------------------------------------
def outputs(result) -> list:
    """An op's result as a flat list of tensors (tuples: split, max(dim), return_indices...)."""
    if isinstance(result, (tuple, list)):
        return [t for part in result for t in outputs(part)]
    return [result]


def assert_same(ours, theirs, what: str, tol: tuple) -> None:
    """Our array equals torch's: shape and dtype exactly, integers exactly, floats to
    rtol and atol, atol scaled by the magnitude of torch's values."""
    expected = theirs.numpy(force=True)  # (force: torch may give a ZeroTensor)
    got = np.asarray(ours.numpy() if isinstance(ours, tinygrad_pool.Tensor) else ours)
    assert got.shape == expected.shape, f"{what}: shape {got.shape}, torch {expected.shape}"
    assert got.dtype == expected.dtype, f"{what}: dtype {got.dtype}, torch {expected.dtype}"
    if expected.dtype.kind != "f":
        np.testing.assert_array_equal(got, expected, err_msg=what)
        return
    finite = expected[np.isfinite(expected)]
    scale = max(1.0, float(np.abs(finite).max())) if finite.size else 1.0
    rtol, atol = tol
    np.testing.assert_allclose(got, expected, rtol=rtol, atol=atol * scale, equal_nan=True,
                               err_msg=what)


def leaves(T, specs, arrays, dtype) -> list:
    return [T.tensor(array.astype(dtype), requires_grad=spec.grad)
            for spec, array in zip(specs, arrays)]


def gradients(T, outputs, weights, inputs, **options) -> list:
    """The gradient of Σ output·weight with respect to each input (zeros for an input the outputs
    do not depend on). The weights go in as grad_outputs: summing the products instead would
    add inf and -inf where an output is infinite, a NaN (and a NumPy warning) of our own."""
    grads = T.autograd.grad(outputs, inputs, [T.tensor(w) for w in weights], allow_unused=True,
                            **options)
    return [T.zeros_like(x) if g is None else g for g, x in zip(grads, inputs)]


def check(torch, entry: Op, specs, a, arrays, seed: int, dtype, tol, higher: bool) -> None:
    reference = entry.reference or entry.call
    theirs_in = leaves(torch, specs, arrays, dtype)
    try:
        theirs = outputs(reference(torch, torch.nn.functional, a, *theirs_in))
    except Exception as error:  # torch refuses these arguments: so must we, with its error type
        with pytest.raises(type(error)):
            entry.call(tinygrad_pool, tinygrad_F, a, *leaves(tinygrad_pool, specs, arrays, dtype))
        return
    ours_in = leaves(tinygrad_pool, specs, arrays, dtype)
    ours = outputs(entry.call(tinygrad_pool, tinygrad_F, a, *ours_in))
    assert len(ours) == len(theirs), f"{len(ours)} outputs, torch {len(theirs)}"
    for k, (o, t) in enumerate(zip(ours, theirs)):
        assert_same(o, t, f"output {k}", tol)
        assert o.requires_grad == t.requires_grad, f"output {k}: requires_grad {o.requires_grad}"

    # Backward: the gradient of Σ out·w (w random) with respect to every input requiring grad.
    differentiable = [k for k, t in enumerate(theirs) if t.requires_grad]
    wrt = [k for k, spec in enumerate(specs) if spec.grad]
    if not differentiable or not wrt:
        return
    rng = np.random.default_rng(seed + 1)
    weights = [rng.standard_normal(theirs[k].shape).astype(theirs[k].numpy(force=True).dtype)
               for k in differentiable]  # (each in its output's dtype: see the test at the end)
    theirs_out, ours_out = [theirs[k] for k in differentiable], [ours[k] for k in differentiable]
    theirs_wrt, ours_wrt = [theirs_in[k] for k in wrt], [ours_in[k] for k in wrt]
    expected = gradients(torch, theirs_out, weights, theirs_wrt, retain_graph=True)
    for k, g in enumerate(gradients(tinygrad_pool, ours_out, weights, ours_wrt,
                                    retain_graph=higher)):
        assert_same(g, expected[k], f"gradient of input {wrt[k]}", tol)
    if not higher:
        return

    # The same gradients on the recorded path, then the gradient of Σ grad·v through them.
    expected = gradients(torch, theirs_out, weights, theirs_wrt, create_graph=True)
    first = gradients(tinygrad_pool, ours_out, weights, ours_wrt, create_graph=True)
    for k, g in enumerate(first):
        assert_same(g, expected[k], f"gradient of input {wrt[k]} (create_graph=True)", tol)
    directions = [rng.standard_normal(g.shape).astype(dtype) for g in expected]
    theirs_second = second_derivatives(torch, expected, directions, theirs_wrt)
    ours_second = second_derivatives(tinygrad_pool, first, directions, ours_wrt)
    for k, (g, t) in enumerate(zip(ours_second, theirs_second)):
        assert_same(g, t, f"second derivative, input {wrt[k]}", tol)


def second_derivatives(T, grads, directions, inputs) -> list:
    """d(Σ grad·v)/d inputs. A gradient outside the graph is a constant (relu's, in ours: the
    mask does not depend on x), so it adds nothing; if none is in the graph, all are zero."""
    pairs = [(g, v) for g, v in zip(grads, directions) if g.requires_grad]
    if not pairs:
        return [T.zeros_like(x) for x in inputs]
    return gradients(T, *zip(*pairs), inputs)


def fuzz_settings(entry: Op) -> settings:
    # (a known bug is not shrunk: shrinking its failure again on every run would cost seconds)
    phases = [Phase.explicit, Phase.reuse, Phase.generate] + [Phase.shrink] * (not entry.xfail)
    return settings(max_examples=entry.examples * FUZZ_SCALE, deadline=None, phases=phases,
                    derandomize=FUZZ_SCALE == 1, database=None if FUZZ_SCALE == 1 else
                    settings.default.database,
                    suppress_health_check=[HealthCheck.function_scoped_fixture,
                                           HealthCheck.too_slow, HealthCheck.filter_too_much,
                                           HealthCheck.data_too_large])


def params() -> list:
    return [pytest.param(entry, id=entry.name, marks=[pytest.mark.xfail(
        strict=True, reason=entry.xfail)] if entry.xfail else []) for entry in OPS]


def test_table_names_are_unique():
    names = [entry.name for entry in OPS]
    assert len(names) == len(set(names))


# (torch and we warn alike about the odd arguments drawn on purpose: x.T of a 0-d tensor, a
# target that broadcasts, dropout2d of 3-D input)
@pytest.mark.filterwarnings("ignore::UserWarning")
@pytest.mark.parametrize("entry", params())
def test_parity(torch, entry: Op):
    @fuzz_settings(entry)
    @given(data=st.data())
    def run(data):
        specs, a = data.draw(entry.draw, label="example")
        seed = data.draw(SEEDS, label="seed")
        for ties in (False, True)[:1 + entry.ties]:  # an op with tie rules: both kinds of values
            rng = np.random.default_rng(seed)
            arrays = [make_values(rng, spec, ties) for spec in specs]
            check(torch, entry, specs, a, arrays, seed, np.float64, entry.tol, entry.double)
            check(torch, entry, specs, a, arrays, seed, np.float32, entry.tol32, False)

    # One example database key per entry (as hypothesis's pytest plugin gives each parameter):
    # a failure found by a long run is replayed first by the next one, for that entry alone.
    run.hypothesis.inner_test._hypothesis_internal_add_digest = entry.name.encode()
    run()


def test_a_grad_output_takes_its_outputs_dtype(torch):
    weight = np.array(1.0091741234567)  # not a float32 number
    for create_graph in (False, True):
        results = []
        for T in (torch, tinygrad_pool):
            x = T.tensor(np.array(2.0), requires_grad=True)
            (grad,) = T.autograd.grad(x.float(), x, T.tensor(weight), create_graph=create_graph)
            results.append(grad.item())
        assert results[0] == results[1], f"create_graph={create_graph}"
