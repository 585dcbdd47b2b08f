"""Every function of ``nn.functional`` but conv, pooling, fold, pad and linear, called with each
argument spoilt in turn (see tests/badinput.py for the rule): torch's error type and a message
naming the function and the argument where torch refuses, torch's result where torch accepts."""
import numpy as np
import pytest

from badinput import Case, Raw, parameters, problems

rng = np.random.default_rng(0)
IMAGES = rng.standard_normal((2, 3, 6, 6)).astype(np.float32)
WEIGHT = rng.standard_normal((4, 3, 3, 3)).astype(np.float32)
ROWS = rng.standard_normal((4, 5)).astype(np.float32)
LABELS = np.array([1, 0, 4, 2])
PROBS = rng.random((4, 5)).astype(np.float32)


def fn(name):
    """Call ``F.<name>`` of whichever framework is given."""
    return lambda fw, F, *args, **kwargs: getattr(F, name)(*args, **kwargs)


def case(name, *positional, deterministic=True, **keywords):
    params = [(p, v, False) for p, v in positional] + [(p, v, True) for p, v in keywords.items()]
    return Case(fn(name), params, deterministic=deterministic)


TABLE = {
    "relu": case("relu", ("input", ROWS)),
    "sigmoid": case("sigmoid", ("input", ROWS)),
    "tanh": case("tanh", ("input", ROWS)),
    "silu": case("silu", ("input", ROWS)),
    "gelu": case("gelu", ("input", ROWS), approximate="none"),
    "elu": case("elu", ("input", ROWS), alpha=1.0),
    "leaky_relu": case("leaky_relu", ("input", ROWS), negative_slope=0.01),
    "softmax": case("softmax", ("input", ROWS), dim=1),
    "log_softmax": case("log_softmax", ("input", ROWS), dim=1),
    "cross_entropy": case("cross_entropy", ("input", ROWS), ("target", LABELS),
                          weight=np.ones(5, np.float32), ignore_index=-100, reduction="mean",
                          label_smoothing=0.0),
    "nll_loss": case("nll_loss", ("input", ROWS), ("target", LABELS),
                     weight=np.ones(5, np.float32), ignore_index=-100, reduction="mean"),
    "mse_loss": case("mse_loss", ("input", ROWS), ("target", PROBS), reduction="mean"),
    "l1_loss": case("l1_loss", ("input", ROWS), ("target", PROBS), reduction="mean"),
    "smooth_l1_loss": case("smooth_l1_loss", ("input", ROWS), ("target", PROBS),
                           reduction="mean", beta=1.0),
    "huber_loss": case("huber_loss", ("input", ROWS), ("target", PROBS), reduction="mean",
                       delta=1.0),
    "binary_cross_entropy": case("binary_cross_entropy", ("input", PROBS), ("target", PROBS),
                                 weight=np.ones(5, np.float32), reduction="mean"),
    "binary_cross_entropy_with_logits": case(
        "binary_cross_entropy_with_logits", ("input", ROWS), ("target", PROBS),
        weight=np.ones(5, np.float32), reduction="mean", pos_weight=np.ones(5, np.float32)),
    "dropout": case("dropout", ("input", ROWS), deterministic=False, p=0.5, training=True),
    "dropout2d": case("dropout2d", ("input", IMAGES), deterministic=False, p=0.5, training=True),
    "embedding": case("embedding", ("input", LABELS), ("weight", ROWS), padding_idx=None),
    "one_hot": case("one_hot", ("tensor", LABELS), num_classes=5),
    "layer_norm": case("layer_norm", ("input", ROWS), ("normalized_shape", (5,)),
                       weight=np.ones(5, np.float32), bias=np.zeros(5, np.float32), eps=1e-5),
    "batch_norm": case("batch_norm", ("input", ROWS), ("running_mean", np.zeros(5, np.float32)),
                       ("running_var", np.ones(5, np.float32)), weight=np.ones(5, np.float32),
                       bias=np.zeros(5, np.float32), training=True, momentum=0.1, eps=1e-5),
}

# "parameter=spoilt" (or "*=spoilt") -> why our answer differs from torch's on purpose
ALLOWED = {name: {} for name in TABLE}


@pytest.mark.parametrize("name, parameter", parameters(TABLE))
def test_spoilt_argument(torch, name, parameter):
    found = problems(name, name.split(" ")[0], TABLE[name], parameter, ALLOWED[name])
    assert not found, "\n".join(found)
