"""nn.Module against torch.nn.Module: the same model built in both libraries has the same tree
(names of parameters, buffers, modules, state_dict keys), the same repr, state_dict values that
share memory with the parameters, the same load_state_dict errors, dtype conversion that keeps
the Parameter objects, attribute rules, hooks, and containers that index, slice and renumber
alike."""
import re
from collections import OrderedDict
from types import SimpleNamespace

import numpy as np
import pytest

from tinygrad_pool import optim, Tensor, tensor
from tinygrad_pool.nn import activation, layers, module

OURS = SimpleNamespace(
    Module=module.Module, Parameter=module.Parameter, Sequential=module.Sequential,
    ModuleList=module.ModuleList, ModuleDict=module.ModuleDict, Identity=module.Identity,
    Linear=layers.Linear, Conv2d=layers.Conv2d, Flatten=layers.Flatten,
    ReLU=activation.ReLU, GELU=activation.GELU, Tanh=activation.Tanh, ELU=activation.ELU,
    LeakyReLU=activation.LeakyReLU, Softmax=activation.Softmax,
    tensor=lambda array: tensor(np.asarray(array)))


def libraries(torch):
    """(ours, theirs): the same names in both, and a tensor maker for each."""
    theirs = SimpleNamespace(**{name: getattr(torch.nn, name) for name in vars(OURS)
                                if name != "tensor"},
                             tensor=lambda array: torch.tensor(np.asarray(array)))
    return OURS, theirs


def build(nn):
    """A nested model with every kind of part: a submodule with buffers (one non-persistent,
    one integer), containers of each kind, a module shared by two parents, an absent bias."""

    class Block(nn.Module):
        def __init__(self, width):
            super().__init__()
            self.fc = nn.Linear(width, width)
            self.act = nn.GELU(approximate="tanh")
            self.register_buffer("scale", nn.tensor(np.ones(width, dtype=np.float32)))
            self.register_buffer("steps", nn.tensor(np.zeros((), dtype=np.int64)))
            self.register_buffer("scratch", nn.tensor(np.zeros(2, dtype=np.float32)),
                                 persistent=False)
            self.register_buffer("nothing", None)

        def forward(self, x):
            return self.act(self.fc(x)) * self.scale

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.temperature = nn.Parameter(nn.tensor(np.float32(1.5)))
            shared = nn.Linear(4, 4, bias=False)
            self.stem = nn.Sequential(OrderedDict([("lin", nn.Linear(3, 4)), ("relu", nn.ReLU()),
                                                   ("shared", shared)]))
            self.blocks = nn.ModuleList([Block(4), Block(4), nn.Identity()])
            self.heads = nn.ModuleDict({"main": nn.Linear(4, 2), "aux": shared,
                                        "act": nn.LeakyReLU(0.2)})
            self.empty = nn.Sequential()
            self.missing = None

        def forward(self, x):
            x = self.stem(x)
            for block in self.blocks:
                x = block(x)
            return self.heads["main"](self.heads["aux"](x)) / self.temperature

    return Net()


def copy_weights(ours, theirs, torch):
    with torch.no_grad():
        for name, value in theirs.state_dict().items():
            ours.state_dict()[name].copy_(tensor(value.numpy()))


def test_the_tree_has_torchs_names_in_torchs_order(torch):
    nn, tnn = libraries(torch)
    ours, theirs = build(nn), build(tnn)
    for method in ("named_parameters", "named_buffers", "named_modules", "named_children"):
        assert [n for n, _ in getattr(ours, method)()] == \
               [n for n, _ in getattr(theirs, method)()], method
    assert list(ours.state_dict()) == list(theirs.state_dict())  # shared: under both names
    assert [n for n, _ in ours.named_parameters(prefix="net", recurse=True)] == \
           [n for n, _ in theirs.named_parameters(prefix="net")]
    assert [n for n, _ in ours.named_parameters(remove_duplicate=False)] == \
           [n for n, _ in theirs.named_parameters(remove_duplicate=False)]
    assert [n for n, _ in ours.named_parameters(recurse=False)] == ["temperature"]
    assert [n for n, _ in ours.blocks[0].named_buffers(recurse=False)] == \
           [n for n, _ in theirs.blocks[0].named_buffers(recurse=False)]
    assert len(list(ours.parameters())) == len(list(theirs.parameters()))
    assert len(list(ours.modules())) == len(list(theirs.modules()))
    assert [type(m).__name__ for m in ours.children()] == \
           [type(m).__name__ for m in theirs.children()]
    assert ours.get_submodule("blocks.1.fc") is ours.blocks[1].fc
    assert ours.get_submodule("") is ours
    with pytest.raises(AttributeError, match="has no attribute `nope`"):
        ours.get_submodule("blocks.nope")


def test_repr_is_torchs(torch):
    nn, tnn = libraries(torch)
    assert repr(build(nn)) == repr(build(tnn))

    class WithExtra(nn.Module):  # a multi-line extra_repr with children, as torch lays it out
        def __init__(self, nn):
            super().__init__()
            self.inner = nn.Sequential(nn.Tanh())

        def extra_repr(self):
            return "first line\nsecond line"

    class TorchWithExtra(tnn.Module):
        def __init__(self, nn):
            super().__init__()
            self.inner = nn.Sequential(nn.Tanh())

        def extra_repr(self):
            return "first line\nsecond line"

    assert repr(WithExtra(nn)) == repr(TorchWithExtra(tnn)).replace("TorchWithExtra", "WithExtra")


def test_forward_matches_torch_with_copied_weights(torch):
    nn, tnn = libraries(torch)
    ours, theirs = build(nn), build(tnn)
    copy_weights(ours, theirs, torch)
    x = np.random.default_rng(0).standard_normal((5, 3)).astype(np.float32)
    np.testing.assert_allclose(ours(tensor(x)).numpy(), theirs(torch.tensor(x)).detach().numpy(),
                               rtol=1e-5, atol=1e-6)


# ---- state_dict ----------------------------------------------------------------------------------
def test_state_dict_values_are_detached_tensors_sharing_the_parameters_memory(torch):
    nn, tnn = libraries(torch)
    for lib, ours in ((nn, True), (tnn, False)):
        model = lib.Linear(3, 2)
        state = model.state_dict()
        assert type(state) is OrderedDict
        weight = state["weight"]
        assert type(weight) is not lib.Parameter and not weight.requires_grad
        assert weight.grad_fn is None
        if ours:
            assert np.shares_memory(weight.numpy(), model.weight.numpy())
        else:
            assert weight.data_ptr() == model.weight.data_ptr()
        version = model.weight._version
        weight.add_(1.0)  # a write through the state dict is a write to the parameter
        assert model.weight._version == version + 1 == weight._version
        np.testing.assert_array_equal(np.asarray(weight.numpy() if ours else weight.numpy()),
                                      np.asarray(model.weight.numpy() if ours
                                                 else model.weight.detach().numpy()))
        kept = model.state_dict(keep_vars=True)
        assert kept["weight"] is model.weight and kept["bias"] is model.bias


def test_state_dict_follows_optimizer_steps():
    model = OURS.Linear(3, 2)
    state = model.state_dict()
    before = state["weight"].numpy().copy()
    model(tensor(np.ones((1, 3), dtype=np.float32))).sum().backward()
    optim.SGD(model.parameters(), lr=0.1).step()
    np.testing.assert_array_equal(state["weight"].numpy(), model.weight.numpy())
    assert not np.array_equal(state["weight"].numpy(), before)


def test_state_dict_destination_and_prefix():
    model = OURS.Sequential(OURS.Linear(1, 1))
    destination = OrderedDict(existing=1)
    assert model.state_dict(destination=destination, prefix="m.") is destination
    assert list(destination) == ["existing", "m.0.weight", "m.0.bias"]


def torch_message(error) -> str:
    """torch's load_state_dict message with its shapes written as ours are (tuples)."""
    def as_tuple(match):
        dims = [int(d) for d in match.group(1).split(",") if d.strip()]
        return str(tuple(dims))
    return re.sub(r"torch\.Size\(\[([^\]]*)\]\)", as_tuple, str(error))


@pytest.mark.parametrize("edit", ["missing", "unexpected", "shape", "all", "non-persistent"])
def test_load_state_dict_errors_are_torchs(torch, edit):
    nn, tnn = libraries(torch)
    ours, theirs = build(nn), build(tnn)
    messages = []
    for model, to_array in ((ours, lambda v: v.numpy().copy()), (theirs, lambda v: v.clone())):
        state = OrderedDict((k, to_array(v)) for k, v in model.state_dict().items())
        if edit in ("missing", "all"):
            del state["blocks.1.fc.bias"], state["temperature"]
        if edit in ("unexpected", "all"):
            state["blocks.9.fc.weight"] = to_array(model.state_dict()["stem.lin.bias"])
        if edit in ("shape", "all"):
            state["heads.main.weight"] = to_array(model.state_dict()["stem.shared.weight"])
        if edit == "non-persistent":  # not part of the state: unexpected if given
            state["blocks.0.scratch"] = to_array(model.blocks[0].scratch)
        with pytest.raises(RuntimeError) as caught:
            model.load_state_dict(state)
        messages.append(str(caught.value))
    assert messages[0] == torch_message(messages[1])
    assert messages[0].startswith("Error(s) in loading state_dict for Net:\n\t")


def test_load_state_dict_changes_nothing_when_it_fails():
    model = build(OURS)
    before = {k: v.numpy().copy() for k, v in model.state_dict().items()}
    versions = {k: v._version for k, v in model.state_dict(keep_vars=True).items()}
    state = {k: v.numpy() * 0 + 7 for k, v in model.state_dict().items()}
    state["heads.main.bias"] = np.zeros(5)
    with pytest.raises(RuntimeError, match=r"size mismatch for heads.main.bias: copying a param "
                                           r"with shape \(5,\) from checkpoint, the shape in "
                                           r"current model is \(2,\)\."):
        model.load_state_dict(state, strict=False)  # a shape mismatch is an error either way
    for k, v in model.state_dict(keep_vars=True).items():
        np.testing.assert_array_equal(v.numpy(), before[k])
        assert v._version == versions[k]


def test_load_state_dict_copies_in_place_casts_and_bumps_versions(torch):
    model = build(OURS)
    params = dict(model.named_parameters())
    state = {k: np.full(v.shape, 3, dtype=np.float64 if v.dtype.kind == "f" else v.dtype)
             for k, v in model.state_dict().items()}
    versions = {k: v._version for k, v in model.state_dict(keep_vars=True).items()}
    result = model.load_state_dict(state)
    assert repr(result) == "<All keys matched successfully>" == repr(
        torch.nn.Linear(1, 1).load_state_dict(torch.nn.Linear(1, 1).state_dict()))
    assert result.missing_keys == [] and result.unexpected_keys == []
    named = model.state_dict(keep_vars=True)
    for name, value in named.items():
        copies = sum(other is value for other in named.values())  # shared: loaded per name
        assert np.all(value.numpy() == 3) and value._version == versions[name] + copies
        if name in params:
            assert value is params[name] and value.dtype == np.float32  # same objects, cast


def test_load_state_dict_non_strict_returns_the_keys_as_torch(torch):
    nn, tnn = libraries(torch)
    results = []
    for lib in (nn, tnn):
        model = lib.Sequential(lib.Linear(2, 2), lib.Tanh())
        state = {"0.weight": lib.tensor(np.zeros((2, 2), dtype=np.float32)),
                 "2.weight": lib.tensor(np.zeros(1, dtype=np.float32))}
        results.append(model.load_state_dict(state, strict=False))
    assert repr(results[0]) == repr(results[1])
    missing, unexpected = results[0]
    assert missing == ["0.bias"] and unexpected == ["2.weight"]


def test_load_state_dict_argument_errors():
    model = OURS.Linear(1, 1)
    with pytest.raises(TypeError, match="Expected state_dict to be dict-like, got list"):
        model.load_state_dict([("weight", np.zeros((1, 1)))])
    with pytest.raises(RuntimeError, match='While copying the parameter named "bias", expected '
                                           'a Tensor or a numeric array'):
        model.load_state_dict({"weight": np.zeros((1, 1)), "bias": np.array(["a"])})


# ---- dtype and device ------------------------------------------------------------------------------
@pytest.mark.parametrize("convert", [
    lambda m: m.double(), lambda m: m.to(np.float64), lambda m: m.to("cpu", np.float64),
    lambda m: m.to(dtype=np.float64), lambda m: m.to(tensor(np.zeros(1))),
    lambda m: m.to(device="cpu", dtype="float64")])
def test_to_casts_floating_parameters_and_buffers_keeping_the_parameter_objects(torch, convert):
    model = build(OURS)
    params = list(model.parameters())
    model(tensor(np.ones((2, 3), dtype=np.float32))).sum().backward()
    assert convert(model) is model
    assert [p is q for p, q in zip(model.parameters(), params)] == [True] * len(params)
    assert all(p.dtype == np.float64 and p.grad.dtype == np.float64 for p in params)
    block = model.blocks[0]
    assert block.scale.dtype == np.float64 and block.scratch.dtype == np.float64
    assert block.steps.dtype == np.int64  # integers stay (torch: only floating tensors move)
    theirs = build(libraries(torch)[1])
    copy_weights(model, theirs, torch)
    theirs.double()
    x = np.random.default_rng(1).standard_normal((2, 3))
    np.testing.assert_allclose(model(tensor(x)).numpy(), theirs(torch.tensor(x)).detach().numpy(),
                               rtol=1e-12)
    assert model.float() is model and all(p.dtype == np.float32 for p in params)


def test_to_refuses_other_devices_and_integer_dtypes(torch):
    model = OURS.Linear(1, 1)
    assert model.to("cpu") is model and model.cpu() is model
    assert model.weight.dtype == np.float32
    with pytest.raises(AssertionError, match="device 'cuda:0' is not available"):
        model.to("cuda:0")  # (torch's CPU build: AssertionError, not compiled with CUDA)
    with pytest.raises(TypeError, match="only accepts floating point or complex dtypes, but got "
                                        "desired dtype=int64"):
        model.to(np.int64)
    with pytest.raises(TypeError, match="only accepts floating point"):
        torch.nn.Linear(1, 1).to(torch.int64)  # torch's error type
    with pytest.raises(TypeError, match="unexpected keyword argument 'dtyp'"):
        model.to(dtyp=np.float64)
    with pytest.raises(TypeError, match="expected a dtype, a device or a Tensor"):
        model.to(object())
    assert model.weight.dtype == np.float32  # unchanged by any of the refused calls


# ---- attributes ----------------------------------------------------------------------------------
ATTRIBUTE_ERRORS = [  # (what is done, the error type torch raises)
    ("param_gets_tensor", TypeError), ("module_gets_int", TypeError),
    ("buffer_gets_int", TypeError), ("buffer_name_with_dot", KeyError),
    ("buffer_empty_name", KeyError), ("buffer_name_not_str", TypeError),
    ("buffer_over_parameter", KeyError), ("register_non_parameter", TypeError),
    ("add_non_module", TypeError), ("module_name_with_dot", KeyError),
    ("missing_attribute", AttributeError), ("train_non_bool", ValueError),
    ("call_without_forward", NotImplementedError)]


def attribute_action(lib, what):
    layer = lib.Linear(2, 2)
    layer.register_buffer("running", lib.tensor(np.zeros(2, dtype=np.float32)))
    layer.child = lib.Tanh()
    actions = {
        "param_gets_tensor": lambda: setattr(layer, "weight", lib.tensor(np.zeros((2, 2)))),
        "module_gets_int": lambda: setattr(layer, "child", 3),
        "buffer_gets_int": lambda: setattr(layer, "running", 3),
        "buffer_name_with_dot": lambda: layer.register_buffer("a.b", None),
        "buffer_empty_name": lambda: layer.register_buffer("", None),
        "buffer_name_not_str": lambda: layer.register_buffer(3, None),
        "buffer_over_parameter": lambda: layer.register_buffer("weight", None),
        "register_non_parameter": lambda: layer.register_parameter(
            "p", lib.tensor(np.zeros(1))),
        "add_non_module": lambda: layer.add_module("m", 3),
        "module_name_with_dot": lambda: layer.add_module("a.b", lib.Tanh()),
        "missing_attribute": lambda: layer.nope,
        "train_non_bool": lambda: layer.train(1),
        "call_without_forward": lambda: lib.Module()(1),
    }
    return layer, actions[what]


@pytest.mark.parametrize("what, error", ATTRIBUTE_ERRORS, ids=[w for w, _ in ATTRIBUTE_ERRORS])
def test_attribute_errors_have_torchs_types_and_leave_the_module_as_it_was(torch, what, error):
    nn, tnn = libraries(torch)
    messages = []
    for lib in (nn, tnn):
        layer, action = attribute_action(lib, what)
        names = [n for n, _ in layer.named_parameters()] + [n for n, _ in layer.named_buffers()]
        with pytest.raises(error) as caught:
            action()
        messages.append(str(caught.value))
        assert names == [n for n, _ in layer.named_parameters()] + \
                        [n for n, _ in layer.named_buffers()]
    # torch's words (ours may add the value received), with our class names where torch writes
    # torch.FloatTensor
    ours, theirs = messages
    theirs = theirs.replace("torch.nn.Parameter", "Parameter").replace("torch.nn.Module", "Module")
    theirs = re.sub(r"torch\.(\w+Tensor)", "Tensor", theirs).replace("torch Tensor", "Tensor")
    theirs = theirs.replace("torch.nn.Buffer, torch.Tensor", "Tensor")
    assert ours.split(" (call super")[0].startswith(theirs.rstrip("'")), (ours, theirs)


def test_assignment_registers_replaces_and_deletes_as_torch(torch):
    nn, tnn = libraries(torch)
    seen = []
    for lib in (nn, tnn):
        layer = lib.Linear(2, 3)
        layer.register_buffer("running", lib.tensor(np.zeros(3, dtype=np.float32)))
        layer.plain = 5  # an ordinary attribute
        layer.bias = None  # keeps its slot, absent
        layer.running = lib.tensor(np.ones(3, dtype=np.float32))  # a buffer stays a buffer
        layer.extra = lib.Parameter(lib.tensor(np.zeros(1, dtype=np.float32)))
        layer.plain = lib.Tanh()  # a plain attribute becomes a child
        with pytest.raises(TypeError):  # a Parameter's slot takes a Parameter or None only
            layer.extra = lib.Tanh()
        del layer.weight
        seen.append(([n for n, _ in layer.named_parameters()],
                     [n for n, _ in layer.named_buffers()],
                     [n for n, _ in layer.named_children()], list(layer.state_dict()),
                     "bias" in layer._parameters, layer.bias is None))
        with pytest.raises(AttributeError):
            layer.weight
    assert seen[0] == seen[1]


def test_assigning_before_super_init_is_a_clear_error():
    class Forgetful(OURS.Module):
        def __init__(self):
            self.layer = OURS.Linear(1, 1)

    with pytest.raises(AttributeError, match=r"cannot assign module before Module.__init__\(\) "
                                             r"call \(call super\(\).__init__\(\) first"):
        Forgetful()


def test_deepcopy_and_pickle_keep_the_tree_and_copy_the_parameters():
    import copy
    import pickle

    built = build(OURS)  # (its classes are local: deepcopy only)
    flat = OURS.Sequential(OURS.Linear(2, 2), OURS.ModuleList([OURS.Tanh()]),
                           OURS.ModuleDict({"head": OURS.Linear(2, 1)}))
    flat.register_buffer("count", tensor(np.zeros(1)))
    pairs = [(built, copy.deepcopy(built)), (flat, copy.deepcopy(flat)),
             (flat, pickle.loads(pickle.dumps(flat)))]
    for model, clone in pairs:
        assert repr(clone) == repr(model)
        assert list(clone.state_dict()) == list(model.state_dict())
        for (name, ours), (_, theirs) in zip(model.named_parameters(), clone.named_parameters()):
            assert type(theirs) is OURS.Parameter and theirs.requires_grad
            assert not np.shares_memory(ours.numpy(), theirs.numpy()), name
            np.testing.assert_array_equal(ours.numpy(), theirs.numpy())
    assert pairs[0][1].heads["aux"] is pairs[0][1].stem.shared  # sharing survives the copy


def test_dir_lists_registered_names():
    names = dir(build(OURS))
    assert {"temperature", "stem", "blocks", "forward"} <= set(names)


# ---- training state, gradients, apply --------------------------------------------------------
def test_train_reaches_every_module_through_its_own_train(torch):
    calls = []

    class Counting(OURS.Tanh):
        def train(self, mode=True):
            calls.append(mode)
            return super().train(mode)

    model = OURS.Sequential(OURS.Sequential(Counting()), Counting())
    assert model.eval() is model and calls == [False, False]
    assert not any(m.training for m in model.modules())
    model.train()
    assert calls[-2:] == [True, True] and all(m.training for m in model.modules())


def test_apply_visits_children_first_as_torch(torch):
    nn, tnn = libraries(torch)
    orders = []
    for lib in (nn, tnn):
        order = []
        build(lib).apply(lambda m: order.append(type(m).__name__))
        orders.append(order)
    assert orders[0] == orders[1]


def test_zero_grad_and_requires_grad_():
    model = build(OURS)
    model(tensor(np.ones((2, 3), dtype=np.float32))).sum().backward()
    grads = [p.grad for p in model.parameters()]
    model.zero_grad(set_to_none=False)
    assert all(p.grad is g and not g.numpy().any() for p, g in zip(model.parameters(), grads))
    model.zero_grad()
    assert all(p.grad is None for p in model.parameters())
    assert model.requires_grad_(False) is model
    assert not any(p.requires_grad for p in model.parameters())


# ---- hooks ----------------------------------------------------------------------------------------
def test_forward_hooks_change_inputs_and_outputs_and_can_be_removed(torch):
    nn, tnn = libraries(torch)
    results = []
    for lib in (nn, tnn):
        layer = lib.Tanh()
        log = []
        pre = layer.register_forward_pre_hook(lambda m, args: log.append("pre") or args[0] * 2)
        post = layer.register_forward_hook(lambda m, args, out: log.append("post") or out + 1)
        first = layer(lib.tensor(np.array([0.5])))
        first = float(first.numpy()[0]) if lib is nn else float(first[0])
        pre.remove()
        with post:  # leaving the block removes it
            second = layer(lib.tensor(np.array([0.5])))
        third = layer(lib.tensor(np.array([0.5])))
        results.append((first, float(np.asarray(second.numpy() if lib is nn else second)[0]),
                        float(np.asarray(third.numpy() if lib is nn else third)[0]), log))
    assert results[0][:3] == pytest.approx(results[1][:3])
    assert results[0][3] == results[1][3] == ["pre", "post", "post"]


def test_hooks_run_in_order_and_prepend_goes_first():
    layer, log = OURS.Identity(), []
    layer.register_forward_hook(lambda m, a, o: log.append(1))
    layer.register_forward_hook(lambda m, a, o: log.append(0), prepend=True)
    layer(tensor([1.0]))
    assert log == [0, 1]
    with pytest.raises(TypeError, match="hook must be callable"):
        layer.register_forward_hook(3)


# ---- containers -----------------------------------------------------------------------------------
def sequential_story(lib):
    """The same edits on a Sequential: (keys, child types) after each."""
    seq = lib.Sequential(lib.Tanh(), lib.ReLU(), lib.Identity())
    log = []

    def note():
        log.append((list(seq._modules), [type(m).__name__ for m in seq]))

    seq.append(lib.GELU())
    note()
    del seq[1]  # renumbered
    note()
    seq.insert(1, lib.ELU())
    note()
    seq[-1] = lib.LeakyReLU()
    note()
    popped = seq.pop(0)
    log.append(type(popped).__name__)
    note()
    seq.extend(lib.Sequential(lib.Tanh()))
    note()
    del seq[1:3]
    note()
    sliced = seq[0:2]
    log.append((type(sliced).__name__, list(sliced._modules), len(seq), type(seq[-1]).__name__))
    combined = seq + lib.Sequential(lib.ReLU())
    log.append(list(combined._modules))
    named = lib.Sequential(OrderedDict([("a", lib.Tanh()), ("b", lib.ReLU())]))
    log.append((list(named._modules), list(named[1:]._modules), type(named[-1]).__name__))
    return log


def test_sequential_edits_as_torch(torch):
    nn, tnn = libraries(torch)
    assert sequential_story(nn) == sequential_story(tnn)


def test_sequential_index_errors_as_torch(torch):
    nn, tnn = libraries(torch)
    for lib in (nn, tnn):
        seq = lib.Sequential(lib.Tanh())
        with pytest.raises(IndexError, match="index 1 is out of range"):
            seq[1]
        with pytest.raises(IndexError, match="index -2 is out of range"):
            seq[-2]
        with pytest.raises(TypeError):
            seq["a"]
        with pytest.raises(TypeError, match="is not a Module subclass"):
            lib.Sequential(lib.Tanh(), lambda x: x)
        with pytest.raises(ValueError, match="add operator supports only objects of Sequential"):
            seq + lib.ModuleList()


def module_list_story(lib):
    items = lib.ModuleList([lib.Tanh(), lib.ReLU()])
    log = []

    def note():
        log.append((list(items._modules), [type(m).__name__ for m in items], len(items)))

    items.append(lib.GELU())
    note()
    items.extend([lib.ELU(), lib.Identity()])
    note()
    items += [lib.LeakyReLU()]
    note()
    items.insert(1, lib.Softmax(1))
    note()
    del items[0]
    note()
    items[-1] = lib.Tanh()
    note()
    log.append(type(items.pop(2)).__name__)
    note()
    del items[::2]
    note()
    sliced = items[1:]
    log.append((type(sliced).__name__, list(sliced._modules)))
    log.append(list((items + lib.ModuleList([lib.ReLU()]))._modules))
    log.append(type(items[-1]).__name__)
    return log


def test_module_list_edits_as_torch(torch):
    nn, tnn = libraries(torch)
    assert module_list_story(nn) == module_list_story(tnn)


def test_module_list_repr_groups_repeats_as_torch(torch):
    nn, tnn = libraries(torch)
    for make in (lambda lib: lib.ModuleList(),
                 lambda lib: lib.ModuleList([lib.Linear(2, 2) for _ in range(3)] + [lib.ReLU()]
                                            + [lib.Tanh(), lib.Tanh(), lib.Linear(2, 2)]),
                 lambda lib: lib.ModuleList([lib.Sequential(lib.Tanh(), lib.ReLU())] * 2)):
        assert repr(make(nn)) == repr(make(tnn))


def test_module_list_errors_and_negative_insert():
    items = OURS.ModuleList([OURS.Tanh()])
    with pytest.raises(IndexError, match="index 1 is out of range"):
        items[1]
    with pytest.raises(TypeError, match="ModuleList.extend should be called with an iterable"):
        items.extend(3)
    with pytest.raises(TypeError, match="is not a Module subclass"):
        items.append(3)
    with pytest.raises(NotImplementedError, match="missing the required \"forward\""):
        items(tensor([1.0]))
    items.insert(-1, OURS.ReLU())  # as list.insert (torch's own crashes on a negative index)
    assert [type(m).__name__ for m in items] == ["ReLU", "Tanh"]
    items.extend(items)  # extending by itself terminates
    assert len(items) == 4


def module_dict_story(lib):
    d = lib.ModuleDict({"b": lib.Tanh(), "a": lib.ReLU()})
    log = [list(d), list(d.keys())]
    d["c"] = lib.GELU()
    d.update([("d", lib.ELU()), ("a", lib.Identity())])
    d.update(lib.ModuleDict({"e": lib.Tanh()}))
    log.append([(k, type(v).__name__) for k, v in d.items()])
    log.append(("c" in d, "z" in d, len(d), type(d.pop("b")).__name__, list(d)))
    del d["c"]
    log.append(([type(v).__name__ for v in d.values()], [n for n, _ in d.named_children()]))
    d.clear()
    log.append(len(d))
    return log


def test_module_dict_as_torch(torch):
    nn, tnn = libraries(torch)
    assert module_dict_story(nn) == module_dict_story(tnn)


def test_module_dict_update_errors_as_torch(torch):
    nn, tnn = libraries(torch)
    for lib in (nn, tnn):
        d = lib.ModuleDict()
        with pytest.raises(TypeError, match="ModuleDict.update should be called with an "
                                            "iterable of key/value pairs"):
            d.update(3)
        with pytest.raises(TypeError, match="element #0 should be Iterable"):
            d.update([3])
        with pytest.raises(ValueError, match="element #0 has length 3; 2 is required"):
            d.update([("a", lib.Tanh(), 1)])
        with pytest.raises(KeyError):
            d["missing"]


def test_identity_returns_its_input_and_ignores_arguments():
    x = tensor([1.0, 2.0])
    assert OURS.Identity(54, unused="x")(x) is x
