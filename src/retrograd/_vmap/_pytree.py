"""The pytrees vmap maps over: tuples, lists, dicts, namedtuples and None (a node with no
leaves), as ``torch.utils._pytree``; a spec prints as PyTorch's ``TreeSpec`` does, since
vmap's error messages show it."""

__all__ = ["TreeSpec", "LEAF", "tree_flatten", "tree_unflatten", "broadcast_prefix"]


class TreeSpec:
    """A container type, its context (dict keys, a namedtuple's class) and its children."""

    __slots__ = ("type", "context", "children", "num_leaves")

    def __init__(self, type_, context, children):
        self.type, self.context, self.children = type_, context, children
        self.num_leaves = sum(c.num_leaves for c in children)

    def __repr__(self, indent=0):
        out = f"TreeSpec({self.type.__name__}, {self.context}, ["
        if self.children:
            indent += 2
            out += self.children[0].__repr__(indent)
            out += "," if len(self.children) > 1 else ""
            out += ",".join("\n" + " " * indent + c.__repr__(indent) for c in self.children[1:])
        return out + "])"

    def __eq__(self, other):
        return (isinstance(other, TreeSpec) and self.type is other.type
                and self.context == other.context and self.children == other.children)


class _Leaf(TreeSpec):
    def __init__(self):
        super().__init__(object, None, [])
        self.num_leaves = 1

    def __repr__(self, indent=0):
        return "*"

    def __eq__(self, other):
        return other is self


LEAF = _Leaf()


def _node(tree):
    """``(type, context, children)`` of a container, or None for a leaf."""
    t = type(tree)
    if t is tuple or t is list:
        return t, None, list(tree)
    if t is dict:
        return t, list(tree), list(tree.values())
    if tree is None:
        return type(None), None, []
    if isinstance(tree, tuple) and (hasattr(t, "_fields") or hasattr(t, "n_fields")):
        return t, t, list(tree)
    return None


def tree_flatten(tree):
    """The leaves of ``tree`` in order, and its spec."""
    leaves = []
    return leaves, _flatten(tree, leaves)


def _flatten(tree, leaves):
    node = _node(tree)
    if node is None:
        leaves.append(tree)
        return LEAF
    t, ctx, children = node
    return TreeSpec(t, ctx, [_flatten(c, leaves) for c in children])


def tree_unflatten(leaves, spec):
    """The tree of ``spec`` holding ``leaves``."""
    it = iter(leaves)
    return _build(spec, it)


def _build(spec, it):
    if spec is LEAF:
        return next(it)
    children = [_build(c, it) for c in spec.children]
    t = spec.type
    if t is dict:
        return dict(zip(spec.context, children, strict=True))
    if t is type(None):
        return None
    if t is tuple or t is list:
        return t(children)
    return t._make(children) if hasattr(t, "_make") else t(children)  # a named tuple


def broadcast_prefix(prefix, spec):
    """``prefix`` (a tree whose leaves stand for whole subtrees of ``spec``'s tree) as one
    value per leaf of ``spec``; None when it is not a prefix of it."""
    out = []
    return out if _match(prefix, spec, out) else None


def _match(prefix, spec, out):
    node = _node(prefix)
    if node is None or node[0] is type(None) and spec.type is not type(None):
        out.extend([prefix] * spec.num_leaves)
        return True
    t, ctx, children = node
    if spec is LEAF or t is not spec.type or len(children) != len(spec.children):
        return False
    if t is dict:
        if set(ctx) != set(spec.context):
            return False
        children = [prefix[k] for k in spec.context]
    return all(_match(c, s, out) for c, s in zip(children, spec.children, strict=True))
