"""Module, Parameter and Sequential: PyTorch's way of bundling tensors into a model.

A Module finds its parameters the way PyTorch's does: assigning a Parameter or a Module to an
attribute (``self.weight = Parameter(...)``, ``self.features = Sequential(...)``) registers it
under that name, so ``named_parameters()`` can walk the tree and name every tensor with a
dotted path such as ``features.0.weight`` — the same keys ``state_dict()`` uses.
"""
from __future__ import annotations

from collections import OrderedDict, namedtuple

import numpy as np

from ..tensor import Tensor, zero_grad


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
            array = data.data if isinstance(data, Tensor) else data
            is_float = isinstance(array, np.ndarray) and np.issubdtype(array.dtype, np.floating)
            dtype = array.dtype if is_float else np.float32
        super().__init__(data, requires_grad=requires_grad, dtype=dtype, name=name)

    def __repr__(self) -> str:
        return "Parameter containing:\n" + super().__repr__()


_IncompatibleKeys = namedtuple("IncompatibleKeys", ["missing_keys", "unexpected_keys"])


class Module:
    """Base class of every layer and model: subclass it, assign layers and Parameters in
    ``__init__`` (after ``super().__init__()``), and define ``forward``. Calling the module
    calls ``forward``."""

    def __init__(self):
        # object.__setattr__: our own __setattr__ needs these dicts to exist already.
        object.__setattr__(self, "_parameters", OrderedDict())
        object.__setattr__(self, "_buffers", OrderedDict())
        object.__setattr__(self, "_modules", OrderedDict())
        object.__setattr__(self, "training", True)

    # ---- registration -----------------------------------------------------------------------
    def _registries(self) -> tuple:
        try:
            return self._parameters, self._buffers, self._modules
        except AttributeError:
            raise AttributeError(
                f"{type(self).__name__}: cannot assign parameters or submodules before "
                f"Module.__init__() was called; call super().__init__() first") from None

    def __setattr__(self, name: str, value) -> None:
        if isinstance(value, (Parameter, Module)) or name in self.__dict__.get("_parameters", ()) \
                or name in self.__dict__.get("_modules", ()) or name in self.__dict__.get("_buffers", ()):
            parameters, buffers, modules = self._registries()
            if isinstance(value, Parameter):
                self._forget(name, keep=parameters)  # keep: a replaced weight keeps its place
                parameters[name] = value
                return
            if isinstance(value, Module):
                self._forget(name, keep=modules)
                modules[name] = value
                return
            # Reassigning a registered name: None keeps the slot (a layer with bias=False has
            # a 'bias' that is None); a plain Tensor may replace a buffer; anything else is a bug.
            if name in parameters and value is None:
                parameters[name] = None
                return
            if name in buffers and (value is None or isinstance(value, Tensor)):
                buffers[name] = value
                return
            if name in modules and value is None:
                modules[name] = None
                return
            kind = "parameter" if name in parameters else "buffer" if name in buffers else "submodule"
            raise TypeError(f"{type(self).__name__}: cannot assign {type(value).__name__} to "
                            f"{kind} {name!r}; expected a Parameter, Module, Tensor or None")
        object.__setattr__(self, name, value)

    def _forget(self, name: str, keep=None) -> None:
        """Drop ``name`` from every registry but ``keep`` and from the plain attributes."""
        for registry in self._registries():
            if registry is not keep:
                registry.pop(name, None)
        self.__dict__.pop(name, None)

    def __getattr__(self, name: str):
        # Only called when normal lookup fails, i.e. for registered parameters/buffers/modules.
        for registry in ("_parameters", "_buffers", "_modules"):
            entries = self.__dict__.get(registry)
            if entries is not None and name in entries:
                return entries[name]
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    def __delattr__(self, name: str) -> None:
        if any(name in registry for registry in self._registries()):
            for registry in self._registries():
                registry.pop(name, None)
        else:
            object.__delattr__(self, name)

    def register_parameter(self, name: str, param: Parameter | None) -> None:
        """Register ``param`` (or None, an absent optional parameter such as a disabled bias)."""
        if param is not None and not isinstance(param, Parameter):
            raise TypeError(f"register_parameter: {name!r} must be a Parameter or None, got "
                            f"{type(param).__name__}")
        parameters, _, _ = self._registries()
        self._forget(name)
        parameters[name] = param

    def register_buffer(self, name: str, tensor: Tensor | None) -> None:
        """Register a tensor that is state but not learned (saved in ``state_dict``)."""
        if tensor is not None and not isinstance(tensor, Tensor):
            raise TypeError(f"register_buffer: {name!r} must be a Tensor or None, got "
                            f"{type(tensor).__name__}")
        _, buffers, _ = self._registries()
        self._forget(name)
        buffers[name] = tensor

    def add_module(self, name: str, module: Module | None) -> None:
        if module is not None and not isinstance(module, Module):
            raise TypeError(f"add_module: {name!r} must be a Module or None, got {type(module).__name__}")
        _, _, modules = self._registries()
        self._forget(name)
        modules[name] = module

    # ---- walking the tree -------------------------------------------------------------------
    def named_modules(self, prefix: str = ""):
        """(dotted name, module) for this module and every descendant, depth first, each once."""
        seen, stack = set(), [(prefix, self)]
        while stack:
            name, module = stack.pop()
            if id(module) in seen:
                continue
            seen.add(id(module))
            yield name, module
            children = [(f"{name}.{child}" if name else child, m)
                        for child, m in module._modules.items() if m is not None]
            stack.extend(reversed(children))  # reversed: pop them in registration order

    def modules(self):
        for _, module in self.named_modules():
            yield module

    def named_children(self):
        for name, module in self._modules.items():
            if module is not None:
                yield name, module

    def children(self):
        for _, module in self.named_children():
            yield module

    def _named_tensors(self, registry: str):
        """Each tensor in ``registry`` of every module, once, in registration order."""
        seen = set()
        for module_name, module in self.named_modules():
            for name, tensor in getattr(module, registry).items():
                if tensor is None or id(tensor) in seen:
                    continue
                seen.add(id(tensor))  # a weight shared by two layers is one parameter
                yield (f"{module_name}.{name}" if module_name else name), tensor

    def named_parameters(self):
        """(dotted name, Parameter), e.g. ``("features.0.weight", ...)``, in registration order."""
        return self._named_tensors("_parameters")

    def parameters(self):
        for _, param in self.named_parameters():
            yield param

    def named_buffers(self):
        return self._named_tensors("_buffers")

    def buffers(self):
        for _, buffer in self.named_buffers():
            yield buffer

    def apply(self, fn) -> Module:
        """Call ``fn(module)`` on every submodule and then on self (e.g. custom init)."""
        for module in self.children():
            module.apply(fn)
        fn(self)
        return self

    # ---- training ---------------------------------------------------------------------------
    def zero_grad(self, set_to_none: bool = True) -> None:
        """Forget the accumulated gradients: ``grad = None`` (PyTorch's default), or zeros."""
        zero_grad(self.parameters(), set_to_none)

    def train(self, mode: bool = True) -> Module:
        """Set ``training`` on this module and every descendant (layers like dropout read it)."""
        for module in self.modules():
            object.__setattr__(module, "training", bool(mode))
        return self

    def eval(self) -> Module:
        return self.train(False)

    def requires_grad_(self, requires_grad: bool = True) -> Module:
        for param in self.parameters():
            param.requires_grad = requires_grad
        return self

    def forward(self, *args, **kwargs):
        raise NotImplementedError(f"{type(self).__name__} must define forward()")

    def __call__(self, *args, **kwargs):
        return self.forward(*args, **kwargs)

    # ---- saving and loading -----------------------------------------------------------------
    def state_dict(self) -> OrderedDict:
        """Every parameter and buffer by dotted name, as a copy of its NumPy array."""
        state = OrderedDict()
        for name, tensor in list(self.named_parameters()) + list(self.named_buffers()):
            state[name] = tensor.data.copy()
        return state

    def load_state_dict(self, state_dict, strict: bool = True):
        """Copy arrays (or Tensors) from ``state_dict`` into the parameters and buffers, in place.

        Everything is checked before anything is copied, so a failed load leaves the model as it
        was. Shape mismatches are always errors; missing and unexpected keys are errors when
        ``strict`` (otherwise they are returned, as PyTorch does, in
        ``(missing_keys, unexpected_keys)``). Values are cast to each parameter's dtype.
        """
        if not hasattr(state_dict, "keys") or not hasattr(state_dict, "__getitem__"):
            raise TypeError(f"load_state_dict: expected a mapping of name -> array, got "
                            f"{type(state_dict).__name__}")
        own = OrderedDict(list(self.named_parameters()) + list(self.named_buffers()))
        missing = [name for name in own if name not in state_dict]
        unexpected = [name for name in state_dict.keys() if name not in own]
        mismatched, arrays = [], {}
        for name, tensor in own.items():
            if name not in state_dict:
                continue
            value = state_dict[name]
            array = np.asarray(value.data if isinstance(value, Tensor) else value)
            if array.shape != tensor.shape:
                mismatched.append(f"{name}: expected shape {tensor.shape}, got {array.shape}")
            elif array.dtype.kind not in "fiub":
                mismatched.append(f"{name}: expected numbers, got dtype {array.dtype}")
            else:
                arrays[name] = array
        problems = []
        if strict and missing:
            problems.append("missing key(s): " + ", ".join(missing))
        if strict and unexpected:
            problems.append("unexpected key(s): " + ", ".join(unexpected))
        if mismatched:
            problems.append("size mismatch for " + "; ".join(mismatched))
        if problems:
            raise RuntimeError(f"load_state_dict: error(s) loading state_dict into "
                               f"{type(self).__name__}:\n  " + "\n  ".join(problems))
        for name, array in arrays.items():
            # In place, so optimizers and other holders of the Parameter see the new values.
            np.copyto(own[name].data, array, casting="unsafe")
            own[name]._bump_version()  # an in-place write, as torch's copy_ under no_grad
        return _IncompatibleKeys(missing, unexpected)

    # ---- printing ---------------------------------------------------------------------------
    def extra_repr(self) -> str:
        """The text inside the parentheses of this module's repr (layers override it)."""
        return ""

    def __repr__(self) -> str:
        lines = []
        for name, module in self._modules.items():
            child = repr(module).replace("\n", "\n  ")
            lines.append(f"  ({name}): {child}")
        extra = self.extra_repr()
        if not lines:
            return f"{type(self).__name__}({extra})"
        head = f"{type(self).__name__}(" + (f"\n  {extra}" if extra else "")
        return head + "\n" + "\n".join(lines) + "\n)"


class Sequential(Module):
    """Modules applied one after another; children are named "0", "1", … and indexable."""

    def __init__(self, *modules: Module):
        super().__init__()
        if len(modules) == 1 and isinstance(modules[0], OrderedDict):
            for name, module in modules[0].items():
                self.add_module(name, module)
        else:
            for index, module in enumerate(modules):
                if not isinstance(module, Module):
                    raise TypeError(f"Sequential: argument {index} is a {type(module).__name__}, "
                                    f"not a Module")
                self.add_module(str(index), module)

    def forward(self, input):
        for module in self._modules.values():
            input = module(input)
        return input

    def __len__(self) -> int:
        return len(self._modules)

    def __iter__(self):
        return iter(self._modules.values())

    def __getitem__(self, index):
        modules = list(self._modules.items())
        if isinstance(index, slice):
            return Sequential(OrderedDict(modules[index]))
        if not isinstance(index, (int, np.integer)):
            raise TypeError(f"Sequential indices must be ints or slices, got {type(index).__name__}")
        if not -len(modules) <= index < len(modules):
            raise IndexError(f"Sequential: index {index} is out of range for {len(modules)} modules")
        return modules[index][1]

    def append(self, module: Module) -> Sequential:
        self.add_module(str(len(self)), module)
        return self
