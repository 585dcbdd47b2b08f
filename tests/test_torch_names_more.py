"""More of torch's names and legacy behaviours, each as PyTorch 2.13 has it:

- the losses' deprecated ``size_average``/``reduce`` arguments (torch's mapping and warning);
- ``load_state_dict`` with a value NumPy cannot make a regular array of;
- ``draw_graph``/``save_graph`` refusing a bad ``precision`` (or any other option) up front;
- ``import tinygrad_pool.nn.<a torch submodule we lack>`` pointing to docs/porting.md;
- ``nn.parallel``: DataParallel as torch's is without GPUs, DistributedDataParallel refused.
"""
import importlib
import inspect
import re
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest

import tinygrad_pool
import tinygrad_pool.nn as nn
import tinygrad_pool.nn.functional as F
from tinygrad_pool import Tensor

from helpers import leaf

LEGACY_MESSAGE = ("size_average and reduce args will be deprecated, please use "
                  "reduction='{}' instead.")
PORTING = Path(__file__).resolve().parents[1] / "docs" / "porting.md"


# ---- 1. size_average / reduce ------------------------------------------------------------------
def _regression(lib, tensor, rng):
    x, t = rng.standard_normal((3, 4)), rng.standard_normal((3, 4))
    return [tensor(x)], [tensor(t)]


def _classes(lib, tensor, rng):
    return [tensor(rng.standard_normal((5, 3)))], [lib.tensor(np.array([0, 2, 1, 2, 0]))]


def _probabilities(lib, tensor, rng):
    return [tensor(rng.uniform(0.05, 0.95, (3, 4)))], [tensor(rng.uniform(0, 1, (3, 4)))]


def _log_probs(lib, tensor, rng):
    logits = rng.standard_normal((5, 3))
    log_probs = logits - np.log(np.exp(logits).sum(1, keepdims=True))
    return [tensor(log_probs)], [lib.tensor(np.array([0, 2, 1, 2, 0]))]


# Every loss torch gives the legacy arguments, with inputs for it (its name in F and in nn)
LEGACY_LOSSES = {
    "mse_loss": ("MSELoss", _regression, {}),
    "l1_loss": ("L1Loss", _regression, {}),
    "smooth_l1_loss": ("SmoothL1Loss", _regression, {"beta": 0.7}),
    "nll_loss": ("NLLLoss", _log_probs, {"ignore_index": 1}),
    "cross_entropy": ("CrossEntropyLoss", _classes, {"label_smoothing": 0.1}),
    "binary_cross_entropy": ("BCELoss", _probabilities, {}),
    "binary_cross_entropy_with_logits": ("BCEWithLogitsLoss", _regression, {}),
}
LEGACY_PAIRS = [(True, None), (False, None), (None, True), (None, False), (True, True),
                (True, False), (False, True), (False, False), (0, 1)]


def _both(torch, builder):
    """The same arguments for each library: (ours, theirs), each (inputs, constants)."""
    ours = builder(tinygrad_pool, lambda a: leaf(a), np.random.default_rng(5))
    theirs = builder(torch, lambda a: torch.tensor(a, requires_grad=True),
                     np.random.default_rng(5))
    return ours, theirs


def _torch_warning(torch, call):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = call()
    legacy = [w for w in caught if "size_average" in str(w.message)]
    assert len(legacy) == 1
    return result, legacy[0]


def _compare(ours, theirs, our_inputs, their_inputs):
    assert ours.shape == tuple(theirs.shape)
    np.testing.assert_allclose(ours.numpy(), theirs.detach().numpy(), rtol=1e-7, atol=1e-10)
    weights = np.random.default_rng(1).standard_normal(ours.shape)
    ours.backward(tinygrad_pool.tensor(weights))
    theirs.backward(theirs.new_tensor(weights))
    for a, b in zip(our_inputs, their_inputs):
        np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), rtol=1e-7, atol=1e-10)


@pytest.mark.parametrize("size_average, reduce", LEGACY_PAIRS)
@pytest.mark.parametrize("name", sorted(LEGACY_LOSSES))
def test_functional_legacy_arguments_as_torch(torch, name, size_average, reduce):
    _, builder, options = LEGACY_LOSSES[name]
    (inputs, constants), (t_inputs, t_constants) = _both(torch, builder)
    expected = torch.nn._reduction.legacy_get_string(size_average, reduce, emit_warning=False)
    legacy = dict(size_average=size_average, reduce=reduce)
    # an explicit reduction is overridden by the legacy arguments, in both
    with pytest.warns(UserWarning) as record:
        ours = getattr(F, name)(*inputs, *constants, reduction="none" if expected != "none"
                                else "sum", **legacy, **options)
    theirs, their_warning = _torch_warning(torch, lambda: getattr(torch.nn.functional, name)(
        *t_inputs, *t_constants, reduction="none" if expected != "none" else "sum", **legacy,
        **options))
    [warning] = [w for w in record if "size_average" in str(w.message)]
    assert type(warning.message) is type(their_warning.message) is UserWarning
    assert str(warning.message).endswith(LEGACY_MESSAGE.format(expected))
    assert str(their_warning.message) == LEGACY_MESSAGE.format(expected)
    assert warning.filename == __file__  # pointed at the caller's line
    _compare(ours, theirs, inputs, t_inputs)


@pytest.mark.parametrize("size_average, reduce", LEGACY_PAIRS)
@pytest.mark.parametrize("name", sorted(LEGACY_LOSSES))
def test_module_legacy_arguments_set_reduction_as_torch(torch, name, size_average, reduce):
    module_name, builder, options = LEGACY_LOSSES[name]
    (inputs, constants), (t_inputs, t_constants) = _both(torch, builder)
    with pytest.warns(UserWarning, match=re.escape(LEGACY_MESSAGE.format(
            torch.nn._reduction.legacy_get_string(size_average, reduce, emit_warning=False)))):
        ours = getattr(nn, module_name)(size_average=size_average, reduce=reduce,
                                        reduction="bogus", **options)
    theirs, _ = _torch_warning(torch, lambda: getattr(torch.nn, module_name)(
        size_average=size_average, reduce=reduce, reduction="bogus", **options))
    assert ours.reduction == theirs.reduction
    assert "size_average" not in vars(ours) and "reduce" not in vars(ours)
    _compare(ours(*inputs, *constants), theirs(*t_inputs, *t_constants), inputs, t_inputs)


@pytest.mark.parametrize("name", sorted(LEGACY_LOSSES))
def test_legacy_arguments_sit_where_torchs_do(torch, name):
    """Same positions, so a positional call means the same in both."""
    for ours, theirs in ((getattr(F, name), getattr(torch.nn.functional, name)),
                         (getattr(nn, LEGACY_LOSSES[name][0]),
                          getattr(torch.nn, LEGACY_LOSSES[name][0]))):
        our_names = list(inspect.signature(ours).parameters)
        their_names = list(inspect.signature(theirs).parameters)
        for legacy in ("size_average", "reduce", "reduction"):
            assert our_names.index(legacy) == their_names.index(legacy), (ours, legacy)
            assert inspect.signature(ours).parameters[legacy].default == \
                inspect.signature(theirs).parameters[legacy].default


def test_positional_legacy_arguments(torch):
    x, t = np.random.default_rng(0).standard_normal((2, 5, 3)), np.array([0, 2, 1, 1, 0])
    with pytest.warns(UserWarning, match="reduction='sum'"):
        ours = F.nll_loss(tinygrad_pool.tensor(x[0]), tinygrad_pool.tensor(t), None, False)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        theirs = torch.nn.functional.nll_loss(torch.tensor(x[0]), torch.tensor(t), None, False)
    assert ours.item() == pytest.approx(theirs.item(), rel=1e-12)


def test_huber_has_no_legacy_arguments_in_either(torch):
    for lib in (tinygrad_pool, torch):
        x = lib.tensor(np.zeros(2))
        with pytest.raises(TypeError):
            lib.nn.functional.huber_loss(x, x, size_average=True)
        with pytest.raises(TypeError):
            lib.nn.HuberLoss(size_average=True)


def test_no_warning_without_legacy_arguments():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert nn.MSELoss(reduction="sum").reduction == "sum"
        F.l1_loss(Tensor(np.ones(2)), Tensor(np.zeros(2)), reduction="none")


# ---- 2. load_state_dict with a ragged value ----------------------------------------------------
class _NoArray:
    def __array__(self, *args, **kwargs):
        raise TypeError("no array here")


@pytest.mark.parametrize("value", [[[1.0, 2.0], [3.0]], [[1.0, [2.0]], [3.0, 4.0]],
                                   _NoArray()], ids=["ragged", "nested", "no_array"])
def test_load_state_dict_unreadable_value_names_the_function_and_key(torch, value):
    model = nn.Linear(2, 2)
    before = {k: v.numpy().copy() for k, v in model.state_dict().items()}
    state = {"weight": value, "bias": np.ones(2)}
    with pytest.raises(RuntimeError) as error:
        model.load_state_dict(state)
    message = str(error.value)
    assert message.startswith("Error(s) in loading state_dict for Linear:")
    assert 'parameter named "weight"' in message and "load_state_dict" in message
    assert "inhomogeneous" not in message and "setting an array element" not in message
    for key, array in model.state_dict().items():  # nothing copied, the bias neither
        np.testing.assert_array_equal(array.numpy(), before[key])
    # torch: a RuntimeError too, naming the key
    their_model = torch.nn.Linear(2, 2)
    with pytest.raises(RuntimeError, match='parameter named "weight"'):
        their_model.load_state_dict({"weight": value, "bias": torch.ones(2)})


def test_load_state_dict_lists_every_unreadable_key():
    model = nn.Linear(2, 2)
    with pytest.raises(RuntimeError) as error:
        model.load_state_dict({"weight": [[1.0], [2.0, 3.0]], "bias": [[1.0], []]})
    assert '"weight"' in str(error.value) and '"bias"' in str(error.value)


def test_load_state_dict_regular_lists_still_load():
    model = nn.Linear(2, 2)
    model.load_state_dict({"weight": [[1.0, 2.0], [3.0, 4.0]], "bias": [5, 6]})
    np.testing.assert_array_equal(model.weight.numpy(), [[1, 2], [3, 4]])
    np.testing.assert_array_equal(model.bias.numpy(), [5, 6])


# ---- 3. draw_graph / save_graph check every option first ---------------------------------------
graph = pytest.importorskip("tinygrad_pool.viz.graph")

BAD_OPTIONS = [
    (dict(precision="abc"), ValueError, "precision must be a non-negative int", "'abc'"),
    (dict(precision=-1), ValueError, "precision must be a non-negative int", "-1"),
    (dict(precision=2.5), TypeError, "precision must be a non-negative int", "2.5"),
    (dict(precision=True), TypeError, "precision must be a non-negative int", "True"),
    (dict(precision=None), TypeError, "precision must be a non-negative int", "None"),
    (dict(precision=",.2f"), ValueError, "precision", "',.2f'"),  # 1,234.00: not a number
    (dict(precision=".1%"), ValueError, "precision", "'.1%'"),
    (dict(show_values=1), TypeError, "show_values must be bool", "int"),
    (dict(show_saved="yes"), TypeError, "show_saved must be bool", "yes"),
    (dict(edge_labels=None), TypeError, "edge_labels must be bool", "None"),
    (dict(legend=0), TypeError, "legend must be bool", "int"),
    (dict(stats="no"), TypeError, "stats must be bool", "no"),
    (dict(max_elements=-1), ValueError, "max_elements must be at least 0", "-1"),
    (dict(max_elements=2.0), TypeError, "max_elements must be an int", "2.0"),
    (dict(rankdir=["TB"]), TypeError, "rankdir must be a str", "list"),
    (dict(rankdir="up"), ValueError, "rankdir must be 'TB', 'BT', 'LR' or 'RL'", "'up'"),
    (dict(max_depth=1.5), TypeError, "max_depth must be an int", "1.5"),
    (dict(collapse=-2), ValueError, "collapse must be >= 0", "-2"),
    (dict(depth=1), ValueError, "depth=1 works on module calls", ""),
]


@pytest.fixture
def nothing_drawn(monkeypatch):
    """Any rendering work (the graph walk) fails the test: the checks come first."""
    def walk(*args, **kwargs):
        raise AssertionError("the graph was walked before the arguments were checked")
    monkeypatch.setattr(graph, "_walk", walk)


def _loss():
    x = Tensor(np.array([[1.0, -2.0]]), requires_grad=True)
    return (x * 3).sum()


@pytest.mark.parametrize("options, error, expected, shown", BAD_OPTIONS,
                         ids=[str(o) for o, *_ in BAD_OPTIONS])
def test_draw_graph_refuses_a_bad_option_before_drawing(nothing_drawn, options, error, expected,
                                                        shown):
    with pytest.raises(error) as caught:
        graph.draw_graph(_loss(), **options)
    message = str(caught.value)
    assert message.startswith("draw_graph: ") and expected in message and shown in message


@pytest.mark.parametrize("options, error, expected, shown", BAD_OPTIONS,
                         ids=[str(o) for o, *_ in BAD_OPTIONS])
def test_save_graph_refuses_a_bad_option_before_drawing(nothing_drawn, tmp_path, options, error,
                                                        expected, shown):
    path = tmp_path / "g.svg"
    with pytest.raises(error) as caught:
        graph.save_graph(_loss(), path, **options)
    message = str(caught.value)
    assert message.startswith("save_graph: ") and expected in message and shown in message
    assert not path.exists()


def test_save_graph_refuses_an_unknown_option_and_a_non_tensor(nothing_drawn, tmp_path):
    with pytest.raises(TypeError, match=r"save_graph: .*'precison'.*draw_graph's"):
        graph.save_graph(_loss(), tmp_path / "g.svg", precison=2)
    with pytest.raises(TypeError, match="save_graph: expected a Tensor, got ndarray"):
        graph.save_graph(np.ones(2), tmp_path / "g.svg")
    with pytest.raises(TypeError, match="draw_graph: expected a Tensor, got list"):
        graph.draw_graph([1.0])


def test_precision_message_says_what_is_expected(nothing_drawn):
    with pytest.raises(ValueError, match=re.escape(
            "draw_graph: precision must be a non-negative int (significant digits) or a format "
            "spec for floats such as '.2f' or '.3e', got 'abc'")):
        graph.draw_graph(_loss(), precision="abc")


@pytest.mark.parametrize("precision, text", [(0, "-2"), (2, "-2"), (np.int64(3), "-2"),
                                             (".2f", "-2.00"), (".1e", "-2.0e+00"),
                                             (">8.3f", "-2.000")])
def test_good_precisions_still_draw(precision, text):
    x = Tensor(np.array([[1.0, -2.0]]), requires_grad=True)
    source = graph.draw_graph((x * 3).sum(), show_values=True, precision=precision).source
    assert re.search(f">\\s*{re.escape(text)}<", source)


# ---- 4. unsupported submodules -----------------------------------------------------------------
UNSUPPORTED_SUBMODULES = ["tinygrad_pool.nn.quantized", "tinygrad_pool.nn.intrinsic",
                          "tinygrad_pool.nn.modules", "tinygrad_pool.nn.utils.rnn",
                          "tinygrad_pool.nn.parallel.distributed"]


def _expected(module: str) -> str:
    torch_name = "torch" + module[len("tinygrad_pool"):]
    return (f"No module named '{module}': tinygrad_pool does not support {torch_name} (the "
            f"supported torch names are listed in docs/porting.md)")


@pytest.mark.parametrize("module", UNSUPPORTED_SUBMODULES)
def test_importing_an_unsupported_submodule_points_to_porting(module):
    package, _, name = module.rpartition(".")
    statements = [f"import {module}", f"import {module} as alias", f"from {package} import {name}",
                  f"from {module} import anything"]
    for statement in statements + statements:  # (a second try says the same)
        with pytest.raises(ModuleNotFoundError) as error:
            exec(statement, {})
        assert str(error.value) == _expected(module), statement
        assert module not in sys.modules
    with pytest.raises(ModuleNotFoundError, match=re.escape(_expected(module))):
        importlib.import_module(module)


def test_a_submodule_of_an_unsupported_one_names_the_first_missing(torch):
    with pytest.raises(ModuleNotFoundError, match=re.escape(_expected("tinygrad_pool.nn.quantized"))):
        exec("import tinygrad_pool.nn.quantized.dynamic", {})
    importlib.import_module("torch.nn.quantized.dynamic")  # torch has it


def test_the_refused_submodules_are_torchs_and_not_listed_as_supported(torch):
    text = PORTING.read_text(encoding="utf-8")
    for module in UNSUPPORTED_SUBMODULES:
        torch_name = "torch" + module[len("tinygrad_pool"):]
        importlib.import_module(torch_name)
        assert torch_name not in text


def test_real_submodules_still_import():
    import tinygrad_pool.nn.functional as functional
    from tinygrad_pool.nn import init, parallel, utils
    from tinygrad_pool.nn.utils import clip_grad_norm_
    assert functional is F and parallel is nn.parallel and init is nn.init
    assert clip_grad_norm_ is utils.clip_grad_norm_
    spec = importlib.util.find_spec("tinygrad_pool.nn.parallel")
    assert spec is not None and spec.origin.endswith("parallel.py")
    # an attribute torch.nn lacks too is still an AttributeError pointing to the same page
    with pytest.raises(AttributeError, match=r"not support torch\.nn\.quantized .*porting\.md"):
        nn.quantized
    assert not hasattr(nn.utils, "rnn")


# ---- 5. nn.parallel ----------------------------------------------------------------------------
def test_parallel_names():
    import tinygrad_pool.nn.parallel
    from tinygrad_pool.nn.parallel import DataParallel, DistributedDataParallel
    assert nn.DataParallel is DataParallel is tinygrad_pool.nn.parallel.DataParallel
    assert issubclass(DistributedDataParallel, nn.Module)
    with pytest.raises(AttributeError, match=r"torch\.nn\.parallel\.data_parallel .*porting"):
        nn.parallel.data_parallel


def test_parallel_names_are_where_torchs_are(torch):
    assert hasattr(torch.nn, "DataParallel") and hasattr(nn, "DataParallel")
    for lib in (torch, tinygrad_pool):
        assert not hasattr(lib.nn, "DistributedDataParallel")
        assert hasattr(lib.nn.parallel, "DistributedDataParallel")
    assert list(inspect.signature(nn.DataParallel).parameters) == \
        list(inspect.signature(torch.nn.DataParallel).parameters)
    for name, p in inspect.signature(nn.DataParallel).parameters.items():
        assert p.default == inspect.signature(torch.nn.DataParallel).parameters[name].default


def _two_layers(lib):
    return lib.nn.Sequential(lib.nn.Linear(3, 4), lib.nn.ReLU(), lib.nn.Linear(4, 2))


@pytest.mark.parametrize("kwargs", [{}, dict(device_ids=[0, 1], output_device=1, dim=1)])
def test_data_parallel_runs_the_module_as_torchs_does_without_gpus(torch, kwargs):
    ours, theirs = _two_layers(tinygrad_pool), _two_layers(torch)
    ours.load_state_dict({k: v.detach().numpy().astype(np.float32)
                          for k, v in theirs.state_dict().items()})
    wrapped, their_wrapped = nn.DataParallel(ours, **kwargs), torch.nn.DataParallel(theirs,
                                                                                   **kwargs)
    assert wrapped.module is ours and their_wrapped.module is theirs
    assert wrapped.device_ids == their_wrapped.device_ids == []
    assert sorted(k for k in vars(wrapped) if not k.startswith("_")) == \
        sorted(k for k in vars(their_wrapped) if not k.startswith("_"))
    assert repr(wrapped) == repr(their_wrapped)
    assert list(wrapped.state_dict()) == list(their_wrapped.state_dict())
    assert all(k.startswith("module.") for k in wrapped.state_dict())
    assert [p is q for p, q in zip(wrapped.parameters(), ours.parameters())] == [True] * 4
    x = np.random.default_rng(0).standard_normal((5, 3)).astype(np.float32)
    out, their_out = wrapped(Tensor(x)), their_wrapped(torch.tensor(x))
    np.testing.assert_allclose(out.numpy(), their_out.detach().numpy(), rtol=1e-6, atol=1e-6)
    out.sum().backward()
    their_out.sum().backward()
    for p, q in zip(wrapped.parameters(), their_wrapped.parameters()):
        np.testing.assert_allclose(p.grad.numpy(), q.grad.numpy(), rtol=1e-6, atol=1e-6)


def test_data_parallel_state_dict_round_trip_and_keyword_passthrough():
    inner = nn.Linear(2, 1)
    wrapped = nn.DataParallel(inner)
    state = {k: v.numpy() * 0 + 7 for k, v in wrapped.state_dict().items()}
    wrapped.load_state_dict(state)
    np.testing.assert_array_equal(inner.weight.numpy(), [[7, 7]])
    with pytest.raises(RuntimeError, match=r'Missing key\(s\) in state_dict: "module.weight"'):
        wrapped.load_state_dict(inner.state_dict())

    class Scale(nn.Module):
        def forward(self, x, *, factor=1.0):
            return x * factor
    assert nn.DataParallel(Scale())(Tensor([2.0]), factor=3.0).item() == 6.0
    wrapped.eval()
    assert not inner.training


def test_data_parallel_needs_a_module():
    with pytest.raises(TypeError, match="DataParallel: module must be an nn.Module, got str"):
        nn.DataParallel("model")


def test_distributed_data_parallel_is_refused_as_torch_refuses_it_without_a_process_group(torch):
    with pytest.raises(ValueError, match="init_process_group") as theirs:
        torch.nn.parallel.DistributedDataParallel(torch.nn.Linear(2, 1))
    with pytest.raises(type(theirs.value)) as ours:
        nn.parallel.DistributedDataParallel(nn.Linear(2, 1), device_ids=None)
    message = str(ours.value)
    assert message.startswith("DistributedDataParallel: " + str(theirs.value))
    assert "docs/porting.md" in message and "DataParallel" in message
