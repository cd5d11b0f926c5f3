"""The names CuPy 14.2.0 provides, which the emulator (:mod:`.emulated`) exposes and
nothing else.

Taken from CuPy 14.2.0's own sources and namespace (``cupy/__init__.py``,
``cupy/_core/core.pyx``, ``cupy/_core/_kernel.pyx``) and the comparison table its docs
generate (https://docs.cupy.dev/en/latest/reference/comparison.html, regenerated
against NumPy 2.4.6):
module-level names, ``ndarray`` methods, ``linalg`` and ``fft``, which ufunc methods
exist for which ufuncs, and the NumPy keywords CuPy's functions do not accept.
``cupyx.scipy.special``'s functions are listed from its documentation. The ``ndarray``
methods' keywords, its flags and protocols are read from the installed CuPy 14.2.0
(``tests/gpu/test_cupy_api.py`` checks every table here against CuPy where it is
installed; it imports without a GPU).
"""

# cupy.<name> (functions, ufuncs, dtypes, constants)
MODULE = frozenset({
    "abs", "absolute", "acos", "acosh", "add", "all", "allclose", "amax", "amin", "angle",
    "any", "append", "apply_along_axis", "apply_over_axes", "arange", "arccos", "arccosh",
    "arcsin", "arcsinh", "arctan", "arctan2", "arctanh", "argmax", "argmin", "argpartition",
    "argsort", "argwhere", "around", "array", "array2string", "array_equal", "array_equiv",
    "array_repr", "array_split", "array_str", "asanyarray", "asarray", "asarray_chkfinite",
    "ascontiguousarray", "asfortranarray", "asin", "asinh", "astype", "atan", "atan2",
    "atanh", "atleast_1d", "atleast_2d", "atleast_3d", "average", "bartlett", "base_repr",
    "binary_repr", "bincount", "bitwise_and", "bitwise_count", "bitwise_invert",
    "bitwise_left_shift", "bitwise_not", "bitwise_or", "bitwise_right_shift", "bitwise_xor",
    "blackman", "bool", "bool_", "broadcast", "broadcast_arrays", "broadcast_shapes",
    "broadcast_to", "byte", "c_", "can_cast", "cbrt", "cdouble", "ceil", "choose", "clip",
    "column_stack", "common_type", "complex128", "complex64", "complexfloating", "compress",
    "concat", "concatenate", "conj", "conjugate", "convolve", "copy", "copysign", "copyto",
    "corrcoef", "correlate", "cos", "cosh", "count_nonzero", "cov", "cross", "csingle",
    "cumprod", "cumsum", "cumulative_prod", "cumulative_sum", "deg2rad", "degrees",
    "delete", "diag", "diag_indices", "diag_indices_from", "diagflat", "diagonal", "diff",
    "digitize", "divide", "divmod", "dot", "double", "dsplit", "dstack", "dtype", "e",
    "ediff1d", "einsum", "empty", "empty_like", "equal", "euler_gamma", "exp", "exp2",
    "expand_dims", "expm1", "extract", "eye", "fabs", "fill_diagonal", "finfo", "fix",
    "flatiter", "flatnonzero", "flip", "fliplr", "flipud", "float16", "float32", "float64",
    "float_power", "floating", "floor", "floor_divide", "fmax", "fmin", "fmod",
    "format_float_positional", "format_float_scientific", "frexp", "from_dlpack",
    "frombuffer", "fromfile", "fromfunction", "fromiter", "fromstring", "full", "full_like",
    "gcd", "generic", "genfromtxt", "get_printoptions", "gradient", "greater",
    "greater_equal", "half", "hamming", "hanning", "heaviside", "histogram", "histogram2d",
    "histogramdd", "hsplit", "hstack", "hypot", "i0", "identity", "iinfo", "imag",
    "index_exp", "indices", "inexact", "inf", "inner", "int16", "int32", "int64", "int8",
    "int_", "intc", "integer", "interp", "intersect1d", "intp", "invert", "isclose",
    "iscomplex", "iscomplexobj", "isdtype", "isfinite", "isfortran", "isin", "isinf",
    "isnan", "isneginf", "isposinf", "isreal", "isrealobj", "isscalar", "issubdtype",
    "iterable", "ix_", "kaiser", "kron", "lcm", "ldexp", "left_shift", "less", "less_equal",
    "lexsort", "linspace", "load", "loadtxt", "log", "log10", "log1p", "log2", "logaddexp",
    "logaddexp2", "logical_and", "logical_not", "logical_or", "logical_xor", "logspace",
    "long", "longlong", "mask_indices", "matmul", "matrix_transpose", "max", "maximum",
    "may_share_memory", "mean", "median", "meshgrid", "mgrid", "min", "min_scalar_type",
    "minimum", "mintypecode", "mod", "modf", "moveaxis", "multiply", "nan", "nan_to_num",
    "nanargmax", "nanargmin", "nancumprod", "nancumsum", "nanmax", "nanmean", "nanmedian",
    "nanmin", "nanprod", "nanstd", "nansum", "nanvar", "ndarray", "ndim", "ndindex",
    "negative", "newaxis", "nextafter", "nonzero", "not_equal", "number", "ogrid", "ones",
    "ones_like", "outer", "packbits", "pad", "partition", "percentile", "permute_dims",
    "pi", "piecewise", "place", "poly", "poly1d", "polyadd", "polyfit", "polymul",
    "polysub", "polyval", "positive", "pow", "power", "printoptions", "prod",
    "promote_types", "ptp", "put", "put_along_axis", "putmask", "quantile", "r_", "rad2deg",
    "radians", "ravel", "ravel_multi_index", "real", "real_if_close", "reciprocal",
    "remainder", "repeat", "require", "reshape", "resize", "result_type", "right_shift",
    "rint", "roll", "rollaxis", "roots", "rot90", "round", "row_stack", "s_", "save",
    "savetxt", "savez", "savez_compressed", "searchsorted", "select", "set_printoptions",
    "setdiff1d", "setxor1d", "shape", "shares_memory", "short", "show_config", "sign",
    "signbit", "signedinteger", "sin", "sinc", "single", "sinh", "size", "sort",
    "sort_complex", "split", "sqrt", "square", "squeeze", "stack", "std", "subtract", "sum",
    "swapaxes", "take", "take_along_axis", "tan", "tanh", "tensordot", "tile", "trace",
    "transpose", "trapezoid", "tri", "tril", "tril_indices", "tril_indices_from",
    "trim_zeros", "triu", "triu_indices", "triu_indices_from", "true_divide", "trunc",
    "typename", "ubyte", "ufunc", "uint", "uint16", "uint32", "uint64", "uint8", "uintc",
    "uintp", "ulong", "ulonglong", "union1d", "unique", "unique_all", "unique_counts",
    "unique_inverse", "unique_values", "unpackbits", "unravel_index", "unsignedinteger",
    "unwrap", "ushort", "vander", "var", "vdot", "vectorize", "vsplit", "vstack", "where",
    "zeros", "zeros_like"
})

# NumPy names CuPy lacks (the comparison table's '-' rows)
NOT_PROVIDED = frozenset({
    "asmatrix", "block", "bmat", "busday_count", "busday_offset", "busdaycalendar",
    "bytes_", "character", "clongdouble", "complex256", "datetime64", "datetime_as_string",
    "datetime_data", "einsum_path", "errstate", "flexible", "float128", "frompyfunc",
    "fromregex", "geomspace", "get_include", "getbufsize", "geterr", "geterrcall",
    "histogram_bin_edges", "info", "insert", "is_busday", "isnat", "longdouble", "matrix",
    "matvec", "memmap", "nanpercentile", "nanquantile", "ndenumerate", "nditer",
    "nested_iters", "object_", "polyder", "polydiv", "polyint", "recarray", "record",
    "setbufsize", "seterr", "seterrcall", "show_runtime", "spacing", "str_", "timedelta64",
    "unstack", "vecdot", "vecmat", "void"
})

# cupy.ndarray methods that NumPy's ndarray also has
NDARRAY_METHODS = frozenset({
    "all", "any", "argmax", "argmin", "argpartition", "argsort", "astype", "byteswap",
    "choose", "clip", "compress", "conj", "conjugate", "copy", "cumprod", "cumsum",
    "diagonal", "dot", "dump", "dumps", "fill", "flatten", "max", "mean", "min", "nonzero",
    "partition", "prod", "put", "ravel", "repeat", "reshape", "round", "searchsorted",
    "sort", "squeeze", "std", "sum", "swapaxes", "take", "tobytes", "tofile", "trace",
    "transpose", "var", "view"
})

# cupy.ndarray.flags' attributes: no ``writeable`` (CuPy's arrays always are) and no
# ``contiguous``; an emulated array's flags should have these only
NDARRAY_FLAGS = ("c_contiguous", "f_contiguous", "fnc", "forc", "owndata")

# Python protocols cupy.ndarray has ...
NDARRAY_PROTOCOLS = frozenset({
    "__array_function__", "__array_ufunc__", "__bool__", "__complex__", "__copy__",
    "__deepcopy__", "__divmod__", "__float__", "__int__", "__iter__", "__len__",
    "__matmul__", "__rmatmul__"
})

# ... and those NumPy's has and it lacks: ``operator.index(a)`` and ``a @= b`` raise
# TypeError on a CuPy array, even a 0-d integer one
NDARRAY_NO_PROTOCOLS = frozenset({
    "__imatmul__", "__index__"
})

# the keywords each cupy.ndarray method takes (its signature): NumPy's others (``initial=``,
# ``where=``, ``correction=``, ``stable=``, ...) raise TypeError there
METHOD_KEYWORDS = {
    "all": ('axis', 'keepdims', 'out'),
    "any": ('axis', 'keepdims', 'out'),
    "argmax": ('axis', 'dtype', 'keepdims', 'out'),
    "argmin": ('axis', 'dtype', 'keepdims', 'out'),
    "argpartition": ('axis', 'kth'),
    "argsort": ('axis', 'kind'),
    "astype": ('casting', 'copy', 'dtype', 'order', 'subok'),
    "byteswap": ('inplace',),
    "choose": ('choices', 'mode', 'out'),
    "clip": ('max', 'min', 'out'),
    "compress": ('axis', 'condition', 'out'),
    "conj": (),
    "conjugate": (),
    "copy": ('order',),
    "cumprod": ('axis', 'dtype', 'out'),
    "cumsum": ('axis', 'dtype', 'out'),
    "diagonal": ('axis1', 'axis2', 'offset'),
    "dot": ('b', 'out'),
    "dump": ('file',),
    "dumps": (),
    "fill": ('value',),
    "flatten": ('order',),
    "max": ('axis', 'keepdims', 'out'),
    "mean": ('axis', 'dtype', 'keepdims', 'out'),
    "min": ('axis', 'keepdims', 'out'),
    "nonzero": (),
    "partition": ('axis', 'kth'),
    "prod": ('axis', 'dtype', 'keepdims', 'out'),
    "put": ('indices', 'mode', 'values'),
    "ravel": ('order',),
    "repeat": ('axis', 'repeats'),
    "reshape": ('copy', 'order'),
    "round": ('decimals', 'out'),
    "searchsorted": ('side', 'sorter', 'v'),
    "sort": ('axis', 'kind'),
    "squeeze": ('axis',),
    "std": ('axis', 'ddof', 'dtype', 'keepdims', 'out'),
    "sum": ('axis', 'dtype', 'keepdims', 'out'),
    "swapaxes": ('axis1', 'axis2'),
    "take": ('axis', 'indices', 'out'),
    "tobytes": ('order',),
    "tofile": ('fid', 'format', 'sep'),
    "trace": ('axis1', 'axis2', 'dtype', 'offset', 'out'),
    "transpose": (),
    "var": ('axis', 'ddof', 'dtype', 'keepdims', 'out'),
    "view": ('dtype', 'type'),
}

LINALG = frozenset({
    "LinAlgError", "cholesky", "cond", "cross", "det", "eig", "eigh", "eigvals", "eigvalsh",
    "inv", "lstsq", "matmul", "matrix_power", "matrix_rank", "matrix_transpose", "norm",
    "pinv", "qr", "slogdet", "solve", "svd", "tensorinv", "tensorsolve"
})

FFT = frozenset({
    "config", "fft", "fft2", "fftfreq", "fftn", "fftshift", "hfft", "ifft", "ifft2",
    "ifftn", "ifftshift", "ihfft", "irfft", "irfft2", "irfftn", "rfft", "rfft2", "rfftfreq",
    "rfftn"
})

# cupy.lib.stride_tricks
STRIDE_TRICKS = frozenset({
    "as_strided", "sliding_window_view"
})

# functions that take host (NumPy) arrays: explicit copies to the device
FROM_HOST = frozenset({
    "array", "asanyarray", "asarray", "ascontiguousarray", "asfortranarray"
})

# cupyx.scipy.special
SPECIAL = frozenset({
    "digamma", "entr", "erf", "erfc", "erfcinv", "erfcx", "erfinv", "expit", "gamma",
    "gammaln", "i0", "i0e", "i1", "i1e", "log_expit", "log_ndtr", "logit", "ndtr", "ndtri",
    "polygamma", "psi", "xlog1py", "xlogy", "zeta"
})

# cupyx.scipy.linalg (https://docs.cupy.dev/en/latest/reference/scipy_linalg.html)
SCIPY_LINALG = frozenset({
    "bandwidth", "block_diag", "circulant", "companion", "convolution_matrix", "dft", "expm",
    "fiedler", "fiedler_companion", "hadamard", "hankel", "helmert", "hilbert", "khatri_rao",
    "leslie", "lu", "lu_factor", "lu_solve", "solve_triangular", "toeplitz"
})

# ... of which these take one matrix (``a (ndarray, 2D)``; SciPy's take batches)
SCIPY_LINALG_2D = frozenset({
    "expm", "lu", "lu_factor"
})

# ufunc methods: which ufuncs have them (_kernel.pyx); ``outer`` exists for every ufunc
UFUNC_AT = frozenset({
    "add", "bitwise_and", "bitwise_or", "bitwise_xor", "maximum", "minimum", "subtract"
})

# reduce and accumulate
UFUNC_REDUCE = frozenset({
    "add", "multiply"
})

UFUNC_REDUCEAT = frozenset({
    "add"
})

# NumPy keywords a CuPy function refuses (TypeError), by function
UNSUPPORTED_KEYWORDS = {
    "all": ('where',),
    "amax": ('initial', 'where'),
    "amin": ('initial', 'where'),
    "any": ('where',),
    "arange": ('device', 'like', 'start_or_stop'),
    "argpartition": ('kind', 'order'),
    "argsort": ('order', 'stable'),
    "array": ('like', 'ndmax', 'object'),
    "array_str": ('a',),
    "asanyarray": ('device', 'like'),
    "asarray": ('device', 'like'),
    "ascontiguousarray": ('like',),
    "asfortranarray": ('like',),
    "astype": ('device',),
    "broadcast_arrays": ('subok',),
    "broadcast_to": ('subok',),
    "clip": ('max', 'min'),
    "concat": ('arrays',),
    "concatenate": ('arrays',),
    "copy": ('subok',),
    "corrcoef": ('x',),
    "count_nonzero": ('keepdims',),
    "cov": ('m',),
    "delete": ('obj',),
    "ediff1d": ('ary',),
    "einsum": ('casting', 'order', 'out'),
    "empty": ('device', 'like'),
    "empty_like": ('device',),
    "extract": ('arr',),
    "eye": ('device', 'like'),
    "flip": ('m',),
    "fliplr": ('m',),
    "flipud": ('m',),
    "full": ('device', 'like'),
    "full_like": ('device',),
    "histogram": ('a',),
    "identity": ('like',),
    "indices": ('sparse',),
    "intersect1d": ('ar1', 'ar2'),
    "isin": ('kind',),
    "lexsort": ('axis',),
    "lu": ('p_indices',),
    "linspace": ('device',),
    "load": ('encoding', 'fix_imports', 'max_header_size'),
    "matmul": ('subok', 'x1', 'x2'),
    "max": ('initial', 'where'),
    "mean": ('where',),
    "min": ('initial', 'where'),
    "nanmax": ('initial', 'where'),
    "nanmean": ('where',),
    "nanmin": ('initial', 'where'),
    "nanprod": ('initial', 'where'),
    "nanstd": ('correction', 'mean', 'where'),
    "nansum": ('initial', 'where'),
    "nanvar": ('correction', 'mean', 'where'),
    "ones": ('device', 'like'),
    "ones_like": ('device',),
    "partition": ('kind', 'order'),
    "percentile": ('weights',),
    "prod": ('initial', 'where'),
    "quantile": ('weights',),
    "require": ('like',),
    "reshape": ('shape',),
    "rot90": ('m',),
    "show_config": ('mode',),
    "sort": ('order', 'stable'),
    "stack": ('arrays',),
    "std": ('correction', 'mean', 'where'),
    "sum": ('initial', 'where'),
    "take": ('mode',),
    "take_along_axis": ('arr',),
    "tri": ('like',),
    "trim_zeros": ('axis',),
    "union1d": ('ar1', 'ar2'),
    "unique": ('sorted',),
    "unpackbits": ('count',),
    "unravel_index": ('shape',),
    "var": ('correction', 'mean', 'where'),
    "zeros": ('device', 'like'),
    "zeros_like": ('device',),
}
