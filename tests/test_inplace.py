"""In-place ops (engine v2): methods, augmented operators, __setitem__, views, the leaf rules,
version counters and the "modified by an inplace operation" check, all against PyTorch.

Most tests write one small program against a *framework adapter* (``fw``: how to make tensors,
no_grad, F, nn, optim, init) and run it on tinygrad_pool and on torch, so the same code drives
both and every expectation is torch's own, computed at run time.
"""
import warnings

import numpy as np
import pytest
from hypothesis import HealthCheck, assume, event, given, settings
from hypothesis import strategies as st


# ---- the two frameworks behind one interface ------------------------------------------------
class Ours:
    """tinygrad_pool behind the adapter interface."""
    name = "tinygrad_pool"

    def __init__(self):
        import tinygrad_pool
        self.Tensor = tinygrad_pool.tensor  # (keeps the data's dtype, as torch.tensor)
        self.no_grad = tinygrad_pool.no_grad
        self.F, self.nn, self.optim = tinygrad_pool.nn.functional, tinygrad_pool.nn, tinygrad_pool.optim
        self.init = tinygrad_pool.nn.init

    def tensor(self, array, requires_grad=False):
        return self.Tensor(np.array(array), requires_grad=requires_grad)

    def leaf(self, array):
        return self.Tensor(np.array(array, dtype=np.float64), requires_grad=True)

    def param(self, array):
        return self.nn.Parameter(np.array(array, dtype=np.float64))

    def labels(self, labels):
        return self.Tensor(np.array(labels, dtype=np.int64))

    def numpy(self, t):
        return np.array(t.numpy())

    def array(self, data):
        """A copy of what ``t.numpy()`` returned."""
        return np.array(data)

    def linear(self, n_in, n_out):
        return self.nn.Linear(n_in, n_out, dtype=np.float64)

    def amax(self, t, dim):
        return t.amax(dim=dim)


class Torch:
    """torch behind the adapter interface."""
    name = "torch"

    def __init__(self, torch):
        self.torch = torch
        self.no_grad = torch.no_grad
        self.F, self.nn, self.optim, self.init = torch.nn.functional, torch.nn, torch.optim, torch.nn.init

    def tensor(self, array, requires_grad=False):
        return self.torch.tensor(np.array(array)).requires_grad_(requires_grad)

    def leaf(self, array):
        return self.torch.tensor(np.array(array, dtype=np.float64), requires_grad=True)

    def param(self, array):
        return self.nn.Parameter(self.torch.tensor(np.array(array, dtype=np.float64)))

    def labels(self, labels):
        return self.torch.tensor(np.array(labels, dtype=np.int64))

    def numpy(self, t):
        return t.detach().numpy().copy()

    def array(self, data):
        return data.numpy().copy()

    def linear(self, n_in, n_out):
        return self.nn.Linear(n_in, n_out, dtype=self.torch.float64)

    def amax(self, t, dim):
        return t.amax(dim)


@pytest.fixture
def ours():
    return Ours()


@pytest.fixture
def tfw(torch):
    return Torch(torch)


def grad_of(fw, t):
    """t.grad as an array (None stays None)."""
    return None if t.grad is None else fw.numpy(t.grad)


def assert_same(got: dict, expected: dict, rtol=1e-12, atol=1e-12):
    """Two result dicts (name -> array, bool, number or None) from the same program agree. A
    None gradient counts as zeros here (test_zeroing_ops_keep_the_input_in_the_graph checks
    None against zeros on its own)."""
    assert got.keys() == expected.keys()
    for key, want in expected.items():
        have = got[key]
        if want is None and isinstance(have, np.ndarray):
            want, have = have, want
        if want is None:
            assert have is None, f"{key}: expected None, got {have!r}"
        elif isinstance(want, np.ndarray):
            have = np.zeros_like(want) if have is None else np.asarray(have)
            assert have.shape == want.shape, f"{key}: shape {have.shape} != {want.shape}"
            np.testing.assert_allclose(have, want, rtol=rtol, atol=atol, err_msg=key)
        else:
            assert have == want, f"{key}: {have!r} != {want!r}"


def both(ours, tfw, program, **kw):
    """Run program(fw) on both frameworks and compare the dicts it returns."""
    expected = program(tfw)
    got = program(ours)
    assert_same(got, expected, **kw)
    return got


# ---- data -----------------------------------------------------------------------------------
X_MIXED = np.array([[-1.3, 0.4, 2.1], [0.7, -0.2, -2.5]])
X_POS = np.array([[0.3, 1.7, 2.2], [0.9, 1.1, 3.4]])
WEIGHTS = np.array([[0.5, -1.2, 2.0], [1.5, 0.3, -0.7]])
ROW = np.array([1.5, -0.5, 2.0])             # broadcasts over the rows of a (2, 3)
ROW_POS = np.array([1.5, 0.5, 2.0])
OTHER = np.array([[0.2, -0.9, 1.3], [-1.1, 0.6, 0.8]])
X34 = np.arange(12, dtype=np.float64).reshape(3, 4) / 7 - 0.8
W34 = np.linspace(-1.0, 1.5, 12).reshape(3, 4)


def loss_of(fw, y, weights=WEIGHTS):
    """A further, non-linear op after the in-place one: sum(y · y · weights)."""
    return (y * y * fw.tensor(weights)).sum()


# ---- 1. in-place methods on a non-leaf --------------------------------------------------------
INPLACE = {  # name: (x's values, op on y)
    "add_scalar": (X_MIXED, lambda fw, y: y.add_(2.5)),
    "add_row": (X_MIXED, lambda fw, y: y.add_(fw.tensor(ROW))),
    "sub_scalar": (X_MIXED, lambda fw, y: y.sub_(0.75)),
    "sub_row": (X_MIXED, lambda fw, y: y.sub_(fw.tensor(ROW))),
    "mul_scalar": (X_MIXED, lambda fw, y: y.mul_(-1.5)),
    "mul_row": (X_MIXED, lambda fw, y: y.mul_(fw.tensor(ROW))),
    "div_scalar": (X_MIXED, lambda fw, y: y.div_(4.0)),
    "div_row": (X_MIXED, lambda fw, y: y.div_(fw.tensor(ROW))),
    "pow_2": (X_MIXED, lambda fw, y: y.pow_(2)),
    "pow_3": (X_MIXED, lambda fw, y: y.pow_(3)),
    "pow_half": (X_POS, lambda fw, y: y.pow_(0.5)),
    "pow_neg": (X_POS, lambda fw, y: y.pow_(-1.5)),
    "neg_": (X_MIXED, lambda fw, y: y.neg_()),
    "zero_": (X_MIXED, lambda fw, y: y.zero_()),
    "fill_": (X_MIXED, lambda fw, y: y.fill_(0.25)),
    "copy_same_shape": (X_MIXED, lambda fw, y: y.copy_(fw.tensor(OTHER))),
    "copy_row": (X_MIXED, lambda fw, y: y.copy_(fw.tensor(ROW))),
    "clamp_": (X_MIXED, lambda fw, y: y.clamp_(-1.0, 1.0)),
    "clamp_min_kw": (X_MIXED, lambda fw, y: y.clamp_(min=0.5)),
    "clamp_max_kw": (X_MIXED, lambda fw, y: y.clamp_(max=0.5)),
    "clamp_min_": (X_MIXED, lambda fw, y: y.clamp_min_(0.1)),
    "relu_": (X_MIXED, lambda fw, y: y.relu_()),
    "sigmoid_": (X_MIXED, lambda fw, y: y.sigmoid_()),
    "tanh_": (X_MIXED, lambda fw, y: y.tanh_()),
    "exp_": (X_MIXED, lambda fw, y: y.exp_()),
    "log_": (X_POS, lambda fw, y: y.log_()),
    "sqrt_": (X_POS, lambda fw, y: y.sqrt_()),
    "abs_": (X_MIXED, lambda fw, y: y.abs_()),
}


@pytest.mark.parametrize("name", list(INPLACE))
def test_inplace_method_on_nonleaf_matches_torch(ours, tfw, name):
    """y = x * 1; y.op_(...) returns y itself; y's value and x.grad after a further op and
    backward are torch's."""
    values, op = INPLACE[name]

    def program(fw):
        x = fw.leaf(values)
        y = x * 1.0
        returned = op(fw, y)
        loss_of(fw, y).backward()
        return {"returns self": returned is y, "y": fw.numpy(y), "x.grad": grad_of(fw, x)}

    got = both(ours, tfw, program)
    assert got["returns self"] is True


WITH_W = {  # name: (w's values, op on y with w)
    "add_row": (ROW, lambda y, w: y.add_(w)),
    "add_same_shape": (OTHER, lambda y, w: y.add_(w)),
    "sub_row": (ROW, lambda y, w: y.sub_(w)),
    "mul_row": (ROW, lambda y, w: y.mul_(w)),
    "mul_same_shape": (OTHER, lambda y, w: y.mul_(w)),
    "div_row": (ROW_POS, lambda y, w: y.div_(w)),
    "div_same_shape": (X_POS, lambda y, w: y.div_(w)),
    "copy_row": (ROW, lambda y, w: y.copy_(w)),
    "copy_same_shape": (OTHER, lambda y, w: y.copy_(w)),
}


@pytest.mark.parametrize("name", ["zero_", "fill_", "copy_same_shape", "copy_row"])
def test_zeroing_ops_keep_the_input_in_the_graph(ours, tfw, name):
    """After y.zero_() / fill_ / copy_ (constant) the old value no longer matters, but x stays in
    the graph: x.grad is zeros, not None, as in torch."""
    values, op = INPLACE[name]

    def program(fw):
        x = fw.leaf(values)
        y = x * 1.0
        op(fw, y)
        loss_of(fw, y).backward()
        return {"x.grad is None": x.grad is None}

    assert both(ours, tfw, program) == {"x.grad is None": False}


@pytest.mark.parametrize("name", list(WITH_W))
def test_inplace_method_with_grad_argument_matches_torch(ours, tfw, name):
    """y.op_(w) with w requiring grad (same shape or broadcast): x and w both get torch's grads."""
    w_values, op = WITH_W[name]

    def program(fw):
        x, w = fw.leaf(X_MIXED), fw.leaf(w_values)
        y = x * 1.0
        returned = op(y, w)
        loss_of(fw, y).backward()
        return {"returns self": returned is y, "y": fw.numpy(y), "x.grad": grad_of(fw, x),
                "w.grad": grad_of(fw, w)}

    assert both(ours, tfw, program)["returns self"] is True


def test_inplace_with_grad_argument_on_plain_tensor_joins_the_graph(ours, tfw):
    """t (no grad) .mul_(w) with w requiring grad: t becomes a non-leaf requiring grad, as in torch."""
    def program(fw):
        t, w = fw.tensor(X_MIXED), fw.leaf(ROW)
        t.mul_(w)
        flags = {"requires_grad": t.requires_grad, "is_leaf": t.is_leaf}
        loss_of(fw, t).backward()
        return {**flags, "t": fw.numpy(t), "w.grad": grad_of(fw, w)}

    got = both(ours, tfw, program)
    assert got["requires_grad"] is True and got["is_leaf"] is False


@pytest.mark.parametrize("method", ["uniform_", "normal_"])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_random_fill_is_in_place_and_keeps_shape_and_dtype(ours, method, dtype):
    """uniform_(a, b) / normal_(mean, std) on a non-leaf: returns self, same shape and dtype,
    values from the right distribution, version bumped by one."""
    x = ours.tensor(np.zeros((40, 50), dtype=dtype), requires_grad=True)
    y = x * 1.0
    before = y._version
    if method == "uniform_":
        returned = y.uniform_(-2.0, 3.0)
    else:
        returned = y.normal_(5.0, 0.1)
    assert returned is y
    values = ours.numpy(y)
    assert tuple(y.shape) == (40, 50) and values.dtype == dtype
    if method == "uniform_":
        assert values.min() >= -2.0 and values.max() < 3.0
        assert values.min() < -1.5 and values.max() > 2.5  # spread over the range
    else:
        assert abs(values.mean() - 5.0) < 0.02 and abs(values.std() - 0.1) < 0.01
    assert y._version == before + 1


# ---- 2. augmented operators -------------------------------------------------------------------
def _iadd(y, a):
    y += a
    return y


def _isub(y, a):
    y -= a
    return y


def _imul(y, a):
    y *= a
    return y


def _idiv(y, a):
    y /= a
    return y


AUGMENTED = {"+=": _iadd, "-=": _isub, "*=": _imul, "/=": _idiv}


@pytest.mark.parametrize("operand", ["scalar", "row_requiring_grad", "same_shape_constant"])
@pytest.mark.parametrize("symbol", list(AUGMENTED))
def test_augmented_operator_keeps_object_and_matches_torch(ours, tfw, symbol, operand):
    """y op= a is in place: the same Python object, torch's value and gradients."""
    def program(fw):
        x = fw.leaf(X_MIXED)
        w = fw.leaf(ROW_POS)
        arg = {"scalar": 2.5, "row_requiring_grad": w, "same_shape_constant": fw.tensor(X_POS)}[operand]
        y = x * 1.0
        identity = id(y)
        y = AUGMENTED[symbol](y, arg)
        loss_of(fw, y).backward()
        return {"same object": id(y) == identity, "version": y._version, "y": fw.numpy(y),
                "x.grad": grad_of(fw, x), "w.grad": grad_of(fw, w)}

    assert both(ours, tfw, program)["same object"] is True


@pytest.mark.parametrize("symbol", list(AUGMENTED))
def test_augmented_operator_on_plain_tensor_keeps_object(ours, tfw, symbol):
    """On a tensor without grad, op= still writes in place (same object, version 1)."""
    def program(fw):
        t = fw.tensor(X_POS)
        alias = t
        t = AUGMENTED[symbol](t, 3.0)
        return {"same object": t is alias, "version": t._version, "t": fw.numpy(t)}

    got = both(ours, tfw, program)
    assert got["same object"] is True and got["version"] == 1


def test_imatmul_rebinds_like_torch(ours, tfw):
    """a @= b: torch has no in-place matmul, so the name is rebound to a new tensor and the old
    object keeps its value and version."""
    a_values, b_values = X_MIXED, np.array([[1.0, 2.0], [0.5, -1.0], [-0.3, 0.7]])

    def program(fw):
        a = fw.tensor(a_values)
        old = a
        a @= fw.tensor(b_values)
        return {"same object": a is old, "a": fw.numpy(a), "old": fw.numpy(old),
                "old version": old._version}

    got = both(ours, tfw, program)
    assert got["same object"] is False
    np.testing.assert_allclose(got["a"], a_values @ b_values)


def test_imatmul_on_leaf_requiring_grad_is_allowed_and_differentiable(ours, tfw):
    """x @= b on a leaf that requires grad does not raise (it is not in place); the new x is a
    non-leaf and the original leaf gets torch's gradient."""
    b_values = np.array([[1.0, 2.0], [0.5, -1.0], [-0.3, 0.7]])

    def program(fw):
        x = fw.leaf(X_MIXED)
        original = x
        x @= fw.leaf(b_values)
        flags = {"is_leaf": x.is_leaf, "original is leaf": original.is_leaf}
        (x * x).sum().backward()
        return {**flags, "x": fw.numpy(x), "original.grad": grad_of(fw, original)}

    got = both(ours, tfw, program)
    assert got["is_leaf"] is False and got["original is leaf"] is True


# ---- 3. __setitem__ and in place on views -----------------------------------------------------
def _set_int_number(fw, y, v):
    y[1] = 5.0


def _set_slice_tensor(fw, y, v):
    y[:, 1:3] = v[:, :2]


def _set_slice_broadcast(fw, y, v):
    y[1:, :] = v[0]


def _set_mask_number(fw, y, v):
    y[fw.tensor(X34 > 0.1)] = 0.5


def _set_comparison_mask(fw, y, v):
    y[y > 0.1] = -0.25


def _set_int_array_tensor(fw, y, v):
    y[fw.tensor(np.array([2, 0]))] = v[:2]


def _set_int_pair(fw, y, v):
    y[0, 3] = v[1, 1]


def _iadd_column(fw, y, v):
    y[:, 1] += 3


def _iadd_column_tensor(fw, y, v):
    y[:, 1] += v[:, 2]


def _imul_row_tensor(fw, y, v):
    y[0] *= v[2]


SETITEM = {f.__name__[1:]: f for f in (_set_int_number, _set_slice_tensor, _set_slice_broadcast,
                                        _set_mask_number, _set_comparison_mask,
                                        _set_int_array_tensor, _set_int_pair, _iadd_column,
                                        _iadd_column_tensor, _imul_row_tensor)}


@pytest.mark.parametrize("name", list(SETITEM))
def test_setitem_on_nonleaf_matches_torch(ours, tfw, name):
    """y[index] = value (number or tensor) and y[index] op= value on y = x * 1: y's value, and
    the gradients of x (the old value) and v (the assigned tensor) are torch's."""
    def program(fw):
        x, v = fw.leaf(X34), fw.leaf(W34)
        y = x * 1.0
        identity = id(y)
        SETITEM[name](fw, y, v)
        loss_of(fw, y, weights=W34 + 0.5).backward()
        return {"same object": id(y) == identity, "y": fw.numpy(y), "x.grad": grad_of(fw, x),
                "v.grad": grad_of(fw, v)}

    both(ours, tfw, program)


def test_setitem_tensor_requiring_grad_into_plain_tensor(ours, tfw):
    """t (no grad)[1:] = v (requires grad): t joins the graph (non-leaf) and v gets torch's grad."""
    def program(fw):
        t, v = fw.tensor(np.zeros((3, 4))), fw.leaf(W34)
        t[1:] = v[:2]
        flags = {"requires_grad": t.requires_grad, "is_leaf": t.is_leaf}
        loss_of(fw, t, weights=W34).backward()
        return {**flags, "t": fw.numpy(t), "v.grad": grad_of(fw, v)}

    got = both(ours, tfw, program)
    assert got["requires_grad"] is True and got["is_leaf"] is False


def _view_row_mul(fw, y, w):
    v = y[0]
    v.mul_(2.0)
    return v


def _view_transpose_add(fw, y, w):
    v = y.transpose(0, 1)[1]
    v.add_(w[0, :3])
    return v


def _view_slice_exp(fw, y, w):
    v = y[1:, 2:]
    v.exp_()
    return v


def _view_reshape_mul(fw, y, w):
    v = y.reshape(-1)[3:7]
    v.mul_(w[1])
    return v


def _view_column_clamp(fw, y, w):
    v = y[:, 0]
    v.clamp_(-0.5, 0.2)
    return v


def _view_of_view_sigmoid(fw, y, w):
    v = y[1:][0]
    v.sigmoid_()
    return v


def _base_changed_after_view(fw, y, w):
    v = y[0]
    y.mul_(w)  # the view now sees the new values; backward through v follows torch
    return v


VIEWS = {f.__name__[1:]: f for f in (_view_row_mul, _view_transpose_add, _view_slice_exp,
                                      _view_reshape_mul, _view_column_clamp, _view_of_view_sigmoid,
                                      _base_changed_after_view)}


@pytest.mark.parametrize("name", list(VIEWS))
def test_inplace_on_view_of_nonleaf_updates_base_and_grads(ours, tfw, name):
    """In place through a view of y = x * 1 (or on y while a view exists): the base's value and
    the view's value are torch's, and so are the gradients of x and w through a loss that uses
    both the base and the view."""
    def program(fw):
        x, w = fw.leaf(X34), fw.leaf(W34)
        y = x * 1.0
        v = VIEWS[name](fw, y, w)
        values = {"y": fw.numpy(y), "view": fw.numpy(v)}
        (loss_of(fw, y, weights=W34 + 0.5) + (v * v).sum()).backward()
        return {**values, "x.grad": grad_of(fw, x), "w.grad": grad_of(fw, w)}

    both(ours, tfw, program)


# ---- 4. leaf rules ----------------------------------------------------------------------------
LEAF_MESSAGE = "a leaf Variable that requires grad is being used in an in-place operation."
VIEW_MESSAGE = "a view of a leaf Variable that requires grad is being used in an in-place operation."


def _leaf_setitem_int(fw, w):
    w[0] = 5.0


def _leaf_setitem_mask(fw, w):
    w[fw.tensor(X_MIXED > 0)] = 0.0


def _leaf_setitem_array(fw, w):
    w[fw.tensor(np.array([1]))] = fw.tensor(ROW)


def _leaf_view_iadd(fw, w):
    w[:, 1] += 1.0


LEAF_OPS = {f"method {name}": op for name, (_, op) in INPLACE.items()}
LEAF_OPS.update({
    "method uniform_": lambda fw, w: w.uniform_(0.0, 1.0),
    "method normal_": lambda fw, w: w.normal_(0.0, 1.0),
    **{f"operator {s}": (lambda f: lambda fw, w: f(w, 2.0))(f) for s, f in AUGMENTED.items()},
    "setitem int": _leaf_setitem_int,
    "setitem mask": _leaf_setitem_mask,
    "setitem int array": _leaf_setitem_array,
    "view w[0].add_": lambda fw, w: w[0].add_(1.0),
    "view transpose mul_": lambda fw, w: w.transpose(0, 1)[1].mul_(2.0),
    "view w[:, 1] +=": _leaf_view_iadd,
})


@pytest.mark.parametrize("name", list(LEAF_OPS))
def test_inplace_on_leaf_requiring_grad_raises_before_writing(ours, tfw, name):
    """In place on a leaf that requires grad (or a view of one) in grad mode raises torch's
    RuntimeError, and nothing was written: same values, same version."""
    def program(fw):
        w = fw.leaf(X_POS)
        try:
            LEAF_OPS[name](fw, w)
            message = None
        except RuntimeError as error:
            message = str(error)
        return {"message": message, "w": fw.numpy(w), "version": w._version}

    expected = program(tfw)
    assert expected["message"] in (LEAF_MESSAGE, VIEW_MESSAGE)  # the table itself is right
    got = program(ours)
    assert got["message"] is not None, "no RuntimeError"
    assert expected["message"] in got["message"]
    assert_same({**got, "message": None}, {**expected, "message": None})


def test_inplace_on_leaf_without_grad_is_allowed(ours):
    """A leaf that does not require grad is written in place freely."""
    t = ours.tensor(X_POS)
    t.mul_(2.0)
    t += 1.0
    t[0] = 0.0
    np.testing.assert_allclose(ours.numpy(t), np.vstack([np.zeros(3), X_POS[1] * 2 + 1]))
    assert t._version == 3 and t.is_leaf and not t.requires_grad


def test_no_grad_inplace_on_leaf_keeps_it_a_leaf(ours, tfw):
    """Under no_grad, p -= lr * p.grad changes p in place: same object, a held reference to its
    old data sees the new values, still a leaf requiring grad with grad_fn None, version + 1."""
    def program(fw):
        p = fw.leaf(X_MIXED)
        loss_of(fw, p).backward()
        identity, data_ref, version = id(p), p.data, p._version
        with fw.no_grad():
            p -= 0.1 * p.grad
        return {"same object": id(p) == identity, "is_leaf": p.is_leaf,
                "requires_grad": p.requires_grad, "grad_fn is None": p.grad_fn is None,
                "bump": p._version - version, "p": fw.numpy(p), "old data ref": fw.array(data_ref)}

    got = both(ours, tfw, program)
    assert got["same object"] and got["is_leaf"] and got["requires_grad"] and got["grad_fn is None"]
    np.testing.assert_allclose(got["p"], X_MIXED - 0.1 * 2 * X_MIXED * WEIGHTS)


def test_no_grad_inplace_on_nonleaf_is_not_recorded(ours, tfw):
    """y = x * 2; under no_grad y.add_(1) changes y's value but not the graph: x.grad is torch's."""
    def program(fw):
        x = fw.leaf(X_MIXED)
        y = x * 2.0
        with fw.no_grad():
            y.add_(1.0)
            y[0, 0] = 7.0
        loss_of(fw, y).backward()
        return {"y": fw.numpy(y), "x.grad": grad_of(fw, x), "version": y._version}

    both(ours, tfw, program)


def _sgd_regression(fw, steps=60, lr=0.1):
    rng = np.random.default_rng(3)
    X = rng.standard_normal((32, 3))
    Y = X @ np.array([1.5, -2.0, 0.5]) + 0.3
    w, b = fw.leaf(np.zeros(3)), fw.leaf(np.zeros(1))
    w_id, b_id = id(w), id(b)
    inputs, targets = fw.tensor(X), fw.tensor(Y)
    for _ in range(steps):
        loss = ((inputs @ w + b - targets) ** 2).mean()
        loss.backward()
        with fw.no_grad():
            w -= lr * w.grad
            b -= lr * b.grad
        w.grad = None
        b.grad = None
    return {"w": fw.numpy(w), "b": fw.numpy(b), "loss": fw.numpy(loss),
            "same objects": id(w) == w_id and id(b) == b_id,
            "leaves": w.is_leaf and b.is_leaf and w.requires_grad and b.requires_grad,
            "version": w._version}


def test_hand_written_sgd_converges_like_torch(ours, tfw):
    """A hand-written SGD loop (with no_grad: p -= lr * p.grad) on linear regression: torch's
    weights after 60 steps, the same leaf objects, one version bump per step."""
    got = both(ours, tfw, _sgd_regression, rtol=1e-10, atol=1e-12)
    assert got["same objects"] and got["leaves"] and got["version"] == 60
    np.testing.assert_allclose(got["w"], [1.5, -2.0, 0.5], atol=0.05)


# ---- 5. version counters ----------------------------------------------------------------------
def _setitem_steps():
    def set_int(fw, t): t[0] = 2.0
    def set_slice(fw, t): t[1:] = fw.tensor(np.ones((1, 3)))
    def set_mask(fw, t): t[fw.tensor(X_MIXED > 0)] = 3.0
    def set_array(fw, t): t[fw.tensor(np.array([1]))] = fw.tensor(ROW_POS)
    def iadd_item(fw, t): t[0, 1] += 3.0   # getitem, in place on the view, setitem: + 2
    return [set_int, set_slice, set_mask, set_array, iadd_item]


def _no_bump_steps():
    def data_item(fw, t): t.data[0, 0] = 4.0
    def data_iadd(fw, t): t.data += 1.0
    def read(fw, t): (t + 1.0, t.exp(), t.sum(), t[0], t * t)
    return [data_item, data_iadd, read]


VERSION_STEPS = ([op for _, op in INPLACE.values()] + [lambda fw, t: t.uniform_(0.5, 1.0),
                                                         lambda fw, t: t.normal_(1.0, 0.1)]
                 + [(lambda f: lambda fw, t: f(t, 1.5))(f) for f in AUGMENTED.values()]
                 + _setitem_steps() + _no_bump_steps())


@pytest.mark.parametrize("kind", ["plain", "nonleaf"])
def test_version_counts_every_inplace_write_like_torch(ours, tfw, kind):
    """_version starts at 0 and goes up with each in-place method, operator and setitem, exactly
    as torch's does; reads and writes through .data leave it alone."""
    def program(fw):
        t = fw.tensor(X_POS) if kind == "plain" else fw.leaf(X_POS) * 1.0
        trace = [t._version]
        for step in VERSION_STEPS:
            t.data[...] = fw.tensor(X_POS)  # fresh positive values (a .data write: no bump)
            step(fw, t)
            trace.append(t._version)
        return {"trace": trace}

    got = both(ours, tfw, program)
    assert got["trace"][0] == 0 and got["trace"][-1] > len(INPLACE)


VIEW_MAKERS = {
    "row": lambda fw, t: t[0],
    "column": lambda fw, t: t[:, 1],
    "slice": lambda fw, t: t[1:],
    "transpose": lambda fw, t: t.transpose(0, 1),
    "permute": lambda fw, t: t.permute(1, 0),
    "reshape": lambda fw, t: t.reshape(6),
    "view": lambda fw, t: t.view(3, 2),
    "flatten": lambda fw, t: t.flatten(),
    "row_of_transpose": lambda fw, t: t.transpose(0, 1)[2],
    "int_array_index (a copy)": lambda fw, t: t[fw.tensor(np.array([1, 0]))],
    "flip (a copy)": lambda fw, t: t.flip(0),
}


@pytest.mark.parametrize("kind", ["plain", "nonleaf"])
@pytest.mark.parametrize("name", list(VIEW_MAKERS))
def test_views_share_version_and_data_with_base_like_torch(ours, tfw, name, kind):
    """A view and its base share one version counter and one storage (writes either way show
    in both); a copy (advanced indexing, flip) shares neither. Everything as in torch."""
    def program(fw):
        t = fw.tensor(X_POS) if kind == "plain" else fw.leaf(X_POS) * 1.0
        v = VIEW_MAKERS[name](fw, t)
        trace = [(t._version, v._version)]
        v.add_(1.0)
        trace.append((t._version, v._version))
        t.mul_(2.0)
        trace.append((t._version, v._version))
        return {"trace": trace, "t": fw.numpy(t), "v": fw.numpy(v)}

    both(ours, tfw, program)


def test_data_writes_do_not_bump_version(ours):
    """Writes through .data (a Tensor over the same memory) are invisible to the version
    counter, as in torch."""
    t = ours.leaf(X_MIXED) * 1.0
    t.data[0, 0] = 9.0
    t.data *= 2.0
    assert t._version == 0 and ours.numpy(t)[0, 0] == 18.0


def test_out_of_place_result_starts_at_version_zero(ours):
    """A fresh op output is at version 0 whatever its inputs' versions."""
    t = ours.tensor(X_POS)
    t.add_(1.0)
    t.add_(1.0)
    assert t._version == 2 and (t * 2.0)._version == 0 and t.exp()._version == 0


INIT_CALLS = {
    "uniform_": lambda init, p: init.uniform_(p, -0.5, 0.5),
    "zeros_": lambda init, p: init.zeros_(p),
    "ones_": lambda init, p: init.ones_(p),
    "kaiming_uniform_": lambda init, p: init.kaiming_uniform_(p, a=5 ** 0.5),
}


@pytest.mark.parametrize("name", list(INIT_CALLS))
def test_nn_init_bumps_version(ours, tfw, name):
    """nn.init functions write in place (no error on a Parameter) and bump its version."""
    for fw in (tfw, ours):
        p = fw.param(np.full((3, 4), 0.25))
        before = p._version
        returned = INIT_CALLS[name](fw.init, p)
        assert returned is p
        assert p._version > before, fw.name
        assert p.is_leaf and p.requires_grad


def test_load_state_dict_bumps_versions(ours, tfw):
    """Module.load_state_dict copies into the parameters in place and bumps their versions."""
    for fw in (tfw, ours):
        model, other = fw.linear(3, 2), fw.linear(3, 2)
        before = [p._version for p in model.parameters()]
        model.load_state_dict(other.state_dict())
        for p, q, v in zip(model.parameters(), other.parameters(), before):
            assert p._version > v, fw.name
            np.testing.assert_array_equal(fw.numpy(p), fw.numpy(q))


OPTIMIZERS = {
    "SGD": lambda fw, params: fw.optim.SGD(params, lr=0.1),
    "SGD momentum": lambda fw, params: fw.optim.SGD(params, lr=0.1, momentum=0.9),
    "Adam": lambda fw, params: fw.optim.Adam(params, lr=0.1),
}


@pytest.mark.parametrize("name", list(OPTIMIZERS))
def test_optimizer_step_bumps_versions(ours, tfw, name):
    """optimizer.step() writes the parameters in place: each version goes up, twice for two steps."""
    for fw in (tfw, ours):
        model = fw.linear(3, 2)
        opt = OPTIMIZERS[name](fw, model.parameters())
        model(fw.tensor(X_MIXED)).sum().backward()
        versions = [p._version for p in model.parameters()]
        opt.step()
        middle = [p._version for p in model.parameters()]
        opt.step()
        after = [p._version for p in model.parameters()]
        assert all(a < b < c for a, b, c in zip(versions, middle, after)), fw.name


# ---- 6. "modified by an inplace operation" ----------------------------------------------------
# (id, input arrays, forward(fw, *inputs), what to modify: "out" or an input's position,
#  our op's class name or None, indices of inputs that are constants rather than x * 1)
IMG = np.linspace(-1.0, 1.0, 32).reshape(1, 2, 4, 4) ** 3
KER = np.linspace(-0.5, 0.7, 54).reshape(3, 2, 3, 3)
M32 = np.array([[1.0, 2.0], [0.5, -1.0], [-0.3, 0.7]])


def _cross_entropy(fw, logits):
    return fw.F.cross_entropy(logits, fw.labels([2, 0]))


SCENARIOS = [
    # outputs saved: exp, sqrt, tanh, sigmoid, relu, log_softmax, softmax
    ("exp: output", [X_MIXED], lambda fw, a: a.exp(), "out", "Exp", ()),
    ("sqrt: output", [X_POS], lambda fw, a: a.sqrt(), "out", "Sqrt", ()),
    ("tanh: output", [X_MIXED], lambda fw, a: a.tanh(), "out", "Tanh", ()),
    ("sigmoid: output", [X_MIXED], lambda fw, a: a.sigmoid(), "out", "Sigmoid", ()),
    ("relu: output", [X_MIXED], lambda fw, a: a.relu(), "out", "ReLU", ()),
    ("F.relu: output", [X_MIXED], lambda fw, a: fw.F.relu(a), "out", "ReLU", ()),
    ("log_softmax: output", [X_MIXED], lambda fw, a: a.log_softmax(1), "out", "LogSoftmax", ()),
    ("softmax: output", [X_MIXED], lambda fw, a: a.softmax(1), "out", None, ()),
    ("exp: input", [X_MIXED], lambda fw, a: a.exp(), 0, None, ()),
    ("sqrt: input", [X_POS], lambda fw, a: a.sqrt(), 0, None, ()),
    ("tanh: input", [X_MIXED], lambda fw, a: a.tanh(), 0, None, ()),
    ("sigmoid: input", [X_MIXED], lambda fw, a: a.sigmoid(), 0, None, ()),
    ("relu: input", [X_MIXED], lambda fw, a: a.relu(), 0, None, ()),
    ("log_softmax: input", [X_MIXED], lambda fw, a: a.log_softmax(1), 0, None, ()),
    ("softmax: input", [X_MIXED], lambda fw, a: a.softmax(1), 0, None, ()),
    # inputs saved: log, abs, arctan, pow, pools, max
    ("log: input", [X_POS], lambda fw, a: a.log(), 0, "Log", ()),
    ("abs: input", [X_MIXED], lambda fw, a: a.abs(), 0, "Abs", ()),
    ("arctan: input", [X_MIXED], lambda fw, a: a.arctan(), 0, "Arctan", ()),
    ("pow 2: input", [X_MIXED], lambda fw, a: a ** 2, 0, "Pow", ()),
    ("pow 0.5: input", [X_POS], lambda fw, a: a ** 0.5, 0, "Pow", ()),
    ("pow 1: input", [X_MIXED], lambda fw, a: a ** 1, 0, None, ()),
    ("pow 0: input", [X_MIXED], lambda fw, a: a ** 0, 0, None, ()),
    ("avg_pool2d: input", [IMG], lambda fw, a: fw.F.avg_pool2d(a, 2), 0, "AvgPool2d", ()),
    ("max_pool2d: input", [IMG], lambda fw, a: fw.F.max_pool2d(a, 2), 0, "MaxPool2d", ()),
    ("max: input", [X_MIXED], lambda fw, a: a.max(), 0, "Max", ()),
    ("max(dim): input", [X_MIXED], lambda fw, a: fw.amax(a, 1), 0, "Max", ()),
    ("log: output", [X_POS], lambda fw, a: a.log(), "out", None, ()),
    ("abs: output", [X_MIXED], lambda fw, a: a.abs(), "out", None, ()),
    ("arctan: output", [X_MIXED], lambda fw, a: a.arctan(), "out", None, ()),
    ("pow 2: output", [X_MIXED], lambda fw, a: a ** 2, "out", None, ()),
    ("avg_pool2d: output", [IMG], lambda fw, a: fw.F.avg_pool2d(a, 2), "out", None, ()),
    ("max_pool2d: output", [IMG], lambda fw, a: fw.F.max_pool2d(a, 2), "out", None, ()),
    ("max: output", [X_MIXED], lambda fw, a: a.max(), "out", None, ()),
    ("clamp: input", [X_MIXED], lambda fw, a: a.clamp(-1.0, 1.0), 0, None, ()),
    ("clamp: output", [X_MIXED], lambda fw, a: a.clamp(-1.0, 1.0), "out", None, ()),
    # binary ops: what is saved depends on which side requires grad
    ("mul: left", [X_MIXED, OTHER], lambda fw, a, b: a * b, 0, "Mul", ()),
    ("mul: right", [X_MIXED, OTHER], lambda fw, a, b: a * b, 1, "Mul", ()),
    ("mul by number: input", [X_MIXED], lambda fw, a: a * 2.0, 0, None, ()),
    ("number * x: input", [X_MIXED], lambda fw, a: 2.0 * a, 0, None, ()),
    ("mul by constant: input", [X_MIXED, OTHER], lambda fw, a, c: a * c, 0, None, (1,)),
    ("mul by constant: constant", [X_MIXED, OTHER], lambda fw, a, c: a * c, 1, "Mul", (1,)),
    ("div: numerator", [X_MIXED, X_POS], lambda fw, a, b: a / b, 0, "Div", ()),
    ("div: denominator", [X_MIXED, X_POS], lambda fw, a, b: a / b, 1, "Div", ()),
    ("div by constant: numerator", [X_MIXED, X_POS], lambda fw, a, c: a / c, 0, None, (1,)),
    ("div by constant: constant", [X_MIXED, X_POS], lambda fw, a, c: a / c, 1, "Div", (1,)),
    ("constant / x: constant", [OTHER, X_POS], lambda fw, c, b: c / b, 0, "Div", (0,)),
    ("constant / x: denominator", [OTHER, X_POS], lambda fw, c, b: c / b, 1, "Div", (0,)),
    ("div by number: input", [X_MIXED], lambda fw, a: a / 2.0, 0, None, ()),
    ("matmul: left", [X_MIXED, M32], lambda fw, a, b: a @ b, 0, "MatMul", ()),
    ("matmul: right", [X_MIXED, M32], lambda fw, a, b: a @ b, 1, "MatMul", ()),
    ("matmul by constant: left", [X_MIXED, M32], lambda fw, a, c: a @ c, 0, None, (1,)),
    ("matmul by constant: constant", [X_MIXED, M32], lambda fw, a, c: a @ c, 1, "MatMul", (1,)),
    ("matmul: output", [X_MIXED, M32], lambda fw, a, b: a @ b, "out", None, ()),
    ("conv2d: input", [IMG, KER], lambda fw, a, k: fw.F.conv2d(a, k), 0, "Conv2d", ()),
    ("conv2d: weight", [IMG, KER], lambda fw, a, k: fw.F.conv2d(a, k), 1, "Conv2d", ()),
    ("conv2d constant weight: input", [IMG, KER], lambda fw, a, k: fw.F.conv2d(a, k), 0, "Conv2d", (1,)),
    ("conv2d constant input: weight", [IMG, KER], lambda fw, a, k: fw.F.conv2d(a, k), 1, "Conv2d", (0,)),
    ("conv2d: output", [IMG, KER], lambda fw, a, k: fw.F.conv2d(a, k), "out", None, ()),
    ("add: input", [X_MIXED, OTHER], lambda fw, a, b: a + b, 0, None, ()),
    ("sub: input", [X_MIXED, OTHER], lambda fw, a, b: a - b, 1, None, ()),
    ("neg: input", [X_MIXED], lambda fw, a: -a, 0, None, ()),
    # nothing of the input saved: reductions, movement, indexing, cross_entropy
    ("sum: input", [X_MIXED], lambda fw, a: a.sum(), 0, None, ()),
    ("mean(dim): input", [X_MIXED], lambda fw, a: a.mean(dim=1), 0, None, ()),
    ("reshape: input", [X_MIXED], lambda fw, a: a.reshape(3, 2) * 1.0, 0, None, ()),
    ("transpose: input", [X_MIXED], lambda fw, a: a.transpose(0, 1) * 1.0, 0, None, ()),
    ("index: input", [X_MIXED], lambda fw, a: a[1] * 1.0, 0, None, ()),
    ("cross_entropy: input", [X_MIXED], _cross_entropy, 0, None, ()),
    ("cross_entropy: output", [X_MIXED], _cross_entropy, "out", None, ()),
    ("mse_loss: input", [X_MIXED], lambda fw, a: fw.F.mse_loss(a, fw.tensor(OTHER)), 0, None, ()),
    # torch saves gather's input and nll_loss's log-probabilities: refused as in torch
    ("gather: input", [X_MIXED], lambda fw, a: a.gather(1, fw.labels([[0], [2]])), 0, "Gather", ()),
    ("nll_loss: input", [X_MIXED], lambda fw, a: fw.F.nll_loss(a, fw.labels([2, 0])), 0, "NLLLoss",
     ()),
]


def _version_scenario(fw, arrays, forward, target, constants):
    """Forward, one in-place write to the target (a fresh tensor: version 0 -> 1), then
    backward; returns (error message or None, the leaves' grads, the written tensor's shape)."""
    leaves, inputs = [], []
    for i, array in enumerate(arrays):
        if i in constants:
            inputs.append(fw.tensor(array))
        else:
            leaves.append(fw.leaf(array))
            inputs.append(leaves[-1] * 1.0)
    out = forward(fw, *inputs)
    modified = out if target == "out" else inputs[target]
    modified.add_(0.5)
    try:
        out.sum().backward()
        message = None
    except RuntimeError as error:
        message = str(error)
    return message, [grad_of(fw, leaf) for leaf in leaves], tuple(modified.shape)


@pytest.mark.parametrize("scenario", SCENARIOS, ids=[s[0] for s in SCENARIOS])
def test_modified_saved_tensor_raises_iff_torch_does(ours, tfw, scenario):
    """Write in place into an op's input or output between forward and backward: backward raises
    "modified by an inplace operation ... is at version 1; expected version 0 instead" naming the
    op exactly when torch raises; otherwise it gives torch's gradients."""
    _, arrays, forward, target, op_name, constants = scenario
    expected, expected_grads, shape = _version_scenario(tfw, arrays, forward, target, constants)
    if expected is not None:  # the scenario itself is what this test means
        assert "modified by an inplace operation" in expected
        assert "is at version 1; expected version 0 instead" in expected
    message, grads, _ = _version_scenario(ours, arrays, forward, target, constants)
    if expected is None:
        assert message is None, f"raised, but torch does not: {message}"
        assert_same({i: g for i, g in enumerate(grads)},
                    {i: g for i, g in enumerate(expected_grads)}, rtol=1e-10)
        return
    assert message is not None, "no RuntimeError, but torch raises"
    assert "one of the variables needed for gradient computation has been modified by an " \
           "inplace operation" in message
    assert "is at version 1; expected version 0 instead" in message
    assert f"[float64 [{', '.join(str(n) for n in shape)}]]" in message
    if op_name is not None:
        assert op_name in message, f"the message does not name {op_name}: {message}"


@pytest.mark.parametrize("name", ["SGD", "Adam"])
def test_optimizer_step_between_forward_and_backward_raises(ours, tfw, name):
    """model = Linear; out = model(x); opt.step(); out.sum().backward() raises the version error
    (as in torch, with x requiring grad) before any .grad is touched."""
    def program(fw):
        model = fw.linear(3, 2)
        x = fw.leaf(X_MIXED)
        opt = OPTIMIZERS[name](fw, model.parameters())
        model(x).sum().backward()
        out = model(x)
        opt.step()
        grads = [grad_of(fw, p) for p in list(model.parameters()) + [x]]
        try:
            out.sum().backward()
            message = None
        except RuntimeError as error:
            message = str(error)
        after = [grad_of(fw, p) for p in list(model.parameters()) + [x]]
        return message, grads, after

    expected = program(tfw)
    assert expected[0] is not None and "modified by an inplace operation" in expected[0]
    message, grads, after = program(ours)
    assert message is not None and "modified by an inplace operation" in message
    for before, now in zip(grads, after):
        np.testing.assert_array_equal(now, before)


# ---- 7. random programs against torch ---------------------------------------------------------
def _setitem_slice(fw, t, w):
    t[:, 1:] = w[1:] * 2.0
    return t


def _no_grad_mul(fw, t, w):
    with fw.no_grad():
        t.mul_(0.5)
    return t


def _no_grad_setitem(fw, t, w):
    with fw.no_grad():
        t[0] = 0.25
    return t


def _view_mul(fw, t, w):
    t[0].mul_(2.0)
    return t


def _view_add_w(fw, t, w):
    t.transpose(0, 1)[1].add_(w[:2])
    return t


def _view_iadd(fw, t, w):
    t[:, 2] += 1.0
    return t


STEPS = {
    # out of place
    "mul_const": lambda fw, t, w: t * 1.5,
    "add_w": lambda fw, t, w: t + w,
    "exp": lambda fw, t, w: t.exp(),
    "tanh": lambda fw, t, w: t.tanh(),
    "sigmoid": lambda fw, t, w: t.sigmoid(),
    "relu": lambda fw, t, w: t.relu(),
    "pow2": lambda fw, t, w: t ** 2,
    "sum_broadcast": lambda fw, t, w: t + t.sum(dim=1, keepdim=True) * 0.25,
    # in place on the current tensor
    "add_": lambda fw, t, w: t.add_(w),
    "mul_": lambda fw, t, w: t.mul_(-0.5),
    "sub_": lambda fw, t, w: t.sub_(0.75),
    "div_": lambda fw, t, w: t.div_(2.0),
    "exp_": lambda fw, t, w: t.exp_(),
    "tanh_": lambda fw, t, w: t.tanh_(),
    "sigmoid_": lambda fw, t, w: t.sigmoid_(),
    "relu_": lambda fw, t, w: t.relu_(),
    "clamp_": lambda fw, t, w: t.clamp_(-1.0, 1.0),
    "setitem_slice": _setitem_slice,
    # a no_grad section, views
    "no_grad_mul_": _no_grad_mul,
    "no_grad_setitem": _no_grad_setitem,
    "view_mul_": _view_mul,
    "view_add_w": _view_add_w,
    "view_iadd": _view_iadd,
    # an op that reads the current value, whose result joins the loss at the end (later
    # in-place writes must not reach back into it: its gradient goes to the value it read)
    "keep": None,
}


def run_program(fw, start, steps, x_values, w_values):
    """Interpret a program (a list of step names) on one framework; returns where it raised
    ("program", "backward" or None) and the final value and gradients."""
    x, w = fw.leaf(x_values), fw.leaf(w_values)
    peak = 0.0  # the largest |value| on the way (the test keeps away from overflow)
    try:
        t = x if start == "x" else x * 1.0
        kept = []
        for name in steps:
            if name == "keep":
                kept.append((t * t).sum() * 0.125)
                continue
            t = STEPS[name](fw, t, w)
            peak = max(peak, float(np.abs(fw.numpy(t)).max()))
    except RuntimeError:
        return {"raised": "program", "peak": peak}
    value = fw.numpy(t)
    try:
        loss = t.sum()
        for extra in kept:
            loss = loss + extra
        loss.backward()
    except RuntimeError:
        return {"raised": "backward", "peak": peak, "t": value}
    return {"raised": None, "peak": peak, "t": value, "x.grad": grad_of(fw, x),
            "w.grad": grad_of(fw, w)}


@settings(max_examples=60, deadline=None, database=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(start=st.sampled_from(["x", "x * 1"]),
       steps=st.lists(st.sampled_from(sorted(STEPS)), min_size=3, max_size=8),
       seed=st.integers(0, 2 ** 16))
def test_random_inplace_programs_match_torch(ours, tfw, start, steps, seed):
    """Random mixes of out-of-place ops, in-place ops, no_grad sections, in place on views and
    values read before being written in place ("keep"), run on both frameworks from the same leaves: the same error (or none), then the same
    value and x.grad / w.grad."""
    rng = np.random.default_rng(seed)
    x_values, w_values = rng.uniform(-1.5, 1.5, (2, 3)), rng.uniform(-1.0, 1.0, 3)
    expected = run_program(tfw, start, steps, x_values, w_values)
    assume(expected.pop("peak") < 50.0)  # stay clear of overflow in exp and friends
    event(f"torch raised in: {expected['raised']}")
    got = run_program(ours, start, steps, x_values, w_values)
    got.pop("peak")
    assert_same(got, expected, rtol=1e-10, atol=1e-12)


def test_augmented_assignment_with_an_array_rebinds_as_in_torch(torch):
    """``x += array``: no in-place op takes an array (torch's add_ refuses it), so Python falls
    back to ``x = x + array`` — a new tensor; the old one is unchanged."""
    from tinygrad_pool import tensor
    for fw in (torch, None):
        x = torch.zeros(2) if fw else tensor(np.zeros(2, np.float32))
        alias = x
        with warnings.catch_warnings():  # (torch's own __array_wrap__ deprecation warning)
            warnings.simplefilter("ignore", DeprecationWarning)
            x += np.ones(2, np.float32)
        assert x is not alias and alias.sum().item() == 0 and x.sum().item() == 2
    with pytest.raises(TypeError, match=r"add_\(\): argument 'other' must be Tensor or Number"):
        tensor(np.zeros(2)).add_(np.ones(2))


def test_a_refused_in_place_op_changes_nothing():
    """Every argument is checked before the write: data, version and node stay as they were."""
    from tinygrad_pool import tensor
    base = tensor(np.ones((2, 3), np.float32), requires_grad=True)
    x = base * 2
    node, data = x.grad_fn, x.numpy().copy()
    for bad in (lambda: x.add_(tensor(np.ones((3, 2), np.float32))),  # shape
                lambda: x.mul_("a"), lambda: x.sub_(tensor(np.ones(3, bool))),  # type, bool
                lambda: x.clamp_(min=1j), lambda: x.copy_(np.ones((2, 3))),
                lambda: x.uniform_(2.0, 1.0), lambda: x.normal_(0.0, -1.0)):
        with pytest.raises((TypeError, RuntimeError)):
            bad()
        assert x.grad_fn is node and x._version == 0
        np.testing.assert_array_equal(x.numpy(), data)
    ints = tensor(np.arange(6).reshape(2, 3))
    with pytest.raises(RuntimeError, match="add_: result type float32 can't be cast to the "
                                           "desired output type int64 of input"):
        ints.add_(1.5)
    np.testing.assert_array_equal(ints.numpy(), np.arange(6).reshape(2, 3))
