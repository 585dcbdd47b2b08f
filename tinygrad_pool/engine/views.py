"""In-place writes: ``x.add_(y)``, ``x[i] = v``, an optimizer's step, through views too.

An in-place op runs out of place, writes the result into the tensor's memory and bumps the
version counter its views share; the tensor then takes over the op's node (``_take_over``), so
later uses see the new value and backward goes through the op, while ops that saved the old
value still find it (or refuse, if they saved the memory itself: the version check). A write
through a view gives the base a ``WriteView`` node (PyTorch's CopySlices).
"""
from __future__ import annotations

import numpy as np

from ..grad_mode import _mode
from .node import Node, _note_write, unbroadcast
from .tensor import ReleasedValue, Tensor, apply_view_path, attach


class WriteView(Node):
    """A base whose view (reached by ``path``) was overwritten with ``value`` — what an in-place
    op on a view does to the base (PyTorch's CopySlices): the view's region of the base takes
    ``value``'s gradient, the rest passes through"""

    def forward(ctx, base, value, path):
        ctx.value_shape = value.shape
        out = np.array(base, order="C")  # (an array: a 0-d gradient may come as a NumPy scalar)
        np.copyto(apply_view_path(out, path), value)
        return out

    def backward(ctx, grad):
        path = ctx.attrs["path"]
        grad_base = WriteView.call(grad, np.zeros((), grad.dtype), path=path) \
            if ctx.needs_input_grad[0] else None
        grad_value = unbroadcast(apply_view_path(grad, path), ctx.value_shape) \
            if ctx.needs_input_grad[1] else None
        return grad_base, grad_value


class InPlace:
    """Tensor's in-place machinery, attached to Tensor below."""

    def _check_inplace(self) -> None:
        if not _mode.grad_enabled:
            return
        if self.grad_fn is None and self._requires_grad:
            raise RuntimeError("a leaf Variable that requires grad is being used in an in-place "
                               "operation.")
        if self._view is not None:
            base = self._view[0]
            if base.grad_fn is None and base._requires_grad:
                raise RuntimeError("a view of a leaf Variable that requires grad is being used "
                                   "in an in-place operation.")

    def _write(self, values: np.ndarray) -> None:
        """Copy ``values`` into this tensor's memory and bump the version it shares."""
        if not self._data.flags.writeable:
            raise RuntimeError(f"in-place write: this tensor's memory is read-only (an expand()ed "
                               f"tensor or a broadcast view, shape {self.shape}); clone() it first")
        shape = values.shape if type(values) is np.ndarray else np.shape(values)
        if shape != self._data.shape and np.broadcast_shapes(shape, self._data.shape) != self._data.shape:
            raise RuntimeError(f"output with shape {list(self.shape)} doesn't match the "
                               f"broadcast shape {list(shape)}")
        try:
            np.copyto(self._data, values, casting="same_kind")
        except TypeError:
            raise RuntimeError(f"result type {np.result_type(values)} can't be cast to the "
                               f"desired output type {self.dtype}") from None
        _note_write(self._counter())

    def _bump_version(self) -> None:
        """Note a write made directly into ``_data`` (optimizers, nn.init, load_state_dict)."""
        _note_write(self._counter())

    def _inplace(self, fn: type, *others, **attrs) -> "Tensor":
        """``x.op_(...)``: the out-of-place op, written back into x's memory; x takes over the
        op's node, so later uses see the new value and backward goes through the op."""
        others = [self._const(o) for o in others]
        recording = _mode.grad_enabled and (self._requires_grad or
                                            any([o._requires_grad for o in others]))
        self._check_inplace()
        if not recording:
            self._write(fn.call(self._data, *[o._data for o in others], **attrs))
            return self
        return self._take_over(fn.apply(self, *others, **attrs))

    def _take_over(self, result: "Tensor") -> "Tensor":
        """Write ``result`` into this tensor and make its node ours (the in-place commit)."""
        ctx = result.grad_fn
        old_value, output_names = self._data, []
        for name, value in list(ctx._saved_items()):
            if value is self._data:
                # The op saved our value from before the write: it keeps that value, as a
                # private copy (PyTorch's original_self), no longer tied to this tensor.
                if old_value is self._data:
                    old_value = np.array(value)
                ctx._resave(name, old_value)
            elif value is result._data:  # the saved output is our memory from now on
                output_names.append(name)
        # The node's inputs, as pictures and saved_for_backward show them: where the input was
        # this tensor, a stand-in for its old self (its old node), so that walking the graph
        # through .parents never loops back to the node that now made this tensor. It holds
        # the private copy if the op saved one (so that under create_graph that copy is the
        # input, differentiable through the old node; a copy keeps the version it had), else
        # this tensor's memory and version counter.
        before = Tensor._make(old_value, self.grad_fn)
        before.name = self.name
        before._version_counter = [self._version] if old_value is not self._data else self._counter()
        ctx.parents = tuple(before if p is self or type(p) is ReleasedValue and p._source() is self
                            else p for p in ctx.parents)
        counter = self._counter()  # (made before the write: the old node may need it too)
        self._write(result._data)
        for name in output_names:
            ctx._resave(name, self._data)
        ctx.output_id, ctx.output_counter, ctx.output_version = id(self._data), counter, counter[0]
        if self._view is None:
            if self.grad_fn is not None and self.grad_fn.retained is self:
                self.grad_fn.retained, ctx.retained = None, self
            self.grad_fn, self._requires_grad = ctx, True
            return self
        # A view: the base's value changed where the view lies. The base takes a node that
        # writes ``result`` into that region (PyTorch's CopySlices), and this view becomes the
        # same view of the new base.
        base, path, _ = self._view
        before = Tensor._make(base._data, base.grad_fn)
        before._version_counter = base._counter()
        node = WriteView.apply(base, result, path=path).grad_fn
        node.parents = (before,) + node.parents[1:]  # as above: no loop back through .parents
        base.grad_fn, base._requires_grad = node, True
        self.grad_fn, self._requires_grad = apply_view_path(base, path).grad_fn, True
        self._view = (base, path, base.grad_fn)
        return self


attach(InPlace)
