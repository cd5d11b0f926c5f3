"""PyTorch's named result tuples (``torch.return_types.max`` and friends).

Each is a tuple subclass with named fields, built like PyTorch's structseqs:
``max((values, indices))``, printed one field per line as PyTorch prints them.

>>> r = retrograd.return_types.max((retrograd.tensor(3.), retrograd.tensor(1)))
>>> r.values, r.indices
(tensor(3.), tensor(1))
"""

from operator import itemgetter

__all__ = ["all_return_types"]


class _StructSeq(tuple):
    __slots__ = ()
    _fields = ()

    def __new__(cls, sequence, dict=None):
        if not hasattr(sequence, "__iter__"):
            raise TypeError("constructor requires a sequence")
        values = tuple(sequence)
        if len(values) != len(cls._fields):
            raise TypeError(f"torch.return_types.{cls.__name__}() takes a "
                            f"{len(cls._fields)}-sequence ({len(values)}-sequence given)")
        return tuple.__new__(cls, values)

    def __repr__(self):
        body = ",\n".join(f"{n}={v!r}" for n, v in zip(self._fields, self, strict=True))
        return f"torch.return_types.{type(self).__name__}(\n{body})"

    def __reduce__(self):
        return (type(self), (tuple(self), {}))

    @property
    def n_fields(self):
        return len(self._fields)

    n_sequence_fields = n_fields

    @property
    def n_unnamed_fields(self):
        return 0


def _structseq(name, fields):
    ns = {"__slots__": (), "_fields": fields, "__match_args__": fields,
          "__module__": __name__, "__qualname__": name,
          "__doc__": f"``{name}({', '.join(fields)})``: a tuple with named fields."}
    for i, f in enumerate(fields):
        ns[f] = property(itemgetter(i), doc=f"Field {i} of the tuple.")
    return type(name, (_StructSeq,), ns)


_VI = ("values", "indices")
_SPECS = {
    "aminmax": ("min", "max"), "cummax": _VI, "cummin": _VI, "frexp": ("mantissa", "exponent"),
    "geqrf": ("a", "tau"), "histogram": ("hist", "bin_edges"),
    "histogramdd": ("hist", "bin_edges"), "kthvalue": _VI,
    "linalg_cholesky_ex": ("L", "info"), "linalg_eig": ("eigenvalues", "eigenvectors"),
    "linalg_eigh": ("eigenvalues", "eigenvectors"), "linalg_inv_ex": ("inverse", "info"),
    "linalg_ldl_factor": ("LD", "pivots"), "linalg_ldl_factor_ex": ("LD", "pivots", "info"),
    "linalg_lstsq": ("solution", "residuals", "rank", "singular_values"),
    "linalg_lu": ("P", "L", "U"), "linalg_lu_factor": ("LU", "pivots"),
    "linalg_lu_factor_ex": ("LU", "pivots", "info"), "linalg_qr": ("Q", "R"),
    "linalg_slogdet": ("sign", "logabsdet"), "linalg_solve_ex": ("result", "info"),
    "linalg_svd": ("U", "S", "Vh"), "lu_unpack": ("P", "L", "U"), "max": _VI, "median": _VI,
    "min": _VI, "mode": _VI, "nanmedian": _VI, "qr": ("Q", "R"), "slogdet": ("sign", "logabsdet"),
    "sort": _VI, "svd": ("U", "S", "V"), "topk": _VI,
    "triangular_solve": ("solution", "cloned_coefficient"),
}

all_return_types = []
for _name, _fields in _SPECS.items():
    globals()[_name] = _cls = _structseq(_name, _fields)
    all_return_types.append(_cls)
    __all__.append(_name)
del _name, _fields, _cls
