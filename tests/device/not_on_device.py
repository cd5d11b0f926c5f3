"""Op-database entries that do not yet run on the emulated device, each with where
it fails (regenerate with ``python tests/device/emulated_run.py --write``; a test
fails when a listed entry starts to pass, so the list only shrinks)."""

NOT_ON_DEVICE = {
    'repeat_interleave': 'ops/rearrange.py repeat_interleave: TypeError: implicit copy to the host',
    'tril_indices': 'AssertionError: sample 0 output 0 is on cpu, not on the device',
    'triu_indices': 'AssertionError: sample 0 output 0 is on cpu, not on the device',
    'conv2d': 'ops/conv.py _im2col_np: TypeError: implicit copy to the host',
    'conv1d': 'ops/conv.py _im2col_np: TypeError: implicit copy to the host',
    'conv_transpose2d': 'ops/conv.py _col2im_np: TypeError: a host array given to the device',
    'max_pool2d': 'ops/conv.py _max_pool_2x2: TypeError: a host array given to the device',
    'avg_pool2d': 'ops/conv.py _im2col_np: TypeError: implicit copy to the host',
    'adaptive_avg_pool2d':
        'ops/conv.py _adaptive_avg_fwd: TypeError: a host array given to the device',
    'max_pool1d': 'ops/conv.py _max_pool_fwd: TypeError: a host array given to the device',
    'max_pool1d_with_indices':
        'ops/conv.py _max_pool_fwd: TypeError: a host array given to the device',
    'max_pool2d_with_indices':
        'ops/conv.py _max_pool_2x2: TypeError: a host array given to the device',
    'max_pool3d': 'ops/pooling_nd.py _max_pool_nd_fwd: TypeError: a host array given to the device',
    'max_pool3d_with_indices':
        'ops/pooling_nd.py _max_pool_nd_fwd: TypeError: a host array given to the device',
    'avg_pool1d': 'ops/conv.py _im2col_np: TypeError: implicit copy to the host',
    'avg_pool3d': 'ops/pooling_nd.py _avg_pool_nd_fwd: TypeError: a host array given to the device',
    'adaptive_avg_pool1d':
        'ops/conv.py _adaptive_avg_fwd: TypeError: a host array given to the device',
    'adaptive_max_pool1d':
        'ops/pooling_nd.py _adaptive_max_fwd: TypeError: a host array given to the device',
    'adaptive_max_pool2d':
        'ops/pooling_nd.py _adaptive_max_fwd: TypeError: a host array given to the device',
    'adaptive_max_pool3d':
        'ops/pooling_nd.py _adaptive_max_fwd: TypeError: a host array given to the device',
    'max_unpool1d': 'ops/pooling_nd.py _unpool_fwd: TypeError: a host array given to the device',
    'max_unpool2d': 'ops/pooling_nd.py _unpool_fwd: TypeError: a host array given to the device',
    'max_unpool3d': 'ops/pooling_nd.py _unpool_fwd: TypeError: a host array given to the device',
    'lp_pool1d': 'ops/conv.py _im2col_np: TypeError: implicit copy to the host',
    'lp_pool2d': 'ops/conv.py _im2col_np: TypeError: implicit copy to the host',
    'lp_pool3d': 'ops/pooling_nd.py _avg_pool_nd_fwd: TypeError: a host array given to the device',
    'max_pool2d.integer': 'ops/conv.py _max_pool_2x2: TypeError: a host array given to the device',
    'avg_pool2d.integer': 'ops/conv.py _im2col_np: TypeError: implicit copy to the host',
    'avg_pool1d.integer': 'ops/conv.py _im2col_np: TypeError: implicit copy to the host',
    'conv3d': 'ops/conv_nd.py _im2col_np: TypeError: implicit copy to the host',
    'conv_transpose1d': 'ops/conv.py _col2im_np: TypeError: a host array given to the device',
    'conv_transpose3d': 'ops/conv_nd.py _col2im_np: TypeError: a host array given to the device',
    'interpolate.area':
        'ops/conv.py _adaptive_avg_fwd: TypeError: a host array given to the device',
    'pixel_shuffle':
        "ops/_registry.py _inputs: AttributeError: 'NoneType' object has no attribute 'promote'",
    'pixel_unshuffle':
        "ops/_registry.py _inputs: AttributeError: 'NoneType' object has no attribute 'promote'",
    'channel_shuffle':
        "ops/_registry.py _inputs: AttributeError: 'NoneType' object has no attribute 'promote'",
    'unfold.im2col':
        "ops/_registry.py _inputs: AttributeError: 'NoneType' object has no attribute 'promote'",
    'fold':
        "ops/_registry.py _inputs: AttributeError: 'NoneType' object has no attribute 'promote'",
    'pack_padded_sequence':
        "nn/utils/rnn.py pack_padded_sequence: RuntimeError: 'lengths' argument should be a 1D ",
    'pad_packed_sequence': 'AssertionError: sample 0 output 1 is on cpu, not on the device',
    'to': 'AssertionError: sample 4 output 0 is on cpu, not on the device',
}
