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
    'addcmul_':
        'autograd/_batched.py _ufunc_call: ValueError: operands could not be broadcast together',
    'addcdiv_':
        'autograd/_batched.py _ufunc_call: ValueError: operands could not be broadcast together',
    '__imod__': 'loops: aten::remainder_',
    '__ipow__': 'loops: aten::pow_',
    'eq_': 'RuntimeError: a view of a leaf Variable that requires grad is being used in an in-plac',
    'ne_': 'RuntimeError: a view of a leaf Variable that requires grad is being used in an in-plac',
    'not_equal_':
        'RuntimeError: a view of a leaf Variable that requires grad is being used in an in-plac',
    'lt_': 'RuntimeError: a view of a leaf Variable that requires grad is being used in an in-plac',
    'less_':
        'RuntimeError: a view of a leaf Variable that requires grad is being used in an in-plac',
    'le_': 'RuntimeError: a view of a leaf Variable that requires grad is being used in an in-plac',
    'less_equal_':
        'RuntimeError: a view of a leaf Variable that requires grad is being used in an in-plac',
    'gt_': 'RuntimeError: a view of a leaf Variable that requires grad is being used in an in-plac',
    'greater_':
        'RuntimeError: a view of a leaf Variable that requires grad is being used in an in-plac',
    'ge_': 'RuntimeError: a view of a leaf Variable that requires grad is being used in an in-plac',
    'greater_equal_':
        'RuntimeError: a view of a leaf Variable that requires grad is being used in an in-plac',
    '__eq__':
        'TypeError: numpy boolean subtract, the `-` operator, is not supported, use the bitwise',
    '__ne__':
        'TypeError: numpy boolean subtract, the `-` operator, is not supported, use the bitwise',
    '__le__':
        'TypeError: numpy boolean subtract, the `-` operator, is not supported, use the bitwise',
    '__gt__':
        'TypeError: numpy boolean subtract, the `-` operator, is not supported, use the bitwise',
    'isin':
        'autograd/_batched.py __array_function__: NotImplementedError: batched: no batching rul',
    '__getitem__': 'loops: aten::index',
    '__setitem__.view':
        "backend/functions.py address: AttributeError: 'Batched' object has no attribute '__arr",
    '__setitem__.index':
        "autograd/_batched.py _norm: TypeError: 'range' object cannot be interpreted as an inte",
    'index_put': 'loops: aten::index_put',
    'index_put_':
        "autograd/_batched.py _norm: TypeError: 'range' object cannot be interpreted as an inte",
    'gather': 'loops: aten::gather',
    'scatter': 'loops: aten::scatter',
    'scatter_':
        "autograd/_batched.py _norm: TypeError: 'range' object cannot be interpreted as an inte",
    'scatter.reduce': 'loops: aten::scatter_reduce',
    'scatter_reduce.sum': 'loops: aten::scatter_reduce',
    'scatter_reduce.prod': 'loops: aten::ScatterReduceBackward0, aten::scatter_reduce',
    'scatter_reduce.mean': 'loops: aten::scatter_reduce',
    'scatter_reduce.amax': 'loops: aten::scatter_reduce',
    'scatter_reduce.amin': 'loops: aten::scatter_reduce',
    'scatter_reduce.prod_zeros': 'loops: aten::ScatterReduceBackward0, aten::scatter_reduce',
    'scatter_reduce.method_sum': 'loops: aten::scatter_reduce',
    'scatter_reduce.method_amax': 'loops: aten::scatter_reduce',
    'scatter_reduce_.mean':
        "autograd/_batched.py _norm: TypeError: 'range' object cannot be interpreted as an inte",
    'scatter_reduce_.prod':
        "autograd/_batched.py _norm: TypeError: 'range' object cannot be interpreted as an inte",
    'scatter_add': 'loops: aten::scatter_add',
    'scatter_add_':
        "autograd/_batched.py _norm: TypeError: 'range' object cannot be interpreted as an inte",
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
    'masked_scatter':
        "autograd/_batched.py item: NotImplementedError: vmap: It looks like you're calling .it",
    'masked_scatter_':
        "autograd/_batched.py item: NotImplementedError: vmap: It looks like you're calling .it",
    'take': 'loops: aten::take',
    'take_along_dim':
        'autograd/_batched.py __array__: TypeError: batched: a batched gradient was converted t',
    'put': 'loops: aten::put',
    'put_':
        "autograd/_batched.py _norm: TypeError: 'range' object cannot be interpreted as an inte",
    'argwhere':
        'autograd/_batched.py __array_function__: NotImplementedError: batched: no batching rul',
    'outer':
        'AssertionError: sample 0 dim 0 output 0: (3, 3, 3, 4) torch.float64 vs (3, 3, 4) torch',
    'ger': 'AssertionError: sample 0 dim 0 output 0: (3, 3, 3, 4) torch.float64 vs (3, 3, 4) torch',
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
    'linalg.vander':
        "_tensor.py _not_on_host: TypeError: can't convert cpu device type tensor to numpy. Use",
    'linalg.diagonal':
        "_tensor.py _not_on_host: TypeError: can't convert cpu device type tensor to numpy. Use",
    'linalg.tensorsolve': 'loops: aten::linalg_tensorsolve',
    'det': 'loops: aten::LinalgDetBackward0',
    'det.method': 'loops: aten::LinalgDetBackward0',
    'matrix_exp': 'loops: aten::linalg_matrix_exp',
    'linalg.lstsq':
        "autograd/_batched.py __bool__: NotImplementedError: vmap: It looks like you're attempt",
    'linalg.lu':
        'autograd/_batched.py __array__: TypeError: batched: a batched gradient was converted t',
    'linalg.lu_factor':
        "_tensor.py _not_on_host: TypeError: can't convert cpu device type tensor to numpy. Use",
    'linalg.lu_factor_ex':
        'autograd/_batched.py __array__: TypeError: batched: a batched gradient was converted t',
    'linalg.lu_solve':
        'autograd/_batched.py __array__: TypeError: batched: a batched gradient was converted t',
    'lu_unpack':
        'autograd/_batched.py __array__: TypeError: batched: a batched gradient was converted t',
    'normalize':
        "_tensor.py _not_on_host: TypeError: can't convert cpu device type tensor to numpy. Use",
    'cosine_similarity':
        "_tensor.py _not_on_host: TypeError: can't convert cpu device type tensor to numpy. Use",
    'cdist.mm':
        "_tensor.py _not_on_host: TypeError: can't convert cpu device type tensor to numpy. Use",
    'pdist': 'loops: aten::pdist',
    'kl_div': 'loops: aten::kl_div',
    'huber_loss':
        "_tensor.py _not_on_host: TypeError: can't convert cpu device type tensor to numpy. Use",
    'soft_margin_loss':
        "RuntimeError: The function 'soft_margin_loss' is not differentiable with respect to ar",
    'margin_ranking_loss': 'loops: aten::margin_ranking_loss',
    'triplet_margin_loss': 'loops: aten::triplet_margin_loss',
    'multi_margin_loss':
        "autograd/_batched.py __bool__: NotImplementedError: vmap: It looks like you're attempt",
    'multilabel_margin_loss':
        "autograd/_batched.py __bool__: NotImplementedError: vmap: It looks like you're attempt",
    'gaussian_nll_loss': 'loops: aten::clamp_',
    'ctc_loss':
        "autograd/_batched.py item: NotImplementedError: vmap: It looks like you're calling .it",
    'median':
        "autograd/_batched.py __bool__: NotImplementedError: vmap: It looks like you're attempt",
    'nanmedian':
        'autograd/_batched.py _batched_index: NotImplementedError: batched: a boolean mask that',
    'quantile.linear':
        "autograd/_batched.py __bool__: NotImplementedError: vmap: It looks like you're attempt",
    'quantile.lower':
        "autograd/_batched.py __bool__: NotImplementedError: vmap: It looks like you're attempt",
    'quantile.higher':
        "autograd/_batched.py __bool__: NotImplementedError: vmap: It looks like you're attempt",
    'quantile.midpoint':
        "autograd/_batched.py __bool__: NotImplementedError: vmap: It looks like you're attempt",
    'quantile.nearest':
        "autograd/_batched.py __bool__: NotImplementedError: vmap: It looks like you're attempt",
    'nanquantile.linear':
        "autograd/_batched.py __bool__: NotImplementedError: vmap: It looks like you're attempt",
    'nanquantile.lower':
        "autograd/_batched.py __bool__: NotImplementedError: vmap: It looks like you're attempt",
    'nanquantile.higher':
        "autograd/_batched.py __bool__: NotImplementedError: vmap: It looks like you're attempt",
    'nanquantile.midpoint':
        "autograd/_batched.py __bool__: NotImplementedError: vmap: It looks like you're attempt",
    'nanquantile.nearest':
        "autograd/_batched.py __bool__: NotImplementedError: vmap: It looks like you're attempt",
    'lgamma':
        "autograd/_batched.py __bool__: NotImplementedError: vmap: It looks like you're attempt",
    'digamma': 'loops: aten::DigammaBackward0',
    'lgamma_.inplace':
        "autograd/_batched.py __bool__: NotImplementedError: vmap: It looks like you're attempt",
    'digamma_.inplace': 'loops: aten::DigammaBackward0',
    'polygamma':
        'autograd/_batched.py __array__: TypeError: batched: a batched gradient was converted t',
    'polygamma.method':
        'autograd/_batched.py __array__: TypeError: batched: a batched gradient was converted t',
    'polygamma_.inplace':
        'autograd/_batched.py __array__: TypeError: batched: a batched gradient was converted t',
    'repeat_interleave':
        "_tensor.py _not_on_host: TypeError: can't convert cpu device type tensor to numpy. Use",
    'searchsorted':
        'autograd/_batched.py __array_function__: NotImplementedError: batched: no batching rul',
    'bucketize':
        'autograd/_batched.py __array_function__: NotImplementedError: batched: no batching rul',
    'diagflat': 'autograd/_batched.py __setitem__: ValueError: assignment destination is read-only',
    'meshgrid':
        "_tensor.py _not_on_host: TypeError: can't convert cpu device type tensor to numpy. Use",
    'cartesian_prod':
        "_tensor.py _not_on_host: TypeError: can't convert cpu device type tensor to numpy. Use",
    'histc':
        "autograd/_batched.py item: NotImplementedError: vmap: It looks like you're calling .it",
    'bincount':
        "autograd/_batched.py __bool__: NotImplementedError: vmap: It looks like you're attempt",
    'as_strided_.inplace':
        'AssertionError: sample 0 dim 0 output 0: (3, 2, 2) torch.float64 vs (3, 3, 4) torch.fl',
    'corrcoef':
        "_tensor.py _not_on_host: TypeError: can't convert cpu device type tensor to numpy. Use",
    'vander':
        "_tensor.py _not_on_host: TypeError: can't convert cpu device type tensor to numpy. Use",
    'histogram':
        'autograd/_batched.py __array_function__: NotImplementedError: batched: no batching rul',
    'frexp':
        "autograd/_batched.py <lambda>: AttributeError: 'tuple' object has no attribute 'ndim'",
    'conv2d':
        "_tensor.py _not_on_host: TypeError: can't convert cpu device type tensor to numpy. Use",
    'conv1d':
        "_tensor.py _not_on_host: TypeError: can't convert cpu device type tensor to numpy. Use",
    'max_pool2d':
        'autograd/_batched.py __array__: TypeError: batched: a batched gradient was converted t',
    'batch_norm':
        "RuntimeError: The function 'native_batch_norm' is not differentiable with respect to a",
    'embedding': 'AssertionError: sample 1 grad 0: values differ by 0.9912028118634736',
    'nll_loss':
        'autograd/_batched.py __array__: TypeError: batched: a batched gradient was converted t',
    'cross_entropy':
        'autograd/_batched.py __array__: TypeError: batched: a batched gradient was converted t',
    'scaled_dot_product_attention': 'loops: aten::_scaled_dot_product_flash_attention_for_cpu',
    'square_': 'loops: aten::square_',
    'max_pool1d':
        'autograd/_batched.py __array__: TypeError: batched: a batched gradient was converted t',
    'max_pool1d_with_indices':
        'autograd/_batched.py __array__: TypeError: batched: a batched gradient was converted t',
    'max_pool2d_with_indices':
        'autograd/_batched.py __array__: TypeError: batched: a batched gradient was converted t',
    'max_pool3d':
        'autograd/_batched.py __array__: TypeError: batched: a batched gradient was converted t',
    'max_pool3d_with_indices':
        'autograd/_batched.py __array__: TypeError: batched: a batched gradient was converted t',
    'adaptive_max_pool1d':
        "autograd/_batched.py __bool__: NotImplementedError: vmap: It looks like you're attempt",
    'adaptive_max_pool2d':
        "autograd/_batched.py __bool__: NotImplementedError: vmap: It looks like you're attempt",
    'adaptive_max_pool3d':
        "autograd/_batched.py __bool__: NotImplementedError: vmap: It looks like you're attempt",
    'max_unpool1d':
        "autograd/_batched.py __bool__: NotImplementedError: vmap: It looks like you're attempt",
    'max_unpool2d':
        "autograd/_batched.py __bool__: NotImplementedError: vmap: It looks like you're attempt",
    'max_unpool3d':
        "autograd/_batched.py __bool__: NotImplementedError: vmap: It looks like you're attempt",
    'max_pool2d.integer':
        'autograd/_batched.py __array__: TypeError: batched: a batched gradient was converted t',
    'conv3d':
        "_tensor.py _not_on_host: TypeError: can't convert cpu device type tensor to numpy. Use",
    'prod': 'loops: aten::ProdBackward0, aten::ProdBackward1',
    'max': 'AssertionError: sample 2 grad 0: values differ by 0.4949962483002227',
    'min': 'AssertionError: sample 2 grad 0: values differ by 0.4949962483002227',
    'argmax':
        'AssertionError: sample 3 dim 0 output 0: (3, 1, 1) torch.int64 vs (3, 1) torch.int64',
    'argmin':
        'AssertionError: sample 3 dim 0 output 0: (3, 1, 1) torch.int64 vs (3, 1) torch.int64',
    'var': "autograd/_batched.py __bool__: NotImplementedError: vmap: It looks like you're attempt",
    'std': "autograd/_batched.py __bool__: NotImplementedError: vmap: It looks like you're attempt",
    'cumprod': 'loops: aten::CumprodBackward0',
    'cumsum_': 'loops: aten::cumsum_',
    'cumprod_': 'loops: aten::cumprod_',
    'all': 'AssertionError: sample 4 dim 0 output 0: (3, 3, 4) torch.bool vs (3,) torch.bool',
    'any': 'AssertionError: sample 4 dim 0 output 0: (3, 3, 4) torch.bool vs (3,) torch.bool',
    'interpolate.nearest-exact':
        'loops: aten::_upsample_nearest_exact1d, aten::_upsample_nearest_exact2d, aten::_upsamp',
    'unfold.im2col':
        "_tensor.py _not_on_host: TypeError: can't convert cpu device type tensor to numpy. Use",
    'grid_sample':
        'autograd/_batched.py __array_ufunc__: TypeError: batched: numpy.bitwise_and writes a b',
    'affine_grid': 'loops: aten::affine_grid_generator',
    'pack_padded_sequence':
        "_tensor.py _not_on_host: TypeError: can't convert cpu device type tensor to numpy. Use",
    'pad_packed_sequence': 'loops: aten::_pack_padded_sequence, aten::_pad_packed_sequence',
    'expand':
        "_tensor.py _not_on_host: TypeError: can't convert cpu device type tensor to numpy. Use",
    'expand_as':
        "_tensor.py _not_on_host: TypeError: can't convert cpu device type tensor to numpy. Use",
    'broadcast_to':
        "_tensor.py _not_on_host: TypeError: can't convert cpu device type tensor to numpy. Use",
    'broadcast_tensors':
        "_tensor.py _not_on_host: TypeError: can't convert cpu device type tensor to numpy. Use",
    'roll': 'AssertionError: sample 3 dim 0 output 0: values differ by 2.6079835571576484',
    'diagonal':
        "_tensor.py _not_on_host: TypeError: can't convert cpu device type tensor to numpy. Use",
    'diag': 'autograd/_batched.py __setitem__: ValueError: assignment destination is read-only',
    'diag_embed':
        'autograd/_batched.py __setitem__: ValueError: assignment destination is read-only',
    'unfold':
        "_tensor.py _not_on_host: TypeError: can't convert cpu device type tensor to numpy. Use",
    'as_strided':
        "_tensor.py _not_on_host: TypeError: can't convert cpu device type tensor to numpy. Use",
    '_weight_norm': 'loops: aten::_weight_norm',
    'norm_except_dim': 'loops: aten::norm_except_dim',
}
