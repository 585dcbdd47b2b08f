"""The torch names tinygrad_pool does not have, so that using one fails loudly: reading any of
them raises AttributeError pointing to docs/porting.md, never a silently different behaviour.

``TENSOR`` lists torch 2.13's public ``torch.Tensor`` attributes that our Tensor lacks
(tests/test_porting_docs.py keeps it in step with the code and with torch). Module attributes
(``tinygrad_pool.cuda``, ``nn.Transformer``) need no list: those modules' ``__getattr__``
(``module_getattr``) says so for any missing name, and importing a submodule they lack
(``import tinygrad_pool.nn.quantized``) raises ModuleNotFoundError saying so
(``refuse_submodules``).
"""
import sys

TENSOR = frozenset("""
    H addr addr_ adjoint angle apply_ as_strided as_strided_ as_strided_scatter as_subclass
    bfloat16 cauchy_ ccol_indices cdouble cfloat chalf cholesky cholesky_inverse cholesky_solve
    coalesce col_indices conj conj_physical conj_physical_ const_data_ptr corrcoef cov
    crow_indices data_ptr dense_dim dequantize det diag_embed diagflat diagonal_scatter digamma
    digamma_ dim_order dist eig exponential_ frexp gcd gcd_ geometric_ geqrf grad_dtype
    hardshrink hash_tensor heaviside_ histogram i0 i0_ igamma igamma_ igammac igammac_ imag
    index index_put index_put_ index_reduce index_reduce_ indices int_repr inverse ipu
    is_coalesced is_complex is_conj is_distributed is_inference is_ipu is_maia is_mkldnn
    is_mtia is_neg is_nested is_nonzero is_quantized is_same_size is_set_to is_shared is_sparse
    is_sparse_csr is_vulkan is_xla isreal istft layout lcm lcm_ ldexp ldexp_ lgamma lgamma_
    log_normal_ logdet lstsq lu lu_solve mH map2_ map_ matrix_exp matrix_power module_load mtia
    mvlgamma mvlgamma_ narrow_copy new new_empty_strided nextafter nextafter_ nonzero_static
    orgqr ormqr output_nr pinverse polygamma polygamma_ prelu put put_ q_per_channel_axis
    q_per_channel_scales q_per_channel_zero_points q_scale q_zero_point qr qscheme random_ real
    record_stream register_hook register_post_accumulate_grad_hook reinforce renorm renorm_
    resize resize_ resize_as resize_as_ resize_as_sparse_ resolve_conj resolve_neg row_indices
    select_scatter set_ share_memory_ slice_inverse slice_scatter slogdet smm solve sparse_dim
    sparse_mask sparse_resize_ sparse_resize_and_clear_ split_with_sizes squeeze_ sspaddmm stft
    storage storage_offset storage_type svd swapaxes_ swapdims_ symeig t_ to_dense to_mkldnn
    to_padded_tensor to_sparse to_sparse_bsc to_sparse_bsr to_sparse_coo to_sparse_csc
    to_sparse_csr transpose_ triangular_solve unsafe_chunk unsafe_split unsafe_split_with_sizes
    unsqueeze_ untyped_storage values volatile xpu
""".split())


def message(owner: str, name: str) -> str:
    attribute = name.rsplit(".", 1)[-1]
    return (f"{owner} has no attribute {attribute!r}: "
            + not_supported(name if '.' in name else 'Tensor.' + name))


def not_supported(torch_name: str) -> str:
    return (f"tinygrad_pool does not support {torch_name} (the supported torch names are listed "
            f"in docs/porting.md)")


def module_getattr(module: str, torch_module: str):
    """A module's ``__getattr__`` (called only for a name it lacks): dunders as Python's plain
    AttributeError, anything else as a torch name we do not support."""
    def __getattr__(name: str):
        if name.startswith("__"):
            raise AttributeError(f"module {module!r} has no attribute {name!r}")
        raise AttributeError(message(f"module {module!r}", f"{torch_module}.{name}"))
    return __getattr__


# ---- submodules ---------------------------------------------------------------------------------
# ``import tinygrad_pool.nn.quantized`` reaches no attribute: the import system asks the finders
# on sys.meta_path for the module. The last of them, after every real one has found nothing,
# refuses a submodule of a registered package with the same pointer.
_PACKAGES = {}  # our package's name -> torch's (a missing submodule of it is refused)


def refuse_submodules(package: str, torch_module: str) -> None:
    """Make ``import {package}.X`` (and ``from {package} import X``) of a submodule we lack
    raise ModuleNotFoundError pointing to docs/porting.md. A plain module becomes an (empty)
    package, as torch's is (``torch.nn.utils.rnn``): without ``__path__`` Python refuses the
    import before asking any finder."""
    module = sys.modules[package]
    if not hasattr(module, "__path__"):
        module.__path__ = []
    _PACKAGES[package] = torch_module
    if _FINDER not in sys.meta_path:
        sys.meta_path.append(_FINDER)


class _UnsupportedSubmodules:
    """A meta path finder that finds nothing: it refuses what no other finder found."""

    @staticmethod
    def find_spec(fullname: str, path=None, target=None):
        package, _, name = fullname.rpartition(".")
        if package not in _PACKAGES:
            return None
        # name=None, not fullname: ``from package import X`` ignores a ModuleNotFoundError
        # named after X (Python's compatibility rule) and would say "cannot import name" only.
        raise ModuleNotFoundError(f"No module named {fullname!r}: "
                                  + not_supported(f"{_PACKAGES[package]}.{name}"), name=None)


_FINDER = _UnsupportedSubmodules()
