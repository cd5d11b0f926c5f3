"""``testing.assert_close`` across devices, as PyTorch's: tensors on different devices
(``check_device=False``) are compared on the CPU, meta tensors have no values to compare."""

import pytest
import torch

import retrograd
from device.emulated_run import emulating


def _message(lib, actual, expected, **kw):
    with pytest.raises(AssertionError) as err:
        lib.testing.assert_close(actual, expected, **kw)
    return str(err.value)


def test_device_and_host_tensors_compare_without_check_device():
    a, b = [1.0, 2.0, float("nan")], [1.0, 2.5, float("nan")]
    with emulating():
        x = retrograd.tensor(a, device="cuda")
        retrograd.testing.assert_close(x, retrograd.tensor(a), equal_nan=True,
                                       check_device=False)
        got = _message(retrograd, x, retrograd.tensor(b), equal_nan=True, check_device=False)
        assert got == _message(torch, torch.tensor(a), torch.tensor(b), equal_nan=True)
        with pytest.raises(AssertionError, match="The values for attribute 'device' do not "
                                                 "match: cuda:0 != cpu."):
            retrograd.testing.assert_close(x, retrograd.tensor(a))


def test_meta_tensors_have_no_values_to_compare():
    for lib in (torch, retrograd):
        a = lib.tensor([1.0, 2.0], device="meta")
        lib.testing.assert_close(a, lib.tensor([1.0, 3.0], device="meta"))
        lib.testing.assert_close(a, lib.tensor([5.0, 6.0]), check_device=False)
        with pytest.raises(AssertionError, match="'shape' do not match"):
            lib.testing.assert_close(a, lib.tensor([1.0], device="meta"))
