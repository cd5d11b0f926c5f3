"""Location-scale families on the reals (Normal, Laplace, Cauchy): their parameters, the
constraints on them, and the mode at the location."""

from . import constraints

__all__ = ["LocScale"]


class LocScale:
    """A mixin for a Distribution given by ``loc`` and a positive ``scale``."""

    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.real
    has_rsample = True

    def __init__(self, loc, scale, validate_args=None):
        self._init_params(validate_args, loc=loc, scale=scale)

    @property
    def mode(self):
        return self.loc
