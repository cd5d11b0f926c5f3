"""Op-database entries that do not batch under vmap on the emulated device as on
the CPU, each with why (regenerate with ``PYTHONPATH=src:tests python
tests/device/emulated_vmap_run.py --write``; a test fails when a listed entry
starts to pass, so the list only shrinks)."""

NOT_BATCHED_ON_DEVICE = {
    'prelu':
        'AssertionError: loops on the device only: aten::_prelu_kernel (sample 0 last dim / Non',
    'prelu.torch':
        'AssertionError: loops on the device only: aten::_prelu_kernel (sample 0 last dim / Non',
    'prelu.method':
        'AssertionError: loops on the device only: aten::_prelu_kernel (sample 0 last dim / Non',
    'rsub': 'AssertionError: loops on the device only: aten::rsub (sample 0 last dim / None)',
    'lerp': 'AssertionError: loops on the device only: aten::lerp (sample 0 last dim / None)',
    'lerp_':
        "backend/emulated.py _unwrap: TypeError: Unsupported type <class 'retrograd.autograd._b",
    'xlogy.scalar_self': 'AssertionError: loops on the device only: aten::xlogy (sample 0 dim 0)',
    'scatter.reduce':
        'AssertionError: loops on the device only: aten::scatter_reduce (sample 1 last dim / No',
    'scatter_reduce.prod':
        'AssertionError: loops on the device only: aten::scatter_reduce (sample 0 last dim / No',
    'scatter_reduce.prod_zeros':
        'AssertionError: loops on the device only: aten::scatter_reduce (sample 0 last dim / No',
    'scatter_reduce_.prod': 'backend/emulated.py _call: TypeError: only int indices permitted',
    'nonzero':
        "backend/emulated.py _unwrap: TypeError: Unsupported type <class 'retrograd.autograd._b",
    'addmm': 'AssertionError: loops on the device only: aten::addmm (sample 0 last dim / None)',
    'addmm_':
        "backend/emulated.py _unwrap: TypeError: Unsupported type <class 'retrograd.autograd._b",
    'baddbmm': 'AssertionError: loops on the device only: aten::baddbmm (sample 0 last dim / None)',
    'baddbmm_':
        "backend/emulated.py _unwrap: TypeError: Unsupported type <class 'retrograd.autograd._b",
    'linalg.vander':
        "backend/emulated.py _unwrap: TypeError: Unsupported type <class 'retrograd.autograd._b",
    'linalg.householder_product':
        'AssertionError: loops on the device only: aten::linalg_householder_product (sample 0 d',
    'orgqr':
        'AssertionError: loops on the device only: aten::linalg_householder_product (sample 0 d',
    'kl_div':
        'AssertionError: loops on the device only: aten::mul, aten::sub (sample 0 last dim / No',
    'margin_ranking_loss':
        'AssertionError: loops on the device only: aten::mul (sample 0 last dim / None)',
    'hinge_embedding_loss': 'AssertionError: loops on the device only: aten::sub (sample 0 dim 0)',
    'cosine_embedding_loss': 'AssertionError: loops on the device only: aten::sub (sample 0 dim 0)',
    'multilabel_soft_margin_loss':
        'AssertionError: loops on the device only: aten::mul (sample 0 last dim / None)',
    'poisson_nll_loss':
        'AssertionError: loops on the device only: aten::mul (sample 0 last dim / None)',
    'gaussian_nll_loss':
        'AssertionError: loops on the device only: aten::add (sample 0 last dim / None)',
    'ctc_loss': 'AssertionError: loops on the device only: aten::ctc_loss (sample 3 dim 0)',
    'median': 'AssertionError: loops on the device only: aten::MedianBackward0 (sample 4 grad)',
    'nanmedian':
        'AssertionError: loops on the device only: aten::NanmedianBackward0 (sample 4 grad)',
    'digamma': 'AssertionError: loops on the device only: aten::DigammaBackward0 (sample 0 grad)',
    'digamma_.inplace':
        'AssertionError: loops on the device only: aten::DigammaBackward0 (sample 0 grad)',
    'polygamma':
        'AssertionError: loops on the device only: aten::PolygammaBackward0 (sample 0 grad)',
    'polygamma.method':
        'AssertionError: loops on the device only: aten::PolygammaBackward0 (sample 0 grad)',
    'polygamma_.inplace':
        'AssertionError: loops on the device only: aten::PolygammaBackward1 (sample 0 grad)',
    'bucketize':
        "backend/emulated.py _unwrap: TypeError: Unsupported type <class 'retrograd.autograd._b",
    'diff':
        "backend/emulated.py _unwrap: TypeError: Unsupported type <class 'retrograd.autograd._b",
    'histc':
        "backend/emulated.py _unwrap: TypeError: Unsupported type <class 'retrograd.autograd._b",
    'bincount':
        "backend/emulated.py _unwrap: TypeError: Unsupported type <class 'retrograd.autograd._b",
    'vander':
        "backend/emulated.py _unwrap: TypeError: Unsupported type <class 'retrograd.autograd._b",
    'histogram':
        "backend/emulated.py _unwrap: TypeError: Unsupported type <class 'retrograd.autograd._b",
    'max_pool2d': 'AssertionError: loops on the device only: aten::max_pool2d (sample 0 dim 0)',
    'binary_cross_entropy':
        'AssertionError: loops on the device only: aten::binary_cross_entropy (sample 0 last di',
    'binary_cross_entropy_with_logits':
        'AssertionError: loops on the device only: aten::binary_cross_entropy_with_logits (samp',
    'max_pool1d': 'AssertionError: loops on the device only: aten::max_pool2d (sample 0 dim 0)',
    'max_pool1d_with_indices':
        'AssertionError: loops on the device only: aten::max_pool2d (sample 0 dim 0)',
    'max_pool2d_with_indices':
        'AssertionError: loops on the device only: aten::max_pool2d (sample 0 dim 0)',
    'max_pool3d': 'AssertionError: loops on the device only: aten::max_pool3d (sample 0 dim 0)',
    'max_pool3d_with_indices':
        'AssertionError: loops on the device only: aten::max_pool3d (sample 0 dim 0)',
    'adaptive_max_pool1d':
        'AssertionError: loops on the device only: aten::adaptive_max_pool2d (sample 0 dim 0)',
    'adaptive_max_pool2d':
        'AssertionError: loops on the device only: aten::adaptive_max_pool2d (sample 0 dim 0)',
    'adaptive_max_pool3d':
        'AssertionError: loops on the device only: aten::adaptive_max_pool3d (sample 0 dim 0)',
    'max_pool2d.integer':
        'AssertionError: loops on the device only: aten::max_pool2d (sample 0 dim 0)',
    'pack_padded_sequence':
        "nn/utils/rnn.py pack_padded_sequence: RuntimeError: 'lengths' argument should be a 1D ",
    'pad_packed_sequence': 'AssertionError: sample 0 dim 0 output 1 is on cpu, not on the device',
    '_weight_norm':
        'AssertionError: loops on the device only: aten::weight_norm_interface (sample 0 last d',
}
