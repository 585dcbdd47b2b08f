"""Resizing (F.interpolate) as per-axis maps: every mode resamples each spatial axis on its own.

Output position o along an axis reads a few input positions ``index[o, t]`` with weights
``weight[o, t]`` — nearest: one, weight 1; linear: two, (1 - λ, λ); cubic: four; area: the
cells of its adaptive window, 1/length each. Written as a matrix per axis (out × in, its rows
those weights), the op on an image is y = A_H x A_Wᵀ, and its backward the transposed maps,
dx = A_Hᵀ g A_W: ``Interpolate`` and ``InterpolateGrad`` are that adjoint pair, each the
other's backward, so every derivative order comes for free. ``resample``/``scatter`` apply the
maps with gathers and scatter-adds (a copy of the cells read, never a multiply by the zeros of
the matrix: an inf elsewhere in the row stays out of a cell, as in torch).

The maps follow torch's index rules exactly, down to the float32 arithmetic its kernels do:
nearest reads floor(o · s) with s = 1/scale_factor when one is given (and
recompute_scale_factor is not True), else in/out; linear and cubic read s·(o + ½) - ½
(align_corners=False; clamped at 0 for linear, not for cubic) or o·(in - 1)/(out - 1)
(align_corners=True); antialias=True blends every cell under the filter, stretched by the
downsampling factor (``_antialias_map``).
"""
from __future__ import annotations

import functools
from typing import NamedTuple

import numpy as np

from ..args import _shown, check_flag, tensor_arg, warn
from ..engine import Node, Tensor
from .movement import is_int

MODES = ("nearest", "linear", "bilinear", "bicubic", "trilinear", "area", "nearest-exact")
# mode -> the input's ndim it needs (None: 3, 4 or 5)
MODE_NDIM = {"nearest": None, "nearest-exact": None, "area": None, "linear": 3, "bilinear": 4,
             "trilinear": 5, "bicubic": 4}
CUBIC_A = -0.75  # the cubic convolution's parameter torch uses (Keys' kernel)


class AxisMap(NamedTuple):
    """What one axis of the output reads: ``index`` (out, taps) input positions and ``weight``
    (out, taps) their weights, or None where each output copies one cell (weight 1)."""
    index: np.ndarray
    weight: np.ndarray | None


# ---- applying the maps ------------------------------------------------------------------------------
def resample(x: np.ndarray, maps: tuple) -> np.ndarray:
    """y = the maps applied to the trailing axes of x (one map per axis), the last axis first
    (as torch's kernels blend: the row, then the rows' results)."""
    first = x.ndim - len(maps)
    for k in reversed(range(len(maps))):
        axis, (index, weight) = first + k, maps[k]
        if weight is None:
            x = np.take(x, index[:, 0], axis=axis)
            continue
        shape = [1] * x.ndim
        shape[axis] = -1
        weight = weight.astype(x.dtype, copy=False)
        out = np.take(x, index[:, 0], axis=axis) * weight[:, 0].reshape(shape)
        for t in range(1, index.shape[1]):
            out += np.take(x, index[:, t], axis=axis) * weight[:, t].reshape(shape)
        x = out
    return x


def scatter(g: np.ndarray, maps: tuple, input_sizes: tuple) -> np.ndarray:
    """dx = the transposed maps applied to g: each output cell's gradient, times its weight, added
    into every input cell it read (np.add.at adds every repeat of an index)."""
    first = g.ndim - len(maps)
    for k, (index, weight) in enumerate(maps):
        moved = np.moveaxis(g, first + k, 0)
        out = np.zeros((input_sizes[k],) + moved.shape[1:], dtype=g.dtype)
        column = (-1,) + (1,) * (moved.ndim - 1)
        for t in range(index.shape[1]):
            np.add.at(out, index[:, t], moved if weight is None
                      else moved * weight[:, t].astype(g.dtype).reshape(column))
        g = np.moveaxis(out, 0, first + k)
    return g


# ---- the maps of each mode (cached: a training loop asks for the same ones every step) --------------
def _index_dtype(dtype) -> type:
    """torch computes source positions in the input's own precision: float32 below float64."""
    return np.float64 if np.dtype(dtype) == np.float64 else np.float32


def _ratio(T, in_size: int, out_size: int, scale, align_corners) -> "np.floating":
    """torch's area_pixel_compute_scale: (in-1)/(out-1) with align_corners, else 1/scale_factor
    when one was given, else in/out."""
    if align_corners:
        return T(in_size - 1) / T(out_size - 1) if out_size > 1 else T(0)
    return T(1.0 / scale) if scale is not None and scale > 0 else T(in_size) / T(out_size)


@functools.lru_cache(maxsize=256)
def axis_map(mode: str, in_size: int, out_size: int, scale, align_corners, dtype: str,
             spatial_dims: int = 2, antialias: bool = False) -> AxisMap:
    """The map of one axis (see the module's docstring for the rules). torch's kernels keep two
    shortcuts that ignore the scale factor: an axis whose size does not change is copied by the
    linear modes (and by antialiasing), and 2-D nearest copies it, or reads o // 2 where the
    size doubles."""
    out = np.arange(out_size)
    if out_size == in_size and (mode in ("linear", "bilinear", "trilinear") or antialias
                                or (mode == "nearest" and spatial_dims == 2)):
        return AxisMap(out[:, None], None)
    if antialias:
        return _antialias_map(mode, in_size, out_size, scale, align_corners, _index_dtype(dtype))
    if mode in ("nearest", "nearest-exact"):
        if mode == "nearest" and spatial_dims == 2 and out_size == 2 * in_size:
            index = out >> 1
        else:
            s = _ratio(np.float32, in_size, out_size, scale, False)
            at = out.astype(np.float32) + (np.float32(0.5) if mode == "nearest-exact" else 0)
            index = np.minimum(np.floor(at * s).astype(np.intp), in_size - 1)
        return AxisMap(index.astype(np.intp)[:, None], None)
    if mode == "area":  # adaptive average pooling's windows: [⌊o·in/out⌋, ⌈(o+1)·in/out⌉)
        start, end = out * in_size // out_size, ((out + 1) * in_size + out_size - 1) // out_size
        taps = np.arange((end - start).max())
        index = np.minimum(start[:, None] + taps, end[:, None] - 1)
        weight = np.where(taps < (end - start)[:, None], 1.0 / (end - start)[:, None], 0.0)
        return AxisMap(index.astype(np.intp), weight)
    T = _index_dtype(dtype)
    s, at = _ratio(T, in_size, out_size, scale, align_corners), out.astype(T)
    source = s * at if align_corners else s * (at + T(0.5)) - T(0.5)
    cubic = mode == "bicubic"
    if not cubic:
        source = np.maximum(source, T(0))
    below = np.minimum(np.floor(source).astype(np.intp), in_size - 1)
    lam = np.clip(source - below, 0, 1).astype(np.float64)
    if not cubic:  # (1 - λ)·x[i] + λ·x[i + 1], at the last cell x[i] alone
        index = np.stack([below, below + (below < in_size - 1)], axis=1)
        return AxisMap(index, np.stack([1 - lam, lam], axis=1).astype(T))
    # Keys' cubic convolution at distances 1 + λ, λ, 1 - λ, 2 - λ; positions past an edge read
    # the edge cell (so its weight collects theirs)
    near = lambda d: ((CUBIC_A + 2) * d - (CUBIC_A + 3)) * d * d + 1  # noqa: E731 (|d| ≤ 1)
    far = lambda d: ((CUBIC_A * d - 5 * CUBIC_A) * d + 8 * CUBIC_A) * d - 4 * CUBIC_A  # noqa: E731
    weight = np.stack([far(lam + 1), near(lam), near(1 - lam), far(2 - lam)], axis=1)
    index = np.clip(below[:, None] - 1 + np.arange(4), 0, in_size - 1)
    return AxisMap(index, weight.astype(T))


def _antialias_map(mode: str, in_size: int, out_size: int, scale, align_corners, T) -> AxisMap:
    """antialias=True (torch's and PIL's filter): output o blends every input cell within the
    filter's support around its centre c = s·(o + ½), the filter (the triangle, or Keys' cubic
    with a = -½) stretched by s when downsampling, the weights normalised to sum to 1."""
    s = _ratio(T, in_size, out_size, scale, align_corners)
    taps = 2 if mode == "bilinear" else 4
    support = T(taps / 2) * s if s >= 1 else T(taps / 2)
    stretch = T(1) / s if s >= 1 else T(1)
    centre = s * (np.arange(out_size).astype(T) + T(0.5))
    first = np.maximum((centre - support + T(0.5)).astype(np.intp), 0)
    count = np.minimum((centre + support + T(0.5)).astype(np.intp), in_size) - first
    offsets = np.arange(max(int(np.ceil(support)) * 2 + 1, count.max()))
    index = np.minimum(first[:, None] + offsets, in_size - 1)
    d = np.abs((first[:, None] + offsets - centre[:, None] + T(0.5)) * stretch).astype(T)
    if mode == "bilinear":
        weight = np.maximum(T(0), T(1) - d)
    else:
        a = T(-0.5)
        weight = np.where(d < 1, ((a + 2) * d - (a + 3)) * d * d + 1,
                          np.where(d < 2, ((a * d - 5 * a) * d + 8 * a) * d - 4 * a, T(0)))
    weight = np.where(offsets < count[:, None], weight, T(0)).astype(T)
    total = weight.sum(axis=1, keepdims=True)
    weight = np.where(total != 0, weight / np.where(total != 0, total, 1), weight)
    return AxisMap(index, weight.astype(T))


def interpolation_maps(input_shape: tuple, dtype, mode: str, size: tuple, scale_factor,
                       align_corners, antialias=None) -> tuple:
    """The maps of every spatial axis of an input of ``input_shape`` (N, C, *spatial);
    ``scale_factor``: the factors the kernels use (None: in/out)."""
    scales = scale_factor or (None,) * len(size)
    return tuple(axis_map(mode, n, out, scale, align_corners, np.dtype(dtype).name, len(size),
                          bool(antialias))
                 for n, out, scale in zip(input_shape[2:], size, scales))


class FixedLinearMap:
    """What the pictures ask (fan_in) of an op whose output is a fixed linear map of its input,
    one map per spatial axis (``maps()``): which input cells each output cell reads and with
    what weight. Interpolate and padding.py's EdgePad are such ops."""

    def coefficients(self, out_cell: tuple) -> dict:
        return cell_coefficients(self.maps(), out_cell)

    def window_cells(self, out_cell: tuple) -> tuple:
        """(cells, padding): the input cells output ``out_cell`` read; none lie in padding."""
        return list(self.coefficients(out_cell)), []

    def cells_reading(self, in_cell: tuple) -> list:
        return [(out, None) for out in cells_reading(self.maps(), in_cell)]

    def channel_groups(self) -> tuple:
        return 1, 1  # each channel is mapped alone

    def padding_read(self) -> tuple:
        return 0, 0  # no constant is read: every output cell is made of input cells


# ---- the op and its adjoint ---------------------------------------------------------------------
class Interpolate(FixedLinearMap, Node):
    """y = (A_1 ⊗ … ⊗ A_k) x, each spatial axis resampled by its map A_d (out_d × in_d);
    dx = (A_1ᵀ ⊗ … ⊗ A_kᵀ) g  (InterpolateGrad)

    Pictures ask it which input cells an output cell read and with what weight
    (``coefficients``, ``window_cells``, ``cells_reading``)."""

    fresh_gradients = True  # scatter makes each gradient anew

    def forward(ctx, x, *, mode, size, scale_factor, align_corners, antialias=None):
        return resample(x, interpolation_maps(x.shape, x.dtype, mode, size, scale_factor,
                                              align_corners, antialias))

    def backward(ctx, grad):
        return InterpolateGrad.call(grad, input_shape=tuple(ctx.parents[0].shape), **ctx.attrs)

    def maps(self) -> tuple:
        """Each spatial axis's map, for the input this node read."""
        x = self.parents[0]
        return interpolation_maps(tuple(x.shape), x._data.dtype, **self.attrs)


class InterpolateGrad(Node):
    """z = (A_1ᵀ ⊗ … ⊗ A_kᵀ) g, interpolate's input gradient; linear in g, so
    ∂L/∂g = (A_1 ⊗ … ⊗ A_k) Z  (Interpolate)"""

    fresh_gradients = True

    def forward(ctx, g, *, input_shape, mode, size, scale_factor, align_corners, antialias=None):
        maps = interpolation_maps(input_shape, g.dtype, mode, size, scale_factor, align_corners,
                                  antialias)
        return scatter(g, maps, input_shape[2:])

    def backward(ctx, grad):
        attrs = {k: v for k, v in ctx.attrs.items() if k != "input_shape"}
        return Interpolate.call(grad, **attrs)


# ---- cells, for the pictures ----------------------------------------------------------------------
def cell_coefficients(maps: tuple, out_cell: tuple) -> dict:
    """{input cell: ∂out[out_cell]/∂x[cell]} for the nonzero ones: the product of each axis's
    weights (a tap past an edge adds into the edge cell it reads)."""
    lead = len(out_cell) - len(maps)
    found = {tuple(out_cell[:lead]): 1.0}
    for (index, weight), o in zip(maps, out_cell[lead:]):
        step = {}
        for t in range(index.shape[1]):
            w = 1.0 if weight is None else float(weight[o, t])
            for cell, c in found.items():
                key = cell + (int(index[o, t]),)
                step[key] = step.get(key, 0.0) + c * w
        found = step
    return {cell: c for cell, c in found.items() if c != 0}


def cells_reading(maps: tuple, in_cell: tuple) -> list:
    """Every output cell whose coefficient on input cell ``in_cell`` is nonzero."""
    lead = len(in_cell) - len(maps)
    per_axis = []
    for (index, weight), i in zip(maps, in_cell[lead:]):
        w = np.ones(index.shape) if weight is None else weight.astype(np.float64)
        per_axis.append(np.flatnonzero(np.where(index == i, w, 0).sum(axis=1) != 0))
    return [tuple(in_cell[:lead]) + tuple(int(o) for o in at)
            for at in np.array(np.meshgrid(*per_axis, indexing="ij")).reshape(len(maps), -1).T]


# ---- F.interpolate --------------------------------------------------------------------------------
def interpolate(input, size=None, scale_factor=None, mode: str = "nearest", align_corners=None,
                recompute_scale_factor=None, antialias: bool = False) -> Tensor:
    """torch.nn.functional.interpolate: resize the spatial dims of an (N, C, *spatial) input to
    ``size`` or by ``scale_factor`` (see the module's docstring for each mode's rule)."""
    input = tensor_arg("interpolate", "input", input)
    if not isinstance(mode, str):
        raise TypeError(f"interpolate: mode must be a str, one of {MODES}, got {_shown(mode)}")
    if mode in ("nearest", "area", "nearest-exact"):
        if align_corners is not None:
            raise ValueError("interpolate: align_corners option can only be set with the "
                             "interpolating modes: linear | bilinear | bicubic | trilinear, got "
                             f"mode={mode!r} and align_corners={align_corners!r}")
    else:
        align_corners = False if align_corners is None else check_flag(
            "interpolate", "align_corners", align_corners)
    dims, spatial = input.ndim - 2, list(input.shape[2:])
    if size is not None and scale_factor is not None:
        raise ValueError("interpolate: only one of size or scale_factor should be defined, got "
                         f"size={size!r} and scale_factor={scale_factor!r}")
    if size is not None:
        if isinstance(size, (tuple, list)):
            if len(size) != dims:
                raise ValueError(
                    f"interpolate: Input and output must have the same number of spatial "
                    f"dimensions, but got input with spatial dimensions of {spatial} and output "
                    f"size of {size}. Please provide input tensor in (N, C, d1, d2, ...,dK) "
                    f"format and output size in (o1, o2, ...,oK) format.")
            sizes = tuple(size)
        else:
            sizes = (size,) * dims
        if not all(is_int(n) for n in sizes):
            raise TypeError(f"interpolate: expected size to be one of int or Tuple[int] or "
                            f"Tuple[int, int] or Tuple[int, int, int], but got size with types "
                            f"{[type(n) for n in sizes]}")
        sizes, scales = tuple(int(n) for n in sizes), None
    elif scale_factor is not None:
        if isinstance(scale_factor, (tuple, list)):
            if len(scale_factor) != dims:
                raise ValueError(
                    f"interpolate: Input and scale_factor must have the same number of spatial "
                    f"dimensions, but got input with spatial dimensions of {spatial} and "
                    f"scale_factor of shape {scale_factor}. Please provide input tensor in (N, "
                    f"C, d1, d2, ...,dK) format and scale_factor in (s1, s2, ...,sK) format.")
            scales = tuple(scale_factor)
        else:
            scales = (scale_factor,) * dims
        if not all(isinstance(s, (int, float, np.integer, np.floating)) and not isinstance(s, bool)
                   for s in scales):
            raise TypeError(f"interpolate: scale_factor must be a float or a tuple of floats, "
                            f"got {scale_factor!r}")
        scales = tuple(float(s) for s in scales)
        sizes = None
    else:
        raise ValueError("interpolate: either size or scale_factor should be defined")
    if recompute_scale_factor and size is not None:
        raise ValueError("interpolate: recompute_scale_factor is not meaningful with an explicit "
                         "size.")
    if sizes is None:  # torch's output size: ⌊in · scale_factor⌋, in double precision
        sizes = tuple(int(n * s) for n, s in zip(spatial, scales))
        if recompute_scale_factor or mode == "area":
            scales = None  # the kernels use in/out instead of 1/scale_factor
    if antialias and not (mode in ("bilinear", "bicubic", "lanczos") and input.ndim == 4):
        raise ValueError("interpolate: Anti-alias option is restricted to bilinear, bicubic, and "
                         "lanczos modes and requires a 4-D tensor as input, got "
                         f"mode={mode!r} and a {input.ndim}-D input")
    if mode == "lanczos" and input.ndim == 4:
        if align_corners:
            raise ValueError("interpolate: Lanczos mode does not support align_corners=True")
        if not antialias:
            raise ValueError("interpolate: Lanczos mode requires antialias=True")
        raise NotImplementedError("interpolate: mode 'lanczos' is not implemented here (see "
                                  "docs/porting.md)")
    needed = MODE_NDIM.get(mode, 0)
    if mode not in MODES or input.ndim not in (3, 4, 5) or (mode == "bicubic" and input.ndim != 4):
        raise NotImplementedError(
            f"interpolate: Input Error: Only 3D, 4D and 5D input Tensors supported (got "
            f"{input.ndim}D) for the modes: nearest | linear | bilinear | bicubic | trilinear | "
            f"lanczos | area | nearest-exact (got {mode})")
    if needed is not None and input.ndim != needed:
        raise NotImplementedError(f"interpolate: Got {input.ndim}D input, but {mode} mode needs "
                                  f"{needed}D input")
    names = "DHW"[3 - dims:]
    if min(spatial) <= 0 or min(sizes) <= 0:
        shown = lambda ns: ", ".join(f"{a}: {n}" for a, n in zip(names, ns))  # noqa: E731
        raise RuntimeError(f"interpolate: Input and output sizes should be greater than 0, but "
                           f"got input ({shown(spatial)}) output ({shown(sizes)})")
    if input.shape[1] == 0:
        raise RuntimeError(f"interpolate: Non-empty {input.ndim}D data tensor expected but got a "
                           f"tensor with sizes {list(input.shape)}")
    if input._data.dtype.kind != "f" and not (input._data.dtype == np.uint8 and "nearest" in mode):
        raise NotImplementedError(f"interpolate: mode {mode!r} is not implemented for dtype "
                                  f"{input._data.dtype}; convert the input with .float()")
    # (antialias is kept only when set: pictures show the arguments that are not None)
    return Interpolate.apply(input, mode=mode, size=sizes, scale_factor=scales,
                             align_corners=align_corners, antialias=True if antialias else None)


def upsample(input, size=None, scale_factor=None, mode: str = "nearest", align_corners=None):
    """torch's deprecated name for interpolate (it warns, as torch does)."""
    warn("`nn.functional.upsample` is deprecated. Use `nn.functional.interpolate` instead.")
    return interpolate(input, size, scale_factor, mode, align_corners)


def upsample_nearest(input, size=None, scale_factor=None):
    """torch's deprecated interpolate(mode='nearest') (it warns, as torch does)."""
    warn("`nn.functional.upsample_nearest` is deprecated. Use `nn.functional.interpolate` "
         "instead.")
    return interpolate(input, size, scale_factor, mode="nearest")


def upsample_bilinear(input, size=None, scale_factor=None):
    """torch's deprecated interpolate(mode='bilinear', align_corners=True) (it warns)."""
    warn("`nn.functional.upsample_bilinear` is deprecated. Use `nn.functional.interpolate` "
         "instead.")
    return interpolate(input, size, scale_factor, mode="bilinear", align_corners=True)

