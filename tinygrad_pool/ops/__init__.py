"""The ops: each one a small Function with its forward and its derivative side by side.

elementwise  + - * / ** neg exp log sqrt relu sigmoid tanh arctan abs
reduce       sum mean max
movement     reshape permute flip index
matmul       @
conv         conv2d (im2col + one matrix product)
pool         max_pool2d (stored argmax), avg_pool2d
loss         sum_of_squares, log_softmax, cross_entropy
window       the sliding-window helpers conv and pooling share
(their large temporaries come from ..scratch, buffers reused between steps)
"""
