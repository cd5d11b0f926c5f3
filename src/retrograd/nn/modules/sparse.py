"""Embedding and EmbeddingBag (weights standard normal, the padding row zero, as
PyTorch)."""

from ... import _creation
from ...autograd import grad_mode
from .. import functional as F
from .. import init
from ..parameter import Parameter
from .module import Module

__all__ = ["Embedding", "EmbeddingBag"]


def _row(padding_idx, num_embeddings, name):
    """``padding_idx`` as a row of the weight (a negative one counted from the end), with
    PyTorch's AssertionError (each module words it its own way: ``name``)."""
    if padding_idx is None:
        return None
    if not -num_embeddings <= padding_idx < num_embeddings:
        raise AssertionError(f"{name} must be within num_embeddings")
    return padding_idx + num_embeddings if padding_idx < 0 else padding_idx


class Embedding(Module):
    def __init__(self, num_embeddings, embedding_dim, padding_idx=None, max_norm=None,
                 norm_type=2.0, scale_grad_by_freq=False, sparse=False, _weight=None,
                 _freeze=False, device=None, dtype=None):
        super().__init__()
        self.num_embeddings, self.embedding_dim = num_embeddings, embedding_dim
        self.padding_idx = _row(padding_idx, num_embeddings, "Padding_idx")
        self.max_norm, self.norm_type = max_norm, norm_type
        self.scale_grad_by_freq, self.sparse = scale_grad_by_freq, sparse
        if _weight is None:
            self.weight = Parameter(_creation.empty(num_embeddings, embedding_dim, dtype=dtype,
                                                    device=device),
                                    requires_grad=not _freeze)
            self.reset_parameters()
        else:
            self.weight = Parameter(_weight, requires_grad=not _freeze)

    def reset_parameters(self):
        init.normal_(self.weight)
        if self.padding_idx is not None:
            with grad_mode.no_grad():
                self.weight._data[self.padding_idx] = 0

    def forward(self, input):
        return F.embedding(input, self.weight, self.padding_idx, self.max_norm,
                           self.norm_type, self.scale_grad_by_freq, self.sparse)

    def extra_repr(self):
        s = f"{self.num_embeddings}, {self.embedding_dim}"
        if self.padding_idx is not None:
            s += f", padding_idx={self.padding_idx}"
        return s

    @classmethod
    def from_pretrained(cls, embeddings, freeze=True, padding_idx=None, **kwargs):
        rows, cols = embeddings.shape
        return cls(rows, cols, padding_idx, _weight=embeddings, _freeze=freeze, **kwargs)


class EmbeddingBag(Module):
    """Bags of embeddings reduced by sum, mean or max (``F.embedding_bag``): an
    ``Embedding`` whose lookups each bag sums without keeping them."""

    def __init__(self, num_embeddings, embedding_dim, max_norm=None, norm_type=2.0,
                 scale_grad_by_freq=False, mode="mean", sparse=False, _weight=None,
                 include_last_offset=False, padding_idx=None, device=None, dtype=None):
        super().__init__()
        self.num_embeddings, self.embedding_dim = num_embeddings, embedding_dim
        self.max_norm, self.norm_type = max_norm, norm_type
        self.scale_grad_by_freq, self.mode, self.sparse = scale_grad_by_freq, mode, sparse
        self.include_last_offset = include_last_offset
        self.padding_idx = _row(padding_idx, num_embeddings, "padding_idx")
        if _weight is None:
            self.weight = Parameter(_creation.empty(num_embeddings, embedding_dim, dtype=dtype,
                                                    device=device))
            self.reset_parameters()
        else:
            if list(_weight.shape) != [num_embeddings, embedding_dim]:
                raise AssertionError("Shape of weight does not match num_embeddings and "
                                     "embedding_dim")
            self.weight = Parameter(_weight)

    reset_parameters = Embedding.reset_parameters

    def forward(self, input, offsets=None, per_sample_weights=None):
        return F.embedding_bag(input, self.weight, offsets, self.max_norm, self.norm_type,
                               self.scale_grad_by_freq, self.mode, self.sparse,
                               per_sample_weights, self.include_last_offset, self.padding_idx)

    def extra_repr(self):
        s = f"{self.num_embeddings}, {self.embedding_dim}"
        if self.max_norm is not None:
            s += f", max_norm={self.max_norm!r}"
        if self.norm_type != 2:
            s += f", norm_type={self.norm_type!r}"
        if self.scale_grad_by_freq is not False:
            s += f", scale_grad_by_freq={self.scale_grad_by_freq!r}"
        s += f", mode={self.mode!r}"
        if self.padding_idx is not None:
            s += f", padding_idx={self.padding_idx!r}"
        return s

    @classmethod
    def from_pretrained(cls, embeddings, freeze=True, max_norm=None, norm_type=2.0,
                        scale_grad_by_freq=False, mode="mean", sparse=False,
                        include_last_offset=False, padding_idx=None):
        if embeddings.dim() != 2:
            raise AssertionError("Embeddings parameter is expected to be 2-dimensional")
        rows, cols = embeddings.shape
        bag = cls(rows, cols, max_norm, norm_type, scale_grad_by_freq, mode, sparse,
                  embeddings, include_last_offset, padding_idx)
        bag.weight.requires_grad = not freeze
        return bag
