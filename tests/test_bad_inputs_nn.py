"""The nn layers, Module's methods, the optimizers and schedulers, utils.data, nn.init, nn.utils,
gradcheck and autograd.grad, each argument spoilt in turn (see tests/badinput.py for the rule):
torch's error type and a message naming the function and the argument where torch refuses,
torch's result where torch accepts, and nothing changed by a refused call.

Which name the message must carry:
- a constructor: the class name ("Linear", "SGD", "DataLoader");
- a layer's forward: the class name, or the functional it calls ("max_pool2d") — torch's layers
  keep most settings unchecked until then, and their functional refuses them;
- a method or function: its own name ("load_state_dict", "clip_grad_norm_").
"""
import math
import warnings

import numpy as np
import pytest

import tinygrad_pool
from badinput import Case, parameters, problems

rng = np.random.default_rng(0)
IMAGES = rng.standard_normal((2, 3, 6, 6)).astype(np.float32)
WEIGHT = rng.standard_normal((4, 3, 3, 3)).astype(np.float32)
ROWS = rng.standard_normal((4, 5)).astype(np.float32)
SEQUENCE = rng.standard_normal((4, 5, 3)).astype(np.float32)
COLUMNS = rng.standard_normal((2, 12, 25)).astype(np.float32)
LABELS = np.array([1, 0, 4, 2])
PROBS = rng.random((4, 5)).astype(np.float32)


def as_tensor(fw, array):
    return tinygrad_pool.tensor(array) if fw is tinygrad_pool else fw.tensor(array)


def fill_parameters(fw, module) -> None:
    """The same values in either framework's parameters (cosines of their positions), so that
    outputs compare."""
    values = {name: np.cos(np.arange(p.numel())).reshape(tuple(p.shape)).astype(
        np.float32 if fw is tinygrad_pool else None) for name, p in module.named_parameters()}
    if fw is not tinygrad_pool:
        values = {name: fw.tensor(v, dtype=p.dtype)
                  for (name, v), p in zip(values.items(), module.parameters())}
    module.load_state_dict(values, strict=False)


def summary(module, output) -> tuple:
    """What a layer is compared by: its output and the shapes of its state."""
    shapes = tuple(np.asarray(tuple(v.shape)) for v in module.state_dict().values())
    return (output,) + shapes


def layer(name, *positional, inputs=(ROWS,), deterministic=True, **keywords):
    """Construct ``nn.<name>`` from the spoilt arguments, then call it on ``inputs``."""
    def call(fw, F, *args, **kwargs):
        module = getattr(fw.nn, name)(*args, **kwargs)
        fill_parameters(fw, module)
        return summary(module, module(*(as_tensor(fw, x) for x in inputs)))
    params = [(p, v, False) for p, v in positional] + [(p, v, True) for p, v in keywords.items()]
    return Case(call, params, deterministic=deterministic)


# constructor name -> (the functional its forward calls, if any; the case)
CONSTRUCTORS = {
    "Linear": ("linear", layer("Linear", ("in_features", 5), ("out_features", 3), bias=True)),
    "Conv2d": ("conv2d", layer("Conv2d", ("in_channels", 3), ("out_channels", 4),
                               ("kernel_size", 3), inputs=(IMAGES,), stride=1, padding=0,
                               dilation=1, groups=1, bias=True, padding_mode="zeros")),
    "MaxPool2d": ("max_pool2d", layer("MaxPool2d", ("kernel_size", 2), inputs=(IMAGES,),
                                      stride=None, padding=0, dilation=1, return_indices=False,
                                      ceil_mode=False)),
    "AvgPool2d": ("avg_pool2d", layer("AvgPool2d", ("kernel_size", 2), inputs=(IMAGES,),
                                      stride=None, padding=0, ceil_mode=False,
                                      count_include_pad=True, divisor_override=None)),
    "AdaptiveAvgPool2d": ("adaptive_avg_pool2d", layer("AdaptiveAvgPool2d", ("output_size", 3),
                                                       inputs=(IMAGES,))),
    "AdaptiveMaxPool2d": ("adaptive_max_pool2d", layer("AdaptiveMaxPool2d", ("output_size", 3),
                                                       inputs=(IMAGES,), return_indices=False)),
    "MaxUnpool2d": ("max_unpool2d", layer("MaxUnpool2d", ("kernel_size", 2),
                                          inputs=(IMAGES[:, :, :3, :3],
                                                  np.zeros((2, 3, 3, 3), np.int64)),
                                          stride=None, padding=0)),
    "Unfold": ("unfold", layer("Unfold", ("kernel_size", 2), inputs=(IMAGES,), dilation=1,
                               padding=0, stride=1)),
    "Fold": ("fold", layer("Fold", ("output_size", (6, 6)), ("kernel_size", 2),
                           inputs=(COLUMNS,), dilation=1, padding=0, stride=1)),
    "BatchNorm1d": ("batch_norm", layer("BatchNorm1d", ("num_features", 5), eps=1e-5,
                                        momentum=0.1, affine=True, track_running_stats=True)),
    "BatchNorm2d": ("batch_norm", layer("BatchNorm2d", ("num_features", 3), inputs=(IMAGES,),
                                        eps=1e-5, momentum=0.1, affine=True,
                                        track_running_stats=True)),
    "LayerNorm": ("layer_norm", layer("LayerNorm", ("normalized_shape", 5), eps=1e-5,
                                      elementwise_affine=True, bias=True)),
    "Dropout": ("dropout", layer("Dropout", ("p", 0.5), deterministic=False, inplace=False)),
    "Dropout2d": ("dropout2d", layer("Dropout2d", ("p", 0.5), inputs=(IMAGES,),
                                     deterministic=False, inplace=False)),
    "Embedding": ("embedding", layer("Embedding", ("num_embeddings", 5), ("embedding_dim", 3),
                                     inputs=(LABELS,), padding_idx=None, max_norm=None,
                                     norm_type=2.0, scale_grad_by_freq=False, sparse=False)),
    "Flatten": ("flatten", layer("Flatten", inputs=(IMAGES,), start_dim=1, end_dim=-1)),
    "Unflatten": ("unflatten", layer("Unflatten", ("dim", 1), ("unflattened_size", (5, 1)))),
    "ReLU": ("relu", layer("ReLU", inplace=False)),
    "LeakyReLU": ("leaky_relu", layer("LeakyReLU", negative_slope=0.01, inplace=False)),
    "ELU": ("elu", layer("ELU", alpha=1.0, inplace=False)),
    "GELU": ("gelu", layer("GELU", approximate="none")),
    "SiLU": ("silu", layer("SiLU", inplace=False)),
    "Softmax": ("softmax", layer("Softmax", dim=1)),
    "LogSoftmax": ("log_softmax", layer("LogSoftmax", dim=1)),
    "CrossEntropyLoss": ("cross_entropy", layer(
        "CrossEntropyLoss", inputs=(ROWS, LABELS), weight=np.ones(5, np.float32),
        ignore_index=-100, reduction="mean", label_smoothing=0.0)),
    "NLLLoss": ("nll_loss", layer("NLLLoss", inputs=(ROWS, LABELS), weight=np.ones(5, np.float32),
                                  ignore_index=-100, reduction="mean")),
    "MSELoss": ("mse_loss", layer("MSELoss", inputs=(ROWS, PROBS), reduction="mean")),
    "L1Loss": ("l1_loss", layer("L1Loss", inputs=(ROWS, PROBS), reduction="mean")),
    "SmoothL1Loss": ("smooth_l1_loss", layer("SmoothL1Loss", inputs=(ROWS, PROBS),
                                             reduction="mean", beta=1.0)),
    "HuberLoss": ("huber_loss", layer("HuberLoss", inputs=(ROWS, PROBS), reduction="mean",
                                      delta=1.0)),
    "BCELoss": ("binary_cross_entropy", layer("BCELoss", inputs=(PROBS, PROBS),
                                              weight=np.ones(5, np.float32), reduction="mean")),
    "BCEWithLogitsLoss": ("binary_cross_entropy_with_logits", layer(
        "BCEWithLogitsLoss", inputs=(ROWS, PROBS), weight=np.ones(5, np.float32),
        reduction="mean", pos_weight=np.ones(5, np.float32))),
}
# (Softplus and LogSigmoid come with the numerics change to nn/activation.py)
if hasattr(tinygrad_pool.nn, "Softplus"):
    CONSTRUCTORS["Softplus"] = ("softplus", layer("Softplus", beta=1.0, threshold=20.0))
if hasattr(tinygrad_pool.nn, "LogSigmoid"):
    CONSTRUCTORS["LogSigmoid"] = ("logsigmoid", layer("LogSigmoid"))

NOT_BOOL = ("str", "None", "negative", "zero", "float", "nan", "inf", "list3", "tuple3", "complex")
FLAG = ("a flag must be a bool (the issue: 'flags of the right type'); torch's constructor only "
        "tests its truthiness, so 'no' would mean True")
SIZE = ("a size must be an int, a bool refused (the issue); torch builds a layer from True as 1, "
        "or, from 2.5, fails by accident (in_channels % groups: ValueError; torch.empty: "
        "TypeError)")
EMPTY_LAYER = ("a layer of size 0 is valid (torch makes it too); it is the input that does not "
               "fit it, and the functional says so, naming the input, as torch's does")
UNPOOL = ("MaxUnpool2d's geometry is max_unpool2d's to check, at the call: its table "
          "(test_bad_inputs_conv_pool.py) gives the reasons it refuses zero, negative, bool and "
          "3-element sizes torch computes with")
# constructor -> "parameter=spoilt" -> why our answer differs from torch's on purpose
ALLOWED_CONSTRUCTORS = {name: {} for name in CONSTRUCTORS}
for _name, _flags in {"Linear": ("bias",), "Conv2d": ("bias",), "MaxPool2d": ("return_indices",),
                      "AdaptiveMaxPool2d": ("return_indices",),
                      "BatchNorm1d": ("affine", "track_running_stats"),
                      "BatchNorm2d": ("affine", "track_running_stats"),
                      "LayerNorm": ("elementwise_affine", "bias"), "Dropout": ("inplace",),
                      "Dropout2d": ("inplace",), "LeakyReLU": ("inplace",), "ELU": ("inplace",),
                      "SiLU": ("inplace",), "ReLU": ("inplace",)}.items():
    ALLOWED_CONSTRUCTORS[_name].update({f"{flag}={spoilt}": FLAG for flag in _flags
                                        for spoilt in NOT_BOOL})
for _name, _sizes in {"Linear": ("in_features", "out_features"),
                      "Conv2d": ("in_channels", "out_channels", "groups", "kernel_size"),
                      "Embedding": ("num_embeddings", "embedding_dim"),
                      "BatchNorm1d": ("num_features",), "BatchNorm2d": ("num_features",)}.items():
    ALLOWED_CONSTRUCTORS[_name].update({f"{size}={spoilt}": SIZE for size in _sizes
                                        for spoilt in ("bool", "float", "nan", "inf")})
for _name in ("BatchNorm1d", "BatchNorm2d"):
    ALLOWED_CONSTRUCTORS[_name].update({
        "num_features=zero": EMPTY_LAYER,
        "num_features=list3": "torch makes running statistics of shape (1, 2, 3) from a list "
                              "(and refuses every input); num_features is a count",
        "num_features=tuple3": "as num_features=list3"})
ALLOWED_CONSTRUCTORS["Conv2d"]["in_channels=zero"] = EMPTY_LAYER
ALLOWED_CONSTRUCTORS["Conv2d"]["padding_mode=list3"] = (
    "torch's TypeError comes from looking a list up in a set; a padding_mode that is not one of "
    "the four is a ValueError, as torch has it for every other value")
ALLOWED_CONSTRUCTORS["Embedding"].update({
    "num_embeddings=zero": EMPTY_LAYER,
    "sparse=bool": "sparse gradients are not supported (NotImplementedError, docs/porting.md)",
    **{f"padding_idx={spoilt}": "torch trips over a float padding_idx by accident (IndexError "
       "from indexing with it, AssertionError from its range check); a float index is a "
       "TypeError" for spoilt in ("float", "nan", "inf")}})
ALLOWED_CONSTRUCTORS["MaxUnpool2d"].update({f"{parameter}={spoilt}": UNPOOL
                                            for parameter in ("kernel_size", "stride", "padding")
                                            for spoilt in ("bool", "zero", "negative", "list3",
                                                           "tuple3", "float", "nan", "inf")})
ALLOWED_CONSTRUCTORS["AvgPool2d"]["divisor_override=negative"] = (
    "a negative divisor turns the average into minus an average; as avg_pool2d's table says")
ALLOWED_CONSTRUCTORS["Unflatten"].update({
    f"unflattened_size={spoilt}": "sizes that do not multiply up to the dim are unflatten's to "
    "refuse at the call, naming its own argument, sizes, as torch's" for spoilt in ("list3",
                                                                                    "tuple3")})
ALLOWED_CONSTRUCTORS["CrossEntropyLoss"]["label_smoothing=nan"] = (
    "torch takes a NaN label_smoothing and returns NaN; it is refused as out of [0, 1]")
for _name, _parameter in (("LeakyReLU", "negative_slope"), ("ELU", "alpha"), ("Softplus", "beta"),
                          ("Softplus", "threshold")):
    ALLOWED_CONSTRUCTORS.setdefault(_name, {})[f"{_parameter}=complex"] = (
        "torch fails to convert a complex Scalar (RuntimeError); it is the wrong type for a real "
        "parameter: TypeError, as leaky_relu's and elu's tables have it")


@pytest.mark.parametrize("name, parameter", parameters(
    {name: case for name, (_, case) in CONSTRUCTORS.items()}))
def test_spoilt_constructor_argument(torch, name, parameter):
    functional, case = CONSTRUCTORS[name]
    found = problems(name, (name, functional), case, parameter, ALLOWED_CONSTRUCTORS[name])
    assert not found, "\n".join(found)


def forward(name, *args, input=ROWS, extra=(), **kwargs):
    """Call a layer made from valid arguments on a spoilt ``input`` (and valid ``extra``)."""
    def call(fw, F, input):
        module = getattr(fw.nn, name)(*args, **kwargs)
        fill_parameters(fw, module)
        return module(input, *(as_tensor(fw, x) for x in extra))
    return Case(call, [("input", input, False)])


# layer -> (names its forward's errors may carry, the case)
FORWARDS = {
    "Linear": (("Linear", "linear"), forward("Linear", 5, 3)),
    "Conv2d": (("Conv2d", "conv2d"), forward("Conv2d", 3, 4, 3, input=IMAGES)),
    "MaxPool2d": (("MaxPool2d", "max_pool2d"), forward("MaxPool2d", 2, input=IMAGES)),
    "AvgPool2d": (("AvgPool2d", "avg_pool2d"), forward("AvgPool2d", 2, input=IMAGES)),
    "AdaptiveAvgPool2d": (("AdaptiveAvgPool2d", "adaptive_avg_pool2d"),
                          forward("AdaptiveAvgPool2d", 3, input=IMAGES)),
    "AdaptiveMaxPool2d": (("AdaptiveMaxPool2d", "adaptive_max_pool2d"),
                          forward("AdaptiveMaxPool2d", 3, input=IMAGES)),
    "Unfold": (("Unfold", "unfold"), forward("Unfold", 2, input=IMAGES)),
    "Fold": (("Fold", "fold"), forward("Fold", (6, 6), 2, input=COLUMNS)),
    "BatchNorm1d": (("BatchNorm1d", "batch_norm"), forward("BatchNorm1d", 5)),
    "BatchNorm1d (N, C, L)": (("BatchNorm1d", "batch_norm"), forward("BatchNorm1d", 5,
                                                                     input=SEQUENCE)),
    "BatchNorm2d": (("BatchNorm2d", "batch_norm"), forward("BatchNorm2d", 3, input=IMAGES)),
    "LayerNorm": (("LayerNorm", "layer_norm"), forward("LayerNorm", 5)),
    "Embedding": (("Embedding", "embedding"), forward("Embedding", 5, 3, input=LABELS)),
    "Flatten": (("Flatten", "flatten"), forward("Flatten", input=IMAGES)),
    "Unflatten": (("Unflatten", "unflatten"), forward("Unflatten", 1, (5, 1))),
    "CrossEntropyLoss": (("CrossEntropyLoss", "cross_entropy"),
                         forward("CrossEntropyLoss", extra=(LABELS,))),
    "MSELoss": (("MSELoss", "mse_loss"), forward("MSELoss", extra=(PROBS,))),
    "BCEWithLogitsLoss": (("BCEWithLogitsLoss", "binary_cross_entropy_with_logits"),
                          forward("BCEWithLogitsLoss", extra=(PROBS,))),
}
ALLOWED_FORWARDS = {name: {} for name in FORWARDS}
ALLOWED_FORWARDS["BCEWithLogitsLoss"]["input=-inf"] = (
    "torch's formula makes inf - inf = NaN at a logit of -inf; the loss there is +inf (or 0 for "
    "a target of 0), which the stable form computes")


@pytest.mark.parametrize("name, parameter", parameters(
    {name: case for name, (_, case) in FORWARDS.items()}))
def test_spoilt_forward_input(torch, name, parameter):
    names, case = FORWARDS[name]
    found = problems(name, names, case, parameter, ALLOWED_FORWARDS[name])
    assert not found, "\n".join(found)


# ---- the rest of the API: optimizers, schedulers, data, init, utils, autograd ------------------
def leaf(fw, array=ROWS):
    """A fresh leaf that requires grad, as a parameter (each call its own copy)."""
    if fw is tinygrad_pool:
        return tinygrad_pool.tensor(array.copy(), requires_grad=True)
    return fw.tensor(array.copy(), requires_grad=True)


def keywords_case(call, deterministic=True, **keywords):
    return Case(call, [(name, value, True) for name, value in keywords.items()],
                deterministic=deterministic)


def optimizer(name, **options):
    """``optim.<name>([p], **options)``, then two steps; compared by the parameter."""
    def call(fw, F, **kwargs):
        param = leaf(fw)
        opt = getattr(fw.optim, name)([param], **kwargs)
        for _ in range(2):
            param.grad = as_tensor(fw, PROBS)
            opt.step()
        return param.detach()
    return keywords_case(call, **options)


def scheduler(name, *positional, **options):
    """``lr_scheduler.<name>(SGD(lr=0.1), ...)``, then four epochs; compared by the rates."""
    def call(fw, F, *args, **kwargs):
        opt = fw.optim.SGD([leaf(fw)], lr=0.1, momentum=0.9)
        schedule = getattr(fw.optim.lr_scheduler, name)(opt, *args, **kwargs)
        rates = []
        for _ in range(4):
            opt.step()
            schedule.step(*([1.0] if name == "ReduceLROnPlateau" else []))
            rates.append(opt.param_groups[0]["lr"])
        return np.array(rates)
    params = [(p, v, False) for p, v in positional] + [(p, v, True) for p, v in options.items()]
    return Case(call, params)


def dataset(fw):
    return fw.utils.data.TensorDataset(as_tensor(fw, ROWS), as_tensor(fw, LABELS))


def loader(**options):
    def call(fw, F, **kwargs):
        return list(fw.utils.data.DataLoader(dataset(fw), **kwargs))
    return keywords_case(call, **options)


def random_split(fw, F, lengths):
    return [len(part) for part in fw.utils.data.random_split(dataset(fw), lengths)]


def subset(fw, F, indices):
    part = fw.utils.data.Subset(dataset(fw), indices)
    return [part[i] for i in range(len(part))]


def init(name, *positional, **options):
    """``nn.init.<name>(tensor, ...)``: random draws differ, so compared by refusal only."""
    def call(fw, F, tensor, *args, **kwargs):
        return getattr(fw.nn.init, name)(tensor, *args, **kwargs)
    params = [("tensor", WEIGHT, False)] + [(p, v, False) for p, v in positional] + [
        (p, v, True) for p, v in options.items()]
    return Case(call, params, deterministic=False)


def calculate_gain(fw, F, nonlinearity, param):
    return fw.nn.init.calculate_gain(nonlinearity, param)


def with_grads(fw):
    params = [leaf(fw), leaf(fw, PROBS)]
    for p in params:
        p.grad = as_tensor(fw, -2 * p.detach().numpy())
    return params


def clip_grad_norm_(fw, F, **kwargs):
    params = with_grads(fw)
    total = fw.nn.utils.clip_grad_norm_(params, **kwargs)
    return [total] + [p.grad for p in params]


def clip_grad_value_(fw, F, **kwargs):
    params = with_grads(fw)
    fw.nn.utils.clip_grad_value_(params, **kwargs)
    return [p.grad for p in params]


def parameters_to_vector(fw, F, parameters):
    return fw.nn.utils.parameters_to_vector(parameters)


def vector_to_parameters(fw, F, vec):
    params = [leaf(fw), leaf(fw, PROBS)]
    fw.nn.utils.vector_to_parameters(vec, params)
    return [p.detach() for p in params]


def gradcheck(fw, F, **kwargs):
    x = leaf(fw, ROWS.astype(np.float64))
    return fw.autograd.gradcheck(lambda t: (t * t).sum(), (x,), **kwargs)


def grad(fw, F, **kwargs):
    x = leaf(fw)
    return fw.autograd.grad(x * 2, [x], **kwargs)


def register_buffer(fw, F, name, tensor, persistent):
    module = fw.nn.Linear(5, 3)
    module.register_buffer(name, tensor, persistent)
    return [buffer for buffer in module.buffers()]


def module_method(method):
    """``Linear(5, 3).<method>(...)`` on fixed weights; compared by what it returns (parameters
    for the methods that return the module or nothing)."""
    def call(fw, F, *args, **kwargs):
        module = fw.nn.Linear(5, 3)
        fill_parameters(fw, module)
        result = getattr(module, method)(*args, **kwargs)
        if result is None or isinstance(result, fw.nn.Module):
            return [p.detach() for p in module.parameters()]
        return [tensor for _, tensor in result] if method.startswith("named") else list(result)
    return call


API = {
    "SGD": optimizer("SGD", lr=0.1, momentum=0.9, dampening=0.0, weight_decay=0.01,
                     nesterov=False, maximize=False),
    "SGD nesterov": optimizer("SGD", lr=0.1, momentum=0.9, nesterov=True),
    "Adam": optimizer("Adam", lr=0.1, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.01,
                      amsgrad=False, maximize=False),
    "AdamW": optimizer("AdamW", lr=0.1, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.01,
                       amsgrad=True),
    "RMSprop": optimizer("RMSprop", lr=0.1, alpha=0.99, eps=1e-8, weight_decay=0.01,
                         momentum=0.9, centered=False),
    "Adagrad": optimizer("Adagrad", lr=0.1, lr_decay=0.01, weight_decay=0.01,
                         initial_accumulator_value=0.1, eps=1e-10),
    "StepLR": scheduler("StepLR", ("step_size", 2), gamma=0.5),
    "MultiStepLR": scheduler("MultiStepLR", ("milestones", [1, 3]), gamma=0.5),
    "ExponentialLR": scheduler("ExponentialLR", ("gamma", 0.5)),
    "CosineAnnealingLR": scheduler("CosineAnnealingLR", ("T_max", 3), eta_min=0.01),
    "LambdaLR": scheduler("LambdaLR", ("lr_lambda", lambda epoch: 0.5 ** epoch)),
    "ReduceLROnPlateau": scheduler("ReduceLROnPlateau", mode="min", factor=0.5, patience=1,
                                   threshold=1e-4, threshold_mode="rel", cooldown=0, min_lr=0.0,
                                   eps=1e-8),
    "OneCycleLR": scheduler("OneCycleLR", ("max_lr", 1.0), total_steps=10, pct_start=0.3,
                            anneal_strategy="cos", cycle_momentum=True, div_factor=25.0,
                            final_div_factor=1e4, three_phase=False),
    # (num_workers is tests/test_data.py's: a spoilt one starts torch's worker processes)
    "DataLoader": loader(batch_size=3, drop_last=False, sampler=None, batch_sampler=None,
                         collate_fn=None),
    "DataLoader shuffle": keywords_case(loader(shuffle=False).call, deterministic=False,
                                        batch_size=3, shuffle=False),
    "random_split": Case(random_split, [("lengths", [3, 1], False)]),
    "random_split fractions": Case(random_split, [("lengths", [0.5, 0.5], False)]),
    "Subset": Case(subset, [("indices", [0, 2], False)]),
    "uniform_": init("uniform_", ("a", -1.0), ("b", 1.0)),
    "normal_": init("normal_", ("mean", 0.0), ("std", 1.0)),
    "constant_": init("constant_", ("val", 0.5)),
    "xavier_uniform_": init("xavier_uniform_", gain=1.0),
    "xavier_normal_": init("xavier_normal_", gain=1.0),
    "kaiming_uniform_": init("kaiming_uniform_", a=0.0, mode="fan_in", nonlinearity="relu"),
    "kaiming_normal_": init("kaiming_normal_", a=0.0, mode="fan_out",
                            nonlinearity="leaky_relu"),
    "calculate_gain": Case(calculate_gain, [("nonlinearity", "leaky_relu", False),
                                            ("param", 0.2, False)]),
    "clip_grad_norm_": keywords_case(clip_grad_norm_, max_norm=1.0, norm_type=2.0,
                                     error_if_nonfinite=False),
    "clip_grad_value_": keywords_case(clip_grad_value_, clip_value=0.5),
    "parameters_to_vector": Case(parameters_to_vector, [("parameters", [ROWS, PROBS], False)]),
    "vector_to_parameters": Case(vector_to_parameters,
                                 [("vec", np.arange(40, dtype=np.float32), False)]),
    "gradcheck": keywords_case(gradcheck, eps=1e-6, atol=1e-5, rtol=1e-3,
                               raise_exception=True),
    "grad": keywords_case(grad, grad_outputs=PROBS, retain_graph=None, create_graph=False,
                          allow_unused=None),
    "register_buffer": Case(register_buffer, [("name", "running", False),
                                              ("tensor", ROWS, False),
                                              ("persistent", True, False)]),
    "train": Case(module_method("train"), [("mode", True, False)]),
    "zero_grad": Case(module_method("zero_grad"), [("set_to_none", True, False)]),
    "apply": Case(module_method("apply"), [("fn", lambda module: None, False)]),
    "parameters": Case(module_method("parameters"), [("recurse", True, False)]),
    "named_parameters": Case(module_method("named_parameters"),
                             [("prefix", "", False), ("recurse", True, False),
                              ("remove_duplicate", True, False)]),
    "requires_grad_": Case(module_method("requires_grad_"), [("requires_grad", True, False)]),
}
NAN_OPTION = "torch's range check lets NaN through (and every step then makes NaN); it is refused"
BOOL_NUMBER = ("True is the number 1, as torch's own checks take it; torch's step then trips on "
               "a bool in its kernels (RuntimeError)")
COMPLEX = "a complex number is the wrong type for this real setting: TypeError"
TORCH_TEXT = ("torch's text word for word (tests/test_data.py pins it): it names the argument; "
              "the DataLoader is the call that was just made")
ALLOWED_API = {name: {} for name in API}
ALLOWED_API["SGD"].update({"lr=nan": NAN_OPTION, "momentum=nan": NAN_OPTION,
                           "weight_decay=nan": NAN_OPTION, "dampening=complex": COMPLEX})
ALLOWED_API["SGD nesterov"].update({"lr=nan": NAN_OPTION, "momentum=nan": NAN_OPTION,
                                    "momentum=bool": BOOL_NUMBER})
for _name in ("SGD", "Adam", "AdamW", "RMSprop", "Adagrad"):
    ALLOWED_API[_name]["weight_decay=bool"] = BOOL_NUMBER
ALLOWED_API["StepLR"].update({f"step_size={spoilt}": (
    "step_size is a count of epochs, an int >= 1: torch takes True, -1, 2.5 and NaN (and divides "
    "by zero on 0, a ZeroDivisionError)") for spoilt in ("bool", "negative", "zero", "float",
                                                         "nan", "inf")})
ALLOWED_API["CosineAnnealingLR"].update({f"T_max={spoilt}": (
    "T_max must be > 0: torch takes -1 and NaN (and divides by zero on 0, a ZeroDivisionError)")
    for spoilt in ("negative", "zero", "nan")})
for _name, _parameter in (("StepLR", "gamma"), ("MultiStepLR", "gamma"), ("ExponentialLR", "gamma"),
                          ("CosineAnnealingLR", "eta_min"), ("OneCycleLR", "max_lr"),
                          ("OneCycleLR", "div_factor"), ("OneCycleLR", "final_div_factor")):
    ALLOWED_API[_name][f"{_parameter}=complex"] = COMPLEX + " (torch computes complex rates)"
ALLOWED_API["MultiStepLR"].update({f"milestones={spoilt}": (
    "torch makes a Counter of whatever it gets (the letters of 'a', nothing of None): no epoch "
    "ever matches; milestones must be a list of ints") for spoilt in ("str", "None")})
ALLOWED_API["ReduceLROnPlateau"]["factor=nan"] = NAN_OPTION
ALLOWED_API["OneCycleLR"].update({
    "pct_start=str": "a str is the wrong type: TypeError (torch's ValueError comes from float())",
    "pct_start=nan": NAN_OPTION})
for _name in ("DataLoader", "DataLoader shuffle"):
    ALLOWED_API[_name].update({f"{parameter}={spoilt}": TORCH_TEXT
                               for parameter in ("batch_size", "drop_last", "batch_sampler")
                               for spoilt in NOT_BOOL + ("bool",)})
ALLOWED_API["constant_"]["val=complex"] = COMPLEX
ALLOWED_API["register_buffer"].update({f"persistent={spoilt}": FLAG for spoilt in NOT_BOOL})
ALLOWED_API["gradcheck"].update({
    "eps=bool": BOOL_NUMBER, "eps=complex": COMPLEX,
    **{f"eps={spoilt}": "the step must be positive and finite: refused up front (torch divides "
       "by zero, or steps backwards, and reports a Jacobian mismatch)"
       for spoilt in ("negative", "zero", "nan", "inf")}})
for _flag in ("retain_graph", "create_graph", "allow_unused"):
    ALLOWED_API["grad"].update({f"{_flag}={spoilt}": FLAG for spoilt in ("negative", "zero")})
for _parameter in ("max_norm", "norm_type"):
    ALLOWED_API["clip_grad_norm_"][f"{_parameter}=str"] = (
        "a str is the wrong type: TypeError, as tests/test_nn.py has it (torch's ValueError comes "
        "from float())")
ALLOWED_API["clip_grad_value_"]["clip_value=str"] = ALLOWED_API["clip_grad_norm_"]["max_norm=str"]


def api_name(name: str) -> str:
    """The name a message must carry: the class or function, before any variant's label."""
    return name.split(" ")[0]


@pytest.mark.parametrize("name, parameter", parameters(API))
def test_spoilt_api_argument(torch, name, parameter):
    found = problems(name, api_name(name), API[name], parameter, ALLOWED_API[name])
    assert not found, "\n".join(found)


# ---- refused calls change nothing --------------------------------------------------------------
OPTIMIZERS = {"SGD": dict(lr=0.1, momentum=0.9, nesterov=True), "Adam": dict(lr=0.1),
              "AdamW": dict(lr=0.1, amsgrad=True), "RMSprop": dict(lr=0.1, momentum=0.9,
                                                                   centered=True),
              "Adagrad": dict(lr=0.1, lr_decay=0.01)}
# (Assigning such a .grad is refused at once, as torch refuses it; a gradient's own value can
# still be swapped through .data, as in torch, and then the step must catch it.)
SPOILT_GRADS = {"wrong shape": (RuntimeError, lambda: tinygrad_pool.tensor(np.ones(3, np.float32))),
                "integer": (RuntimeError, lambda: tinygrad_pool.tensor(np.ones((4, 5), np.int64)))}


def snapshot(params, optimizer) -> list:
    """Copies of every parameter and every array of the optimizer's state."""
    arrays = [p.numpy().copy() for p in params]
    for state in optimizer.state.values():
        arrays += [np.array(v.numpy() if isinstance(v, tinygrad_pool.Tensor) else v, copy=True)
                   for _, v in sorted(state.items())]
    return arrays


@pytest.mark.parametrize("spoilt", SPOILT_GRADS)
@pytest.mark.parametrize("name", OPTIMIZERS)
def test_a_spoilt_last_gradient_changes_nothing(name, spoilt):
    """Two good steps build momentum and moments; then the last parameter's gradient is spoilt:
    the step raises, naming the optimizer, and every parameter and all state stay as they were."""
    params = [tinygrad_pool.tensor(ROWS.copy(), requires_grad=True) for _ in range(3)]
    optimizer = getattr(tinygrad_pool.optim, name)(params, **OPTIMIZERS[name])
    for _ in range(2):
        for p in params:
            p.grad = tinygrad_pool.tensor(PROBS.copy())
        optimizer.step()
    before = snapshot(params, optimizer)
    error, make = SPOILT_GRADS[spoilt]
    params[-1].grad.data = make()
    with pytest.raises(error, match=rf"\b{name}\.step\b"):
        optimizer.step()
    after = snapshot(params, optimizer)
    assert len(after) == len(before) > len(params)  # (the state was there to be spoilt)
    for old, new in zip(before, after):
        np.testing.assert_array_equal(old, new)


@pytest.mark.parametrize("params, error", [
    ([], ValueError), ([1.0], TypeError), (ROWS, TypeError), ("abc", TypeError)])
def test_optimizer_params_refused_as_torch(torch, params, error):
    def make(fw):
        value = as_tensor(fw, params) if isinstance(params, np.ndarray) else params
        return fw.optim.SGD(value, lr=0.1)
    with pytest.raises(error):
        make(torch)
    with pytest.raises(error, match="optimizer|params|Tensor"):
        make(tinygrad_pool)


def test_optimizer_takes_an_integer_tensor_and_warns_of_duplicates(torch):
    """torch takes an integer tensor as a parameter (it never has a gradient) and warns about a
    parameter listed twice; so do we."""
    tinygrad_pool.optim.SGD([tinygrad_pool.tensor(np.ones(3, np.int64))], lr=0.1)
    p = tinygrad_pool.tensor(ROWS.copy(), requires_grad=True)
    with pytest.warns(UserWarning, match="duplicate parameters"):
        tinygrad_pool.optim.SGD([p, p], lr=0.1)


def damaged(state: dict) -> dict:
    """Optimizer state_dicts spoilt in the ways a mixed-up checkpoint is."""
    wrong_shape = {"state": {0: dict(state["state"][0], exp_avg=tinygrad_pool.tensor(
        np.zeros(3, np.float32)))}, "param_groups": state["param_groups"]}
    return {"not a dict": [1, 2], "no state": {"param_groups": state["param_groups"]},
            "a group too many": dict(state, param_groups=state["param_groups"] * 2),
            "a parameter too many": dict(state, param_groups=[dict(
                state["param_groups"][0], params=[0, 1, 2])]),
            "state of the wrong shape": wrong_shape}


@pytest.mark.parametrize("damage", damaged({"state": {0: {}}, "param_groups": [{}]}))
def test_optimizer_load_state_dict_damaged_changes_nothing(damage):
    params = [tinygrad_pool.tensor(ROWS.copy(), requires_grad=True) for _ in range(2)]
    optimizer = tinygrad_pool.optim.Adam(params, lr=0.1)
    for p in params:
        p.grad = tinygrad_pool.tensor(PROBS.copy())
    optimizer.step()
    state = damaged(optimizer.state_dict())[damage]
    before, groups = snapshot(params, optimizer), repr(optimizer)
    with pytest.raises((TypeError, KeyError, ValueError), match="load_state_dict|parameter group"):
        optimizer.load_state_dict(state)
    assert repr(optimizer) == groups
    for old, new in zip(before, snapshot(params, optimizer)):
        np.testing.assert_array_equal(old, new)


def module_state_dicts(fw) -> dict:
    """A Linear(5, 3)'s state_dict spoilt one way each."""
    good = {name: v.detach().clone() if fw is not tinygrad_pool else v.detach()
            for name, v in fw.nn.Linear(5, 3).state_dict().items()}
    wrong = as_tensor(fw, np.ones((2, 2), np.float32))
    return {"missing": {"weight": good["weight"]},
            "unexpected": dict(good, extra=good["bias"]),
            "wrong shape": dict(good, bias=wrong),
            "wrong type": dict(good, bias="not a tensor")}


@pytest.mark.parametrize("strict", [True, False])
@pytest.mark.parametrize("spoilt", ["missing", "unexpected", "wrong shape", "wrong type"])
def test_module_load_state_dict_as_torch_and_atomic(torch, spoilt, strict):
    """torch's outcome (its error type, or the same missing/unexpected keys); a refused load
    leaves every parameter as it was (torch copies the good entries first)."""
    theirs = torch.nn.Linear(5, 3)
    try:
        their_result, their_error = theirs.load_state_dict(module_state_dicts(torch)[spoilt],
                                                           strict=strict), None
    except Exception as error:  # noqa: BLE001 — which error is what is compared
        their_result, their_error = None, error
    ours = tinygrad_pool.nn.Linear(5, 3)
    before = [p.numpy().copy() for p in ours.parameters()]
    state = module_state_dicts(tinygrad_pool)[spoilt]
    if their_error is not None:
        expected = TypeError if isinstance(their_error, AttributeError) else type(their_error)
        with pytest.raises(expected, match="state_dict|Linear"):
            ours.load_state_dict(state, strict=strict)
        for old, p in zip(before, ours.parameters()):
            np.testing.assert_array_equal(old, p.numpy())
    else:
        result = ours.load_state_dict(state, strict=strict)
        assert (result.missing_keys, result.unexpected_keys) == (
            their_result.missing_keys, their_result.unexpected_keys)


@pytest.mark.parametrize("call", [
    lambda fw: fw.nn.Sequential(fw.nn.ReLU(), 3), lambda fw: fw.nn.ModuleList([fw.nn.ReLU(), "a"]),
    lambda fw: fw.nn.ModuleDict({"a": 1.5}), lambda fw: fw.nn.ModuleList(7),
    lambda fw: fw.nn.Linear(5, 3).add_module("x", 3), lambda fw: fw.nn.Linear(5, 3).add_module(1, None),
    lambda fw: fw.nn.Linear(5, 3).register_parameter("p", as_tensor(fw, ROWS)),
    lambda fw: fw.nn.Linear(5, 3).register_parameter("a.b", None),
    lambda fw: fw.nn.Linear(5, 3).to("not a device"), lambda fw: fw.nn.Linear(5, 3).to(fw.int64),
    lambda fw: fw.nn.Linear(5, 3).train("yes"),
])
def test_containers_and_registration_refuse_as_torch(torch, call):
    with pytest.raises(Exception) as theirs:
        call(torch)
    expected = TypeError if isinstance(theirs.value, AttributeError) else type(theirs.value)
    with pytest.raises(expected):
        call(tinygrad_pool)


def test_zero_grad_set_to_none_as_torch(torch):
    """zero_grad(set_to_none=False) zeroes in place; True (the default) forgets the grad."""
    layer = tinygrad_pool.nn.Linear(5, 3)
    for p in layer.parameters():
        p.grad = tinygrad_pool.tensor(np.ones(p.shape, np.float32))
    layer.zero_grad(set_to_none=False)
    assert all(np.array_equal(p.grad.numpy(), np.zeros(p.shape)) for p in layer.parameters())
    layer.zero_grad()
    assert all(p.grad is None for p in layer.parameters())


def test_tensor_dataset_of_unequal_lengths_as_torch(torch):
    with pytest.raises(AssertionError):
        torch.utils.data.TensorDataset(torch.zeros(4), torch.zeros(3))
    with pytest.raises(AssertionError, match="TensorDataset"):
        tinygrad_pool.utils.data.TensorDataset(tinygrad_pool.tensor(np.zeros(4)),
                                               tinygrad_pool.tensor(np.zeros(3)))


@pytest.mark.parametrize("lengths, error", [([3, 3], ValueError), ([2, 1], ValueError),
                                            ([0.5, 0.7], ValueError), (["a", 1], TypeError)])
def test_random_split_bad_lengths_as_torch(torch, lengths, error):
    with pytest.raises(error):
        torch.utils.data.random_split(dataset(torch), lengths)
    with pytest.raises(error, match="random_split|lengths|Sum of input lengths"):
        tinygrad_pool.utils.data.random_split(dataset(tinygrad_pool), lengths)


def test_subset_out_of_range_index_as_torch(torch):
    with pytest.raises(IndexError):
        torch.utils.data.Subset(dataset(torch), [0, 9])[1]
    with pytest.raises(IndexError):
        tinygrad_pool.utils.data.Subset(dataset(tinygrad_pool), [0, 9])[1]


@pytest.mark.parametrize("inputs, error", [
    (lambda: (np.ones(3),), ValueError),
    (lambda: (tinygrad_pool.tensor(np.ones(3)),), ValueError),
    (lambda: (tinygrad_pool.tensor(np.ones(3, np.float32), requires_grad=True),), TypeError)])
def test_gradcheck_refuses_inputs_it_cannot_check(inputs, error):
    """Nothing to check (a NumPy array, no tensor requiring grad) or not float64: refused by
    name before fn is ever called."""
    calls = []
    with pytest.raises(error, match="gradcheck"):
        tinygrad_pool.autograd.gradcheck(lambda x: calls.append(x) or x.sum(), inputs())
    assert not calls


def test_gradcheck_refuses_an_integer_tensor_input():
    with pytest.raises(RuntimeError, match="floating point"):
        tinygrad_pool.tensor(np.ones(3, np.int64), requires_grad=True)


@pytest.mark.parametrize("outputs, inputs, error", [
    ("y", 3, TypeError), (np.ones(2), "x", TypeError), ("y", ["x", 1.0], TypeError),
    ("y", "unused", RuntimeError)])
def test_autograd_grad_refuses_non_tensors_and_unused_inputs(torch, outputs, inputs, error):
    """Where torch refuses; a non-Tensor is a TypeError here (torch's assert gives an
    AssertionError for outputs, its engine a RuntimeError for inputs)."""
    def call(fw):
        x, unused = leaf(fw), leaf(fw)
        values = {"x": x, "y": (x * 2).sum(), "unused": unused}
        pick = (lambda v: [values.get(i, i) for i in v] if isinstance(v, list)
                else values.get(v, v) if isinstance(v, str) else v)
        return fw.autograd.grad(pick(outputs), pick(inputs))
    with pytest.raises(Exception):
        call(torch)
    with pytest.raises(error, match=r"\bgrad\b"):
        call(tinygrad_pool)


def test_autograd_grad_allow_unused_gives_none_as_torch():
    x, unused = leaf(tinygrad_pool), leaf(tinygrad_pool)
    dx, du = tinygrad_pool.autograd.grad((x * 2).sum(), [x, unused], allow_unused=True)
    np.testing.assert_array_equal(dx.numpy(), np.full(ROWS.shape, 2, np.float32))
    assert du is None
