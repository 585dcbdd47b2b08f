"""The pool of reused memory (tinygrad_pool/fast/memory.py): a block is handed out again only
once nothing refers to it, so reuse may change how fast a step runs, never what it computes,
and never hands out memory that something else still reads."""
import sys
import threading
import weakref

import numpy as np
import pytest

import tinygrad_pool.nn.functional as F
from tinygrad_pool import Tensor, tensor
from tinygrad_pool.fast import memory

BIG = (128, 128)  # 128 KiB in float64: above SCRATCH_MIN_BYTES, so it comes from the pool


@pytest.fixture(autouse=True)
def empty_pool():
    """Each test starts (and leaves the others) with no kept blocks on this thread."""
    memory._per_thread.__dict__.clear()
    yield
    memory._per_thread.__dict__.clear()


def blocks() -> list:
    return list(memory._blocks())


def kept() -> list:
    """The free blocks' memory: what the pool would hand out now."""
    return [b.memory for b in memory._blocks() if b.free]


def _address(array) -> int:
    return array.__array_interface__["data"][0]


def test_a_block_is_handed_out_again_only_once_every_view_of_it_is_gone():
    out = memory.take(BIG, np.float64)
    assert out.base is not None and out.flags.c_contiguous and out.flags.writeable
    first = _address(out)
    out.fill(1.0)
    row = out[3].reshape(2, 64)  # a view of a view, held; the array itself dropped
    del out
    second = memory.take(BIG, np.float64)
    assert not np.shares_memory(second, row) and _address(second) != first
    second.fill(2.0)
    assert (row == 1.0).all()
    del row  # now nothing of the first array is left
    assert _address(memory.take(BIG, np.float64)) == first
    held = second.T  # the second stays held through a transposed view
    del second
    assert not np.shares_memory(memory.take(BIG, np.float64), held)


def test_a_free_block_serves_any_shape_and_dtype_that_fills_at_least_half_of_it():
    first = memory.take(BIG, np.float64)  # 128 KiB
    address = _address(first)
    del first
    other = memory.take((64, 2, 128), np.float32)  # 64 KiB, another shape and dtype: half
    assert _address(other) == address and other.shape == (64, 2, 128) and other.dtype == np.float32
    del other
    small = memory.take((100, 100), np.float32)  # 39 KiB: under SCRATCH_MIN_BYTES, malloc's
    assert small.base is None
    quarter = memory.take((80, 128), np.float64)  # 80 KiB: fits, and fills more than half
    assert _address(quarter) == address
    bigger = memory.take((129, 128), np.float64)  # more than the block: a new block
    assert _address(bigger) != address and len(blocks()) == 2


def test_the_smallest_free_block_that_fits_is_taken():
    large, medium = memory.take((200, 128), np.float64), memory.take(BIG, np.float64)
    addresses = _address(large), _address(medium)
    del large, medium
    assert _address(memory.take((120, 128), np.float64)) == addresses[1]


def test_blocks_in_use_are_never_handed_out_twice():
    arrays = [memory.take(BIG, np.float64) for _ in range(12)]
    for a in arrays:
        for b in arrays:
            assert a is b or not np.shares_memory(a, b)
    assert len(blocks()) == 12 and kept() == []


def test_kept_bytes_are_capped_and_the_block_handed_out_longest_ago_goes_first(monkeypatch):
    nbytes = 8 * BIG[0] * BIG[1]
    monkeypatch.setattr(memory, "MAX_KEPT_BYTES", 2 * nbytes + 4096)  # room for two blocks
    outs = [memory.take(BIG, np.float64) for _ in range(4)]
    assert [a.base is not None for a in outs] == [True, True, False, False]  # 3rd, 4th: malloc's
    (oldest,) = [b for b in blocks() if np.shares_memory(b.memory, outs[0])]
    (newest,) = [b for b in blocks() if np.shares_memory(b.memory, outs[1])]
    del outs
    other = memory.take((130, 128), np.float64)  # fits no block: the oldest free one goes
    assert other.base is not None and len(blocks()) == 2
    assert not any(b is oldest for b in blocks()) and any(b is newest for b in blocks())
    assert sum(b.size for b in blocks()) <= memory.MAX_KEPT_BYTES


def test_a_block_is_free_exactly_when_its_lease_is_deallocated():
    """What frees a block is the deallocation of the last array made from it (its lease), not
    a reference count read by the pool: a view kept only inside a reference cycle holds the
    block until the cycle is collected."""
    out = memory.take(BIG, np.float64)
    (block,) = blocks()
    assert not block.free
    cycle = [out[::2]]
    cycle.append(cycle)
    del out
    assert not block.free  # the cycle still holds a view
    del cycle
    import gc
    gc.collect()
    assert block.free


def test_each_thread_has_its_own_blocks():
    mine = memory.take(BIG, np.float64)
    address = _address(mine)
    del mine
    seen = []
    thread = threading.Thread(target=lambda: seen.append(_address(memory.take(BIG, np.float64))))
    thread.start()
    thread.join()
    assert seen[0] != address and _address(memory.take(BIG, np.float64)) == address


def test_zeros_from_a_recycled_block_are_zeros():
    dirty = memory.take(BIG, np.float64)
    dirty.fill(7.0)
    address = _address(dirty)
    del dirty
    again = memory.zeros(BIG, np.float64)
    assert _address(again) == address and not again.any()


def test_the_engine_frees_used_gradients_but_never_one_still_held():
    x = tensor(np.linspace(-1, 1, BIG[0] * BIG[1]).reshape(BIG), requires_grad=True)
    hidden = x * 3.0
    hidden.retain_grad()
    seed = np.full(BIG, 0.5)  # the caller's own array
    out = hidden.relu()
    out.backward(seed)
    assert blocks(), "ReLU's output and gradient should have come from the pool"
    assert kept(), "the gradient that Mul received and used up should be free again"
    for held in (seed, x.grad.numpy(), hidden.grad.numpy(), out.numpy()):
        assert not any(np.shares_memory(held, b) for b in kept())
    np.testing.assert_array_equal(hidden.grad.numpy(), np.where(x.numpy() > 0, 0.5, 0.0))
    np.testing.assert_array_equal(x.grad.numpy(), np.where(x.numpy() > 0, 1.5, 0.0))


def test_output_like_follows_the_memory_order_of_its_argument():
    c_n_h_w = np.ones((8, 16, 16, 16), np.float32)  # 128 KiB, laid out (C, N, H, W)
    x = c_n_h_w.transpose(1, 0, 2, 3)  # seen as (N, C, H, W), as a convolution's output is
    out = memory.output_like(x)
    assert out.shape == x.shape and out.strides == x.strides and out.base is not None
    np.testing.assert_array_equal(np.maximum(0, x, out=out), x)
    assert memory.output_like(np.ones((4, 4))) is None  # small: the ufunc allocates
    strided = np.ones((512, 512))[::2, ::2]  # not a permutation of a contiguous array
    odd = memory.output_like(strided)
    assert odd.shape == strided.shape and odd.base is None


def _cnn_step(x, w, v):
    """conv → ReLU → overlapping max-pool → linear, forward and backward; the gradients."""
    xt, wt, vt = (tensor(a, requires_grad=True) for a in (x, w, v))
    h = F.max_pool2d(F.relu(F.conv2d(xt, wt, padding=1)), 3, stride=2)
    (h.reshape(x.shape[0], -1) @ vt).sum().backward()
    return xt.grad.numpy(), wt.grad.numpy(), vt.grad.numpy()


def test_training_steps_on_recycled_buffers_match_steps_on_fresh_memory(rng):
    """Three steps in a row on one thread, buffers recycled from step to step, against each step
    alone on a new thread (an empty pool). The gradients of every step are compared only after
    the last one ran: a buffer handed out while still held would show up as overwritten."""
    shapes = ((16, 3, 24, 24), (8, 3, 3, 3))
    steps = [[rng.standard_normal(s).astype(np.float32) for s in shapes] for _ in range(3)]
    v = rng.standard_normal((8 * 11 * 11, 1)).astype(np.float32)
    recycled = [_cnn_step(x, w, v) for x, w in steps]
    assert kept(), "the steps should have recycled buffers"
    for (x, w), grads in zip(steps, recycled):
        fresh = []
        thread = threading.Thread(target=lambda: fresh.append(_cnn_step(x, w, v)))
        thread.start()
        thread.join()
        for ours, reference in zip(grads, fresh[0]):
            np.testing.assert_array_equal(ours, reference)


# ---- Engine v2 item 5: references of every kind, held across a training run ----------------
# A small CNN (nn.Conv2d → ReLU → MaxPool2d → Flatten → Linear, float32) trains with SGD. At its
# first steps the test grabs everything a user can reach — outputs and their .numpy(),
# leaf .grad (before zero_grad(set_to_none=True) drops it), what the conv and max-pool nodes
# saved (through saved_for_backward() and through attributes, before the backward that releases
# them), the indices of return_indices=True, state_dict() values (the parameters' own memory,
# as torch's), the arrays passed as gradient= — and keeps a private copy of each. After all the
# steps every held array must equal its copy, or, where torch says the value changes, have
# changed exactly as torch's does; and no
# held array may ever go into or come out of the scratch pool, or share memory with anything the
# later steps made. Most held arrays are above SCRATCH_MIN_BYTES, so candidates for reuse: the
# input (32·1·28·28·4 = 100 KiB), conv and ReLU outputs (800 KiB), pooled
# output and argmax (200 KiB), indices (400 KiB), the Linear weight and its gradient (100 KiB),
# the input's and the ReLU output's gradients (biases, the conv weight and logits are small).

from collections import OrderedDict
from types import SimpleNamespace

from tinygrad_pool import nn, optim
from tinygrad_pool.fast import conv as fast_conv
from tinygrad_pool.fast import pool as fast_pool

BATCH, CHANNELS, SIDE, CLASSES = 32, 8, 28, 16
HIDDEN = CHANNELS * (SIDE // 2) ** 2
STEPS, GRAB_STEPS = 30, (0, 1, 2)
LR, PENALTY = 2e-3, 1e-4


class _SmallCNN(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(1, CHANNELS, 3, padding=1)
        self.relu = nn.ReLU()
        self.pool = nn.MaxPool2d(2, return_indices=True)
        self.flatten = nn.Flatten()
        self.fc = nn.Linear(HIDDEN, CLASSES)


def _training_data():
    rng = np.random.default_rng(5)
    weights = OrderedDict([
        ("conv.weight", rng.standard_normal((CHANNELS, 1, 3, 3)) / 3),
        ("conv.bias", rng.standard_normal(CHANNELS) * 0.1),
        ("fc.weight", rng.standard_normal((CLASSES, HIDDEN)) / np.sqrt(HIDDEN)),
        ("fc.bias", rng.standard_normal(CLASSES) * 0.1)])
    weights = OrderedDict((k, v.astype(np.float32)) for k, v in weights.items())
    xs = [rng.standard_normal((BATCH, 1, SIDE, SIDE)).astype(np.float32) for _ in range(STEPS)]
    targets = [rng.standard_normal((BATCH, CLASSES)).astype(np.float32) for _ in range(STEPS)]
    return weights, xs, targets


def _array_of(obj) -> np.ndarray:
    return obj.numpy() if isinstance(obj, Tensor) else obj


def _a_view(array) -> np.ndarray:
    """Every other element along ``array``'s longest axis: a strided view, never a copy (a
    gradient can be in Fortran order, where reshape(-1) would copy)."""
    axis = int(np.argmax(array.shape))
    view = array[(slice(None),) * axis + (slice(1, None, 2),)]
    assert view.size and view.base is not None and np.shares_memory(view, array)
    return view


class _Held:
    """What the user holds, each with a private copy made when it was grabbed, and how its value
    may change afterwards:
      "same"    never changes;
      "doubled" a leaf's .grad grabbed after the first of two backward passes: the second one
                accumulates into the same memory (torch's AccumulateGrad adds in place too), so
                it ends as exactly twice its copy;
      "param"   the parameter's own memory (p.numpy(), p.numpy(), state_dict() values, the weight
                a conv node saved): as in torch it follows the optimizer, ending equal to the
                parameter after the last step (replayed by the test on copies).
    Holding: step 0 holds things as returned (Tensors, .numpy(), saved_for_backward() values),
    step 1 through .numpy() and node attributes, step 2 only views of them."""

    def __init__(self):
        self.entries, self.clashes, self.step = [], [], None
        self.pool_traffic = 0  # arrays the spy saw the pool hand out

    def hold(self, name, obj, expect="same", param=None, viewed=False):
        array = _array_of(obj)
        assert isinstance(array, np.ndarray) and array.size
        self.entries.append(SimpleNamespace(
            name=f"step {self.step}: {name}", obj=obj, copy=array.copy(), expect=expect,
            param=param, viewed=viewed, step=self.step, array_id=id(array)))

    def keep(self, name, obj, expect="same", param=None):
        """Hold a Tensor (or array) as this step does (see the class docstring)."""
        if self.step == 0:
            if isinstance(obj, Tensor):
                self.hold(name + " (the Tensor)", obj, expect, param)
                self.hold(name + " .numpy()", obj.numpy(), expect, param)
            else:
                self.hold(name, obj, expect, param)
        elif self.step == 1:
            self.hold(name + (" .numpy()" if isinstance(obj, Tensor) else ""),
                      obj.numpy() if isinstance(obj, Tensor) else obj, expect, param)
        else:
            self.hold(name + " (a view only)", _a_view(_array_of(obj)), expect, param, viewed=True)

    def keep_saved(self, fn, label, expect_of=None):
        """Hold what node ``fn`` saved for backward: from saved_for_backward() (step 0), from
        saved_tensors (step 1), or views of those (step 2)."""
        saved = fn.saved_for_backward()
        assert saved
        by_name = dict(zip(fn.saved, fn.saved_tensors))
        for key in sorted(saved):
            expect, param = (expect_of or {}).get(key, ("same", None))
            name = f"{label} saved {key!r}"
            if self.step == 0:
                self.hold(name + " from saved_for_backward()", saved[key], expect, param)
            elif self.step == 1:
                self.hold(name + " as saved_tensors", by_name[key], expect, param)
            else:
                self.hold(name + " (a view only)", _a_view(by_name[key]), expect, param,
                          viewed=True)

    def note_clashes(self, what, arrays: dict, earlier_only=False):
        """Record every held array that shares memory with one of ``arrays``. (Keeps no
        reference to them: one here would change the counts the engine decides by.)"""
        for entry in self.entries:
            if earlier_only and entry.step >= self.step:
                continue
            held = _array_of(entry.obj)
            for label, array in arrays.items():
                if np.may_share_memory(held, array) and np.shares_memory(held, array):
                    self.clashes.append(f"{entry.name} shares memory with {label} ({what})")


def _spy_on_the_pool(monkeypatch, held):
    """Every array the pool hands out is checked against all held arrays, wherever the engine
    calls ``take`` (fast/conv.py and fast/pool.py import it by name; memory.zeros,
    memory.where and memory.output_like look it up in memory)."""
    take = memory.take

    def checked_take(shape, dtype):
        array = take(shape, dtype)
        held.pool_traffic += 1
        held.note_clashes(f"handed out by the pool at step {held.step}", {"a block": array})
        return array

    for module in (memory, fast_conv, fast_pool):
        monkeypatch.setattr(module, "take", checked_take)


def _train(monkeypatch, data=None, steps=STEPS):
    """STEPS steps of SGD on _SmallCNN, holding references of every kind at GRAB_STEPS.

    Backward runs in two stages, as pipelined training does: the head (max-pool → Linear) from
    the logits with the user's gradient of ½‖logits − target‖²/N, then the features (conv →
    ReLU) with ``gradient=`` the user's own array (the head's gradient at the ReLU output plus
    an activation penalty) — an array of a shape the pool recycles. At the grab steps each stage
    runs twice (retain_graph=True first), so that what the nodes saved can be grabbed before
    the backward that releases them, and so that leaf gradients accumulate.
    Returns (held, model, expected parameters after the last step)."""
    weights, xs, targets = _training_data() if data is None else data
    model = _SmallCNN()
    model.load_state_dict(weights)
    params = dict(model.named_parameters())
    opt = optim.SGD(model.parameters(), lr=LR)
    expected = {name: p.numpy().copy() for name, p in params.items()}  # SGD replayed on copies
    held = _Held()
    _spy_on_the_pool(monkeypatch, held)
    for step in range(steps):
        held.step, grab = step, step in GRAB_STEPS
        x = tensor(xs[step], requires_grad=True)  # a leaf too: its gradient is a pool buffer
        c = model.conv(x)
        r = model.relu(c)
        r_d = r.detach().requires_grad_()
        p, idx = model.pool(r_d)
        f = model.flatten(p)
        logits = model.fc(f)
        conv_fn, pool_fn = c.grad_fn, p.grad_fn
        assert type(conv_fn).__name__ == "Conv2d" and type(pool_fn).__name__ == "MaxPool2d"
        g_logits = (logits.numpy() - targets[step]) / np.float32(BATCH)  # small (2 KiB)
        held.note_clashes(f"step {step} forward", {
            "conv output": c.numpy(), "relu output": r.numpy(), "pooled output": p.numpy(),
            "indices": idx.numpy(), "logits": logits.numpy(),
            "max-pool argmax": pool_fn.argmax}, earlier_only=True)
        if grab:
            held.keep("user's input array", xs[step])
            for name, t in (("conv output", c), ("relu output", r), ("pooled output", p),
                            ("flattened", f), ("logits", logits),
                            ("indices (return_indices=True)", idx)):
                held.keep(name, t)
            held.keep("gradient= of the head (logits)", g_logits)
            for name, value in model.state_dict().items():
                held.keep(f"state_dict()[{name!r}]", value, "param", name)
            for name, param in params.items():
                held.keep(f"parameter {name}", param, "param", name)

            logits.backward(g_logits, retain_graph=True)
            held.keep_saved(pool_fn, "max-pool node")
            for name in ("fc.weight", "fc.bias"):
                held.keep(f"{name} .grad after 1st backward", params[name].grad, "doubled")
            held.keep("relu-output leaf .grad after 1st backward", r_d.grad, "doubled")
            logits.backward(g_logits)  # releases the max-pool node: its argmax may go back
        else:
            logits.backward(g_logits)

        g_r = r_d.grad.numpy() + np.float32(PENALTY) * r.numpy()  # the user's own array
        gradient = tensor(g_r) if step == 1 else g_r  # step 1 passes it as a Tensor
        if grab:
            held.keep("gradient= of the features", gradient)
            r.backward(gradient=gradient, retain_graph=True)
            held.keep_saved(conv_fn, "conv node", {"weight": ("param", "conv.weight")})
            for name in ("conv.weight", "conv.bias"):
                held.keep(f"{name} .grad after 1st backward", params[name].grad, "doubled")
            held.keep("input .grad after 1st backward", x.grad, "doubled")
            r.backward(gradient=gradient)  # releases the conv node: its columns may go back
            for name, param in params.items():
                held.keep(f"{name} .grad", param.grad)
            held.keep("input .grad", x.grad)
            held.keep("relu-output leaf .grad", r_d.grad)
        else:
            r.backward(gradient=gradient)
        grads = {name: param.grad.numpy() for name, param in params.items()}
        held.note_clashes(f"step {step} backward", dict(
            {f"{name} .grad": g for name, g in grads.items()}, gradient=g_r,
            **{"input .grad": x.grad.numpy(), "relu-output leaf .grad": r_d.grad.numpy()}),
            earlier_only=True)
        for name, g in grads.items():
            expected[name] -= (LR * g).astype(np.float32)  # what SGD does (lr · grad, float32)
        del grads, g  # no reference of ours outlives the step
        opt.step()
        opt.zero_grad(set_to_none=True)  # the held .grad arrays are no longer any param's
        assert all(param.grad is None for param in params.values())
    return held, model, expected


def _check_held(held, model, expected) -> None:
    """Every held array as its copy, or changed exactly the torch way; none in the pool."""
    params = dict(model.named_parameters())
    failures = []
    for entry in held.entries:
        array = _array_of(entry.obj)
        if id(array) != entry.array_id:
            failures.append(f"{entry.name}: the Tensor's .numpy() is no longer the same array")
        if entry.expect == "same":
            ok = np.array_equal(array, entry.copy)
        elif entry.expect == "doubled":
            ok = np.array_equal(array, entry.copy + entry.copy)
        else:  # "param": the parameter's own memory, where SGD wrote its updates
            param = params[entry.param].numpy()
            final = expected[entry.param]
            if entry.viewed:
                param, final = _a_view(param), _a_view(final)
            ok = (np.shares_memory(array, param) and np.array_equal(array, final)
                  and not np.array_equal(array, entry.copy))
        if not ok:
            failures.append(f"{entry.name}: changed (expected {entry.expect!r})")
    held.note_clashes("free in the pool after training", {
        f"free block {k}": a for k, a in enumerate(kept())})
    failures += held.clashes
    assert not failures, "held arrays were recycled or changed:\n" + "\n".join(failures)


def test_held_references_of_every_kind_survive_training_unchanged(monkeypatch):
    """Engine v2 item 5, and fast/memory.py's INVARIANT: nothing a user can reach is reused."""
    held, model, expected = _train(monkeypatch)
    kinds = {entry.expect for entry in held.entries}
    assert kinds == {"same", "doubled", "param"} and len(held.entries) > 80
    assert kept(), "training should have recycled blocks (else this test checks nothing)"
    assert held.pool_traffic > 100  # the spy saw the pool at work
    owners = [_array_of(e.obj) for e in held.entries]
    owners = [a if a.base is None else a.base for a in owners]
    big = [a for a in owners if memoryview(a).nbytes >= memory.SCRATCH_MIN_BYTES]
    assert len(big) > len(owners) // 2  # most held memory is large enough to be reused
    _check_held(held, model, expected)
    # state_dict() values are the parameters' memory (detached Tensors, as torch's): they
    # followed the optimizer to the parameters' final values (checked as "param" above).
    params = dict(model.named_parameters())
    sd = [e for e in held.entries if "state_dict" in e.name]
    assert len(sd) == 4 * (len(GRAB_STEPS) + 1)  # 4 per grab step; at step 0 Tensor and .numpy()
    for entry in sd:
        assert entry.expect == "param"
        assert np.shares_memory(_array_of(entry.obj), params[entry.param].numpy())


def _state_dict_of_copies(self, keep_vars=False, **_):
    """A broken state_dict: copies of the parameters (torch's, and ours, share their memory).
    (keep_vars=True, what load_state_dict asks for, still gives the parameters themselves.)"""
    return OrderedDict((name, t if keep_vars else tensor(t.numpy()))  # tensor(array) copies
                       for name, t in self.named_parameters())


def _lease_never_in_use(self, shape, dtype, stamp):
    """A broken pool: the block stays free while arrays made from it are held."""
    self.stamp = stamp
    return np.ndarray(shape, dtype, buffer=self.memory)


@pytest.mark.parametrize("target, name, broken, victims", [
    # the pool takes a block for free while arrays made from it are still held: what a node
    # saved, the outputs, the gradients
    (memory._Block, "lease", _lease_never_in_use,
     ["max-pool node saved 'argmax' from",
      "max-pool node saved 'argmax' as", "max-pool node saved 'argmax' (a view only)",
      "step 0: conv output", "step 0: relu output", "step 0: pooled output",
      "step 0: input .grad"]),
    (nn.Module, "state_dict", _state_dict_of_copies, ["state_dict()['fc.weight']"]),
], ids=["blocks-recycled-while-held", "state-dict-copied"])
def test_the_check_fails_on_an_engine_that_reuses_held_arrays(monkeypatch, target, name,
                                                              broken, victims):
    """The check above is able to fail: with the engine broken so that held arrays are
    recycled (or state_dict() values that no longer follow the parameters), it reports
    exactly those arrays."""
    for module in target if isinstance(target, tuple) else (target,):  # each one that calls it
        monkeypatch.setattr(module, name, broken)
    held, model, expected = _train(monkeypatch, steps=8)  # the grab steps and a few more
    with pytest.raises(AssertionError) as caught:
        _check_held(held, model, expected)
    report = str(caught.value)
    for victim in victims:
        assert victim in report
    if name != "state_dict":  # recycled memory also shows up as shared with later arrays
        assert "shares memory with" in report


def _train_torch(torch, data):
    """The same run in PyTorch (same weights, batches, two-stage backward, grab steps), holding
    the torch analog of each step-0 reference: label -> (tensor, a clone made when grabbed)."""
    weights, xs, targets = data
    tnn = torch.nn
    model = tnn.ModuleDict(dict(conv=tnn.Conv2d(1, CHANNELS, 3, padding=1),
                                pool=tnn.MaxPool2d(2, return_indices=True),
                                fc=tnn.Linear(HIDDEN, CLASSES)))
    model.load_state_dict({k: torch.tensor(v) for k, v in weights.items()})
    params = dict(model.named_parameters())
    opt = torch.optim.SGD(model.parameters(), lr=LR)
    held = {}

    def keep(label, tensor):
        if step == 0:
            held[label] = (tensor, tensor.detach().clone())

    for step in range(STEPS):
        grab = step in GRAB_STEPS
        x = torch.tensor(xs[step], requires_grad=True)
        c = model["conv"](x)
        r = torch.relu(c)
        r_d = r.detach().requires_grad_()
        p, idx = model["pool"](r_d)
        f = p.flatten(1)
        logits = model["fc"](f)
        g_logits = (logits.detach() - torch.tensor(targets[step])) / BATCH
        conv_fn, pool_fn = c.grad_fn, p.grad_fn
        keep("user's input array", x)
        for label, t in (("conv output", c), ("relu output", r), ("pooled output", p),
                         ("flattened", f), ("logits", logits),
                         ("indices (return_indices=True)", idx)):
            keep(label, t)
        keep("gradient= of the head (logits)", g_logits)
        for name, value in model.state_dict().items():
            keep(f"state_dict()[{name!r}]", value)
        for name, param in params.items():
            keep(f"parameter {name}", param.data)
        logits.backward(g_logits, retain_graph=grab)
        if grab:
            keep("max-pool node saved 'argmax' from saved_for_backward()", pool_fn._saved_result1)
            keep("max-pool node saved 'x' from saved_for_backward()", pool_fn._saved_self)
            for name in ("fc.weight", "fc.bias"):
                keep(f"{name} .grad after 1st backward", params[name].grad)
            keep("relu-output leaf .grad after 1st backward", r_d.grad)
            logits.backward(g_logits)
        g_r = r_d.grad + PENALTY * r.detach()
        keep("gradient= of the features", g_r)
        r.backward(gradient=g_r, retain_graph=grab)
        if grab:
            keep("conv node saved 'x' from saved_for_backward()", conv_fn._saved_input)
            keep("conv node saved 'weight' from saved_for_backward()", conv_fn._saved_weight)
            for name in ("conv.weight", "conv.bias"):
                keep(f"{name} .grad after 1st backward", params[name].grad)
            keep("input .grad after 1st backward", x.grad)
            r.backward(gradient=g_r)
            for name, param in params.items():
                keep(f"{name} .grad", param.grad)
            keep("input .grad", x.grad)
            keep("relu-output leaf .grad", r_d.grad)
        opt.step()
        opt.zero_grad(set_to_none=True)
    return held, params


def test_held_references_change_exactly_as_torchs_do(monkeypatch, torch):
    """The same run in PyTorch: each step-0 reference we hold ends as the torch one does.

    torch's own semantics, asserted on torch's side, are what the "expect" of each of our
    entries encodes: activations, indices, gradient= arrays, what max-pool saved and a .grad
    dropped by zero_grad(set_to_none=True) never change; a leaf's .grad held across a second
    backward grows in place to twice its value; p.numpy() and the weight a conv node saved are the
    parameter's memory and end as the trained parameter, and so do state_dict() values."""
    data = _training_data()
    ours, model, expected = _train(monkeypatch, data)
    _check_held(ours, model, expected)
    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # ops this small run far slower split over threads (measured 50×)
    try:
        theirs, torch_params = _train_torch(torch, data)
    finally:
        torch.set_num_threads(threads)
    step0 = {e.name[len("step 0: "):]: e for e in ours.entries if e.step == 0}
    compared = 0
    for label, (tensor, clone) in theirs.items():
        entry = step0.get(label) or step0[label + " .numpy()"]
        now = tensor.detach().numpy()
        if entry.expect == "same":  # torch's did not change either
            assert torch.equal(tensor, clone), label
        elif entry.expect == "doubled":  # torch's grew in place to twice its value
            assert torch.equal(tensor, clone + clone), label
        else:  # torch's is the parameter's memory and ends as the trained parameter
            param = torch_params[entry.param]
            assert tensor.data_ptr() == param.data_ptr() and not torch.equal(tensor, clone), label
        ours_now = _array_of(entry.obj)
        if now.dtype.kind in "iu":
            np.testing.assert_array_equal(ours_now, now, err_msg=label)
        else:
            np.testing.assert_allclose(ours_now, now, rtol=1e-4, atol=1e-5, err_msg=label)
        compared += 1
    assert compared >= 20


def test_a_held_retained_grad_of_a_non_leaf_is_unchanged_by_a_second_backward(torch):
    x = np.linspace(-1.0, 1.0, BIG[0] * BIG[1]).reshape(BIG)  # 128 KiB
    # torch: the held .grad of a non-leaf is replaced, never written into (only a leaf's .grad
    # accumulates in place)
    tx = torch.tensor(x, requires_grad=True)
    th = tx * 3.0
    th.retain_grad()
    (th * th).sum().backward(retain_graph=True)
    theirs, their_copy = th.grad, th.grad.clone()
    (th * th).sum().backward()
    if not (torch.equal(theirs, their_copy) and th.grad is not theirs):
        pytest.fail("torch changed a held retained .grad: the premise of this test is wrong")
    # ours
    xt = tensor(x, requires_grad=True)
    h = xt * 3.0
    h.retain_grad()
    loss = (h * h).sum()
    loss.backward(retain_graph=True)
    held = h.grad.numpy()
    copy = held.copy()
    loss.backward()
    np.testing.assert_array_equal(h.grad.numpy(), 2 * copy)  # the accumulated value, as torch's
    np.testing.assert_array_equal(held, copy)  # fails today: held is h.grad.numpy(), now 2 × copy


def test_a_run_whose_shapes_keep_changing_keeps_the_pool_within_its_budget(monkeypatch, rng):
    """200 training steps of a small CNN, each with a batch size and image size not seen for a
    while: the pool never holds more than its byte budget, and the memory the process holds
    does not grow with the number of shapes seen."""
    import tracemalloc

    import tinygrad_pool.nn as nn
    import tinygrad_pool.optim as optim
    budget = 4 << 20
    monkeypatch.setattr(memory, "MAX_KEPT_BYTES", budget)
    model = nn.Sequential(nn.Conv2d(1, 8, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                          nn.Conv2d(8, 8, 3, padding=1), nn.ReLU(), nn.AdaptiveAvgPool2d(1),
                          nn.Flatten(), nn.Linear(8, 3))
    optimizer = optim.SGD(model.parameters(), lr=0.01)
    traced = []
    tracemalloc.start()
    try:
        for step in range(200):
            batch, side = 8 + (step * 7) % 57, 12 + 2 * ((step * 5) % 11)  # 57 × 11 shapes cycle
            x = tensor(rng.standard_normal((batch, 1, side, side)).astype(np.float32))
            y = tensor(rng.integers(0, 3, batch))
            optimizer.zero_grad()
            F.cross_entropy(model(x), y).backward()
            optimizer.step()
            assert sum(b.size for b in blocks()) <= budget
            traced.append(tracemalloc.get_traced_memory()[0])
    finally:
        tracemalloc.stop()
    assert blocks()  # the pool was in use
    # what is held after step 50 and after step 200 differs by less than the budget (and the
    # noise of one step's arrays): nothing piles up per shape seen
    assert max(traced[150:]) < max(traced[30:60]) + budget
