"""autocast on the CPU against PyTorch's: the output dtype of each op class (ops cast
down, ops forced to float32, ops promoting to their widest input, ops on no list) under
bfloat16 and float16, nested regions, the decorator form, the weight-cast cache,
gradients reaching float32 leaves in float32, custom_fwd/custom_bwd, and the warnings."""

import threading
import warnings

import numpy
import pytest

import retrograd

pytestmark = pytest.mark.torch


def _rand(lib, *shape, dtype=None, seed=0):
    a = numpy.random.default_rng(seed).standard_normal(shape).astype(numpy.float32)
    t = lib.tensor(a)
    return t if dtype is None else t.to(getattr(lib, dtype))


def _x(lib, dtype=None):
    return _rand(lib, 4, 4, dtype=dtype)


def _b(lib, dtype=None):
    return _rand(lib, 2, 4, 4, dtype=dtype, seed=1)


def _img(lib):
    return _rand(lib, 1, 2, 5, 5)


def _target(lib):
    return lib.tensor([0, 1, 2, 3])


CASES = {
    # lower precision
    "mm": lambda L: L.mm(_x(L), _x(L)),
    "mm_half_inputs": lambda L: L.mm(_x(L, "float16"), _x(L, "float16")),
    "mm_double_kept": lambda L: L.mm(_x(L, "float64"), _x(L, "float64")),
    "matmul_operator": lambda L: _x(L) @ _x(L),
    "matmul_method": lambda L: _x(L).matmul(_x(L)),
    "matmul_vectors": lambda L: L.matmul(_x(L)[0], _x(L)[1]),
    "bmm": lambda L: L.bmm(_b(L), _b(L)),
    "baddbmm": lambda L: L.baddbmm(_b(L), _b(L), _b(L)),
    "addmm": lambda L: L.addmm(_x(L)[0], _x(L), _x(L)),
    "linear": lambda L: L.nn.functional.linear(_x(L), _x(L), _x(L)[0]),
    "linear_3d": lambda L: L.nn.functional.linear(_b(L), _x(L)),
    "linear_module": lambda L: L.nn.Linear(4, 3)(_x(L)),
    "conv2d": lambda L: L.nn.functional.conv2d(_img(L), _rand(L, 3, 2, 3, 3), _rand(L, 3)),
    "conv1d": lambda L: L.nn.functional.conv1d(_x(L)[None], _rand(L, 2, 4, 2)),
    "conv_transpose2d": lambda L: L.nn.functional.conv_transpose2d(_img(L),
                                                                   _rand(L, 2, 3, 2, 2)),
    "prelu": lambda L: L.nn.functional.prelu(_x(L), L.tensor([0.25])),
    "vecdot": lambda L: L.linalg.vecdot(_x(L), _x(L)),
    "sdpa": lambda L: L.nn.functional.scaled_dot_product_attention(_b(L), _b(L), _b(L)),
    # composites: lowered where PyTorch's decomposition reaches mm or bmm
    "tensordot": lambda L: L.tensordot(_b(L), _x(L), 1),
    "tensordot_outer": lambda L: L.tensordot(_x(L), _x(L), 0),
    "tensordot_full_is_a_dot": lambda L: L.tensordot(_x(L), _x(L), 2),
    "inner": lambda L: L.inner(_b(L), _x(L)),
    "inner_vectors_is_a_dot": lambda L: L.inner(_x(L)[0], _x(L)[1]),
    "einsum_contraction": lambda L: L.einsum("bij,jk->bik", _b(L), _x(L)),
    "einsum_full_sum": lambda L: L.einsum("ij,ij->", _x(L), _x(L)),
    "einsum_chain": lambda L: L.einsum("ij,jk,kl->il", _x(L), _x(L), _x(L)),
    "einsum_product_only": lambda L: L.einsum("ij,ij->ij", _x(L), _x(L)),
    "einsum_outer": lambda L: L.einsum("i,j->ij", _x(L)[0], _x(L)[1]),
    "einsum_one_operand": lambda L: L.einsum("ij->j", _x(L)),
    "einsum_summed_alone": lambda L: L.einsum("ij,k->k", _x(L), _x(L)[0]),
    # forced to float32
    "mse_loss": lambda L: L.nn.functional.mse_loss(_x(L, "bfloat16"), _x(L, "bfloat16")),
    "l1_loss_mixed": lambda L: L.nn.functional.l1_loss(_x(L, "bfloat16"), _x(L)),
    "cross_entropy": lambda L: L.nn.functional.cross_entropy(_x(L, "bfloat16"), _target(L)),
    "nll_loss": lambda L: L.nn.functional.nll_loss(_x(L, "bfloat16"), _target(L)),
    "bce_logits": lambda L: L.nn.functional.binary_cross_entropy_with_logits(
        _x(L, "bfloat16"), _x(L, "bfloat16").sigmoid()),
    "smooth_l1": lambda L: L.nn.functional.smooth_l1_loss(_x(L, "bfloat16"), _x(L)),
    "kl_div": lambda L: L.nn.functional.kl_div(_x(L, "bfloat16"), _x(L, "bfloat16"),
                                               reduction="batchmean"),
    "prod": lambda L: L.prod(_x(L, "bfloat16")),
    "trace": lambda L: L.trace(_x(L, "bfloat16")),
    "cdist": lambda L: L.cdist(_x(L, "bfloat16"), _x(L, "bfloat16")),
    "max_pool3d": lambda L: L.nn.functional.max_pool3d(_rand(L, 1, 1, 2, 2, 2,
                                                               dtype="bfloat16"), 2),
    "linalg_inv": lambda L: L.linalg.inv(_x(L, "bfloat16") + 4 * L.eye(4)),
    "quantile": lambda L: L.quantile(_x(L, "bfloat16"), 0.5),
    "legacy_svd": lambda L: L.svd(_x(L, "bfloat16"))[1],
    "cholesky_solve": lambda L: L.cholesky_solve(_x(L, "bfloat16"), L.eye(4)),
    "inverse": lambda L: L.inverse(_x(L, "bfloat16") + 4 * L.eye(4)),
    # widest input
    "cat_mixed": lambda L: L.cat([_x(L), _x(L, "bfloat16")]),
    "cat_low": lambda L: L.cat([_x(L, "bfloat16"), _x(L, "bfloat16")]),
    "cat_double": lambda L: L.cat([_x(L, "float64"), _x(L, "bfloat16")]),
    "stack_mixed": lambda L: L.stack([_x(L, "bfloat16"), _x(L)]),
    "index_copy": lambda L: _x(L).index_copy(0, L.tensor([0]), _x(L, "bfloat16")[:1]),
    # on no list: their own promotion
    "add_mixed": lambda L: _x(L) + _x(L, "bfloat16"),
    "relu": lambda L: L.relu(_x(L)),
    "softmax_low": lambda L: L.softmax(_x(L, "bfloat16"), 0),
    "layer_norm_low": lambda L: L.nn.functional.layer_norm(_x(L, "bfloat16"), (4,)),
    "int_mm": lambda L: L.mm(L.ones(2, 2, dtype=L.long), L.ones(2, 2, dtype=L.long)),
}


def _outcome(fn, lib, dtype):
    with lib.autocast("cpu", dtype=getattr(lib, dtype)):
        try:
            out = fn(lib)
        except Exception as e:  # noqa: BLE001 (the error is what is compared)
            return type(e).__name__, str(e)
    return repr(out.dtype).replace("retrograd", "torch") if lib is retrograd else str(out.dtype)


@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
@pytest.mark.parametrize("case", sorted(CASES))
def test_output_dtype_matches_torch(torch, case, dtype):
    assert _outcome(CASES[case], retrograd, dtype) == _outcome(CASES[case], torch, dtype)


def test_mixed_low_dtypes_refused_as_torch(torch):
    def fn(L):
        return L.cat([_x(L, "float16"), _x(L, "bfloat16")])
    assert _outcome(fn, retrograd, "bfloat16") == _outcome(fn, torch, "bfloat16")


def test_values_close_to_torch(torch, to_torch):
    a, b = _x(retrograd), _x(retrograd).t()
    with retrograd.autocast("cpu"):
        ours = retrograd.mm(a, b)
    with torch.autocast("cpu"):
        theirs = torch.mm(*to_torch(a, b))
    numpy.testing.assert_allclose(ours.float().numpy(), theirs.float().numpy(), rtol=1e-2,
                                  atol=1e-2)


def _state(lib):
    return (lib.is_autocast_enabled("cpu"), str(lib.get_autocast_dtype("cpu")).split(".")[-1],
            lib.is_autocast_cache_enabled())


def test_nested_regions_match_torch(torch):
    def scenario(lib):
        log = [_state(lib)]
        with lib.autocast("cpu", dtype=lib.float16):
            log.append(_state(lib))
            with lib.autocast("cpu", enabled=False):
                log.append(_state(lib))
                log.append(str(lib.mm(_x(lib), _x(lib)).dtype).split(".")[-1])
                with lib.autocast("cpu", dtype=lib.bfloat16, cache_enabled=False):
                    log.append(_state(lib))
                    log.append(str(lib.mm(_x(lib), _x(lib)).dtype).split(".")[-1])
                log.append(_state(lib))
            log.append(str(lib.mm(_x(lib), _x(lib)).dtype).split(".")[-1])
        log.append(_state(lib))
        return log
    assert scenario(retrograd) == scenario(torch)


def test_decorator_and_amp_forms(torch):
    def scenario(lib):
        @lib.autocast("cpu")
        def f(a):
            return lib.mm(a, a), lib.is_autocast_enabled("cpu")

        @lib.amp.autocast("cpu", dtype=lib.float16)
        def g(a):
            return lib.mm(a, a)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", FutureWarning)
            with lib.cpu.amp.autocast():
                h = lib.mm(_x(lib), _x(lib))
        out, on = f(_x(lib))
        return (str(out.dtype), on, lib.is_autocast_enabled("cpu"), str(g(_x(lib)).dtype),
                str(h.dtype))
    ours = tuple(s.replace("retrograd", "torch") if isinstance(s, str) else s
                 for s in scenario(retrograd))
    assert ours == scenario(torch)


def test_weight_cast_cached_once_per_region(torch):
    def scenario(lib):
        w = _x(lib).requires_grad_()
        x = _x(lib)
        with lib.autocast("cpu"):
            a, b = lib.mm(x, w), lib.mm(w, x)
            cast_a = a.grad_fn.next_functions[1][0]
            same = cast_a is b.grad_fn.next_functions[0][0]
        with lib.autocast("cpu"):  # a new region casts again
            c = lib.mm(x, w)
            fresh = c.grad_fn.next_functions[1][0] is not cast_a
        with lib.autocast("cpu", cache_enabled=False):
            d, e = lib.mm(x, w), lib.mm(w, x)
            uncached = d.grad_fn.next_functions[1][0] is not e.grad_fn.next_functions[0][0]
        return same, fresh, uncached, type(cast_a).__name__
    assert scenario(retrograd) == scenario(torch) == (True, True, True, "ToCopyBackward0")


def test_cache_hit_is_the_same_tensor():
    w = _x(retrograd).requires_grad_()
    with retrograd.autocast("cpu"):
        first = retrograd._autocast._cast_all("lower", "cpu", (w,), {})[0][0]
        second = retrograd._autocast._cast_all("lower", "cpu", (w,), {})[0][0]
        assert first is second and first.dtype is retrograd.bfloat16
    assert not retrograd._autocast.state.cache  # cleared on leaving the outermost region


def test_gradients_reach_float32_leaves(torch, to_torch):
    w, b, x = _x(retrograd).requires_grad_(), _x(retrograd)[0].requires_grad_(), _b(retrograd)

    def run(lib, w, b, x):
        with lib.autocast("cpu"):
            y = lib.nn.functional.linear(x, w, b).relu()
            loss = lib.nn.functional.mse_loss(y, lib.zeros_like(y, dtype=lib.float32))
        loss.backward()
        return loss, w.grad, b.grad
    ours, theirs = run(retrograd, w, b, x), run(torch, *to_torch(w, b, x))
    for o, t in zip(ours, theirs, strict=True):
        assert repr(o.dtype).replace("retrograd", "torch") == str(t.dtype) == "torch.float32"
        numpy.testing.assert_allclose(o.detach().numpy(), t.detach().numpy(), rtol=2e-2,
                                      atol=2e-2)


def test_custom_fwd_bwd(torch):
    def scenario(lib):
        seen = []

        class MyMM(lib.autograd.Function):
            @staticmethod
            @lib.amp.custom_fwd(device_type="cpu", cast_inputs=lib.float32)
            def forward(ctx, a, b):
                seen.append((str(a.dtype), lib.is_autocast_enabled("cpu")))
                ctx.save_for_backward(a, b)
                return a.mm(b)

            @staticmethod
            @lib.amp.custom_bwd(device_type="cpu")
            def backward(ctx, grad):
                seen.append(lib.is_autocast_enabled("cpu"))
                a, b = ctx.saved_tensors
                return grad.mm(b.t()), a.t().mm(grad)

        class Plain(lib.autograd.Function):
            @staticmethod
            @lib.amp.custom_fwd(device_type="cpu")
            def forward(ctx, a):
                return lib.mm(a, a)

            @staticmethod
            @lib.amp.custom_bwd(device_type="cpu")
            def backward(ctx, grad):
                seen.append(lib.is_autocast_enabled("cpu"))
                return grad.float()
        a = _x(lib, "bfloat16").requires_grad_()
        with lib.autocast("cpu"):
            out = MyMM.apply(a, _x(lib))
            plain = Plain.apply(_x(lib).requires_grad_())
        out.sum().backward()
        plain.float().sum().backward()
        return [str(s) for s in seen], str(out.dtype), str(plain.dtype), str(a.grad.dtype)
    ours = scenario(retrograd)
    assert [s.replace("retrograd", "torch") for s in ours[0]] == scenario(torch)[0]
    assert tuple(s.replace("retrograd", "torch") for s in ours[1:]) == scenario(torch)[1:]


def test_warnings_and_errors_match_torch(torch):
    def scenario(lib):
        out = []
        with warnings.catch_warnings(record=True) as rec:
            warnings.simplefilter("always")
            out.append(lib.autocast("cpu", dtype=lib.float32)._enabled)
            out.append(lib.autocast("cuda")._enabled)
            lib.cuda.amp.autocast()
            lib.cpu.amp.autocast()
        out += [(w.category.__name__, str(w.message)) for w in rec]
        for bad in (lambda: lib.autocast("foo"), lambda: lib.autocast("cpu")(3)):
            try:
                bad()
            except Exception as e:  # noqa: BLE001 (compared)
                out.append((type(e).__name__, str(e)))
        out.append(lib.amp.is_autocast_available("cpu"))
        return out
    ours = scenario(retrograd)
    theirs = scenario(torch)
    assert [str(o).replace("retrograd", "torch") for o in ours] == [str(t) for t in theirs]
    with pytest.raises(ValueError, match="Expected `device_type` of type `str`"):
        retrograd.autocast(retrograd.device("cpu"))


def test_off_path_leaves_ops_unchanged():
    a = _x(retrograd)
    assert retrograd.mm(a, a).dtype is retrograd.float32
    assert retrograd._autocast.threads_on == 0
    with retrograd.autocast("cpu"):
        assert retrograd._autocast.threads_on == 1
    assert retrograd._autocast.threads_on == 0


def test_transformer_loss_under_bfloat16_within_torchs_distance(torch, to_torch):
    """A small transformer layer and a linear head: the cross-entropy loss under bfloat16
    autocast is as far from its float32 loss as PyTorch's is (same weights and input),
    and the gradients of the float32 parameters stay float32."""
    def build(lib):
        return lib.nn.Sequential(lib.nn.TransformerEncoderLayer(16, 2, 32, dropout=0.0,
                                                                batch_first=True),
                                 lib.nn.Linear(16, 5))
    model, theirs = build(retrograd), build(torch)
    theirs.load_state_dict(to_torch(dict(model.state_dict())))
    x = _rand(retrograd, 3, 7, 16)
    target = retrograd.tensor(numpy.arange(21).reshape(3, 7) % 5)

    def losses(lib, m, x, target):
        def loss():
            return lib.nn.functional.cross_entropy(m(x).flatten(0, 1), target.flatten())
        full = loss()
        with lib.autocast("cpu"):
            low = loss()
        low.backward()
        grads = {str(p.grad.dtype).split(".")[-1] for p in m.parameters()}
        return (float(full.detach()), float(low.detach()), str(low.dtype).split(".")[-1],
                grads)
    ours = losses(retrograd, model, x, target)
    ref = losses(torch, theirs, *to_torch(x, target))
    assert ours[0] == pytest.approx(ref[0], rel=1e-5)
    assert ours[2:] == ref[2:] == ("float32", {"float32"})
    assert 0 < abs(ours[1] - ours[0]) <= 2 * abs(ref[1] - ref[0])


def test_autocast_state_is_per_thread():
    seen = []
    with retrograd.autocast("cpu"):
        t = threading.Thread(target=lambda: seen.append(retrograd.is_autocast_enabled("cpu")))
        t.start()
        t.join()
        seen.append(retrograd.is_autocast_enabled("cpu"))
    assert seen == [False, True]


def test_cuda_amp_custom_fwd_bwd_deprecated_as_torch(torch):
    def scenario(lib):
        with warnings.catch_warnings(record=True) as rec:
            warnings.simplefilter("always")
            fwd = lib.cuda.amp.custom_fwd(lambda ctx, x: x, cast_inputs=lib.float32)
            bwd = lib.cuda.amp.custom_bwd(lambda ctx, g: g)
        return [(w.category.__name__, str(w.message)) for w in rec], callable(fwd), callable(bwd)
    assert scenario(retrograd) == scenario(torch)
