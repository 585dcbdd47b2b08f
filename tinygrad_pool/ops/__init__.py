"""The ops: each one a small Function with its forward and its derivative side by side.

elementwise    + - * / ** neg exp log log1p sqrt rsqrt relu sigmoid tanh arctan abs sin cos,
               sign floor ceil round, maximum minimum where, clamp (number or tensor bounds);
               torch's dtype promotion (result_dtype, promote)
math_functions tan asin acos sinh cosh asinh acosh atanh erfc erfinv exp2 log2 log10 expm1
               reciprocal trunc frac logit sinc, atan2 copysign lerp hypot xlogy fmax fmin
               logaddexp(2) heaviside, nan_to_num, isnan...
division       div with rounding_mode, floor_divide (//), remainder (%), fmod
bitwise        & | ^ ~ << >> on integer and bool tensors
activation     leaky_relu elu gelu (exact, tanh) silu softplus logsigmoid relu6 hardtanh
               hardswish hardsigmoid mish selu celu softsign glu prelu rrelu threshold
               softshrink hardshrink tanhshrink softmin, and erf
reduce         sum mean prod var std norm logsumexp cumsum nansum nanmean trace, max/min
               (whole, or along a dim with indices), amax amin aminmax argmax argmin
cumulative     cumprod cummax cummin logcumsumexp
sort           sort argsort msort topk kthvalue median nanmedian
movement       reshape permute flip expand index squeeze unsqueeze unflatten t mT narrow
               diagonal unfold movedim unbind ravel (views), repeat tile roll rot90 diag
               pixel/channel shuffle contiguous, cast, copy_/fill_/index_put writes
padding        pad: constant, reflect, replicate, circular
resize         interpolate (nearest, nearest-exact, linear, bilinear, ...)
join           cat stack (one Function), chunk split tensor_split (views), h/v/d stack
select         gather scatter (reduce) scatter_add scatter_reduce index_select masked_fill
               masked_select take_along_dim tril triu repeat_interleave meshgrid
matmul         @, einsum, dot outer kron addmm addmv addbmm baddbmm, cdist
attention      scaled_dot_product_attention (composed of matmul, softmax, dropout)
conv           conv1d conv2d and its two derivatives (conv_transpose1d/2d, weight
               correlation), unfold/fold
conv3d         conv3d conv_transpose3d (N-d im2col/col2im)
pool           max_pool1d/2d (stored argmax; route/gather), avg_pool1d/2d (window sum/spread),
               adaptive avg/max pooling 1d/2d, lp_pool, max_unpool1d/2d; unbatched input
pool3d         max_pool3d avg_pool3d adaptive pooling 3d max_unpool3d
normalization  batch_norm layer_norm group_norm instance_norm (one Standardize Function),
               local_response_norm, normalize cosine_similarity pairwise_distance
dropout        dropout dropout2d (the mask saved on ctx)
dropout_variants dropout1d dropout3d alpha_dropout feature_alpha_dropout
embedding      embedding (rows by index, scatter-add gradient), one_hot
loss           sum_of_squares, log_softmax softmax, nll_loss cross_entropy, mse l1 smooth_l1
               huber, binary_cross_entropy (with logits), kl_div, poisson/gaussian nll, the
               margin, ranking, embedding and triplet losses

Each op function checks its own arguments (nn.functional re-exports these functions; the
Tensor methods and the module-level functions of ``tinygrad_pool`` call them). Where a faster
route exists, an op makes one call into ``..fast`` (kernels, reused buffers); window geometry
lives in ``..windows``.
"""
