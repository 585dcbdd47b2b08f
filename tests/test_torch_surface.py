"""The first lines of real PyTorch scripts, against torch itself: devices on a CPU-only machine,
the legacy ``torch.Tensor`` constructor and the default dtype, ``.data``, ``grad_fn`` walking
(``next_functions``, ``AccumulateGrad``), ``.grad`` assignment, ``mm`` and NumPy's spellings of
``dim``/``keepdim``. Each test runs the same code under both frameworks and compares."""
import pickle

import numpy as np
import pytest

import tinygrad_pool

torch = pytest.importorskip("torch")
FRAMEWORKS = pytest.mark.parametrize("fw", [torch, tinygrad_pool], ids=["torch", "ours"])


def outcome(call):
    """What a call gives: ("ok", value) or ("raises", the exception's type)."""
    try:
        return "ok", call()
    except Exception as error:  # noqa: BLE001  (the type is what is compared)
        return "raises", type(error)


def both(call):
    """``call(fw)`` under torch and here: the same outcome, value by value."""
    theirs, ours = outcome(lambda: call(torch)), outcome(lambda: call(tinygrad_pool))
    assert ours == theirs, f"torch: {theirs}, ours: {ours}"
    return ours


# ---- devices ---------------------------------------------------------------------------------
DEVICE_ARGS = [("cpu",), ("cpu:0",), ("cuda",), ("cuda:1",), ("cuda", 0), ("mps",), ("mps:0",),
               ("xpu",), ("meta",), ("cpu", 3)]
BAD_DEVICE_ARGS = [("foo",), ("CPU",), ("cuda:x",), ("cpu:-1",), ("cuda:01",), ("cuda", -1),
                   (3.0,), (None,), ("cuda:1", 0), (0,)]


@pytest.mark.parametrize("args", DEVICE_ARGS, ids=str)
def test_a_device_is_made_read_and_shown_as_torch_does(args):
    both(lambda fw: (repr(fw.device(*args)), str(fw.device(*args)), fw.device(*args).type,
                     fw.device(*args).index, f"{fw.device(*args)}"))


@pytest.mark.parametrize("args", BAD_DEVICE_ARGS, ids=str)
def test_a_device_string_that_names_no_device_is_refused_as_by_torch(args):
    kind, _ = both(lambda fw: fw.device(*args))
    assert kind == "raises"


def test_devices_compare_hash_and_copy_as_torch_does():
    both(lambda fw: (fw.device("cpu") == fw.device("cpu"), fw.device("cpu") == fw.device("cpu", 0),
                     fw.device("cuda", 0) == fw.device("cuda:0"), fw.device("cpu") == "cpu",
                     fw.device("cpu") != "cpu", hash(fw.device("cpu")) == hash(fw.device("cpu")),
                     len({fw.device("cpu"), fw.device("cpu"), fw.device("cuda")}),
                     repr(fw.device(fw.device("cuda:2")))))
    device = tinygrad_pool.device("cuda", 1)
    assert pickle.loads(pickle.dumps(device)) == device


def test_a_tensor_lives_on_the_cpu_as_torchs_do():
    def program(fw):
        x = fw.zeros(2)
        return (repr(x.device), x.device == fw.device("cpu"), x.device == "cpu", x.device.type,
                x.device.index, x.is_cuda, x.is_mps, x.is_xpu, x.is_meta, x.is_cpu,
                x.get_device(), x.is_pinned(), x.to(fw.device("cpu")) is x, x.to("cpu") is x,
                x.cpu() is x, fw.tensor([1.0], device=fw.device("cpu")).device.type,
                x.to(fw.device("cpu"), fw.float64).dtype == fw.float64,
                x.to(device="cpu", dtype=fw.float64).dtype == fw.float64)
    both(program)


# (A factory on "mps" is left out: torch's CPU build answers NotImplementedError from its
# dispatcher there; ours is the RuntimeError that .to("mps") gives in both.)
MISSING_DEVICES = [("to", where) for where in ("cuda", "cuda:0", "mps", "xpu", 0)] + \
    [("factory", where) for where in ("cuda", "cuda:0", "xpu", 0)] + [("cuda()", "cuda")]


@pytest.mark.parametrize("how, where", MISSING_DEVICES, ids=str)
def test_a_device_that_is_not_here_raises_torchs_error_naming_it(how, where):
    calls = {"to": lambda fw: fw.zeros(2).to(where), "factory": lambda fw: fw.zeros(2, device=where),
             "cuda()": lambda fw: fw.zeros(2).cuda()}
    kind, error = both(calls[how])
    assert kind == "raises"
    with pytest.raises(error) as raised:
        calls[how](tinygrad_pool)
    message = str(raised.value)
    assert "docs/porting.md" in message or "accelerator" in message
    if isinstance(where, str):
        assert where in message


def test_cuda_accelerator_and_backends_answer_as_torchs_cpu_build():
    def program(fw):
        fw.backends.cudnn.benchmark = True
        fw.backends.cudnn.deterministic = True
        answers = (fw.cuda.is_available(), fw.cuda.device_count(), fw.cuda.is_initialized(),
                   fw.cuda.manual_seed(1), fw.cuda.manual_seed_all(1), fw.cuda.empty_cache(),
                   fw.accelerator.is_available(), fw.accelerator.current_accelerator(),
                   fw.accelerator.device_count(), fw.backends.mps.is_available(),
                   fw.backends.mps.is_built(), fw.backends.cudnn.is_available(),
                   fw.backends.cudnn.enabled, fw.backends.cudnn.benchmark,
                   fw.backends.cudnn.deterministic, fw.backends.cuda.matmul.allow_tf32)
        fw.backends.cudnn.benchmark = fw.backends.cudnn.deterministic = False
        return answers
    both(program)
    for call in (lambda fw: fw.cuda.synchronize(), lambda fw: fw.cuda.current_device(),
                 lambda fw: fw.cuda.get_device_name(), lambda fw: fw.zeros(1).pin_memory(),
                 lambda fw: fw.accelerator.current_device_index()):
        assert both(call)[0] == "raises"


def test_the_device_lines_of_a_real_script_run():
    """The lines the official examples start with, verbatim."""
    torch_ = tinygrad_pool
    use_cuda = torch_.cuda.is_available()
    use_mps = torch_.backends.mps.is_available()
    device = torch_.device("cuda" if use_cuda else "mps" if use_mps else "cpu")
    accelerator = torch_.accelerator.current_accelerator() if torch_.accelerator.is_available() \
        else torch_.device("cpu")
    model = tinygrad_pool.nn.Linear(3, 2).to(device)
    x = torch_.ones(4, 3).to(accelerator)
    with torch_.device("cpu"):
        assert model(x).device == device


# ---- the legacy constructor and the default dtype --------------------------------------------
CONSTRUCTOR_ARGS = {
    "nothing": (), "sizes": (2, 3), "one size": (3,), "a Size": "Size", "int list": ([1, 2],),
    "bool list": ([True, False],), "float list": ([[1.5, 2.0]],), "tuple": ((2, 3),),
    "int64 array": (np.arange(3),), "float64 array": (np.linspace(0, 1, 4),),
    "bool array": (np.array([True]),), "float": (3.5,), "numpy float": (np.float64(2.0),),
    "negative size": (-1,), "ragged": ([[1, 2], [3]],), "ragged deeper": ([[[1], [2]], [[3]]],),
    "a string": ("ab",), "size and float": (2, 3.0),
}


@pytest.mark.parametrize("name", list(CONSTRUCTOR_ARGS))
def test_the_tensor_constructor_makes_what_torchs_makes(name):
    def program(fw):
        args = CONSTRUCTOR_ARGS[name]
        args = (fw.Size([2, 3]),) if args == "Size" else args
        t = fw.Tensor(*args)
        return str(t.dtype).replace("torch.", ""), tuple(t.shape)
    both(program)


def test_the_constructor_of_a_tensor_is_an_alias_of_it():
    def program(fw):
        facts = []
        for t in (fw.zeros(2), fw.tensor([1, 2]), fw.ones(2, requires_grad=True) * 2):
            alias = fw.Tensor(t)
            alias.data[0] = 7  # the same memory
            facts.append((alias is t, str(alias.dtype).replace("torch.", ""), t.detach().numpy().tolist(),
                          alias.requires_grad, alias.grad_fn is None))
        return facts
    both(program)


def test_a_ragged_list_says_where_it_is_ragged():
    with pytest.raises(ValueError, match=r"^Tensor: expected sequence of length 2 at dim 1 "
                                         r"\(got 1\)"):
        tinygrad_pool.Tensor([[1, 2], [3]])
    with pytest.raises(ValueError, match=r"^tensor: expected sequence of length 1 at dim 2 "):
        tinygrad_pool.tensor([[[1], [2]], [[3], [4, 5]]])


@pytest.fixture
def float64_default():
    tinygrad_pool.set_default_dtype(tinygrad_pool.float64)
    torch.set_default_dtype(torch.float64)
    yield
    tinygrad_pool.set_default_dtype(tinygrad_pool.float32)
    torch.set_default_dtype(torch.float32)


def test_the_default_dtype_drives_constructors_factories_and_layers(float64_default):
    def program(fw):
        made = [fw.Tensor([1, 2]), fw.Tensor(2), fw.zeros(2), fw.ones(1), fw.rand(2),
                fw.randn(2), fw.full((2,), 1.5), fw.arange(3.0), fw.linspace(0, 1, 3),
                fw.tensor([1.0]), fw.empty(2), fw.nn.Linear(2, 2, dtype=None).weight,
                fw.nn.Conv2d(1, 1, 2).weight, fw.nn.BatchNorm2d(2).running_var,
                fw.nn.LayerNorm(3).weight, fw.nn.Embedding(3, 2).weight]
        return [str(t.dtype).replace("torch.", "") for t in made]
    assert set(both(program)[1]) == {"float64"}


def test_a_layer_given_dtype_none_by_a_subclass_makes_the_default_dtype():
    class Layer(tinygrad_pool.nn.Linear):
        def __init__(self, dtype=None):
            super().__init__(2, 3, dtype=dtype)
    assert Layer().weight.dtype == tinygrad_pool.float32
    assert Layer(dtype=tinygrad_pool.float64).weight.dtype == tinygrad_pool.float64


# ---- .data -----------------------------------------------------------------------------------
def test_data_is_a_detached_tensor_over_the_same_memory_as_torchs():
    def program(fw):
        p = fw.tensor([1.0, 2.0, 3.0], requires_grad=True)
        y = p * 2
        d = y.data
        facts = [type(d) is fw.Tensor, d.requires_grad, d.grad_fn is None, d.is_leaf]
        d[0] = 10.0                                   # written through: y sees it ...
        facts += [y.detach().numpy().tolist(), y._version, d._version]  # ... unversioned
        values, indices = fw.max(fw.tensor([[1.0, 5.0], [7.0, 2.0]], requires_grad=True).data, 1)
        facts += [values.numpy().tolist(), indices.numpy().tolist()]
        with fw.no_grad():
            p.data.add_(fw.ones(3))                   # the classic manual update
            p.data.sub_(p.grad.data if p.grad is not None else fw.zeros(3))
        facts += [p.detach().numpy().tolist(), p.is_leaf, p.requires_grad]
        p.data = fw.zeros(2, dtype=fw.float64)        # a new value, shape and dtype
        facts += [tuple(p.shape), str(p.dtype).replace("torch.", ""), p.requires_grad, p.is_leaf]
        s = fw.ones(3).data.sum()
        facts += [type(s) is fw.Tensor, s.item()]
        return facts
    both(program)


def test_writing_through_data_escapes_the_saved_tensor_check_as_in_torch():
    def program(fw):
        x = fw.tensor([1.0, 2.0], requires_grad=True)
        y = x.exp()
        y.data.mul_(2)  # torch does not see it: backward uses the changed value
        y.sum().backward()
        return x.grad.numpy().round(4).tolist()  # (float32: 2e, 2e², one ulp apart at most)
    both(program)


def test_data_must_be_set_to_a_tensor():
    p = tinygrad_pool.zeros(2)
    with pytest.raises(TypeError, match="data: value must be a Tensor, got ndarray"):
        p.data = np.zeros(2)


# ---- grad_fn walking --------------------------------------------------------------------------
def test_next_functions_walk_to_accumulate_grad_nodes_as_torchs():
    def program(fw):
        x = fw.ones(2, requires_grad=True)
        w = fw.ones(2, requires_grad=True)
        loss = ((x * 2 + w) * fw.ones(2)).sum()
        shape, node, frontier = [], loss.grad_fn, [loss.grad_fn]
        while frontier:  # breadth first: how many inputs, which are constants, which leaves
            following = []
            for node in frontier:
                edges = node.next_functions
                shape.append([None if n is None else type(n).__name__ == "AccumulateGrad"
                              for n, _ in edges])
                shape.append([index for _, index in edges])
                following += [n for n, _ in edges if n is not None]
            frontier = following
        leaves = [n for n, _ in loss.grad_fn.next_functions[0][0].next_functions[0][0]
                  .next_functions[0][0].next_functions if n is not None]
        leaf = leaves[0]
        return (shape, leaf.variable is x, leaf.name(), leaf.next_functions,
                leaf is loss.grad_fn.next_functions[0][0].next_functions[0][0]
                .next_functions[0][0].next_functions[0][0], callable(loss.grad_fn.name))
    both(program)


def test_a_node_name_is_a_string_and_a_call():
    y = tinygrad_pool.ones(2, requires_grad=True).exp()
    assert y.grad_fn.name == "Exp" and y.grad_fn.name() == "Exp" and f"{y.grad_fn.name}" == "Exp"


# ---- assigning .grad -----------------------------------------------------------------------
@pytest.mark.parametrize("value", ["array", "float", "transposed", "flat", "float64", "none",
                                   "ok"])
def test_assigning_grad_is_checked_at_assignment_as_in_torch(value):
    def program(fw):
        p = fw.zeros(2, 3, requires_grad=True)
        p.grad = {"array": lambda: np.zeros((2, 3)), "float": lambda: 3.0,
                  "transposed": lambda: fw.zeros(3, 2), "flat": lambda: fw.zeros(6),
                  "float64": lambda: fw.zeros(2, 3, dtype=fw.float64), "none": lambda: None,
                  "ok": lambda: fw.ones(2, 3)}[value]()
        return None if p.grad is None else p.grad.numpy().tolist()
    both(program)


def test_a_refused_grad_leaves_the_old_one():
    p = tinygrad_pool.zeros(2, requires_grad=True)
    p.grad = tinygrad_pool.ones(2)
    with pytest.raises(TypeError, match="grad: assigned grad expected to be a Tensor or None but "
                                        "got grad of type ndarray"):
        p.grad = np.zeros(2)
    assert p.grad.numpy().tolist() == [1.0, 1.0]


# ---- mm and NumPy's spellings ---------------------------------------------------------------
def test_mm_and_bmm_methods_as_torchs():
    a, b = np.arange(6.0).reshape(2, 3), np.arange(12.0).reshape(3, 4)
    both(lambda fw: fw.tensor(a).mm(fw.tensor(b)).numpy().tolist())
    both(lambda fw: fw.tensor(a[None]).bmm(fw.tensor(b[None])).numpy().tolist())
    for bad in (lambda fw: fw.tensor(a).mm(fw.tensor(a)), lambda fw: fw.tensor(a[0]).mm(fw.tensor(b)),
                lambda fw: fw.tensor(a).mm(b)):
        assert both(bad)[0] == "raises"


REDUCTIONS = ["sum", "mean", "max", "min", "amax", "amin", "argmax", "argmin", "prod", "std",
              "var", "logsumexp", "all", "any"]


@pytest.mark.parametrize("name", REDUCTIONS)
@pytest.mark.parametrize("spelling", [{"axis": 1}, {"axis": 0, "keepdims": True},
                                      {"dim": 1, "keepdims": True}, {"axis": 1, "dim": 1}])
def test_reductions_take_numpys_axis_and_keepdims_as_torch_does(name, spelling):
    x = np.arange(6.0).reshape(2, 3) - 2.5

    def program(fw):
        t = fw.tensor(x)
        out = getattr(t, name)(**spelling)
        values = out[0] if isinstance(out, tuple) else out
        function = getattr(fw, name)(t, **spelling)
        function = function[0] if isinstance(function, tuple) else function
        return values.numpy().round(10).tolist(), function.numpy().round(10).tolist()
    both(program)


@pytest.mark.parametrize("name", ["cumsum", "softmax", "log_softmax"])
def test_ops_along_a_dim_take_axis_as_torch_does(name):
    x = np.arange(6.0).reshape(2, 3)
    both(lambda fw: getattr(fw.tensor(x), name)(axis=1).numpy().round(10).tolist())
    assert both(lambda fw: getattr(fw.tensor(x), name)(axis=1, keepdims=True))[0] == "raises"


# ---- the remaining bad inputs ----------------------------------------------------------------
@pytest.mark.parametrize("shape", [(1, 1, 0, 3), (1, 1, 3, 0), (0, 1, 3, 3)], ids=str)
def test_conv2d_refuses_a_kernel_of_no_cells_as_torch_does(shape):
    with pytest.raises(RuntimeError):
        torch.nn.functional.conv2d(torch.ones(1, 1, 5, 5), torch.ones(shape))
    with pytest.raises(RuntimeError, match=r"^conv2d: .*\(weight shape \(" + ", ".join(map(str, shape))):
        tinygrad_pool.nn.functional.conv2d(tinygrad_pool.ones(1, 1, 5, 5), tinygrad_pool.ones(shape))


@pytest.mark.parametrize("factory", ["tensor", "empty", "rand", "randn", "randperm"])
def test_factories_take_pin_memory_as_torchs_cpu_build(factory):
    args = {"tensor": ([1.0],), "randperm": (3,)}.get(factory, (2,))
    both(lambda fw: tuple(getattr(fw, factory)(*args, pin_memory=False).shape))
    assert both(lambda fw: getattr(fw, factory)(*args, pin_memory=True))[0] == "raises"
    with pytest.raises(RuntimeError, match=f"^{factory}: pin_memory=True requires a CUDA"):
        getattr(tinygrad_pool, factory)(*args, pin_memory=True)


def test_module_level_seeding_and_method_functions_as_torchs():
    def program(fw):
        fw.manual_seed(7)
        state = fw.get_rng_state()
        first = fw.rand(3).numpy().tolist()
        fw.set_rng_state(state)
        again = fw.rand(3).numpy().tolist()
        x = fw.tensor([[-1.0, 2.0]], requires_grad=True)
        return (fw.initial_seed(), first == again, isinstance(fw.seed(), int),
                fw.clone(x).detach().numpy().tolist(), fw.detach(x).requires_grad,
                fw.square(x).detach().numpy().tolist(),
                fw.logical_not(fw.tensor([True, False])).numpy().tolist(),
                str(state.dtype).replace("torch.", ""))
    both(program)


def test_variable_of_old_scripts_as_torchs():
    def program(fw):
        import warnings
        from importlib import import_module
        Variable = import_module(fw.__name__ + ".autograd").Variable
        x = fw.ones(3, requires_grad=True)
        y = x * 2
        v, w = Variable(y), Variable(fw.ones(2), requires_grad=True)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            Variable(fw.ones(1), volatile=True)
        return (v.grad_fn is None, v.requires_grad, v.numpy().tolist() == [2.0] * 3,
                w.is_leaf, w.requires_grad, isinstance(fw.ones(1), Variable),
                [c.category.__name__ for c in caught])
    both(program)
    assert both(lambda fw: __import__(fw.__name__ + ".autograd", fromlist=["Variable"])
                .Variable([1.0]))[0] == "raises"
