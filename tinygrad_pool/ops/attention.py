"""Scaled dot-product attention, composed of the ops it is made of (no Node of its own):

    weights = softmax(q kᵀ · scale + bias)      (bias: 0, or -∞ where a query may not look)
    out = dropout(weights) v

so backward, double backward and the graph picture come from matmul, softmax and dropout. As
PyTorch 2.13's CPU kernel: a query row that every key is masked from gets zeros (its softmax
would be 0/0), with a zero gradient; ``is_causal`` lets query i see keys 0..i (the mask's
top-left triangle, also when there are more keys than queries); ``enable_gqa`` shares each
key/value head among ``query heads / key heads`` consecutive query heads.
"""
import math

import numpy as np

from ..engine import Tensor
from ..args import check_flag, tensor_arg
from .dropout import dropout
from .elementwise import where


def scaled_dot_product_attention(query, key, value, attn_mask=None, dropout_p=0.0,
                                 is_causal=False, scale=None, enable_gqa=False) -> Tensor:
    op = "scaled_dot_product_attention"
    query, key, value = (tensor_arg(op, name, t) for name, t in
                         (("query", query), ("key", key), ("value", value)))
    is_causal, enable_gqa = check_flag(op, "is_causal", is_causal), check_flag(op, "enable_gqa", enable_gqa)
    _check_operands(op, query, key, value)
    if is_causal and attn_mask is not None:
        raise RuntimeError(f"{op}: Explicit attn_mask should not be set when is_causal=True")
    if enable_gqa:
        key, value = _shared_heads(op, query, key), _shared_heads(op, query, value)
    scale = 1 / math.sqrt(query.shape[-1]) if scale is None else scale
    scores = query.matmul(key.transpose(-2, -1)) * scale
    queries, keys = scores.shape[-2:]
    if is_causal:
        attn_mask = Tensor._make(np.tri(queries, keys, dtype=bool), None)
    if attn_mask is None:
        weights = scores.softmax(-1)
    else:
        attn_mask = tensor_arg(op, "attn_mask", attn_mask)
        if attn_mask.dtype == np.bool_:
            blocked = ~attn_mask._data
            bias = Tensor._make(np.where(blocked, -np.inf, 0).astype(scores.dtype), None)
        else:
            bias = attn_mask
        logits = scores + bias
        # A row masked everywhere: softmax over a finite stand-in row, then zeros, so that
        # neither the output nor any gradient sees 0/0.
        unseen = np.all(np.isneginf(np.asarray(logits._data)), axis=-1, keepdims=True)
        if unseen.any():
            logits = where(Tensor._make(unseen, None), 0.0, logits)
            weights = where(Tensor._make(unseen, None), 0.0, logits.softmax(-1))
        else:
            weights = logits.softmax(-1)
    if dropout_p > 0.0:
        weights = dropout(weights, dropout_p, training=True)
    return weights.matmul(value)


def _check_operands(op: str, query: Tensor, key: Tensor, value: Tensor) -> None:
    if query.dtype != key.dtype or query.dtype != value.dtype:
        raise RuntimeError(f"{op}: Expected query, key, and value to have the same dtype, but "
                           f"got query.dtype: {query.dtype} key.dtype: {key.dtype} and "
                           f"value.dtype: {value.dtype} instead.")
    if min(query.ndim, key.ndim, value.ndim) < 2:
        raise RuntimeError(f"{op}: Expected query, key, and value to all be at least 2 "
                           f"dimensional, but got query.dim: {query.ndim} key.dim: {key.ndim} "
                           f"and value.dim: {value.ndim} instead.")
    if query.shape[-1] != key.shape[-1] or key.shape[-2] != value.shape[-2]:
        raise RuntimeError(f"{op}: query and key must have the same embedding size (last dim), "
                           f"key and value the same length (dim -2); got query "
                           f"{tuple(query.shape)}, key {tuple(key.shape)}, value "
                           f"{tuple(value.shape)}")
    if query.dtype.kind != "f":
        raise RuntimeError(f"{op}: expected query, key and value of a floating dtype, got "
                           f"{query.dtype}")


def _shared_heads(op: str, query: Tensor, kv: Tensor) -> Tensor:
    """Repeat each key/value head for the query heads that share it (dim -3), as
    ``repeat_interleave(query heads // heads, dim=-3)``."""
    if query.ndim < 3 or kv.ndim < 3:
        return kv
    heads, query_heads = kv.shape[-3], query.shape[-3]
    if query_heads % heads:
        raise RuntimeError(f"{op}: Number of heads in key and value must divide the number of "
                           f"heads in query (query has {query_heads}, key/value {heads})")
    group = query_heads // heads
    shape = kv.shape
    widened = kv.unsqueeze(-3).expand(*shape[:-2], group, *shape[-2:])
    return widened.reshape(*shape[:-3], heads * group, *shape[-2:])
