"""viz.fan_in: the cells it lights are exactly the dependence the engine's own backward shows."""
import itertools
import textwrap

import numpy as np
import pytest

pytest.importorskip("graphviz")

import tinygrad_pool.nn.functional as F  # noqa: E402
from tinygrad_pool import Tensor, tensor  # noqa: E402
from tinygrad_pool.viz import fan_in  # noqa: E402

GEOMETRIES = [dict(stride=1, padding=0, dilation=1), dict(stride=2, padding=1, dilation=1),
              dict(stride=1, padding=1, dilation=2), dict(stride=3, padding=1, dilation=2)]


def cells(shape):
    return list(itertools.product(*map(range, shape)))


def grad_of_output_cell(make, x, w, cell):
    """(d out[cell]/dx, d out[cell]/dw) by the engine's backward of a one-hot gradient."""
    x, w = tensor(x, requires_grad=True), tensor(w, requires_grad=True) if w is not None else None
    out = make(x, w)
    upstream = np.zeros(out.shape)
    upstream[cell] = 1.0
    out.backward(upstream)
    return x.grad.numpy(), None if w is None else w.grad.numpy()


@pytest.mark.parametrize("geometry", GEOMETRIES)
def test_conv_output_cell_lights_what_it_reads_and_its_weights(rng, geometry):
    x, w = rng.standard_normal((1, 2, 7, 7)), rng.standard_normal((3, 2, 3, 3))
    make = lambda x, w: F.conv2d(x, w, **geometry)  # noqa: E731
    out = make(tensor(x), tensor(w, requires_grad=True))
    for cell in cells(out.shape):
        picture = fan_in(out, output_cell=cell)
        dx, dw = grad_of_output_cell(make, x, w, cell)
        assert {link.input for link in picture.links} == set(zip(*np.nonzero(dx)))
        assert {link.weight for link in picture.links} == set(zip(*np.nonzero(dw)))
        assert all(link.output == cell and link.derivative == w[link.weight]
                   and link.gradient is None for link in picture.links)
        # every tap of every channel is either read or on padding
        assert len(picture.links) + len(picture.padding) == 2 * 9


@pytest.mark.parametrize("geometry", GEOMETRIES)
def test_conv_input_cell_lights_every_output_reading_it_with_its_weight(rng, geometry):
    x, w = rng.standard_normal((1, 2, 7, 7)), rng.standard_normal((3, 2, 3, 3))
    out = F.conv2d(tensor(x), tensor(w, requires_grad=True), **geometry)
    for cell in cells(x.shape):
        one_hot = np.zeros(x.shape)
        one_hot[cell] = 1.0
        response = F.conv2d(tensor(one_hot), tensor(w), **geometry).numpy()  # linear: d out / d x[cell]
        picture = fan_in(out, input_cell=cell)
        assert {link.output for link in picture.links} == set(zip(*np.nonzero(response)))
        for link in picture.links:
            assert response[link.output] == w[link.weight]


TRANSPOSED = [dict(stride=1, padding=0, dilation=1, groups=1, output_padding=0),
              dict(stride=2, padding=1, dilation=1, groups=2, output_padding=1),
              dict(stride=3, padding=2, dilation=2, groups=1, output_padding=2)]


@pytest.mark.parametrize("geometry", TRANSPOSED)
def test_conv_transpose_cells_are_the_engines_own_dependence(rng, geometry):
    """Each input cell is spread onto the outputs the op's own forward sends a one-hot to, by
    the weight in each; each output cell reads the inputs and weights its gradient reaches."""
    x, w = rng.standard_normal((1, 4, 3, 4)), rng.standard_normal((4, 3, 3, 2))
    make = lambda x, w: F.conv_transpose2d(x, w, **geometry)  # noqa: E731
    out = make(tensor(x), tensor(w, requires_grad=True))
    for cell in cells(x.shape):
        one_hot = np.zeros(x.shape)
        one_hot[cell] = 1.0
        response = make(tensor(one_hot), tensor(w)).numpy()  # linear: d out / d x[cell]
        picture = fan_in(out, input_cell=cell)
        assert {link.output for link in picture.links} == set(zip(*np.nonzero(response)))
        assert all(response[link.output] == w[link.weight] for link in picture.links)
        assert picture.summary.startswith(f"input[{', '.join(map(str, cell))}] is spread onto")
    for cell in cells(out.shape)[::5]:
        picture = fan_in(out, output_cell=cell)
        dx, dw = grad_of_output_cell(make, x, w, cell)
        assert {link.input for link in picture.links} == set(zip(*np.nonzero(dx)))
        assert {link.weight for link in picture.links} == set(zip(*np.nonzero(dw)))


@pytest.mark.parametrize("geometry", GEOMETRIES[:3] + [dict(stride=2, padding=1, dilation=2)])
def test_max_pool_output_cell_reads_its_window_and_sends_grad_to_its_argmax(rng, geometry, torch):
    x = rng.standard_normal((2, 2, 7, 7))
    out = F.max_pool2d(tensor(x, requires_grad=True), 3, **geometry)
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
        assert {link.input for link in picture.links if link.derivative} == set(zip(*np.nonzero(dx)))


@pytest.mark.parametrize("ties", ["first", "split", "all"])
def test_max_pool_input_cell_lights_only_windows_that_route_to_it(ties):
    # repeated values: windows with tied maxima, where the rules differ
    x = np.array([[1, 3, 3, 0, 2], [3, 1, 0, 2, 2], [0, 0, 1, 1, 0], [2, 2, 1, 1, 0],
                  [2, 2, 0, 0, 1]], dtype=float).reshape(1, 1, 5, 5)
    geometry = dict(stride=1, padding=1)
    out = F.max_pool2d(tensor(x, requires_grad=True), 3, ties=ties, **geometry)
    flows = {}
    for cell in cells(out.shape):
        dx, _ = grad_of_output_cell(lambda x, _: F.max_pool2d(x, 3, ties=ties, **geometry),
                                    x, None, cell)
        for source in zip(*np.nonzero(dx)):
            flows.setdefault(source, set()).add(cell)
    for cell in cells(x.shape):
        picture = fan_in(out, input_cell=cell)
        assert {link.output for link in picture.links if link.derivative} == flows.get(cell, set())


def test_unbatched_and_released_pool_still_work(rng):
    x = tensor(rng.standard_normal((1, 4, 4)), requires_grad=True)
    out = F.max_pool2d(x, 2)
    out.sum().backward()  # frees the saved argmax: fan_in runs the same rule again
    picture = fan_in(out, output_cell=(0, 1, 1))
    chosen = [link.input for link in picture.links if link.derivative]
    assert chosen == [(0, 0) + tuple(np.argwhere(x.grad.numpy()[0, 2:, 2:] == 1)[0] + 2)]
    assert x.grad.numpy().sum() == 4  # fan_in changed no gradient
    assert picture.links[0].gradient is None  # out.grad was not retained: no gradient known


def test_a_pool_whose_input_backward_freed_says_how_to_keep_it(rng):
    x = tensor(rng.standard_normal((4, 8, 32, 32)), requires_grad=True)
    out = F.max_pool2d(x * 2, 2)  # its input, large, held by nothing but the graph
    out.sum().backward()
    with pytest.raises(ValueError, match=r"fan_in: the input of this MaxPool2d was freed \(only "
                                         r"the graph held it.*keep a reference to the input"):
        fan_in(out, output_cell=(0, 0, 0, 0))


def test_bad_arguments_raise_naming_fan_in_and_the_argument(rng):
    out = F.max_pool2d(tensor(rng.standard_normal((1, 1, 4, 4)), requires_grad=True), 2)
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
    x = tensor(rng.standard_normal((1, 1, 4, 4)), requires_grad=True)
    out = F.conv2d(x, tensor(np.ones((1, 1, 2, 2)), requires_grad=True), padding=1)
    first, again = fan_in(out, output_cell=(0, 0)), fan_in(out, output_cell=(0, 0))
    assert first.source == again.source
    assert first.summary.startswith("output[0, 0, 0, 0] = Σ weight · input over the 1 yellow input "
                                    "cell (each tagged with its weight); 3 weight taps read padding")
    assert all(line in first.source for line in textwrap.wrap(first.summary, 100))


# ---- the gradients: fan_in's terms add up to the engine's own ∂L/∂input and ∂L/∂weight --------
def backward_through(make, x, w, rng):
    """x (a non-leaf with retain_grad, as in a network), the op's output (retain_grad too) and
    the weight, after the backward of L = ½ Σ (output − target)²."""
    x = (tensor(x, requires_grad=True) * 1.0).retain_grad()
    w = None if w is None else tensor(w, requires_grad=True)
    out = make(x, w).retain_grad()
    target = tensor(rng.standard_normal(out.shape))
    (((out - target) ** 2).sum() * 0.5).backward()
    return x, out, w


CONV_CASES = [dict(geometry, groups=1) for geometry in GEOMETRIES] + \
    [dict(stride=2, padding=1, dilation=1, groups=2)]


@pytest.mark.parametrize("geometry", CONV_CASES)
def test_conv_terms_sum_to_the_engines_input_and_weight_gradients(rng, geometry):
    x, w = rng.standard_normal((2, 2, 5, 5)), rng.standard_normal((2, 2 // geometry["groups"], 3, 3))
    x, out, w = backward_through(lambda x, w: F.conv2d(x, w, **geometry), x, w, rng)
    g = out.grad.numpy()
    for cell in cells(x.shape):
        picture = fan_in(out, input_cell=cell)
        for link in picture.links:  # g · w, term by term
            assert link.gradient == g[link.output] * w.numpy()[link.weight]
        assert picture.input_gradient == pytest.approx(x.grad.numpy()[cell], abs=1e-12)
    weight_grad, input_grad = np.zeros(w.shape), np.zeros(x.shape)
    for cell in cells(out.shape):
        picture = fan_in(out, output_cell=cell)
        assert picture.input_gradient is None and picture.grad_output[cell] == g[cell]
        for link in picture.links:  # where one output's gradient goes: g · w and g · x
            input_grad[link.input] += link.gradient
            weight_grad[link.weight] += link.weight_gradient
            assert link.weight_gradient == g[cell] * x.numpy()[link.input]
    np.testing.assert_allclose(input_grad, x.grad.numpy(), rtol=0, atol=1e-12)
    np.testing.assert_allclose(weight_grad, w.grad.numpy(), rtol=0, atol=1e-12)


@pytest.mark.parametrize("ties", ["first", "split", "all"])
@pytest.mark.parametrize("geometry", [dict(stride=1, padding=1, dilation=1),
                                      dict(stride=2, padding=1, dilation=1),
                                      dict(stride=2, padding=1, dilation=2)])
def test_max_pool_terms_sum_to_the_engines_input_gradient_under_each_tie_rule(rng, ties, geometry):
    x = rng.integers(0, 3, (2, 2, 7, 7)).astype(float)  # few values: many tied windows
    x, out, _ = backward_through(lambda x, _: F.max_pool2d(x, 3, ties=ties, **geometry), x, None,
                                 rng)
    g, sent = out.grad.numpy(), np.zeros(x.shape)
    for cell in cells(out.shape):
        for link in fan_in(out, output_cell=cell).links:
            sent[link.input] += link.gradient
    np.testing.assert_allclose(sent, x.grad.numpy(), rtol=0, atol=1e-12)
    split = 0
    for cell in cells(x.shape):
        picture = fan_in(out, input_cell=cell)
        assert picture.input_gradient == pytest.approx(x.grad.numpy()[cell], abs=1e-12)
        for link in picture.links:
            assert link.gradient == pytest.approx(g[link.output] * link.derivative, abs=1e-15)
            split += 0 < link.derivative < 1
    assert (split > 0) == (ties == "split")  # shares of 1/k appear under 'split' only


def test_split_share_is_one_over_the_number_of_tied_cells():
    x = tensor(np.array([[5.0, 1.0, 5.0], [0.0, 5.0, 2.0], [1.0, 1.0, 1.0]]).reshape(1, 1, 3, 3),
               requires_grad=True)
    out = F.max_pool2d(x, 3, ties="split")
    picture = fan_in(out, output_cell=(0, 0), grad_output=np.array([[[[6.0]]]]))
    received = {link.input[2:]: link.gradient for link in picture.links if link.derivative}
    assert received == {(0, 0): 2.0, (0, 2): 2.0, (1, 1): 2.0}
    assert "1/3" in picture.source  # the share, written as the fraction it is


def test_grad_output_defaults_to_output_grad_and_is_checked(rng):
    x = tensor(rng.standard_normal((2, 5, 5)), requires_grad=True)  # unbatched: (C, H, W)
    out = F.max_pool2d(x, 2, stride=1)
    assert fan_in(out, input_cell=(0, 2, 2)).input_gradient is None  # no gradient known yet
    upstream = rng.standard_normal(out.shape)
    explicit = fan_in(out, input_cell=(0, 2, 2), grad_output=tensor(upstream))
    out.retain_grad()
    out.backward(upstream)
    default = fan_in(out, input_cell=(0, 2, 2))
    assert default.links == explicit.links and default.source == explicit.source
    assert default.input_gradient == explicit.input_gradient == pytest.approx(x.grad.numpy()[0, 2, 2])
    with pytest.raises(TypeError, match=r"fan_in: grad_output must be a Tensor or a NumPy array "
                                        r"of the output's shape \(2, 4, 4\), got list"):
        fan_in(out, input_cell=(0, 0), grad_output=upstream.tolist())
    with pytest.raises(TypeError, match="fan_in: grad_output must be floating point.*int64"):
        fan_in(out, input_cell=(0, 0), grad_output=np.ones(out.shape, dtype=np.int64))
    with pytest.raises(ValueError, match=r"fan_in: grad_output must have the output's shape "
                                         r"\(2, 4, 4\), got \(1, 2, 4, 4\)"):
        fan_in(out, input_cell=(0, 0), grad_output=upstream[None])


def test_fan_in_changes_no_gradient_and_nothing_saved(rng):
    x = tensor(rng.standard_normal((1, 1, 5, 5)), requires_grad=True)
    out = F.max_pool2d(x, 3, stride=1, ties="split").retain_grad()
    out.backward(np.ones(out.shape), retain_graph=True)
    saved = {name: value.copy() for name, value in out.grad_fn.saved_for_backward().items()}
    grads = x.grad.numpy().copy(), out.grad.numpy().copy()
    fan_in(out, input_cell=(2, 2))
    fan_in(out, output_cell=(1, 1), grad_output=np.full(out.shape, 2.0))
    assert np.array_equal(x.grad.numpy(), grads[0]) and np.array_equal(out.grad.numpy(), grads[1])
    after = out.grad_fn.saved_for_backward()
    assert saved.keys() == after.keys() and all(np.array_equal(saved[k], after[k]) for k in saved)


def test_picture_writes_the_terms_their_sum_and_counts_in_the_singular_and_plural(rng):
    image = tensor(np.arange(36.0).reshape(1, 1, 6, 6), requires_grad=True)
    conv = F.conv2d(image, tensor(np.ones((1, 1, 3, 3))), stride=2, padding=1)
    upstream = np.arange(9.0).reshape(1, 1, 3, 3) / 4
    four = fan_in(conv, input_cell=(3, 3), grad_output=upstream)
    assert four.summary.startswith("input[0, 0, 3, 3] is read by 4 outputs (yellow)")
    assert four.input_gradient == upstream[0, 0, 1:, 1:].sum() == 6.0
    assert "Σ = ∂L/∂input[0, 0, 3, 3] from this op" in four.source and ">6.000<" in four.source
    assert "input[0, 0, 0, 0] is read by 1 output (" in fan_in(conv, input_cell=(0, 0)).summary
    pooled = F.max_pool2d(image, 3, stride=2, padding=1)  # increasing values: the bottom right wins
    assert "lies in 4 pooling windows; 1 chose it (blue, ties='first') and sends it its gradient; " \
           "the other 3 send none" in fan_in(pooled, input_cell=(3, 3)).summary
    assert "lies in 1 pooling window; none chose it" in fan_in(pooled, input_cell=(0, 0)).summary


# ---- linear maps: interpolate's modes and pad's copying modes -------------------------------------
# Each takes the functional module (ours or torch's: one signature) and the input.
LINEAR_MAPS = {
    "nearest 1.7": lambda f, x: f.interpolate(x, scale_factor=1.7),
    "nearest 0.6": lambda f, x: f.interpolate(x, scale_factor=0.6),
    "nearest-exact": lambda f, x: f.interpolate(x, size=(7, 3), mode="nearest-exact"),
    "bilinear": lambda f, x: f.interpolate(x, scale_factor=1.7, mode="bilinear"),
    "bilinear corners": lambda f, x: f.interpolate(x, size=(3, 7), mode="bilinear",
                                                   align_corners=True),
    "bicubic": lambda f, x: f.interpolate(x, scale_factor=1.5, mode="bicubic"),
    "area": lambda f, x: f.interpolate(x, size=(3, 2), mode="area"),
    "reflect": lambda f, x: f.pad(x, (2, 1, 3, 0), mode="reflect"),
    "replicate": lambda f, x: f.pad(x, (3, 1, 0, 2), mode="replicate"),
    "circular": lambda f, x: f.pad(x, (1, 2, -1, 3), mode="circular"),
}


def jacobian_row(make, x, cell, torch):
    """d out[cell] / dx by torch's own backward of a one-hot gradient (the brute force)."""
    xt = torch.tensor(x, requires_grad=True)
    out = make(torch.nn.functional, xt)
    upstream = torch.zeros(out.shape, dtype=torch.float64)
    upstream[cell] = 1.0
    out.backward(upstream)
    return xt.grad.numpy()


@pytest.mark.parametrize("name", sorted(LINEAR_MAPS))
def test_linear_map_output_cell_lights_exactly_the_cells_it_reads(rng, name, torch):
    """Each output cell: the yellow input cells are the nonzero entries of its Jacobian row (by
    torch's backward), each link's coefficient that entry."""
    make = LINEAR_MAPS[name]
    x = rng.standard_normal((1, 2, 5, 4))
    out = make(F, tensor(x, requires_grad=True))
    for cell in cells(out.shape)[::7]:
        picture = fan_in(out, output_cell=cell)
        row = jacobian_row(make, x, cell, torch)
        assert {link.input for link in picture.links} == set(zip(*np.nonzero(row)))
        for link in picture.links:
            assert link.derivative == pytest.approx(row[link.input], abs=1e-12)
        assert picture.padding == ()


@pytest.mark.parametrize("name", sorted(LINEAR_MAPS))
def test_linear_map_input_cell_lights_every_output_reading_it(rng, name):
    """Each input cell: the outputs lit are where the op's own forward sends a one-hot (linear:
    that is the Jacobian column), each with that response as its coefficient."""
    make = LINEAR_MAPS[name]
    x = rng.standard_normal((1, 2, 5, 4))
    out = make(F, tensor(x, requires_grad=True))
    for cell in cells(x.shape)[::3]:
        one_hot = np.zeros(x.shape)
        one_hot[cell] = 1.0
        response = make(F, tensor(one_hot)).numpy()
        picture = fan_in(out, input_cell=cell)
        assert {link.output for link in picture.links} == set(zip(*np.nonzero(response)))
        for link in picture.links:
            assert link.derivative == pytest.approx(response[link.output], abs=1e-12)


def test_linear_map_pictures_tag_blends_and_say_copies(rng):
    x = tensor(rng.standard_normal((1, 1, 4, 4)), requires_grad=True)
    blend = fan_in(F.interpolate(x, scale_factor=1.7, mode="bilinear"), output_cell=(3, 4),
                   grad_output=np.ones((1, 1, 6, 6)))
    assert len(blend.links) == 4 and sum(link.derivative for link in blend.links) == pytest.approx(1)
    assert "×0.376" in blend.source and "g · coefficient" in blend.source
    assert blend.summary.startswith("output[0, 0, 3, 4] = Σ coefficient · input over the 4 yellow")
    copy = fan_in(F.pad(x, (2, 2, 2, 2), mode="reflect"), output_cell=(0, 0))
    [link] = copy.links
    assert link.input == (0, 0, 2, 2) and link.derivative == 1  # mirrored about the edge cell
    assert copy.summary.startswith("output[0, 0, 0, 0] is a copy of the yellow input cell")
    with pytest.raises(ValueError, match="4-D"):
        fan_in(F.pad(tensor(np.ones((2, 5)), requires_grad=True), (1, 1), mode="reflect"),
               output_cell=(0, 1))


# ---- the pictures of padding and interpolation (docs/visualization.md) ---------------------------
def plane_colours(picture, title: str) -> np.ndarray:
    """The background colour of every cell of the plane titled ``title``, as drawn."""
    import re
    source = picture.label
    table = source[source.index(f"<B>{title}</B>"):]
    table = table[table.index("<TABLE"):table.index("</TABLE>")]
    return np.array([re.findall(r'<TD BGCOLOR="([^"]+)"', row)
                     for row in re.findall(r"<TR>(.*?)</TR>", table)])


PAD_GREY, YELLOW = "#eeeeee", "#ffe08a"


@pytest.mark.parametrize("mode, pad", [("reflect", (2, 1, 3, 0)), ("replicate", (3, 1, 0, 2)),
                                       ("circular", (1, 2, -1, 3))])
def test_padding_border_is_grey_and_nothing_else(rng, mode, pad):
    """The cells the padding added (and only they) are grey, in the output and its gradient,
    unless lit; the picked border cell keeps its grey under its frame."""
    x = tensor(rng.standard_normal((1, 1, 5, 4)), requires_grad=True)
    out = F.pad(x, pad, mode=mode)
    (left, right, top, bottom), (h, w) = (max(p, 0) for p in pad), out.shape[2:]
    rows, cols = np.arange(h)[:, None], np.arange(w)[None, :]
    border = (rows < top) | (rows >= h - bottom) | (cols < left) | (cols >= w - right)
    for picture in (fan_in(out, input_cell=(1, 1), grad_output=np.ones(out.shape)),
                    fan_in(out, output_cell=(0, 0))):
        lit = np.zeros((h, w), bool)
        for link in picture.links if picture.input_gradient is not None else ():
            lit[link.output[2:]] = True
        for title in ("output [0, 0]",) + (("∂L/∂output [0, 0]",) if picture.grad_output
                                           is not None else ()):
            colours = plane_colours(picture, title)
            assert colours.shape == (h, w)
            assert np.array_equal(colours == PAD_GREY, border & ~lit), title
            assert np.all(colours[lit] == YELLOW)
        assert (plane_colours(picture, "input [0, 0]") != PAD_GREY).all()  # the input: no border
    assert "Grey: the border pad(mode=" in picture.summary


def test_interpolation_draws_no_border(rng):
    x = tensor(rng.standard_normal((1, 1, 4, 4)), requires_grad=True)
    picture = fan_in(F.interpolate(x, scale_factor=2, mode="bilinear"), output_cell=(0, 0))
    assert (plane_colours(picture, "output [0, 0]") != PAD_GREY).all()
    assert "Grey" not in picture.summary


def test_bilinear_coefficients_are_written_as_the_products_they_are():
    """4×4 → 8×8 (align_corners=False): output (3, 4) is at (1.25, 1.75), so it reads rows 1, 2
    by (0.75, 0.25) and columns 1, 2 by (0.25, 0.75); tags and table give 4 digits."""
    x = tensor(np.arange(16.0).reshape(1, 1, 4, 4), requires_grad=True)
    up = F.interpolate(x, scale_factor=2, mode="bilinear", align_corners=False)
    picture = fan_in(up, output_cell=(3, 4), grad_output=np.full(up.shape, 2.0))
    assert {link.input[2:]: link.derivative for link in picture.links} == {
        (1, 1): 0.75 * 0.25, (1, 2): 0.75 * 0.75, (2, 1): 0.25 * 0.25, (2, 2): 0.25 * 0.75}
    for coefficient in ("0.1875", "0.5625", "0.0625"):
        assert f"×{coefficient}" in picture.label  # the tag in the input cell
        assert f">{coefficient}</TD>" in picture.label  # the table's coefficient column
    assert ">1.125</TD>" in picture.label  # g · c = 2 · 0.5625
    reader = fan_in(up, input_cell=(1, 2), grad_output=np.ones(up.shape))
    assert len(reader.links) == 16 and reader.input_gradient == pytest.approx(4.0)  # 2 per axis
    assert "(untagged" not in reader.summary  # every reader blends: each is tagged


def test_reflect_sends_a_border_cells_gradient_to_its_mirror():
    """docs/visualization.md's claims on a 6×6 image padded by 1: output (0, 3) copies input
    (1, 2); input (1, 2) gets two gradients, (1, 1) four, the edge cell (0, 2) and the corner
    one; under replicate and circular the corner gets four."""
    x = tensor(np.zeros((1, 1, 6, 6)), requires_grad=True)
    padded = F.pad(x, (1, 1, 1, 1), mode="reflect")
    [link] = fan_in(padded, output_cell=(0, 3)).links
    assert link.input == (0, 0, 1, 2) and link.derivative == 1
    readers = lambda out, cell: sorted(link.output[2:] for link in fan_in(out, input_cell=cell).links)
    assert readers(padded, (1, 2)) == [(0, 3), (2, 3)]
    assert len(readers(padded, (1, 1))) == 4
    assert readers(padded, (0, 2)) == [(1, 3)] and readers(padded, (0, 0)) == [(1, 1)]
    small = tensor(np.zeros((1, 1, 4, 4)), requires_grad=True)
    assert readers(F.pad(small, (1, 1, 1, 1), mode="replicate"), (0, 0)) == [
        (0, 0), (0, 1), (1, 0), (1, 1)]
    assert readers(F.pad(small, (1, 1, 1, 1), mode="circular"), (0, 0)) == [
        (1, 1), (1, 5), (5, 1), (5, 5)]


def test_copy_summaries_count_their_outputs(rng):
    x = tensor(rng.standard_normal((1, 1, 4, 4)), requires_grad=True)
    grad = np.ones((1, 1, 6, 6))
    one = fan_in(F.pad(x, (1, 1, 1, 1), mode="reflect"), input_cell=(0, 0), grad_output=grad)
    assert one.summary.startswith("input[0, 0, 0, 0] is copied into 1 output (yellow), which "
                                  "sends back its whole gradient")
    four = fan_in(F.pad(x, (1, 1, 1, 1), mode="replicate"), input_cell=(0, 0), grad_output=grad)
    assert four.summary.startswith("input[0, 0, 0, 0] is copied into 4 outputs (yellow); each")
    cropped = fan_in(F.pad(x, (1, 1, -1, 1), mode="circular"), input_cell=(0, 0))
    assert cropped.links == () and cropped.summary.startswith(
        "input[0, 0, 0, 0] is read by no output: it receives no gradient")
    mixed = fan_in(F.interpolate(x, size=(7, 7), mode="bilinear", align_corners=True),
                   input_cell=(0, 0))
    assert sorted(link.derivative for link in mixed.links) == [0.25, 0.5, 0.5, 1.0]
    assert "(untagged: 1, a copy)" in mixed.summary


def test_label_is_the_whole_picture_to_set_beside_others(rng):
    x = tensor(rng.standard_normal((1, 1, 4, 4)), requires_grad=True)
    picture = fan_in(F.pad(x, (1, 1, 1, 1), mode="circular"), output_cell=(0, 0))
    assert picture.label.startswith("<<TABLE") and picture.label.endswith("</TABLE>>")
    assert picture.label in picture.source and picture.summary.split()[0] in picture.label
