"""Anomaly mode (autograd/anomaly.py): the switches as torch has them (context manager,
decorator, set_detect_anomaly as a call and a block, nesting, exceptions, threads, argument
errors), the user's line on every node, and the first NaN/inf in forward or backward raised
with the op, the input and that line; torch's wording for backward, checked against torch."""
import inspect
import os
import threading
import warnings

import numpy as np
import pytest

import tinygrad_pool as tp
from tinygrad_pool import autograd, nn, Tensor, tensor

# A message shows this file as a learner reads it: relative to the working folder.
SHOWN = os.path.relpath(__file__)

WAIT = 10  # seconds: a thread that takes longer is stuck


def here() -> int:
    """The caller's line number."""
    return inspect.currentframe().f_back.f_lineno


def leaf(*values, dtype=np.float32) -> Tensor:
    return tp.tensor(np.array(values, dtype=dtype), requires_grad=True)


@pytest.fixture(autouse=True)
def mode_is_restored():
    """Every test starts with the mode off; a test that leaves it on fails and is undone."""
    assert not autograd.is_anomaly_enabled() and autograd.is_anomaly_check_nan_enabled()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # "Anomaly Detection has been enabled"
        yield
    if autograd.is_anomaly_enabled() or not autograd.is_anomaly_check_nan_enabled():
        autograd.set_detect_anomaly(False)
        pytest.fail("the test left anomaly mode on")


def states(lib):
    """(enabled, check_nan). torch has the two functions at the top level only; tinygrad_pool
    has them in autograd (and at the top level once the package exports them)."""
    flags = lib if hasattr(lib, "is_anomaly_enabled") else lib.autograd
    return flags.is_anomaly_enabled(), flags.is_anomaly_check_nan_enabled()


# ---- the switches -----------------------------------------------------------------------------
def switch_scenario(lib) -> list:
    """Nesting, check_nan, set_detect_anomaly inside a block, an exception: the states seen."""
    seen = [states(lib)]
    with lib.autograd.detect_anomaly():
        seen.append(states(lib))
        with lib.autograd.detect_anomaly(check_nan=False):
            seen.append(states(lib))
        seen.append(states(lib))
        with lib.autograd.set_detect_anomaly(False):
            seen.append(states(lib))
        seen.append(states(lib))
    seen.append(states(lib))
    with pytest.raises(KeyError):
        with lib.autograd.detect_anomaly(check_nan=False):
            raise KeyError("inside")
    seen.append(states(lib))
    lib.autograd.set_detect_anomaly(True, check_nan=False)  # a call: switches now
    seen.append(states(lib))
    lib.autograd.set_detect_anomaly(False)
    seen.append(states(lib))
    return seen


def test_switches_nest_and_restore():
    assert switch_scenario(tp) == [
        (False, True), (True, True), (True, False), (True, True), (False, True), (True, True),
        (False, True), (False, True), (True, False), (False, True)]


def test_switches_match_torch(torch):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert switch_scenario(tp) == switch_scenario(torch)


def test_detect_anomaly_decorates_a_function():
    @autograd.detect_anomaly(check_nan=False)
    def inside():
        return states(autograd)

    @autograd.detect_anomaly
    def bare():
        return states(autograd)

    assert states(autograd) == (False, True)
    assert inside() == (True, False) and bare() == (True, True)
    assert states(autograd) == (False, True)


def test_detect_anomaly_warns_at_the_users_line():
    with pytest.warns(UserWarning, match="Anomaly Detection has been enabled. This mode will "
                                         "increase the runtime") as caught:
        switch = autograd.detect_anomaly()
    assert caught[0].filename == __file__ and caught[0].lineno == here() - 1
    assert not autograd.is_anomaly_enabled()  # made, not entered
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        autograd.set_detect_anomaly(False)  # torch warns for detect_anomaly only
    del switch


@pytest.mark.parametrize("call, message", [
    (lambda: autograd.set_detect_anomaly(1), "set_detect_anomaly: mode must be bool, got int (1)"),
    (lambda: autograd.set_detect_anomaly(None), "set_detect_anomaly: mode must be bool, got "
                                                "NoneType (None)"),
    (lambda: autograd.set_detect_anomaly(True, check_nan="yes"),
     "set_detect_anomaly: check_nan must be bool, got str ('yes')"),
    (lambda: autograd.detect_anomaly(check_nan=1), "detect_anomaly: check_nan must be bool, got "
                                                   "int (1)"),
])
def test_bad_flags_are_type_errors_before_anything_changes(call, message):
    with pytest.raises(TypeError) as error:
        call()
    assert str(error.value) == message
    assert states(autograd) == (False, True)


def test_set_detect_anomaly_refuses_a_non_bool_as_torch(torch):
    with pytest.raises(TypeError, match="must be bool, not int"):
        torch.autograd.set_detect_anomaly(1)
    with pytest.raises(TypeError, match="mode must be bool, got int"):
        autograd.set_detect_anomaly(1)


def thread_scenario(lib) -> list:
    """Whether another thread sees the mode switched in this one, and this one a block that
    another thread is inside."""
    seen = []
    lib.autograd.set_detect_anomaly(True)
    worker = threading.Thread(target=lambda: seen.append(states(lib)[0]))
    worker.start()
    worker.join(WAIT)
    lib.autograd.set_detect_anomaly(False)
    entered, leave = threading.Event(), threading.Event()

    def inside():
        with lib.autograd.detect_anomaly():
            entered.set()
            leave.wait(WAIT)
    worker = threading.Thread(target=inside)
    worker.start()
    entered.wait(WAIT)
    seen.append(states(lib)[0])
    leave.set()
    worker.join(WAIT)
    seen.append(states(lib)[0])
    return seen


def test_the_mode_is_process_wide_as_torchs(torch):
    assert thread_scenario(tp) == [True, True, False]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert thread_scenario(torch) == [True, True, False]


def test_another_threads_op_is_checked():
    errors = []

    def work():
        try:
            leaf(0.0).log()
        except RuntimeError as error:
            errors.append(str(error))
    with autograd.detect_anomaly():
        worker = threading.Thread(target=work)
        worker.start()
        worker.join(WAIT)
    assert len(errors) == 1 and errors[0].startswith("Function 'Log' returned -inf values")


# ---- where each op was made -------------------------------------------------------------------
def test_each_node_records_the_users_line_and_nothing_while_off():
    x = leaf(1.0, 4.0)
    with autograd.detect_anomaly():
        y = (x.sqrt() * 2).sum()
    line = here() - 1
    source = (__file__, line, "y = (x.sqrt() * 2).sum()")
    sqrt = y.grad_fn.edges[0].edges[0]
    function = inspect.currentframe().f_code.co_name
    for node in (y.grad_fn, y.grad_fn.edges[0], sqrt):
        assert node.origin == {"line": source} and node.origin["line"].function == function
    assert str(sqrt.origin["line"]) == f'File "{SHOWN}", line {line}, in {function}: {source[2]}'
    assert (x.sqrt() * 2).grad_fn.origin is None  # off: nothing recorded
    y.backward()  # the origin survives release()
    assert sqrt.released and sqrt.origin == {"line": source}
    np.testing.assert_allclose(x.grad.numpy(), [1.0, 0.5])  # 2 · 1/(2√x)


class TwoLayers(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(2, 2)

    def forward(self, x):
        hidden = self.fc(x)
        return hidden.relu()


def test_a_layers_ops_get_the_users_line():
    tp.manual_seed(0)
    layer, model = nn.Linear(2, 1), TwoLayers()
    x = tp.ones(3, 2)
    with autograd.detect_anomaly():
        out = layer(x)
        line = here() - 1
        relu = model(x)
    assert out.grad_fn.origin["line"] == (__file__, line, "out = layer(x)")
    # a Module of the user's: its own forward's lines, first frame outside the package
    forward_line = inspect.getsourcelines(TwoLayers.forward)[1]
    assert relu.grad_fn.origin["line"] == (__file__, forward_line + 2, "return hidden.relu()")
    linear_node = relu.grad_fn.edges[0]
    assert linear_node.origin["line"] == (__file__, forward_line + 1, "hidden = self.fc(x)")
    assert linear_node.origin["line"].function == "forward"


def test_check_nan_false_records_lines_but_does_not_raise():
    x = leaf(0.0, -1.0)
    with autograd.detect_anomaly(check_nan=False):
        y = x.log().sum()
        y.backward()
    line = here() - 2
    assert y.grad_fn.origin == {"line": (__file__, line, "y = x.log().sum()")}
    np.testing.assert_equal(y.numpy(), np.nan)
    np.testing.assert_equal(x.grad.numpy(), [np.inf, -1.0])


# ---- forward -----------------------------------------------------------------------------------
@pytest.mark.parametrize("make, name, value, reason", [
    (lambda x: x / x, "Div", "nan", "input 0 holds 0.0 at [1] and input 1 holds 0.0 at [1], "
                                    "and div(0.0, 0.0) = nan"),
    (lambda x: (x - 1).log(), "Log", "nan", "input 0 holds -1.0 at [1], and log(-1.0) = nan"),
    (lambda x: (x - 1).sqrt(), "Sqrt", "nan", "input 0 holds -1.0 at [1], and sqrt(-1.0) = nan"),
    (lambda x: x.log(), "Log", "-inf", "input 0 holds 0.0 at [1], and log(0.0) = -inf"),
    (lambda x: (x - 1).pow(0.5), "Pow", "nan",
     "input 0 holds -1.0 at [1], and pow(-1.0, exponent=0.5) = nan"),
])
def test_forward_names_the_op_the_input_and_the_line(make, name, value, reason):
    x = leaf(2.0, 0.0, 3.0)
    with autograd.detect_anomaly(), pytest.raises(RuntimeError) as error:
        make(x)
    first, created = str(error.value).split("\n")
    assert first == f"Function '{name}' returned {value} values in forward, first at [1]: {reason}"
    # the user's line is the lambda's (the first frame outside the package), not make(x)'s
    assert created.startswith(f'  The op was created at File "{SHOWN}", line '
                              f'{make.__code__.co_firstlineno}, in <lambda>: (lambda x: ')


def test_forward_overflow_in_float64():
    x = tp.tensor([1.0, 1000.0], dtype=tp.float64, requires_grad=True)
    with autograd.detect_anomaly(), pytest.raises(RuntimeError) as error:
        x.exp()
    assert str(error.value).startswith("Function 'Exp' returned inf values in forward, first at "
                                       "[1]: input 0 holds 1000.0 at [1], and exp(1000.0) = inf")


def test_forward_overflow_of_a_reduction_names_the_dtypes_limit():
    x = tp.tensor([3e38, 3e38], requires_grad=True)  # float32: each finite, the sum is not
    with autograd.detect_anomaly(), pytest.raises(RuntimeError) as error:
        x.sum()
    assert str(error.value).startswith(
        "Function 'Sum' returned inf values in forward: every input is finite, so the op itself "
        f"overflowed: float32 holds at most {np.finfo(np.float32).max:.4g}, and the inputs' "
        "largest magnitude is 3e+38")


def test_a_nan_from_outside_is_reported_where_it_first_enters():
    data = tensor(np.array([1.0, np.nan], dtype=np.float32))  # e.g. a corrupt sample
    w = leaf(2.0, 3.0)
    with autograd.detect_anomaly(), pytest.raises(RuntimeError) as error:
        w * data
    line = here() - 1
    assert str(error.value).startswith(
        "Function 'Mul' returned nan values in forward, first at [1]: input 1 already holds nan "
        "at [1]. It came in from outside the ops anomaly mode checked")
    assert str(error.value).endswith(f"line {line}, in {inspect.currentframe().f_code.co_name}: "
                                     f"w * data")


def test_ops_under_no_grad_are_checked_too():
    with autograd.detect_anomaly(), tp.no_grad(), pytest.raises(RuntimeError, match="'Log'"):
        leaf(0.0).log()


def test_an_in_place_op_raises_before_it_writes():
    x = leaf(1.0, 0.0)
    y = x * 1
    with autograd.detect_anomaly(), pytest.raises(RuntimeError, match="'Log' returned -inf"):
        y.log_()
    np.testing.assert_equal(y.numpy(), [1.0, 0.0])
    assert y._version == 0


def test_finite_ops_and_integer_outputs_pass():
    x = leaf(1.0, 4.0)
    with autograd.detect_anomaly():
        y = (x.sqrt().log() + tp.arange(2)).sum()
        y.backward()
        counts = tp.tensor([0, 1]) * 2
    np.testing.assert_allclose(y.numpy(), np.log(2.0) + 1.0, rtol=1e-6)
    np.testing.assert_allclose(x.grad.numpy(), [0.5, 0.125])  # 1/(2x)
    np.testing.assert_equal(counts.numpy(), [0, 2])


# ---- backward ----------------------------------------------------------------------------------
@pytest.mark.parametrize("make, name, value, at", [
    (lambda x: x.sqrt(), "Sqrt", "inf", 1),  # √0 = 0, but its slope 1/(2√0) is inf
    (lambda x: x.pow(0.5), "Pow", "inf", 1),
    (lambda x: (x * 0).sqrt() * 0, "Sqrt", "nan", 0),  # 0 · inf, first at x = 1 (√(1·0))
])
def test_backward_names_the_node_the_input_and_the_line(make, name, value, at):
    x = leaf(1.0, 0.0)
    with autograd.detect_anomaly():
        loss = make(x).sum()  # (the sum's line; the op that fails was made in the lambda)
        with pytest.raises(RuntimeError) as error:
            loss.backward()
    first, created = str(error.value).split("\n")
    assert first == (f"Function '{name}Backward0' returned {value} values in its 0th output. "
                     f"{name} sent {value} to its input 0 at [{at}], where input 0 holds 0.0; "
                     f"the gradient arriving at its output is finite.")
    assert created.startswith(f'  The op was created at File "{SHOWN}", line '
                              f'{make.__code__.co_firstlineno}, in <lambda>: (lambda x: ')
    assert x.grad is None  # nothing reached the leaf


def test_backward_of_an_op_whose_large_input_was_freed_says_no_value():
    """Sqrt saves its output, not its input: a large input made by an op and held by nothing
    else is freed (as PyTorch frees it), so the message has no value of it to quote."""
    values = np.ones((256, 128))
    values[0, 1] = 0.0
    x = tensor(values, requires_grad=True)
    with autograd.detect_anomaly():
        loss = (x * 1.0).sqrt().sum()
        with pytest.raises(RuntimeError) as error:
            loss.backward()
    first = str(error.value).split("\n")[0]
    assert first == ("Function 'SqrtBackward0' returned inf values in its 0th output. Sqrt sent "
                     "inf to its input 0 at [0, 1]; the gradient arriving at its output is finite.")


def test_the_failing_node_keeps_its_buffers_and_notes_the_anomaly():
    x = leaf(0.0)
    with autograd.detect_anomaly():
        root = x.sqrt()
        loss = root.sum()
        with pytest.raises(RuntimeError) as error:
            loss.backward()
    node = root.grad_fn
    assert node.origin["anomaly"] == str(error.value)
    assert node.origin["line"][1] == here() - 6
    assert not node.released and node.saved_for_backward()  # what it saved is still there
    assert loss.grad_fn.released and "anomaly" not in loss.grad_fn.origin


def test_draw_graph_marks_the_node_backward_stopped_at():
    pytest.importorskip("graphviz")
    from tinygrad_pool.viz.graph import STYLE
    x = leaf(4.0, 0.0)
    with autograd.detect_anomaly():
        loss = (x.sqrt() * 2).sum()
        with pytest.raises(RuntimeError):
            loss.backward()
    source = tp.draw_graph(loss, anomalies=True, legend=False).source
    red = [line for line in source.splitlines() if STYLE["anomaly"] in line]
    assert len(red) == 1 and "Sqrt" in red[0] and "SqrtBackward0" in red[0]
    plain = tp.draw_graph(loss, legend=False).source  # the picture changed nothing
    assert STYLE["anomaly"] not in plain and x.grad is None


def test_norm_at_zero_is_finite_as_in_torch():
    x = leaf(0.0, 0.0)
    with autograd.detect_anomaly():
        x.norm().backward()
    np.testing.assert_equal(x.grad.numpy(), [0.0, 0.0])  # torch's subgradient


def test_a_nan_seed_gradient_is_named_as_such():
    x = leaf(1.0, 2.0)
    with autograd.detect_anomaly():
        y = x * 3
        with pytest.raises(RuntimeError) as error:
            y.backward(tensor(np.array([1.0, np.nan], dtype=np.float32)))
    assert ("Mul sent nan to its input 0 at [1], where input 0 holds 2.0; the gradient arriving "
            "at its output already holds nan at [1] (the gradient passed to backward())"
            in str(error.value))


def test_autograd_grad_and_create_graph_are_checked_per_node():
    x = leaf(0.0)
    with autograd.detect_anomaly():
        y = (x.sqrt() * 0).sum()
        with pytest.raises(RuntimeError, match=r"^Function 'SqrtBackward0' returned nan"):
            autograd.grad(y, x, retain_graph=True)
        # the ops a create_graph backward records are checked as the node they differentiate
        with pytest.raises(RuntimeError, match=r"^Function 'SqrtBackward0' returned nan"):
            autograd.grad(y, x, create_graph=True)


class Leaky(autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return x * 2

    @staticmethod
    def backward(ctx, grad):
        return grad * float("nan")


def test_a_custom_functions_nan_gradient_names_the_function():
    x = leaf(1.0, 2.0)
    with autograd.detect_anomaly():
        loss = Leaky.apply(x).sum()
        with pytest.raises(RuntimeError) as error:
            loss.backward()
    assert str(error.value).startswith(
        "Function 'LeakyBackward' returned nan values in its 0th output. LeakyBackward sent nan "
        "to its input 0 at [0], where input 0 holds 1.0; the gradient arriving at its output is "
        "finite.\n  ")
    assert loss.grad_fn.edges[0].origin["anomaly"] == str(error.value)


def backward_first_sentences(lib) -> list:
    """The first sentence of the backward error for ops where torch's check fires too."""

    class Leaky(lib.autograd.Function):
        @staticmethod
        def forward(ctx, k, x):
            return x * k

        @staticmethod
        def backward(ctx, grad):
            return None, grad * float("nan")

    cases = [lambda x: (x * 0).sqrt() * 0, lambda x: x.pow(0.5) * 0,
             lambda x: Leaky.apply(2.0, x)]
    sentences = []
    for make in cases:
        x = lib.zeros(2, requires_grad=True)
        with lib.autograd.detect_anomaly():
            try:
                make(x).sum().backward()
            except RuntimeError as error:
                sentences.append(str(error).split(".")[0])
    return sentences


def test_backward_first_sentence_is_torchs(torch):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        expected = backward_first_sentences(torch)
    assert expected == ["Function 'SqrtBackward0' returned nan values in its 0th output",
                        "Function 'PowBackward0' returned nan values in its 0th output",
                        "Function 'LeakyBackward' returned nan values in its 0th output"]
    assert backward_first_sentences(tp) == expected
