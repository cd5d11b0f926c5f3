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

    @property
    def _rng(self):
        """The NumPy generator ops draw from (under vmap, as its ``randomness`` says: see
        :data:`draw_hook`)."""
        hook = draw_hook[0]
        return self._numpy if hook is None else hook(self._numpy)

    @_rng.setter
    def _rng(self, rng):
        self._numpy = rng

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
        """The PCG64 state as a ``uint8`` tensor of ``STATE_SIZE`` bytes (fixed fields, no
        pickle: a state read from someone's checkpoint is only data)."""
        st = self._numpy.bit_generator.state
        fields = (st["state"]["state"].to_bytes(16, "little"),
                  st["state"]["inc"].to_bytes(16, "little"),
                  st["has_uint32"].to_bytes(4, "little"), st["uinteger"].to_bytes(4, "little"))
        return wrap(numpy.frombuffer(b"".join(fields), dtype=numpy.uint8).copy())

    def set_state(self, new_state):
        data = getattr(new_state, "_data", None)
        if data is None or data.dtype != numpy.uint8:
            raise TypeError("RNG state must be a torch.ByteTensor")
        if data.size != STATE_SIZE:
            raise RuntimeError(f"Expected a CPUGeneratorImplState of size {STATE_SIZE} but "
                               f"found the input RNG state size to be {data.size}")
        raw = numpy.ascontiguousarray(data).reshape(-1).tobytes()
        self._numpy.bit_generator.state = {
            "bit_generator": "PCG64",
            "state": {"state": int.from_bytes(raw[:16], "little"),
                      "inc": int.from_bytes(raw[16:32], "little")},
            "has_uint32": int.from_bytes(raw[32:36], "little") & 1,
            "uinteger": int.from_bytes(raw[36:40], "little")}
        return self


# ``hook(rng)``: what ops draw from instead of ``rng`` (set by vmap while it runs).
draw_hook = [None]

STATE_SIZE = 40  # PCG64's 128-bit state and increment, and its buffered 32-bit half

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
