"""The porting contract: a PyTorch training script runs under tinygrad_pool once its import lines
change, and prints the same numbers.

Each script in tests/porting/ is plain PyTorch. It runs twice in a fresh interpreter: as written
(under torch), and with only its import lines rewritten to tinygrad_pool (``import torch.X.Y as Z``
and ``from torch.X import ...`` point at the tinygrad_pool module of the same path). Every number
the two runs print must agree: float32 scripts to 1e-5 relative, the float64 one to 1e-10; the
text around the numbers must agree exactly.

Random draws (dropout masks, ``randn``, ``normal_`` ...) come from each framework's own generator,
which cannot agree. For the scripts that draw (RANDOM_NAMES), both runs take them from the same
NumPy stream instead: a few lines put in front of the script replace those functions in both
frameworks, so that everything else can be compared exactly. Only what a script calls itself
may draw from them: torch's own callers of these names would take numbers from the stream that
tinygrad_pool's do not (nn.Embedding initialises through ``nn.init.normal_``, and
``DataLoader(shuffle=True)`` orders through ``torch.randperm``), so such scripts do without them.
"""
import os
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
    # import torch.optim as optim, import torch.utils.data, import torch.nn.parallel ...: the
    # module of the same path (a line without "as" binds the name tinygrad_pool, which is why
    # the scripts also import torch itself, as the examples they follow do)
    (r"^import torch\.([\w.]+)( as \w+)?$", r"import tinygrad_pool.\1\2"),
    # from torch import nn, optim; from torch.utils.data import DataLoader ...
    (r"^from torch(\.[\w.]+)? import (.+)$", r"from tinygrad_pool\1 import \2"),
]

# A script that calls one of these draws random numbers, and gets the shared stream below.
RANDOM_NAMES = re.compile(r"\b(Dropout2?d?|dropout2?d?|randn|randn_like|randperm|normal_)\b")

SHARED_RANDOM = '''
import numpy as _np
import {package}
import {package}.nn.functional as _F
import {package}.nn.init as _init
_draws = _np.random.default_rng(1234)
def _dropout(input, p=0.5, training=True, inplace=False, **options):
    if not training or p == 0:
        return input
    keep = _draws.random(tuple(input.shape)) >= p
    return input * {package}.tensor(keep.astype(_np.float32) / (1 - p))
def _dropout2d(input, p=0.5, training=True, inplace=False, **options):
    if not training or p == 0:
        return input
    keep = _draws.random(tuple(input.shape[:2]) + (1,) * (input.dim() - 2)) >= p
    return input * {package}.tensor(keep.astype(_np.float32) / (1 - p))
def _randn(*size, dtype=None, requires_grad=False, **options):
    shape = tuple(size[0]) if len(size) == 1 and not isinstance(size[0], int) else size
    dtype = {package}.get_default_dtype() if dtype is None else dtype
    values = _draws.standard_normal(shape)
    return {package}.tensor(values, dtype=dtype, requires_grad=requires_grad)
def _randn_like(input, *, dtype=None, requires_grad=False, **options):
    return _randn(tuple(input.shape), dtype=input.dtype if dtype is None else dtype,
                  requires_grad=requires_grad)
def _randperm(n, **options):
    return {package}.tensor(_draws.permutation(n))
def _normal_(self, mean=0.0, std=1.0, *args, **options):
    values = mean + std * _draws.standard_normal(tuple(self.shape))
    with {package}.no_grad():
        self.copy_({package}.tensor(values, dtype=self.dtype))
    return self
_F.dropout, _F.dropout2d = _dropout, _dropout2d
{package}.randn, {package}.randn_like, {package}.randperm = _randn, _randn_like, _randperm
{package}.Tensor.normal_ = _init.normal_ = _normal_
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


def with_shared_random(source: str, package: str) -> str:
    """The preamble goes just before the script's first import of the framework (after any
    ``from __future__`` line, and before the script can draw)."""
    lines = source.splitlines()
    first = next(i for i, line in enumerate(lines)
                 if re.match(rf"(import|from) {package}\b", line))
    preamble = SHARED_RANDOM.format(package=package)
    return "\n".join(lines[:first] + [preamble] + lines[first:]) + "\n"


def run(source: str, tmp_path: Path, name: str) -> str:
    path = tmp_path / name
    path.write_text(source)
    work = tmp_path / (name + ".files")
    work.mkdir()
    # One thread each: the tensors are small, and on shared cores torch's thread pool only adds
    # waiting (its results do not depend on the thread count beyond rounding).
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    done = subprocess.run([sys.executable, str(path), str(work)], capture_output=True,
                          text=True, timeout=300, env=env)
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
    if RANDOM_NAMES.search(source):
        source, ported = (with_shared_random(source, "torch"),
                          with_shared_random(ported, "tinygrad_pool"))
    expected = numbers(run(source, tmp_path, "torch_" + script))
    got = numbers(run(ported, tmp_path, "ours_" + script))
    assert [label for label, _ in got] == [label for label, _ in expected]
    rtol = TOLERANCE.get(script, FLOAT32)
    for (label, value), (_, reference) in zip(got, expected):
        assert value == pytest.approx(reference, rel=rtol, abs=rtol * 1e-3), (label, got, expected)


@pytest.mark.parametrize("line, expected", [
    ("import torch", "import tinygrad_pool as torch"),
    ("import torch.nn as nn", "import tinygrad_pool.nn as nn"),
    ("import torch.optim as optim", "import tinygrad_pool.optim as optim"),
    ("import torch.utils.data", "import tinygrad_pool.utils.data"),
    ("import torch.backends.cudnn as cudnn", "import tinygrad_pool.backends.cudnn as cudnn"),
    ("from torch import nn, optim", "from tinygrad_pool import nn, optim"),
    ("from torch.nn import functional as F", "from tinygrad_pool.nn import functional as F"),
    ("from torch.optim.lr_scheduler import StepLR",
     "from tinygrad_pool.optim.lr_scheduler import StepLR"),
    # not torch's: left alone
    ("import torchvision", "import torchvision"),
    ("from torchvision import datasets", "from torchvision import datasets"),
    ("import numpy as torch_np", "import numpy as torch_np"),
    ("    import torch", "    import torch"),  # indented: not an import line of the script's own
])
def test_port_rewrites_each_import_form(line, expected):
    assert port(line) == expected + "\n"


def test_shared_random_goes_before_the_first_framework_import():
    source = 'from __future__ import annotations\nimport numpy\nimport torch\nx = torch.randn(2)\n'
    lines = with_shared_random(source, "torch").splitlines()
    assert lines[:2] == ["from __future__ import annotations", "import numpy"]
    assert "_draws = _np.random.default_rng(1234)" in lines[2:-2]
    assert lines[-2:] == ["import torch", "x = torch.randn(2)"]
    assert RANDOM_NAMES.search(source) and not RANDOM_NAMES.search("nn.init.kaiming_normal_(w)")
