"""Optimizers unpickle (and deepcopy) as PyTorch's: the copy goes on identically, and a
pickle of an older version gets the group options it lacks and a tensor ``step``."""

import copy
import pickle

import numpy
import pytest

import retrograd
from retrograd import optim

OPTIMIZERS = [(optim.SGD, {"lr": 0.1, "momentum": 0.9}), (optim.Adam, {"amsgrad": True}),
              (optim.AdamW, {}), (optim.NAdam, {}), (optim.RAdam, {}), (optim.Adamax, {}),
              (optim.Adadelta, {}), (optim.RMSprop, {"centered": True}), (optim.Adagrad, {}),
              (optim.Rprop, {}), (optim.ASGD, {"t0": 1}), (optim.Adafactor, {})]


def _params():
    rng = numpy.random.default_rng(0)
    return [retrograd.tensor(rng.standard_normal(s), requires_grad=True) for s in ((3, 2), (2,))]


def _step(opt, params, seed):
    rng = numpy.random.default_rng(seed)
    for p in params:
        p.grad = retrograd.tensor(rng.standard_normal(tuple(p.shape)))
    opt.step()


@pytest.mark.parametrize("cls,kw", OPTIMIZERS, ids=lambda v: getattr(v, "__name__", ""))
@pytest.mark.parametrize("how", ["pickle", "deepcopy"])
def test_a_copy_goes_on_identically(cls, kw, how):
    params = _params()
    opt = cls(params, **kw)
    _step(opt, params, 1)
    copied = pickle.loads(pickle.dumps((params, opt))) if how == "pickle" \
        else copy.deepcopy((params, opt))
    params2, opt2 = copied
    assert opt2.param_groups[0].keys() == opt.param_groups[0].keys()
    for seed in (2, 3):
        _step(opt, params, seed)
        _step(opt2, params2, seed)
    for p, q in zip(params, params2, strict=True):
        numpy.testing.assert_array_equal(p.detach().numpy(), q.detach().numpy())


@pytest.mark.parametrize("cls,kw", OPTIMIZERS, ids=lambda v: getattr(v, "__name__", ""))
def test_an_older_pickle_gets_missing_options_and_a_tensor_step(cls, kw):
    params = _params()
    opt = cls(params, **kw)
    _step(opt, params, 1)
    state = opt.__getstate__() if hasattr(opt, "__getstate__") else dict(opt.__dict__)
    state = copy.copy(state)
    expected = dict(cls._group_defaults)
    state["param_groups"] = [{k: v for k, v in g.items() if k not in expected}
                             for g in opt.param_groups]
    for st in opt.state.values():
        if "step" in st:
            st["step"] = float(st["step"])  # as versions before tensor steps stored it
    old = cls.__new__(cls)
    old.__setstate__(state)
    if cls is optim.AdamW:  # AdamW is Adam with decoupled weight decay, always
        expected["decoupled_weight_decay"] = True
    for k, v in expected.items():
        assert old.param_groups[0][k] == v
    for st in old.state.values():
        if "step" in st:
            assert isinstance(st["step"], retrograd.Tensor)
