"""The conv, pooling, unfold/fold, pad and linear functions of ``nn.functional``, called with
each argument spoilt in turn (see tests/badinput.py for the rule): torch's error type and a message
naming the function and the argument where torch refuses, torch's result where torch accepts."""
import numpy as np
import pytest

import tinygrad_pool
from badinput import Case, parameters, problems

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


IMAGE = IMAGES[0]  # one unbatched (C, H, W) image
POOLED = IMAGES[:, :, :3, :3]


def unpool_indices(width: int, shape: tuple) -> np.ndarray:
    """A different pixel of each 2×2 window of a plane ``width`` wide, as max_pool2d's indices
    (distinct: where two values land on one pixel, torch leaves unsaid which one stays)."""
    i, j = np.indices(shape[-2:])
    return np.broadcast_to((2 * i + (i + j) % 2) * width + 2 * j + i * j % 2, shape).copy()


INDICES = unpool_indices(6, (2, 3, 3, 3))

TABLE = {
    "conv2d": case("conv2d", ("input", IMAGES), ("weight", WEIGHT), bias=np.zeros(4, np.float32),
                   stride=1, padding=0, dilation=1, groups=1),
    # depthwise: one filter pair per channel, with (height, width) pairs for the geometry
    "conv2d depthwise": case("conv2d", ("input", IMAGES), ("weight", WEIGHT[:, :1].repeat(
        6, axis=0)[:6]), bias=np.ones(6, np.float32), stride=(2, 1), padding=(1, 0),
        dilation=(1, 2), groups=3),
    "conv2d unbatched": case("conv2d", ("input", IMAGE), ("weight", WEIGHT),
                             bias=np.zeros(4, np.float32), stride=2, padding=(1, 2)),
    "max_pool2d": case("max_pool2d", ("input", IMAGES), ("kernel_size", 2), stride=None, padding=0,
                       dilation=1, ceil_mode=False, return_indices=False),
    "max_pool2d indices": case("max_pool2d", ("input", IMAGES), ("kernel_size", (3, 2)),
                               stride=(2, 1), padding=(1, 0), dilation=1, ceil_mode=True,
                               return_indices=True),
    "max_pool2d unbatched": case("max_pool2d", ("input", IMAGE), ("kernel_size", 2), stride=1,
                                 return_indices=True),
    "avg_pool2d": case("avg_pool2d", ("input", IMAGES), ("kernel_size", 2), stride=None,
                       padding=0, ceil_mode=False, count_include_pad=True, divisor_override=None),
    "avg_pool2d ceil": case("avg_pool2d", ("input", IMAGES), ("kernel_size", 3), stride=2,
                            padding=1, ceil_mode=True, count_include_pad=False,
                            divisor_override=None),
    "avg_pool2d unbatched": case("avg_pool2d", ("input", IMAGE), ("kernel_size", (2, 3)),
                                 stride=(2, 1), divisor_override=5),
    "adaptive_avg_pool2d": case("adaptive_avg_pool2d", ("input", IMAGES), ("output_size", 3)),
    "adaptive_avg_pool2d unbatched": case("adaptive_avg_pool2d", ("input", IMAGE),
                                          ("output_size", (4, None))),
    "adaptive_max_pool2d": case("adaptive_max_pool2d", ("input", IMAGES), ("output_size", 3),
                                return_indices=False),
    "adaptive_max_pool2d unbatched": case("adaptive_max_pool2d", ("input", IMAGE),
                                          ("output_size", (4, 5)), return_indices=True),
    "max_unpool2d": case("max_unpool2d", ("input", POOLED), ("indices", INDICES),
                         ("kernel_size", 2), stride=None, padding=0, output_size=None),
    "max_unpool2d unbatched": case("max_unpool2d", ("input", POOLED[0]),
                                   ("indices", unpool_indices(7, (3, 3, 3))), ("kernel_size", 2),
                                   stride=2, padding=0, output_size=(7, 7)),
    "unfold": case("unfold", ("input", IMAGES), ("kernel_size", 2), dilation=1, padding=0,
                   stride=1),
    "unfold unbatched": case("unfold", ("input", IMAGE), ("kernel_size", (2, 3)),
                             dilation=(2, 1), padding=(1, 0), stride=(1, 2)),
    "fold": case("fold", ("input", rng.standard_normal((2, 12, 25)).astype(np.float32)),
                 ("output_size", (6, 6)), ("kernel_size", 2), dilation=1, padding=0, stride=1),
    "fold unbatched": case("fold", ("input", rng.standard_normal((18, 6)).astype(np.float32)),
                           ("output_size", (6, 6)), ("kernel_size", (2, 3)), dilation=(2, 1),
                           padding=(1, 0), stride=(3, 2)),
    "pad": case("pad", ("input", IMAGES), ("pad", (1, 1)), mode="constant", value=0.0),
    "linear": case("linear", ("input", ROWS), ("weight", rng.standard_normal((3, 5)).astype(
        np.float32)), bias=np.zeros(3, np.float32)),
}

# Why a difference from torch is deliberate; keyed "parameter=spoilt" (or "*=spoilt").
FLAG = ("return_indices must be bool, as every other flag: torch's Python wrapper only tests its "
        "truth, so return_indices='no' would return indices (the issue: flags of the right type)")
NOT_BOOL = ("str", "None", "negative", "zero", "float", "nan", "inf", "list3", "tuple3", "complex")
UNPOOL_GEOMETRY = ("torch's max_unpool2d (Python) does not check kernel_size, stride or padding: "
                   "it computes an output size from a zero, negative, bool or 3-element one "
                   "(zip drops the third); the issue asks for positive ints, bool refused")
NOT_AN_INT = ("2.5, nan and inf are not ints: a TypeError (torch computes an output size with "
              "them, then refuses or accepts it depending on output_size)")
RETURN_INDICES = {f"return_indices={spoilt}": FLAG for spoilt in NOT_BOOL}
UNPOOL = {f"{parameter}={spoilt}": UNPOOL_GEOMETRY for parameter in ("kernel_size", "stride",
                                                                      "padding")
          for spoilt in ("bool", "zero", "negative", "list3", "tuple3")}
UNPOOL.update({f"{parameter}={spoilt}": NOT_AN_INT for parameter in ("kernel_size", "stride",
                                                                      "padding")
               for spoilt in ("float", "nan", "inf")})
ALLOWED = {name: {} for name in TABLE}
for name in ("max_pool2d", "max_pool2d indices", "max_pool2d unbatched", "adaptive_max_pool2d",
             "adaptive_max_pool2d unbatched"):
    ALLOWED[name].update(RETURN_INDICES)
for name in ("max_unpool2d", "max_unpool2d unbatched"):
    ALLOWED[name].update(UNPOOL)
for name in ("max_unpool2d", "max_unpool2d unbatched"):
    ALLOWED[name]["indices=int_tensor"] = (
        "all-ones indices send every value of a plane to one pixel; which one stays torch "
        "leaves unsaid (its answer varies from run to run), so there is nothing to compare")
ALLOWED["adaptive_max_pool2d unbatched"]["input=empty"] = (
    "torch refuses zero channels in adaptive_max_pool2d for a batch, yet not for one unbatched "
    "image; we refuse both alike")
for name in ("avg_pool2d", "avg_pool2d ceil", "avg_pool2d unbatched"):
    ALLOWED[name]["divisor_override=negative"] = (
        "a negative divisor turns the average into minus an average; torch accepts it, we keep "
        "divisor_override a positive count, as torch documents it")


@pytest.mark.parametrize("name, parameter", parameters(TABLE))
def test_spoilt_argument(torch, name, parameter):
    found = problems(name, name.split(" ")[0], TABLE[name], parameter, ALLOWED[name])
    assert not found, "\n".join(found)


# ---- integer tensors: accepted where torch accepts them, with torch's dtype and values --------
INTEGERS = rng.integers(-9, 10, (2, 3, 6, 6))
INTEGER_CALLS = {  # name -> (a call on either framework's F, its integer arrays)
    "conv2d": (lambda F, x, w, b: F.conv2d(x, w, b, padding=1),
               (INTEGERS, rng.integers(-3, 4, (4, 3, 3, 3)), rng.integers(-5, 5, 4))),
    "linear": (lambda F, x, w, b: F.linear(x, w, b),
               (INTEGERS[0, 0], rng.integers(-3, 4, (4, 6)), rng.integers(-5, 5, 4))),
    "max_pool2d": (lambda F, x: F.max_pool2d(x, 3, 2, 1), (INTEGERS,)),
    # torch's integer quotient truncates toward zero: -7 / 4 is -1, not -2
    "avg_pool2d": (lambda F, x: F.avg_pool2d(x, 3, 2, 1, ceil_mode=True), (INTEGERS,)),
    "avg_pool2d divisor": (lambda F, x: F.avg_pool2d(x, 2, divisor_override=3), (INTEGERS,)),
}


@pytest.mark.parametrize("name", sorted(INTEGER_CALLS))
def test_integer_tensors_compute_as_in_torch(torch, name):
    call, arrays = INTEGER_CALLS[name]
    ours = call(tinygrad_pool.nn.functional, *map(tinygrad_pool.tensor, arrays))
    theirs = call(torch.nn.functional, *map(torch.tensor, arrays))
    assert ours.dtype == np.int64 and theirs.dtype == torch.int64
    np.testing.assert_array_equal(ours.numpy(), theirs.numpy())
