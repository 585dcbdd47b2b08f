"""The ops: each one a small Function with its forward and its derivative side by side.

elementwise  + - * / ** neg exp log sqrt relu sigmoid tanh arctan abs clamp
reduce       sum mean max
movement     reshape permute flip expand index (views), cast, copy_/fill_/index_put writes
matmul       @
conv         conv2d, and its two derivatives (conv_transpose, weight correlation)
pool         max_pool2d (stored argmax; route/gather), avg_pool2d (window sum/spread)
loss         sum_of_squares, log_softmax, nll_loss, cross_entropy, mse_loss
args         the argument checks the op functions share

Each op function checks its own arguments (nn.functional re-exports these functions). Where a
faster route exists, an op makes one call into ``..fast`` (kernels, reused buffers); window
geometry lives in ``..windows``.
"""
