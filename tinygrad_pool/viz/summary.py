"""How the pictures write numbers, shapes and attributes, and summarise tensors too large to list.

    number(-0.0001, ".3f")            # '0.000': a value that rounds to zero has no sign
    shape_text((1, 3))                # '1×3' ('scalar' for a 0-d shape)
    plain(np.array([3, 7]))           # '[3, 7]'; plain(np.float32(64.0)) is '64'
    plain((64, 10), key="x_shape")    # '64×10': a shape, whatever holds it
    attribute_name("keepdims")        # 'keepdim': the op's attribute as PyTorch spells it
    plural(1, "channel")              # '1 channel'; plural(3, "channel") is '3 channels'
    s = summarise((64, 8, 26, 26), max_elements=64)
    s.kind, s.slices, s.more          # 'heat', [('[0, 0]', (0, 0))], 511
    limits(64)                        # (8, 16): entries a listed row, a listed column may have
    stats(a)                          # [('min', ..), ('mean', ..), ('max', ..), ('norm', ..)]
    ends(vector)                      # the first and last 3 entries, None where '…' stands
    heat_plane(plane, 32, marks)      # averaged in square blocks to at most 32 cells a side
    heat_colours(plane)               # '#rrggbb' per cell (white 0, red +, blue -), and the scale

One rule for the pictures of viz/ (draw_graph's values and gradients; fan_in writes its words
with it too; replay summarises the same way, a large plane by its statistics and a heat-map,
and can take these helpers over): a 2-D slice is listed number by number while it is small —
at most ``max_elements`` entries, ``limits(max_elements)`` entries a row and a column; a
longer vector shows its first and last EDGE entries; anything larger, the statistics of the
whole tensor and a heat-map. A tensor of at most ``max_elements`` entries shows its slices (up
to MAX_SLICES), a larger one its first. Pure NumPy: it imports neither the engine nor graphviz.
"""
from __future__ import annotations

import itertools
import math
import warnings
from typing import NamedTuple

import numpy as np

MAX_SLICES = 4   # 2-D slices listed per tensor; the rest are counted
ROW, COLUMN = 8, 16  # entries a listed row and a listed column may always have: a picture
#                      grows sideways with its rows, and value and grad stand side by side
EDGE = 3         # entries shown at each end of a vector too long to list
SHORT = 8        # an array attribute (a target, an index) with at most this many entries is
#                  written out; a longer one as its shape, dtype and its first and last entries
POSITIVE, NEGATIVE = (178, 24, 43), (33, 102, 172)  # heat-map red and blue (replay's)

# Attribute names as the engine's ops store them (NumPy's words) -> PyTorch's.
TORCH_NAMES = {"axis": "dim", "axes": "dim", "keepdims": "keepdim", "widths": "pad",
               "output_hw": "output_size"}


# ---- numbers, shapes, words ------------------------------------------------------------------
def number(value, precision=3) -> str:
    """``value`` rounded as ``precision`` says (an int: significant digits; a str: a format
    spec such as ".2f"); an integer or a bool as itself; never "-0"; nan and ±inf spelled."""
    if isinstance(value, (bool, np.bool_)):
        return str(bool(value))
    if isinstance(value, (int, np.integer)):
        return str(int(value))
    if isinstance(value, (complex, np.complexfloating)):
        value = complex(value)
        return f"{number(value.real, precision)}{'-' if value.imag < 0 else '+'}" \
               f"{number(abs(value.imag), precision)}j"
    value = float(value)
    if math.isnan(value):
        return "nan"
    if math.isinf(value):
        return "inf" if value > 0 else "-inf"
    text = format(value, precision) if isinstance(precision, str) else f"{value:.{precision}g}"
    try:
        if text.startswith("-") and float(text) == 0:
            text = text[1:]  # -0.0001 at 3 decimals is 0.000, not -0.000
    except ValueError:  # a spec whose text float() cannot read back (",.2f"): leave it
        pass
    return text


def shape_text(shape) -> str:
    """``1×3``; a 0-d shape is ``scalar``."""
    return "×".join(str(int(n)) for n in shape) if len(shape) else "scalar"


def plural(count: int, noun: str, many: str | None = None) -> str:
    """``1 channel``, ``3 channels``, ``1,000 channels`` (``many``: an irregular plural)."""
    return f"{count:,} {noun if count == 1 else many or noun + 's'}"


def attribute_name(name: str) -> str:
    """An op's attribute as PyTorch names the argument: ``axis`` is ``dim``, ``keepdims``
    is ``keepdim``; every other name is PyTorch's already."""
    return TORCH_NAMES.get(name, name)


def plain(value, key: str | None = None) -> str:
    """``value`` as a learner reads it, never as a Python or NumPy repr: numbers as numbers
    (``64``, not ``np.float32(64.0)``), shapes as ``1×3`` (``key``: the name it is stored
    under, one that says it is a shape), arrays as their values when short (``[3, 7]``) or as
    shape, dtype and first and last entries (``64 int64: [3, 7, 1, …, 0, 9]``), dtypes and
    classes by name, slices as ``1:3``, strings quoted as PyTorch's arguments are (``'mean'``)."""
    if key is not None and _is_shape(key, value):
        return shape_text(value)
    if value is None or value is Ellipsis:
        return "None" if value is None else "..."
    if isinstance(value, str):
        return repr(value)
    if isinstance(value, (bool, np.bool_, int, np.integer)):
        return number(value)
    if isinstance(value, (float, np.floating)):
        return number(value, "g")
    if isinstance(value, (complex, np.complexfloating)):
        return number(value, "g")
    if isinstance(value, np.dtype) or isinstance(value, type) and issubclass(value, np.generic):
        return np.dtype(value).name
    if isinstance(value, type):
        return value.__name__
    if isinstance(value, slice):
        text = ":".join("" if x is None else plain(x) for x in (value.start, value.stop, value.step))
        return text.rstrip(":") or ":" if value.step is None else text
    data = getattr(value, "_data", None)  # a Tensor (the engine's, or one like it)
    if isinstance(data, np.ndarray):
        value = data
    if isinstance(value, np.ndarray):
        return _array_text(value)
    if isinstance(value, (tuple, list)):
        if isinstance(value, tuple) and len(value) == 1:
            return plain(value[0])  # dim=(1,) reads as dim=1
        inner = ", ".join(plain(x) if not isinstance(x, (tuple, list)) else _bracketed(x)
                          for x in value)
        return f"({inner})" if isinstance(value, tuple) else f"[{inner}]"
    if isinstance(value, dict):
        return ", ".join(f"{attribute_name(k)}={plain(v, k)}" for k, v in value.items())
    return type(value).__name__  # an object (a generator, a function): what it is, not where


def _bracketed(items) -> str:
    """A sequence inside a sequence, in brackets: ``(1, [2, 3])``, never ``((``."""
    return "[" + ", ".join(plain(x) if not isinstance(x, (tuple, list)) else _bracketed(x)
                           for x in items) + "]"


def _is_shape(key: str, value) -> bool:
    """A tuple of ints stored under a name that says it is a shape (``shape``, ``x_shape``,
    ``out_hw``, ``output_size``; not ``kernel_size``, which PyTorch writes as a pair)."""
    return (isinstance(value, (tuple, list)) and all(
        isinstance(n, (int, np.integer)) and not isinstance(n, (bool, np.bool_)) for n in value)
        and (key in ("shape", "kernel", "output_size") or key.endswith(("_shape", "_hw"))))


def _array_text(a: np.ndarray) -> str:
    if a.ndim == 0:
        return plain(a.item())
    if a.size <= SHORT and a.ndim == 1:
        return "[" + ", ".join(plain(x) for x in a.tolist()) + "]"
    head = f"{shape_text(a.shape)} {a.dtype}"
    if a.ndim != 1:
        return head
    return head + ": [" + ", ".join("…" if x is None else plain(x) for x in ends(a.tolist())) + "]"


def ends(vector, edge: int = EDGE) -> list:
    """The first and last ``edge`` entries of a sequence, with None between them where
    entries are left out (the whole of it when it is short enough)."""
    vector = list(vector)
    return vector if len(vector) <= 2 * edge + 1 else vector[:edge] + [None] + vector[-edge:]


# ---- how much of a tensor to draw ------------------------------------------------------------
class Summary(NamedTuple):
    """How a tensor is drawn.

    kind    "grid": every entry of each slice listed; "ends": each slice a vector too long to
            list, its first and last EDGE entries shown; "heat": statistics of the whole tensor
            and a heat-map of its first slice; "empty": no entries
    slices  (caption, index) of the 2-D slices drawn: ``array[index]`` is one (caption "" for
            a tensor of at most 2 dimensions, else "[0, 1]": the indices of the axes longer than 1)
    more    how many slices are not drawn
    """
    kind: str
    slices: list
    more: int


def limits(max_elements: int) -> tuple:
    """(entries a listed row may have, entries a listed column may have): ROW and COLUMN, or
    more when max_elements asks for larger grids (the side of its square)."""
    side = math.isqrt(max_elements)
    return max(ROW, side), max(COLUMN, side)


def slices(shape: tuple, first: int | None = None) -> list:
    """(caption, index) of the 2-D slices of an array of ``shape`` (only the ``first`` few,
    when given: a batch has thousands): leading axes of length 1 are squeezed, so a 1×1×4×4
    tensor is one 4×4 grid; a tensor of at most 2 dimensions is one slice (index ``...``)."""
    if len(shape) <= 2:
        return [("", ...)]
    lead = shape[:-2]
    out = []
    for index in itertools.islice(np.ndindex(*lead), first):
        caption = ", ".join(str(i) for i, n in zip(index, lead) if n > 1)
        out.append((f"[{caption}]" if caption else "", index))
    return out


def as_2d(a: np.ndarray) -> np.ndarray:
    """A slice as rows and columns: a scalar is 1×1, a vector one row."""
    return a.reshape(1, 1) if a.ndim == 0 else a.reshape(1, -1) if a.ndim == 1 else a


def summarise(shape: tuple, max_elements: int = 64) -> Summary:
    """How to draw a tensor of ``shape``: a slice is listed while it has at most
    ``max_elements`` entries and ``limits(max_elements)`` a row and a column; a longer vector
    (one row or one column) by its ends; any other slice by a heat-map. A tensor of at most
    ``max_elements`` entries shows up to MAX_SLICES slices, a larger one its first."""
    shape = tuple(int(n) for n in shape)
    if 0 in shape:
        return Summary("empty", [], 0)
    count = math.prod(shape[:-2])  # slices
    rows, columns = (shape[-2:] if len(shape) >= 2 else (1,) + shape if shape else (1, 1))
    size, (per_row, per_column) = rows * columns, limits(max_elements)
    # A small tensor is drawn whole (its slices, up to MAX_SLICES); of a larger one, the first
    # slice (a batch's first image, a kernel's first plane): the picture stays as small.
    shown = MAX_SLICES if size * count <= max_elements else 1
    if size <= max_elements and columns <= per_row and rows <= per_column:
        kind = "grid"
    elif min(rows, columns) == 1:
        kind = "ends"
    else:
        kind, shown = "heat", 1
    return Summary(kind, slices(shape, shown), max(0, count - shown))


def stats(array: np.ndarray) -> list:
    """[("min", ..), ("mean", ..), ("max", ..), ("norm", ..)] of an array, in float64 (a bool
    array as 0 and 1); empty for an empty array. NaN and inf propagate, as they should."""
    with np.errstate(all="ignore"):
        a = np.asarray(array).astype(np.float64)
        return [("min", a.min()), ("mean", a.mean()), ("max", a.max()),
                ("norm", np.sqrt((a * a).sum()))] if a.size else []


# ---- heat-maps -------------------------------------------------------------------------------
def block_size(shape: tuple, cells: int) -> int:
    """The block side that brings a plane to at most ``cells`` a side: 1 (every cell drawn)
    when it fits; else the smallest that divides every longer side evenly, if one is at most
    twice the least possible, so that blocks tile the plane as pooling windows do."""
    least = max(1, math.ceil(max(shape) / cells))
    for block in range(least, 2 * least + 1):
        if all(n % block == 0 or n < block for n in shape):
            return block
    return least


def heat_plane(plane: np.ndarray, cells: int, marks=None) -> tuple:
    """(the plane averaged in square blocks to at most ``cells`` a side, its ``marks`` — an int
    mask, 0 none, 1 tied, 2 argmax — likewise, a block taking the strongest mark inside it,
    and the block side)."""
    plane = as_2d(np.asarray(plane)).astype(np.float64)
    block = block_size(plane.shape, cells)
    if block == 1:
        return plane, marks, 1
    h, w = (math.ceil(n / block) * block for n in plane.shape)
    padded = np.full((h, w), np.nan)
    padded[:plane.shape[0], :plane.shape[1]] = plane
    with warnings.catch_warnings():  # a block of nan values averages to nan, as it should
        warnings.simplefilter("ignore", RuntimeWarning)
        small = np.nanmean(padded.reshape(h // block, block, w // block, block), axis=(1, 3))
    if marks is not None:
        padded_marks = np.zeros((h, w), dtype=marks.dtype)
        padded_marks[:plane.shape[0], :plane.shape[1]] = as_2d(marks)
        marks = padded_marks.reshape(h // block, block, w // block, block).max(axis=(1, 3))
    return small, marks, block


def heat_colours(plane: np.ndarray) -> tuple:
    """Each cell's colour on a diverging scale: white at 0, red for the plane's largest
    positive |value|, blue for negative; nan is black. Returns (colours, scale)."""
    plane = np.asarray(plane, dtype=np.float64)
    finite = plane[np.isfinite(plane)]
    scale = float(np.abs(finite).max()) if finite.size else 0.0
    with np.errstate(all="ignore"):
        t = np.clip(plane / scale, -1, 1) if scale > 0 else np.zeros_like(plane)
    t = np.where(np.isinf(plane), np.sign(plane), t)
    mag = np.abs(t)[..., None]
    rgb = 255 * (1 - mag) + np.where(t[..., None] >= 0, np.array(POSITIVE), np.array(NEGATIVE)) * mag
    rgb = np.where(np.isnan(plane)[..., None], 0, np.rint(rgb)).astype(int)
    return np.array([[f"#{r:02x}{g:02x}{b:02x}" for r, g, b in row] for row in rgb]), scale
