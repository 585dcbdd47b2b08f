"""Every public Tensor method and operator, every module-level function and every factory,
called with each argument spoilt in turn (see tests/badinput.py for the rule): torch's error
type and a message naming the function and the argument where torch refuses, torch's result
where torch accepts.

Names, for the messages:
- a method is named by its own name (``reshape``, ``add_``), and the tensor it is called on is
  the argument ``input`` (torch's name for it in ``torch.reshape(input, shape)``); a module-level
  function or factory by its name and torch's parameter names;
- indexing, reading or writing, is named ``index`` (``x[index]``, ``x[index] = value``);
- an operator is named by its symbol (``+``, ``@``, ``<``) and its operands are ``input`` and
  ``other``. An operand of a type an operator does not take makes the operator return
  NotImplemented, and Python raises its own TypeError ("unsupported operand type(s) for +:
  'Tensor' and 'str'"), as torch does: that message names the operand by its type, so it is
  checked for the operand's type name in quotes instead of the parameter (``Case.operator``).
"""
import numpy as np
import pytest

import tinygrad_pool
from badinput import Case, Raw, parameters, problems

rng = np.random.default_rng(0)
MATRIX = rng.standard_normal((3, 4)).astype(np.float32)
OTHER = rng.standard_normal((3, 4)).astype(np.float32)
ROW = rng.standard_normal(4).astype(np.float32)
SQUARE = rng.standard_normal((4, 2)).astype(np.float32)
INDEX = np.array([[0, 1, 2, 0], [2, 1, 0, 1]])
VECTOR_INDEX = np.array([2, 0])
MASK = MATRIX > 0
BATCH = rng.standard_normal((2, 3, 4)).astype(np.float32)
BATCH2 = rng.standard_normal((2, 4, 5)).astype(np.float32)


class DType(str):
    """A dtype argument, by name: each framework gets its own dtype object of that name."""


def _resolve(fw, value):
    return getattr(fw, value) if isinstance(value, DType) else value


def _calling(fn):
    """``fn(fw, *args, **kwargs)`` with DType names made each framework's dtypes."""
    return lambda fw, F, *args, **kwargs: fn(fw, *[_resolve(fw, a) for a in args],
                                              **{k: _resolve(fw, v) for k, v in kwargs.items()})


def _params(positional, keywords):
    return [(p, v, False) for p, v in positional] + [(p, v, True) for p, v in keywords.items()]


def method(name, *positional, deterministic=True, skip=None, **keywords):
    """``input.<name>(*args, **kwargs)``: the tensor the method is called on is ``input``."""
    return Case(_calling(lambda fw, x, *args, **kwargs: getattr(x, name)(*args, **kwargs)),
                _params((("input", MATRIX),) + positional, keywords),
                deterministic=deterministic, skip=skip or {})


def function(name, *positional, deterministic=True, skip=None, **keywords):
    """``torch.<name>(*args, **kwargs)``."""
    return Case(_calling(lambda fw, *args, **kwargs: getattr(fw, name)(*args, **kwargs)),
                _params(positional, keywords), deterministic=deterministic, skip=skip or {})


def call(fn, *positional, operator=False, skip=None, **keywords):
    """Any expression ``fn(fw, *args, **kwargs)`` (operators, in-place writes, backward)."""
    return Case(_calling(fn), _params(positional, keywords), operator=operator, skip=skip or {})


def binary(fn, other=OTHER):
    """An operator: ``fn(input, other)``."""
    return call(lambda fw, x, y: fn(x, y), ("input", MATRIX), ("other", other), operator=True)


def _unchanged_if_refused(fw, x, write):
    """``write()``, an in-place op on x. When ours refuses it, x must be as it was — its data,
    version counter and node — as torch checks every argument before it writes. (A change
    is an AssertionError, which the harness reports as the wrong error type.)"""
    if fw is not tinygrad_pool or not isinstance(x, tinygrad_pool.Tensor):
        return write()
    data, version, node = x.numpy().copy(), x._version, x.grad_fn
    try:
        return write()
    except Exception:
        if not (np.array_equal(x.numpy(), data, equal_nan=data.dtype.kind == "f")
                and x._version == version and x.grad_fn is node):
            raise AssertionError("a refused in-place call changed its input (data, _version "
                                 "or grad_fn)") from None
        raise


def in_place(name, *positional, deterministic=True, **keywords):
    """``input.<name>(*args, **kwargs)``, which writes into input (see _unchanged_if_refused)."""
    def write(fw, x, *args, **kwargs):
        return _unchanged_if_refused(fw, x, lambda: getattr(x, name)(*args, **kwargs))
    return Case(_calling(write), _params((("input", MATRIX),) + positional, keywords),
                deterministic=deterministic)


def _setitem(fw, x, index, value):
    x = x.clone()
    _unchanged_if_refused(fw, x, lambda: x.__setitem__(index, value))
    return x


def _backward(fw, x, gradient):
    x = x.detach().requires_grad_()
    (x * 2).backward(gradient)
    return x.grad


def _set_requires_grad(fw, x, requires_grad):
    return x.detach().requires_grad_(requires_grad).requires_grad


def _retain_grad(fw, x):
    y = x.detach().requires_grad_() * 2
    y.retain_grad()
    y.sum().backward()
    return y.grad


def _set_item_bool(fw, x, mask, value):
    return _setitem(fw, x, mask, value)


SIZE = (2, 3)
NOT_DETERMINISTIC = {"deterministic": False}

TABLE = {
    # ---- shape --------------------------------------------------------------------------------
    "reshape": method("reshape", ("shape", (4, 3))),
    "view": method("view", ("shape", (4, 3))),
    "view_as": method("view_as", ("other", MATRIX.T.copy())),
    "reshape_as": method("reshape_as", ("other", MATRIX.T.copy())),
    "flatten": method("flatten", ("start_dim", 0), ("end_dim", -1)),
    "unflatten": method("unflatten", ("dim", 1), ("sizes", (2, 2))),
    "squeeze": method("squeeze", ("dim", 0)),
    "unsqueeze": method("unsqueeze", ("dim", 1)),
    "permute": method("permute", ("dims", (1, 0))),
    "transpose": method("transpose", ("dim0", 0), ("dim1", 1)),
    "t": method("t"),
    "expand": method("expand", ("size", (2, 3, 4))),
    "expand_as": method("expand_as", ("other", BATCH)),
    "repeat": method("repeat", ("repeats", (2, 1))),
    "chunk": method("chunk", ("chunks", 2), ("dim", 1)),
    "split": method("split", ("split_size_or_sections", 2), ("dim", 1)),
    "narrow": method("narrow", ("dim", 1), ("start", 1), ("length", 2)),
    "flip": method("flip", ("dims", (0,))),
    "roll": method("roll", ("shifts", 1), ("dims", 0)),
    "contiguous": method("contiguous"),
    "gather": method("gather", ("dim", 0), ("index", INDEX)),
    "take_along_dim": method("take_along_dim", ("indices", INDEX), ("dim", 0)),
    "index_select": method("index_select", ("dim", 0), ("index", VECTOR_INDEX)),
    "masked_fill": method("masked_fill", ("mask", MASK), ("value", 0.5)),
    "scatter": method("scatter", ("dim", 0), ("index", INDEX), ("src", OTHER)),
    "scatter_add": method("scatter_add", ("dim", 0), ("index", INDEX), ("src", OTHER)),
    # ---- reductions ---------------------------------------------------------------------------
    "sum": method("sum", ("dim", 1), keepdim=False),
    "mean": method("mean", ("dim", 1), keepdim=False),
    "prod": method("prod", ("dim", 1), keepdim=False),
    "var": method("var", ("dim", 1), keepdim=False, correction=1),
    "std": method("std", ("dim", 1), keepdim=False, correction=1),
    "norm": method("norm", ("p", 2), ("dim", 1), keepdim=False),
    "max": method("max", ("dim", 1), keepdim=False),
    "min": method("min", ("dim", 1), keepdim=False),
    "amax": method("amax", ("dim", 1), keepdim=False),
    "amin": method("amin", ("dim", 1), keepdim=False),
    "argmax": method("argmax", ("dim", 1), keepdim=False),
    "argmin": method("argmin", ("dim", 1), keepdim=False),
    "logsumexp": method("logsumexp", ("dim", 1), keepdim=False),
    "cumsum": method("cumsum", ("dim", 1)),
    "all": method("all", ("dim", 1), keepdim=False),
    "any": method("any", ("dim", 1), keepdim=False),
    "softmax": method("softmax", ("dim", 1)),
    "log_softmax": method("log_softmax", ("dim", 1)),
    # ---- elementwise --------------------------------------------------------------------------
    **{name: method(name) for name in (
        "abs", "exp", "log", "log1p", "sqrt", "rsqrt", "sin", "cos", "sign", "floor", "ceil",
        "sigmoid", "tanh", "relu", "neg", "square")},
    "round": method("round", decimals=1),
    "pow": method("pow", ("exponent", 2.0)),
    "clamp": method("clamp", ("min", -0.5), ("max", 0.5)),
    "clamp_min": method("clamp_min", ("min", -0.5)),
    "clamp_max": method("clamp_max", ("max", 0.5)),
    "maximum": method("maximum", ("other", OTHER)),
    "minimum": method("minimum", ("other", OTHER)),
    "where": method("where", ("condition", MASK), ("other", OTHER)),
    "add": method("add", ("other", OTHER), alpha=2),
    "sub": method("sub", ("other", OTHER), alpha=2),
    "mul": method("mul", ("other", OTHER)),
    "div": method("div", ("other", OTHER)),
    "eq": method("eq", ("other", OTHER)),
    "lt": method("lt", ("other", OTHER)),
    "logical_and": method("logical_and", ("other", OTHER)),
    "matmul": method("matmul", ("other", SQUARE)),
    # ---- operators ----------------------------------------------------------------------------
    "+": binary(lambda a, b: a + b),
    "-": binary(lambda a, b: a - b),
    "*": binary(lambda a, b: a * b),
    "/": binary(lambda a, b: a / b),
    "**": binary(lambda a, b: a ** b, 2.0),
    "@": binary(lambda a, b: a @ b, SQUARE),
    "+ (reflected)": binary(lambda a, b: b + a, 2.0),
    "- (reflected)": binary(lambda a, b: b - a, 2.0),
    "/ (reflected)": binary(lambda a, b: b / a, 2.0),
    "<": binary(lambda a, b: a < b),
    "==": binary(lambda a, b: a == b),
    "&": call(lambda fw, x, y: x & y, ("input", MASK), ("other", MASK), operator=True),
    "- (unary)": call(lambda fw, x: -x, ("input", MATRIX)),
    "~": call(lambda fw, x: ~x, ("input", MASK)),
    # ---- in place -----------------------------------------------------------------------------
    "add_": in_place("add_", ("other", OTHER), alpha=2),
    "sub_": in_place("sub_", ("other", OTHER)),
    "mul_": in_place("mul_", ("other", OTHER)),
    "div_": in_place("div_", ("other", OTHER)),
    "pow_": in_place("pow_", ("exponent", 2.0)),
    "clamp_": in_place("clamp_", ("min", -0.5), ("max", 0.5)),
    "fill_": in_place("fill_", ("value", 2.0)),
    "copy_": in_place("copy_", ("src", OTHER)),
    "masked_fill_": in_place("masked_fill_", ("mask", MASK), ("value", 0.5)),
    "scatter_": in_place("scatter_", ("dim", 0), ("index", INDEX), ("src", OTHER)),
    "scatter_add_": in_place("scatter_add_", ("dim", 0), ("index", INDEX), ("src", OTHER)),
    **{name: in_place(name) for name in (
        "neg_", "zero_", "relu_", "sigmoid_", "tanh_", "exp_", "abs_")},
    "uniform_": in_place("uniform_", ("a", 0.0), ("b", 1.0), deterministic=False),
    "normal_": in_place("normal_", ("mean", 0.0), ("std", 1.0), deterministic=False),
    "+=": call(lambda fw, x, y: _unchanged_if_refused(fw, x, lambda: x.__iadd__(y)),
               ("input", MATRIX), ("other", OTHER), operator=True),
    "__setitem__": call(_setitem, ("input", MATRIX), ("index", 1), ("value", ROW)),
    # (the mask is the index: ``x[mask] = value``)
    "__setitem__ (mask)": call(_set_item_bool, ("input", MATRIX), ("index", MASK), ("value", 0.0)),
    "__getitem__": call(lambda fw, x, index: x[index], ("input", MATRIX), ("index", 1)),
    # ---- values, conversions, autograd --------------------------------------------------------
    "item": call(lambda fw, x: x.item(), ("input", np.array(2.5, np.float32))),
    "tolist": method("tolist"),
    "numpy": method("numpy"),
    "size": method("size", ("dim", 1)),
    "to": method("to", ("dtype", DType("float64"))),
    "type": method("type", ("dtype", DType("float64"))),
    "type_as": method("type_as", ("other", INDEX)),
    "clone": method("clone"),
    "detach": method("detach"),
    "backward": call(_backward, ("input", MATRIX), ("gradient", OTHER),
                     skip={"input": "the tensor is made to require grad first"}),
    "requires_grad_": call(_set_requires_grad, ("input", MATRIX), ("requires_grad", True)),
    "retain_grad": call(_retain_grad, ("input", MATRIX),
                        skip={"input": "the tensor is made to require grad first"}),
    # ---- module-level functions ---------------------------------------------------------------
    "torch.cat": function("cat", ("tensors", [MATRIX, OTHER]), ("dim", 0)),
    "torch.stack": function("stack", ("tensors", [MATRIX, OTHER]), ("dim", 0)),
    "torch.where": function("where", ("condition", MASK), ("input", MATRIX), ("other", OTHER)),
    "torch.matmul": function("matmul", ("input", MATRIX), ("other", SQUARE)),
    "torch.mm": function("mm", ("input", MATRIX), ("mat2", SQUARE)),
    "torch.bmm": function("bmm", ("input", BATCH), ("mat2", BATCH2)),
    # (torch's operands are variadic, ``einsum(equation, *operands)``: named by position)
    "torch.einsum": function("einsum", ("equation", "ij,jk->ik"), ("operand 0", MATRIX),
                             ("operand 1", SQUARE)),
    "torch.isclose": function("isclose", ("input", MATRIX), ("other", OTHER), rtol=1e-5,
                              atol=1e-8, equal_nan=False),
    "torch.allclose": function("allclose", ("input", MATRIX), ("other", OTHER)),
    "torch.equal": function("equal", ("input", MATRIX), ("other", OTHER)),
    "torch.maximum": function("maximum", ("input", MATRIX), ("other", OTHER)),
    "torch.max": function("max", ("input", MATRIX), ("dim", 1)),
    "torch.exp": function("exp", ("input", MATRIX)),
    "torch.sum": function("sum", ("input", MATRIX), ("dim", 1)),
    "torch.clamp": function("clamp", ("input", MATRIX), min=-0.5, max=0.5),
    "torch.pow": function("pow", ("input", MATRIX), ("exponent", 2.0)),
    "torch.transpose": function("transpose", ("input", MATRIX), ("dim0", 0), ("dim1", 1)),
    "torch.gather": function("gather", ("input", MATRIX), ("dim", 0), ("index", INDEX)),
    "torch.numel": function("numel", ("input", MATRIX)),
    # ---- factories ----------------------------------------------------------------------------
    "torch.zeros": function("zeros", ("size", SIZE), dtype=DType("float32"), device="cpu",
                            requires_grad=False),
    "torch.ones": function("ones", ("size", SIZE), dtype=DType("float32")),
    "torch.empty": function("empty", ("size", SIZE), deterministic=False, dtype=DType("float32")),
    "torch.full": function("full", ("size", SIZE), ("fill_value", 1.5), dtype=DType("float32")),
    "torch.arange": function("arange", ("start", 0), ("end", 5), ("step", 1),
                             dtype=DType("int64")),
    "torch.linspace": function("linspace", ("start", 0.0), ("end", 1.0), ("steps", 5)),
    "torch.eye": function("eye", ("n", 3), ("m", 2), dtype=DType("float32")),
    "torch.rand": function("rand", ("size", SIZE), deterministic=False, dtype=DType("float32")),
    "torch.randn": function("randn", ("size", SIZE), deterministic=False,
                            dtype=DType("float32")),
    "torch.randint": function("randint", ("low", 0), ("high", 5), ("size", SIZE),
                              deterministic=False),
    "torch.randperm": function("randperm", ("n", 5), deterministic=False),
    "torch.tensor": function("tensor", ("data", [[1.0, 2.0], [3.0, 4.0]]),
                             dtype=DType("float32"), requires_grad=False),
    "torch.as_tensor": function("as_tensor", ("data", [[1.0, 2.0], [3.0, 4.0]])),
    "torch.from_numpy": function("from_numpy", ("ndarray", Raw(MATRIX))),
    "torch.zeros_like": function("zeros_like", ("input", MATRIX), dtype=DType("float64")),
    "torch.ones_like": function("ones_like", ("input", MATRIX)),
    "torch.full_like": function("full_like", ("input", MATRIX), ("fill_value", 1.5)),
    "torch.empty_like": function("empty_like", ("input", MATRIX), deterministic=False),
    "torch.rand_like": function("rand_like", ("input", MATRIX), deterministic=False),
    "torch.randn_like": function("randn_like", ("input", MATRIX), deterministic=False),
}

METHOD_SELF = {"input=ndarray": "a NumPy array's own method runs, not ours",
               "input=list_of_numbers": "a list has no such method, in either framework"}

# "parameter=spoilt" (or "*=spoilt") -> why our answer differs from torch's on purpose
ALLOWED = {name: dict(METHOD_SELF) if not name.startswith("torch.") else {} for name in TABLE}
NO_COMPLEX = "complex numbers are not supported (docs/porting.md): Python's TypeError, no result"
for _name in ("+", "-", "*", "/", "**", "+ (reflected)", "- (reflected)", "/ (reflected)", "+="):
    ALLOWED[_name]["other=complex"] = NO_COMPLEX
for _name in ("pow", "torch.pow"):
    ALLOWED[_name]["exponent=complex"] = NO_COMPLEX
for _name in ("view", "view_as"):
    ALLOWED[_name]["input=non_contiguous"] = (
        "view() of a transposed layout is refused by torch too; the harness hands torch a "
        "contiguous copy, so only ours sees the layout")
for _spoilt in ("bool", "float", "nan", "inf", "complex"):
    ALLOWED["to"][f"dtype={_spoilt}"] = (
        "torch's to() reads a stray number as its non_blocking flag and returns the tensor "
        "unchanged; here an argument that is no dtype or device is refused")
for _name, _parameter in (("torch.linspace", "start"), ("torch.linspace", "end"),
                          ("torch.as_tensor", "data")):
    ALLOWED[_name][f"{_parameter}=complex"] = (
        "complex numbers are not supported (docs/porting.md): refused, where torch makes a "
        "complex tensor")
ALLOWED["*"]["other=list_of_numbers"] = (
    "tensor * list is Python's list repetition, which asks the tensor for an index "
    "(__index__): its TypeError is torch's word for word, and names neither")
ALLOWED["backward"]["gradient=ndarray"] = (
    "a NumPy array is taken as the gradient (the package's own tests use it throughout); "
    "torch takes only a Tensor, which works here too")


def function_name(case_name: str) -> str:
    """The name a message must carry: the method's, the function's, or the operator's symbol."""
    name = case_name.split(" ")[0]
    if name in ("__getitem__", "__setitem__"):
        return "index"
    return name[len("torch."):] if name.startswith("torch.") else name


# Not fixed yet: case -> its parameters whose spoilt values still break the rule (run with
# --runxfail to see how). Strict: a fix makes the test pass, and then its entry must go.
PENDING: dict = {}


def _cases() -> list:
    return [pytest.param(name, parameter, marks=pytest.mark.xfail(
                strict=True, reason="not fixed yet (PENDING)"))
            if parameter in PENDING.get(name, "").split() else (name, parameter)
            for name, parameter in parameters(TABLE)]


@pytest.mark.parametrize("name, parameter", _cases())
def test_spoilt_argument(torch, name, parameter):
    found = problems(name, function_name(name), TABLE[name], parameter, ALLOWED[name])
    assert not found, "\n".join(found)
