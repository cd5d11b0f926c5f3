"""``torch._dynamo``'s names that user code reaches for, from :mod:`retrograd.compiler`
(there is no tracer: everything runs eagerly)."""

from .compiler import (allow_in_graph, disable, is_compiling, list_backends,  # noqa: F401
                       reset)
