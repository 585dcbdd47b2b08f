"""Shape ops: they move elements without changing them, so backward moves the gradient back.

Reshape, permute, expand and basic indexing return views (``is_view``): the output shares the
input's memory and version counter, as in PyTorch — and so do squeeze, unsqueeze, unflatten,
view_as (reshapes), t and mT (permutations) and narrow (a basic slice), which are those same
Functions with other arguments. Flip, repeat, roll and pad copy. Writes into a tensor's memory
are ops too (copy_, fill_, ``t[index] = value``): recorded like any other op when they need a
gradient.

No op here saves an array for backward: each needs only a shape, a dtype, dims or the index,
which are plain attributes or the op's own arguments (``ctx.attrs``, kept for view replay).

Argument errors follow torch's types: IndexError for a dim out of range, RuntimeError for sizes
that do not fit, TypeError for an argument of the wrong kind.
"""
import math
import operator
import warnings

import numpy as np

from ..fast import views
from ..engine import OMITTED, Node, Tensor, unbroadcast
from ..args import DimensionError
from ..args import check_dim, plural


def is_int(value) -> bool:
    """A Python or NumPy integer (bool is not one here: torch refuses ``unsqueeze(True)``)."""
    return isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_))


def wrap_dim(op: str, dim, ndim: int, name: str = "dim") -> int:
    """A dimension as a non-negative index: torch's rule, where -1 is the last dimension and a
    0-d tensor takes dims in [-1, 0] as if it had one (``sum(0)`` of a scalar works)."""
    if type(dim) is not int and not is_int(dim):  # (the type test first: this runs per op)
        raise TypeError(f"{op}: {name} must be an int, got {type(dim).__name__} ({dim!r})")
    n = max(ndim, 1)
    if not -n <= dim < n:
        raise DimensionError(f"{op}: {name}={dim} is out of range for the input (Dimension out "
                             f"of range (expected to be in range of [{-n}, {n - 1}], but got "
                             f"{dim}))")
    return int(dim) % n


def normalize_dims(op: str, ndim: int, dims, distinct: bool = False, name: str = "dims") -> tuple:
    """One dim or a sequence of them, wrapped; ``distinct``: refuse one named twice (flip)."""
    if not isinstance(dims, (tuple, list)):
        if not is_int(dims):
            raise TypeError(f"{op}: {name} must be an int or a tuple of ints, got "
                            f"{type(dims).__name__} ({dims!r})")
        dims = (dims,)
    wrapped = tuple(wrap_dim(op, d, ndim, name) for d in dims)
    if distinct and len(set(wrapped)) != len(wrapped):
        repeated = next(d for d in wrapped if wrapped.count(d) > 1)
        raise RuntimeError(f"{op}: dim {repeated} appears multiple times in the list of {name} "
                           f"{tuple(dims)}")
    return wrapped


def int_sizes(op: str, name: str, sizes) -> tuple:
    """Sizes given as varargs ``f(2, 3)`` or one sequence ``f((2, 3))``, checked to be ints.
    ``sizes`` is the varargs tuple as received: a caller with a shape in hand passes
    ``(shape,)``, since ``f()`` with nothing is torch's TypeError (a 0-d shape is ``f(())``)."""
    if not sizes:
        raise TypeError(f'{op}() missing 1 required positional arguments: "{name}" (the '
                        f'{name} of a 0-d tensor is spelled {op}(()))')
    if len(sizes) == 1 and isinstance(sizes[0], (tuple, list)):
        sizes = sizes[0]
    plain = type(sizes) is tuple  # a tuple of Python ints, the common case, is returned as is
    for n in sizes:
        if type(n) is not int:
            if not is_int(n):
                raise TypeError(f"{op}: {name} must be a tuple of ints, got {tuple(sizes)} (an "
                                f"element of type {type(n).__name__})")
            plain = False
    return sizes if plain else tuple(int(n) for n in sizes)


def keyword_sizes(op: str, name: str, sizes: tuple, given) -> tuple:
    """A method's varargs ``sizes``, or the one sequence torch also takes by keyword (``given``:
    ``x.reshape(shape=(6, 4))``, None when not given), in the varargs' form ``(sequence,)``.
    Both at once, or a keyword value that is no sequence, is torch's TypeError."""
    if given is None:
        return sizes
    if sizes:
        raise TypeError(f"{op}() got multiple values for argument '{name}'")
    if not isinstance(given, (tuple, list)):
        raise TypeError(f"{op}(): argument '{name}' must be tuple of ints, not "
                        f"{type(given).__name__}")
    return (given,)


def resolve_shape(op: str, old_shape: tuple, shape, name: str = "shape") -> tuple:
    """Accept reshape(2, 3) and reshape((2, 3)) (``shape``: the varargs, see ``int_sizes``);
    fill in a single -1."""
    shape = int_sizes(op, name, shape)
    size = math.prod(old_shape)
    if min(shape, default=0) >= 0 and math.prod(shape) == size:  # no -1 and the sizes fit
        return shape
    if shape.count(-1) > 1 or any(n < -1 for n in shape):
        raise RuntimeError(f"{op}: invalid {name} {shape}: at most one -1 (only one dimension "
                           f"can be inferred) and no other negative sizes")
    known = math.prod(n for n in shape if n != -1)
    if -1 in shape:
        if known == 0 or size % known:
            raise RuntimeError(f"{op}: {name} {shape} is invalid for input of shape "
                               f"{tuple(old_shape)} ({plural(size, 'element')})")
        shape = tuple(size // known if n == -1 else n for n in shape)
    elif known != size:
        raise RuntimeError(f"{op}: {name} {shape} ({plural(known, 'element')}) is invalid for "
                           f"input of shape {tuple(old_shape)} ({plural(size, 'element')})")
    return shape


def swap_dims(ndim: int, dim0, dim1) -> tuple:
    if dim0 is None and dim1 is None:
        return tuple(reversed(range(ndim)))
    if dim0 is None or dim1 is None:
        raise TypeError("transpose: give both dimensions to swap (dim0 and dim1), or none to "
                        "reverse them all")
    dim0, dim1 = wrap_dim("transpose", dim0, ndim, "dim0"), wrap_dim("transpose", dim1, ndim, "dim1")
    dims = list(range(ndim))
    if ndim:  # (a 0-d tensor's only "dimension" is 0: nothing to swap)
        dims[dim0], dims[dim1] = dim1, dim0
    return tuple(dims)


def check_permutation(ndim: int, dims) -> tuple:
    """permute(1, 0) or permute((1, 0)) (``dims``: the varargs) → the dims, wrapped."""
    if not dims:  # (a 0-d tensor's permutation is spelled permute(()))
        raise TypeError('permute() missing 1 required positional arguments: "dims" (the dims '
                        'of a 0-d tensor are spelled permute(()))')
    if len(dims) == 1 and isinstance(dims[0], (tuple, list)):
        dims = dims[0]
    if not all(is_int(d) for d in dims):
        raise TypeError(f"permute: dims must be a tuple of ints, got {tuple(dims)}")
    if len(dims) != ndim:
        raise RuntimeError(f"permute: dims {tuple(dims)} must name each of the input's "
                           f"{plural(ndim, 'dim')} once (got {plural(len(dims), 'dim')})")
    normalized = normalize_dims("permute", ndim, dims)
    if sorted(normalized) != list(range(ndim)):
        raise RuntimeError(f"permute: dims {tuple(dims)} are not a permutation of the input's "
                           f"{plural(ndim, 'dim')} (duplicate dims are not allowed)")
    return normalized


def flattened_shape(shape: tuple, start_dim: int, end_dim: int) -> tuple:
    start = wrap_dim("flatten", start_dim, len(shape), "start_dim")
    end = wrap_dim("flatten", end_dim, len(shape), "end_dim")
    if not shape:
        return (1,)
    if start > end:
        raise RuntimeError(f"flatten: start_dim {start_dim} comes after end_dim {end_dim} "
                           f"(shape {tuple(shape)})")
    return tuple(shape[:start]) + (math.prod(shape[start:end + 1]),) + tuple(shape[end + 1:])


# ---- indexing: torch's reading of an index, as NumPy indices ------------------------------
# Ints, slices, None and one ``...`` index alike in torch and NumPy (basic indexing, a view),
# and so do integer arrays and bool masks among slices. Torch differs where an int, None, ``...``
# or a bool stands beside an array: it applies those first, as a view (an int is a select, not
# an array of one element as NumPy counts it), then indexes that view with the arrays. Such an
# index becomes a TwoStepIndex; the ops below read, write and scatter in its two steps.
_FULL = slice(None)
_AT_ZERO, _AT_NOTHING = np.zeros(1, np.intp), np.zeros(0, np.intp)  # x[True], x[False]
_NUMBERS = frozenset((int, bool, float))
_VALID = "only integers, slices (`:`), ellipsis (`...`), None and long or byte Variables are " \
         "valid indices"


def normalize_index(index):
    """``input[index]``'s index, read with torch's rules, for Index, IndexScatter and IndexPut:
    a basic index or an advanced one (integer arrays, bool masks, slices) as NumPy takes it, or
    a TwoStepIndex. A Tensor part becomes its array (a 0-d integer one an int: torch's select,
    a view; a 0-d bool one a bool); a list, tuple, range or array inside the index an integer
    array or a bool mask; a list holding sequences, slices, None or ``...`` is read as a tuple,
    as torch 2.13 does (with its deprecation warning). Refused as by torch: a step that is not
    positive (ValueError); a float, or a tensor of floats or of 8- or 16-bit integers with dims
    (IndexError)."""
    kind = type(index)
    if kind is int or index is None or index is Ellipsis:  # (the common cases first: cheap)
        return index
    if kind is slice:
        if index.step is not None and index.step <= 0:
            _refuse_step(index)
        return index
    if kind is tuple:
        ellipses = 0
        for part in index:  # a basic index comes back as it is
            kind = type(part)
            if kind is int or part is None:
                continue
            if kind is slice:
                if part.step is not None and part.step <= 0:
                    _refuse_step(part)
                continue
            if part is Ellipsis:
                ellipses += 1
                continue
            break
        else:
            if ellipses < 2:
                return index
        return _torch_index(index)
    if isinstance(index, Tensor):  # one tensor: an index array or mask, or an int (a select)
        part = _tensor_part(index._data)[0]
        return part if type(part) is not bool else TwoStepIndex((part,), 0, True)
    if kind is list and set(map(type, index)) <= _NUMBERS:  # the common list: one index array
        return _index_array(np.asarray(index), index)
    if isinstance(index, list) and _reads_as_tuple(index):
        warnings.warn("index: using a non-tuple sequence for multidimensional indexing is "
                      "deprecated; torch 2.13 reads it as a tuple, as done here, and will read it "
                      "as one tensor index: write x[tuple(seq)] (or x[tensor(seq)])",
                      UserWarning, stacklevel=3)
        return _torch_index(tuple(index))
    return _torch_index(tuple(index) if isinstance(index, tuple) else (index,))


def _refuse_step(part: slice):
    raise ValueError(f"index: step must be greater than zero, got slice {part} (flip() "
                     f"reverses a tensor)")


def _reads_as_tuple(index: list) -> bool:
    """torch's test for a list used as the whole index (NumPy's old rule): a short list that holds
    a sequence, a tensor, a slice, None or ``...`` is a tuple of indices."""
    return len(index) < 32 and any(
        isinstance(part, (Tensor, np.ndarray, list, tuple, range, str, slice))
        or part is None or part is Ellipsis for part in index)


def _torch_index(parts: tuple):
    """An index that is not plainly basic, part by part: see ``normalize_index``."""
    converted, specified = [], 0  # specified: the dims torch counts the parts as naming
    # arrays (and bools, torch's arrays of one place); the parts torch applies before them
    arrays = beside = ellipses = 0
    for part in parts:
        part, dims = _index_part(part)
        converted.append(part)
        specified += dims
        kind = type(part)
        if kind is np.ndarray:
            arrays += 1
        elif kind is bool:
            arrays += 1
            beside += 1
        elif kind is not slice:  # an int, None or ...
            beside += 1
            ellipses += part is Ellipsis
    if arrays and beside or ellipses > 1:
        return TwoStepIndex(tuple(converted), specified, arrays > 0)
    return converted[0] if len(converted) == 1 else tuple(converted)


def _index_part(part) -> tuple:
    """One part of an index as torch reads it: (the part for NumPy, the dims torch counts it as
    naming; None, ``...`` and a bool name none, a bool tensor its ndim, anything else one)."""
    kind = type(part)
    if kind is int:  # (a bool is not: its type is bool)
        return part, 1
    if kind is slice:
        if part.step is not None and part.step <= 0:
            _refuse_step(part)
        return part, 1
    if part is None or part is Ellipsis or kind is bool:
        return part, 0
    if isinstance(part, Tensor):
        return _tensor_part(part._data)
    if isinstance(part, np.ndarray):  # torch reads an array as a sequence
        if part.ndim == 0:
            return (bool(part) if part.dtype == bool else int(part)), int(part.dtype != bool)
        return _sequence_part(part), 1
    if isinstance(part, (list, tuple, range)):
        return _sequence_part(part), 1
    if isinstance(part, str):
        raise TypeError(f"index: {part!r} of type str is no index (input[index] takes ints, "
                        f"slices, None, ..., and integer or bool tensors)")
    if not isinstance(part, np.bool_):  # (NumPy's bool has no __index__ in torch's eyes)
        try:
            return operator.index(part), 1
        except TypeError:
            pass
    module, name = type(part).__module__, type(part).__name__
    got = name if module == "builtins" else f"{module}.{name}"
    raise IndexError(f"index: {_VALID} (got {got})")


def _tensor_part(array: np.ndarray) -> tuple:
    """A Tensor in an index: an int64 or int32 index array, a bool mask (uint8 too, deprecated
    in torch), or (0-d) an int (torch's select, a view) or a bool."""
    dtype = array.dtype
    if dtype.kind == "i" and (dtype.itemsize >= 4 or array.ndim == 0):
        return (array if array.ndim else int(array)), 1
    if dtype.kind == "u" and dtype.itemsize == 1:
        warnings.warn("index: indexing with dtype uint8 is now deprecated, please use a dtype "
                      "bool instead", UserWarning, stacklevel=4)
        array, dtype = array.astype(bool), np.dtype(bool)
    if dtype.kind == "b":
        return (array if array.ndim else bool(array)), array.ndim
    raise IndexError(f"index: tensors used as indices must be long, int, byte or bool tensors, "
                     f"got one of dtype {dtype}")


def _sequence_part(sequence) -> np.ndarray:
    """A list, tuple, range or array inside an index, as torch's index tensor from it."""
    if type(sequence) is range:
        return np.arange(sequence.start, sequence.stop, sequence.step)
    if isinstance(sequence, np.ndarray):
        return _index_array(sequence, sequence)
    try:
        array = np.asarray(sequence if set(map(type, sequence)) <= _NUMBERS else _plain(sequence))
    except ValueError as error:  # a ragged list: torch's ValueError too
        raise ValueError(f"index: {error}") from None
    return _index_array(array, sequence)


def _index_array(array: np.ndarray, given) -> np.ndarray:
    """An index tensor made from ``given`` (a list, tuple or array), as torch makes it: a bool mask
    if its elements are bools (or uint8), else int64 (floats truncated, as torch does)."""
    kind = array.dtype.kind
    if kind == "b":
        return array
    if array.dtype == np.uint8:  # (an array, or uint8 tensors in a list) a mask, as in torch
        return _tensor_part(array)[0]
    if kind in "iuf":
        return array.astype(np.int64, copy=False)
    if kind in "US":
        raise TypeError(f"index: new(): invalid data type 'str' (an index list holds {given!r})")
    if kind == "c":
        raise TypeError(f"index: 'complex' object cannot be interpreted as an integer (an "
                        f"index list holds {given!r})")
    raise RuntimeError(f"index: could not infer the dtype of the index list {given!r} (it "
                       f"holds something other than numbers)")


def _plain(sequence) -> list:
    """A nested list with its Tensors as 0-d arrays: torch reads a one-element tensor inside an
    index list as its value."""
    plain = []
    for element in sequence:
        if isinstance(element, Tensor):
            if element._data.size != 1:
                raise TypeError(f"index: only integer tensors of a single element can be "
                                f"converted to an index (an index list holds a tensor of "
                                f"shape {element._data.shape})")
            element = element._data.reshape(())
        elif isinstance(element, (list, tuple, range)):
            element = _plain(element)
        plain.append(element)
    return plain


class TwoStepIndex:
    """An index torch reads in two steps, where NumPy's one step would differ: its ints, slices
    and None first (a bool as a new dim of length 1), giving a view — then its arrays, on the
    dims of that view. So ``x[1, 0:2, idx]`` is ``x[1][0:2, idx]`` (NumPy would count the 1 as
    an array, apart from idx, and put the result's dims first), and ``x[idx, ..., idx2]`` keeps
    the dims in place where the ``...`` stands for none. Several ``...`` are allowed, as in
    torch: each stands for the dims the other parts do not name."""

    __slots__ = ("parts", "specified", "advanced", "_ndim", "_steps")

    def __init__(self, parts: tuple, specified: int, advanced: bool):
        self.parts, self.specified, self.advanced = parts, specified, advanced
        self._ndim = self._steps = None  # the last split: an op reads it forward and backward

    def steps(self, ndim: int) -> tuple:
        """(basic, advanced) for an input of ``ndim`` dims: ``x[index]`` is
        ``x[basic][advanced]``; basic always gives a view, advanced (None if the index has no
        arrays) holds only integer arrays, bool masks and full slices, read as NumPy does."""
        if ndim != self._ndim:
            self._steps, self._ndim = self._split(ndim), ndim
        return self._steps

    def _split(self, ndim: int) -> tuple:
        if self.specified > ndim:
            raise IndexError(f"too many indices for tensor of dimension {ndim}")
        each_ellipsis = (_FULL,) * (ndim - self.specified)
        basic, advanced = [], []
        for part in self.parts:
            kind = type(part)
            if part is Ellipsis:
                basic += each_ellipsis
                advanced += each_ellipsis
            elif kind is slice or part is None:
                basic.append(part)
                advanced.append(_FULL)
            elif kind is bool:  # a new dim of length 1, read at [0] (True) or at nothing
                basic.append(None)
                advanced.append(_AT_ZERO if part else _AT_NOTHING)
            elif kind is np.ndarray:
                basic += (_FULL,) * (part.ndim if part.dtype == bool else 1)
                advanced.append(part)
            else:  # an int: torch's select, the dim is gone
                basic.append(part)
        # (trailing full slices select nothing: torch lets several ... run past the last dim)
        while basic and basic[-1] is _FULL:
            basic.pop()
        while advanced and advanced[-1] is _FULL:
            advanced.pop()
        # ... at the end: a view even where every dim is selected (NumPy would give a scalar)
        return tuple(basic) + (Ellipsis,), (tuple(advanced) if self.advanced else None)

    def first_step(self, x: np.ndarray) -> tuple:
        """(the view of x that the ints, slices, None and bools pick, the index of the second
        step into it: None where there are no arrays)."""
        basic, advanced = self.steps(x.ndim)
        return x[basic], advanced

    def read(self, x: np.ndarray) -> np.ndarray:
        view, advanced = self.first_step(x)
        return view if advanced is None else view[advanced]

    def __repr__(self) -> str:
        def part(p):
            if isinstance(p, np.ndarray):
                return f"{'mask' if p.dtype == bool else 'array'} {list(p.shape)}"
            if isinstance(p, slice):
                return ":".join("" if v is None else str(v) for v in (p.start, p.stop, p.step)
                                ).rstrip(":") or ":"
            return "..." if p is Ellipsis else repr(p)
        return f"[{', '.join(part(p) for p in self.parts)}]"


def check_masks(index, shape: tuple) -> None:
    """Each bool mask in an index has the shape of the dims it covers: NumPy lets a mask with
    a dim of length 0 through, torch does not. (Checked where a mask writes, ``x[mask] = v``;
    reading, ``x[mask]`` gives an empty result, and the check would cost every index.)"""
    parts = index if isinstance(index, tuple) else (index,)
    dim = 0
    for part in parts:
        if part is Ellipsis:  # the dims after it are counted from the end
            dim = len(shape) - sum(p.ndim if isinstance(p, np.ndarray) and p.dtype == bool
                                   else p is not None for p in parts[parts.index(part) + 1:])
            continue
        if isinstance(part, np.ndarray) and part.dtype == bool:
            covered = tuple(shape[dim:dim + part.ndim])
            if part.shape != covered:
                raise IndexError(f"index: the shape of the mask {list(part.shape)} does not "
                                 f"match the shape {list(covered)} of input at dim {dim} "
                                 f"(input shape {shape})")
            dim += part.ndim
        elif part is not None:
            dim += 1


def is_mask_fill(index) -> bool:
    """Whether the index's only array is a bool mask: ``x[index] = value`` with a one-element
    value is then torch's masked_fill, which takes a value of another dtype (index_put_ does
    not)."""
    parts = index.parts if type(index) is TwoStepIndex else \
        index if isinstance(index, tuple) else (index,)
    arrays = [p for p in parts if type(p) is np.ndarray or type(p) is bool]
    return len(arrays) == 1 and type(arrays[0]) is np.ndarray and arrays[0].dtype == bool


def expanded_shape(shape: tuple, sizes, op: str = "expand", name: str = "size") -> tuple:
    """PyTorch's expand(): -1 keeps a size; new leading dimensions may be added (``sizes``:
    the varargs, see ``int_sizes``)."""
    sizes = int_sizes(op, name, sizes)
    if len(sizes) < len(shape):
        raise RuntimeError(f"{op}: {name} {sizes} gives {plural(len(sizes), 'size')}, fewer "
                           f"than the input's {plural(len(shape), 'dim')} (shape {tuple(shape)})")
    full = (1,) * (len(sizes) - len(shape)) + tuple(shape)
    result = tuple(old if new == -1 else new for old, new in zip(full, sizes))
    for old, new in zip(full, result):
        if (old != new and old != 1) or new < 0:
            raise RuntimeError(f"{op}: the expanded size {new} in {name} {sizes} must match the "
                               f"input's size {old} at a non-singleton dimension (input shape "
                               f"{tuple(shape)})")
    return result


def is_advanced(index) -> bool:
    """Advanced indexing, with integer or boolean arrays or a bool (``x[True]``, a 0-d mask):
    the result is a copy. (A TwoStepIndex knows; one without arrays selects a view.)"""
    if type(index) is TwoStepIndex:
        return index.advanced
    parts = index if isinstance(index, tuple) else (index,)
    return any(isinstance(i, np.ndarray) and (i.ndim > 0 or i.dtype == bool) or
               isinstance(i, (bool, np.bool_)) for i in parts)


def index_error(error: IndexError, index, shape: tuple) -> Exception:
    """NumPy's IndexError for ``input[index]``, with the input's shape. (Only on failure: no
    cost per index.)"""
    return IndexError(f"index: {error} (input shape {shape})")


class Reshape(Node):
    """Reshaping only relabels elements: the gradient is reshaped back"""

    is_view = True

    def forward(ctx, x, shape):
        ctx.input_shape = x.shape
        return x.reshape(shape)

    def backward(ctx, grad):
        return grad.reshape(ctx.input_shape)

    def drops_leading_axis(self) -> bool:
        """Whether this reshape only takes away a leading axis of length 1, (1, C, H, W) to
        (C, H, W): an op's batch of one, as an op returns one unbatched image (fan_in asks)."""
        before = tuple(self.parents[0].shape)
        return before[:1] == (1,) and before[1:] == tuple(self.attrs["shape"])


class Permute(Node):
    """Permuting axes: the gradient is permuted by the inverse permutation"""

    is_view = True

    def forward(ctx, x, dims):
        return x.transpose(dims)

    def backward(ctx, grad):
        return Permute.call(grad, dims=tuple(np.argsort(ctx.attrs["dims"]).tolist()))


_BACKWARDS, _ALL = slice(None, None, -1), slice(None)


class Flip(Node):
    """Reversing axes is its own inverse (a copy, as PyTorch's flip)"""

    def forward(ctx, x, dims):
        if not x.ndim:
            return x.copy()  # a 0-d tensor flips to itself
        # x[::-1] along each of dims (np.flip's own axis checks cost more than the copy on a
        # small array; dims are checked and non-negative already)
        return x[tuple([_BACKWARDS if d in dims else _ALL for d in range(x.ndim)])].copy()

    def backward(ctx, grad):
        return Flip.call(grad, dims=ctx.attrs["dims"])


class Repeat(Node):
    """Tiling copies x ``repeats[i]`` times along dim i; each copy's gradient adds back:
    dx = Σ over the copies of the gradient's matching block"""

    def forward(ctx, x, repeats):
        ctx.input_shape = x.shape
        # Like torch, extra repeats add leading dimensions of size 1 before tiling.
        x = x.reshape((1,) * (len(repeats) - x.ndim) + x.shape)
        return np.tile(x, repeats)

    def backward(ctx, grad):
        repeats, shape = ctx.attrs["repeats"], ctx.input_shape
        padded = (1,) * (len(repeats) - len(shape)) + tuple(shape)
        # Dim i of the output is (copy, position) = (repeats[i], padded[i]), in that order:
        # split every dim so, and sum over the copy axes.
        blocks = grad.reshape(tuple(n for pair in zip(repeats, padded) for n in pair))
        return blocks.sum(axis=tuple(range(0, 2 * len(repeats), 2))).reshape(shape)


class Roll(Node):
    """Rolling moves each element by ``shifts`` (cyclically); the gradient rolls back by
    -shifts. ``dims=None`` rolls the flattened tensor, as torch's roll"""

    def forward(ctx, x, shifts, dims):
        return np.roll(x, shifts[0] if dims is None else shifts, axis=dims)

    def backward(ctx, grad):
        return Roll.call(grad, shifts=tuple(-s for s in ctx.attrs["shifts"]),
                         dims=ctx.attrs["dims"])


class Pad(Node):
    """Constant padding, ``widths`` = (before, after) per dim (negative widths crop): the
    gradient of the kept elements goes back, i.e. dx = the gradient padded by -widths"""

    def forward(ctx, x, widths, value):
        out = np.full(tuple(n + before + after for n, (before, after) in zip(x.shape, widths)),
                      value, dtype=x.dtype)
        # Per dim, the kept stretch of x (after cropping) and where it lands in out.
        kept = [n - max(-before, 0) - max(-after, 0) for n, (before, after) in zip(x.shape, widths)]
        if min(kept, default=1) > 0:  # (pad() checked that none is negative)
            source = tuple(slice(max(-b, 0), max(-b, 0) + k) for k, (b, _) in zip(kept, widths))
            target = tuple(slice(max(b, 0), max(b, 0) + k) for k, (b, _) in zip(kept, widths))
            out[target] = x[source]
        return out

    def backward(ctx, grad):
        widths = tuple((-before, -after) for before, after in ctx.attrs["widths"])
        return Pad.call(grad, widths=widths, value=0)


class Expand(Node):
    """Broadcasting to a larger shape copies each element; the copies' gradients are summed"""

    is_view = True

    def forward(ctx, x, shape):
        ctx.input_shape = x.shape
        return views.broadcast_to(x, shape)  # np.broadcast_to, without its Python detour

    def backward(ctx, grad):
        return unbroadcast(grad, ctx.input_shape)


class Clone(Node):
    """A copy: the gradient passes through unchanged"""

    def forward(ctx, x):
        return x.copy()

    def backward(ctx, grad):
        return grad


class Index(Node):
    """x[index]: each selected element's gradient goes back to where it was read from;
    an element read twice (advanced indexing with repeats) gets the sum"""

    is_view = True  # for basic indexing; advanced indexing copies, and the engine sees that

    def forward(ctx, x, index):
        ctx.input_shape = x.shape
        try:
            out = x[index] if type(index) is not TwoStepIndex else index.read(x)
        except IndexError as error:
            raise index_error(error, index, x.shape) from None
        if type(out) is not np.ndarray:  # one element: NumPy gives a scalar, torch a 0-d view
            out = x[(index if isinstance(index, tuple) else (index,)) + (Ellipsis,)]
        return out

    def backward(ctx, grad):
        return IndexScatter.call(grad, index=ctx.attrs["index"], shape=ctx.input_shape)


class IndexScatter(Node):
    """The adjoint of indexing: values added into zeros at the indexed places (a place
    indexed twice gets both); its own derivative reads those places again"""

    def forward(ctx, values, index, shape):
        full = target = np.zeros(shape, dtype=values.dtype)
        if type(index) is TwoStepIndex:  # add into the view the first step picks
            target, index = index.first_step(full)
        if index is None:  # (a TwoStepIndex without arrays)
            target[...] = values
        elif is_advanced(index):
            np.add.at(target, index, values)
        else:  # basic slicing never reads an element twice
            target[index] = values
        return full

    def backward(ctx, grad):
        return Index.call(grad, index=ctx.attrs["index"])


class Copy(Node):
    """dst.copy_(src): the result is src broadcast to dst's shape; dst's old value is gone,
    so only src gets a gradient"""

    def forward(ctx, dst, src):
        ctx.src_shape = src.shape
        return np.broadcast_to(src, dst.shape).astype(dst.dtype)

    def backward(ctx, grad):
        return Fill.call(grad, value=0), unbroadcast(grad, ctx.src_shape)


class Fill(Node):
    """x.fill_(value): a constant, so x's old value gets a zero gradient"""

    def forward(ctx, x, value):
        return np.full(x.shape, value, dtype=x.dtype)

    def backward(ctx, grad):
        return Fill.call(grad, value=0)


class IndexPut(Node):
    """x[index] = value with an advanced index (PyTorch's index_put_): the overwritten places
    of x get no gradient; value gets the gradient of the places it was written to"""

    def forward(ctx, x, value, index):
        ctx.value_shape = value.shape
        # (np.array: a backward may hand a 0-d gradient in as a NumPy scalar, and the copy of a
        # scalar could not be written into)
        out = target = np.array(x, order="C")
        try:
            if type(index) is TwoStepIndex:  # write into the view the first step picks
                target, index = index.first_step(out)
        except IndexError as error:
            raise index_error(error, index, x.shape) from None
        check_masks(index, target.shape)
        try:
            target[Ellipsis if index is None else index] = value  # (None: no arrays)
        except IndexError as error:
            raise index_error(error, index, x.shape) from None
        except ValueError as error:  # a value that does not broadcast: torch's RuntimeError
            raise RuntimeError(f"index: {error} (input shape {x.shape}, value shape "
                               f"{value.shape})") from None
        return out

    def backward(ctx, grad):
        index = ctx.attrs["index"]
        grad_x = IndexPut.call(grad, np.zeros((), grad.dtype), index=index) \
            if ctx.needs_input_grad[0] else None
        grad_value = unbroadcast(Index.call(grad, index=index), ctx.value_shape) \
            if ctx.needs_input_grad[1] else None
        return grad_x, grad_value


# ---- the functional entries (torch's signatures; Tensor methods call these) ----------------
# The view ops below are existing Functions with new arguments: squeeze, unsqueeze, unflatten
# and view_as are reshapes; t and mT permutations; narrow a basic slice (Index). Each is a view,
# so in-place writes through it reach the base, as in torch.
def _tensor(op: str, name: str, value) -> Tensor:
    if not isinstance(value, Tensor):
        raise TypeError(f"{op}: {name} must be a Tensor, got {type(value).__name__}")
    return value


def flip(input, dims) -> Tensor:
    """torch.flip(input, dims): a copy with the given dims reversed."""
    return Flip.apply(input, dims=normalize_dims("flip", input.ndim, dims, distinct=True))


def squeeze(input, dim=OMITTED) -> Tensor:
    """Remove dims of size 1: all of them, or those named (a named dim of another size stays)."""
    shape = input.shape
    if dim is OMITTED:
        drop = {d for d, n in enumerate(shape) if n == 1}
    else:
        drop = {d for d in normalize_dims("squeeze", input.ndim, dim, distinct=True, name="dim")
                if input.ndim and shape[d] == 1}
    return Reshape.apply(input, shape=tuple(n for d, n in enumerate(shape) if d not in drop))


def unsqueeze(input, dim) -> Tensor:
    """Insert a dim of size 1 at ``dim`` (in [-ndim-1, ndim]: -1 appends)."""
    dim = wrap_dim("unsqueeze", dim, input.ndim + 1)
    shape = tuple(input.shape)
    return Reshape.apply(input, shape=shape[:dim] + (1,) + shape[dim:])


def unflatten(input, dim, sizes) -> Tensor:
    """Split dim into ``sizes`` (whose product is its length; one -1 is inferred)."""
    dim = wrap_dim("unflatten", dim, input.ndim)
    if input.ndim == 0:
        raise RuntimeError("unflatten: input is a 0-d tensor, with no dimension to unflatten")
    if sizes is None or (is_int(sizes) and sizes == 0):  # (torch reads these as no sizes)
        raise RuntimeError(f"unflatten: sizes must be non-empty, got {sizes!r}")
    if not isinstance(sizes, (tuple, list)):
        raise TypeError(f"unflatten: sizes must be a tuple of ints, got "
                        f"{type(sizes).__name__}")
    sizes, length = int_sizes("unflatten", "sizes", (tuple(sizes),)), input.shape[dim]
    if not sizes:
        raise RuntimeError("unflatten: sizes must be non-empty")
    known = math.prod(n for n in sizes if n != -1)
    fits = (known != 0 and length % known == 0) if -1 in sizes else known == length
    if sizes.count(-1) > 1 or any(n < -1 for n in sizes) or not fits:
        raise RuntimeError(f"unflatten: provided sizes {list(sizes)} don't multiply up to the "
                           f"size of dim {dim} ({length}) in the input tensor (at most one -1)")
    sizes = tuple(length // known if n == -1 else n for n in sizes)
    shape = tuple(input.shape)
    return Reshape.apply(input, shape=shape[:dim] + sizes + shape[dim + 1:])


_PYTHON_DTYPES = {float: np.dtype(np.float64), int: np.dtype(np.int64), bool: np.dtype(np.bool_)}


def view(input, *shape, op: str = "view", name: str = "shape", dtype=None) -> Tensor:
    """``input.view(shape)``: the same memory seen with another shape — refused, as torch does,
    where the strides cannot express it (a transposed matrix flattened): ``reshape`` copies.
    ``input.view(dtype)``: the same bytes read as another dtype (see ``view_dtype``)."""
    if dtype is not None or len(shape) == 1 and (isinstance(shape[0], np.dtype) or
                                                 isinstance(shape[0], type)):
        if dtype is not None and shape:
            raise TypeError(f"{op}(): give either a shape or dtype=, not both")
        return view_dtype(input, shape[0] if dtype is None else dtype)
    shape = resolve_shape(op, input.shape, shape, name)
    try:
        input._data.view().shape = shape  # NumPy's own test of "without copying"
    except AttributeError:
        raise RuntimeError(f"{op}: view size is not compatible with input tensor's size and "
                           f"stride (shape {input.shape} → {shape}: at least one dimension "
                           f"spans across two contiguous subspaces). Use .reshape(...) "
                           f"instead.") from None
    return Reshape.apply(input, shape=shape)


def view_dtype(input, dtype) -> Tensor:
    """``input.view(dtype)``: the same memory read as ``dtype``. Of the same element size, the
    shape stays; of another, the last dim grows or shrinks by the ratio of the sizes, as in
    torch (which needs that dim contiguous, and divisible when it shrinks). Reading the bits
    anew is not differentiable: the result is outside the graph, as torch's, but shares the
    memory and the version counter (writes through it reach input)."""
    if dtype is float or dtype is int or dtype is bool:  # float64, int64, bool, as torch
        dtype = _PYTHON_DTYPES[dtype]
    if not isinstance(dtype, np.dtype):
        raise TypeError(f"view(): argument 'dtype' must be a dtype, got "
                        f"{type(dtype).__name__} ({dtype!r})")
    data, old = input._data, input._data.dtype
    if dtype.itemsize != old.itemsize:
        what = f"to view {old} as {dtype} (different element sizes)"
        if data.ndim == 0:
            raise RuntimeError(f"view: self.dim() cannot be 0 {what}")
        if data.shape[-1] != 1 and data.size and data.strides[-1] != old.itemsize:
            raise RuntimeError(f"view: self.stride(-1) must be 1 {what}, but got "
                               f"{data.strides[-1] // old.itemsize}")
        if dtype.itemsize > old.itemsize and data.shape[-1] % (dtype.itemsize // old.itemsize):
            raise RuntimeError(f"view: self.size(-1) must be divisible by "
                               f"{dtype.itemsize // old.itemsize} {what}, but got "
                               f"{data.shape[-1]}")
    try:
        out = Tensor._make(data.view(dtype), None)
    except ValueError as error:  # strides the new element size cannot express
        raise RuntimeError(f"view: cannot view {old} as {dtype} here ({error})") from None
    out._version_counter = input._counter()
    return out


def view_as(input, other) -> Tensor:
    """input.view(other.shape)."""
    return view(input, _tensor("view_as", "other", other).shape, op="view_as", name="other's shape")


def reshape_as(input, other) -> Tensor:
    """input.reshape(other.shape)."""
    other = _tensor("reshape_as", "other", other)
    return Reshape.apply(input, shape=resolve_shape("reshape_as", input.shape,
                                                    (tuple(other.shape),), "other's shape"))


def expand_as(input, other) -> Tensor:
    """input.expand(other.shape): a read-only broadcast view."""
    other = _tensor("expand_as", "other", other)
    return Expand.apply(input, shape=expanded_shape(input.shape, (tuple(other.shape),),
                                                    "expand_as", "other's shape"))


def t(input) -> Tensor:
    """The transpose of a matrix; a 0-d or 1-d tensor is returned as it is (a view)."""
    if input.ndim > 2:
        raise RuntimeError(f"t: expects a tensor with <= 2 dimensions, but input is "
                           f"{input.ndim}D (shape {tuple(input.shape)}); use transpose(dim0, "
                           f"dim1) or mT")
    return Permute.apply(input, dims=tuple(reversed(range(input.ndim))))


def matrix_transpose(input) -> Tensor:
    """``x.mT``: the last two dims swapped (a batch of matrices, each transposed)."""
    if input.ndim < 2:
        raise RuntimeError(f"mT: tensor.mT is only supported on matrices or batches of "
                           f"matrices. Got {input.ndim}-D tensor.")
    return Permute.apply(input, dims=swap_dims(input.ndim, -2, -1))


def repeat(input, *repeats) -> Tensor:
    """Tile the tensor ``repeats[i]`` times along dim i (extra repeats add leading dims)."""
    if not repeats:
        raise TypeError("repeat: missing the repeats (one int per dimension)")
    repeats = int_sizes("repeat", "repeats", repeats)
    if len(repeats) < input.ndim:
        raise RuntimeError(f"repeat: the number of repeats {repeats} can not be smaller than "
                           f"the input's number of dims ({input.ndim}, shape "
                           f"{tuple(input.shape)})")
    if any(n < 0 for n in repeats):
        raise RuntimeError(f"repeat: repeats {repeats} must be non-negative")
    return Repeat.apply(input, repeats=repeats)


def narrow(input, dim, start, length) -> Tensor:
    """input[..., start:start + length, ...] along dim: a view (a negative start counts from
    the end)."""
    if input.ndim == 0:
        raise RuntimeError("narrow: input is a 0-d tensor: narrow() cannot be applied to a "
                           "0-dim tensor")
    dim = wrap_dim("narrow", dim, input.ndim)
    if isinstance(start, Tensor) and start.ndim == 0 and start.dtype.kind in "iu":
        start = int(start._data)  # torch takes a 0-d integer tensor for start
    if not is_int(start) or not is_int(length):
        raise TypeError(f"narrow: start and length must be ints, got "
                        f"{type(start).__name__} and {type(length).__name__}")
    size = input.shape[dim]
    if not -size <= start <= size:
        raise IndexError(f"narrow: start out of range (expected to be in range of [{-size}, "
                         f"{size}], but got {start}) for dim {dim} of size {size}")
    start = int(start) % size if start < 0 else int(start)
    if length < 0:
        raise RuntimeError(f"narrow: length must be non-negative, got {length}")
    if start + length > size:
        raise RuntimeError(f"narrow: start ({start}) + length ({length}) exceeds dimension size "
                           f"({size}) of dim {dim} of the input")
    index = (slice(None),) * dim + (slice(start, start + int(length)),)
    return Index.apply(input, index=index)


def roll(input, shifts, dims=None) -> Tensor:
    """Shift elements cyclically by ``shifts`` along ``dims`` (the flattened tensor if None)."""
    shifts = (shifts,) if not isinstance(shifts, (tuple, list)) else tuple(shifts)
    if not all(is_int(s) for s in shifts):
        raise TypeError(f"roll: shifts must be an int or a tuple of ints, got {shifts}")
    shifts = tuple(int(s) for s in shifts)
    if dims is None:
        if len(shifts) != 1:
            raise RuntimeError(f"roll: shifts and dimensions must align: {len(shifts)} shifts "
                               f"{shifts} need as many dims (dims=None takes one shift)")
        return Roll.apply(input, shifts=shifts, dims=None)
    dims = (dims,) if not isinstance(dims, (tuple, list)) else tuple(dims)
    if not shifts:
        raise RuntimeError("roll: `shifts` required (got no shifts)")
    if len(shifts) != len(dims):
        raise RuntimeError(f"roll: shifts and dimensions must align: shifts {shifts}, dims "
                           f"{dims}")
    if input.ndim == 0:
        raise IndexError(f"roll: dimension specified as {dims[0]} but input has no "
                         f"dimensions (a 0-d tensor)")
    return Roll.apply(input, shifts=shifts, dims=normalize_dims("roll", input.ndim, dims))


def contiguous(input) -> Tensor:
    """The tensor itself when its memory is already in row-major order, else a copy that is."""
    return input if input._data.flags.c_contiguous else Clone.apply(input)


def diagonal_view(x: np.ndarray, offset: int, dim1: int, dim2: int) -> np.ndarray:
    """A writable view of x's diagonal over (dim1, dim2), ``offset`` above the main one (below
    when negative), as the last dim — NumPy's ``np.diagonal`` is read-only."""
    start = [0] * x.ndim
    start[dim2 if offset >= 0 else dim1] = abs(offset)
    length = max(0, min(x.shape[dim1] - start[dim1], x.shape[dim2] - start[dim2]))
    if length == 0:
        start = [0] * x.ndim  # (an empty diagonal: any in-range start will do)
    corner = x[tuple(slice(s, None) for s in start)]
    kept = [d for d in range(x.ndim) if d not in (dim1, dim2)]
    return np.lib.stride_tricks.as_strided(
        corner, tuple(x.shape[d] for d in kept) + (length,),
        tuple(x.strides[d] for d in kept) + (x.strides[dim1] + x.strides[dim2],),
        writeable=corner.flags.writeable)


class Diagonal(Node):
    """y = the diagonal of x over (dim1, dim2) at ``offset``, as the last dim (a view);
    dx = zeros of x's shape with the gradient written along that diagonal"""

    is_view = True

    def forward(ctx, x, offset, dim1, dim2):
        ctx.input_shape = x.shape
        return diagonal_view(x, offset, dim1, dim2)

    def backward(ctx, grad):
        return DiagonalEmbed.call(grad, shape=ctx.input_shape, **ctx.attrs)


class DiagonalEmbed(Node):
    """y = zeros of ``shape`` with x written along the diagonal (Diagonal's adjoint);
    dx = the diagonal of the gradient"""

    fresh_gradients = True

    def forward(ctx, x, shape, offset, dim1, dim2):
        out = np.zeros(shape, x.dtype)
        diagonal_view(out, offset, dim1, dim2)[...] = x
        return out

    def backward(ctx, grad):
        attrs = ctx.attrs
        return Diagonal.call(grad, offset=attrs["offset"], dim1=attrs["dim1"],
                             dim2=attrs["dim2"])


def diagonal(input, offset: int = 0, dim1: int = 0, dim2: int = 1) -> Tensor:
    """torch.diagonal: the diagonal over (dim1, dim2) as a view, appended as the last dim."""
    input = _tensor("diagonal", "input", input)
    if not is_int(offset):
        raise TypeError(f"diagonal(): argument 'offset' must be int, not {type(offset).__name__}")
    dim1, dim2 = (check_dim("diagonal", name, d, input.ndim) for name, d in
                  (("dim1", dim1), ("dim2", dim2)))
    if input.ndim < 2:
        raise RuntimeError(f"diagonal: the input must have at least 2 dims, got a "
                           f"{input.ndim}-D tensor")
    if dim1 == dim2:
        raise RuntimeError(f"diagonal dimensions cannot be identical {dim1}, {dim2}")
    return Diagonal.apply(input, offset=int(offset), dim1=dim1, dim2=dim2)


def diag(input, diagonal: int = 0) -> Tensor:
    """torch.diag: a 1-D input becomes a square matrix with it on the ``diagonal``-th diagonal;
    a 2-D input gives (a copy of) that diagonal."""
    input = _tensor("diag", "input", input)
    if not is_int(diagonal):
        raise TypeError(f"diag(): argument 'diagonal' must be int, not "
                        f"{type(diagonal).__name__}")
    if input.ndim == 1:
        side = input.shape[0] + abs(int(diagonal))
        return DiagonalEmbed.apply(input, shape=(side, side), offset=int(diagonal), dim1=0, dim2=1)
    if input.ndim == 2:
        return Clone.apply(Diagonal.apply(input, offset=int(diagonal), dim1=0, dim2=1))
    raise RuntimeError(f"diag(): Supports 1D or 2D tensors. Got {input.ndim}D")


def window_view(x: np.ndarray, dim: int, size: int, step: int) -> np.ndarray:
    """A writable view of every ``size``-long window along ``dim``, ``step`` apart: dim becomes
    the window count, and a last dim the position in the window."""
    count = (x.shape[dim] - size) // step + 1
    shape = x.shape[:dim] + (count,) + x.shape[dim + 1:] + (size,)
    strides = (x.strides[:dim] + (x.strides[dim] * step,) + x.strides[dim + 1:]
               + (x.strides[dim],))
    return np.lib.stride_tricks.as_strided(x, shape, strides, writeable=x.flags.writeable)


class UnfoldWindows(Node):
    """y = the windows of x along ``dim`` (a view, windows may overlap);
    dx = each window's gradient added back where the window was read"""

    is_view = True

    def forward(ctx, x, dim, size, step):
        ctx.input_shape = x.shape
        return window_view(x, dim, size, step)

    def backward(ctx, grad):
        return FoldWindows.call(grad, shape=ctx.input_shape, **ctx.attrs)


class FoldWindows(Node):
    """y = zeros of ``shape`` with every window of x added where it sits (UnfoldWindows'
    adjoint); dx = the windows of the gradient"""

    fresh_gradients = True

    def forward(ctx, x, shape, dim, size, step):
        out = np.zeros(shape, x.dtype)
        count = x.shape[dim]
        windows = np.moveaxis(x, -1, dim + 1)  # (…, count, size, …)
        for k in range(size):  # one pass per position in the window (a small number)
            index = (slice(None),) * dim + (slice(k, k + step * (count - 1) + 1, step),)
            out[index] += windows[(slice(None),) * (dim + 1) + (k,)]
        return out

    def backward(ctx, grad):
        attrs = ctx.attrs
        return UnfoldWindows.call(grad, dim=attrs["dim"], size=attrs["size"], step=attrs["step"])


def unfold_windows(input, dimension: int, size: int, step: int) -> Tensor:
    """Tensor.unfold: every ``size``-long slice along ``dimension``, ``step`` apart, as a view
    (not F.unfold, which takes image patches)."""
    input = _tensor("unfold", "input", input)
    dim = check_dim("unfold", "dimension", dimension, input.ndim)
    for name, value in (("size", size), ("step", step)):
        if not is_int(value):
            raise TypeError(f"unfold(): argument '{name}' must be int, not "
                            f"{type(value).__name__}")
    if step <= 0:
        raise RuntimeError(f"step is {step} but must be > 0")
    length = input.shape[dim] if input.ndim else 1
    if size < 0 or size > length:
        raise RuntimeError(f"unfold: maximum size for tensor at dimension {dim} is {length} but "
                           f"size is {size} (input shape {tuple(input.shape)})")
    if input.ndim == 0:  # torch treats a 0-d tensor as one element along dim 0
        return UnfoldWindows.apply(input.reshape(1), dim=0, size=int(size), step=int(step))
    return UnfoldWindows.apply(input, dim=dim, size=int(size), step=int(step))


def movedim(input, source, destination) -> Tensor:
    """Move the dims ``source`` to the positions ``destination``; the others keep their order."""
    input = _tensor("movedim", "input", input)
    source = list(source) if isinstance(source, (tuple, list)) else [source]
    destination = list(destination) if isinstance(destination, (tuple, list)) else [destination]
    if len(source) != len(destination):
        raise RuntimeError(f"movedim: Invalid source or destination dims: source ({source} dims) "
                           f"should contain the same number of dims as destination "
                           f"({destination} dims)")
    source = [check_dim("movedim", "source", d, input.ndim) for d in source]
    destination = [check_dim("movedim", "destination", d, input.ndim) for d in destination]
    for name, dims in (("source", source), ("destination", destination)):
        if len(set(dims)) != len(dims):
            raise RuntimeError(f"movedim: repeated dim in `{name}` ({dims})")
    if input.ndim == 0:  # (dim 0 or -1 of a 0-d tensor is the tensor itself, as torch's)
        return Permute.apply(input, dims=())
    order = [None] * input.ndim
    for s, d in zip(source, destination):
        order[d] = s
    rest = iter(d for d in range(input.ndim) if d not in source)
    return Permute.apply(input, dims=tuple(next(rest) if d is None else d for d in order))




# ---- turns, mirrors, tiles and pixel shuffles: compositions of the Functions above (their
# gradients, to any order, are those of flip, permute, reshape and repeat)
def rot90(input, k: int = 1, dims=(0, 1)) -> Tensor:
    """torch.rot90: turn the plane ``dims`` by k quarter turns, from the first dim towards the
    second: one turn is flip(dims[1]) then swapping the two dims, as torch writes it."""
    input = _tensor("rot90", "input", input)
    if not is_int(k):
        raise TypeError(f"rot90(): argument 'k' must be int, not {type(k).__name__}")
    if not isinstance(dims, (tuple, list)) or not all(is_int(d) for d in dims):
        raise TypeError(f"rot90(): argument 'dims' must be tuple of ints, not {dims!r}")
    if len(dims) != 2:
        raise RuntimeError(f"rot90: expected total rotation dims == 2, but got dims = "
                           f"{len(dims)}")
    if input.ndim < 2:
        raise RuntimeError(f"rot90: expected total dims >= 2, but got total dims = {input.ndim}")
    first, second = (wrap_dim("rot90", d, input.ndim, "dims") for d in dims)
    if first == second:
        raise RuntimeError(f"rot90: expected rotation dims to be different, but got dim0 = "
                           f"{first} and dim1 = {second}")
    turns = int(k) % 4
    if turns == 0:
        return Clone.apply(input)  # (a copy, as torch's)
    if turns == 2:
        return Flip.apply(input, dims=tuple(sorted((first, second))))
    flipped = Flip.apply(input, dims=(second if turns == 1 else first,))
    return Permute.apply(flipped, dims=swap_dims(input.ndim, first, second))


def fliplr(input) -> Tensor:
    """torch.fliplr: dim 1 reversed (left and right in a matrix), for 2 dims or more."""
    input = _tensor("fliplr", "input", input)
    if input.ndim < 2:
        raise RuntimeError(f"fliplr: Input must be >= 2-d (got a {input.ndim}-d tensor)")
    return Flip.apply(input, dims=(1,))


def flipud(input) -> Tensor:
    """torch.flipud: dim 0 reversed (up and down in a matrix), for 1 dim or more."""
    input = _tensor("flipud", "input", input)
    if input.ndim < 1:
        raise RuntimeError("flipud: Input must be >= 1-d (got a 0-d tensor)")
    return Flip.apply(input, dims=(0,))


def tile(input, *dims) -> Tensor:
    """torch.tile: ``repeat`` where fewer ``dims`` than the input's are padded with 1s in front
    (``x.tile(2)`` of a matrix repeats its last dim twice)."""
    dims = int_sizes("tile", "dims", dims)
    if any(n < 0 for n in dims):
        raise RuntimeError(f"tile: dims {tuple(dims)} must be non-negative (the number of "
                           f"copies along each dim)")
    return repeat(input, (1,) * (input.ndim - len(dims)) + tuple(dims))


def _factor(op: str, name: str, value) -> int:
    if not is_int(value):
        raise TypeError(f"{op}(): argument '{name}' must be int, not {type(value).__name__}")
    if value <= 0:
        raise RuntimeError(f"{op} expects a positive {name}, but got {value}")
    return int(value)


def _copy_of(result: Tensor) -> Tensor:
    """The shuffles return new memory, as torch's (a factor of 1 would otherwise give a view)."""
    return result if result._view is None else Clone.apply(result)


def pixel_shuffle(input, upscale_factor: int) -> Tensor:
    """F.pixel_shuffle: (*, C·r², H, W) → (*, C, H·r, W·r) — each group of r² channels becomes
    an r × r block of pixels: channel c·r² + i·r + j lands at (c, h·r + i, w·r + j)."""
    input = _tensor("pixel_shuffle", "input", input)
    r = _factor("pixel_shuffle", "upscale_factor", upscale_factor)
    if input.ndim < 3:
        raise RuntimeError(f"pixel_shuffle expects input to have at least 3 dimensions, but "
                           f"got input with {input.ndim} dimension(s)")
    *batch, channels, height, width = input.shape
    if channels % (r * r):
        raise RuntimeError(f"pixel_shuffle expects its input's 'channel' dimension to be "
                           f"divisible by the square of upscale_factor, but input.size(-3)="
                           f"{channels} is not divisible by {r * r}")
    n = len(batch)
    split = Reshape.apply(input, shape=(*batch, channels // (r * r), r, r, height, width))
    # (…, c, i, j, h, w) → (…, c, h, i, w, j)
    moved = Permute.apply(split, dims=(*range(n), n, n + 3, n + 1, n + 4, n + 2))
    shape = (*batch, channels // (r * r), height * r, width * r)
    return _copy_of(Reshape.apply(moved, shape=shape))


def pixel_unshuffle(input, downscale_factor: int) -> Tensor:
    """F.pixel_unshuffle, pixel_shuffle's inverse: (*, C, H·r, W·r) → (*, C·r², H, W)."""
    input = _tensor("pixel_unshuffle", "input", input)
    r = _factor("pixel_unshuffle", "downscale_factor", downscale_factor)
    if input.ndim < 3:
        raise RuntimeError(f"pixel_unshuffle expects input to have at least 3 dimensions, but "
                           f"got input with {input.ndim} dimension(s)")
    *batch, channels, height, width = input.shape
    for name, size, at in (("height", height, -2), ("width", width, -1)):
        if size % r:
            raise RuntimeError(f"pixel_unshuffle expects {name} to be divisible by "
                               f"downscale_factor, but input.size({at})={size} is not divisible "
                               f"by {r}")
    n = len(batch)
    split = Reshape.apply(input, shape=(*batch, channels, height // r, r, width // r, r))
    # (…, c, h, i, w, j) → (…, c, i, j, h, w)
    moved = Permute.apply(split, dims=(*range(n), n, n + 2, n + 4, n + 1, n + 3))
    shape = (*batch, channels * r * r, height // r, width // r)
    return _copy_of(Reshape.apply(moved, shape=shape))


def channel_shuffle(input, groups: int) -> Tensor:
    """F.channel_shuffle: (N, C, *) with the C channels read as ``groups`` rows of C / groups,
    transposed — channel g·(C/groups) + k goes to position k·groups + g (ShuffleNet's mixing)."""
    input = _tensor("channel_shuffle", "input", input)
    if not is_int(groups):
        raise TypeError(f"channel_shuffle(): argument 'groups' must be int, not "
                        f"{type(groups).__name__}")
    if input.ndim <= 2:
        raise RuntimeError(f"channel_shuffle expects input with > 2 dims, but got input with "
                           f"sizes {list(input.shape)}")
    if groups <= 0:
        raise RuntimeError(f"channel_shuffle: Number of groups to divide channels in must be "
                           f"positive. Value of groups:{groups}")
    batch, channels, *rest = input.shape
    if channels % groups:
        raise RuntimeError(f"channel_shuffle: Number of channels must be divisible by groups. "
                           f"Got {channels} channels and {groups} groups.")
    split = Reshape.apply(input, shape=(batch, int(groups), channels // groups, *rest))
    moved = Permute.apply(split, dims=swap_dims(split.ndim, 1, 2))
    return _copy_of(Reshape.apply(moved, shape=tuple(input.shape)))



# ---- select, take, sum_to_size, diff, cross (Tensor.select ...: views and compositions) ------
def select(input, dim, index) -> Tensor:
    """``input.select(dim, index)``: the view ``input[..., index, ...]`` (index at ``dim``)."""
    input = _tensor("select", "input", input)
    for name, value in (("dim", dim), ("index", index)):
        if not is_int(value):
            raise TypeError(f"select(): argument '{name}' must be int, not {type(value).__name__}")
    if input.ndim == 0:
        raise IndexError("select() cannot be applied to a 0-dim tensor.")
    dim = wrap_dim("select", dim, input.ndim)
    size = input.shape[dim]
    if not -size <= index < size:
        raise IndexError(f"select(): index {index} out of range for tensor of size "
                         f"{list(input.shape)} at dimension {dim}")
    return input[(slice(None),) * dim + (int(index),)]


def take(input, index) -> Tensor:
    """``input.take(index)``: the elements of the flattened input at ``index`` (int64), in
    index's shape; the gradient adds into the positions taken (indexing's scatter-add)."""
    input, index = _tensor("take", "input", input), _tensor("take", "index", index)
    if index.dtype != np.int64:
        raise RuntimeError(f"take(): Expected a long tensor for index, but got {index.dtype}")
    size = input._data.size
    if index._data.size and not (-size <= index._data.min() and index._data.max() < size):
        bad = index._data[(index._data < -size) | (index._data >= size)].flat[0]
        raise IndexError(f"take(): out of range: tried to access index {bad} on a tensor of "
                         f"{size} elements.")
    return input.reshape(-1)[index]


def sum_to_size(input, *size) -> Tensor:
    """``input.sum_to_size(*size)``: input summed down to ``size``, which must expand to
    input's shape (the reverse of expand: broadcasting's gradient)."""
    input = _tensor("sum_to_size", "input", input)
    size = tuple(size[0]) if len(size) == 1 and isinstance(size[0], (tuple, list)) else size
    if not all(is_int(s) for s in size):
        raise TypeError(f"sum_to_size(): argument 'size' must be a tuple of ints, got {size!r}")
    shape, lead = input.shape, input.ndim - len(size)
    if lead < 0 or any(s != 1 and s != n for s, n in zip(size, shape[lead:])):
        raise RuntimeError(f"sum_to_size: size {{{list(size)}}} is not expandable to size "
                           f"{{{list(shape)}}}.")
    dims = tuple(range(lead)) + tuple(lead + i for i, s in enumerate(size)
                                      if s == 1 and shape[lead + i] != 1)
    return input.sum(dim=dims, keepdim=True).reshape(size) if dims else input


def cross(input, other, dim=None) -> Tensor:
    """The cross product of 3-vectors along ``dim``; inputs broadcast. ``dim=None``: the first
    dimension of size 3 (torch.cross's deprecated default, with its warning)."""
    input, other = _tensor("cross", "input", input), _tensor("cross", "other", other)
    if input.ndim != other.ndim:
        raise RuntimeError(f"linalg.cross: inputs must have the same number of dimensions. Got "
                           f"{input.ndim} and {other.ndim}")
    try:
        shape = np.broadcast_shapes(input.shape, other.shape)
    except ValueError:
        raise RuntimeError(f"linalg.cross: the shapes {list(input.shape)} and "
                           f"{list(other.shape)} do not broadcast") from None
    if dim is None:
        warnings.warn("Using torch.cross without specifying the dim arg is deprecated.\nPlease "
                      "either pass the dim explicitly or simply use torch.linalg.cross.\nThe "
                      "default value of dim will change to agree with that of linalg.cross in a "
                      "future release.", UserWarning, stacklevel=3)
        if 3 not in shape:
            raise RuntimeError("no dimension of size 3 in input")
        dim = shape.index(3)
    elif not is_int(dim):
        raise TypeError(f"cross(): argument 'dim' must be int, not {type(dim).__name__}")
    dim = wrap_dim("linalg.cross", dim, len(shape))
    if input.shape[dim] != 3 or other.shape[dim] != 3:
        raise RuntimeError(f"linalg.cross: inputs dimension {dim} must have length 3. Got "
                           f"{input.shape[dim]} and {other.shape[dim]}")
    # component i is a[i+1]·b[i+2] − a[i+2]·b[i+1] (indices mod 3): rolls along dim
    shape = tuple(shape)
    a, b = input.expand(shape), other.expand(shape)
    return (roll(a, -1, dim) * roll(b, -2, dim)) - (roll(a, -2, dim) * roll(b, -1, dim))


class ComparedInto(Node):
    """``x.eq_(y)``, ``x.logical_and_(y)``...: the comparison's truth values in x's dtype,
    piecewise constant — d/dx = 0 (zeros, as torch's EqBackward); ``other`` gets none"""

    def forward(ctx, x, other, compare):
        return np.asarray(compare(x, other)).astype(x.dtype)

    def backward(ctx, grad):
        return Fill.call(grad, value=0), None


class FillDiagonal(Node):
    """``x.fill_diagonal_(value, wrap)``: x with its main diagonal set to ``value`` (a tall
    matrix's restarting every n+1 rows with ``wrap``, as NumPy's fill_diagonal) — d/dx is 1
    off the diagonal, 0 on it"""

    def forward(ctx, x, value, wrap):
        out = np.array(x, order="C")
        np.fill_diagonal(out, value, wrap=wrap)
        return out

    def backward(ctx, grad):
        return FillDiagonal.call(grad, value=0, wrap=ctx.attrs["wrap"])


def fill_diagonal_arguments(input, fill_value, wrap) -> dict:
    """fill_diagonal_'s checks (torch's errors); the attributes of its FillDiagonal."""
    if isinstance(fill_value, Tensor):
        if fill_value.ndim:
            raise RuntimeError(f"fill_diagonal_: fill_value must be a number or a 0-dim tensor, "
                               f"got a tensor of shape {list(fill_value.shape)}")
        fill_value = fill_value.item()
    elif not isinstance(fill_value, (int, float, bool, np.number)):
        raise TypeError(f"fill_diagonal_(): argument 'fill_value' must be Number, not "
                        f"{type(fill_value).__name__}")
    if input.ndim < 2:
        raise RuntimeError(f"fill_diagonal_: dimensions must larger than 1 (input has "
                           f"{input.ndim})")
    if input.ndim > 2 and len(set(input.shape)) != 1:
        raise RuntimeError(f"fill_diagonal_: all dimensions of input must be of equal length "
                           f"(input has shape {list(input.shape)})")
    return {"value": fill_value, "wrap": bool(wrap)}
