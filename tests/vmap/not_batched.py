"""Op-database entries that do not batch under vmap as under torch.vmap without a
loop, each with why: the ops that fall back to a loop over the batch, or the
first failure (regenerate with ``python tests/vmap/vmap_run.py --write``; a test
fails when a listed entry starts to pass, so the list only shrinks)."""

NOT_BATCHED = {
    'remainder_': 'loops: aten::remainder_',
    'fmod_': 'loops: aten::fmod_',
    'pow_': 'loops: aten::pow_',
    'clamp_': 'loops: aten::clamp_',
    'clip_': 'loops: aten::clip_',
    'lerp_': 'loops: aten::lerp_',
    'addcmul_': 'loops: aten::addcmul_',
    'addcdiv_': 'loops: aten::addcdiv_',
    '__imod__': 'loops: aten::remainder_',
    '__ipow__': 'loops: aten::pow_',
    'eq_': 'loops: aten::eq_',
    'ne_': 'loops: aten::ne_',
    'not_equal_': 'loops: aten::not_equal_',
    'lt_': 'loops: aten::lt_',
    'less_': 'loops: aten::less_',
    'le_': 'loops: aten::le_',
    'less_equal_': 'loops: aten::less_equal_',
    'gt_': 'loops: aten::gt_',
    'greater_': 'loops: aten::greater_',
    'ge_': 'loops: aten::ge_',
    'greater_equal_': 'loops: aten::greater_equal_',
    '__eq__': 'AssertionError: sample 8 dim 0 output 0: values differ by 1.0',
    '__ne__': 'AssertionError: sample 8 dim 0 output 0: values differ by 1.0',
    '__le__': 'AssertionError: sample 8 dim 0 output 0: values differ by 1.0',
    '__gt__': 'AssertionError: sample 8 dim 0 output 0: values differ by 1.0',
    'isin': 'loops: aten::isin',
    '__setitem__.view':
        "backend/functions.py address: AttributeError: 'Batched' object has no attribute '__arr",
    '__setitem__.index':
        'autograd/_batched.py __array__: TypeError: batched: a batched gradient was converted t',
    'scatter_': 'loops: aten::scatter_',
    'scatter_reduce.prod': 'loops: aten::ScatterReduceBackward0',
    'scatter_reduce.prod_zeros': 'loops: aten::ScatterReduceBackward0',
    'scatter_reduce_.prod': 'loops: aten::ScatterReduceBackward0',
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
    'take': 'loops: aten::take',
    'put': 'loops: aten::put',
    'put_': 'loops: aten::put_',
    'argwhere':
        'autograd/_batched.py __array_function__: NotImplementedError: batched: no batching rul',
    'addmm': 'loops: aten::addmm',
    'addmm_':
        'autograd/_batched.py __array_ufunc__: TypeError: batched: numpy.add writes a batched r',
    'baddbmm': 'loops: aten::baddbmm',
    'baddbmm_':
        'autograd/_batched.py __array_ufunc__: TypeError: batched: numpy.add writes a batched r',
    'linalg.det': 'loops: aten::LinalgDetBackward0',
    'linalg.matrix_exp': 'loops: aten::linalg_matrix_exp',
    'linalg.matrix_exp.gradgrad': 'loops: aten::linalg_matrix_exp',
    'linalg.cond': 'loops: aten::linalg_cond',
    'linalg.vander': 'loops: aten::CumprodBackward0',
    'linalg.tensorsolve': 'loops: aten::linalg_tensorsolve',
    'det': 'loops: aten::LinalgDetBackward0',
    'det.method': 'loops: aten::LinalgDetBackward0',
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
    'pdist': 'loops: aten::pdist',
    'kl_div': 'loops: aten::kl_div',
    'soft_margin_loss': 'loops: aten::soft_margin_loss',
    'margin_ranking_loss': 'loops: aten::margin_ranking_loss',
    'triplet_margin_loss': 'loops: aten::triplet_margin_loss',
    'multi_margin_loss':
        "autograd/_batched.py __bool__: NotImplementedError: vmap: It looks like you're attempt",
    'multilabel_margin_loss':
        "autograd/_batched.py __bool__: NotImplementedError: vmap: It looks like you're attempt",
    'gaussian_nll_loss': 'loops: aten::clamp_',
    'ctc_loss':
        "autograd/_batched.py item: NotImplementedError: vmap: It looks like you're calling .it",
    'median': 'AssertionError: sample 3 grad 0: values differ by 0.7424943724503341',
    'nanmedian': 'loops: aten::nanmedian',
    'quantile.linear': 'AssertionError: sample 0 grad 1: values differ by 25.8126660150481',
    'quantile.lower': 'loops: aten::quantile',
    'quantile.higher': 'loops: aten::quantile',
    'quantile.midpoint': 'loops: aten::quantile',
    'quantile.nearest': 'loops: aten::quantile',
    'nanquantile.linear': 'AssertionError: sample 0 grad 1: values differ by 25.834835881192546',
    'nanquantile.lower': 'loops: aten::nanquantile',
    'nanquantile.higher': 'loops: aten::nanquantile',
    'nanquantile.midpoint': 'loops: aten::nanquantile',
    'nanquantile.nearest': 'loops: aten::nanquantile',
    'lgamma': 'loops: aten::lgamma',
    'digamma': 'loops: aten::DigammaBackward0',
    'lgamma_.inplace':
        "autograd/_batched.py __bool__: NotImplementedError: vmap: It looks like you're attempt",
    'digamma_.inplace': 'loops: aten::DigammaBackward0',
    'polygamma': 'loops: aten::PolygammaBackward0, aten::polygamma',
    'polygamma.method': 'loops: aten::PolygammaBackward0, aten::polygamma',
    'polygamma_.inplace':
        'autograd/_batched.py __array__: TypeError: batched: a batched gradient was converted t',
    'repeat_interleave':
        "autograd/_batched.py __bool__: NotImplementedError: vmap: It looks like you're attempt",
    'searchsorted':
        'autograd/_batched.py __array_function__: NotImplementedError: batched: no batching rul',
    'bucketize':
        'autograd/_batched.py __array_function__: NotImplementedError: batched: no batching rul',
    'diagflat': 'loops: aten::diagflat',
    'histc':
        "autograd/_batched.py item: NotImplementedError: vmap: It looks like you're calling .it",
    'bincount':
        "autograd/_batched.py __bool__: NotImplementedError: vmap: It looks like you're attempt",
    'as_strided_.inplace':
        'AssertionError: sample 0 dim 0 output 0: (3, 2, 2) torch.float64 vs (3, 3, 4) torch.fl',
    'vander': 'loops: aten::vander',
    'histogram':
        'autograd/_batched.py __array_function__: NotImplementedError: batched: no batching rul',
    'frexp':
        "autograd/_batched.py <lambda>: AttributeError: 'tuple' object has no attribute 'ndim'",
    'max_pool2d': 'loops: aten::MaxPool2DWithIndicesBackward0',
    'embedding': 'AssertionError: sample 1 grad 0: values differ by 0.9912028118634736',
    'nll_loss': 'loops: aten::NllLoss2DBackward0, aten::nll_loss',
    'cross_entropy': 'loops: aten::NllLoss2DBackward0, aten::nll_loss',
    'scaled_dot_product_attention': 'loops: aten::_scaled_dot_product_flash_attention_for_cpu',
    'square_': 'loops: aten::square_',
    'max_pool1d': 'loops: aten::MaxPool2DWithIndicesBackward0',
    'max_pool1d_with_indices': 'loops: aten::MaxPool2DWithIndicesBackward0',
    'max_pool2d_with_indices': 'loops: aten::MaxPool2DWithIndicesBackward0',
    'max_pool3d': 'loops: aten::MaxPool3DWithIndicesBackward0',
    'max_pool3d_with_indices': 'loops: aten::MaxPool3DWithIndicesBackward0',
    'adaptive_max_pool1d': 'loops: aten::AdaptiveMaxPool2DBackward0, aten::adaptive_max_pool2d',
    'adaptive_max_pool2d': 'loops: aten::AdaptiveMaxPool2DBackward0, aten::adaptive_max_pool2d',
    'adaptive_max_pool3d': 'loops: aten::AdaptiveMaxPool3DBackward0, aten::adaptive_max_pool3d',
    'max_unpool1d':
        "autograd/_batched.py __bool__: NotImplementedError: vmap: It looks like you're attempt",
    'max_unpool2d':
        "autograd/_batched.py __bool__: NotImplementedError: vmap: It looks like you're attempt",
    'max_unpool3d':
        "autograd/_batched.py __bool__: NotImplementedError: vmap: It looks like you're attempt",
    'max_pool2d.integer': 'loops: aten::MaxPool2DWithIndicesBackward0',
    'prod': 'loops: aten::ProdBackward0, aten::ProdBackward1',
    'max': 'AssertionError: sample 2 grad 0: values differ by 0.4949962483002227',
    'min': 'AssertionError: sample 2 grad 0: values differ by 0.4949962483002227',
    'argmax':
        'AssertionError: sample 3 dim 0 output 0: (3, 1, 1) torch.int64 vs (3, 1) torch.int64',
    'argmin':
        'AssertionError: sample 3 dim 0 output 0: (3, 1, 1) torch.int64 vs (3, 1) torch.int64',
    'var': 'loops: aten::var',
    'std': 'loops: aten::std',
    'cumprod': 'loops: aten::CumprodBackward0',
    'cumsum_': 'loops: aten::cumsum_',
    'cumprod_': 'loops: aten::cumprod_',
    'all': 'AssertionError: sample 4 dim 0 output 0: (3, 3, 4) torch.bool vs (3,) torch.bool',
    'any': 'AssertionError: sample 4 dim 0 output 0: (3, 3, 4) torch.bool vs (3,) torch.bool',
    'interpolate.nearest-exact':
        'loops: aten::_upsample_nearest_exact1d, aten::_upsample_nearest_exact2d, aten::_upsamp',
    'grid_sample': 'loops: aten::grid_sampler_2d, aten::grid_sampler_3d',
    'affine_grid': 'loops: aten::affine_grid_generator',
    'pack_padded_sequence':
        "_tensor.py _not_on_host: TypeError: can't convert cpu device type tensor to numpy. Use",
    'pad_packed_sequence': 'loops: aten::_pack_padded_sequence, aten::_pad_packed_sequence',
    'roll': 'AssertionError: sample 3 dim 0 output 0: values differ by 2.6079835571576484',
    'diag': 'loops: aten::diag',
    'as_strided':
        'ops/shape.py as_strided: NotImplementedError: as_strided needs a tensor whose storage ',
    '_weight_norm': 'loops: aten::_weight_norm',
    'norm_except_dim': 'loops: aten::norm_except_dim',
}
