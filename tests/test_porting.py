"""The porting contract: a PyTorch training script runs under tinygrad_pool once its import lines
change, and prints the same numbers.

Each script in tests/porting/ is plain PyTorch. It runs twice in a fresh interpreter: as written
(under torch), and with only its import lines rewritten to tinygrad_pool. Every number the two
runs print must agree: float32 scripts to 1e-5 relative, the float64 one to 1e-10.

Dropout draws its masks from each framework's own generator, which cannot agree; for the one
script that uses it, both runs take their masks from the same NumPy stream (a few lines put in
front of the script, patching ``nn.functional.dropout`` in both), so that everything else can be
compared exactly.
"""
import re
import subprocess
import sys
from pathlib import Path

import pytest

SCRIPTS = Path(__file__).resolve().parent / "porting"
TOLERANCE = {  # relative; the float64 script is held to float64 precision
    "manual_sgd_no_grad.py": 1e-10,
}
FLOAT32 = 1e-5

IMPORTS = [  # torch's import line -> tinygrad_pool's (the only change a port makes)
    (r"^import torch$", "import tinygrad_pool as torch"),
    (r"^import torch\.nn as nn$", "import tinygrad_pool.nn as nn"),
    (r"^import torch\.nn\.functional as F$", "import tinygrad_pool.nn.functional as F"),
    (r"^from torch import (.+)$", r"from tinygrad_pool import \1"),
    (r"^from torch\.utils\.data import (.+)$", r"from tinygrad_pool.utils.data import \1"),
    (r"^from torch\.optim\.lr_scheduler import (.+)$",
     r"from tinygrad_pool.optim.lr_scheduler import \1"),
]

SHARED_DROPOUT = '''
import numpy as _np
import {package}.nn.functional as _F
_masks = _np.random.default_rng(1234)
def _dropout(input, p=0.5, training=True, inplace=False, **options):
    if not training or p == 0:
        return input
    keep = _masks.random(tuple(input.shape)) >= p
    return input * {package}.tensor(keep.astype(_np.float32) / (1 - p))
_F.dropout = _dropout
'''


def port(source: str) -> str:
    """The script with its torch import lines pointed at tinygrad_pool; nothing else changes."""
    lines = []
    for line in source.splitlines():
        for pattern, replacement in IMPORTS:
            if re.match(pattern, line):
                line = re.sub(pattern, replacement, line)
                break
        lines.append(line)
    return "\n".join(lines) + "\n"


def with_shared_dropout(source: str, package: str) -> str:
    """The preamble goes after the script's imports (its own ``import torch`` comes first)."""
    lines = source.splitlines()
    last_import = max(i for i, line in enumerate(lines) if line.startswith(("import ", "from ")))
    preamble = f"import {package}\n" + SHARED_DROPOUT.format(package=package)
    return "\n".join(lines[:last_import + 1] + [preamble] + lines[last_import + 1:]) + "\n"


def run(source: str, tmp_path: Path, name: str) -> str:
    path = tmp_path / name
    path.write_text(source)
    work = tmp_path / (name + ".files")
    work.mkdir()
    done = subprocess.run([sys.executable, str(path), str(work)], capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 0, f"{name} failed:\n{done.stderr[-3000:]}"
    return done.stdout


NUMBER = re.compile(r"-?\d+(?:\.\d+)?(?:e[-+]?\d+)?")


def numbers(output: str) -> list:
    """(line label, value) for every number printed, in order."""
    found = []
    for line in output.splitlines():
        label = NUMBER.sub("#", line)
        found += [(label, float(n)) for n in NUMBER.findall(line)]
    return found


def test_port_changes_import_lines_only():
    for script in SCRIPTS.glob("*.py"):
        source = script.read_text()
        ported = port(source)
        changed = [(a, b) for a, b in zip(source.splitlines(), ported.splitlines()) if a != b]
        assert changed, f"{script.name}: no import line was rewritten"
        assert all(a.startswith(("import torch", "from torch")) for a, _ in changed)
        assert "torch." not in "".join(b for _, b in changed).replace("as torch", "")


@pytest.mark.parametrize("script", sorted(p.name for p in SCRIPTS.glob("*.py")))
def test_script_prints_the_same_numbers_as_under_pytorch(torch, script, tmp_path):
    source = (SCRIPTS / script).read_text()
    ported = port(source)
    if "Dropout" in source:
        source, ported = (with_shared_dropout(source, "torch"),
                          with_shared_dropout(ported, "tinygrad_pool"))
    expected = numbers(run(source, tmp_path, "torch_" + script))
    got = numbers(run(ported, tmp_path, "ours_" + script))
    assert [label for label, _ in got] == [label for label, _ in expected]
    rtol = TOLERANCE.get(script, FLOAT32)
    for (label, value), (_, reference) in zip(got, expected):
        assert value == pytest.approx(reference, rel=rtol, abs=rtol * 1e-3), (label, got, expected)
