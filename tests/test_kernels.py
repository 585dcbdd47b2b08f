"""Every faster kernel in fast/ against its reference in ops/, and the switch between them.

The cases come from tests/kernel_cases_*.py: each module's ``CASES`` maps a kernel's name to a
list of ``(case id, args, kwargs)`` — shapes, dtypes, padding, ties and NaN as that kernel meets
them. Every kernel ``fast/`` replaces must have cases here, so no replacement goes untested.
"""
import importlib
import pathlib

import numpy as np
import pytest

import tinygrad_pool
from tinygrad_pool import kernels

_HERE = pathlib.Path(__file__).parent
CASES = {}
for _path in sorted(_HERE.glob("kernel_cases_*.py")):
    for _name, _cases in importlib.import_module(_path.stem).CASES.items():
        CASES.setdefault(_name, []).extend(_cases)

PARAMS = [pytest.param(name, args, kwargs, id=f"{name}-{case}")
          for name in sorted(CASES) for case, args, kwargs in CASES[name]]


def _copy(value):
    if isinstance(value, np.ndarray):
        return value.copy()
    if isinstance(value, (tuple, list)):
        return type(value)(_copy(v) for v in value)
    return value


def _same(got, expected, where: str) -> None:
    if isinstance(expected, (tuple, list)):
        assert isinstance(got, (tuple, list)) and len(got) == len(expected), where
        for k, (g, e) in enumerate(zip(got, expected)):
            _same(g, e, f"{where}[{k}]")
        return
    if not isinstance(expected, np.ndarray):  # None, a number, a shape
        assert not isinstance(got, np.ndarray) and got == expected, where
        return
    assert isinstance(got, np.ndarray), where
    assert got.shape == expected.shape and got.dtype == expected.dtype, \
        f"{where}: {got.dtype}{got.shape} vs the reference's {expected.dtype}{expected.shape}"
    if expected.dtype.kind == "f":
        rtol = 1e-5 if expected.dtype == np.float32 else 1e-12
        scale = np.abs(np.nan_to_num(expected, posinf=0, neginf=0)).max(initial=1.0)
        np.testing.assert_allclose(got, expected, rtol=rtol, atol=rtol * scale, equal_nan=True,
                                   err_msg=where)
    else:
        np.testing.assert_array_equal(got, expected, err_msg=where)


def test_every_replacement_has_cases_and_a_reference():
    assert kernels.replaced(), "fast/ registers no kernel"
    for name in kernels.replaced():
        assert name in kernels.names(), f"fast/ replaces {name!r}, which no op declares"
        assert CASES.get(name), f"no cases for the fast kernel {name!r} (tests/kernel_cases_*.py)"


@pytest.mark.parametrize("name, args, kwargs", PARAMS)
def test_fast_kernel_equals_its_reference(name, args, kwargs):
    reference, fast = kernels.implementations(name)
    if fast is None:
        pytest.fail(f"cases for {name!r}, which fast/ does not replace")
    before = _copy(args)
    expected = reference(*_copy(args), **kwargs)
    got = fast(*args, **kwargs)
    _same(got, expected, name)
    _same(args, before, f"{name}: its arguments")  # a kernel never writes into its inputs


def test_the_switch_runs_the_references_and_back():
    assert tinygrad_pool.get_kernels() in ("fast", "reference")
    before = tinygrad_pool.get_kernels()
    try:
        tinygrad_pool.set_kernels("reference")
        assert tinygrad_pool.get_kernels() == "reference"
        for name in kernels.names():
            assert kernels.running(name) is kernels.implementations(name)[0]
        tinygrad_pool.set_kernels("fast")
        for name in kernels.replaced():
            assert kernels.running(name) is kernels.implementations(name)[1]
    finally:
        tinygrad_pool.set_kernels(before)


def test_a_mode_that_does_not_exist_is_refused_and_changes_nothing():
    before = tinygrad_pool.get_kernels()
    with pytest.raises(ValueError, match="set_kernels: mode must be one of 'fast', 'reference', "
                                         "got 'slow'"):
        tinygrad_pool.set_kernels("slow")
    assert tinygrad_pool.get_kernels() == before


def test_the_environment_variable_chooses_at_start_up():
    import subprocess
    import sys
    code = "import tinygrad_pool; print(tinygrad_pool.get_kernels())"
    for mode in ("reference", "fast"):
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                             env={"TINYGRAD_POOL_KERNELS": mode, "PATH": ""}, cwd=_HERE.parent)
        assert out.stdout.strip() == mode, out.stderr
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         env={"TINYGRAD_POOL_KERNELS": "slow", "PATH": ""}, cwd=_HERE.parent)
    assert out.returncode != 0 and "TINYGRAD_POOL_KERNELS" in out.stderr
