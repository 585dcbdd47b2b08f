"""Embedding: a lookup table of learned vectors, one row per index (PyTorch's ``nn.Embedding``,
in the file named as PyTorch's)."""
import numpy as np

from ..args import check_dimension, check_flag, check_number
from ..ops.embedding import _padding_index, embedding
from ..random import default_generator
from .. import dtypes
from ..engine import Tensor, check_device
from .module import Module, Parameter


class Embedding(Module):
    """``weight`` (num_embeddings, embedding_dim), drawn from N(0, 1) with the ``padding_idx``
    row zeroed (that row then never receives a gradient: it stays a fixed pad)."""

    def __init__(self, num_embeddings: int, embedding_dim: int, padding_idx=None, max_norm=None,
                 norm_type: float = 2.0, scale_grad_by_freq: bool = False, sparse: bool = False,
                 _weight=None, _freeze: bool = False, device=None, dtype=None, *, generator=None):
        super().__init__()
        check_device("Embedding", device)
        dtype = dtypes.or_default("Embedding", dtype)
        num_embeddings = check_dimension("Embedding", "num_embeddings", num_embeddings)
        embedding_dim = check_dimension("Embedding", "embedding_dim", embedding_dim)
        # (numbers as torch takes them, a bool included)
        max_norm = None if max_norm is None else check_number("Embedding", "max_norm", max_norm)
        scale_grad_by_freq = check_flag("Embedding", "scale_grad_by_freq", scale_grad_by_freq)
        if check_flag("Embedding", "sparse", sparse):
            raise NotImplementedError("Embedding: sparse=True (sparse gradients) is not "
                                      "supported; use sparse=False for a dense gradient")
        self.num_embeddings, self.embedding_dim = int(num_embeddings), int(embedding_dim)
        self.padding_idx = _padding_index("Embedding", padding_idx, self.num_embeddings)
        self.max_norm, self.norm_type = max_norm, norm_type
        self.scale_grad_by_freq, self.sparse = scale_grad_by_freq, sparse
        if _weight is None:
            self.weight = Parameter(np.empty((self.num_embeddings, self.embedding_dim), dtype),
                                    requires_grad=not _freeze)
            self.reset_parameters(generator)
        else:
            if tuple(_weight.shape) != (self.num_embeddings, self.embedding_dim):
                # (AssertionError: what torch raises here)
                raise AssertionError(f"Shape of weight does not match num_embeddings and "
                                     f"embedding_dim: Embedding got _weight of shape "
                                     f"{tuple(_weight.shape)}, expected "
                                     f"({self.num_embeddings}, {self.embedding_dim})")
            self.weight = Parameter(_weight, requires_grad=not _freeze)

    def reset_parameters(self, generator=None) -> None:
        """weight ~ N(0, 1), then the padding row zeroed (in place)."""
        rng = default_generator() if generator is None else generator
        self.weight._data[...] = rng.standard_normal(self.weight.shape).astype(self.weight.dtype)
        if self.padding_idx is not None:
            self.weight._data[self.padding_idx] = 0
        self.weight._bump_version()

    def forward(self, input):
        return embedding(input, self.weight, self.padding_idx, self.max_norm, self.norm_type,
                         self.scale_grad_by_freq, self.sparse)

    def extra_repr(self) -> str:
        text = f"{self.num_embeddings}, {self.embedding_dim}"
        if self.padding_idx is not None:
            text += f", padding_idx={self.padding_idx}"
        if self.max_norm is not None:
            text += f", max_norm={self.max_norm}"
        if self.norm_type != 2:
            text += f", norm_type={self.norm_type}"
        if self.scale_grad_by_freq is not False:
            text += f", scale_grad_by_freq={self.scale_grad_by_freq}"
        return text

    @classmethod
    def from_pretrained(cls, embeddings, freeze: bool = True, padding_idx=None, max_norm=None,
                        norm_type: float = 2.0, scale_grad_by_freq: bool = False,
                        sparse: bool = False) -> "Embedding":
        """An Embedding whose weight is a copy of the 2-D ``embeddings`` (not re-initialised,
        its padding row included); ``freeze=True``: the weight does not require grad."""
        array = embeddings._data if isinstance(embeddings, Tensor) else np.asarray(embeddings)
        if array.ndim != 2:
            # (AssertionError: what torch raises here)
            raise AssertionError(f"Embeddings parameter is expected to be 2-dimensional: "
                                 f"from_pretrained got shape {array.shape}")
        rows, cols = array.shape
        return cls(rows, cols, padding_idx, max_norm, norm_type, scale_grad_by_freq, sparse,
                   _weight=array, _freeze=freeze)
