"""PyTorch's constants known by their names (``torch.strided``, ``torch.channels_last``):
printed as PyTorch prints them, and pickled by name, so an unpickled one is the same
object (compared with ``is``)."""

__all__ = ["Named"]


class Named:
    """Base of such a constant's type; each subclass keeps its instances by name."""

    __slots__ = ("name",)
    _by_name = {}

    def __init_subclass__(cls):
        cls._by_name = {}

    def __init__(self, name):
        self.name = name
        type(self)._by_name[name] = self

    def __repr__(self):
        return "torch." + self.name

    def __reduce__(self):
        return (_named, (type(self), self.name))


def _named(cls, name):
    return cls._by_name[name]
