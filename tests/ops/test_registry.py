"""``register`` refuses a second op of one name, leaving the first bound."""

import pytest

import retrograd
from retrograd.ops._registry import FUNCTIONS, register


def _other(*args, **kwargs):
    return "replaced"


@pytest.mark.parametrize("kw, kind", [({}, "function"), ({"function": False}, "method")])
def test_register_refuses_a_taken_name(kw, kind):
    before = FUNCTIONS["exp"], retrograd.Tensor.exp
    with pytest.raises(RuntimeError, match=f"{kind} 'exp' is registered twice "
                                           r"\(first by retrograd\.ops\.pointwise\.exp\)"):
        register(_other, name="exp", **kw)
    assert (FUNCTIONS["exp"], retrograd.Tensor.exp) == before


def test_a_taken_alias_binds_no_name():
    with pytest.raises(RuntimeError, match="function 'exp' is registered twice"):
        register(_other, name="_registry_test_fresh_name", aliases=("exp",))
    assert "_registry_test_fresh_name" not in FUNCTIONS
    assert not hasattr(retrograd.Tensor, "_registry_test_fresh_name")
