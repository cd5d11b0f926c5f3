"""``torch.torch_version``: ``TorchVersion``, the version string that compares as a version.

``torch.__version__ >= "2.0"`` must compare versions, not characters ("2.13" < "2.2" as
strings), so ``__version__`` is a ``str`` whose comparisons parse both sides as PEP 440
versions, as PyTorch's own ``TorchVersion`` does. The parsing is written out here (it is
short) because retrograd depends on NumPy only, not on ``packaging``.
"""

import re
from collections.abc import Iterable

from .version import __version__ as _internal_version

__all__ = ["TorchVersion", "InvalidVersion"]


class InvalidVersion(ValueError):
    """A string that is not a PEP 440 version (``packaging.version.InvalidVersion``)."""


_PATTERN = re.compile(r"""
    v?(?:(?P<epoch>\d+)!)?(?P<release>\d+(?:\.\d+)*)
    (?:[-_.]?(?P<pre_l>alpha|a|beta|b|preview|pre|c|rc)[-_.]?(?P<pre_n>\d+)?)?
    (?:-(?P<post_n1>\d+)|[-_.]?(?P<post_l>post|rev|r)[-_.]?(?P<post_n2>\d+)?)?
    (?:[-_.]?(?P<dev_l>dev)[-_.]?(?P<dev_n>\d+)?)?
    (?:\+(?P<local>[a-z0-9]+(?:[-_.][a-z0-9]+)*))?
""", re.VERBOSE | re.IGNORECASE)
_PRE = {"alpha": 0, "a": 0, "beta": 1, "b": 1, "c": 2, "pre": 2, "preview": 2, "rc": 2}
_INF = float("inf")


def _key(text):
    """PEP 440's ordering of ``text`` as a tuple (``packaging.version.Version``'s): the
    release without trailing zeros, then a pre-release (a bare dev release sorts before
    the pre-releases, a final release after them), post-release, dev-release and local
    part (numbers after names)."""
    m = _PATTERN.fullmatch(text.strip())
    if m is None:
        raise InvalidVersion(f"Invalid version: {text!r}")
    release = [int(x) for x in m["release"].split(".")]
    while release and release[-1] == 0:
        release.pop()
    post = m["post_n1"] or m["post_n2"] or ("0" if m["post_l"] else None)
    dev = m["dev_n"] or ("0" if m["dev_l"] else None)
    if m["pre_l"] is not None:
        pre = (0, _PRE[m["pre_l"].lower()], int(m["pre_n"] or 0))
    else:
        pre = (-1,) if post is None and dev is not None else (1,)
    local = (0,) if m["local"] is None else (1, *(
        (int(p), "") if p.isdigit() else (-_INF, p.lower())
        for p in re.split(r"[-_.]", m["local"])))
    return (int(m["epoch"] or 0), tuple(release), pre, -_INF if post is None else int(post),
            _INF if dev is None else int(dev), local)


class TorchVersion(str):
    """``torch.__version__``: a ``str`` that compares as a version with strings and with
    tuples of numbers; against a string that is not a version it compares as a string.

    >>> TorchVersion("2.13.0+retrograd.0.1.0") >= "2.2"
    True
    >>> TorchVersion("2.13.0") > (2, 9, 1)
    True
    """

    __slots__ = ()

    def _compare(self, other, op):
        if isinstance(other, str):
            text = other
        elif isinstance(other, Iterable):
            text = ".".join(str(x) for x in other)
        else:
            return getattr(super(), op)(other)
        try:
            mine, theirs = _key(self), _key(text)
        except InvalidVersion:
            return getattr(super(), op)(other)
        return getattr(mine, op)(theirs)

    def __eq__(self, other):
        return self._compare(other, "__eq__")

    def __ne__(self, other):  # PyTorch's falls back to str's (so "2.0" == and != "2.0.0")
        return self._compare(other, "__ne__")

    def __lt__(self, other):
        return self._compare(other, "__lt__")

    def __le__(self, other):
        return self._compare(other, "__le__")

    def __gt__(self, other):
        return self._compare(other, "__gt__")

    def __ge__(self, other):
        return self._compare(other, "__ge__")

    __hash__ = str.__hash__


__version__ = TorchVersion(_internal_version)
