"""``torch.layout``: how a tensor's elements are laid out in memory. Every retrograd tensor
is dense (``strided``); PyTorch's other layouts exist as names, and a factory asked for
one refuses it, rather than making a dense tensor in its place."""

from ._named import Named

__all__ = ["layout", "strided", "sparse_coo", "sparse_csr", "sparse_csc", "sparse_bsr",
           "sparse_bsc", "jagged", "check_layout"]


class layout(Named):
    __slots__ = ()


strided, sparse_coo, sparse_csr, sparse_csc, sparse_bsr, sparse_bsc, _mkldnn, jagged = (
    layout(n) for n in ("strided", "sparse_coo", "sparse_csr", "sparse_csc", "sparse_bsr",
                        "sparse_bsc", "_mkldnn", "jagged"))


def check_layout(value, fn):
    """A factory's ``layout=`` as PyTorch parses it (None or a ``torch.layout``); any but
    ``strided`` is refused: retrograd has no sparse or nested tensors."""
    if value is None or value is strided:
        return
    if not isinstance(value, layout):
        raise TypeError(f"{fn}(): argument 'layout' must be torch.layout, not "
                        f"{type(value).__name__}")
    raise NotImplementedError(f"{fn}(): layout={value!r}: retrograd's tensors are all dense "
                              f"(torch.strided)")
