"""vmap's ``randomness``: what a random op inside ``func`` draws.

``"error"`` refuses any draw; ``"same"`` draws one sample's values, shared by the batch
(and refuses parameters that vary over it, as PyTorch does);
``"different"`` draws each batch element's own (one draw per element, stacked as a batch
of the level). Ops reach their NumPy generator through ``Generator._rng``, which hands
out :class:`_Draws` while a vmap runs (``_random.draw_hook``).
"""

from contextlib import contextmanager

from .. import _random
from ..autograd._batched import RANDOMNESS, SAME_BATCHED, Batched
from ..backend import host_array_module

__all__ = ["check_randomness", "mode"]

_ERROR = ("vmap: called random operation while in randomness error mode. Please either use "
          "the 'same' or 'different' randomness flags on vmap or perform the randomness "
          "operation out of vmap")

_levels = []  # (level, batch, randomness) of the running vmaps, outermost first


def check_randomness(randomness):
    if randomness not in ("error", "different", "same"):
        raise RuntimeError(f"Only allowed values for randomness are 'error', 'different', or "
                           f"'same'. Got {randomness}")


@contextmanager
def mode(level, batch, randomness):
    """Draws inside this vmap level follow ``randomness``."""
    _levels.append((level, batch, randomness))
    RANDOMNESS[level] = randomness
    prev, _random.draw_hook[0] = _random.draw_hook[0], _draws
    try:
        yield
    finally:
        _levels.pop()
        RANDOMNESS.pop(level, None)
        _random.draw_hook[0] = prev


def _draws(rng):
    for level, batch, randomness in _levels:
        rng = _Draws(rng, level, batch, randomness)
    return rng


class _Draws:
    """A NumPy generator seen from inside one vmap level."""

    def __init__(self, rng, level, batch, randomness):
        self._rng, self._level, self._batch, self._mode = rng, level, batch, randomness

    def __getattr__(self, name):
        method = getattr(self._rng, name)
        if not callable(method):
            return method
        if self._mode == "error":
            raise RuntimeError(_ERROR)
        level = self._level

        def draw(*args, **kwargs):
            if self._mode == "same":
                if _batched(args, kwargs, level):
                    raise RuntimeError(SAME_BATCHED)
                return method(*args, **kwargs)
            rows = [method(*_row(args, level, i), **_row(kwargs, level, i))
                    for i in range(self._batch)]
            return Batched(host_array_module().stack(rows), level)  # the host's draws
        return draw


def _batched(x, kwargs, level):
    return any(type(a) is Batched and a.level == level
               for a in (*x, *kwargs.values()))


def _row(x, level, i):
    """Batch element ``i`` of this level's batched values in ``x`` (a tuple or a dict)."""
    if type(x) is dict:
        return {k: v.data[i] if type(v) is Batched and v.level == level else v
                for k, v in x.items()}
    return tuple(v.data[i] if type(v) is Batched and v.level == level else v for v in x)
