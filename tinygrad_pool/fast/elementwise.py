"""Faster elementwise kernels: ReLU's output and a masked gradient, in the pool's memory."""
import numpy as np

from ..kernels import replaces
from . import memory


@replaces("relu")
def relu(x):
    """max(0, x) into kept memory in x's layout (a conv's output is a transposed view, and
    ReLU's output then follows it): no page faults for a conv-sized output."""
    return np.maximum(0, x, out=memory.output_like(x))


@replaces("choose")
def choose(condition, a, b):
    """np.where, by multiplying bits where it is a gradient masked to +0 (see memory.where)."""
    return memory.where(condition, a, b)
