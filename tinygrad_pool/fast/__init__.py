"""The speed boundary: faster kernels and memory reuse, kept out of the ops' definitions.

An op in ``ops/`` states what it computes and what its derivative is, on named kernels whose
reference implementations sit beside it (tinygrad_pool/kernels.py). The modules here register
faster replacements under the same names, taking the same arguments and returning the same
numbers; ``set_kernels("reference")`` runs without them. A reader who skips this package still
understands every gradient.

conv         im2col a chunk of images at a time, the convolution's matrix products, col2im
pool         max with argmax, scatter/gather by argmax, window sums
elementwise  ReLU's output and a masked gradient (np.where) in the pool's memory
memory       one pool of blocks reused between steps, each free again once the last array made
             from it is gone (the invariant is written there); private to this package
views        broadcast_to as a read-only view by the ndarray constructor, not NumPy's helper
quiet        np.errstate(all="ignore") by NumPy's context variable: backward and the ops that
             may overflow or divide by zero, silent as torch without errstate's set-up per entry
"""
from . import conv, elementwise, pool  # noqa: F401  (each registers its kernels: ..kernels)
