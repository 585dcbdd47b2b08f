"""tinygrad_pool.Generator against torch.Generator: seeds and initial_seed, seed(), get_state /
set_state, the default generator behind manual_seed, and every generator= argument: the same
seed gives the same draws, another seed others, and the default stream is left alone."""
import copy
import pickle

import numpy as np
import pytest

import tinygrad_pool
import tinygrad_pool.nn.functional as F
from tinygrad_pool import Generator, nn, tensor
from tinygrad_pool.nn import init
from tinygrad_pool.utils.data import (DataLoader, RandomSampler, SubsetRandomSampler,
                                      TensorDataset, random_split)


# ---- seeds -----------------------------------------------------------------------------------
def test_a_new_generator_starts_from_torchs_fixed_seed(torch):
    assert Generator().initial_seed() == torch.Generator().initial_seed() == 67280421310721
    first = Generator().random(4)
    np.testing.assert_array_equal(first, Generator().random(4))  # repeatable, as torch's
    assert str(Generator().device) == str(torch.Generator().device) == "cpu"
    assert Generator(device="cpu").device == tinygrad_pool.device("cpu")


@pytest.mark.parametrize("seed", [0, 5, 2 ** 32 + 1, 2 ** 63, 2 ** 64 - 1, -1, -2 ** 63,
                                  np.int64(9)])
def test_manual_seed_returns_the_generator_and_sets_initial_seed_as_torch(torch, seed):
    ours, theirs = Generator(), torch.Generator()
    assert ours.manual_seed(seed) is ours and theirs.manual_seed(int(seed)) is theirs
    assert ours.initial_seed() == theirs.initial_seed()


@pytest.mark.parametrize("seed", [2.5, True, "7", None, 2 ** 64, -2 ** 63 - 1])
def test_manual_seed_refuses_what_torch_refuses_with_its_error_type(torch, seed):
    with pytest.raises(Exception) as theirs:
        torch.Generator().manual_seed(seed)
    with pytest.raises(type(theirs.value), match=r"Generator\.manual_seed: seed must"):
        Generator().manual_seed(seed)


def test_one_seed_one_stream_another_seed_another():
    a, b = Generator().manual_seed(11), Generator().manual_seed(11)
    np.testing.assert_array_equal(a.random(6), b.random(6))
    assert not np.array_equal(a.random(6), a.random(6))  # the stream moves on
    assert not np.array_equal(Generator().manual_seed(12).random(6),
                              Generator().manual_seed(11).random(6))
    # manual_seed(s) draws as np.random.default_rng(s): the same seeding as before Generators
    np.testing.assert_array_equal(Generator().manual_seed(3).standard_normal(5),
                                  np.random.default_rng(3).standard_normal(5))


def test_seed_is_non_deterministic_and_becomes_the_initial_seed():
    g = Generator()
    first = g.seed()
    assert isinstance(first, int) and 0 <= first < 2 ** 64 and g.initial_seed() == first
    draws = g.random(3)
    np.testing.assert_array_equal(draws, Generator().manual_seed(first).random(3))
    assert g.seed() != first  # (64 random bits twice alike: never in practice)


# ---- state -----------------------------------------------------------------------------------
def test_get_state_is_a_uint8_tensor_and_set_state_resumes_the_stream_as_torch(torch):
    g = Generator().manual_seed(3)
    g.random(5)
    state = g.get_state()
    assert isinstance(state, tinygrad_pool.Tensor) and state.dtype == np.uint8 and state.ndim == 1
    after = g.random(7)
    g.manual_seed(99).random(2)
    assert g.set_state(state) is g
    np.testing.assert_array_equal(g.random(7), after)
    assert g.initial_seed() == 3  # restored with the state, as torch's
    theirs = torch.Generator().manual_seed(3)
    saved = theirs.get_state()
    theirs.manual_seed(99)
    assert theirs.set_state(saved) is theirs and theirs.initial_seed() == 3


def test_the_state_is_a_copy_and_moves_between_generators():
    g = Generator().manual_seed(8)
    state = g.get_state()
    state.numpy()[:] = 0  # writing into the copy does not touch the generator
    np.testing.assert_array_equal(g.random(3), Generator().manual_seed(8).random(3))
    other = Generator().set_state(g.get_state())
    np.testing.assert_array_equal(other.random(4), g.random(4))
    # a stream in the middle of a 32-bit pair (PCG64 caches one half) is restored exactly
    g.integers(0, 10, dtype=np.int32)
    np.testing.assert_array_equal(Generator().set_state(g.get_state()).integers(
        0, 10, size=5, dtype=np.int32), g.integers(0, 10, size=5, dtype=np.int32))


def test_set_state_refuses_what_torch_refuses_with_its_error_type(torch):
    for bad, theirs_bad in ((np.zeros(48, np.uint8), [1, 2]),
                            (tensor(np.zeros(48, np.float32)), torch.zeros(5056)),
                            (tensor(np.zeros(3, np.uint8)), torch.zeros(3, dtype=torch.uint8))):
        with pytest.raises(Exception) as theirs:
            torch.Generator().set_state(theirs_bad)
        with pytest.raises(type(theirs.value), match="Generator.set_state: "):
            Generator().set_state(bad)
    g = Generator().manual_seed(1)
    with pytest.raises(RuntimeError, match="expected a state of 48 bytes.*got shape \\(3,\\)"):
        g.set_state(tensor(np.zeros(3, np.uint8)))
    np.testing.assert_array_equal(g.random(2), Generator().manual_seed(1).random(2))


def test_pickle_and_deepcopy_keep_the_class_the_stream_and_the_seed():
    g = Generator().manual_seed(21)
    g.random(3)
    for clone in (pickle.loads(pickle.dumps(g)), copy.deepcopy(g)):
        assert type(clone) is Generator and clone.initial_seed() == 21 and clone is not g
        np.testing.assert_array_equal(clone.random(4), copy.deepcopy(g).random(4))


# ---- the default generator -------------------------------------------------------------------
def test_manual_seed_reseeds_the_one_default_generator_in_place_as_torch(torch):
    default = tinygrad_pool.default_generator
    assert isinstance(default, Generator)
    assert tinygrad_pool.manual_seed(4) is default and torch.manual_seed(4) is \
        torch.default_generator
    assert default.initial_seed() == 4 == torch.initial_seed()
    np.testing.assert_array_equal(tinygrad_pool.rand(5).numpy(),
                                  tinygrad_pool.rand(5, generator=Generator().manual_seed(4))
                                  .numpy())
    assert tinygrad_pool.random.default_generator() is default  # what the package draws from


def test_module_level_state_functions_act_on_the_default_generator():
    random = tinygrad_pool.random
    seed = random.seed()
    assert random.initial_seed() == seed == tinygrad_pool.default_generator.initial_seed()
    state = random.get_rng_state()
    after = tinygrad_pool.randn(4).numpy()
    tinygrad_pool.manual_seed(0)
    random.set_rng_state(state)
    np.testing.assert_array_equal(tinygrad_pool.randn(4).numpy(), after)
    assert random.initial_seed() == seed


# ---- every generator= argument ---------------------------------------------------------------
def _weights(layer) -> np.ndarray:
    return np.concatenate([p.numpy().ravel() for p in layer.parameters()])


def _shuffled(loader) -> np.ndarray:
    return np.concatenate([batch.numpy() for epoch in range(2) for (batch,) in loader])


DATA = TensorDataset(tinygrad_pool.arange(12))

DRAWS = {
    "rand": lambda g: tinygrad_pool.rand(3, 4, generator=g),
    "randn": lambda g: tinygrad_pool.randn(5, generator=g, dtype=tinygrad_pool.float64),
    "randint": lambda g: tinygrad_pool.randint(0, 1000, (6,), generator=g),
    "randperm": lambda g: tinygrad_pool.randperm(20, generator=g),
    "rand_like": lambda g: tinygrad_pool.rand_like(tinygrad_pool.ones(4), generator=g),
    "randn_like": lambda g: tinygrad_pool.randn_like(tinygrad_pool.ones(4), generator=g),
    "Tensor.uniform_": lambda g: tinygrad_pool.zeros(6).uniform_(-1, 1, generator=g),
    "Tensor.normal_": lambda g: tinygrad_pool.zeros(6).normal_(2, 3, generator=g),
    "init.uniform_": lambda g: init.uniform_(tinygrad_pool.zeros(6), generator=g),
    "init.normal_": lambda g: init.normal_(tinygrad_pool.zeros(6), generator=g),
    "init.xavier_uniform_": lambda g: init.xavier_uniform_(tinygrad_pool.zeros(3, 4), generator=g),
    "init.xavier_normal_": lambda g: init.xavier_normal_(tinygrad_pool.zeros(3, 4), generator=g),
    "init.kaiming_uniform_": lambda g: init.kaiming_uniform_(tinygrad_pool.zeros(3, 4),
                                                             generator=g),
    "init.kaiming_normal_": lambda g: init.kaiming_normal_(tinygrad_pool.zeros(3, 4), generator=g),
    "nn.Linear": lambda g: _weights(nn.Linear(3, 4, generator=g)),
    "nn.Conv2d": lambda g: _weights(nn.Conv2d(1, 2, 3, generator=g)),
    "nn.Embedding": lambda g: _weights(nn.Embedding(5, 2, generator=g)),
    "F.dropout": lambda g: F.dropout(tinygrad_pool.ones(20), 0.5, generator=g),
    "nn.Dropout": lambda g: nn.Dropout(0.5, generator=g)(tinygrad_pool.ones(20)),
    "random_split": lambda g: np.concatenate([s.indices for s in random_split(DATA, [5, 7],
                                                                              generator=g)]),
    "RandomSampler": lambda g: list(RandomSampler(DATA, generator=g)),
    "RandomSampler(replacement)": lambda g: list(RandomSampler(DATA, True, 30, generator=g)),
    "SubsetRandomSampler": lambda g: list(SubsetRandomSampler(range(3, 15), generator=g)),
    "DataLoader(shuffle)": lambda g: _shuffled(DataLoader(DATA, batch_size=5, shuffle=True,
                                                          generator=g)),
}


def _array(drawn) -> np.ndarray:
    return drawn.numpy() if isinstance(drawn, tinygrad_pool.Tensor) else np.asarray(drawn)


@pytest.mark.parametrize("name", DRAWS)
def test_every_generator_argument_takes_a_generator_and_is_reproducible(name):
    draw = DRAWS[name]
    tinygrad_pool.manual_seed(0)
    default_state = tinygrad_pool.default_generator.get_state().numpy().copy()
    first = _array(draw(Generator().manual_seed(7)))
    np.testing.assert_array_equal(_array(draw(Generator().manual_seed(7))), first)
    assert not np.array_equal(_array(draw(Generator().manual_seed(8))), first)
    seeded = Generator().manual_seed(7)
    draw(seeded)
    assert not np.array_equal(_array(draw(seeded)), first)  # the generator's stream moved on
    # the default generator was not drawn from
    np.testing.assert_array_equal(tinygrad_pool.default_generator.get_state().numpy(),
                                  default_state)


@pytest.mark.parametrize("name", DRAWS)
def test_without_a_generator_the_default_one_is_drawn_from(name):
    """Each draw with generator=None equals the one with a Generator seeded alike: the default
    generator is a Generator, and manual_seed seeds it as manual_seed seeds any."""
    draw = DRAWS[name]
    tinygrad_pool.manual_seed(5)
    expected = _array(draw(Generator().manual_seed(5)))
    np.testing.assert_array_equal(_array(draw(None)), expected)


@pytest.mark.parametrize("make", [lambda g: tinygrad_pool.rand(2, generator=g),
                                  lambda g: tinygrad_pool.randint(3, (2,), generator=g),
                                  lambda g: tinygrad_pool.randperm(3, generator=g),
                                  lambda g: tinygrad_pool.randn_like(tinygrad_pool.ones(2),
                                                                     generator=g),
                                  lambda g: DataLoader(DATA, shuffle=True, generator=g)])
def test_a_generator_argument_of_another_type_is_torchs_type_error(make):
    with pytest.raises(TypeError, match="generator must be a numpy.random.Generator or a "
                                        "tinygrad_pool.Generator.*got int"):
        make(7)
