"""The advice in error messages: a dtype refusal tells the user what to change in their own code,
in PyTorch's spellings (``input.float()``, ``x.double()``, ``model.double()``); it converts the
data to the model's dtype, never a model's weights to an integer dtype, and names no NumPy
spelling. Each advised fix is applied here and must make the call work. Counts in messages read
right in the singular and the plural ("1 channel", "2 channels")."""
import re

import numpy as np
import pytest

import tinygrad_pool as tp
import tinygrad_pool.nn.functional as F
from tinygrad_pool import Node, gradcheck, nn, tensor
from tinygrad_pool.gradient_check import gradcheck_report
from tinygrad_pool.args import cast_spelling, dtype_advice, operands_advice, plural

# advice that would turn weights (or a whole model) into an integer or bool dtype
INTEGER_WEIGHTS = re.compile(r"\b(weight|bias|model|running_\w+|mat2|other)\."
                             r"(long|int|short|char|byte|bool)\(\)|\b(weight|bias|model|running_\w+)"
                             r"\.to\((torch\.)?(u?int\d*|bool|input\.dtype)\)|convert one with \.to")
NUMPY_SPELLINGS = re.compile(r"np\.|numpy|astype|Tensor\(x, dtype")


def refusal(error_type, call) -> str:
    """The message of the error ``call`` raises, checked for advice that must never appear."""
    with pytest.raises(error_type) as info:
        call()
    message = str(info.value)
    assert not INTEGER_WEIGHTS.search(message), message
    assert not NUMPY_SPELLINGS.search(message), message
    return message


def advised_input_cast(message: str) -> str:
    """The conversion the message advises for the input: ".float()" from "input.float()"."""
    found = re.search(r"\binput(\.(?:float|double|half|long)\(\))", message)
    assert found, f"no input conversion advised: {message}"
    return found.group(1)


def convert(x, spelling: str):
    """x converted as the advice spells it (".float()", ".to(torch.uint8)")."""
    return eval(f"x{spelling}", {"x": x, "torch": tp})


def images(dtype, channels=3):
    return tensor(np.arange(2 * channels * 5 * 5).reshape(2, channels, 5, 5) % 255, dtype=dtype)


# ---- an integer input into a layer with float weights: convert the input, in torch's words ----
LAYERS = {
    "conv2d": (lambda: nn.Conv2d(3, 4, 3), lambda dtype: images(dtype), RuntimeError,
               "conv2d: weight has dtype float32 but input has dtype "),
    "linear": (lambda: nn.Linear(3, 2), lambda dtype: tensor(np.arange(6).reshape(2, 3), dtype=dtype),
               RuntimeError, "linear: weight has dtype float32 but input has dtype "),
    "batch_norm": (lambda: nn.BatchNorm2d(3), lambda dtype: images(dtype), NotImplementedError,
                   "batch_norm: input must be a floating-point tensor, got dtype "),
}


@pytest.mark.parametrize("layer", LAYERS)
@pytest.mark.parametrize("dtype", [np.uint8, np.int64, np.int32])
def test_an_integer_input_is_told_to_become_float_not_the_weights(layer, dtype):
    make, data, error, start = LAYERS[layer]
    model, x = make(), data(dtype)
    message = refusal(error, lambda: model(x))
    assert message.startswith(start + np.dtype(dtype).name), message
    assert "input.float()" in message, message
    out = model(convert(x, advised_input_cast(message)))  # the advice, followed, works
    assert out.dtype == np.float32 and model.weight.dtype == np.float32


@pytest.mark.parametrize("call", [
    lambda x: F.conv2d(x, tp.zeros(4, 3, 3, 3)),
    lambda x: F.conv2d(x, tp.zeros(4, 3, 3, 3), tp.zeros(4)),
    lambda x: F.linear(x.reshape(2, -1)[:, :3], tp.zeros(2, 3)),
    lambda x: F.conv_transpose2d(x, tp.zeros(3, 2, 3, 3)),
], ids=["conv2d", "conv2d_bias", "linear", "conv_transpose2d"])
@pytest.mark.parametrize("dtype", [np.uint8, np.int64, np.bool_])
def test_functional_forms_advise_converting_the_input(call, dtype):
    x = images(dtype)
    message = refusal((RuntimeError, NotImplementedError), lambda: call(x))
    assert "input.float()" in message, message
    assert call(convert(x, advised_input_cast(message))).dtype == np.float32


def test_the_uint8_image_of_the_issue_reads_as_advice_to_convert_the_input():
    message = refusal(RuntimeError, lambda: nn.Conv2d(3, 4, 3)(images(np.uint8)))
    assert message == ("conv2d: weight has dtype float32 but input has dtype uint8; they must be "
                       "the same: convert the input with input.float() (or "
                       "input.to(weight.dtype))")


# ---- a float input and float weights of another precision: either side, in torch terms ----
FLOAT_LAYERS = {
    "conv2d": (lambda: nn.Conv2d(3, 4, 3), lambda dtype: images(dtype)),
    "linear": (lambda: nn.Linear(3, 2), lambda dtype: tensor(np.ones((2, 3)), dtype=dtype)),
    "batch_norm": (lambda: nn.BatchNorm2d(3), lambda dtype: images(dtype)),
    "layer_norm": (lambda: nn.LayerNorm(5), lambda dtype: images(dtype)),
}


@pytest.mark.parametrize("layer", FLOAT_LAYERS)
def test_a_float64_input_into_float32_weights_offers_both_fixes(layer):
    make, data = FLOAT_LAYERS[layer]
    model, x = make(), data(np.float64)
    message = refusal(RuntimeError, lambda: model(x))
    assert "but input has dtype float64" in message, message
    assert "input.float()" in message and "model.double()" in message, message
    assert message.index("input.float()") < message.index("model.double()")
    assert model(x.float()).dtype == np.float32  # either fix works
    assert model.double()(x).dtype == np.float64


def test_a_float32_input_into_a_float64_model_offers_the_other_way_round():
    model = nn.Linear(3, 2).double()
    message = refusal(RuntimeError, lambda: model(tp.ones(2, 3)))
    assert "input.double()" in message and "model.float()" in message, message
    assert model(tp.ones(2, 3).double()).dtype == np.float64


def test_a_bias_of_another_dtype_is_the_one_told_to_change():
    x, weight, bias = tp.ones(1, 3, 5, 5), tp.ones(4, 3, 3, 3), tp.ones(4).double()
    message = refusal(RuntimeError, lambda: F.conv2d(x, weight, bias))
    assert message.startswith("conv2d: bias has dtype float64 but input has dtype float32")
    assert "bias.float()" in message and "input.double()" not in message, message
    assert F.conv2d(x, weight, bias.float()).dtype == np.float32


def test_an_integer_weight_with_a_float_input_becomes_float_itself():
    x, weight = tp.ones(2, 3), tp.ones(2, 3, dtype=tp.int64)
    message = refusal(RuntimeError, lambda: F.linear(x, weight))
    assert "weight.float()" in message and "input.long()" not in message, message
    assert F.linear(x, weight.float()).dtype == np.float32


@pytest.mark.parametrize("weight_dtype, input_dtype", [
    (weight, data) for weight in ("float16", "float32", "float64", "int32", "int64", "bool")
    for data in ("float16", "float32", "float64", "uint8", "int32", "int64", "bool") if weight != data])
def test_dtype_advice_never_turns_weights_into_integers(weight_dtype, input_dtype):
    for name in ("weight", "running_mean"):
        advice = dtype_advice(name, weight_dtype, input_dtype)
        assert not INTEGER_WEIGHTS.search(advice), advice
        assert advice.startswith("convert ") and "()" in advice, advice
        if np.dtype(weight_dtype).kind == "f":  # float weights: the data moves to them
            assert f"input{cast_spelling(weight_dtype)}" in advice, advice
    advice = operands_advice("input", input_dtype, "other", weight_dtype)
    assert not re.search(r"\.(long|int|bool)\(\)", advice), advice


# ---- gradcheck and requires_grad: .double() / .float(), torch's message first ----------------
def test_gradcheck_on_float32_says_double():
    x = tp.ones(3, requires_grad=True)
    message = refusal(TypeError, lambda: gradcheck(lambda a: (a * a).sum(), [x]))
    assert message.startswith("gradcheck: input 0 has dtype float32; finite differences need "
                              "float64"), message
    assert "x.double()" in message and "model.double()" in message, message
    assert gradcheck(lambda a: (a * a).sum(), [x.detach().double().requires_grad_()])


@pytest.mark.parametrize("dtype", [np.int64, np.bool_])
@pytest.mark.parametrize("how", ["requires_grad_", "setter", "factory"])
def test_requires_grad_on_an_integer_or_bool_tensor_says_float(dtype, how):
    data = np.array([1, 0, 1]).astype(dtype)
    calls = {"requires_grad_": lambda: tensor(data).requires_grad_(),
             "setter": lambda: setattr(tensor(data), "requires_grad", True),
             "factory": lambda: tensor(data, requires_grad=True)}
    message = refusal(RuntimeError, calls[how])
    torch_words = "only Tensors of floating point dtype can require gradients"
    assert message.index(torch_words) < message.index("x.float()"), message
    assert "x.double()" in message and f"dtype {np.dtype(dtype).name}" in message, message
    x = tensor(data).float().requires_grad_()  # the advice, followed
    assert x.requires_grad and x.dtype == np.float32


@pytest.mark.parametrize("dtype", ["int64", "bool"])
def test_requires_grad_keeps_torchs_message_and_error_type(torch, dtype):
    with pytest.raises(RuntimeError) as theirs:
        torch.zeros(3, dtype=getattr(torch, dtype)).requires_grad_()
    with pytest.raises(RuntimeError) as ours:
        tp.zeros(3, dtype=getattr(tp, dtype)).requires_grad_()
    assert str(theirs.value) in str(ours.value)


@pytest.mark.parametrize("case", ["uint8_conv2d", "float64_conv2d", "uint8_linear",
                                  "float64_linear", "uint8_batch_norm"])
def test_the_error_types_are_torchs(torch, case):
    """The advice is ours; the error type stays torch's."""
    dtype, layer = case.split("_", 1)

    def call(lib):
        lib.manual_seed(0)
        make = {"conv2d": lambda: (lib.nn.Conv2d(3, 4, 3), lib.zeros(1, 3, 5, 5)),
                "linear": lambda: (lib.nn.Linear(3, 2), lib.zeros(2, 3)),
                "batch_norm": lambda: (lib.nn.BatchNorm2d(3), lib.zeros(2, 3, 5, 5))}[layer]
        model, x = make()
        return model(x.to(getattr(lib, dtype)))

    with pytest.raises(Exception) as theirs:
        call(torch)
    with pytest.raises(Exception) as ours:
        call(tp)
    assert isinstance(ours.value, type(theirs.value)), (ours.value, theirs.value)


# ---- other dtype refusals: each names a torch spelling that fixes it --------------------------
@pytest.mark.parametrize("call, spelling, fixed", [
    (lambda: tp.ones(2, 3) @ tp.ones(3, 2, dtype=tp.int64), "other.float()",
     lambda: tp.ones(2, 3) @ tp.ones(3, 2, dtype=tp.int64).float()),
    (lambda: tp.ones(2, 3).double() @ tp.ones(3, 2), "input.float()",
     lambda: tp.ones(2, 3).double().float() @ tp.ones(3, 2)),
    (lambda: F.binary_cross_entropy(tp.full((3,), 0.5), tp.ones(3).double()), "target.float()",
     lambda: F.binary_cross_entropy(tp.full((3,), 0.5), tp.ones(3).double().float())),
    (lambda: F.dropout(tp.ones(3, dtype=tp.int64), 0.5), "input.float()",
     lambda: F.dropout(tp.ones(3, dtype=tp.int64).float(), 0.5)),
    (lambda: tp.ones(3, dtype=tp.int64).std(), "input.float().std()",
     lambda: tp.ones(3, dtype=tp.int64).float().std()),
    (lambda: F.embedding(tp.zeros(3), tp.ones(2, 4)), "input.long()",
     lambda: F.embedding(tp.zeros(3).long(), tp.ones(2, 4))),
    (lambda: F.max_pool2d(images(np.bool_), 2), "input.float()",
     lambda: F.max_pool2d(images(np.bool_).float(), 2)),
    (lambda: F.layer_norm(images(np.uint8), (5,)), "input.float()",
     lambda: F.layer_norm(images(np.uint8).float(), (5,))),
], ids=["matmul_int", "matmul_float64", "bce_target", "dropout", "std", "embedding",
        "max_pool2d_bool", "layer_norm_uint8"])
def test_each_dtype_refusal_names_a_torch_spelling_that_works(call, spelling, fixed):
    message = refusal((RuntimeError, NotImplementedError), call)
    assert spelling in message, message
    fixed()


def test_module_to_an_integer_dtype_advises_a_float_model_and_converting_the_input():
    message = refusal(TypeError, lambda: nn.Linear(2, 2).to(tp.int64))
    assert message.startswith("nn.Module.to only accepts floating point or complex dtypes, but "
                              "got desired dtype=int64"), message
    assert "model.float()" in message and "x.float()" in message, message


def test_assigning_a_gradient_of_another_dtype_says_how_to_convert_it():
    x = tp.ones(3)
    message = refusal(RuntimeError, lambda: setattr(x, "grad", tp.ones(3).double()))
    assert "x.grad = g.float()" in message and ".to(float32)" not in message, message
    x.grad = tp.ones(3).double().float()
    assert x.grad.dtype == np.float32


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64", "int32", "int64", "bool", "uint8",
                                   "int8", "int16"])
def test_cast_spellings_convert_here_and_in_torch(dtype):
    spelling = cast_spelling(dtype)
    assert convert(tp.ones(2), spelling).dtype == np.dtype(dtype)


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64", "int32", "int64", "bool", "uint8"])
def test_cast_spellings_are_torchs(torch, dtype):
    x = eval(f"x{cast_spelling(dtype)}", {"x": torch.ones(2), "torch": torch})
    assert x.dtype == getattr(torch, dtype)


# ---- counts: "1 channel", "2 channels" -------------------------------------------------------
def test_plural():
    assert [plural(n, "channel") for n in (0, 1, 2)] == ["0 channels", "1 channel", "2 channels"]
    assert plural(1, "index", "indices") == "1 index" and plural(3, "index", "indices") == "3 indices"


@pytest.mark.parametrize("call, expected", [
    (lambda: F.conv2d(tp.ones(1, 1, 5, 5), tp.ones(2, 3, 3, 3)), "input has 1 channel but weight expects 3"),
    (lambda: F.conv2d(tp.ones(1, 2, 5, 5), tp.ones(2, 1, 3, 3)), "input has 2 channels but weight expects 1"),
    (lambda: nn.Conv2d(3, 4, 3)(tp.ones(1, 1, 5, 5)), "input has 1 channel but weight expects 3"),
    (lambda: F.conv_transpose2d(tp.ones(1, 1, 5, 5), tp.ones(3, 2, 3, 3)),
     "input has 1 channel but weight expects 3"),
    (lambda: F.conv_transpose2d(tp.ones(1, 3, 5, 5), tp.ones(1, 2, 3, 3)),
     "input has 3 channels but weight expects 1"),
    (lambda: F.conv2d(tp.ones(1, 2, 5, 5), tp.ones(1, 1, 3, 3), groups=2), "weight has 1 filter, not"),
    (lambda: tp.ones(1).reshape(2), "input of shape (1,) (1 element)"),
    (lambda: tp.ones(3).reshape(2),
     "shape (2,) (2 elements) is invalid for input of shape (3,) (3 elements)"),
    (lambda: tp.ones(3).permute(0, 1), "each of the input's 1 dim once (got 2 dims)"),
    (lambda: tp.ones(2, 2).expand(3), "gives 1 size, fewer than the input's 2 dims"),
    (lambda: tp.einsum("ij,jk->ik", tp.ones(2, 2)), "names 2 operands but 1 was given"),
    (lambda: tp.einsum("i->i", tp.ones(2, 2)), "name 1 dimension for operand 0"),
    (lambda: F.pad(tp.ones(1), (-2, 0)), "crops 2 elements from dim 0"),
    (lambda: F.pad(tp.ones(0), (-1, 0)), "crops 1 element from dim 0"),
    (lambda: F.embedding(tp.tensor([1]), tp.ones(1, 2)), "for a weight with 1 row;"),
    (lambda: F.embedding(tp.tensor([2]), tp.ones(2, 2)), "for a weight with 2 rows;"),
    (lambda: tp.take_along_dim(tp.ones(3), tp.zeros(1, 1, dtype=tp.int64), 0),
     "but got 1 dimension for input, and 2 dimensions for indices"),
], ids=lambda value: value if isinstance(value, str) else "")
def test_counts_read_right_in_singular_and_plural(call, expected):
    with pytest.raises((RuntimeError, IndexError)) as info:  # (torch's types for these)
        call()
    message = str(info.value)
    assert expected in message, message
    assert not re.search(r"\b1 (channels|elements|dims|dimensions|sizes|filters|rows|operands)\b",
                         message), message


class WrongOnOneElement(Node):
    """2x whose backward gives 3 (a wrong derivative), for a gradcheck failure on a 1-element input"""

    def forward(ctx, x):
        return 2 * x

    def backward(ctx, grad):
        return 3 * grad


def test_gradcheck_counts_read_right():
    x = tp.ones(1, dtype=tp.float64, requires_grad=True)
    with pytest.raises(AssertionError) as info:
        gradcheck(WrongOnOneElement.apply, [x])
    assert "1 of 1 element differs" in str(info.value), str(info.value)
    report = str(gradcheck_report(WrongOnOneElement.apply, [x]))
    assert "1 failure, 0 kinks" in report, report
