"""Shared fixtures. Parity tests take the ``torch`` fixture, so without PyTorch they skip one by
one while every other test in the same file still runs.

Hypothesis draws the same examples on every run (``derandomize``): a parity test that fails,
fails for everyone, and CI never meets an example nobody has seen. To search for new ones, run
with ``HYPOTHESIS_PROFILE=explore`` (random draws, remembered in .hypothesis/)."""
import os

import numpy as np
import pytest
from hypothesis import settings

settings.register_profile("fixed", derandomize=True)
settings.register_profile("explore", derandomize=False)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "fixed"))


@pytest.fixture
def torch():
    """The torch module, or a skip when PyTorch is not installed."""
    torch = pytest.importorskip("torch")
    return torch


@pytest.fixture
def rng():
    """A seeded generator: every test sees the same 'random' numbers on every run."""
    return np.random.default_rng(20240607)


def pytest_terminal_summary(terminalreporter):
    """Skips, one line per reason (not one per test): a skip here is something this machine
    lacks (PyTorch, Graphviz, Chromium...), and `make test` installs all of it, so each line
    names what is missing."""
    reasons = {}
    for report in terminalreporter.stats.get("skipped", []):
        reason = report.longrepr[2] if isinstance(report.longrepr, tuple) else str(report.longrepr)
        reason = reason.removeprefix("Skipped: ")
        reasons[reason] = reasons.get(reason, 0) + 1
    if reasons:
        terminalreporter.section("skipped, by reason")
        for reason, count in sorted(reasons.items(), key=lambda item: -item[1]):
            terminalreporter.write_line(f"{count:5d} skipped: {reason}")
