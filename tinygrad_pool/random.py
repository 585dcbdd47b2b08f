"""Random number generators, as ``torch.Generator`` and ``torch.manual_seed``.

A ``Generator`` is a NumPy ``Generator`` (PCG64) with torch's methods for seeding and saving it
(``manual_seed``, ``seed``, ``initial_seed``, ``get_state``, ``set_state``). The package draws
with NumPy's methods (``random``, ``normal``, ``permutation``...), so every ``generator=``
argument takes a Generator or a plain ``numpy.random.Generator`` alike. One seed gives the same
numbers run after run, but not torch's numbers: the algorithm is NumPy's.

Layers, init functions, random factories, dropout masks and shuffling draw from the default
generator unless given ``generator=``. As torch's, it is one object
(``tinygrad_pool.default_generator``), seeded non-deterministically at start-up, so two runs
without a seed differ; ``manual_seed(seed)`` re-seeds it in place and returns it.

``multinomial`` draws category indices from weights with these generators (torch.multinomial).
"""
import operator
import secrets

import numpy as np

from .devices import CPU, check_device
from .engine import Tensor

# The state get_state packs, in order (little-endian unsigned integers, sizes in bytes):
# the initial seed, then PCG64's 128-bit state and increment and its cached half-draw.
_STATE_FIELDS = (("initial_seed", 8), ("state", 16), ("inc", 16), ("has_uint32", 4),
                 ("uinteger", 4))
_STATE_SIZE = sum(size for _, size in _STATE_FIELDS)


def _uint64_seed(op: str, seed: int) -> int:
    if not -2 ** 63 <= seed < 2 ** 64:
        raise ValueError(f"{op}: seed must fit in 64 bits (-2**63 <= seed < 2**64), got {seed}")
    return seed % 2 ** 64  # a negative seed counts modulo 2**64, as torch's


class Generator(np.random.Generator):
    """A random number generator, as ``torch.Generator(device='cpu')``.

    A new one starts from torch's fixed seed (``initial_seed()`` is 67280421310721), so it is
    repeatable until seeded otherwise. It is a ``numpy.random.Generator`` too: its NumPy methods
    draw from the same stream.
    """

    device = CPU  # (torch's device(type='cpu'), as a Tensor's)
    _FRESH_SEED = 67280421310721  # torch.Generator().initial_seed()

    def __init__(self, device="cpu"):
        check_device("Generator", device)
        self._initial_seed = self._FRESH_SEED
        super().__init__(np.random.PCG64(self._FRESH_SEED))

    def manual_seed(self, seed) -> "Generator":
        """Re-seed in place: the stream restarts as any generator's with this seed (an int; a
        negative one counts modulo 2**64). Returns the generator."""
        if isinstance(seed, (bool, np.bool_)):
            raise RuntimeError(f"Generator.manual_seed: seed must be an int, got bool {seed!r}")
        try:
            seed = operator.index(seed)
        except TypeError:
            raise RuntimeError(f"Generator.manual_seed: seed must be an int, got "
                               f"{type(seed).__name__} {seed!r}") from None
        seed = _uint64_seed("Generator.manual_seed", seed)
        # default_rng(seed)'s state, so manual_seed(s) draws as np.random.default_rng(s) does
        self.bit_generator.state = np.random.PCG64(seed).state
        self._initial_seed = seed
        return self

    def seed(self) -> int:
        """Re-seed from the operating system's entropy; returns the new seed."""
        seed = secrets.randbits(64)
        self.manual_seed(seed)
        return seed

    def initial_seed(self) -> int:
        """The seed the stream started from (the last manual_seed or seed)."""
        return self._initial_seed

    def get_state(self) -> Tensor:
        """The generator's whole state, as a uint8 Tensor (a copy) for ``set_state``."""
        numbers = self.bit_generator.state
        values = {"initial_seed": self._initial_seed, **numbers["state"],
                  "has_uint32": numbers["has_uint32"], "uinteger": numbers["uinteger"]}
        packed = b"".join(values[name].to_bytes(size, "little") for name, size in _STATE_FIELDS)
        return Tensor._make(np.frombuffer(packed, dtype=np.uint8).copy(), None)

    def set_state(self, new_state) -> "Generator":
        """Restore a state from ``get_state``: the stream goes on from where it was saved, and
        ``initial_seed()`` is the saved one. Returns the generator."""
        if not isinstance(new_state, Tensor) or new_state.dtype != np.uint8:
            described = (f"a {new_state.dtype} Tensor" if isinstance(new_state, Tensor)
                         else type(new_state).__name__)
            raise TypeError(f"Generator.set_state: new_state must be a uint8 Tensor (from "
                            f"get_state), got {described}")
        if new_state.shape != (_STATE_SIZE,):
            raise RuntimeError(f"Generator.set_state: expected a state of {_STATE_SIZE} bytes "
                               f"(from get_state), got shape {tuple(new_state.shape)}")
        packed, values, start = new_state._data.tobytes(), {}, 0
        for name, size in _STATE_FIELDS:
            values[name] = int.from_bytes(packed[start:start + size], "little")
            start += size
        if values["has_uint32"] > 1:
            raise RuntimeError(f"Generator.set_state: not a state from get_state (its flag "
                               f"byte is {values['has_uint32']}, expected 0 or 1)")
        self.bit_generator.state = {
            "bit_generator": "PCG64", "state": {"state": values["state"], "inc": values["inc"]},
            "has_uint32": values["has_uint32"], "uinteger": values["uinteger"]}
        self._initial_seed = values["initial_seed"]
        return self

    def __reduce__(self):
        # pickle and deepcopy keep the class, the stream and the initial seed (NumPy's own
        # reduction would give back a plain numpy Generator)
        return _generator_with_state, (self.get_state()._data.tobytes(),)


def _generator_with_state(state: bytes) -> Generator:
    return Generator().set_state(Tensor._make(np.frombuffer(state, dtype=np.uint8).copy(), None))


# The one default generator (torch.default_generator): manual_seed re-seeds it in place, so a
# reference taken earlier stays the default.
DEFAULT_GENERATOR = Generator()
DEFAULT_GENERATOR.seed()


def default_generator() -> Generator:
    """The generator used when a layer, init function or factory is not given ``generator=``."""
    return DEFAULT_GENERATOR


def check_generator(op: str, generator):
    """``generator=`` as the package takes it: None (the default generator), a Generator, or a
    ``numpy.random.Generator``; returned as given, so a caller writes
    ``check_generator(op, generator) or default_generator()``."""
    if generator is not None and not isinstance(generator, np.random.Generator):
        raise TypeError(f"{op}: generator must be a numpy.random.Generator or a "
                        f"tinygrad_pool.Generator (e.g. np.random.default_rng(0) or "
                        f"tinygrad_pool.Generator().manual_seed(0)), or None, got "
                        f"{type(generator).__name__}")
    return generator


def manual_seed(seed) -> Generator:
    """Seed the default generator; returns it. The seed is what ``int()`` takes (2.5 is 2, True
    is 1, "7" is 7, as ``torch.manual_seed`` takes it), a negative one modulo 2**64."""
    try:
        value = int(seed)
    except (TypeError, ValueError) as error:
        raise type(error)(f"manual_seed: seed must be an int, got {seed!r}") from None
    return DEFAULT_GENERATOR.manual_seed(_uint64_seed("manual_seed", value))


def seed() -> int:
    """Re-seed the default generator from the operating system's entropy; returns the seed."""
    return DEFAULT_GENERATOR.seed()


def initial_seed() -> int:
    """The seed the default generator's stream started from."""
    return DEFAULT_GENERATOR.initial_seed()


def get_rng_state() -> Tensor:
    """The default generator's state (``Generator.get_state``)."""
    return DEFAULT_GENERATOR.get_state()


def set_rng_state(new_state) -> None:
    """Restore the default generator's state from ``get_rng_state``."""
    DEFAULT_GENERATOR.set_state(new_state)


# ---- sampling ---------------------------------------------------------------------------------
def multinomial(input, num_samples, replacement=False, *, generator=None) -> Tensor:
    """``num_samples`` category indices (int64) per row of the non-negative weights ``input``
    (a 1-D distribution, or one per row of a 2-D one), drawn in proportion to the weights, as
    torch.multinomial. With replacement: inverse-CDF sampling, each draw's uniform number
    looked up in its row's cumulative weights. Without: each category gets the key w/E, E an
    Exp(1) number, and the ``num_samples`` largest keys win (the exponential race, torch's own
    method: the category whose exponential clock runs out first comes first, then the next
    among those left, which is sampling without replacement). Categories of weight 0 come last,
    lowest index first, once the others are drawn."""
    op = "multinomial"
    if not isinstance(input, Tensor):
        raise TypeError(f"{op}(): argument 'input' must be Tensor, not {type(input).__name__}")
    if isinstance(num_samples, (bool, np.bool_)) or not hasattr(num_samples, "__index__"):
        raise TypeError(f"{op}(): argument 'num_samples' must be int, not "
                        f"{type(num_samples).__name__}")
    num_samples = operator.index(num_samples)
    if not isinstance(replacement, (bool, np.bool_)):
        raise TypeError(f"{op}(): argument 'replacement' must be bool, not "
                        f"{type(replacement).__name__}")
    rng = check_generator(op, generator) or DEFAULT_GENERATOR
    weights = input._data
    if weights.ndim not in (1, 2):
        raise RuntimeError(f"{op}: prob_dist must be 1 or 2 dim, got {weights.ndim} dims "
                           f"(shape {list(weights.shape)})")
    if weights.dtype.kind != "f":
        raise RuntimeError(f"{op}: only floating-point weights are supported, got dtype "
                           f"{weights.dtype} (convert them with .float())")
    categories = weights.shape[-1]
    if not replacement and num_samples > categories:
        raise RuntimeError(f"{op}: cannot sample n_sample > prob_dist.size(-1) samples without "
                           f"replacement: num_samples={num_samples}, {categories} categories")
    if num_samples <= 0:
        raise RuntimeError(f"{op}: cannot sample n_sample <= 0 samples, got num_samples="
                           f"{num_samples}")
    if categories == 0:  # (torch's error here is an empty reduction's)
        raise RuntimeError(f"{op}: the distribution has no categories (input of shape "
                           f"{list(weights.shape)})")
    if categories > 2 ** 24:
        raise RuntimeError(f"{op}: number of categories cannot exceed 2^24, got {categories}")
    rows = weights.reshape(-1, categories).astype(np.float64)
    if not (np.isfinite(rows).all() and (rows >= 0).all()):
        raise RuntimeError(f"{op}: probability tensor contains either `inf`, `nan` or element "
                           f"< 0")
    if rows.shape[0] and not (rows.sum(axis=1) > 0).all():
        raise RuntimeError(f"{op}: invalid multinomial distribution (sum of probabilities <= 0)"
                           f" in row {int(np.argmin(rows.sum(axis=1) > 0))}")
    if replacement:
        indices = _draw_with_replacement(rows, num_samples, rng)
    else:
        keys = rows / rng.standard_exponential(rows.shape)
        indices = np.argsort(-keys, axis=1, kind="stable")[:, :num_samples]
    return Tensor._make(indices.astype(np.int64).reshape(weights.shape[:-1] + (num_samples,)),
                        None)


def _draw_with_replacement(rows: np.ndarray, num_samples: int, rng) -> np.ndarray:
    """Inverse-CDF sampling for every row at once: row i's cumulative weights, scaled to
    [0, 1], are shifted to [2i, 2i + 1], so that one sorted search serves all rows (the first
    cumulative weight above the uniform number u is the category drawn; a category of weight 0
    adds no step, so no u lands on it)."""
    count, categories = rows.shape
    cdf = np.cumsum(rows, axis=1)
    cdf /= cdf[:, -1:]
    shift = 2.0 * np.arange(count)[:, None]
    found = np.searchsorted((cdf + shift).ravel(), (rng.random((count, num_samples)) + shift)
                            .ravel(), side="right").reshape(count, num_samples)
    indices = found - categories * np.arange(count)[:, None]
    # (a u rounded up to the row's end would fall past it: onto the last category of weight > 0)
    last = categories - 1 - np.argmax(rows[:, ::-1] > 0, axis=1)
    return np.minimum(indices, last[:, None])


def _probability(op: str, p: float) -> float:
    if not isinstance(p, (bool, int, float, np.number, np.bool_)):
        raise TypeError(f"{op}(): argument 'p' must be float, not {type(p).__name__}")
    if not 0 <= p <= 1:
        raise RuntimeError(f"{op} expects p to be in [0, 1], but got p={p}")
    return float(p)


def _draws(rng, probabilities) -> np.ndarray:
    """1 with each probability, else 0: a uniform number below it."""
    return rng.random(np.shape(probabilities)) < probabilities


def bernoulli(input, p=None, *, generator=None) -> Tensor:
    """0s and 1s in input's dtype, each 1 with probability the input's element (a float tensor),
    or with the number ``p`` for every element, drawn from the package generator (``generator=``).
    A random draw: no gradient."""
    op = "bernoulli"
    if not isinstance(input, Tensor):
        raise TypeError(f"{op}(): argument 'input' must be Tensor, not {type(input).__name__}")
    rng = check_generator(op, generator) or DEFAULT_GENERATOR
    if p is not None:
        p = _probability(op, p)
        probabilities = np.full(input.shape, p)
    else:
        if input.dtype.kind != "f":
            raise NotImplementedError(f"{op}: \"bernoulli_tensor_cpu_p_\" not implemented for "
                                      f"{input.dtype} probabilities (expected a float tensor)")
        probabilities = input._data
        if probabilities.size and not ((probabilities >= 0) & (probabilities <= 1)).all():
            raise RuntimeError(f"{op}: expected every probability in input to be in [0, 1] "
                               f"(NaN is not)")
    return Tensor._make(_draws(rng, probabilities).astype(input.dtype), None)


def bernoulli_(input, p=0.5, *, generator=None) -> Tensor:
    """In place: each element becomes 1 with probability ``p`` (a number, or a float tensor
    that broadcasts to input's shape), else 0, in input's dtype; returns input."""
    op = "bernoulli_"
    rng = check_generator(op, generator) or DEFAULT_GENERATOR
    if isinstance(p, Tensor):
        if p.dtype.kind != "f":
            raise NotImplementedError(f"{op}: \"bernoulli_tensor_cpu_p_\" not implemented for "
                                      f"{p.dtype} probabilities (expected a float tensor)")
        try:
            fits = np.broadcast_shapes(input.shape, p.shape) == tuple(input.shape)
        except ValueError:
            fits = False
        if not fits:
            raise RuntimeError(f"{op}: p of shape {tuple(p.shape)} does not expand to the "
                               f"input's shape {tuple(input.shape)}")
        probabilities = np.broadcast_to(p._data, input.shape)
        if probabilities.size and not ((probabilities >= 0) & (probabilities <= 1)).all():
            raise RuntimeError(f"{op}: expected every probability in p to be in [0, 1]")
    else:
        probabilities = np.full(input.shape, _probability(op, p))
    return input.copy_(Tensor._make(_draws(rng, probabilities).astype(input.dtype), None))
