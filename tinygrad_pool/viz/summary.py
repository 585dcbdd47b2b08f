"""How the pictures write numbers, shapes and attributes, and summarise tensors too large to list.

    number(-0.0001, ".3f")            # '0.000': a value that rounds to zero has no sign
    shape_text((1, 3))                # '1×3' ('scalar' for a 0-d shape)
    plain(np.array([3, 7]))           # '[3, 7]'; plain(np.float32(64.0)) is '64'
    plain((64, 10), key="x_shape")    # '64×10': a shape, whatever holds it
    attribute_name("keepdims")        # 'keepdim': the op's attribute as PyTorch spells it
    arguments({"axis": (1,), "keepdims": True})  # ['dim=1', 'keepdim=True']
    plural(1, "channel")              # '1 channel'; plural(3, "tap", verb="read") is '3 taps read'
    s = summarise((64, 8, 26, 26), max_elements=64)
    s.kind, s.slices, s.more          # 'heat', [('[0, 0]', (0, 0))], 511
    slice_kind((3, 20), 64)           # 'heat': how one 2-D slice is drawn (summarise's rule)
    limits(64)                        # (8, 16): entries a listed row, a listed column may have
    stats(a)                          # [('min', ..), ('mean', ..), ('max', ..), ('norm', ..)]
    ends(vector)                      # the first and last 3 entries, None where '…' stands
    heat_plane(plane, 32, marks)      # averaged in square blocks to at most 32 cells a side
    heat_colours(plane)               # '#rrggbb' per cell (white 0, red +, blue -), and the scale

draw_graph, replay and fan_in write their numbers, words and arguments with these helpers, and
take the colours that mean the same in every picture from PALETTE. One rule says how much of a
tensor is drawn (replay applies it with its page's limits): a 2-D slice is listed number by
number while it is small — at most ``max_elements`` entries, ``limits(max_elements)`` entries
a row and a column; a longer vector shows its first and last EDGE entries; anything larger,
the statistics of the whole tensor and a heat-map. A tensor of at most ``max_elements``
entries shows its slices (up to MAX_SLICES), a larger one its first. Pure NumPy: it imports
neither the engine nor graphviz.
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
POSITIVE, NEGATIVE = (178, 24, 43), (33, 102, 172)  # heat-map red and blue
# What a colour means in every picture (draw_graph's STYLE and replay's COLOURS take these).
PALETTE = {"parameter": "#b9e3a5",    # leaf that requires grad
           "constant": "#e4e4e4",     # leaf without grad
           "op": "#ddd5f3",           # an op's Node
           "argmax": "#7fb0ff",       # the article's "blue circles": each pooling window's max
           "argmax_edge": "#1747b5",
           "tied": "#d5e5ff"}         # another cell equal to its window's max
SMALL = '<FONT POINT-SIZE="9">{}</FONT>'  # small text in a Graphviz HTML-like label

# Attribute names as the engine's ops store them (NumPy's words) -> PyTorch's.
TORCH_NAMES = {"axis": "dim", "axes": "dim", "keepdims": "keepdim", "widths": "pad",
               "output_hw": "output_size", "low": "min", "high": "max"}
# Geometry given as a pair (kernel_size=(2, 2)) that PyTorch accepts as one int when both
# halves are equal, and writes so in its modules' reprs: written as 2.
PAIRS = ("kernel_size", "stride", "padding", "dilation", "output_padding")
# Pooling and convolution arguments in the order PyTorch's signatures list them.
ORDER = ("kernel_size", "stride", "padding", "output_padding", "dilation", "groups",
         "ceil_mode", "ties")
# What an op keeps for itself, not an argument: its output's shape (which the output shows;
# an adaptive pool's is its output_size, shown), a dropout mask's shape, a random generator.
HIDDEN = ("out_hw", "mask_shape", "generator")


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


def plural(count: int, noun: str, many: str | None = None, verb: str = "") -> str:
    """``1 channel``, ``3 channels``, ``1,000 channels`` (``many``: an irregular plural); with
    a ``verb``, its agreeing form: ``1 tap reads``, ``3 taps read``."""
    text = f"{count:,} {noun if count == 1 else many or noun + 's'}"
    return f"{text} {verb}{'s' if count == 1 else ''}" if verb else text


def attribute_name(name: str) -> str:
    """An op's attribute as PyTorch names the argument: ``axis`` is ``dim``, ``keepdims``
    is ``keepdim``; every other name is PyTorch's already."""
    return TORCH_NAMES.get(name, name)


def plain(value, key: str | None = None, precision="g") -> str:
    """``value`` as a learner reads it, never as a Python or NumPy repr: numbers as numbers
    (``64``, not ``np.float32(64.0)``; a float rounded as ``precision`` says, see ``number``),
    shapes as ``1×3`` (``key``: the name it is stored under, one that says it is a shape),
    arrays as their values when short (``[3, 7]``) or as shape, dtype and first and last
    entries (``64 int64: [3, 7, 1, …, 0, 9]``), dtypes and classes by name, slices as ``1:3``,
    strings quoted as PyTorch's arguments are (``'mean'``), a list as Python writes it."""
    if key is not None and _is_shape(key, value):
        return shape_text(value)
    if value is None or value is Ellipsis:
        return "None" if value is None else "..."
    if isinstance(value, str):
        return repr(value)
    if isinstance(value, (bool, np.bool_, int, np.integer)):
        return number(value)
    if isinstance(value, (float, np.floating, complex, np.complexfloating)):
        return number(value, precision)
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
        return _array_text(value, precision)
    if isinstance(value, (tuple, list)):
        if isinstance(value, tuple) and len(value) == 1:
            return plain(value[0], precision=precision)  # dim=(1,) reads as dim=1
        # a list's items as themselves ([(0, 48), (48, 96)]); a tuple's sequences in brackets
        inner = ", ".join(_bracketed(x, precision) if isinstance(x, (tuple, list))
                          and isinstance(value, tuple) else plain(x, precision=precision)
                          for x in value)
        return f"({inner})" if isinstance(value, tuple) else f"[{inner}]"
    if isinstance(value, dict):
        return ", ".join(f"{attribute_name(k)}={plain(v, k, precision)}" for k, v in value.items())
    return type(value).__name__  # an object (a generator, a function): what it is, not where


def _bracketed(items, precision="g") -> str:
    """A sequence inside a tuple, in brackets: ``(1, [2, 3])``, never ``((``."""
    return "[" + ", ".join(plain(x, precision=precision) if not isinstance(x, (tuple, list))
                           else _bracketed(x, precision) for x in items) + "]"


def _is_shape(key: str, value) -> bool:
    """A tuple of ints stored under a name that says it is a shape (``shape``, ``x_shape``,
    ``out_hw``, ``output_size``; not ``kernel_size``, which PyTorch writes as a pair)."""
    return (isinstance(value, (tuple, list)) and all(
        isinstance(n, (int, np.integer)) and not isinstance(n, (bool, np.bool_)) for n in value)
        and (key in ("shape", "kernel", "output_size") or key.endswith(("_shape", "_hw"))))


def _array_text(a: np.ndarray, precision="g") -> str:
    if a.ndim == 0:
        return plain(a.item(), precision=precision)
    if a.size <= SHORT and a.ndim == 1:
        return "[" + ", ".join(plain(x, precision=precision) for x in a.tolist()) + "]"
    head = f"{shape_text(a.shape)} {a.dtype}"
    if a.ndim != 1:
        return head
    return head + ": [" + ", ".join("…" if x is None else plain(x, precision=precision)
                                    for x in ends(a.tolist())) + "]"


def argument(key: str, value, op=None, precision="g") -> str:
    """An op's argument as PyTorch's would read (see ``plain``): a pair with equal halves once
    (``kernel_size=2``), a padding of an op that keeps it per side (``op.padding_per_side``:
    (top, bottom, left, right), a convolution's) as PyTorch's (h, w), a padding of widths per
    dim as F.pad's ``pad`` (last dim first), an index as it was written between the brackets
    (``[:, 3:9]``); at most 48 characters. ``op``: the node (or its class) whose argument it is."""
    if key == "padding" and getattr(op, "padding_per_side", False) \
            and isinstance(value, tuple) and len(value) == 4 and value[0] == value[1] \
            and value[2] == value[3]:
        value = (value[0], value[2])
    if key in PAIRS and isinstance(value, tuple) and value and len(set(value)) == 1 and all(
            isinstance(x, (int, np.integer)) for x in value):
        return plain(value[0])
    if key == "widths" and isinstance(value, tuple) and all(
            isinstance(w, tuple) and len(w) == 2 for w in value):
        pad = [n for before, after in reversed(value) for n in (before, after)]
        while len(pad) > 2 and pad[-2:] == [0, 0]:
            pad = pad[:-2]  # F.pad lists only the trailing dims it pads
        value = tuple(pad)
    if key == "index":  # x[0, :, 1:3], x[[0, 2]]
        return "[" + ", ".join(plain(x, precision=precision)
                               for x in (value if isinstance(value, tuple) else (value,))) + "]"
    if key == "path" and isinstance(value, tuple) and all(
            isinstance(step, tuple) and len(step) == 2 and isinstance(step[1], dict) for step in value):
        # the view an in-place write went through: Index[1:3, 1:3] → Reshape(shape=4)
        return " → ".join(
            getattr(fn, "__name__", plain(fn)) + (argument("index", attrs["index"])
                                                   if set(attrs) == {"index"} else f"({plain(attrs)})")
            for fn, attrs in value)
    text = plain(value, key, precision)
    return text if len(text) <= 48 else text[:47] + "…"


def arguments(attrs: dict, op=None, precision="g") -> list:
    """``name=value`` for each argument of an op (``attrs``; ``op``: the node, or its class),
    named as PyTorch names the argument (``dim``, ``keepdim``), in PyTorch's order for pooling
    and convolution, leaving out what the op keeps for itself (HIDDEN) and arguments that are
    None. The op says where it differs: ``argument_names`` maps an attribute to the argument
    PyTorch has in its place (an adaptive pool's ``out_hw`` is its ``output_size``), and
    ``equation_attrs`` names the subscripts PyTorch writes as one equation (einsum's)."""
    shown = {k: v for k, v in attrs.items() if k not in HIDDEN and v is not None}
    for name, torch_name in getattr(op, "argument_names", {}).items():
        if name in attrs:  # (shown under PyTorch's name, even where HIDDEN hides the attribute)
            shown.pop(name, None)
            shown[torch_name] = attrs[name]
    joined = getattr(op, "equation_attrs", None)
    if joined and set(joined) <= set(shown):  # "ij,jk->ik"
        inputs, output = (shown.pop(name) for name in joined)
        shown = {"equation": ",".join(inputs) + "->" + output, **shown}
    keys = sorted(shown, key=lambda k: ORDER.index(k) if k in ORDER else len(ORDER))
    return [f"{attribute_name(k)}={argument(k, shown[k], op, precision)}" for k in keys]


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


def slice_kind(shape: tuple, max_elements: int = 64, limit: tuple | None = None,
               column_ends: bool = True) -> str:
    """How one 2-D slice of ``shape`` (rows, columns) is drawn: "grid" (every entry listed)
    while it has at most ``max_elements`` entries and ``limit`` = (entries a row, entries a
    column; ``limits(max_elements)`` unless given); else "ends" for a vector, its first and
    last entries (a row, or a column too unless ``column_ends=False``); else "heat"."""
    rows, columns = shape
    per_row, per_column = limit or limits(max_elements)
    if rows * columns <= max_elements and columns <= per_row and rows <= per_column:
        return "grid"
    return "ends" if rows == 1 or column_ends and columns == 1 else "heat"


def summarise(shape: tuple, max_elements: int = 64) -> Summary:
    """How to draw a tensor of ``shape``: each slice as ``slice_kind`` says. A tensor of at
    most ``max_elements`` entries shows up to MAX_SLICES slices, a larger one (or a heat-map)
    its first."""
    shape = tuple(int(n) for n in shape)
    if 0 in shape:
        return Summary("empty", [], 0)
    count = math.prod(shape[:-2])  # slices
    rows, columns = (shape[-2:] if len(shape) >= 2 else (1,) + shape if shape else (1, 1))
    kind = slice_kind((rows, columns), max_elements)
    # A small tensor is drawn whole (its slices, up to MAX_SLICES); of a larger one, the first
    # slice (a batch's first image, a kernel's first plane): the picture stays as small.
    shown = MAX_SLICES if rows * columns * count <= max_elements and kind != "heat" else 1
    return Summary(kind, slices(shape, shown), max(0, count - shown))


def stats(array: np.ndarray) -> list:
    """[("min", ..), ("mean", ..), ("max", ..), ("norm", ..)] of an array: min and max of its
    own dtype (an integer stays one; a bool array as 0 and 1), mean and 2-norm in float64;
    empty for an empty array. NaN and inf propagate, as they should."""
    a = np.asarray(array)
    if not a.size:
        return []
    a = a.astype(np.int8) if a.dtype.kind == "b" else a
    with np.errstate(all="ignore"):
        wide = a.astype(np.float64)
        return [("min", a.min()), ("mean", wide.mean()), ("max", a.max()),
                ("norm", np.sqrt((wide * wide).sum()))]


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
