"""``nn.Module``: parameters, buffers and submodules registered by assignment, with
PyTorch's traversal order, state_dict key names, hooks and repr."""

from collections import OrderedDict, namedtuple

import warnings

import numpy

from ... import _observe
from ..._memory_format import check_memory_format
from ..._dtype import bfloat16, dtype as _dtype_cls, float16, float32, float64
from ..._creation import empty_like
from ..._tensor import Tensor, wrap
from ...backend import Device, device_of, to_device
from ...compiler import compile
from ..._hooks import RemovableHandle
from ...autograd import grad_mode
from ..parameter import Buffer, Parameter, is_lazy
from ._backward_hooks import BackwardHookState, register_non_full_hooks

__all__ = ["Module", "RemovableHandle", "register_module_forward_hook",
           "register_module_forward_pre_hook", "register_module_full_backward_hook",
           "register_module_full_backward_pre_hook", "register_module_backward_hook",
           "register_module_buffer_registration_hook",
           "register_module_module_registration_hook",
           "register_module_parameter_registration_hook"]

# Hooks of every module's call, run before each module's own (PyTorch's globals).
_global_forward_pre_hooks = OrderedDict()
_global_forward_hooks = OrderedDict()
_global_forward_hooks_with_kwargs = OrderedDict()
_global_forward_hooks_always_called = OrderedDict()
_global_backward_pre_hooks = OrderedDict()
_global_backward_hooks = OrderedDict()
# Whether the global backward hooks are full ones (None: none registered yet); the
# registration hooks, called as parameters, buffers and submodules are registered.
_global_is_full = [None]
_global_buffer_registration_hooks = OrderedDict()
_global_module_registration_hooks = OrderedDict()
_global_parameter_registration_hooks = OrderedDict()

_BOTH_KINDS = "Cannot use both regular backward hooks and full backward hooks {}. Please use " \
              "only one of them."


def register_module_forward_pre_hook(hook):
    """``hook(module, args)`` before every module's forward, before its own pre-hooks; a
    returned value replaces ``args``.

    >>> h = register_module_forward_pre_hook(lambda m, args: print(type(m).__name__))
    """
    h = RemovableHandle(_global_forward_pre_hooks)
    _global_forward_pre_hooks[h.id] = hook
    return h


def register_module_forward_hook(hook, *, with_kwargs=False, always_call=False):
    """``hook(module, args, output)`` (``hook(module, args, kwargs, output)`` with
    ``with_kwargs``) after every module's forward, before its own forward hooks; a returned
    value replaces the output. With ``always_call`` it also runs when the call raises.

    >>> h = register_module_forward_hook(lambda m, args, out: print(out.shape))
    """
    h = RemovableHandle(_global_forward_hooks, extra_dict=_global_forward_hooks_always_called)
    _global_forward_hooks[h.id] = hook
    if with_kwargs:
        _global_forward_hooks_with_kwargs[h.id] = True
    if always_call:
        _global_forward_hooks_always_called[h.id] = True
    return h


def register_module_full_backward_pre_hook(hook):
    """``hook(module, grad_output)`` for every module, before its own backward pre-hooks;
    a returned tuple replaces ``grad_output``."""
    h = RemovableHandle(_global_backward_pre_hooks)
    _global_backward_pre_hooks[h.id] = hook
    return h


def register_module_full_backward_hook(hook):
    """``hook(module, grad_input, grad_output)`` for every module, before its own full
    backward hooks; a returned tuple replaces ``grad_input``."""
    return _register_global_backward_hook(hook, full=True)


def register_module_backward_hook(hook):
    """The deprecated form of :func:`register_module_full_backward_hook`: ``hook(module,
    grad_input, grad_output)`` with the gradients of the node that made each module's
    output (see :meth:`Module.register_backward_hook`)."""
    return _register_global_backward_hook(hook, full=False)


def _register_global_backward_hook(hook, full):
    if _global_is_full[0] is (not full):
        raise RuntimeError(_BOTH_KINDS.format("as a global Module hook"))
    _global_is_full[0] = full
    h = RemovableHandle(_global_backward_hooks)
    _global_backward_hooks[h.id] = hook
    return h


def _registration_hook(hooks, hook):
    h = RemovableHandle(hooks)
    hooks[h.id] = hook
    return h


def register_module_buffer_registration_hook(hook):
    """``hook(module, name, buffer)`` each time a module registers a buffer (by
    ``register_buffer`` or assignment); a returned value is registered instead.

    >>> h = register_module_buffer_registration_hook(lambda m, name, b: print(name))
    """
    return _registration_hook(_global_buffer_registration_hooks, hook)


def register_module_module_registration_hook(hook):
    """``hook(module, name, submodule)`` each time a module registers a submodule (by
    ``add_module`` or assignment, None included); a returned value is registered
    instead."""
    return _registration_hook(_global_module_registration_hooks, hook)


def register_module_parameter_registration_hook(hook):
    """``hook(module, name, param)`` each time a module registers a Parameter (not None);
    a returned value is registered instead."""
    return _registration_hook(_global_parameter_registration_hooks, hook)


def _registered(hooks, module, name, value):
    """``value`` after the global registration ``hooks``."""
    for hook in hooks.values():
        out = hook(module, name, value)
        if out is not None:
            value = out
    return value


class _IncompatibleKeys(namedtuple("IncompatibleKeys", ["missing_keys", "unexpected_keys"])):
    __slots__ = ()

    def __repr__(self):
        if not self.missing_keys and not self.unexpected_keys:
            return "<All keys matched successfully>"
        return super().__repr__()

    __str__ = __repr__


_HOOK_DICTS = ("_forward_hooks", "_forward_hooks_with_kwargs", "_forward_hooks_always_called",
               "_forward_pre_hooks", "_forward_pre_hooks_with_kwargs", "_backward_hooks",
               "_backward_pre_hooks")


def _addindent(s, n):
    lines = s.split("\n")
    if len(lines) == 1:
        return s
    return lines[0] + "\n" + "\n".join(" " * n + line for line in lines[1:])


class Module:
    """Base class of all layers; assign Parameters, Modules and buffers as attributes.

    >>> class Net(Module):
    ...     def __init__(self):
    ...         super().__init__()
    ...         self.fc = retrograd.nn.Linear(2, 1)
    ...     def forward(self, x):
    ...         return self.fc(x)
    """

    training = True
    _version = 1

    def __init__(self, *args, **kwargs):
        if args or kwargs:
            raise TypeError(f"{type(self).__name__}.__init__() got an unexpected argument")
        d = self.__dict__
        d["training"] = True
        d["_parameters"] = {}
        d["_buffers"] = {}
        d["_non_persistent_buffers_set"] = set()
        d["_modules"] = {}
        for name in _HOOK_DICTS:
            d[name] = OrderedDict()
        d["_is_full_backward_hook"] = None

    def __setstate__(self, state):
        """A module pickled before a hook dict existed gets it empty, as PyTorch's."""
        self.__dict__.update(state)
        for name in _HOOK_DICTS:
            self.__dict__.setdefault(name, OrderedDict())
        self.__dict__.setdefault("_is_full_backward_hook", None)

    def forward(self, *input):
        raise NotImplementedError(f'Module [{type(self).__name__}] is missing the required '
                                  f'"forward" function')

    # ---- registration -----------------------------------------------------------------
    def register_parameter(self, name, param):
        if "_parameters" not in self.__dict__:
            raise AttributeError("cannot assign parameter before Module.__init__() call")
        self._check_name(name, "parameter")
        if hasattr(self, name) and name not in self._parameters:
            raise KeyError(f"attribute '{name}' already exists")
        if param is not None and not isinstance(param, Parameter):
            raise TypeError(f"cannot assign '{type(param).__module__}.{type(param).__name__}' "
                            f"object to parameter '{name}' (torch.nn.Parameter or None "
                            f"required)")
        if param is not None:
            param = _registered(_global_parameter_registration_hooks, self, name, param)
        self._parameters[name] = param

    def register_buffer(self, name, tensor, persistent=True):
        if "_buffers" not in self.__dict__:
            raise AttributeError("cannot assign buffer before Module.__init__() call")
        self._check_name(name, "buffer")
        if hasattr(self, name) and name not in self._buffers:
            raise KeyError(f"attribute '{name}' already exists")
        if tensor is not None and not isinstance(tensor, Tensor):
            raise TypeError(f"cannot assign '{type(tensor).__name__}' object to buffer "
                            f"'{name}' (torch Tensor or None required)")
        self._buffers[name] = _registered(_global_buffer_registration_hooks, self, name, tensor)
        if persistent:
            self._non_persistent_buffers_set.discard(name)
        else:
            self._non_persistent_buffers_set.add(name)

    def add_module(self, name, module):
        if module is not None and not isinstance(module, Module):
            raise TypeError(f"{type(module).__name__} is not a Module subclass")
        self._check_name(name, "module")
        if hasattr(self, name) and name not in self._modules:
            raise KeyError(f"attribute '{name}' already exists")
        self._modules[name] = _registered(_global_module_registration_hooks, self, name, module)

    register_module = add_module

    @staticmethod
    def _check_name(name, kind):
        if not isinstance(name, str):
            raise TypeError(f"{kind} name should be a string. Got {type(name).__name__}")
        if "." in name:
            raise KeyError(f'{kind} name can\'t contain "."')
        if name == "":
            raise KeyError(f'{kind} name can\'t be empty string ""')

    def __setattr__(self, name, value):
        d = self.__dict__
        params = d.get("_parameters")
        if isinstance(value, Parameter):
            if params is None:
                raise AttributeError("cannot assign parameters before Module.__init__() call")
            self._discard(name)
            self.register_parameter(name, value)
        elif params is not None and name in params:
            if value is not None:
                raise TypeError(f"cannot assign '{type(value).__name__}' as parameter "
                                f"'{name}' (torch.nn.Parameter or None expected)")
            params[name] = None
        elif isinstance(value, Module):
            if params is None:
                raise AttributeError("cannot assign module before Module.__init__() call")
            self._discard(name)
            d["_modules"][name] = _registered(_global_module_registration_hooks, self, name,
                                              value)
        elif d.get("_modules") is not None and name in d["_modules"]:
            if value is not None:
                raise TypeError(f"cannot assign '{type(value).__name__}' as child module "
                                f"'{name}' (torch.nn.Module or None expected)")
            d["_modules"][name] = _registered(_global_module_registration_hooks, self, name,
                                              None)
        elif isinstance(value, Buffer) or (d.get("_buffers") is not None
                                           and name in d["_buffers"]):
            if value is not None and not isinstance(value, Tensor):
                raise TypeError(f"cannot assign '{type(value).__name__}' as buffer '{name}' "
                                f"(torch.nn.Buffer, torch.Tensor or None expected)")
            if isinstance(value, Buffer):  # nn.Buffer registers itself, as a Parameter does
                self.register_buffer(name, value, value.persistent)
            else:
                d["_buffers"][name] = _registered(_global_buffer_registration_hooks, self,
                                                  name, value)
        else:
            object.__setattr__(self, name, value)

    def _discard(self, name):
        d = self.__dict__
        d.pop(name, None)
        for k in ("_parameters", "_buffers", "_modules"):
            d[k].pop(name, None)
        d["_non_persistent_buffers_set"].discard(name)

    def __getattr__(self, name):
        d = self.__dict__
        for k in ("_parameters", "_buffers", "_modules"):
            store = d.get(k)
            if store is not None and name in store:
                return store[name]
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    def __delattr__(self, name):
        d = self.__dict__
        for k in ("_parameters", "_buffers", "_modules"):
            if name in d[k]:
                del d[k][name]
                d["_non_persistent_buffers_set"].discard(name)
                return
        object.__delattr__(self, name)

    def __dir__(self):
        return sorted(set(super().__dir__()) | set(self._parameters) | set(self._buffers)
                      | set(self._modules))

    # ---- traversal ----------------------------------------------------------------------
    def named_modules(self, memo=None, prefix="", remove_duplicate=True):
        if memo is None:
            memo = set()
        if remove_duplicate:
            if self in memo:
                return
            memo.add(self)
        yield prefix, self
        for name, m in self._modules.items():
            if m is None:
                continue
            yield from m.named_modules(memo, prefix + ("." if prefix else "") + name,
                                       remove_duplicate)

    def modules(self):
        for _, m in self.named_modules():
            yield m

    def named_children(self):
        seen = set()
        for name, m in self._modules.items():
            if m is not None and m not in seen:
                seen.add(m)
                yield name, m

    def children(self):
        for _, m in self.named_children():
            yield m

    def _named_members(self, store, prefix, recurse, remove_duplicate):
        mods = self.named_modules(prefix=prefix, remove_duplicate=remove_duplicate) \
            if recurse else [(prefix, self)]
        seen = set()
        for mp, m in mods:
            for k, v in getattr(m, store).items():
                if v is None or (remove_duplicate and id(v) in seen):
                    continue
                seen.add(id(v))
                yield mp + ("." if mp else "") + k, v

    def named_parameters(self, prefix="", recurse=True, remove_duplicate=True):
        yield from self._named_members("_parameters", prefix, recurse, remove_duplicate)

    def parameters(self, recurse=True):
        for _, p in self.named_parameters(recurse=recurse):
            yield p

    def named_buffers(self, prefix="", recurse=True, remove_duplicate=True):
        yield from self._named_members("_buffers", prefix, recurse, remove_duplicate)

    def buffers(self, recurse=True):
        for _, b in self.named_buffers(recurse=recurse):
            yield b

    def get_submodule(self, target):
        mod = self
        for item in target.split(".") if target else ():
            if item not in mod._modules:
                raise AttributeError(f"{type(mod).__name__} has no attribute `{item}`")
            mod = mod._modules[item]
        return mod

    def get_parameter(self, target):
        mod_path, _, name = target.rpartition(".")
        mod = self.get_submodule(mod_path)
        if name not in mod._parameters:
            raise AttributeError(f"`{name}` is not an nn.Parameter")
        return mod._parameters[name]

    # ---- state dict ---------------------------------------------------------------------
    def state_dict(self, *args, destination=None, prefix="", keep_vars=False):
        if args:  # PyTorch's deprecated positional form (destination, prefix, keep_vars)
            destination, prefix, keep_vars = (list(args) + [destination, prefix,
                                                             keep_vars][len(args):])[:3]
        if destination is None:
            destination = OrderedDict()
            destination._metadata = OrderedDict()
        meta = getattr(destination, "_metadata", None)
        if meta is not None:
            meta[prefix[:-1]] = {"version": self._version}
        for name, p in self._parameters.items():
            if p is not None:
                destination[prefix + name] = p if keep_vars or is_lazy(p) else p.detach()
        for name, b in self._buffers.items():
            if b is not None and name not in self._non_persistent_buffers_set:
                destination[prefix + name] = b if keep_vars or is_lazy(b) else b.detach()
        for name, m in self._modules.items():
            if m is not None:
                m.state_dict(destination=destination, prefix=prefix + name + ".",
                             keep_vars=keep_vars)
        return destination

    def load_state_dict(self, state_dict, strict=True, assign=False):
        """Copy ``state_dict`` (Tensors or array-likes, e.g. a torch state_dict turned
        into NumPy arrays) into this module's parameters and buffers, in place."""
        own = {}
        for mp, m in self.named_modules(remove_duplicate=False):
            pre = mp + "." if mp else ""
            for k, v in m._parameters.items():
                if v is not None:
                    own[pre + k] = (m, k, "_parameters")
            for k, v in m._buffers.items():
                if v is not None and k not in m._non_persistent_buffers_set:
                    own[pre + k] = (m, k, "_buffers")
        missing = [k for k in own if k not in state_dict]
        unexpected = [k for k in state_dict if k not in own]
        errors = []
        for key, (m, k, store) in own.items():
            if key not in state_dict:
                continue
            cur = getattr(m, store)[k]
            src = state_dict[key]
            data = src._data if isinstance(src, Tensor) else numpy.asarray(src)  # (interop)
            if is_lazy(cur):  # a lazy module takes its shapes from the state it loads
                if is_lazy(src):
                    continue
                cur.materialize(data.shape)
            if tuple(src.shape if isinstance(src, Tensor) else data.shape) != tuple(cur.shape):
                errors.append(f"size mismatch for {key}: copying a param with shape "
                              f"torch.Size({list(data.shape)}) from checkpoint, the shape in "
                              f"current model is torch.Size({list(cur.shape)}).")
                continue
            if assign:
                t = wrap(data.copy(order="K"))
                getattr(m, store)[k] = Parameter(t, cur.requires_grad) \
                    if store == "_parameters" else t
            else:
                cur._data[...] = to_device(data, device_of(cur._data))  # (copy_ moves it)
                cur._vc[0] += 1
        if strict:
            if unexpected:
                errors.insert(0, "Unexpected key(s) in state_dict: " +
                              ", ".join(f'"{k}"' for k in unexpected) + ". ")
            if missing:
                errors.insert(0, "Missing key(s) in state_dict: " +
                              ", ".join(f'"{k}"' for k in missing) + ". ")
        if errors:
            raise RuntimeError(f"Error(s) in loading state_dict for {type(self).__name__}:\n\t"
                               + "\n\t".join(errors))
        return _IncompatibleKeys(missing, unexpected)

    # ---- modes, grads, conversion ---------------------------------------------------------
    def train(self, mode=True):
        if not isinstance(mode, bool):
            raise ValueError("training mode is expected to be boolean")
        for m in self.modules():
            m.__dict__["training"] = mode
        return self

    def eval(self):
        return self.train(False)

    def requires_grad_(self, requires_grad=True):
        for p in self.parameters():
            p.requires_grad_(requires_grad)
        return self

    def zero_grad(self, set_to_none=True):
        for p in self.parameters():
            if p.grad is None:
                continue
            if set_to_none:
                p.grad = None
            else:
                g = p.grad
                g._data[...] = 0
                g._vc[0] += 1

    def apply(self, fn):
        for m in self.children():
            m.apply(fn)
        fn(self)
        return self

    def _apply(self, fn, recurse=True):
        """Replace each parameter's and buffer's data by ``fn(tensor)`` (same objects)."""
        for m in self.modules() if recurse else (self,):
            for store in (m._parameters, m._buffers):
                for t in store.values():
                    if t is None:
                        continue
                    new = fn(t)
                    if new._data is not t._data:
                        t._data = new._data
                        t._vc[0] += 1
                    if t._grad is not None:
                        g = fn(t._grad)
                        t._grad._data = g._data
                    if _observe.alloc is not None:
                        _observe.alloc.retensored(t)
        return self

    def to(self, *args, **kwargs):
        dtype = kwargs.get("dtype")
        for a in args:
            if isinstance(a, _dtype_cls):
                dtype = a
            elif isinstance(a, Tensor):
                dtype = a.dtype
        if dtype is not None and not (dtype.is_floating_point or dtype.is_complex):
            raise TypeError(f"nn.Module.to only accepts floating point or complex dtypes, but "
                            f"got desired dtype={dtype}")
        device = kwargs.get("device", next((a for a in args if isinstance(a, (str, Device))),
                                           None))
        fmt = check_memory_format(kwargs.get("memory_format"), "to")
        rank = {"channels_last": 4, "channels_last_3d": 5}.get(getattr(fmt, "name", None))

        def convert(t):
            if dtype is not None and t.is_floating_point():
                t = t.to(dtype)
            if rank is not None and t.dim() == rank:  # (4-D ones for channels_last, as PyTorch)
                t = t.contiguous(memory_format=fmt)
            return t.to(device) if device is not None else t
        return self._apply(convert)

    def float(self):
        return self.to(float32)

    def double(self):
        return self.to(float64)

    def half(self):
        return self.to(float16)

    def bfloat16(self):
        return self.to(bfloat16)

    def cpu(self):
        return self._apply(lambda t: t.cpu())

    def cuda(self, device=None):
        """Move to the GPU: fails, as on PyTorch's CPU-only build, unless there is nothing
        to move."""
        return self._apply(lambda t: t.cuda(device))

    def type(self, dst_type):
        """Cast every parameter and buffer (integer ones too) to ``dst_type``."""
        return self._apply(lambda t: t.type(dst_type))

    def to_empty(self, *, device, recurse=True):
        """Give every parameter and buffer new uninitialized memory on ``device`` (the way
        out of a model built on the meta device, whose values are then set)."""
        return self._apply(lambda t: empty_like(t, device=device), recurse=recurse)

    def compile(self, *args, **kwargs):
        """``torch.compile`` this module's calls: they run eagerly, as with
        :func:`retrograd.compile`, which checks the arguments."""
        compile(self, *args, **kwargs)

    # ---- hooks and call -----------------------------------------------------------------
    def register_forward_pre_hook(self, hook, *, prepend=False, with_kwargs=False):
        h = RemovableHandle(self._forward_pre_hooks,
                            extra_dict=self._forward_pre_hooks_with_kwargs)
        self._forward_pre_hooks[h.id] = hook
        if with_kwargs:
            self._forward_pre_hooks_with_kwargs[h.id] = True
        if prepend:
            self._forward_pre_hooks.move_to_end(h.id, last=False)
        return h

    def register_forward_hook(self, hook, *, prepend=False, with_kwargs=False,
                              always_call=False):
        """``hook(module, args, output)`` (``hook(module, args, kwargs, output)`` with
        ``with_kwargs``) after forward; a returned value replaces the output. With
        ``always_call`` it also runs when the call raises (a pre-hook, forward or an
        earlier hook)."""
        h = RemovableHandle(self._forward_hooks, extra_dict=[
            self._forward_hooks_with_kwargs, self._forward_hooks_always_called])
        self._forward_hooks[h.id] = hook
        if with_kwargs:
            self._forward_hooks_with_kwargs[h.id] = True
        if always_call:
            self._forward_hooks_always_called[h.id] = True
        if prepend:
            self._forward_hooks.move_to_end(h.id, last=False)
        return h

    def register_backward_hook(self, hook):
        """Deprecated for :meth:`register_full_backward_hook`: ``hook(module, grad_input,
        grad_output)`` with the gradients of the node that made the module's (first)
        output, which are the module's own only when that node is its one op (a
        FutureWarning at the call says what it misses otherwise)."""
        if self._is_full_backward_hook is True:
            raise RuntimeError(_BOTH_KINDS.format("on a single Module"))
        self.__dict__["_is_full_backward_hook"] = False
        h = RemovableHandle(self._backward_hooks)
        self._backward_hooks[h.id] = hook
        return h

    def register_full_backward_hook(self, hook, prepend=False):
        """``hook(module, grad_input, grad_output)`` once the gradients of the module's
        tensor inputs are computed; it may return a replacement grad_input."""
        if self._is_full_backward_hook is False:
            raise RuntimeError(_BOTH_KINDS.format("on a single Module"))
        self.__dict__["_is_full_backward_hook"] = True
        h = RemovableHandle(self._backward_hooks)
        self._backward_hooks[h.id] = hook
        if prepend:
            self._backward_hooks.move_to_end(h.id, last=False)
        return h

    def register_full_backward_pre_hook(self, hook, prepend=False):
        """``hook(module, grad_output)`` once the gradients of the module's outputs are
        in, before its full backward hooks; a returned tuple replaces grad_output."""
        h = RemovableHandle(self._backward_pre_hooks)
        self._backward_pre_hooks[h.id] = hook
        if prepend:
            self._backward_pre_hooks.move_to_end(h.id, last=False)
        return h

    def __call__(self, *args, **kwargs):
        obs = _observe.engine
        if obs is not None and obs.modules:  # memory accounting: which module runs
            return obs.run_module(_call_module, self, args, kwargs)
        if not _has_hooks(self):
            return self.forward(*args, **kwargs)
        return self._call_impl(*args, **kwargs)

    def _call_impl(self, *args, **kwargs):
        """The call with its hooks (PyTorch's name for it)."""
        call = _HookedCall(self, args, kwargs)
        try:
            return call.run()
        except Exception:
            call.run_always_called()
            raise

    # ---- repr ---------------------------------------------------------------------------
    def extra_repr(self):
        return ""

    def _get_name(self):
        return type(self).__name__

    def __repr__(self):
        lines = []
        extra = self.extra_repr()
        if extra:
            lines = extra.split("\n")
        for name, m in self._modules.items():
            lines.append(f"({name}): " + _addindent(repr(m), 2))
        main = self._get_name() + "("
        if lines:
            if len(lines) == 1 and not self._modules:
                main += lines[0]
            else:
                main += "\n  " + "\n  ".join(lines) + "\n"
        return main + ")"


def _call_module(module, args, kwargs):
    """``Module.__call__``'s work, for an observer's ``run_module`` to wrap."""
    if not _has_hooks(module):
        return module.forward(*args, **kwargs)
    return module._call_impl(*args, **kwargs)


def _has_hooks(module):
    d = module.__dict__
    return bool(d["_forward_pre_hooks"] or d["_forward_hooks"] or _has_backward_hooks(module)
                or _global_forward_pre_hooks or _global_forward_hooks)


def _has_backward_hooks(module):
    d = module.__dict__
    return bool(d["_backward_hooks"] or d["_backward_pre_hooks"] or _global_backward_hooks
                or _global_backward_pre_hooks)


def _backward_hooks(module):
    """The full and the non-full backward hooks of a call of ``module``, global first."""
    full, non_full = [], []
    for is_full, hooks in ((_global_is_full[0], _global_backward_hooks),
                           (module._is_full_backward_hook, module._backward_hooks)):
        if hooks:
            (full if is_full else non_full).extend(hooks.values())
    return full, non_full


class _HookedCall:
    """One call of a module with its hooks: the global ones, then its own. ``args`` and
    ``result`` are what the hooks have made of them so far, which the forward hooks with
    ``always_call`` get when the call raises (once: those that ran already are not run
    again; their own error then is only a warning, the call's error is raised)."""

    def __init__(self, module, args, kwargs):
        self.module, self.args, self.kwargs = module, args, kwargs
        self.result = None
        self.called = set()  # always-called hooks that have run

    def run(self):
        m = self.module
        for hid, hook in (*_global_forward_pre_hooks.items(), *m._forward_pre_hooks.items()):
            if hid in m._forward_pre_hooks_with_kwargs:
                res = hook(m, self.args, self.kwargs)
                if res is not None:
                    if not (isinstance(res, tuple) and len(res) == 2):
                        raise RuntimeError(f"forward pre-hook must return None or a tuple of "
                                           f"(new_args, new_kwargs), but got {res}.")
                    self.args, self.kwargs = res
            else:
                res = hook(m, self.args)
                if res is not None:
                    self.args = res if isinstance(res, tuple) else (res,)
        full, non_full = _backward_hooks(m)
        pre = (*_global_backward_pre_hooks.values(), *m._backward_pre_hooks.values())
        state = None
        if (full or pre) and grad_mode.state.enabled:
            state = BackwardHookState(m, full, pre)
            self.args = state.wrap_inputs(self.args)
        self.result = m.forward(*self.args, **self.kwargs)
        for hid, hook in (*_global_forward_hooks.items(), *m._forward_hooks.items()):
            if hid in m._forward_hooks_always_called or \
                    hid in _global_forward_hooks_always_called:
                self.called.add(hid)
            if hid in m._forward_hooks_with_kwargs or hid in _global_forward_hooks_with_kwargs:
                res = hook(m, self.args, self.kwargs, self.result)
            else:
                res = hook(m, self.args, self.result)
            if res is not None:
                self.result = res
        if state is not None:
            self.result = state.wrap_outputs(self.result)
        if non_full:
            register_non_full_hooks(m, non_full, self.args, self.result)
        return self.result

    def run_always_called(self):
        """After the call raised. (PyTorch calls the global ones without kwargs here.)"""
        m = self.module
        for hid, hook in _global_forward_hooks.items():
            if hid in _global_forward_hooks_always_called and hid not in self.called:
                self._quietly(hook, (m, self.args, self.result), "global module")
        for hid, hook in m._forward_hooks.items():
            if hid in m._forward_hooks_always_called and hid not in self.called:
                kw = (self.kwargs,) if hid in m._forward_hooks_with_kwargs else ()
                self._quietly(hook, (m, self.args, *kw, self.result), "module")

    def _quietly(self, hook, args, kind):
        try:
            res = hook(*args)
        except Exception as e:
            warnings.warn(f"{kind} forward hook with ``always_call=True`` raised an exception "
                          f"that was silenced as another error was raised in forward: {e}",
                          stacklevel=5)  # (the module's caller)
            return
        if res is not None:
            self.result = res
