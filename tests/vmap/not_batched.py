"""Op-database entries that do not batch under vmap as under torch.vmap without a
loop, each with why: the ops that fall back to a loop over the batch, or the
first failure (regenerate with ``python tests/vmap/vmap_run.py --write``; a test
fails when a listed entry starts to pass, so the list only shrinks)."""

NOT_BATCHED = {
    '__eq__': 'AssertionError: sample 8 dim 0 output 0: values differ by 1.0',
    '__ne__': 'AssertionError: sample 8 dim 0 output 0: values differ by 1.0',
    '__le__': 'AssertionError: sample 8 dim 0 output 0: values differ by 1.0',
    '__gt__': 'AssertionError: sample 8 dim 0 output 0: values differ by 1.0',
    'isin': 'loops: aten::isin',
    '__setitem__.view':
        "backend/functions.py address: AttributeError: 'Batched' object has no attribute '__arr",
    '__setitem__.index':
        'autograd/_batched.py __array__: TypeError: batched: a batched gradient was converted t',
    'index_select':
        'autograd/_batched.py __array_function__: NotImplementedError: batched: no batching rul',
    'index_add':
        'autograd/_batched.py _reshape: ValueError: cannot reshape array of size 27 into shape ',
    'index_add_':
        'autograd/_batched.py _reshape: ValueError: cannot reshape array of size 27 into shape ',
    'index_fill':
        'autograd/_batched.py __setitem__: ValueError: shape mismatch: value array of shape (3,',
    'index_fill_':
        'autograd/_batched.py __setitem__: ValueError: shape mismatch: value array of shape (3,',
    'index_copy':
        'autograd/_batched.py _reshape: ValueError: cannot reshape array of size 18 into shape ',
    'index_copy_':
        'autograd/_batched.py _reshape: ValueError: cannot reshape array of size 18 into shape ',
    'masked_fill':
        "autograd/_batched.py item: NotImplementedError: vmap: It looks like you're calling .it",
    'masked_fill_':
        "autograd/_batched.py item: NotImplementedError: vmap: It looks like you're calling .it",
    'masked_scatter': 'loops: aten::MaskedScatterBackward0, aten::masked_scatter',
    'masked_scatter_':
        "autograd/_batched.py item: NotImplementedError: vmap: It looks like you're calling .it",
    'argwhere':
        'autograd/_batched.py __array_function__: NotImplementedError: batched: no batching rul',
    'addmm': 'loops: aten::addmm',
    'addmm_':
        'autograd/_batched.py __array_ufunc__: TypeError: batched: numpy.add writes a batched r',
    'baddbmm': 'loops: aten::baddbmm',
    'baddbmm_':
        'autograd/_batched.py __array_ufunc__: TypeError: batched: numpy.add writes a batched r',
    'linalg.matrix_exp': 'loops: aten::linalg_matrix_exp',
    'linalg.matrix_exp.gradgrad': 'loops: aten::linalg_matrix_exp',
    'matrix_exp': 'loops: aten::linalg_matrix_exp',
    'linalg.lstsq': 'loops: aten::linalg_lstsq',
    'linalg.lu': 'loops: aten::linalg_lu',
    'linalg.lu_factor':
        "_tensor.py _not_on_host: TypeError: can't convert cpu device type tensor to numpy. Use",
    'linalg.lu_factor_ex': 'loops: aten::LinalgLuFactorExBackward0, aten::linalg_lu_factor_ex',
    'linalg.lu_solve':
        'autograd/_batched.py __array__: TypeError: batched: a batched gradient was converted t',
    'lu_unpack':
        'autograd/_batched.py __array__: TypeError: batched: a batched gradient was converted t',
    'multi_margin_loss':
        "autograd/_batched.py __bool__: NotImplementedError: vmap: It looks like you're attempt",
    'ctc_loss':
        "autograd/_batched.py item: NotImplementedError: vmap: It looks like you're calling .it",
    'median': 'AssertionError: sample 3 grad 0: values differ by 0.7424943724503341',
    'quantile.linear': 'AssertionError: sample 0 grad 1: values differ by 25.8126660150481',
    'nanquantile.linear': 'AssertionError: sample 0 grad 1: values differ by 25.834835881192546',
    'repeat_interleave':
        "autograd/_batched.py __bool__: NotImplementedError: vmap: It looks like you're attempt",
    'searchsorted':
        'autograd/_batched.py __array_function__: NotImplementedError: batched: no batching rul',
    'bucketize':
        'autograd/_batched.py __array_function__: NotImplementedError: batched: no batching rul',
    'histc':
        "autograd/_batched.py item: NotImplementedError: vmap: It looks like you're calling .it",
    'bincount':
        "autograd/_batched.py __bool__: NotImplementedError: vmap: It looks like you're attempt",
    'as_strided_.inplace':
        'AssertionError: sample 0 dim 0 output 0: (3, 2, 2) torch.float64 vs (3, 3, 4) torch.fl',
    'histogram':
        'autograd/_batched.py __array_function__: NotImplementedError: batched: no batching rul',
    'frexp':
        "autograd/_batched.py <lambda>: AttributeError: 'tuple' object has no attribute 'ndim'",
    'embedding': 'AssertionError: sample 1 grad 0: values differ by 0.9912028118634736',
    'nll_loss': 'loops: aten::NllLoss2DBackward0, aten::nll_loss',
    'cross_entropy': 'loops: aten::NllLoss2DBackward0, aten::nll_loss',
    'adaptive_max_pool1d': 'loops: aten::adaptive_max_pool2d',
    'adaptive_max_pool2d': 'loops: aten::adaptive_max_pool2d',
    'adaptive_max_pool3d': 'loops: aten::adaptive_max_pool3d',
    'max_unpool1d':
        "autograd/_batched.py __bool__: NotImplementedError: vmap: It looks like you're attempt",
    'max_unpool2d':
        "autograd/_batched.py __bool__: NotImplementedError: vmap: It looks like you're attempt",
    'max_unpool3d':
        "autograd/_batched.py __bool__: NotImplementedError: vmap: It looks like you're attempt",
    'prod': 'loops: aten::ProdBackward0, aten::ProdBackward1',
    'max': 'AssertionError: sample 2 grad 0: values differ by 0.4949962483002227',
    'min': 'AssertionError: sample 2 grad 0: values differ by 0.4949962483002227',
    'argmax':
        'AssertionError: sample 3 dim 0 output 0: (3, 1, 1) torch.int64 vs (3, 1) torch.int64',
    'argmin':
        'AssertionError: sample 3 dim 0 output 0: (3, 1, 1) torch.int64 vs (3, 1) torch.int64',
    'all': 'AssertionError: sample 4 dim 0 output 0: (3, 3, 4) torch.bool vs (3,) torch.bool',
    'any': 'AssertionError: sample 4 dim 0 output 0: (3, 3, 4) torch.bool vs (3,) torch.bool',
    'grid_sample': 'loops: aten::grid_sampler_2d, aten::grid_sampler_3d',
    'pack_padded_sequence':
        "_tensor.py _not_on_host: TypeError: can't convert cpu device type tensor to numpy. Use",
    'roll': 'AssertionError: sample 3 dim 0 output 0: values differ by 2.6079835571576484',
    'diag': 'loops: aten::diag',
    'as_strided':
        'ops/shape.py as_strided: NotImplementedError: as_strided needs a tensor whose storage ',
}
