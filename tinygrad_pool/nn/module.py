"""Module and Parameter, PyTorch's way of bundling tensors into a model, and the containers
Sequential, ModuleList, ModuleDict and Identity.

A Module finds its parts the way PyTorch's does: assigning a Parameter or a Module to an
attribute (``self.weight = Parameter(...)``, ``self.features = Sequential(...)``) registers it
under that name, so ``named_parameters()`` can walk the tree and name every tensor with a
dotted path such as ``features.0.weight`` — the keys ``state_dict()`` uses. Everything here
follows torch.nn.Module's behaviour (orders, reprs, error types and texts), so that a torch
script and its state dicts carry over unchanged.
"""
from __future__ import annotations

import itertools
import operator
from collections import OrderedDict, namedtuple
from collections.abc import Iterable, Mapping

import numpy as np

from ..grad_mode import _mode
from ..args import check_flag
from ..engine import Tensor, _node_of, check_device, zero_grad


def _input_nodes(args: tuple, kwargs: dict) -> tuple:
    """The graph nodes of a module call's Tensor arguments (also inside a tuple or list)."""
    if len(args) == 1 and not kwargs and isinstance(args[0], Tensor):  # the common call
        node = _node_of(args[0])
        return () if node is None else (node,)
    nodes = []
    for value in (*args, *kwargs.values()):
        for t in (value if isinstance(value, (tuple, list)) else (value,)):
            if isinstance(t, Tensor):
                node = _node_of(t)
                if node is not None:
                    nodes.append(node)
    return tuple(nodes)


def _note_call(module: "Module", inputs: tuple, output) -> None:
    """Write ``(module, inputs)`` into ``origin["modules"]`` of each node the call's output
    came from: one entry per call (the same tuple on every output of a tuple-returning call), so
    a picture can group the ops between the inputs and the output under the module's name.
    Nothing is noted for an output that is no op's (a constant) or that the call did not make
    (Identity, Dropout in eval mode hand their input back)."""
    entry = None
    for t in (output if isinstance(output, (tuple, list)) else (output,)):
        if not isinstance(t, Tensor) or t.grad_fn is None:
            continue
        node = t.grad_fn
        if any(node is n for n in inputs):
            continue
        entry = entry or (module, inputs)
        if node.origin is None:
            node.origin = {"modules": [entry]}
        else:
            node.origin.setdefault("modules", []).append(entry)


class Parameter(Tensor):
    """A Tensor that is a model's learnable weight: ``requires_grad=True``, float32 by default.

    Data that already is a floating-point array or Tensor keeps its dtype (as ``nn.Parameter``
    keeps the tensor's); anything else (lists, ints) becomes float32, PyTorch's default dtype.
    """

    __slots__ = ()

    def __init__(self, data=None, requires_grad: bool = True, dtype=None, name: str | None = None):
        if data is None:
            data = np.empty((0,), dtype=np.float32)
        if dtype is None:
            array = data._data if isinstance(data, Tensor) else data
            is_float = isinstance(array, np.ndarray) and np.issubdtype(array.dtype, np.floating)
            dtype = array.dtype if is_float else np.float32
        super().__init__(data, requires_grad=requires_grad, dtype=dtype, name=name)

    def __repr__(self) -> str:
        return "Parameter containing:\n" + super().__repr__()


class _IncompatibleKeys(namedtuple("IncompatibleKeys", ["missing_keys", "unexpected_keys"])):
    """What ``load_state_dict`` returns: (missing_keys, unexpected_keys), printed as torch's."""

    __slots__ = ()

    def __repr__(self) -> str:
        if not self.missing_keys and not self.unexpected_keys:
            return "<All keys matched successfully>"
        return super().__repr__()

    __str__ = __repr__


class RemovableHandle:
    """Returned by ``register_forward_hook``/``register_forward_pre_hook``: ``remove()`` (or the
    end of a ``with`` block) takes the hook out again."""

    _ids = itertools.count()

    def __init__(self, hooks: dict):
        self.hooks_dict_ref, self.id = hooks, next(RemovableHandle._ids)

    def remove(self) -> None:
        self.hooks_dict_ref.pop(self.id, None)

    def __enter__(self) -> RemovableHandle:
        return self

    def __exit__(self, *exc_info) -> None:
        self.remove()


def _typename(value) -> str:
    return type(value).__name__


def _indent(text: str, spaces: int) -> str:
    """Every line but the first indented (how torch nests a child's repr in its parent's)."""
    return text.replace("\n", "\n" + " " * spaces)


def _check_name(method: str, kind: str, name, module: Module, registry: dict) -> None:
    """torch's checks (and texts, after the method's name) on a name about to be registered as
    a parameter, buffer or submodule."""
    if not isinstance(name, str):
        raise TypeError(f"{kind} name should be a string. Got {_typename(name)} ({method})")
    if "." in name:
        raise KeyError(f'{kind} name can\'t contain ".", got: {name} ({method})')
    if name == "":
        raise KeyError(f'{kind} name can\'t be empty string "" ({method})')
    if hasattr(module, name) and name not in registry:
        raise KeyError(f"attribute '{name}' already exists")


class Module:
    """Base class of every layer and model: subclass it, assign layers and Parameters in
    ``__init__`` (after ``super().__init__()``), and define ``forward``. Calling the module
    runs its forward pre-hooks, ``forward``, then its forward hooks."""

    training: bool

    def __init__(self):
        # object.__setattr__: our own __setattr__ needs these dicts to exist already.
        set_attribute = object.__setattr__
        set_attribute(self, "training", True)
        set_attribute(self, "_parameters", OrderedDict())
        set_attribute(self, "_buffers", OrderedDict())
        set_attribute(self, "_non_persistent_buffers_set", set())
        set_attribute(self, "_modules", OrderedDict())
        set_attribute(self, "_forward_pre_hooks", OrderedDict())
        set_attribute(self, "_forward_hooks", OrderedDict())

    # ---- registration -----------------------------------------------------------------------
    def _registry(self, name: str, what: str) -> dict:
        registry = self.__dict__.get(name)
        if registry is None:
            raise AttributeError(f"cannot assign {what} before Module.__init__() call (call "
                                 f"super().__init__() first in {_typename(self)}.__init__)")
        return registry

    def register_parameter(self, name: str, param: Parameter | None) -> None:
        """Register ``param`` (or None: an absent optional parameter such as a disabled bias)."""
        parameters = self._registry("_parameters", "parameter")
        _check_name("register_parameter", "parameter", name, self, parameters)
        if param is not None and not isinstance(param, Parameter):
            raise TypeError(f"cannot assign '{_typename(param)}' object to parameter '{name}' "
                            f"(Parameter or None required): register_parameter's param")
        parameters[name] = param

    def register_buffer(self, name: str, tensor: Tensor | None, persistent: bool = True) -> None:
        """Register a tensor that is state but not learned (a running mean): it moves with
        ``to()``, and is saved in ``state_dict`` unless ``persistent=False``."""
        buffers = self._registry("_buffers", "buffer")
        _check_name("register_buffer", "buffer", name, self, buffers)
        if tensor is not None and not isinstance(tensor, Tensor):
            raise TypeError(f"cannot assign '{_typename(tensor)}' object to buffer '{name}' "
                            f"(Tensor or None required): register_buffer's tensor")
        persistent = check_flag("register_buffer", "persistent", persistent)
        buffers[name] = tensor
        if persistent:
            self._non_persistent_buffers_set.discard(name)
        else:
            self._non_persistent_buffers_set.add(name)

    def add_module(self, name: str, module: Module | None) -> None:
        """Register ``module`` as the child ``name`` (what assigning an attribute does)."""
        if module is not None and not isinstance(module, Module):
            raise TypeError(f"{_typename(module)} is not a Module subclass (add_module: module "
                            f"must be a Module or None)")
        modules = self._registry("_modules", "module")
        _check_name("add_module", "module", name, self, modules)
        modules[name] = module

    register_module = add_module

    def _forget(self, name: str, *registries) -> None:
        for registry in registries:
            registry.pop(name, None)
        self._non_persistent_buffers_set.discard(name)
        self.__dict__.pop(name, None)

    def __setattr__(self, name: str, value) -> None:
        state = self.__dict__
        parameters, modules, buffers = (state.get(key) for key in
                                        ("_parameters", "_modules", "_buffers"))
        if isinstance(value, Parameter):
            self._registry("_parameters", "parameters")
            self._forget(name, buffers, modules)
            self.register_parameter(name, value)
        elif parameters is not None and name in parameters:
            if value is not None:  # a slot for a Parameter stays one (None: an absent bias)
                raise TypeError(f"cannot assign '{_typename(value)}' as parameter '{name}' "
                                f"(Parameter or None expected)")
            parameters[name] = None
        elif isinstance(value, Module):
            self._registry("_modules", "module")
            self._forget(name, parameters, buffers)
            modules[name] = value
        elif modules is not None and name in modules:
            if value is not None:
                raise TypeError(f"cannot assign '{_typename(value)}' as child module '{name}' "
                                f"(Module or None expected)")
            modules[name] = None
        elif buffers is not None and name in buffers:
            if value is not None and not isinstance(value, Tensor):
                raise TypeError(f"cannot assign '{_typename(value)}' as buffer '{name}' "
                                f"(Tensor or None expected)")
            buffers[name] = value
        else:
            object.__setattr__(self, name, value)

    def __getattr__(self, name: str):
        # Only called when normal lookup fails, i.e. for registered parameters/buffers/modules.
        state = self.__dict__
        for registry in ("_parameters", "_buffers", "_modules"):
            entries = state.get(registry)
            if entries is not None and name in entries:
                return entries[name]
        raise AttributeError(f"'{_typename(self)}' object has no attribute '{name}'")

    def __delattr__(self, name: str) -> None:
        if name in self._parameters:
            del self._parameters[name]
        elif name in self._buffers:
            del self._buffers[name]
            self._non_persistent_buffers_set.discard(name)
        elif name in self._modules:
            del self._modules[name]
        else:
            object.__delattr__(self, name)

    def __dir__(self):
        names = list(super().__dir__())
        return sorted(set(names + list(self._parameters) + list(self._buffers)
                          + list(self._modules)))

    def get_submodule(self, target: str) -> Module:
        """The submodule at dotted path ``target`` ("" is this module)."""
        module = self
        for part in target.split(".") if target else ():
            child = module._modules.get(part)
            if not isinstance(child, Module):
                raise AttributeError(f"{_typename(module)} has no attribute `{part}`")
            module = child
        return module

    # ---- walking the tree -------------------------------------------------------------------
    def named_modules(self, memo: set | None = None, prefix: str = "",
                      remove_duplicate: bool = True):
        """(dotted name, module) for this module and every descendant, depth first in
        registration order; a module reached twice (shared) is listed once."""
        memo = set() if memo is None else memo
        stack = [(prefix, self)]
        while stack:
            name, module = stack.pop()
            if remove_duplicate:
                if module in memo:  # (Modules hash by identity)
                    continue
                memo.add(module)
            yield name, module
            children = [(f"{name}.{child}" if name else child, m)
                        for child, m in module._modules.items() if m is not None]
            stack.extend(reversed(children))  # reversed: popped in registration order

    def modules(self):
        for _, module in self.named_modules():
            yield module

    def named_children(self):
        seen = set()
        for name, module in self._modules.items():
            if module is not None and module not in seen:
                seen.add(module)
                yield name, module

    def children(self):
        for _, module in self.named_children():
            yield module

    def _named_members(self, method: str, registry: str, prefix: str, recurse: bool,
                       remove_duplicate: bool):
        """Each tensor in ``registry`` of every module (of this one only, unless ``recurse``),
        in registration order; a tensor shared by two modules is listed once."""
        # Checked now, not at the first next(): a generator would defer the error.
        if not isinstance(prefix, str):
            raise TypeError(f"{method}: prefix must be a str, got {_typename(prefix)}")
        return self._walk_members(registry, prefix, recurse, remove_duplicate)

    def _walk_members(self, registry: str, prefix: str, recurse: bool, remove_duplicate: bool):
        modules = (self.named_modules(prefix=prefix, remove_duplicate=remove_duplicate)
                   if recurse else [(prefix, self)])
        seen = set()
        for module_name, module in modules:
            for name, tensor in getattr(module, registry).items():
                if tensor is None or id(tensor) in seen:
                    continue
                if remove_duplicate:
                    seen.add(id(tensor))
                yield (f"{module_name}.{name}" if module_name else name), tensor

    def named_parameters(self, prefix: str = "", recurse: bool = True,
                         remove_duplicate: bool = True):
        """(dotted name, Parameter), e.g. ``("features.0.weight", ...)``, in registration order."""
        return self._named_members("named_parameters", "_parameters", prefix, recurse,
                                   remove_duplicate)

    def parameters(self, recurse: bool = True):
        for _, param in self.named_parameters(recurse=recurse):
            yield param

    def named_buffers(self, prefix: str = "", recurse: bool = True,
                      remove_duplicate: bool = True):
        return self._named_members("named_buffers", "_buffers", prefix, recurse,
                                   remove_duplicate)

    def buffers(self, recurse: bool = True):
        for _, buffer in self.named_buffers(recurse=recurse):
            yield buffer

    def apply(self, fn) -> Module:
        """Call ``fn(module)`` on every submodule and then on self (e.g. custom init)."""
        if not callable(fn):
            raise TypeError(f"apply: fn must be callable (called on each module), got "
                            f"{_typename(fn)}")
        for module in self.children():
            module.apply(fn)
        fn(self)
        return self

    # ---- training ---------------------------------------------------------------------------
    def zero_grad(self, set_to_none: bool = True) -> None:
        """Forget the accumulated gradients: ``grad = None`` (PyTorch's default), or zeros."""
        zero_grad(self.parameters(), set_to_none)

    def train(self, mode: bool = True) -> Module:
        """Set ``training`` on this module and, through their own ``train``, its children."""
        if not isinstance(mode, bool):
            raise ValueError(f"training mode is expected to be boolean (train: mode must be a "
                             f"bool, got {mode!r})")
        self.training = mode
        for module in self.children():
            module.train(mode)
        return self

    def eval(self) -> Module:
        return self.train(False)

    def requires_grad_(self, requires_grad: bool = True) -> Module:
        for param in self.parameters():
            param.requires_grad_(requires_grad)
        return self

    # ---- dtype and device -------------------------------------------------------------------
    def _cast_floating(self, dtype) -> Module:
        """Every floating-point parameter, gradient and buffer as ``dtype``, as torch's
        ``_apply``: each Parameter stays the same object (optimizers keep their references)
        and gets new data; a buffer is replaced by a converted tensor. Integer tensors stay."""
        dtype = np.dtype(dtype)
        for module in self.modules():
            for param in module._parameters.values():
                if param is not None and param.dtype.kind == "f" and param.dtype != dtype:
                    param._data = param._data.astype(dtype)
                    if param.grad is not None:
                        param.grad._data = param.grad._data.astype(dtype)
            for name, buffer in module._buffers.items():
                if buffer is not None and buffer.dtype.kind == "f" and buffer.dtype != dtype:
                    module._buffers[name] = Tensor(buffer._data, dtype=dtype,
                                                   requires_grad=buffer.requires_grad)
        return self

    def to(self, *args, **kwargs) -> Module:
        """``to(dtype)``, ``to("cpu")``, ``to("cpu", dtype)``, ``to(tensor)`` (its dtype):
        floating-point parameters and buffers cast in place. tinygrad_pool has only the CPU."""
        unknown = set(kwargs) - {"device", "dtype", "non_blocking", "memory_format"}
        if unknown:
            raise TypeError(f"to() got an unexpected keyword argument {sorted(unknown)[0]!r}")
        dtype = kwargs.get("dtype")
        for arg in list(args) + [kwargs.get("device")]:
            if arg is None or isinstance(arg, bool):  # (bool: non_blocking, passed positionally)
                continue
            if isinstance(arg, Tensor):
                dtype = arg.dtype
            elif isinstance(arg, str) or "device" in _typename(arg).lower():
                check_device("Module.to", arg)
            else:
                dtype = arg
        if dtype is None:
            return self
        try:
            dtype = np.dtype(dtype)
        except TypeError:
            raise TypeError(f"Module.to: expected a dtype, a device or a Tensor, got "
                            f"{_typename(dtype)} {dtype!r}") from None
        if dtype.kind not in "fc":
            raise TypeError(f"nn.Module.to only accepts floating point or complex dtypes, but "
                            f"got desired dtype={dtype} (keep the model floating point, e.g. "
                            f"model.float(), and convert the input to match: x.float())")
        return self._cast_floating(dtype)

    def float(self) -> Module:
        return self._cast_floating(np.float32)

    def double(self) -> Module:
        return self._cast_floating(np.float64)

    def half(self) -> Module:
        return self._cast_floating(np.float16)

    def cpu(self) -> Module:
        return self

    # ---- calling ----------------------------------------------------------------------------
    def forward(self, *args, **kwargs):
        raise NotImplementedError(f'Module [{_typename(self)}] is missing the required '
                                  f'"forward" function')

    def register_forward_pre_hook(self, hook, *, prepend: bool = False) -> RemovableHandle:
        """``hook(module, args)`` runs before ``forward``; a value it returns (not None)
        replaces the positional arguments (a single value becomes a 1-tuple)."""
        return self._add_hook(self._forward_pre_hooks, hook, prepend)

    def register_forward_hook(self, hook, *, prepend: bool = False) -> RemovableHandle:
        """``hook(module, args, output)`` runs after ``forward``; a value it returns (not
        None) replaces the output."""
        return self._add_hook(self._forward_hooks, hook, prepend)

    @staticmethod
    def _add_hook(hooks: OrderedDict, hook, prepend: bool) -> RemovableHandle:
        if not callable(hook):
            raise TypeError(f"hook must be callable, got {_typename(hook)}")
        handle = RemovableHandle(hooks)
        hooks[handle.id] = hook
        if prepend:
            hooks.move_to_end(handle.id, last=False)
        return handle

    def __call__(self, *args, **kwargs):
        # The nodes the inputs flow into, taken before forward runs: an in-place op inside it
        # (ReLU(inplace=True)) moves an input onto a new node. draw_graph(group="module") reads
        # them to tell this call's ops from the ones before it.
        inputs = _input_nodes(args, kwargs) if _mode.grad_enabled else None
        if not (self._forward_pre_hooks or self._forward_hooks):  # the common case
            output = self.forward(*args, **kwargs)
        else:
            for hook in list(self._forward_pre_hooks.values()):
                result = hook(self, args)
                if result is not None:
                    args = result if isinstance(result, tuple) else (result,)
            output = self.forward(*args, **kwargs)
            for hook in list(self._forward_hooks.values()):
                result = hook(self, args, output)
                if result is not None:
                    output = result
        if inputs is not None:
            _note_call(self, inputs, output)
        return output

    # ---- saving and loading -----------------------------------------------------------------
    def state_dict(self, *, destination=None, prefix: str = "", keep_vars: bool = False):
        """Every parameter and persistent buffer by dotted name, module by module (its own
        parameters, its own buffers, then its children's), as torch orders them.

        The values are detached Tensors that share memory (and version) with the parameters
        and buffers, as torch's are: they follow later optimizer steps; save or copy them to
        keep a snapshot. ``keep_vars=True`` gives the Parameters themselves.
        """
        state = OrderedDict() if destination is None else destination
        for name, param in self._parameters.items():
            if param is not None:
                state[prefix + name] = param if keep_vars else param.detach()
        for name, buffer in self._buffers.items():
            if buffer is not None and name not in self._non_persistent_buffers_set:
                state[prefix + name] = buffer if keep_vars else buffer.detach()
        for name, module in self._modules.items():
            if module is not None:
                module.state_dict(destination=state, prefix=f"{prefix}{name}.",
                                  keep_vars=keep_vars)
        return state

    def load_state_dict(self, state_dict, strict: bool = True) -> _IncompatibleKeys:
        """Copy values (Tensors or arrays) from ``state_dict`` into the parameters and buffers,
        in place (the Parameter objects stay, so optimizers keep working), cast to each one's
        dtype, bumping versions as torch's ``copy_`` does.

        Returns ``(missing_keys, unexpected_keys)``. With ``strict`` either is an error, and a
        shape mismatch always is; torch's messages, all collected, raised before anything is
        copied (torch copies the good entries first; we leave the model as it was).
        """
        if not isinstance(state_dict, Mapping):
            raise TypeError(f"Expected state_dict to be dict-like, got {_typename(state_dict)}.")
        own = self.state_dict(keep_vars=True)
        missing = [key for key in own if key not in state_dict]
        unexpected = [key for key in state_dict if key not in own]
        errors, arrays = [], {}
        for key, target in own.items():
            if key not in state_dict:
                continue
            value = state_dict[key]
            try:
                array = np.asarray(value._data if isinstance(value, Tensor) else value)
            except (ValueError, TypeError):  # ragged lists: NumPy's message would name neither
                errors.append(f'While copying the parameter named "{key}", expected a Tensor or '
                              f'a numeric array from checkpoint but received '
                              f'{_typename(value)}, which load_state_dict cannot read as a '
                              f'regular array (nested sequences of unequal lengths?).')
                continue
            if array.dtype.kind not in "fiub":
                errors.append(f'While copying the parameter named "{key}", expected a Tensor or '
                              f'a numeric array from checkpoint but received '
                              f'{_typename(value)} (dtype {array.dtype}).')
            elif array.shape != target.shape:
                errors.append(f"size mismatch for {key}: copying a param with shape "
                              f"{array.shape} from checkpoint, the shape in current model is "
                              f"{target.shape}.")
            else:
                arrays[key] = array
        if strict:
            if unexpected:
                errors.insert(0, "Unexpected key(s) in state_dict: "
                                 + ", ".join(f'"{key}"' for key in unexpected) + ". ")
            if missing:
                errors.insert(0, "Missing key(s) in state_dict: "
                                 + ", ".join(f'"{key}"' for key in missing) + ". ")
        if errors:
            raise RuntimeError(f"Error(s) in loading state_dict for {_typename(self)}:\n\t"
                               + "\n\t".join(errors))
        for key, array in arrays.items():
            target = own[key]
            np.copyto(target._data, array, casting="unsafe")
            target._bump_version()  # an in-place write, as torch's copy_ under no_grad
        return _IncompatibleKeys(missing, unexpected)

    # ---- printing ---------------------------------------------------------------------------
    def extra_repr(self) -> str:
        """The text inside the parentheses of this module's repr (layers override it)."""
        return ""

    def _get_name(self) -> str:
        return _typename(self)

    def __repr__(self) -> str:
        # torch's layout: settings on one line if there is nothing else, else one entry per
        # line, each child's own repr indented under its "(name): ".
        extra = self.extra_repr()
        lines = extra.split("\n") if extra else []
        children = [f"({name}): " + _indent(repr(module), 2)
                    for name, module in self._modules.items()]
        if len(lines) == 1 and not children:
            return f"{self._get_name()}({lines[0]})"
        lines += children
        body = "\n  " + "\n  ".join(lines) + "\n" if lines else ""
        return f"{self._get_name()}({body})"


def _renumber(container: Module, modules: list) -> None:
    """Make ``modules`` the children of ``container``, named "0", "1", … (after a deletion or an
    insertion, as torch does)."""
    container._modules.clear()
    container._modules.update((str(i), module) for i, module in enumerate(modules))


def _absolute_index(index, length: int, container: str) -> int:
    """An int index (negative counts from the end) as a position, or torch's IndexError."""
    try:
        index = operator.index(index)
    except TypeError:
        raise TypeError(f"{container} indices must be integers or slices, not "
                        f"{_typename(index)}") from None
    if not -length <= index < length:
        raise IndexError(f"index {index} is out of range")
    return index % length


class _ModuleSequence(Module):
    """What Sequential and ModuleList share: children in order, read, replaced, deleted (the
    rest renumbered "0", "1", …) and appended by position."""

    def __len__(self) -> int:
        return len(self._modules)

    def __iter__(self):
        return iter(self._modules.values())

    def __setitem__(self, index, module: Module) -> None:
        setattr(self, self._key(index), module)

    def __delitem__(self, index) -> None:
        keys = list(self._modules)[index] if isinstance(index, slice) else [self._key(index)]
        for key in keys:
            delattr(self, key)
        _renumber(self, list(self._modules.values()))

    def append(self, module: Module):
        self.add_module(str(len(self)), module)
        return self


class Sequential(_ModuleSequence):
    """Modules applied one after another; children are named "0", "1", … (or by the keys of
    an OrderedDict passed alone) and indexable, sliceable, appendable."""

    def __init__(self, *modules):
        super().__init__()
        if len(modules) == 1 and isinstance(modules[0], OrderedDict):
            for name, module in modules[0].items():
                self.add_module(name, module)
        else:
            for index, module in enumerate(modules):
                self.add_module(str(index), module)

    def forward(self, input):
        for module in self._modules.values():
            input = module(input)
        return input

    def _key(self, index) -> str:
        return list(self._modules)[_absolute_index(index, len(self), type(self).__name__)]

    def __getitem__(self, index):
        if isinstance(index, slice):
            return type(self)(OrderedDict(list(self._modules.items())[index]))
        return self._modules[self._key(index)]

    def insert(self, index: int, module: Module) -> Sequential:
        if not isinstance(module, Module):
            raise TypeError(f"{_typename(module)} is not a Module subclass")
        n = len(self)
        if not -n <= index <= n:
            raise IndexError(f"Index out of range: {index}")
        modules = list(self._modules.values())
        modules.insert(index, module)
        _renumber(self, modules)
        return self

    def extend(self, sequential) -> Sequential:
        for module in sequential:
            self.append(module)
        return self

    def pop(self, index) -> Module:
        module = self[index]
        del self[index]
        return module

    def __add__(self, other: Sequential) -> Sequential:
        if not isinstance(other, Sequential):
            raise ValueError(f"add operator supports only objects of Sequential class, but "
                             f"{_typename(other)} is given.")
        return Sequential(*self, *other)

    def __iadd__(self, other: Sequential) -> Sequential:
        if not isinstance(other, Sequential):
            raise ValueError(f"add operator supports only objects of Sequential class, but "
                             f"{_typename(other)} is given.")
        return self.extend(other)


class ModuleList(_ModuleSequence):
    """A list of Modules, registered as children "0", "1", …; it has no forward of its own."""

    def __init__(self, modules=None):
        super().__init__()
        if modules is not None:
            self.extend(modules)

    def _key(self, index) -> str:
        return str(_absolute_index(index, len(self), "ModuleList"))

    def __getitem__(self, index):
        if isinstance(index, slice):
            return type(self)(list(self._modules.values())[index])
        return self._modules[self._key(index)]

    def extend(self, modules) -> ModuleList:
        if not isinstance(modules, Iterable):
            raise TypeError(f"ModuleList.extend should be called with an iterable, but got "
                            f"{_typename(modules)}")
        for module in list(modules):  # (a list first: extending by itself must terminate)
            self.append(module)
        return self

    def insert(self, index: int, module: Module) -> None:
        """Insert before ``index`` (negative counts from the end, as list.insert)."""
        if module is not None and not isinstance(module, Module):
            raise TypeError(f"{_typename(module)} is not a Module subclass")
        modules = list(self._modules.values())
        modules.insert(operator.index(index), module)
        _renumber(self, modules)

    def pop(self, index=-1) -> Module:
        module = self[index]
        del self[index]
        return module

    def __iadd__(self, modules) -> ModuleList:
        return self.extend(modules)

    def __add__(self, other) -> ModuleList:
        return ModuleList(list(self) + list(other))

    def __repr__(self) -> str:
        # torch's: a run of identical consecutive children is printed once, "(0-2): 3 x ...".
        if not self._modules:
            return f"{self._get_name()}()"
        lines, start = [], 0
        for text, run in itertools.groupby(repr(module) for module in self):
            count = len(list(run))
            head = f"({start}): " if count == 1 else f"({start}-{start + count - 1}): {count} x "
            lines.append(_indent(head + text, 2))
            start += count
        return f"{self._get_name()}(\n  " + "\n  ".join(lines) + "\n)"


class ModuleDict(Module):
    """A dict of Modules (insertion order), registered as children under their keys."""

    def __init__(self, modules=None):
        super().__init__()
        if modules is not None:
            self.update(modules)

    def __getitem__(self, key: str) -> Module:
        return self._modules[key]

    def __setitem__(self, key: str, module: Module) -> None:
        self.add_module(key, module)

    def __delitem__(self, key: str) -> None:
        del self._modules[key]

    def __len__(self) -> int:
        return len(self._modules)

    def __iter__(self):
        return iter(self._modules)

    def __contains__(self, key) -> bool:
        return key in self._modules

    def clear(self) -> None:
        self._modules.clear()

    def pop(self, key: str) -> Module:
        module = self[key]
        del self[key]
        return module

    def keys(self):
        return self._modules.keys()

    def items(self):
        return self._modules.items()

    def values(self):
        return self._modules.values()

    def update(self, modules) -> None:
        """From a mapping, a ModuleDict, or an iterable of (key, module) pairs."""
        if not isinstance(modules, Iterable):
            raise TypeError(f"ModuleDict.update should be called with an iterable of key/value "
                            f"pairs, but got {_typename(modules)}")
        if isinstance(modules, (Mapping, ModuleDict)):
            for key, module in modules.items():
                self[key] = module
            return
        for j, pair in enumerate(modules):
            if not isinstance(pair, Iterable):
                raise TypeError(f"ModuleDict update sequence element #{j} should be Iterable; "
                                f"is {_typename(pair)}")
            pair = list(pair)
            if len(pair) != 2:
                raise ValueError(f"ModuleDict update sequence element #{j} has length "
                                 f"{len(pair)}; 2 is required")
            self[pair[0]] = pair[1]


class Identity(Module):
    """Returns its input; its arguments are accepted and ignored (as torch's)."""

    def __init__(self, *args, **kwargs):
        super().__init__()

    def forward(self, input):
        return input
