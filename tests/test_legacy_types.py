"""torch's legacy tensor types (torch.FloatTensor, torch.LongTensor...) and Tensor.type,
against PyTorch: the constructors, isinstance, x.type() names and x.type(...) conversions, and
torch's error types."""
import numpy as np
import pytest

import tinygrad_pool
from tinygrad_pool import tensor

NAMES = ["FloatTensor", "DoubleTensor", "HalfTensor", "LongTensor", "IntTensor", "ShortTensor",
         "CharTensor", "ByteTensor", "BoolTensor"]
DTYPES = ["float32", "float64", "float16", "int64", "int32", "int16", "int8", "uint8", "bool"]


def dtype_name(t) -> str:
    return str(t.dtype).replace("torch.", "")


def same_error(torch_call, our_call):
    with pytest.raises(Exception) as theirs:
        torch_call()
    with pytest.raises(type(theirs.value)):
        our_call()


@pytest.mark.parametrize("name", NAMES)
def test_constructors_as_torch(torch, name):
    ours, theirs = getattr(tinygrad_pool, name), getattr(torch, name)
    assert ours.dtype == np.dtype(dtype_name(theirs))
    for args in [([1, 0, 2],), ([[1.7, 2.0], [0.0, -0.5]],), (np.arange(4.0),), ((2, 3),),
                 ([True, False],), ()]:
        if name in ("ByteTensor",) and any(np.min(a, initial=0) < 0 for a in args):
            continue  # (torch refuses -0.5 for uint8: tested below)
        got, want = ours(*args), theirs(*args)
        assert got.dtype == np.dtype(dtype_name(want)) and got.shape == tuple(want.shape)
        np.testing.assert_array_equal(got.numpy(), want.numpy())
    # sizes: a tensor of that shape (uninitialised in torch, so only its shape and dtype)
    for args in [(2, 3), (0,), (tinygrad_pool.Size([2, 1, 2]),)]:
        theirs_args = [torch.Size(a) if isinstance(a, tinygrad_pool.Size) else a for a in args]
        got, want = ours(*args), theirs(*theirs_args)
        assert got.dtype == np.dtype(dtype_name(want)) and got.shape == tuple(want.shape)
    assert ours(device="cpu").shape == (0,)
    assert type(ours(2)) is tinygrad_pool.Tensor  # (torch's is torch.Tensor too)


def test_a_tensor_of_the_type_is_aliased_another_refused(torch):
    source = tinygrad_pool.ones(3)
    alias = tinygrad_pool.FloatTensor(source)
    alias[0] = 5.0
    assert source.tolist() == [5.0, 1.0, 1.0]  # (torch's shares memory too)
    theirs = torch.ones(3)
    torch.FloatTensor(theirs)[0] = 5.0
    assert theirs.tolist() == [5.0, 1.0, 1.0]
    same_error(lambda: torch.FloatTensor(torch.ones(2, dtype=torch.float64)),
               lambda: tinygrad_pool.FloatTensor(tinygrad_pool.ones(2, dtype=tinygrad_pool.float64)))


@pytest.mark.parametrize("make", [
    lambda m: m.LongTensor(3.0), lambda m: m.LongTensor(-1), lambda m: m.LongTensor("ab"),
    lambda m: m.FloatTensor(2, 3.0), lambda m: m.FloatTensor(2, dtype=m.float64),
    lambda m: m.FloatTensor([1.0], requires_grad=True), lambda m: m.ByteTensor([1, 300]),
    lambda m: m.CharTensor([200]), lambda m: m.IntTensor([2 ** 40]),
    lambda m: m.LongTensor([float("nan")]), lambda m: m.LongTensor([[1, 2], [3]]),
    lambda m: m.FloatTensor([1.0], device="meta")])
def test_constructor_errors_as_torch(torch, make):
    same_error(lambda: make(torch), lambda: make(tinygrad_pool))


@pytest.mark.parametrize("name, dtype", list(zip(NAMES, DTYPES)))
def test_isinstance_and_type_names_as_torch(torch, name, dtype):
    ours, theirs = tinygrad_pool.ones(2).to(getattr(tinygrad_pool, dtype)), \
        torch.ones(2).to(getattr(torch, dtype))
    assert ours.type() == theirs.type() == f"torch.{name}"
    for other in NAMES:
        assert isinstance(ours, getattr(tinygrad_pool, other)) == \
            isinstance(theirs, getattr(torch, other)) == (other == name)
    assert not isinstance(np.ones(2, dtype), getattr(tinygrad_pool, name))
    assert isinstance(ours, tinygrad_pool.Tensor)
    assert not issubclass(getattr(tinygrad_pool, name), tinygrad_pool.Tensor)
    assert not issubclass(getattr(torch, name), torch.Tensor)
    assert repr(getattr(tinygrad_pool, name)) == repr(getattr(torch, name))
    assert getattr(tinygrad_pool, name).is_cuda is False


@pytest.mark.parametrize("target", NAMES)
def test_type_converts_as_torch(torch, target):
    data = np.array([1.7, -2.0, 0.0, 3.0], np.float32)
    ours, theirs = tensor(data), torch.tensor(data)
    for spelling in (lambda m: getattr(m, target), lambda m: f"torch.{target}"):
        got, want = ours.type(spelling(tinygrad_pool)), theirs.type(spelling(torch))
        assert got.dtype == np.dtype(dtype_name(want))
        np.testing.assert_array_equal(got.numpy(), want.numpy())
    assert ours.type(dtype=getattr(tinygrad_pool, target), non_blocking=True).dtype == \
        np.dtype(dtype_name(theirs.type(dtype=getattr(torch, target), non_blocking=True)))


def test_type_keeps_the_tensor_or_converts_in_the_graph(torch):
    x = tinygrad_pool.ones(2)
    assert x.type(tinygrad_pool.FloatTensor) is x and x.type(tinygrad_pool.float32) is x
    theirs = torch.ones(2)
    assert theirs.type(torch.FloatTensor) is theirs
    assert x.type(tinygrad_pool.float64).dtype == tinygrad_pool.float64
    # torch.Tensor is the default type: float32
    assert x.long().type(tinygrad_pool.Tensor).dtype == tinygrad_pool.float32
    assert theirs.long().type(torch.Tensor).dtype == torch.float32
    # a float-to-float conversion keeps the gradient flowing, as torch's
    leaf = tinygrad_pool.ones(2, requires_grad=True)
    leaf.type(tinygrad_pool.DoubleTensor).sum().backward()
    assert leaf.grad.tolist() == [1.0, 1.0] and leaf.grad.dtype == tinygrad_pool.float32


@pytest.mark.parametrize("value", ["torch.float64", "float64", "LongTensor", "int", int, float,
                                   3, 2.5, [1]])
def test_type_errors_as_torch(torch, value):
    same_error(lambda: torch.ones(2).type(value), lambda: tinygrad_pool.ones(2).type(value))


def test_cuda_type_names_are_refused():
    with pytest.raises(RuntimeError, match="CPU"):
        tinygrad_pool.ones(2).type("torch.cuda.FloatTensor")
