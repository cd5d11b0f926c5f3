"""retrograd.distributions.transforms against torch's: maps, inverses, log-Jacobians,
signs, domains and shapes; caching; and TransformedDistribution built on them."""

import numpy as np
import pytest
import torch

import retrograd

RT = retrograd.distributions.transforms
TT = torch.distributions.transforms
RG, TD = retrograd.distributions, torch.distributions
rng = np.random.default_rng(1)
X = rng.standard_normal((3, 4))
POS = rng.uniform(0.2, 2.0, (3, 4))

TRANSFORMS = {  # name -> (builder given the transforms module and the library, input)
    "exp": (lambda T, lib: T.ExpTransform(), X),
    "sigmoid": (lambda T, lib: T.SigmoidTransform(), X),
    "tanh": (lambda T, lib: T.TanhTransform(), X),
    "abs": (lambda T, lib: T.AbsTransform(), X),
    "power": (lambda T, lib: T.PowerTransform(lib.tensor(1.5, dtype=lib.float64)), POS),
    "affine_number": (lambda T, lib: T.AffineTransform(1.0, -2.0), X),
    "affine_tensor": (lambda T, lib: T.AffineTransform(lib.tensor(POS), lib.tensor(X),
                                                       event_dim=1), X),
    "softmax": (lambda T, lib: T.SoftmaxTransform(), X),
    "compose": (lambda T, lib: T.ComposeTransform([T.AffineTransform(0.5, 3.0),
                                                   T.TanhTransform()]), X),
    "compose_event": (lambda T, lib: T.ComposeTransform([T.ExpTransform(),
                                                         T.SoftmaxTransform()]), X),
    "inverse": (lambda T, lib: T.ExpTransform().inv, POS),
    "softplus": (lambda T, lib: T.SoftplusTransform(), X),
    "stick_breaking": (lambda T, lib: T.StickBreakingTransform(), X),
    "lower_cholesky": (lambda T, lib: T.LowerCholeskyTransform(), X[:, :3]),
    "positive_definite": (lambda T, lib: T.PositiveDefiniteTransform(), X[:, :3]),
    "independent": (lambda T, lib: T.IndependentTransform(T.SigmoidTransform(), 1), X),
    "reshape": (lambda T, lib: T.ReshapeTransform((4,), (2, 2)), X),
    "cat": (lambda T, lib: T.CatTransform([T.ExpTransform(), T.SigmoidTransform(),
                                           T.AffineTransform(1.0, 2.0)], dim=1,
                                          lengths=[1, 2, 1]), X),
    "cat_event": (lambda T, lib: T.CatTransform([T.SoftmaxTransform(),
                                                 T.ExpTransform()], dim=-1, lengths=[2, 2]),
                  X),
    "cat_independent": (lambda T, lib: T.CatTransform(
        [T.IndependentTransform(T.ExpTransform(), 1),
         T.IndependentTransform(T.SigmoidTransform(), 1)], dim=-1, lengths=[1, 3]), X),
    "corr_cholesky": (lambda T, lib: T.CorrCholeskyTransform(), X[:, :3]),
    "stack": (lambda T, lib: T.StackTransform([T.ExpTransform(), T.TanhTransform(),
                                               T.SoftplusTransform()], dim=0), X),
    "cdf": (lambda T, lib: T.CumulativeDistributionTransform(lib.distributions.Normal(
        lib.tensor(X[0]), lib.tensor(POS[0]))), X),
}
BIJECTIVE_WITH_JACOBIAN = ["exp", "sigmoid", "tanh", "power", "affine_number",
                           "affine_tensor", "compose", "inverse", "softplus", "stick_breaking",
                           "independent", "reshape", "cdf", "cat", "cat_independent",
                           "stack", "corr_cholesky"]


def both(name):
    build, x = TRANSFORMS[name]
    return (build(TT, torch), torch.tensor(x, requires_grad=True)), \
        (build(RT, retrograd), retrograd.tensor(x, requires_grad=True))


def close(a, b):
    np.testing.assert_allclose(np.asarray(b.detach()), a.detach().numpy(), rtol=1e-10,
                               atol=1e-12)


@pytest.mark.parametrize("name", TRANSFORMS)
def test_map_inverse_and_metadata(name):
    (t, tx), (r, rx) = both(name)
    ty, ry = t(tx), r(rx)
    close(ty, ry)
    close(t.inv(ty.detach()), r.inv(ry.detach()))
    assert repr(r).replace("retrograd", "torch") == repr(t)
    assert repr(r.domain) == repr(t.domain) and repr(r.codomain) == repr(t.codomain)
    assert (r.domain.event_dim, r.codomain.event_dim) == (t.domain.event_dim,
                                                          t.codomain.event_dim)
    assert r.bijective == t.bijective
    for shape in ((2, 3, 4), (3, 2, 2)):
        assert _outcome(r.forward_shape, shape) == _outcome(t.forward_shape, shape)
        assert _outcome(r.inverse_shape, shape) == _outcome(t.inverse_shape, shape)
    try:
        ts = t.sign
    except NotImplementedError:
        with pytest.raises(NotImplementedError):
            assert r.sign is None
    else:
        rs = r.sign
        assert (rs == ts) if isinstance(ts, int) else np.array_equal(np.asarray(rs), ts)


@pytest.mark.parametrize("name", BIJECTIVE_WITH_JACOBIAN)
def test_log_abs_det_jacobian_and_its_gradient(name):
    (t, tx), (r, rx) = both(name)
    tj, rj = t.log_abs_det_jacobian(tx, t(tx)), r.log_abs_det_jacobian(rx, r(rx))
    close(tj, rj)
    assert rj.requires_grad == tj.requires_grad
    if tj.requires_grad:  # (an affine map's does not depend on x)
        close(torch.autograd.grad(tj.sum(), tx)[0], retrograd.autograd.grad(rj.sum(), rx)[0])


def test_caching_returns_the_pair_it_made():
    for T, lib in ((TT, torch), (RT, retrograd)):
        t = T.TanhTransform(cache_size=1)
        x = lib.tensor([30.0, -30.0], dtype=lib.float64)
        y = t(x)
        assert t(x) is y
        assert t.inv(y) is x  # atanh(y) would be inf where tanh saturated
        assert T.TanhTransform(cache_size=0).inv(y).isinf().all()
        with pytest.raises(ValueError, match="cache_size must be 0 or 1"):
            T.ExpTransform(cache_size=2)
        assert t.inv.inv is t
        assert T.ExpTransform() == T.ExpTransform() and T.ExpTransform() != T.TanhTransform()
        assert T.ExpTransform().with_cache(1)._cache_size == 1


@pytest.mark.parametrize("name", TRANSFORMS)
def test_event_dim(name):
    (t, _), (r, _) = both(name)
    assert _outcome(lambda: r.event_dim) == _outcome(lambda: t.event_dim)


def _outcome(f, *args):
    """What ``f(*args)`` gives (a shape as a tuple), or the type and message it raises."""
    try:
        out = f(*args)
    except (ValueError, RuntimeError) as e:
        return type(e), str(e).replace("retrograd", "torch")
    return tuple(out) if isinstance(out, tuple) else out


def test_squashed_gaussian_policy():
    """SAC's policy: Normal pushed through tanh (cached), log_prob of its own rsample."""
    loc, scale = rng.standard_normal(5), rng.uniform(0.5, 1.5, 5)
    out = []
    for lib, D in ((torch, TD), (retrograd, RG)):
        lib.manual_seed(0)
        mu = lib.tensor(loc, requires_grad=True)
        dist = D.TransformedDistribution(D.Normal(mu, lib.tensor(scale)),
                                         [D.TanhTransform(cache_size=1)])
        x = dist.base_dist.rsample() * 0 + mu * 4  # a saturating pre-tanh value
        a = dist.transforms[0](x)
        logp = dist.log_prob(a).sum()
        logp.backward()
        out.append((logp.item(), np.asarray(mu.grad)))
    assert np.isfinite(out[1][0])
    np.testing.assert_allclose(out[1][0], out[0][0], rtol=1e-10)
    np.testing.assert_allclose(out[1][1], out[0][1], rtol=1e-10)


@pytest.mark.parametrize("build", [
    lambda D, lib: D.TransformedDistribution(D.Normal(0.0, 1.0), "exp"),
    lambda D, lib: D.TransformedDistribution(D.Normal(0.0, 1.0), [D.ExpTransform(), 3]),
    lambda D, lib: D.TransformedDistribution(D.Normal(0.0, 1.0), D.SoftmaxTransform()),
    lambda D, lib: D.MixtureSameFamily(D.Normal(0.0, 1.0), D.Normal(lib.zeros(2), 1.0)),
    lambda D, lib: D.MixtureSameFamily(D.Categorical(logits=lib.zeros(3)),
                                       D.Normal(lib.zeros(2), 1.0)),
], ids=lambda f: "")
def test_construction_errors(build):
    with pytest.raises(Exception) as te:
        build(TD, torch)
    with pytest.raises(Exception) as re_:
        build(RG, retrograd)
    assert type(re_.value) is type(te.value)
    assert str(re_.value).replace("retrograd", "torch") == str(te.value)


def test_transformed_support_and_shapes():
    pairs = [(lib, D, D.TransformedDistribution(D.Normal(lib.zeros(3, 4), 1.0),
                                                D.SoftmaxTransform()))
             for lib, D in ((torch, TD), (retrograd, RG))]
    (_, _, t), (_, _, r) = pairs
    assert tuple(r.batch_shape) == tuple(t.batch_shape)
    assert tuple(r.event_shape) == tuple(t.event_shape)
    assert repr(r.support) == repr(t.support)
    assert repr(r) == repr(t)


def _constraints(C, lib):
    return [C.real, C.positive, C.nonnegative, C.greater_than(-1.5), C.greater_than_eq(2.0),
            C.less_than(3.0), C.interval(-2.0, 5.0), C.unit_interval,
            C.half_open_interval(0.0, 1.0), C.simplex, C.real_vector,
            C.independent(C.positive, 1), C.lower_cholesky, C.positive_definite,
            C.interval(lib.zeros(4, dtype=lib.float64), lib.full((4,), 3.0, dtype=lib.float64)),
            C.positive_semidefinite, C.corr_cholesky,
            C.cat([C.positive, C.interval(-1.0, 1.0)], dim=-1, lengths=[3, 1]),
            C.stack([C.positive, C.real, C.unit_interval], dim=0)]


@pytest.mark.parametrize("registry", ["biject_to", "transform_to"])
@pytest.mark.parametrize("k", range(19))
def test_constraint_registry(registry, k):
    """The transform of each constraint, its values in the constraint's set and its
    log-Jacobian, as PyTorch's; a constraint without one raises as PyTorch's."""
    x = X[:, :3] if k in (12, 13, 15, 16) else X
    got = []
    for lib, D in ((torch, TD), (retrograd, RG)):
        c = _constraints(D.constraints, lib)[k]
        try:
            t = getattr(D, registry)(c)
        except NotImplementedError as e:
            got.append(("error", str(e)))
            continue
        xt = lib.tensor(x)
        y = t(xt)
        assert bool(c.check(y).all())
        jac = t.log_abs_det_jacobian(xt, y) if t.bijective and registry == "biject_to" else None
        got.append((repr(t).replace("retrograd", "torch"), y, jac))
    (tr, ty, *tj), (rr, ry, *rj) = got
    assert rr == tr
    if tr == "error":
        return
    close(ty, ry)
    if tj[0] is not None:
        close(tj[0], rj[0])


def test_registry_registration_and_errors():
    reg = RG.constraint_registry.ConstraintRegistry()
    with pytest.raises(TypeError, match="Expected constraint to be either a Constraint"):
        reg.register(3, lambda c: None)

    @reg.register(RG.constraints.positive)
    def _positive(c):
        return RG.transforms.SoftplusTransform()

    assert isinstance(reg(RG.constraints.greater_than(0.0)), RG.transforms.SoftplusTransform)
    with pytest.raises(NotImplementedError, match="Cannot transform _Real constraints"):
        reg(RG.constraints.real)


@pytest.mark.parametrize("diag", [-2, -1, 0, 1])
def test_tril_vector_round_trip_as_pytorch(diag):
    from torch.distributions import utils as tu

    from retrograd.distributions import utils as ru
    m = rng.standard_normal((2, 4, 4))
    tv, rv = tu.tril_matrix_to_vec(torch.tensor(m), diag), ru.tril_matrix_to_vec(
        retrograd.tensor(m), diag)
    close(tv, rv)
    close(tu.vec_to_tril_matrix(tv, diag), ru.vec_to_tril_matrix(rv, diag))
    for length in (5, 7):  # (no lower triangle of that many entries)
        assert (_outcome(ru.vec_to_tril_matrix, retrograd.ones(length), diag)
                == _outcome(tu.vec_to_tril_matrix, torch.ones(length), diag))
    assert (_outcome(ru.tril_matrix_to_vec, retrograd.ones(4, 4), 4)
            == _outcome(tu.tril_matrix_to_vec, torch.ones(4, 4), 4))
