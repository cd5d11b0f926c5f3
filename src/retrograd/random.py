"""``torch.random``: the default generator's seeding and state (:mod:`._random`'s), and
:func:`fork_rng`, which puts them back after a block.

>>> import retrograd.random
>>> with retrograd.random.fork_rng():
...     _ = retrograd.rand(2)  # draws here leave the generator as it was
"""

import contextlib
import warnings

from . import accelerator, cpu, cuda
from ._random import (Generator, default_generator, get_rng_state, initial_seed,
                      manual_seed, seed, set_rng_state)
from .backend import Device

__all__ = ["Generator", "default_generator", "fork_rng", "get_rng_state", "initial_seed",
           "manual_seed", "seed", "set_rng_state"]

_DEVICE_MODULES = {"cuda": cuda, "cpu": cpu}
_fork_rng_warned_already = False


@contextlib.contextmanager
def fork_rng(devices=None, enabled=True, _caller="fork_rng", _devices_kw="devices",
             device_type=None):
    """Restore the CPU generator's state, and each of ``devices``' (by default every
    device of ``device_type``: the accelerator's, else cuda), on leaving the block."""
    global _fork_rng_warned_already
    if device_type == "meta":
        yield
        return
    acc = accelerator.current_accelerator()
    device_type = device_type or (acc.type if acc is not None else "cuda")
    Device(device_type)  # PyTorch's error for an unknown type
    device_mod = _DEVICE_MODULES.get(device_type)
    if device_mod is None:
        raise RuntimeError(f"torch has no module of `{device_type}`, you should register a "
                           "module by `torch._register_device_module`.")
    if not enabled:
        yield
        return
    if devices is None:
        num_devices = device_mod.device_count()
        if num_devices > 1 and not _fork_rng_warned_already:
            warnings.warn(_many_devices_message(device_type.upper(), num_devices, _caller,
                                                _devices_kw), stacklevel=3)
            _fork_rng_warned_already = True
        devices = list(range(num_devices))
    else:
        devices = list(devices)  # a generator would be spent by the first pass
    cpu_rng_state = get_rng_state()
    device_rng_states = [device_mod.get_rng_state(device) for device in devices]
    try:
        yield
    finally:
        set_rng_state(cpu_rng_state)
        for device, device_rng_state in zip(devices, device_rng_states, strict=True):
            device_mod.set_rng_state(device_rng_state, device)


def _many_devices_message(kind, count, caller, devices_kw):
    return (f"{kind} reports that you have {count} available devices, and you have used "
            f"{caller} without explicitly specifying which devices are being used. For "
            f"safety, we initialize *every* {kind} device by default, which can be quite slow "
            f"if you have a lot of {kind}s. If you know that you are only making use of a few "
            f"{kind} devices, set the environment variable {kind}_VISIBLE_DEVICES or the "
            f"'{devices_kw}' keyword argument of {caller} with the set of devices you are "
            "actually using. For example, if you are using CPU only, set "
            "device.upper()_VISIBLE_DEVICES= or devices=[]; if you are using device 0 only, "
            f"set {kind}_VISIBLE_DEVICES=0 or devices=[0].  To initialize all devices and "
            f"suppress this warning, set the '{devices_kw}' keyword argument to "
            f"`range(torch.{kind.lower()}.device_count())`.")
