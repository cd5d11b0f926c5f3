"""The unpickler behind ``load(weights_only=True)``: PyTorch's opcode interpreter, in its rules.

Python's own unpickler runs BUILD as ``setattr``/``__setstate__`` on whatever is on the
stack (a global class included), so one allowlist of names is not enough: a file could
set ``Size.__len__`` or a storage class's dtype for the whole process. This interpreter
reads only the protocol-2 opcodes ``torch._weights_only_unpickler`` reads, and applies
its rules:

- GLOBAL: only names in ``allowed`` (``sys``/``os`` modules never, even if allowed);
- REDUCE and NEWOBJ: only on an allowed callable or class;
- BUILD: only on an ``OrderedDict``/``Counter`` (its own ``__dict__``) or an instance of a
  class the user allowed, never on a global itself;
- APPEND(S) only to a list; SETITEM(S) only to a dict, ``OrderedDict`` or ``Counter``;
- BINPERSID only with a ``("storage", ...)`` tuple, handed to ``persistent_load``.

Malformed streams (an unknown opcode, a stack or memo reference to nothing, an operand
cut short) raise ``UnpicklingError`` naming the opcode's offset, where PyTorch's
interpreter lets ``KeyError``/``IndexError`` out; a stream that ends before STOP raises
``EOFError``, as there. REDUCE arguments may not copy more items than the pickle holds,
so a small pickle cannot call ``Size(big_list)`` a million times over. Tuples may nest at
most 1000 deep: hashing a tuple recurses in C without a recursion check, so a 1 MB pickle
using a million-deep tuple as a dict key or set element crashes the interpreter (PyTorch's
unpickler included).
"""

import _compat_pickle
import collections
import pickle
import struct
from pickle import UnpicklingError

_BLOCKED_MODULES = ("sys", "os", "posix", "nt")
_MAX_TUPLE_DEPTH = 1000


def _op(name):
    return getattr(pickle, name)[0]


# opcode -> size of its fixed operand in bytes
_STOP = _op("STOP")
_FIXED = {_op("BININT"): 4, _op("BININT1"): 1, _op("BININT2"): 2, _op("BINFLOAT"): 8,
          _op("BINGET"): 1, _op("LONG_BINGET"): 4, _op("BINPUT"): 1, _op("LONG_BINPUT"): 4,
          _op("PROTO"): 1}


def _sized(obj):
    """How many items (or characters) calling a function on ``obj`` may copy."""
    return len(obj) if isinstance(obj, (str, bytes, bytearray, list, tuple, dict, set)) else 1


class Unpickler:
    """``Unpickler(data, allowed, persistent_load).load()``: the object pickled in ``data``.

    allowed: ``{"module.name": object}``, the globals the file may name;
    user_types: classes the user allowlisted (BUILD may set their instances' state).
    """

    def __init__(self, data, allowed, persistent_load, user_types=(), encoding="utf-8"):
        self.data, self.pos = bytes(data), 0
        self.allowed, self.persistent_load, self.encoding = allowed, persistent_load, encoding
        self.allowed_ids = {id(v) for v in allowed.values()}
        self.user_types = tuple(user_types)
        self.budget = 2 * len(self.data) + 4096  # items REDUCE/NEWOBJ arguments may copy
        self.memo, self.stack, self.metastack = {}, [], []
        self.depths = {}  # id(tuple) -> (nesting depth, the tuple: kept alive, so ids stay)

    # ---- reading the stream ----

    def _read(self, n):
        if self.pos + n > len(self.data):
            raise UnpicklingError(f"pickle data was truncated: {n} bytes wanted at offset "
                                  f"{self.pos}, {len(self.data) - self.pos} left")
        out = self.data[self.pos:self.pos + n]
        self.pos += n
        return out

    def _readline(self):
        end = self.data.find(b"\n", self.pos)
        if end < 0:
            raise UnpicklingError(f"pickle data was truncated: no end of line after offset "
                                  f"{self.pos}")
        line, self.pos = self.data[self.pos:end], end + 1
        return line

    def _pop(self, what):
        if not self.stack:
            raise UnpicklingError(f"{what} at offset {self.at}: the stack is empty")
        return self.stack.pop()

    def _top(self, what):
        if not self.stack:
            raise UnpicklingError(f"{what} at offset {self.at}: the stack is empty")
        return self.stack[-1]

    def _pop_mark(self, what):
        if not self.metastack:
            raise UnpicklingError(f"{what} at offset {self.at}: no MARK before it")
        items, self.stack = self.stack, self.metastack.pop()
        return items

    def _charge(self, args, what):
        """Refuse arguments that copy more than the pickle could hold (see module doc)."""
        cost = sum(_sized(a) for a in args) if isinstance(args, tuple) else _sized(args)
        self.budget -= cost
        if self.budget < 0:
            raise UnpicklingError(f"{what} at offset {self.at}: arguments copy more data "
                                  f"than the pickle holds (a data amplification)")

    def _tuple_depth(self, t):
        """How deep tuple ``t`` nests (iteratively, each tuple measured once); refused
        past ``_MAX_TUPLE_DEPTH`` (see module doc)."""
        known, todo = self.depths, [t]
        while todo:
            top = todo[-1]
            if id(top) in known:
                todo.pop()
                continue
            pending = [c for c in top if isinstance(c, tuple) and id(c) not in known]
            if pending:
                todo.extend(pending)
                continue
            depth = 1 + max((known[id(c)][0] for c in top if isinstance(c, tuple)), default=0)
            if depth > _MAX_TUPLE_DEPTH:
                raise UnpicklingError(f"tuples nested more than {_MAX_TUPLE_DEPTH} deep "
                                      f"(offset {self.at}): hashing them would overflow the "
                                      f"C stack")
            known[id(top)] = (depth, top)
            todo.pop()
        return known[id(t)][0]

    def _push(self, obj):
        """Push a built object; a tuple's depth is measured first."""
        if isinstance(obj, tuple):
            if any(isinstance(c, tuple) for c in obj):
                self._tuple_depth(obj)
            else:  # the common flat tuple (sizes, strides, arguments)
                self.depths[id(obj)] = (1, obj)
        self.stack.append(obj)

    def _call(self, func, *args):
        """``func(*args)``; a lookup or arithmetic error (``bytearray("x", "no-such-codec")``,
        ``complex(10**400)``) becomes an ``UnpicklingError``, so a bad file raises only the
        types ``load`` documents."""
        try:
            return func(*args)
        except (LookupError, ArithmeticError) as e:
            raise UnpicklingError(f"calling {_name(func)} at offset {self.at} raised "
                                  f"{type(e).__name__}: {e}") from None

    def _is_allowed(self, obj):
        return id(obj) in self.allowed_ids

    # ---- the interpreter ----

    def load(self):
        data, dispatch, end = self.data, self._dispatch, len(self.data)
        while True:
            at = self.at = self.pos
            if at >= end:
                raise EOFError("Ran out of input: the pickle ends before its STOP opcode")
            key = data[at]
            self.pos = at + 1
            if key == _STOP:
                return self._pop("STOP")
            handler = dispatch.get(key)
            if handler is None:
                raise UnpicklingError(f"Unsupported operand {key} at offset {at}")
            n = _FIXED.get(key)
            handler(self, self._read(n) if n else None)

    def _global(self, _):
        module = self._readline().decode("utf-8", "replace")
        name = self._readline().decode("utf-8", "replace")
        # protocol 2 spells Python 3 names the Python 2 way (__builtin__.print)
        if (module, name) in _compat_pickle.NAME_MAPPING:
            module, name = _compat_pickle.NAME_MAPPING[(module, name)]
        elif module in _compat_pickle.IMPORT_MAPPING:
            module = _compat_pickle.IMPORT_MAPPING[module]
        full = f"{module}.{name}"
        if module in _BLOCKED_MODULES:
            raise UnpicklingError(f"Trying to load unsupported GLOBAL {full} whose module "
                                  f"{module} is blocked.")
        if full not in self.allowed:
            raise UnpicklingError(_unsupported_global(full))
        self.stack.append(self.allowed[full])

    def _newobj(self, _):
        args, cls = self._pop("NEWOBJ"), self._pop("NEWOBJ")
        if not (isinstance(cls, type) and self._is_allowed(cls)) or type(args) is not tuple:
            raise UnpicklingError(f"Can only create new object for classes allowlisted via "
                                  f"`add_safe_globals` but got {_name(cls)}")
        self._charge(args, "NEWOBJ")
        self._push(self._call(cls.__new__, cls, *args))

    def _reduce(self, _):
        args, func = self._pop("REDUCE"), self._top("REDUCE")
        if not self._is_allowed(func):
            raise UnpicklingError(f"Trying to call reduce for unrecognized function "
                                  f"{_name(func)}")
        if type(args) is not tuple:
            raise UnpicklingError(f"REDUCE at offset {self.at}: arguments must be a tuple, "
                                  f"got {type(args).__name__}")
        self._charge(args, "REDUCE")
        self.stack.pop()
        self._push(self._call(func, *args))

    def _build(self, _):
        state, inst = self._pop("BUILD"), self._top("BUILD")
        if type(inst) in (collections.OrderedDict, collections.Counter):
            if not isinstance(state, dict):
                raise UnpicklingError(f"BUILD at offset {self.at}: the state of an "
                                      f"{type(inst).__name__} must be a dict")
            inst.__dict__.update(state)
        elif type(inst) in self.user_types:
            _set_state(inst, state)
        else:
            raise UnpicklingError(f"Can only build Tensor, Parameter, OrderedDict or types "
                                  f"allowlisted via `add_safe_globals`, but got {_name(inst)}")

    def _append(self, _):
        item, target = self._pop("APPEND"), self._top("APPEND")
        if type(target) is not list:
            raise UnpicklingError(f"Can only append to lists, but got {_name(target)}")
        target.append(item)

    def _appends(self, _):
        items, target = self._pop_mark("APPENDS"), self._top("APPENDS")
        if type(target) is not list:
            raise UnpicklingError(f"Can only extend lists, but got {_name(target)}")
        target.extend(items)

    def _set_target(self, opcode):
        target = self._top(opcode)
        if type(target) not in (dict, collections.OrderedDict, collections.Counter):
            raise UnpicklingError(f"Can only {opcode} for dict, collections.OrderedDict, "
                                  f"collections.Counter, but got {_name(target)}")
        return target

    def _setitem(self, _):
        value, key = self._pop("SETITEM"), self._pop("SETITEM")
        self._set_target("SETITEM")[key] = value

    def _setitems(self, _):
        items = self._pop_mark("SETITEMS")
        target = self._set_target("SETITEMS")
        if len(items) % 2:
            raise UnpicklingError(f"SETITEMS at offset {self.at}: a key without a value")
        for i in range(0, len(items), 2):
            target[items[i]] = items[i + 1]

    def _mark(self, _):
        self.metastack.append(self.stack)
        self.stack = []

    def _tuple(self, _):
        self._push(tuple(self._pop_mark("TUPLE")))

    def _tuple_n(self, n):
        if len(self.stack) < n:
            raise UnpicklingError(f"TUPLE{n} at offset {self.at}: the stack holds fewer than "
                                  f"{n} items")
        items = tuple(self.stack[-n:])
        del self.stack[-n:]
        self._push(items)

    def _binunicode(self, _):
        n = struct.unpack("<I", self._read(4))[0]
        try:
            self.stack.append(str(self._read(n), "utf-8", "surrogatepass"))
        except UnicodeDecodeError as e:
            raise UnpicklingError(f"BINUNICODE at offset {self.at}: {e}") from None

    def _short_binstring(self, _):
        data = self._read(self._read(1)[0])
        if self.encoding != "bytes":
            try:
                data = data.decode(self.encoding, "strict")
            except UnicodeDecodeError as e:
                raise UnpicklingError(f"SHORT_BINSTRING at offset {self.at}: {e}") from None
        self.stack.append(data)

    def _binpersid(self, _):
        pid = self._pop("BINPERSID")
        if type(pid) is not tuple or not pid or pid[0] != "storage":
            raise UnpicklingError(f"Only persistent_load of storage is allowed, but got "
                                  f"{_name(pid)}")
        self.stack.append(self.persistent_load(pid))

    def _get(self, operand):
        idx = operand[0] if len(operand) == 1 else struct.unpack("<I", operand)[0]
        if idx not in self.memo:
            raise UnpicklingError(f"Memo value not found at index {idx} (offset {self.at})")
        self.stack.append(self.memo[idx])

    def _put(self, operand):
        idx = operand[0] if len(operand) == 1 else struct.unpack("<I", operand)[0]
        self.memo[idx] = self._top("PUT")

    def _long1(self, _):
        self.stack.append(pickle.decode_long(self._read(self._read(1)[0])))

    _dispatch = {
        _op("GLOBAL"): _global, _op("NEWOBJ"): _newobj, _op("REDUCE"): _reduce,
        _op("BUILD"): _build, _op("APPEND"): _append, _op("APPENDS"): _appends,
        _op("SETITEM"): _setitem, _op("SETITEMS"): _setitems, _op("MARK"): _mark,
        _op("TUPLE"): _tuple,
        _op("TUPLE1"): lambda self, _: self._tuple_n(1),
        _op("TUPLE2"): lambda self, _: self._tuple_n(2),
        _op("TUPLE3"): lambda self, _: self._tuple_n(3),
        _op("NONE"): lambda self, _: self.stack.append(None),
        _op("NEWFALSE"): lambda self, _: self.stack.append(False),
        _op("NEWTRUE"): lambda self, _: self.stack.append(True),
        _op("EMPTY_TUPLE"): lambda self, _: self.stack.append(()),
        _op("EMPTY_LIST"): lambda self, _: self.stack.append([]),
        _op("EMPTY_DICT"): lambda self, _: self.stack.append({}),
        _op("EMPTY_SET"): lambda self, _: self.stack.append(set()),
        _op("BININT"): lambda self, b: self.stack.append(struct.unpack("<i", b)[0]),
        _op("BININT1"): lambda self, b: self.stack.append(b[0]),
        _op("BININT2"): lambda self, b: self.stack.append(struct.unpack("<H", b)[0]),
        _op("BINFLOAT"): lambda self, b: self.stack.append(struct.unpack(">d", b)[0]),
        _op("BINUNICODE"): _binunicode, _op("SHORT_BINSTRING"): _short_binstring,
        _op("BINPERSID"): _binpersid, _op("BINGET"): _get, _op("LONG_BINGET"): _get,
        _op("BINPUT"): _put, _op("LONG_BINPUT"): _put, _op("LONG1"): _long1,
        _op("PROTO"): lambda self, _: None,  # any number, as PyTorch: the opcodes decide
    }


def _set_state(inst, state):
    """BUILD on an instance of a user-allowed class, as ``pickle`` does it."""
    if hasattr(inst, "__setstate__"):
        inst.__setstate__(state)
        return
    slotstate = None
    if isinstance(state, tuple) and len(state) == 2:
        state, slotstate = state
    if state:
        inst.__dict__.update(state)
    if slotstate:
        for k, v in slotstate.items():
            setattr(inst, k, v)


def _name(obj):
    """``obj`` for a message: a class or function by its name, anything else by its type
    (never a repr, which a crafted object could make huge)."""
    named = obj if isinstance(obj, type) or callable(obj) and hasattr(obj, "__qualname__") \
        else type(obj)
    return f"<{'class' if isinstance(named, type) else 'function'} " \
           f"'{getattr(named, '__module__', '?')}.{getattr(named, '__qualname__', '?')}'>"


def _unsupported_global(full):
    """The error for a global outside the allowlist (PyTorch's wording, retrograd's names)."""
    if full.startswith("builtins."):
        full = full[len("builtins."):]  # as PyTorch spells it
    return (f"Weights only load failed. Unsupported global: GLOBAL {full} was not an allowed "
            f"global by default. Re-running `load` with `weights_only=False` will likely "
            f"succeed, but it can result in arbitrary code execution: do it only if you got "
            f"the file from a trusted source. Alternatively allow this global with "
            f"`retrograd.serialization.add_safe_globals([{full}])`.")
