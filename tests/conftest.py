"""Shared fixtures. Parity tests take the ``torch`` fixture, so without PyTorch they skip one by
one while every other test in the same file still runs."""
import numpy as np
import pytest


@pytest.fixture
def torch():
    """The torch module, or a skip when PyTorch is not installed."""
    torch = pytest.importorskip("torch")
    return torch


@pytest.fixture
def rng():
    """A seeded generator: every test sees the same 'random' numbers on every run."""
    return np.random.default_rng(20240607)
