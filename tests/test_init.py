"""nn.init against torch.nn.init: the exact range or standard deviation each initializer draws
from (torch's own call recorded), the distributions themselves (bounds, mean and standard
deviation of large draws), gains, versions, dtypes, generators and errors."""
import math

import numpy as np
import pytest

import tinygrad_pool
from tinygrad_pool import Tensor, tensor
from tinygrad_pool.nn import init
from tinygrad_pool.nn.module import Parameter


class RecordingGenerator:
    """Stands in for a NumPy Generator: records what an initializer asks to draw from."""

    def __init__(self):
        self.calls = []

    def uniform(self, low, high, size):
        self.calls.append(("uniform", low, high))
        return np.zeros(size)

    def normal(self, loc, scale, size):
        self.calls.append(("normal", loc, scale))
        return np.zeros(size)


def torch_draw(torch, monkeypatch, name, shape, **kwargs):
    """(distribution, a, b) that torch.nn.init.<name> asks its tensor to draw from."""
    calls = []
    for method in ("uniform_", "normal_"):
        def record(tensor, first=0.0, second=1.0, *, generator=None, kind=method[:-1]):
            calls.append((kind, float(first), float(second)))
            return tensor

        monkeypatch.setattr(torch.Tensor, method, record)
    getattr(torch.nn.init, name)(torch.empty(shape), **kwargs)
    monkeypatch.undo()
    assert len(calls) == 1, calls
    return calls[0]


DRAWS = [
    ("uniform_", (3, 4), dict(a=-0.5, b=2.0)),
    ("normal_", (3, 4), dict(mean=1.0, std=0.3)),
    ("xavier_uniform_", (30, 20), {}),
    ("xavier_uniform_", (8, 4, 3, 3), dict(gain=2.5)),
    ("xavier_normal_", (30, 20), {}),
    ("xavier_normal_", (8, 4, 5), dict(gain=0.5)),
    ("kaiming_uniform_", (30, 20), {}),
    ("kaiming_uniform_", (30, 20), dict(a=math.sqrt(5))),
    ("kaiming_uniform_", (8, 4, 3, 3), dict(mode="fan_out", nonlinearity="relu")),
    ("kaiming_uniform_", (8, 4, 3), dict(nonlinearity="tanh")),
    ("kaiming_normal_", (30, 20), {}),
    ("kaiming_normal_", (8, 4, 3, 3), dict(a=0.2, mode="fan_out")),
    ("kaiming_normal_", (6, 7), dict(nonlinearity="selu")),
]


@pytest.mark.parametrize("name, shape, kwargs", DRAWS,
                         ids=[f"{n}-{i}" for i, (n, _, _) in enumerate(DRAWS)])
def test_each_draws_from_exactly_torchs_distribution(torch, monkeypatch, name, shape, kwargs):
    generator = RecordingGenerator()
    t = tensor(np.empty(shape, dtype=np.float32))
    assert getattr(init, name)(t, generator=generator, **kwargs) is t
    (ours,) = generator.calls
    theirs = torch_draw(torch, monkeypatch, name, shape, **kwargs)
    assert ours[0] == theirs[0]
    np.testing.assert_allclose(ours[1:], theirs[1:], rtol=1e-12)


def test_the_ranges_are_the_textbook_formulas():
    """The numbers behind the comparison above, from the papers: Glorot's b = gain·√(6/(fan_in +
    fan_out)), He's std = gain/√fan with b = √3·std."""
    def drawn(fn, shape, **kwargs):
        generator = RecordingGenerator()
        fn(tensor(np.empty(shape)), generator=generator, **kwargs)
        return generator.calls[0][1:]

    assert drawn(init.xavier_uniform_, (30, 20)) == pytest.approx((-math.sqrt(6 / 50),
                                                                   math.sqrt(6 / 50)))
    assert drawn(init.kaiming_normal_, (8, 4, 3, 3), nonlinearity="relu", mode="fan_out") == \
        pytest.approx((0.0, math.sqrt(2) / math.sqrt(8 * 9)))
    assert drawn(init.kaiming_uniform_, (5, 12), a=math.sqrt(5)) == \
        pytest.approx((-1 / math.sqrt(12), 1 / math.sqrt(12)))  # the layers' default


STATISTICS = [  # (initializer, kwargs, distribution, its parameters for a (400, 500) tensor)
    (init.uniform_, dict(a=-1.0, b=3.0), "uniform", (-1.0, 3.0)),
    (init.normal_, dict(mean=0.5, std=2.0), "normal", (0.5, 2.0)),
    (init.xavier_uniform_, dict(gain=2.0), "uniform", (-2 * math.sqrt(6 / 900),
                                                       2 * math.sqrt(6 / 900))),
    (init.xavier_normal_, {}, "normal", (0.0, math.sqrt(2 / 900))),
    (init.kaiming_uniform_, dict(nonlinearity="relu"), "uniform", (-math.sqrt(6 / 500),
                                                                   math.sqrt(6 / 500))),
    (init.kaiming_normal_, dict(mode="fan_out", nonlinearity="relu"), "normal",
     (0.0, math.sqrt(2 / 400))),
]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("fn, kwargs, kind, params", STATISTICS,
                         ids=[f"{s[0].__name__}-{i}" for i, s in enumerate(STATISTICS)])
def test_large_draws_have_the_distributions_statistics(fn, kwargs, kind, params, dtype):
    t = Parameter(np.empty((400, 500), dtype=dtype))
    fn(t, generator=np.random.default_rng(0), **kwargs)
    values = t.numpy()
    assert values.dtype == dtype
    if kind == "uniform":
        low, high = params
        assert low <= values.min() < low + 0.001 * (high - low)
        assert high - 0.001 * (high - low) < values.max() <= high
        mean, std = (low + high) / 2, (high - low) / math.sqrt(12)
    else:
        mean, std = params
        # a normal's tails: 0.27% of draws lie beyond 3 std (± 0.012% for 200,000 of them)
        assert 0.0021 < np.mean(np.abs(values - mean) > 3 * std) < 0.0033
    assert abs(values.mean() - mean) < 0.01 * std
    assert values.std() == pytest.approx(std, rel=0.01)


def test_constant_fills():
    t = tensor(np.empty((2, 3), dtype=np.float32))
    assert init.constant_(t, 0.25) is t and np.all(t.numpy() == 0.25) and t.dtype == np.float32
    init.zeros_(t)
    assert not t.numpy().any()
    init.ones_(t)
    assert np.all(t.numpy() == 1)


@pytest.mark.parametrize("fill", [
    lambda t: init.uniform_(t), lambda t: init.normal_(t), lambda t: init.constant_(t, 2),
    lambda t: init.zeros_(t), lambda t: init.ones_(t), lambda t: init.xavier_uniform_(t),
    lambda t: init.xavier_normal_(t), lambda t: init.kaiming_uniform_(t),
    lambda t: init.kaiming_normal_(t)])
def test_each_is_an_inplace_write_that_a_saved_graph_notices(torch, fill):
    weight = Parameter(np.ones((3, 2)))
    x = tensor(np.ones((4, 2)), requires_grad=True)
    out = x @ weight.T  # matmul saves the weight for x's gradient
    version = weight._version
    fill(weight)
    assert weight._version == version + 1
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        out.sum().backward()
    # torch: the same
    tw = torch.nn.Parameter(torch.ones(3, 2, dtype=torch.float64))
    tout = torch.ones(4, 2, dtype=torch.float64, requires_grad=True) @ tw.T
    torch.nn.init.uniform_(tw)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        tout.sum().backward()


def test_generators_make_draws_repeatable():
    def draw(**kwargs):
        t = tensor(np.empty((5, 4)))
        return init.kaiming_normal_(t, **kwargs).numpy().copy()

    np.testing.assert_array_equal(draw(generator=np.random.default_rng(3)),
                                  draw(generator=np.random.default_rng(3)))
    tinygrad_pool.manual_seed(11)
    first = draw()
    tinygrad_pool.manual_seed(11)
    np.testing.assert_array_equal(draw(), first)
    assert not np.array_equal(draw(), first)


GAINS = [("linear", None), ("conv1d", None), ("conv2d", None), ("conv3d", None),
         ("conv_transpose2d", None), ("sigmoid", None), ("tanh", None), ("relu", None),
         ("leaky_relu", None), ("leaky_relu", 0.2), ("leaky_relu", 3), ("leaky_relu", math.sqrt(5)),
         ("selu", None)]


@pytest.mark.parametrize("nonlinearity, param", GAINS)
def test_calculate_gain_is_torchs(torch, nonlinearity, param):
    assert init.calculate_gain(nonlinearity, param) == pytest.approx(
        torch.nn.init.calculate_gain(nonlinearity, param), rel=1e-15)


def test_errors_have_torchs_types(torch):
    t = tensor(np.empty((3, 2)))
    cases = [  # (ours, torch's, our error, a pattern in our message)
        (lambda: init.calculate_gain("identity"), lambda: torch.nn.init.calculate_gain("identity"),
         ValueError, "unsupported nonlinearity 'identity'"),
        (lambda: init.calculate_gain("leaky_relu", "x"),
         lambda: torch.nn.init.calculate_gain("leaky_relu", "x"), ValueError,
         "negative_slope 'x' is not a valid number"),
        (lambda: init.uniform_(t, 1.0, 0.0), lambda: torch.nn.init.uniform_(torch.empty(2), 1, 0),
         RuntimeError, r"from=1.0 > to=0.0"),
        (lambda: init.normal_(t, 0.0, -1.0),
         lambda: torch.nn.init.normal_(torch.empty(2), 0, -1), RuntimeError, "std -1.0"),
        (lambda: init.kaiming_uniform_(t, mode="fan_avg"),
         lambda: torch.nn.init.kaiming_uniform_(torch.empty(3, 2), mode="fan_avg"), ValueError,
         "mode 'fan_avg' not supported"),
        (lambda: init.xavier_uniform_(tensor(np.empty(3))),
         lambda: torch.nn.init.xavier_uniform_(torch.empty(3)), ValueError,
         r"fewer than 2 dimensions, got shape \(3,\)"),
        (lambda: init.constant_(t, "a"), lambda: torch.nn.init.constant_(torch.empty(2), "a"),
         TypeError, "val must be a number, got str"),
    ]
    before = t.numpy().copy()
    for ours, theirs, error, pattern in cases:
        with pytest.raises(error, match=pattern):
            ours()
        with pytest.raises(error):
            theirs()
    np.testing.assert_array_equal(t.numpy(), before)  # nothing was written
    with pytest.raises(TypeError, match="uniform_: tensor must be a Tensor, got ndarray"):
        init.uniform_(np.zeros(3))


def test_zero_element_tensors_are_left_alone_with_torchs_warning(torch):
    empty = tensor(np.empty((0, 3)))
    with pytest.warns(UserWarning, match="Initializing zero-element tensors is a no-op"):
        assert init.kaiming_uniform_(empty) is empty
    with pytest.warns(UserWarning, match="Initializing zero-element tensors is a no-op"):
        torch.nn.init.kaiming_uniform_(torch.empty(0, 3))
    assert empty._version == 0
