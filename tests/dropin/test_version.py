"""``torch.__version__`` and ``torch.version``: the PyTorch API retrograd implements, in a
string that version checks parse and compare as PyTorch's own ``TorchVersion``."""

import itertools
import operator
import tomllib
from pathlib import Path

import pytest

import retrograd
from retrograd.torch_version import InvalidVersion, TorchVersion, _key

# PEP 440's grammar: epochs, pre/post/dev releases, implicit numbers, local parts, aliases.
VERSIONS = ["0", "0.0", "1", "1.0", "1.0.0", "1.0a", "1.0a1", "1.0alpha2", "1.0b0",
            "1.0beta", "1.0rc1", "1.0c2", "1.0pre2", "1.0preview1", "1.0.post1", "1.0-1",
            "1.0r", "1.0rev3", "1.0.post", "1.0.dev0", "1.0dev", "1.0-dev3", "1.0a1.dev1",
            "1.0.post1.dev2", "1.0+local", "1.0+1", "1.0+abc.1", "1.0+abc.2", "1.0+1.abc",
            "1.0+cpu.r1", "1!0.5", "v1.0", " 1.0 ", "2.2", "2.13", "2.13.0", "2.13.0+cpu",
            "2.13.0+retrograd.0.1.0", "1.13.0rc1", "2.1.0.dev20230101", "2.14.0a0"]
OPS = [operator.eq, operator.lt, operator.le, operator.gt, operator.ge]


def test_the_ordering_is_pep_440s():
    """Every pair of versions compares as ``packaging.version.Version`` compares them."""
    Version = pytest.importorskip("packaging.version").Version
    for a, b in itertools.product(VERSIONS, VERSIONS):
        for op in OPS:
            assert op(_key(a), _key(b)) == op(Version(a), Version(b)), (a, op.__name__, b)


COMPARANDS = ["2.0", "2.13", "2.13.0", "2.13.0+retrograd.0.1.0", "2.13.1", "10.0", "2.13.0a0",
              (2,), (2, 13), (2, 13, 0), (2, 14), [1, 9], "parrot", "", (1, "x"), 2, 2.13,
              None]


@pytest.mark.parametrize("mine", ["2.13.0+retrograd.0.1.0", "2.13.0+cpu", "1.10.0a",
                                  "parrot"])
def test_comparisons_are_torch_version_s(mine, torch):
    """Against strings, tuples and what is not a version: the results (or the TypeError)
    of PyTorch's ``TorchVersion`` for ==, <, <=, >, >=."""
    from torch.torch_version import TorchVersion as Theirs
    for other, op in itertools.product(COMPARANDS, OPS):
        try:
            want = op(Theirs(mine), other)
        except TypeError:
            with pytest.raises(TypeError):
                op(TorchVersion(mine), other)
            continue
        assert op(TorchVersion(mine), other) == want, (mine, op.__name__, other)


def test_not_equal_is_the_negation_of_equal():
    """PyTorch's ``!=`` falls back to ``str``'s (so "2.0" == and != "2.0.0"); here it
    negates ``==``."""
    assert TorchVersion("2.0") == "2.0.0" and not TorchVersion("2.0") != "2.0.0"
    assert TorchVersion("2.0") != "2.1" and TorchVersion("parrot") != "zebra"


def test_invalid_versions_are_named():
    with pytest.raises(InvalidVersion, match="Invalid version: 'parrot'"):
        _key("parrot")
    assert issubclass(InvalidVersion, ValueError)


def test_the_version_string(torch):
    Version = pytest.importorskip("packaging.version").Version
    v = retrograd.__version__
    assert type(v) is TorchVersion and isinstance(v, str) and hash(v) == hash(str(v))
    assert v == retrograd.version.__version__ == "2.13.0+retrograd.0.1.0"
    assert type(retrograd.version.__version__) is str  # torch.version's is a plain str
    parsed, api = Version(v), Version(torch.__version__)
    assert parsed.release == api.release == (2, 13, 0)  # the PyTorch API retrograd follows
    assert parsed.local == f"retrograd.{retrograd.version.retrograd_version}"
    assert v >= "2.0" and v > "2.9" and v >= (2, 13) and v < "2.14"  # not "2.13" < "2.9"
    assert str(v).split("+")[0] == "2.13.0" and repr(v) == "'2.13.0+retrograd.0.1.0'"


def test_version_module_has_torch_versions_names(torch):
    assert set(torch.version.__all__) <= set(retrograd.version.__all__)
    for name in torch.version.__all__:
        assert hasattr(retrograd.version, name), name
    assert retrograd.version.cuda is None and retrograd.version.debug is False  # CPU build
    assert retrograd.torch_version.__version__ is retrograd.__version__


def test_pyproject_version_is_retrograd_s_own():
    pyproject = Path(retrograd.__file__).resolve().parents[2] / "pyproject.toml"
    if not pyproject.exists():
        pytest.skip("not a source checkout (no pyproject.toml beside src/)")
    with pyproject.open("rb") as f:
        project = tomllib.load(f)["project"]
    assert project["version"] == retrograd.version.retrograd_version
