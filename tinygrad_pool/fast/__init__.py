"""The speed boundary: kernels and memory reuse, kept out of the ops' definitions.

An op in ``ops/`` states what it computes and what its derivative is; where a faster route
exists it makes one call into this package, on NumPy arrays, with a name that says what comes
back. A reader who skips this package still understands every gradient.

memory   one pool of blocks reused between steps (temporaries, saved arrays, gradients and
         outputs are all views of them), and the reference-count rule that hands a block out
         again only when no array made from it is left (the invariant is written there)
conv     im2col a chunk of images at a time, the convolution's matrix products, col2im
pool     max with argmax (phase-split fast path), scatter/gather by argmax, window sums
views    broadcast_to as a read-only view by the ndarray constructor, not NumPy's helper
quiet    np.errstate(all="ignore") by NumPy's context variable: backward and the ops that
         may overflow or divide by zero, silent as torch without errstate's set-up per entry
"""
from . import conv, pool  # noqa: E402,F401  (each registers its kernels: ..kernels)
