"""kl_divergence between distributions of different families (and the few same-family
pairs that test_distributions.py leaves out), against torch.distributions: values and the
gradients of the finite ones' sum, on the same float64 parameters, chosen so that pairs
that can be infinite are so in some entries. Where PyTorch 2.13 is wrong
(docs/deviations.md), against a numerical integral or a closed form instead."""


import numpy as np
import pytest
import scipy.integrate
import scipy.special
import torch

import retrograd

RG = retrograd.distributions
TD = torch.distributions
rng = np.random.default_rng(15)


def u(low, high, shape=(2, 3)):
    return rng.uniform(low, high, shape)


A23 = np.array  # a literal (2, 3) parameter array, for readability below

# name -> (constructor given the module and the leaf tensors, parameter arrays)
DISTS = {
    "Bernoulli": (lambda D, p: D.Bernoulli(probs=p[0]), (u(0.05, 0.95),)),
    "Binomial": (lambda D, p: D.Binomial(5, probs=p[0]), (u(0.05, 0.95, (3,)),)),
    "Poisson": (lambda D, p: D.Poisson(p[0]), (u(0.3, 3.0),)),
    "Beta": (lambda D, p: D.Beta(*p), (u(0.5, 3.0), u(0.5, 3.0))),
    # probs far from, near (Taylor region) and at 1/2
    "ContinuousBernoulli": (lambda D, p: D.ContinuousBernoulli(probs=p[0]),
                            (A23([[0.2, 0.4995, 0.8], [0.05, 0.5008, 0.7]]),)),
    "Exponential": (lambda D, p: D.Exponential(p[0]), (u(0.3, 3.0, (3,)),)),
    "Gamma": (lambda D, p: D.Gamma(*p), (u(0.5, 4.0), u(0.3, 3.0))),
    "Gumbel": (lambda D, p: D.Gumbel(*p), (u(-1.0, 1.0, (3,)), u(0.5, 2.0, (3,)))),
    "Laplace": (lambda D, p: D.Laplace(*p), (u(-1.0, 1.0), u(0.5, 2.0))),
    "Normal": (lambda D, p: D.Normal(*p), (u(-1.0, 1.0), u(0.5, 2.0))),
    # alpha at and on both sides of 1 and 2: no mean, no variance, both
    "Pareto": (lambda D, p: D.Pareto(*p), (u(0.3, 2.0), A23([[0.7, 1.0, 1.6],
                                                            [2.0, 2.5, 4.0]]))),
    "Uniform": (lambda D, p: D.Uniform(*p), (u(-1.0, 0.0), u(1.0, 2.0))),
    # as q: low on both sides of 0, high on both sides of 1 (a Beta's support covered or not)
    "Uniform[q]": (lambda D, p: D.Uniform(*p), (A23([[-0.5, 0.1, -0.2], [-1.0, -0.1, -0.3]]),
                                                A23([[1.5, 2.0, 0.9], [1.1, 1.3, 3.0]]))),
    # as p: in [0, 1] or reaching out of it
    "Uniform[unit]": (lambda D, p: D.Uniform(*p), (A23([[0.1, -0.2, 0.3], [0.05, 0.2, 0.4]]),
                                                   A23([[0.6, 0.5, 1.2], [0.95, 0.9, 0.7]]))),
    # as p: low on both sides of 0 (Exponential, Gamma) and of Pareto[q]'s scale
    "Uniform[pos]": (lambda D, p: D.Uniform(*p), (A23([[0.5, -0.2, 0.3], [1.5, 0.2, 0.9]]),
                                                  A23([[1.6, 0.5, 1.2], [2.5, 0.9, 3.0]]))),
    "Pareto[q]": (lambda D, p: D.Pareto(*p), (A23([0.4, 0.1, 0.5]), u(0.5, 3.0, (3,)))),
    "HalfNormal": (lambda D, p: D.HalfNormal(p[0]), (u(0.5, 2.0, (3,)),)),
    # batch (2,) over 3 dims, rank 2
    "LowRankMultivariateNormal": (lambda D, p: D.LowRankMultivariateNormal(*p),
                                  (u(-1, 1), rng.standard_normal((2, 3, 2)), u(0.5, 2.0))),
    "LowRankMultivariateNormal[q]": (lambda D, p: D.LowRankMultivariateNormal(*p),
                                     (u(-1, 1, (3,)), rng.standard_normal((3, 2)),
                                      u(0.5, 2.0, (3,)))),
    # an unbatched scale_tril, broadcast over the LowRank's batch
    "MultivariateNormal": (lambda D, p: D.MultivariateNormal(
        p[0], scale_tril=p[1].tril(-1) + p[2].diag_embed()),
        (u(-1, 1, (3,)), rng.standard_normal((3, 3)), u(0.5, 2.0, (3,)))),
}

# (p, q); a name's suffix in brackets picks other parameters of the same type
PAIRS = [
    ("Bernoulli", "Poisson"),
    ("Beta", "ContinuousBernoulli"), ("Beta", "Exponential"), ("Beta", "Gamma"),
    ("Beta", "Normal"), ("Beta", "Pareto"), ("Beta", "Uniform[q]"),
    ("ContinuousBernoulli", "Exponential"), ("ContinuousBernoulli", "Normal"),
    ("ContinuousBernoulli", "Pareto"), ("ContinuousBernoulli", "Uniform[q]"),
    ("Exponential", "Beta"), ("Exponential", "ContinuousBernoulli"), ("Exponential", "Gamma"),
    ("Exponential", "Gumbel"), ("Exponential", "Normal"), ("Exponential", "Pareto"),
    ("Exponential", "Uniform"),
    ("Gamma", "Beta"), ("Gamma", "ContinuousBernoulli"), ("Gamma", "Exponential"),
    ("Gamma", "Gumbel"), ("Gamma", "Normal"), ("Gamma", "Pareto"), ("Gamma", "Uniform"),
    ("Gumbel", "Beta"), ("Gumbel", "ContinuousBernoulli"), ("Gumbel", "Exponential"),
    ("Gumbel", "Gamma"), ("Gumbel", "Normal"), ("Gumbel", "Pareto"), ("Gumbel", "Uniform"),
    ("HalfNormal", "HalfNormal"),
    ("Laplace", "Beta"), ("Laplace", "ContinuousBernoulli"), ("Laplace", "Exponential"),
    ("Laplace", "Gamma"), ("Laplace", "Normal"), ("Laplace", "Pareto"), ("Laplace", "Uniform"),
    ("LowRankMultivariateNormal", "LowRankMultivariateNormal[q]"),
    ("LowRankMultivariateNormal", "MultivariateNormal"),
    ("MultivariateNormal", "LowRankMultivariateNormal"),
    ("Normal", "Beta"), ("Normal", "ContinuousBernoulli"), ("Normal", "Exponential"),
    ("Normal", "Gamma"), ("Normal", "Gumbel"), ("Normal", "Laplace"), ("Normal", "Pareto"),
    ("Normal", "Uniform"),
    ("Pareto", "Beta"), ("Pareto", "ContinuousBernoulli"), ("Pareto", "Exponential"),
    ("Pareto", "Gamma"), ("Pareto", "Normal"), ("Pareto", "Uniform"),
    ("Poisson", "Bernoulli"), ("Poisson", "Binomial"),
    ("Uniform[unit]", "Beta"), ("Uniform[unit]", "ContinuousBernoulli"),
    ("Uniform[pos]", "Exponential"), ("Uniform[pos]", "Gamma"), ("Uniform", "Gumbel"),
    ("Uniform", "Normal"), ("Uniform[pos]", "Pareto[q]"),
]


def close(a, b, atol=1e-11):
    """As test_distributions.close in float64: ``a`` PyTorch's (or the reference), ``b``
    retrograd's."""
    np.testing.assert_allclose(np.asarray(b.detach()), np.asarray(a.detach()),
                               rtol=1e-8, atol=atol, equal_nan=True)


# Gradients through p's digamma take trigamma, PyTorch 2.13's off by up to 4e-10 relative
# (docs/deviations.md; Beta-Uniform's 0.004565611934 where mpmath gives 0.004565611752,
# retrograd's to 1e-16), which the entropies' cancellations can leave at 1e-8 relative.
TRIGAMMA_ATOL = {"Beta": 1e-9, "Gamma": 1e-9}


def make(lib, name):
    ctor, arrays = DISTS[name]
    leaves = [lib.tensor(a, requires_grad=True) for a in arrays]
    return ctor(TD if lib is torch else RG, leaves), leaves


def type_name(name):
    return name.split("[")[0]


def test_every_pair_of_pytorch_is_registered_and_those_across_families_tested_here():
    names = {(p.__name__, q.__name__) for p, q in TD.kl._KL_REGISTRY}
    ours = {(p.__name__, q.__name__) for p, q in RG.kl._KL_REGISTRY
            if p.__module__.startswith("retrograd.")}  # (not other tests' registrations)
    assert ours == names
    tested = {(type_name(p), type_name(q)) for p, q in PAIRS}
    assert len(tested) == len(PAIRS)
    assert {(p, q) for p, q in names if p != q} <= tested


@pytest.mark.parametrize("p_name,q_name", PAIRS, ids=[f"{p}-{q}" for p, q in PAIRS])
def test_kl_pair(p_name, q_name):
    (tp, tp_leaves), (tq, tq_leaves) = make(torch, p_name), make(torch, q_name)
    (rp, rp_leaves), (rq, rq_leaves) = make(retrograd, p_name), make(retrograd, q_name)
    assert RG.kl._dispatch_kl(type(rp), type(rq)) is RG.kl._KL_REGISTRY[type(rp), type(rq)]
    tk, rk = TD.kl_divergence(tp, tq), RG.kl_divergence(rp, rq)
    assert tuple(rk.shape) == tuple(tk.shape) and rk.dtype == retrograd.float64
    close(tk, rk)
    finite = torch.isfinite(tk)
    if not finite.any():  # q misses p's support whatever the parameters: no gradient
        assert not rk.requires_grad and not tk.requires_grad
        return
    tleaves, rleaves = tp_leaves + tq_leaves, rp_leaves + rq_leaves
    tg = torch.autograd.grad(tk[finite].sum(), tleaves, allow_unused=True)
    rg = retrograd.autograd.grad(rk[retrograd.tensor(finite.numpy())].sum(), rleaves,
                                 allow_unused=True)
    for a, b in zip(tg, rg, strict=True):
        assert (a is None) == (b is None)
        if a is not None:
            close(a, b, atol=TRIGAMMA_ATOL.get(type_name(p_name), 1e-11))


SOMETIMES_INFINITE = {("Beta", "Uniform"), ("ContinuousBernoulli", "Uniform"),
                      ("Pareto", "Exponential"), ("Pareto", "Gamma"), ("Pareto", "Normal"),
                      ("Uniform", "Beta"), ("Uniform", "ContinuousBernoulli"),
                      ("Uniform", "Exponential"), ("Uniform", "Gamma"), ("Uniform", "Pareto")}


def test_pairs_that_can_be_infinite_are_so_in_some_entries():
    for p_name, q_name in PAIRS:
        if (type_name(p_name), type_name(q_name)) in SOMETIMES_INFINITE:
            kl = RG.kl_divergence(make(retrograd, p_name)[0], make(retrograd, q_name)[0])
            finite = kl.isfinite()
            assert finite.any() and not finite.all(), (p_name, q_name)


def test_errors():
    for lib in (torch, retrograd):
        D = lib.distributions
        with pytest.raises(NotImplementedError, match="cross KL-divergence between different"):
            D.kl_divergence(D.Normal(0.0, 1.0), D.Poisson(lib.tensor(2.0)))
        lowrank = D.LowRankMultivariateNormal(lib.zeros(3), lib.ones(3, 1), lib.ones(3))
        mvn = D.MultivariateNormal(lib.zeros(2), lib.eye(2))
        with pytest.raises(ValueError, match="different event shapes"):
            D.kl_divergence(lowrank, mvn)
        with pytest.raises(ValueError, match="different event shapes"):
            D.kl_divergence(mvn, lowrank)
        with pytest.raises(ValueError, match="two Low Rank Multivariate Normals with"):
            D.kl_divergence(lowrank, D.LowRankMultivariateNormal(lib.zeros(2), lib.ones(2, 1),
                                                                 lib.ones(2)))


def grads(lib, kl, leaves):
    return lib.autograd.grad(kl.sum(), leaves)


# ContinuousBernoulli and Uniform where one's support just reaches an end of the other's:
# finite, where PyTorch 2.13 gives inf (docs/deviations.md).
CB_PROBS = np.array([0.2, 0.4995, 0.8])
UNIFORM_Q = (np.array([0.0, -1.0, 0.0]), np.array([1.0, 1.0, 2.0]))  # q covers [0, 1]
UNIFORM_P = (np.array([0.0, 0.2, 0.0]), np.array([1.0, 1.0, 0.5]))  # p inside [0, 1]


def cb_log_density(lam, x):
    norm = 2.0 * np.arctanh(1 - 2 * lam) / (1 - 2 * lam)
    return np.log(norm) + x * np.log(lam) + (1 - x) * np.log1p(-lam)


def quad(f, a, b):
    return scipy.integrate.quad(f, a, b, epsabs=1e-14, epsrel=1e-13)[0]


def test_kl_continuous_bernoulli_uniform_at_the_ends_of_the_unit_interval():
    lam, (low, high) = CB_PROBS, UNIFORM_Q
    expected = [quad(lambda x, c=c: np.exp(cb_log_density(c, x)) * cb_log_density(c, x), 0, 1)
                + np.log(h - lo) for c, lo, h in zip(lam, low, high, strict=True)]
    leaves = [retrograd.tensor(a, requires_grad=True) for a in (lam, low, high)]
    kl = RG.kl_divergence(RG.ContinuousBernoulli(probs=leaves[0]), RG.Uniform(*leaves[1:]))
    close(torch.tensor(expected, dtype=torch.float64), kl)
    tleaves = [torch.tensor(a, requires_grad=True) for a in (lam, low, high)]
    tp, tq = TD.ContinuousBernoulli(probs=tleaves[0]), TD.Uniform(*tleaves[1:])
    assert torch.isinf(TD.kl_divergence(tp, tq)).all()  # PyTorch 2.13's answer
    reference = -tp.entropy() + (tq.high - tq.low).log()  # its closed form, unmasked
    for a, b in zip(grads(torch, reference, tleaves), grads(retrograd, kl, leaves), strict=True):
        close(a, b)


def test_kl_uniform_continuous_bernoulli_at_the_ends_of_the_unit_interval():
    (low, high), lam = UNIFORM_P, CB_PROBS
    expected = [quad(lambda x, c=c, w=h - lo: -(np.log(w) + cb_log_density(c, x)) / w, lo, h)
                for lo, h, c in zip(low, high, lam, strict=True)]
    leaves = [retrograd.tensor(a, requires_grad=True) for a in (low, high, lam)]
    kl = RG.kl_divergence(RG.Uniform(*leaves[:2]), RG.ContinuousBernoulli(probs=leaves[2]))
    close(torch.tensor(expected, dtype=torch.float64), kl)
    tleaves = [torch.tensor(a, requires_grad=True) for a in (low, high, lam)]
    tp, tq = TD.Uniform(*tleaves[:2]), TD.ContinuousBernoulli(probs=tleaves[2])
    assert torch.isinf(TD.kl_divergence(tp, tq)).all()  # PyTorch 2.13's answer
    reference = (-tp.entropy() - tp.mean * tq.logits - (-tq.probs).log1p()
                 - tq._cont_bern_log_norm())
    for a, b in zip(grads(torch, reference, tleaves), grads(retrograd, kl, leaves), strict=True):
        close(a, b)


# Same-family pairs through the Bregman divergence (called directly: each has its own
# closed form, which kl_divergence prefers), against PyTorch's closed forms, gradients
# with respect to p's parameters included (PyTorch 2.13's Bregman divergence has none).
EXP_FAMILIES = {
    "Normal": (lambda D, p: D.Normal(*p), (u(-1, 1), u(0.5, 2.0)),
               (u(-1, 1, (3,)), u(0.5, 2.0, (3,)))),
    "Bernoulli": (lambda D, p: D.Bernoulli(logits=p[0]), (u(-2, 2),), (u(-2, 2),)),
    "Beta": (lambda D, p: D.Beta(*p), (u(0.5, 3), u(0.5, 3)), (u(0.5, 3), u(0.5, 3))),
    "ContinuousBernoulli": (lambda D, p: D.ContinuousBernoulli(probs=p[0]),
                            (A23([[0.2, 0.3, 0.8], [0.05, 0.7, 0.9]]),),
                            (A23([[0.6, 0.1, 0.3], [0.4, 0.35, 0.2]]),)),
    "Dirichlet": (lambda D, p: D.Dirichlet(p[0]), (u(0.5, 3, (2, 4)),), (u(0.5, 3, (2, 4)),)),
    "Exponential": (lambda D, p: D.Exponential(p[0]), (u(0.3, 3),), (u(0.3, 3),)),
    "Gamma": (lambda D, p: D.Gamma(*p), (u(0.5, 4), u(0.3, 3)), (u(0.5, 4), u(0.3, 3))),
    "Poisson": (lambda D, p: D.Poisson(p[0]), (u(0.3, 3),), (u(0.3, 3),)),
}


@pytest.mark.parametrize("name", EXP_FAMILIES)
def test_kl_exponential_family_bregman_divergence(name):
    ctor, p_arrays, q_arrays = EXP_FAMILIES[name]
    tleaves = [torch.tensor(a, requires_grad=True) for a in p_arrays + q_arrays]
    rleaves = [retrograd.tensor(a, requires_grad=True) for a in p_arrays + q_arrays]
    n = len(p_arrays)
    expected = TD.kl_divergence(ctor(TD, tleaves[:n]), ctor(TD, tleaves[n:]))
    bregman = RG.kl._KL_REGISTRY[RG.ExponentialFamily, RG.ExponentialFamily]
    kl = bregman(ctor(RG, rleaves[:n]), ctor(RG, rleaves[n:]))
    close(expected, kl)
    for a, b in zip(grads(torch, expected, tleaves), grads(retrograd, kl, rleaves), strict=True):
        close(a, b, atol=1e-9)  # (trigamma: see TRIGAMMA_ATOL)


def wishart_kl(df_p, tril_p, df_q, tril_q):
    """KL(Wishart(df_p, L_p L_p^T) || Wishart(df_q, L_q L_q^T)) in closed form."""
    n = tril_p.shape[-1]
    vp, vq = tril_p @ tril_p.swapaxes(-1, -2), tril_q @ tril_q.swapaxes(-1, -2)
    logdet_p, logdet_q = np.linalg.slogdet(vp)[1], np.linalg.slogdet(vq)[1]
    trace = np.trace(np.linalg.solve(vq, vp), axis1=-2, axis2=-1)
    mv_digamma = sum(scipy.special.digamma(df_p / 2 - i / 2) for i in range(n))
    return (df_q / 2 * (logdet_q - logdet_p) + df_p / 2 * (trace - n)
            + scipy.special.multigammaln(df_q / 2, n) - scipy.special.multigammaln(df_p / 2, n)
            + (df_p - df_q) / 2 * mv_digamma)


def scale_tril(n, batch):
    diagonal = u(0.5, 2, batch + (n,))[..., None] * np.eye(n)
    return np.tril(rng.standard_normal(batch + (n, n)), -1) + diagonal


# (df, scale_tril) of p, then of q: a batch of 3 over 3 x 3 matrices
WISHART = (np.array([4.0, 5.5, 3.2]), scale_tril(3, (3,)),
           np.array([3.5, 7.0, 5.0]), scale_tril(3, (3,)))


def test_kl_wishart_wishart():
    """A batch of Wisharts through the Bregman divergence, against the closed form and its
    central differences: PyTorch 2.13 sums the df terms over the batch and gives p's
    parameters no gradient (docs/deviations.md)."""
    leaves = [retrograd.tensor(a, requires_grad=True) for a in WISHART]
    kl = RG.kl_divergence(RG.Wishart(leaves[0], scale_tril=leaves[1]),
                          RG.Wishart(leaves[2], scale_tril=leaves[3]))
    expected = torch.from_numpy(np.vectorize(wishart_kl, signature="(),(n,n),(),(n,n)->()")(
        *WISHART))
    close(expected, kl)
    tleaves = [torch.tensor(a, requires_grad=True) for a in WISHART]
    tk = TD.kl_divergence(TD.Wishart(tleaves[0], scale_tril=tleaves[1]),
                          TD.Wishart(tleaves[2], scale_tril=tleaves[3]))
    assert not np.allclose(tk.detach().numpy(), expected.numpy())  # PyTorch 2.13's answer
    gradients = grads(retrograd, kl, leaves)
    for k, got in enumerate(gradients):  # against central differences, entry by entry
        arrays = list(WISHART)
        g = np.zeros_like(arrays[k])
        for i in np.ndindex(g.shape):
            if g.ndim == 3 and i[1] < i[2]:
                continue  # scale_tril's upper triangle is not read
            h = 1e-6
            plus, minus = arrays[k].copy(), arrays[k].copy()
            plus[i] += h
            minus[i] -= h
            g[i] = (wishart_kl(*arrays[:k], plus, *arrays[k + 1:]).sum()
                    - wishart_kl(*arrays[:k], minus, *arrays[k + 1:]).sum()) / (2 * h)
        got = np.tril(got.numpy()) if g.ndim == 3 else got.numpy()
        np.testing.assert_allclose(got, g, rtol=1e-6, atol=1e-7)


# Pairs whose support test PyTorch 2.13 writes as a masked assignment of a mask of one
# side's shape: with the other side broadcast over a larger batch it raises IndexError
# (docs/deviations.md). retrograd broadcasts, as every other pair does: against PyTorch
# on both sides expanded to the common batch shape. (pair, the side made larger)
BROADCAST = [(("Beta", "Uniform[q]"), "p"), (("Pareto", "Exponential"), "q"),
             (("Pareto", "Gamma"), "q"), (("Pareto", "Normal"), "q"),
             (("Uniform[unit]", "Beta"), "q"), (("Uniform[pos]", "Exponential"), "q"),
             (("Uniform[pos]", "Gamma"), "q")]


@pytest.mark.parametrize("pair,larger", BROADCAST, ids=[f"{p}-{q}" for (p, q), _ in BROADCAST])
def test_kl_broadcasts_where_pytorch_raises(pair, larger):
    def both(lib):
        p, q = (make(lib, name)[0] for name in pair)
        shape = (2,) + tuple(torch.broadcast_shapes(p.batch_shape, q.batch_shape))
        return (p.expand(shape), q) if larger == "p" else (p, q.expand(shape)), shape

    (tp, tq), shape = both(torch)
    with pytest.raises(IndexError, match="The shape of the mask"):
        TD.kl_divergence(tp, tq)
    (rp, rq), _ = both(retrograd)
    close(TD.kl_divergence(tp.expand(shape), tq.expand(shape)), RG.kl_divergence(rp, rq))


def test_normal_q_at_the_edges_of_the_float_range():
    """q's scale is logged, not its square, and ``loc^2 - 2 loc mean`` is not expanded: a
    subnormal scale gives inf, as PyTorch; a huge scale a finite divergence and a huge loc
    inf, where PyTorch's squares overflow to inf and NaN (docs/deviations.md)."""
    f32, f64 = retrograd.float32, retrograd.float64
    p = RG.Uniform(retrograd.tensor(0.1, dtype=f32), retrograd.tensor(0.7, dtype=f32))
    q = RG.Normal(retrograd.tensor(-0.1, dtype=f32), retrograd.tensor(1e-45, dtype=f32))
    assert float(RG.kl_divergence(p, q)) == float("inf")
    tq = TD.Normal(torch.tensor(-0.1), torch.tensor(1e-45))
    assert float(TD.kl_divergence(TD.Uniform(torch.tensor(0.1), torch.tensor(0.7)), tq)) == (
        float("inf"))
    laplace = RG.Laplace(retrograd.tensor(-1.0, dtype=f64), retrograd.tensor(14.0, dtype=f64))
    kl = RG.kl_divergence(laplace, RG.Normal(0.1, retrograd.tensor(9e307, dtype=f64)))
    expected = -np.log(28.0) - 1 + np.log(9e307) + 0.5 * np.log(2 * np.pi)  # the rest: 1e-612
    assert float(kl) == pytest.approx(expected, rel=1e-15)
    q = RG.Normal(retrograd.tensor(9e307, dtype=f64), 0.2)
    assert float(RG.kl_divergence(RG.Exponential(retrograd.tensor(0.5, dtype=f64)), q)) == (
        float("inf"))
