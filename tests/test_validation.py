"""Bad arguments PyTorch refuses are refused here too, with torch's error type and a message that
names the function, the argument and the value — before anything is computed or changed."""
import numpy as np
import pytest

import tinygrad_pool as tg
import tinygrad_pool.nn as nn
import tinygrad_pool.nn.functional as F

X = np.random.default_rng(0).standard_normal((1, 1, 4, 4))

CASES = {  # name: (call on a framework, the message's part that names function and argument)
    "max_pool2d stride=True": (lambda fw, F: F.max_pool2d(fw.tensor(X), 2, stride=True),
                               r"max_pool2d: stride .*True"),
    "max_pool2d kernel_size=True": (lambda fw, F: F.max_pool2d(fw.tensor(X), True),
                                    r"max_pool2d: kernel_size .*True"),
    "max_pool2d ceil_mode='no'": (lambda fw, F: F.max_pool2d(fw.tensor(X), 2, ceil_mode="no"),
                                  r"max_pool2d: ceil_mode must be bool, got str \('no'\)"),
    "avg_pool2d divisor_override=1.5": (
        lambda fw, F: F.avg_pool2d(fw.tensor(X), 2, divisor_override=1.5),
        r"avg_pool2d: divisor_override must be an int, got float \(1.5\)"),
    "avg_pool2d divisor_override=nan": (
        lambda fw, F: F.avg_pool2d(fw.tensor(X), 2, divisor_override=float("nan")),
        r"avg_pool2d: divisor_override must be an int"),
    "max_pool2d of bools": (lambda fw, F: F.max_pool2d(fw.ones(1, 1, 4, 4, dtype=fw.bool), 2),
                            r'"max_pool2d" not implemented for .Bool'),
    "Linear(2.7, 3)": (lambda fw, F: fw.nn.Linear(2.7, 3), r"Linear: in_features must be an int, "
                                                           r"got float \(2.7\)"),
    "Conv2d(1, 2.0, 3)": (lambda fw, F: fw.nn.Conv2d(1, 2.0, 3),
                          r"Conv2d: out_channels must be an int, got float"),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_refused_like_torch(torch, name):
    call, message = CASES[name]
    import torch.nn.functional as torch_F
    with pytest.raises(Exception) as theirs:
        call(torch, torch_F)
    with pytest.raises(theirs.type, match=message):
        call(tg, F)


@pytest.mark.parametrize("data", [["a"], "text", [1 + 2j]], ids=["strings", "a string", "complex"])
def test_a_tensor_holds_numbers_only(data):
    with pytest.raises(TypeError, match=r"Tensor: cannot make a tensor from .* \(expected numbers"):
        tg.Tensor(data)


def test_flags_and_sizes_still_take_numpy_scalars():
    out = F.max_pool2d(tg.tensor(X), np.int64(2), ceil_mode=np.bool_(False))
    assert out.shape == (1, 1, 2, 2)
    assert nn.Linear(np.int64(3), 2).in_features == 3


def test_the_last_public_functions_name_themselves_too(torch):
    """Arguments of the autograd.functional helpers and of save_graph: a named TypeError, as
    torch's (for jacobian: torch's raw "'int' object is not callable")."""
    x = tg.ones(2)
    for name in ("jacobian", "hessian"):
        with pytest.raises(TypeError, match=rf"{name}: func must be a callable .*got int"):
            getattr(tg.autograd.functional, name)(3, x)
        with pytest.raises(TypeError, match=rf"{name}: inputs must be a Tensor or a tuple of Tensors"):
            getattr(tg.autograd.functional, name)(lambda t: t.sum(), [1.0, 2.0])
    with pytest.raises(TypeError):
        torch.autograd.functional.jacobian(3, torch.ones(2))
    pytest.importorskip("graphviz")
    from tinygrad_pool import viz
    with pytest.raises(TypeError, match="save_graph: path must be a str or a path, got int"):
        viz.save_graph(x, 3)


@pytest.mark.parametrize("call", [
    lambda: F.softmax(tg.ones(2, 3)), lambda: nn.Softmax()(tg.ones(2, 3)),
    lambda: F.mse_loss(tg.ones(2), tg.ones(2), size_average=True),
    lambda: nn.MSELoss(size_average=True)(tg.ones(2), tg.ones(2)),
    lambda: F.mse_loss(tg.ones(2, 1), tg.ones(3)), lambda: F.dropout2d(tg.ones(2, 3, 4)),
    lambda: nn.Dropout2d()(tg.ones(2, 3, 4)), lambda: tg.ones(1).var(),
    lambda: tg.var(tg.ones(1))], ids=["softmax", "Softmax", "size_average", "MSELoss",
                                      "target size", "dropout2d", "Dropout2d", "var", "torch.var"])
def test_warnings_point_at_the_users_line(call):
    """torch's warnings for deprecated or suspicious arguments name the line that called, however
    deep in the package the op was reached (a layer, a method, a module-level function)."""
    with pytest.warns(UserWarning) as caught:
        call()
    assert [w.filename for w in caught] == [__file__] * len(caught)
