"""viz.fan_in: the cells it lights are exactly the dependence the engine's own backward shows."""
import itertools

import numpy as np
import pytest

pytest.importorskip("graphviz")

import tinygrad_pool.nn.functional as F  # noqa: E402
from tinygrad_pool import Tensor  # noqa: E402
from tinygrad_pool.viz import fan_in  # noqa: E402

GEOMETRIES = [dict(stride=1, padding=0, dilation=1), dict(stride=2, padding=1, dilation=1),
              dict(stride=1, padding=1, dilation=2), dict(stride=3, padding=1, dilation=2)]


def cells(shape):
    return list(itertools.product(*map(range, shape)))


def grad_of_output_cell(make, x, w, cell):
    """(d out[cell]/dx, d out[cell]/dw) by the engine's backward of a one-hot gradient."""
    x, w = Tensor(x, requires_grad=True), Tensor(w, requires_grad=True) if w is not None else None
    out = make(x, w)
    upstream = np.zeros(out.shape)
    upstream[cell] = 1.0
    out.backward(upstream)
    return x.grad.data, None if w is None else w.grad.data


@pytest.mark.parametrize("geometry", GEOMETRIES)
def test_conv_output_cell_lights_what_it_reads_and_its_weights(rng, geometry):
    x, w = rng.standard_normal((1, 2, 7, 7)), rng.standard_normal((3, 2, 3, 3))
    make = lambda x, w: F.conv2d(x, w, **geometry)  # noqa: E731
    out = make(Tensor(x), Tensor(w, requires_grad=True))
    for cell in cells(out.shape):
        picture = fan_in(out, output_cell=cell)
        dx, dw = grad_of_output_cell(make, x, w, cell)
        assert {link.input for link in picture.links} == set(zip(*np.nonzero(dx)))
        assert {link.weight for link in picture.links} == set(zip(*np.nonzero(dw)))
        assert all(link.gradient and link.output == cell for link in picture.links)
        # every tap of every channel is either read or on padding
        assert len(picture.links) + len(picture.padding) == 2 * 9


@pytest.mark.parametrize("geometry", GEOMETRIES)
def test_conv_input_cell_lights_every_output_reading_it_with_its_weight(rng, geometry):
    x, w = rng.standard_normal((1, 2, 7, 7)), rng.standard_normal((3, 2, 3, 3))
    out = F.conv2d(Tensor(x), Tensor(w, requires_grad=True), **geometry)
    for cell in cells(x.shape):
        one_hot = np.zeros(x.shape)
        one_hot[cell] = 1.0
        response = F.conv2d(Tensor(one_hot), Tensor(w), **geometry).data  # linear: d out / d x[cell]
        picture = fan_in(out, input_cell=cell)
        assert {link.output for link in picture.links} == set(zip(*np.nonzero(response)))
        for link in picture.links:
            assert response[link.output] == w[link.weight]


@pytest.mark.parametrize("geometry", GEOMETRIES[:3] + [dict(stride=2, padding=1, dilation=2)])
def test_max_pool_output_cell_reads_its_window_and_sends_grad_to_its_argmax(rng, geometry, torch):
    x = rng.standard_normal((2, 2, 7, 7))
    out = F.max_pool2d(Tensor(x, requires_grad=True), 3, **geometry)
    index = torch.arange(1.0, 1 + 49).reshape(1, 1, 7, 7)  # 0 marks padding
    windows = torch.nn.functional.unfold(index, 3, geometry["dilation"], geometry["padding"],
                                         geometry["stride"])[0].numpy()
    for cell in cells(out.shape):
        picture = fan_in(out, output_cell=cell)
        n, c, ho, wo = cell
        read = windows[:, ho * out.shape[3] + wo]
        assert {(link.input[2] * 7 + link.input[3] + 1) for link in picture.links} == \
            set(read[read > 0].astype(int))
        assert len(picture.padding) == int((read == 0).sum())
        dx, _ = grad_of_output_cell(lambda x, _: F.max_pool2d(x, 3, **geometry), x, None, cell)
        assert {link.input for link in picture.links if link.gradient} == set(zip(*np.nonzero(dx)))


@pytest.mark.parametrize("ties", ["first", "split", "all"])
def test_max_pool_input_cell_lights_only_windows_that_route_to_it(ties):
    # repeated values: windows with tied maxima, where the rules differ
    x = np.array([[1, 3, 3, 0, 2], [3, 1, 0, 2, 2], [0, 0, 1, 1, 0], [2, 2, 1, 1, 0],
                  [2, 2, 0, 0, 1]], dtype=float).reshape(1, 1, 5, 5)
    geometry = dict(stride=1, padding=1)
    out = F.max_pool2d(Tensor(x, requires_grad=True), 3, ties=ties, **geometry)
    flows = {}
    for cell in cells(out.shape):
        dx, _ = grad_of_output_cell(lambda x, _: F.max_pool2d(x, 3, ties=ties, **geometry),
                                    x, None, cell)
        for source in zip(*np.nonzero(dx)):
            flows.setdefault(source, set()).add(cell)
    for cell in cells(x.shape):
        picture = fan_in(out, input_cell=cell)
        assert {link.output for link in picture.links if link.gradient} == flows.get(cell, set())


def test_unbatched_and_released_pool_still_work(rng):
    x = Tensor(rng.standard_normal((1, 4, 4)), requires_grad=True)
    out = F.max_pool2d(x, 2)
    out.sum().backward()  # frees the saved argmax: fan_in runs the same rule again
    picture = fan_in(out, output_cell=(0, 1, 1))
    chosen = [link.input for link in picture.links if link.gradient]
    assert chosen == [(0, 0) + tuple(np.argwhere(x.grad.data[0, 2:, 2:] == 1)[0] + 2)]
    assert x.grad.data.sum() == 4  # fan_in changed no gradient


def test_bad_arguments_raise_naming_fan_in_and_the_argument(rng):
    out = F.max_pool2d(Tensor(rng.standard_normal((1, 1, 4, 4)), requires_grad=True), 2)
    with pytest.raises(TypeError, match="fan_in: output must be a Tensor"):
        fan_in(np.zeros(3), output_cell=(0, 0))
    with pytest.raises(ValueError, match="fan_in: output must be the result of conv2d"):
        fan_in(out.relu(), output_cell=(0, 0))
    with pytest.raises(ValueError, match="exactly one of output_cell= and input_cell="):
        fan_in(out)
    with pytest.raises(ValueError, match="exactly one"):
        fan_in(out, output_cell=(0, 0), input_cell=(0, 0))
    with pytest.raises(TypeError, match="fan_in: output_cell must be a tuple of ints"):
        fan_in(out, output_cell=(0.5, 0))
    with pytest.raises(ValueError, match=r"fan_in: input_cell=\(4, 0\) is outside"):
        fan_in(out, input_cell=(4, 0))
    with pytest.raises(ValueError, match="fan_in: output_cell must have 2, 3 or 4 indices"):
        fan_in(out, output_cell=(0,))


def test_picture_names_the_cells_and_is_deterministic(rng):
    x = Tensor(rng.standard_normal((1, 1, 4, 4)), requires_grad=True)
    out = F.conv2d(x, Tensor(np.ones((1, 1, 2, 2)), requires_grad=True), padding=1)
    first, again = fan_in(out, output_cell=(0, 0)), fan_in(out, output_cell=(0, 0))
    assert first.source == again.source
    assert "output[0, 0, 0, 0] = Σ weight · input over the 1 yellow input cells" in first.source
    assert "3 weight taps read padding" in first.source
