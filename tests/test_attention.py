"""F.scaled_dot_product_attention against torch: masks (bool and additive, broadcast), causal
with more keys than queries, rows masked everywhere, grouped-query heads, an explicit scale,
unbatched inputs; forward, gradients and second derivatives in float32 and float64; errors."""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from tinygrad_pool import autograd, tensor
from tinygrad_pool.nn import functional as F

TOLERANCES = {np.float32: dict(rtol=1e-4, atol=1e-5), np.float64: dict(rtol=1e-9, atol=1e-11)}


def _both(torch, arrays, dtype):
    ours = [tensor(a.astype(dtype), requires_grad=True) for a in arrays]
    theirs = [torch.tensor(a.astype(dtype), requires_grad=True) for a in arrays]
    return ours, theirs


def assert_parity(torch, q, k, v, dtype, mask=None, second=True, **kwargs):
    tol = TOLERANCES[dtype]
    (qo, ko, vo), (qt, kt, vt) = _both(torch, (q, k, v), dtype)
    mo = mt = None
    if mask is not None:
        mask = mask if mask.dtype == bool else mask.astype(dtype)
        mo, mt = tensor(mask), torch.tensor(mask)
    yo = F.scaled_dot_product_attention(qo, ko, vo, attn_mask=mo, **kwargs)
    yt = torch.nn.functional.scaled_dot_product_attention(qt, kt, vt, attn_mask=mt, **kwargs)
    assert yo.shape == tuple(yt.shape) and yo.dtype == dtype
    np.testing.assert_allclose(yo.numpy(), yt.detach().numpy(), **tol)
    w = np.random.default_rng(1).standard_normal(yo.shape).astype(dtype)
    go = autograd.grad(yo, [qo, ko, vo], grad_outputs=[tensor(w)], create_graph=second)
    gt = torch.autograd.grad(yt, [qt, kt, vt], grad_outputs=[torch.tensor(w)], create_graph=second)
    for a, b in zip(go, gt):
        np.testing.assert_allclose(a.numpy(), b.detach().numpy(), **tol)
    if second:
        # torch's fused CPU kernel has no second derivative; its math reference (the same
        # composition, written in torch) gives the expected one: d/d(q, k, v) of Σ (∂y/∂q)².
        (qr, kr, vr) = (torch.tensor(t.detach().numpy(), requires_grad=True) for t in (qt, kt, vt))
        yr = _torch_reference(torch, qr, kr, vr, mt, **kwargs)
        (gr,) = torch.autograd.grad(yr, [qr], grad_outputs=[torch.tensor(w)], create_graph=True)
        np.testing.assert_allclose(gr.detach().numpy(), gt[0].detach().numpy(), **tol)
        so = autograd.grad((go[0] * go[0]).sum(), [qo, ko, vo], allow_unused=True)
        sr = torch.autograd.grad((gr * gr).sum(), [qr, kr, vr], allow_unused=True)
        for a, b in zip(so, sr):
            expected = np.zeros(a.shape) if b is None else b.numpy()
            got = np.zeros(expected.shape) if a is None else a.numpy()
            np.testing.assert_allclose(got, expected, rtol=tol["rtol"] * 10,
                                       atol=tol["atol"] * 10 * max(1, np.abs(expected).max()))


def _torch_reference(torch, q, k, v, mask, is_causal=False, scale=None, enable_gqa=False):
    """The composition torch's documentation gives for scaled_dot_product_attention."""
    scale = q.shape[-1] ** -0.5 if scale is None else scale
    if enable_gqa:
        k = k.repeat_interleave(q.shape[-3] // k.shape[-3], -3)
        v = v.repeat_interleave(q.shape[-3] // v.shape[-3], -3)
    logits = q @ k.transpose(-2, -1) * scale
    if is_causal:
        mask = torch.ones(logits.shape[-2:], dtype=torch.bool).tril()
    if mask is not None:
        logits = (logits.masked_fill(~mask, float("-inf")) if mask.dtype == torch.bool
                  else logits + mask)
    return logits.softmax(-1) @ v

def _qkv(rng, batch, heads, kv_heads, queries, keys, e, ev):
    return (rng.standard_normal((*batch, heads, queries, e)),
            rng.standard_normal((*batch, kv_heads, keys, e)),
            rng.standard_normal((*batch, kv_heads, keys, ev)))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@settings(max_examples=25, deadline=None)
@given(batch=st.sampled_from([(), (2,)]), heads=st.integers(1, 3), queries=st.integers(1, 5),
       keys=st.integers(1, 6), e=st.integers(1, 4), ev=st.integers(1, 4),
       causal=st.booleans(), scaled=st.booleans(), seed=st.integers(0, 99))
def test_matches_torch(dtype, batch, heads, queries, keys, e, ev, causal, scaled, seed):
    torch = pytest.importorskip("torch")  # (not the fixture: hypothesis reruns the body)
    q, k, v = _qkv(np.random.default_rng(seed), batch, heads, heads, queries, keys, e, ev)
    assert_parity(torch, q, k, v, dtype, is_causal=causal, scale=0.3 if scaled else None)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("kind", ["bool", "additive", "row_blocked", "broadcast"])
def test_masks(torch, rng, dtype, kind):
    q, k, v = _qkv(rng, (2,), 2, 2, 4, 5, 3, 3)
    if kind == "bool":
        mask = rng.random((4, 5)) < 0.6
        mask[:, 0] = True
    elif kind == "additive":
        mask = rng.standard_normal((2, 2, 4, 5))
    elif kind == "row_blocked":  # query 1 may see no key: zeros out, zero gradient (torch 2.13)
        mask = rng.random((4, 5)) < 0.6
        mask[:, 0] = True
        mask[1] = False
    else:
        mask = rng.random((2, 1, 1, 5)) < 0.7
        mask[..., 0] = True
    assert_parity(torch, q, k, v, dtype, mask=mask, second=kind != "row_blocked")


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_grouped_query_heads(torch, rng, dtype):
    q, k, v = _qkv(rng, (2,), 6, 2, 3, 4, 3, 2)
    assert_parity(torch, q, k, v, dtype, enable_gqa=True, is_causal=True)


def test_dropout_keeps_expected_value(rng):
    import tinygrad_pool
    tinygrad_pool.manual_seed(0)
    q, k, v = (tensor(a) for a in _qkv(rng, (), 1, 1, 2, 3, 2, 2))
    plain = F.scaled_dot_product_attention(q, k, v).numpy()
    mean = np.mean([F.scaled_dot_product_attention(q, k, v, dropout_p=0.5).numpy()
                    for _ in range(3000)], axis=0)
    np.testing.assert_allclose(mean, plain, atol=0.08)
    assert not np.allclose(F.scaled_dot_product_attention(q, k, v, dropout_p=0.5).numpy(), plain)


@pytest.mark.parametrize("case, error", [
    ("causal_and_mask", RuntimeError), ("dtypes", RuntimeError), ("one_dim", RuntimeError),
    ("gqa_heads", RuntimeError), ("heads", RuntimeError)])
def test_errors_as_torch(torch, rng, case, error):
    q, k, v = _qkv(rng, (2,), 3, 3, 4, 6, 5, 7)
    kwargs = {}
    if case == "causal_and_mask":
        kwargs = dict(attn_mask=np.ones((4, 6), bool), is_causal=True)
    elif case == "dtypes":
        q = q.astype(np.float32)
    elif case == "one_dim":
        q = q[0, 0, 0]
    elif case == "gqa_heads":
        k, v, kwargs = k[:, :2], v[:, :2], dict(enable_gqa=True)
    else:
        k, v = k[:, :2], v[:, :2]
    for lib, make, fn in ((torch, torch.tensor, torch.nn.functional.scaled_dot_product_attention),
                          (None, tensor, F.scaled_dot_product_attention)):
        mask = kwargs.get("attn_mask")
        extra = dict(kwargs, attn_mask=None if mask is None else make(mask))
        with pytest.raises(error) as caught:
            fn(make(q), make(k), make(v), **extra)
        if lib is None:
            assert "scaled_dot_product_attention" in str(caught.value) or case == "heads"


@pytest.mark.parametrize("key_shape, value_shape", [((2, 3, 6, 4), (2, 3, 6, 7)),
                                                    ((2, 3, 6, 5), (2, 3, 4, 7))])
def test_mismatched_sizes_name_the_function_and_the_shapes(torch, rng, key_shape, value_shape):
    q, k, v = (rng.standard_normal(shape) for shape in ((2, 3, 4, 5), key_shape, value_shape))
    with pytest.raises(RuntimeError):
        torch.nn.functional.scaled_dot_product_attention(*(torch.tensor(a) for a in (q, k, v)))
    with pytest.raises(RuntimeError, match=r"scaled_dot_product_attention: .*query \(2, 3, 4, 5\)"):
        F.scaled_dot_product_attention(tensor(q), tensor(k), tensor(v))
