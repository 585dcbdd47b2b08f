"""The engine: a Tensor records the node that made it, and backward() walks that graph.

    tensor.py    the Tensor: its array, its gradient, the node that made it, its views
    data.py      Size, OMITTED, numpy_spellings: the small types and checks around it
    node.py      Node: one op applied once — forward and backward side by side, what it saved
    backward.py  the chain rule in reverse topological order, and Tensor.backward()
    views.py     in-place writes, through views too, with version counters

It imports no op: ops/ builds on it, and tinygrad_pool/methods.py gives Tensor its op methods.
Read tensor.py, node.py, backward.py and one op file (ops/dropout.py) and you have seen the whole
engine: docs/architecture.md gives the reading path.
"""
from .data import OMITTED, NotAnOperand, Size, numpy_spellings, ragged_detail
from .tensor import LARGE_BYTES, ReleasedValue, Tensor, attach, check_device
from .node import (AccumulateGrad, BroadcastError, Cast, Node, OnceDifferentiable, _FLAGS_OF_TWO,
                   _last_write, hooks, unbroadcast)
from .backward import _node_of, _topological_order, run_backward, zero_grad
from .views import WriteView  # (importing views attaches the in-place machinery to Tensor)

__all__ = ["LARGE_BYTES", "OMITTED", "NotAnOperand", "ReleasedValue", "Size", "Tensor", "attach",
           "check_device", "numpy_spellings", "ragged_detail", "AccumulateGrad",
           "BroadcastError", "Cast", "Node", "OnceDifferentiable", "_FLAGS_OF_TWO",
           "_last_write", "hooks", "unbroadcast", "_node_of", "_topological_order",
           "run_backward", "zero_grad", "WriteView"]
