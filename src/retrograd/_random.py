"""Random number generation: a seedable Generator over NumPy's PCG64.

Streams differ from PyTorch's (which uses Mersenne Twister with its own
transforms); seeding makes retrograd runs reproducible among themselves.
"""

import numpy

from ._tensor import wrap

__all__ = ["Generator", "default_generator", "manual_seed", "seed", "initial_seed",
           "get_rng_state", "set_rng_state"]

_DEFAULT_SEED = 67280421310721


class Generator:
    """``torch.Generator``: ``manual_seed``, ``seed``, ``initial_seed``, state get/set."""

    def __init__(self, device="cpu"):
        self._seed = _DEFAULT_SEED
        self._rng = numpy.random.Generator(numpy.random.PCG64(self._seed))

    def manual_seed(self, seed):
        self._seed = int(seed)
        self._rng = numpy.random.Generator(numpy.random.PCG64(self._seed & (2 ** 64 - 1)))
        return self

    def seed(self):
        s = int(numpy.random.SeedSequence().entropy) & (2 ** 63 - 1)
        self.manual_seed(s)
        return s

    def initial_seed(self):
        return self._seed

    def get_state(self):
        import pickle
        return wrap(numpy.frombuffer(pickle.dumps(self._rng.bit_generator.state),
                                     dtype=numpy.uint8).copy())

    def set_state(self, state):
        import pickle
        self._rng.bit_generator.state = pickle.loads(state._data.tobytes())
        return self


default_generator = Generator()


def manual_seed(seed):
    """Seed the default generator; returns it.

    >>> manual_seed(0)
    """
    return default_generator.manual_seed(seed)


def seed():
    return default_generator.seed()


def initial_seed():
    return default_generator.initial_seed()


def get_rng_state():
    return default_generator.get_state()


def set_rng_state(new_state):
    default_generator.set_state(new_state)
