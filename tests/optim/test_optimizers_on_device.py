"""Every optimizer of torch.optim's list that retrograd has, on parameters on device
"cuda" (the CuPy-shaped emulator: its arrays refuse implicit conversion to NumPy), steps
as on the CPU: parameters and state equal (float64), state tensors where PyTorch keeps
them (with the parameter; ``step`` and NAdam's ``mu_product`` on the CPU, except ASGD's
counters), and a CPU state_dict loads onto the device (all but ``step`` moved to the
parameter's device, PyTorch's rule). SparseAdam is left out: retrograd has no sparse
gradients, and its step raises for any other."""

import copy

import numpy
import pytest
from device.emulated_run import emulating
from test_optimizers import CONFIGS, IDS, _grad, _init_values

import retrograd

MUON_CONFIGS = [
    ("Muon", {"lr": 0.02}),
    ("Muon", {"lr": 0.05, "nesterov": False, "weight_decay": 0.0,
              "adjust_lr_fn": "match_rms_adamw"}),
]
ALL = CONFIGS + MUON_CONFIGS
ALL_IDS = IDS + [f"Muon-{i}" for i in range(len(MUON_CONFIGS))]


@pytest.mark.torch
def test_every_optimizer_is_covered(torch):
    names = {n for n in dir(torch.optim) if n[0].isupper()} - {"Optimizer", "SparseAdam"}
    assert names == {name for name, _ in ALL}


def _values(name):
    if name == "Muon":  # (matrices only; one tall, one wide)
        rng = numpy.random.default_rng(2)
        return [rng.standard_normal((3, 4)), rng.standard_normal((5, 2))]
    return _init_values()


def _closure(params, k, device):
    """The loss whose gradients are ``_grad(values, k)``, as tests/optim's closure, with
    the gradients made on ``device``."""
    def closure():
        values = [p.detach().cpu().numpy() for p in params]
        loss = 0.0
        for p, v, g in zip(params, values, _grad(values, k), strict=True):
            p.grad = retrograd.tensor(g, device=device)
            loss += float(numpy.sum(-numpy.cos(3 * v + k) / 3 + 0.025 * v ** 4 - 0.05 * k * v))
        return retrograd.tensor(loss, dtype=retrograd.float64, device=device)
    return closure


def _run(name, kw, device, steps=4, state_dict=None):
    params = [retrograd.tensor(v.copy(), device=device, requires_grad=True)
              for v in _values(name)]
    opt = getattr(retrograd.optim, name)(params, **kw)
    if state_dict is not None:
        opt.load_state_dict(state_dict)
    for k in range(steps):
        if name == "LBFGS":
            opt.step(_closure(params, k, device))
            continue
        values = [p.detach().cpu().numpy() for p in params]
        for p, g in zip(params, _grad(values, k), strict=True):
            p.grad = retrograd.tensor(g, device=device)
        opt.step()
    return params, opt


def _host(v):
    return v.detach().cpu().numpy() if isinstance(v, retrograd.Tensor) else v


def _check_state(host_keys, cpu_state, dev_state, key=None):
    """Equal values; the device's tensors on the device but for ``host_keys``'."""
    if isinstance(cpu_state, dict):
        assert list(cpu_state) == list(dev_state)
        for k in cpu_state:
            _check_state(host_keys, cpu_state[k], dev_state[k], k)
    elif isinstance(cpu_state, list):
        assert len(cpu_state) == len(dev_state), key
        for a, b in zip(cpu_state, dev_state, strict=True):
            _check_state(host_keys, a, b, key)
    elif isinstance(cpu_state, retrograd.Tensor):
        assert isinstance(dev_state, retrograd.Tensor), key
        assert dev_state.device.type == ("cpu" if key in host_keys else "cuda"), key
        assert dev_state.dtype == cpu_state.dtype, key
        numpy.testing.assert_allclose(_host(dev_state), _host(cpu_state), rtol=1e-13,
                                      atol=1e-15, err_msg=key)
    else:
        assert type(dev_state) is type(cpu_state), key
        assert dev_state == cpu_state or cpu_state != cpu_state, key


def _check(cpu, dev, host_keys):
    (cpu_params, cpu_opt), (dev_params, dev_opt) = cpu, dev
    for c, d in zip(cpu_params, dev_params, strict=True):
        assert d.device.type == "cuda"
        numpy.testing.assert_allclose(_host(d), _host(c), rtol=1e-13, atol=1e-15)
    _check_state(host_keys, [cpu_opt.state[p] for p in cpu_params],
                 [dev_opt.state[p] for p in dev_params])


@pytest.mark.parametrize(("name", "kw"), ALL, ids=ALL_IDS)
def test_steps_on_device_equal_the_cpus(name, kw):
    cpu = _run(name, kw, "cpu")
    with emulating():
        dev = _run(name, kw, "cuda")
        _check(cpu, dev, () if name == "ASGD" else ("step", "mu_product"))


@pytest.mark.parametrize(("name", "kw"), ALL, ids=ALL_IDS)
def test_cpu_state_dict_loads_onto_the_device(name, kw):
    """Two steps on the CPU, the state_dict loaded into an optimizer of device
    parameters (its tensors moved to the parameters' device, PyTorch's rule), two more
    steps on each: as four steps on the CPU."""
    _, first = _run(name, kw, "cpu", steps=2)
    sd = first.state_dict()
    cpu = _run(name, kw, "cpu", steps=2, state_dict=copy.deepcopy(sd))
    with emulating():
        dev = _run(name, kw, "cuda", steps=2, state_dict=copy.deepcopy(sd))
        _check(cpu, dev, ("step",))
