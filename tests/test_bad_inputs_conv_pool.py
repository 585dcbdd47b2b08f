"""The conv, pooling, unfold/fold, pad and linear functions of ``nn.functional``, called with
each argument spoilt in turn (see tests/badinput.py for the rule): torch's error type and a message
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
    "conv2d": case("conv2d", ("input", IMAGES), ("weight", WEIGHT), bias=np.zeros(4, np.float32),
                   stride=1, padding=0, dilation=1, groups=1),
    "max_pool2d": case("max_pool2d", ("input", IMAGES), ("kernel_size", 2), stride=None, padding=0,
                       dilation=1, ceil_mode=False, return_indices=False),
    "avg_pool2d": case("avg_pool2d", ("input", IMAGES), ("kernel_size", 2), stride=None,
                       padding=0, ceil_mode=False, count_include_pad=True, divisor_override=None),
    "adaptive_avg_pool2d": case("adaptive_avg_pool2d", ("input", IMAGES), ("output_size", 3)),
    "adaptive_max_pool2d": case("adaptive_max_pool2d", ("input", IMAGES), ("output_size", 3),
                                return_indices=False),
    "max_unpool2d": case("max_unpool2d", ("input", IMAGES[:, :, :3, :3]),
                         ("indices", np.zeros((2, 3, 3, 3), np.int64)), ("kernel_size", 2),
                         stride=None, padding=0, output_size=None),
    "unfold": case("unfold", ("input", IMAGES), ("kernel_size", 2), dilation=1, padding=0,
                   stride=1),
    "fold": case("fold", ("input", rng.standard_normal((2, 12, 25)).astype(np.float32)),
                 ("output_size", (6, 6)), ("kernel_size", 2), dilation=1, padding=0, stride=1),
    "pad": case("pad", ("input", IMAGES), ("pad", (1, 1)), mode="constant", value=0.0),
    "linear": case("linear", ("input", ROWS), ("weight", rng.standard_normal((3, 5)).astype(
        np.float32)), bias=np.zeros(3, np.float32)),
}

# "parameter=spoilt" (or "*=spoilt") -> why our answer differs from torch's on purpose
ALLOWED = {name: {} for name in TABLE}


@pytest.mark.parametrize("name, parameter", parameters(TABLE))
def test_spoilt_argument(torch, name, parameter):
    found = problems(name, name.split(" ")[0], TABLE[name], parameter, ALLOWED[name])
    assert not found, "\n".join(found)
