"""Op-database entries that do not yet run on the emulated device, each with where
it fails (regenerate with ``python tests/device/emulated_run.py --write``; a test
fails when a listed entry starts to pass, so the list only shrinks)."""

NOT_ON_DEVICE = {
    'elu': '_dtype.py scalar_category: TypeError: expected a number, got ndarray',
    'selu': '_dtype.py scalar_category: TypeError: expected a number, got ndarray',
    'celu': '_dtype.py scalar_category: TypeError: expected a number, got ndarray',
    'softplus': '_tensor.py _not_on_host: TypeError: a device tensor read as NumPy',
    'mish': '_tensor.py _not_on_host: TypeError: a device tensor read as NumPy',
    'mish.inplace': '_tensor.py _not_on_host: TypeError: a device tensor read as NumPy',
    'logsigmoid':
        "ops/activation.py _sigmoid: AttributeError: '_Namespace' object has no attribute 'sigm",
    'glu': "ops/activation.py _sigmoid: AttributeError: '_Namespace' object has no attribute 'sigm",
    'rrelu.training':
        'ops/_registry.py _one_device: RuntimeError: a CPU tensor made for a device op',
    'rrelu_.training':
        'ops/_registry.py _one_device: RuntimeError: a CPU tensor made for a device op',
    'silu.inplace':
        "ops/nn_ops.py _sigmoid: AttributeError: '_Namespace' object has no attribute 'sigmoid'",
    'selu.torch': '_dtype.py scalar_category: TypeError: expected a number, got ndarray',
    'celu.torch': '_dtype.py scalar_category: TypeError: expected a number, got ndarray',
    'bitwise_and_': 'AssertionError: ',
    'bitwise_or_': 'AssertionError: ',
    'bitwise_xor_': 'AssertionError: ',
    '__setitem__.view':
        "ops/_views.py __init__: AttributeError: 'ndarray' object has no attribute '__array_int",
    'scatter.reduce':
        'ops/scatter.py _scatter_into: NotImplementedError: `cupy_multiply.at` is not supported',
    'scatter_reduce.prod':
        'ops/scatter.py _scatter_reduce_forward: NotImplementedError: `cupy_multiply.at` is not',
    'scatter_reduce.mean': 'ops/scatter.py _counts: TypeError: implicit copy to the host',
    'scatter_reduce.amax': 'ops/scatter.py _ties: TypeError: implicit copy to the host',
    'scatter_reduce.amin': 'ops/scatter.py _ties: TypeError: implicit copy to the host',
    'scatter_reduce.prod_zeros':
        'ops/scatter.py _scatter_reduce_forward: NotImplementedError: `cupy_multiply.at` is not',
    'scatter_reduce.method_amax': 'ops/scatter.py _ties: TypeError: implicit copy to the host',
    'scatter_reduce_.mean': 'ops/scatter.py _counts: TypeError: implicit copy to the host',
    'scatter_reduce_.prod':
        'ops/scatter.py _scatter_reduce_forward: NotImplementedError: `cupy_multiply.at` is not',
    'einsum': 'AssertionError: ',
    'linalg.cholesky':
        'ops/_registry.py _one_device: RuntimeError: a CPU tensor made for a device op',
    'linalg.cholesky_ex':
        'ops/_registry.py _one_device: RuntimeError: a CPU tensor made for a device op',
    'linalg.matrix_exp': 'ops/linalg_decomp.py _expm: TypeError: implicit copy to the host',
    'linalg.matrix_exp.gradgrad':
        'ops/linalg_decomp.py _expm: TypeError: implicit copy to the host',
    'linalg.vander': 'ops/joining.py cat: TypeError: a host array given to the device',
    'cholesky': 'ops/_registry.py _one_device: RuntimeError: a CPU tensor made for a device op',
    'matrix_exp': 'ops/linalg_decomp.py _expm: TypeError: implicit copy to the host',
    'linalg.lu': 'ops/linalg_decomp.py _lu_fwd: TypeError: implicit copy to the host',
    'linalg.lu_factor': 'ops/linalg_decomp.py _lu_factor_fwd: TypeError: implicit copy to the host',
    'linalg.lu_factor_ex':
        'ops/linalg_decomp.py _lu_factor_fwd: TypeError: implicit copy to the host',
    'linalg.lu_solve':
        'ops/linalg_decomp.py _perm_from_pivots: TypeError: implicit copy to the host',
    'lu_unpack': 'ops/linalg_decomp.py _perm_from_pivots: TypeError: implicit copy to the host',
    'pdist':
        "ops/indexing.py _vector_index: AttributeError: 'ndarray' object has no attribute '_dat",
    'soft_margin_loss':
        "ops/nn_ops.py _sigmoid: AttributeError: '_Namespace' object has no attribute 'sigmoid'",
    'multilabel_soft_margin_loss':
        "ops/activation.py _sigmoid: AttributeError: '_Namespace' object has no attribute 'sigm",
    'ctc_loss': 'ops/losses.py _ctc_labels: TypeError: implicit copy to the host',
    'argsort': 'AssertionError: sample 3 output 0 is on cpu, not on the device',
    'mode':
        'ops/sorting.py _mode_fwd: NotImplementedError: cupy_maximum.accumulate is not supporte',
    'cummax':
        'ops/sorting.py forward: NotImplementedError: cupy_maximum.accumulate is not supported ',
    'cummin':
        'ops/sorting.py forward: NotImplementedError: cupy_minimum.accumulate is not supported ',
    'logcumsumexp':
        'ops/sorting.py _logcumsumexp_fwd: NotImplementedError: cupy_logaddexp.accumulate is no',
    'quantile.linear': 'ops/sorting.py _quantile: TypeError: a host array given to the device',
    'quantile.lower': 'ops/sorting.py _quantile: TypeError: a host array given to the device',
    'quantile.higher': 'ops/sorting.py _quantile: TypeError: a host array given to the device',
    'quantile.midpoint': 'ops/sorting.py _quantile: TypeError: a host array given to the device',
    'quantile.nearest': 'ops/sorting.py _quantile: TypeError: a host array given to the device',
    'nanquantile.linear': 'ops/sorting.py _quantile: TypeError: a host array given to the device',
    'nanquantile.lower': 'ops/sorting.py _quantile: TypeError: a host array given to the device',
    'nanquantile.higher': 'ops/sorting.py _quantile: TypeError: a host array given to the device',
    'nanquantile.midpoint': 'ops/sorting.py _quantile: TypeError: a host array given to the device',
    'nanquantile.nearest': 'ops/sorting.py _quantile: TypeError: a host array given to the device',
    'repeat_interleave': 'ops/rearrange.py repeat_interleave: TypeError: implicit copy to the host',
    'searchsorted': 'ops/searching.py _search: TypeError: implicit copy to the host',
    'bucketize': 'ops/searching.py _search: TypeError: implicit copy to the host',
    'block_diag': 'ops/matrices.py _block_diag_arrays: TypeError: implicit copy to the host',
    'tril_indices': 'AssertionError: sample 0 output 0 is on cpu, not on the device',
    'triu_indices': 'AssertionError: sample 0 output 0 is on cpu, not on the device',
    'gelu': "ops/nn_ops.py _erf: AttributeError: '_Namespace' object has no attribute 'erf'",
    'silu':
        "ops/nn_ops.py _sigmoid: AttributeError: '_Namespace' object has no attribute 'sigmoid'",
    'embedding':
        "ops/indexing.py _vector_index: TypeError: index_add_(): argument 'index' must be Tenso",
    'binary_cross_entropy': '_dtype.py scalar_category: TypeError: expected a number, got ndarray',
    'binary_cross_entropy_with_logits':
        '_dtype.py scalar_category: TypeError: expected a number, got ndarray',
    'scaled_dot_product_attention':
        'ops/_registry.py _one_device: RuntimeError: a CPU tensor made for a device op',
    'pad.reflect': 'ops/nn_ops.py _fold: TypeError: implicit copy to the host',
    'pad.replicate': 'ops/nn_ops.py _fold: TypeError: implicit copy to the host',
    'pad.circular': 'ops/nn_ops.py _fold: TypeError: implicit copy to the host',
    'imag':
        'ops/pointwise.py imag: RuntimeError: imag is not implemented for tensors with non-comp',
    'interpolate.nearest':
        "ops/_registry.py _inputs: AttributeError: 'NoneType' object has no attribute 'promote'",
    'interpolate.nearest-exact':
        "ops/_registry.py _inputs: AttributeError: 'NoneType' object has no attribute 'promote'",
    'interpolate.linear':
        "ops/_registry.py _inputs: AttributeError: 'NoneType' object has no attribute 'promote'",
    'interpolate.bilinear':
        "ops/_registry.py _inputs: AttributeError: 'NoneType' object has no attribute 'promote'",
    'interpolate.bicubic':
        "ops/_registry.py _inputs: AttributeError: 'NoneType' object has no attribute 'promote'",
    'interpolate.trilinear':
        "ops/_registry.py _inputs: AttributeError: 'NoneType' object has no attribute 'promote'",
    'grid_sample': 'ops/sampling.py _corners: TypeError: a host array given to the device',
    'pack_padded_sequence':
        'ops/_registry.py _one_device: RuntimeError: a CPU tensor made for a device op',
    'pad_sequence': 'ops/joining.py cat: TypeError: a host array given to the device',
    'pad_packed_sequence':
        'ops/_registry.py _one_device: RuntimeError: a CPU tensor made for a device op',
    'to': 'AssertionError: sample 4 output 0 is on cpu, not on the device',
}
