"""The ops: each one a small Function with its forward and its derivative side by side.

elementwise    + - * / ** neg exp log log1p sqrt rsqrt relu sigmoid tanh arctan abs sin cos,
               sign floor ceil round, maximum minimum where, clamp (number or tensor bounds);
               torch's dtype promotion (result_dtype, promote)
activation     leaky_relu elu gelu (exact, tanh) silu, and erf
reduce         sum mean prod var std norm logsumexp cumsum, max/min (whole, or along a dim with
               indices), amax amin argmax argmin
movement       reshape permute flip expand index squeeze unsqueeze unflatten t mT narrow (views),
               repeat roll pad contiguous, cast, copy_/fill_/index_put writes
join           cat stack (one Function), chunk split (views)
select         gather scatter scatter_add index_select masked_fill take_along_dim
matmul         @, einsum
conv           conv2d and its two derivatives (conv_transpose, weight correlation), unfold/fold
pool           max_pool2d (stored argmax; route/gather), avg_pool2d (window sum/spread),
               adaptive avg/max pooling, max_unpool2d; unbatched (C, H, W) input
normalization  batch_norm layer_norm (one Standardize Function)
dropout        dropout dropout2d (the mask saved on ctx)
embedding      embedding (rows by index, scatter-add gradient), one_hot
loss           sum_of_squares, log_softmax softmax, nll_loss cross_entropy, mse l1 smooth_l1
               huber, binary_cross_entropy (with logits)

Each op function checks its own arguments (nn.functional re-exports these functions; the
Tensor methods and the module-level functions of ``tinygrad_pool`` call them). Where a faster
route exists, an op makes one call into ``..fast`` (kernels, reused buffers); window geometry
lives in ``..windows``.
"""
