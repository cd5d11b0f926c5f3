"""RNN, LSTM, GRU and their cells, composed from differentiable ops.

Each layer and direction projects the whole sequence in one GEMM (``x @ W_ih^T + b``);
the loop over time steps then does one hidden GEMM and a few pointwise ops per step.
The gradients are those of the composition, which is the math of PyTorch's kernels.
Packed input runs the same loop on per-step blocks of shrinking batch size, as
PyTorch's CPU implementation does.
"""

import math
import numbers
import warnings

from ... import _creation
from ...ops.joining import cat, stack
from ...ops.linalg import addmm
from .. import functional as F
from .. import init
from ..parameter import Parameter
from ..utils.rnn import PackedSequence
from .module import Module

__all__ = ["RNNBase", "RNN", "LSTM", "GRU", "RNNCellBase", "RNNCell", "LSTMCell", "GRUCell"]


# ---- one time step per mode: x is the step's input projection (biases folded in, except
# GRU's b_hh, which sits inside r * (W_hn h + b_hn)); returns the new state tuple ----------

def _tanh_step(x, h, w_hh_t, b_hh):
    return (addmm(x, h, w_hh_t).tanh(),)


def _relu_step(x, h, w_hh_t, b_hh):
    return (addmm(x, h, w_hh_t).relu(),)


def _lstm_step(x, h, c, w_hh_t, b_hh, w_hr_t=None):
    i, f, g, o = addmm(x, h, w_hh_t).chunk(4, 1)
    c = f.sigmoid() * c + i.sigmoid() * g.tanh()
    h = o.sigmoid() * c.tanh()
    return (h if w_hr_t is None else h.mm(w_hr_t), c)


def _gru_step(x, h, w_hh_t, b_hh):
    gh = h.mm(w_hh_t) if b_hh is None else addmm(b_hh, h, w_hh_t)
    xr, xz, xn = x.chunk(3, 1)
    hr, hz, hn = gh.chunk(3, 1)
    r = (xr + hr).sigmoid()
    z = (xz + hz).sigmoid()
    n = (xn + r * hn).tanh()
    return (n + z * (h - n),)


_STEPS = {"RNN_TANH": _tanh_step, "RNN_RELU": _relu_step, "LSTM": _lstm_step,
          "GRU": _gru_step}


def _input_projection(x, mode, w_ih, b_ih, b_hh):
    """``x @ W_ih^T`` plus the biases that act on it: both, except for GRU."""
    if b_ih is None:
        return F.linear(x, w_ih)
    return F.linear(x, w_ih, b_ih if mode == "GRU" else b_ih + b_hh)


def _direction(xs, state, step, weights, reverse):
    """Run ``step`` over the per-step blocks ``xs``; returns (outputs, final state).

    Blocks shrink along packed sequences: rows past a block's size are finished
    (forward) or not yet started (reverse), so the state is cut or extended at the
    steps where the size changes.
    """
    outs = []
    if not reverse:
        done = []
        for x in xs:
            bs = x.shape[0]
            if bs != state[0].shape[0]:
                done.append(tuple(s[bs:] for s in state))
                state = tuple(s[:bs] for s in state)
            state = step(x, *state, *weights)
            outs.append(state[0])
        if done:
            done.reverse()
            state = tuple(cat([s] + [d[k] for d in done]) for k, s in enumerate(state))
        return outs, state
    full = state
    if xs[-1].shape[0] != full[0].shape[0]:
        state = tuple(s[:xs[-1].shape[0]] for s in full)
    for x in reversed(xs):
        bs, n = x.shape[0], state[0].shape[0]
        if bs != n:
            state = tuple(cat([s, f[n:bs]]) for s, f in zip(state, full, strict=True))
        state = step(x, *state, *weights)
        outs.append(state[0])
    outs.reverse()
    return outs, state


def _rnn(mode, x, hx, layers, num_layers, bidirectional, dropout, training, batch_sizes):
    """The stacked recurrence on time-major ``x`` ((T, B, I), or packed (N, I) with
    ``batch_sizes``); ``hx`` is a tuple of (layers*dirs, B, *) states.

    ``layers[k]`` holds (w_ih, w_hh, b_ih, b_hh, w_hr) of layer/direction ``k``.
    Returns the last layer's outputs and the stacked final states.
    """
    step = _STEPS[mode]
    num_dirs = 2 if bidirectional else 1
    states = [h.unbind(0) for h in hx]
    finals = [[] for _ in hx]
    for layer in range(num_layers):
        if layer and dropout and training:
            x = F.dropout(x, dropout, True)
        outs = []
        for d in range(num_dirs):
            k = layer * num_dirs + d
            w_ih, w_hh, b_ih, b_hh, w_hr = layers[k]
            proj = _input_projection(x, mode, w_ih, b_ih, b_hh)
            xs = proj.split(batch_sizes) if batch_sizes is not None else proj.unbind(0)
            weights = (w_hh.t(), b_hh if mode == "GRU" else None)
            if w_hr is not None:
                weights += (w_hr.t(),)
            out, final = _direction(xs, tuple(s[k] for s in states), step, weights, d == 1)
            outs.append(cat(out) if batch_sizes is not None else stack(out))
            for f, s in zip(finals, final, strict=True):
                f.append(s)
        x = outs[0] if num_dirs == 1 else cat(outs, -1)
    return x, tuple(stack(f) for f in finals)



def _uniform_init(module):
    """PyTorch's recurrent init: every weight and bias uniform in +-1/sqrt(hidden_size)."""
    stdv = 1.0 / math.sqrt(module.hidden_size) if module.hidden_size > 0 else 0
    for weight in module.parameters():
        init.uniform_(weight, -stdv, stdv)

class RNNBase(Module):
    """Parameters, checks and the batching/packing logic shared by RNN, LSTM and GRU."""

    def __init__(self, mode, input_size, hidden_size, num_layers=1, bias=True,
                 batch_first=False, dropout=0.0, bidirectional=False, proj_size=0,
                 device=None, dtype=None):
        super().__init__()
        self.mode = mode
        self.input_size = input_size
        self.hidden_size = hidden_size
        self.num_layers = num_layers
        self.bias = bias
        self.batch_first = batch_first
        self.dropout = float(dropout)
        self.bidirectional = bidirectional
        self.proj_size = proj_size
        num_directions = 2 if bidirectional else 1
        if (not isinstance(dropout, numbers.Number) or not 0 <= dropout <= 1
                or isinstance(dropout, bool)):
            raise ValueError("dropout should be a number in range [0, 1] representing the "
                             "probability of an element being zeroed")
        if dropout > 0 and num_layers == 1:
            warnings.warn("dropout option adds dropout after all but last recurrent layer, "
                          "so non-zero dropout expects num_layers greater than 1, but got "
                          f"dropout={dropout} and num_layers={num_layers}", stacklevel=2)
        for name, value, kind in (("bias", bias, bool), ("batch_first", batch_first, bool),
                                  ("input_size", input_size, int),
                                  ("hidden_size", hidden_size, int)):
            if not isinstance(value, kind):
                raise TypeError(f"{name} should be of type {kind.__name__}, got: "
                                f"{type(value).__name__}")
        if input_size <= 0:
            raise ValueError("input_size must be greater than zero")
        if hidden_size <= 0:
            raise ValueError("hidden_size must be greater than zero")
        if num_layers <= 0:
            raise ValueError("num_layers must be greater than zero")
        if proj_size < 0:
            raise ValueError("proj_size should be a positive integer or zero to disable "
                             "projections")
        if proj_size >= hidden_size:
            raise ValueError("proj_size has to be smaller than hidden_size")
        gates = {"LSTM": 4, "GRU": 3, "RNN_TANH": 1, "RNN_RELU": 1}.get(mode)
        if gates is None:
            raise ValueError("Unrecognized RNN mode: " + mode)
        gate_size = gates * hidden_size
        real_hidden = proj_size if proj_size > 0 else hidden_size
        self._flat_weights_names = []
        self._all_weights = []
        for layer in range(num_layers):
            for direction in range(num_directions):
                layer_input = input_size if layer == 0 else real_hidden * num_directions
                shapes = [("weight_ih", (gate_size, layer_input)),
                          ("weight_hh", (gate_size, real_hidden))]
                if bias:
                    shapes += [("bias_ih", (gate_size,)), ("bias_hh", (gate_size,))]
                if proj_size > 0:
                    shapes.append(("weight_hr", (proj_size, hidden_size)))
                suffix = "_reverse" if direction == 1 else ""
                names = []
                for base, shape in shapes:
                    name = f"{base}_l{layer}{suffix}"
                    setattr(self, name, Parameter(
                        _creation.empty(*shape, dtype=dtype, device=device)))
                    names.append(name)
                self._flat_weights_names.extend(names)
                self._all_weights.append(names)
        self.reset_parameters()

    @property
    def _flat_weights(self):
        return [getattr(self, n, None) for n in self._flat_weights_names]

    @property
    def all_weights(self):
        return [[getattr(self, w) for w in ws] for ws in self._all_weights]

    def flatten_parameters(self):
        """A no-op, as in PyTorch off cuDNN: the weights are used where they are."""

    def reset_parameters(self):
        _uniform_init(self)

    def check_input(self, input, batch_sizes):
        w_dtype = self._flat_weights[0].dtype
        if input.dtype != w_dtype:
            raise ValueError(f"RNN input dtype ({input.dtype}) does not match weight dtype "
                             f"({w_dtype}). Convert input: input.to({w_dtype}), or convert "
                             f"model: model.to({input.dtype})")
        expected_dim = 2 if batch_sizes is not None else 3
        if input.dim() != expected_dim:
            raise RuntimeError(f"input must have {expected_dim} dimensions, got {input.dim()}")
        if self.input_size != input.size(-1):
            raise RuntimeError("input.size(-1) must be equal to input_size. Expected "
                               f"{self.input_size}, got {input.size(-1)}")

    def get_expected_hidden_size(self, input, batch_sizes):
        if batch_sizes is not None:
            mini_batch = int(batch_sizes[0])
        else:
            mini_batch = input.size(0) if self.batch_first else input.size(1)
        num_directions = 2 if self.bidirectional else 1
        size = self.proj_size if self.proj_size > 0 else self.hidden_size
        return (self.num_layers * num_directions, mini_batch, size)

    def check_hidden_size(self, hx, expected_hidden_size,
                          msg="Expected hidden size {}, got {}"):
        if tuple(hx.size()) != expected_hidden_size:
            raise RuntimeError(msg.format(expected_hidden_size, list(hx.size())))

    def check_forward_args(self, input, hidden, batch_sizes):
        self.check_input(input, batch_sizes)
        self.check_hidden_size(hidden, self.get_expected_hidden_size(input, batch_sizes))

    def permute_hidden(self, hx, permutation):
        if permutation is None:
            return hx
        return hx.index_select(1, permutation)

    def extra_repr(self):
        s = "{input_size}, {hidden_size}"
        if self.proj_size != 0:
            s += ", proj_size={proj_size}"
        if self.num_layers != 1:
            s += ", num_layers={num_layers}"
        if self.bias is not True:
            s += ", bias={bias}"
        if self.batch_first is not False:
            s += ", batch_first={batch_first}"
        if self.dropout != 0:
            s += ", dropout={dropout}"
        if self.bidirectional is not False:
            s += ", bidirectional={bidirectional}"
        return s.format(**self.__dict__)

    def _layers(self):
        per = 4 if self.bias else 2
        out = []
        for ws in self.all_weights:
            w_ih, w_hh = ws[0], ws[1]
            b_ih, b_hh = (ws[2], ws[3]) if self.bias else (None, None)
            out.append((w_ih, w_hh, b_ih, b_hh, ws[per] if self.proj_size > 0 else None))
        return out

    def _zeros(self, batch, size, input):
        return _creation.zeros(self.num_layers * (2 if self.bidirectional else 1), batch, size,
                               dtype=input.dtype, device=input.device)

    def _prepare(self, input, hx):
        """Unpack or batch ``input``; returns (x, hx, batch_sizes, sorted, unsorted,
        batched), ``x`` time-major, ``hx`` None or in the sorted batch order."""
        if isinstance(input, PackedSequence):
            data, batch_sizes, sorted_indices, unsorted_indices = input
            return data, hx, batch_sizes, sorted_indices, unsorted_indices, True
        if input.dim() not in (2, 3):
            name = "RNN" if self.mode.startswith("RNN") else self.mode
            tensor = " tensor" if name == "RNN" else ""
            raise ValueError(f"{name}: Expected input to be 2D or 3D, got {input.dim()}D"
                             f"{tensor} instead")
        return input, hx, None, None, None, input.dim() == 3

    def _run(self, input, hx, batch_sizes, batched):
        """Shared tail of forward: 3-D or packed input in, outputs in the caller's layout."""
        if batch_sizes is None and self.batch_first:
            input = input.transpose(0, 1)
        sizes = None if batch_sizes is None else batch_sizes.tolist()
        out, finals = _rnn(self.mode, input, hx, self._layers(), self.num_layers,
                           self.bidirectional, self.dropout, self.training, sizes)
        if batch_sizes is None:
            if self.batch_first:
                out = out.transpose(0, 1)
            if not batched:
                out = out.squeeze(0 if self.batch_first else 1)
        return out, finals

    def _single_state_forward(self, input, hx):
        """forward of RNN and GRU (one state tensor)."""
        x, hx, batch_sizes, sorted_indices, unsorted_indices, batched = \
            self._prepare(input, hx)
        if batch_sizes is None:
            if hx is not None:
                if batched and hx.dim() != 3:
                    raise RuntimeError("For batched 3-D input, hx should also be 3-D but got "
                                       f"{hx.dim()}-D tensor")
                if not batched:
                    if hx.dim() != 2:
                        raise RuntimeError("For unbatched 2-D input, hx should also be 2-D "
                                           f"but got {hx.dim()}-D tensor")
                    hx = hx.unsqueeze(1)
            checked = x if batched else x.unsqueeze(0 if self.batch_first else 1)
        else:
            checked = x
        if hx is None:
            hx = self._zeros(int(batch_sizes[0]) if batch_sizes is not None
                             else checked.size(0 if self.batch_first else 1),
                             self.hidden_size, x)
        else:
            hx = self.permute_hidden(hx, sorted_indices)
        self.check_forward_args(checked, hx, batch_sizes)
        out, (h_n,) = self._run(checked, (hx,), batch_sizes, batched)
        if batch_sizes is not None:
            return (PackedSequence(out, batch_sizes, sorted_indices, unsorted_indices),
                    self.permute_hidden(h_n, unsorted_indices))
        return out, (h_n if batched else h_n.squeeze(1))


class RNN(RNNBase):
    """Elman RNN: ``h_t = tanh(x_t W_ih^T + b_ih + h_{t-1} W_hh^T + b_hh)`` (or ReLU)."""

    def __init__(self, *args, **kwargs):
        if "proj_size" in kwargs:
            raise ValueError("proj_size argument is only supported for LSTM, not RNN or GRU")
        if len(args) > 3:
            self.nonlinearity = args[3]
            args = args[:3] + args[4:]
        else:
            self.nonlinearity = kwargs.pop("nonlinearity", "tanh")
        if self.nonlinearity == "tanh":
            mode = "RNN_TANH"
        elif self.nonlinearity == "relu":
            mode = "RNN_RELU"
        else:
            raise ValueError(f"Unknown nonlinearity '{self.nonlinearity}'. Select from 'tanh' "
                             "or 'relu'.")
        super().__init__(mode, *args, **kwargs)

    def forward(self, input, hx=None):
        return self._single_state_forward(input, hx)


class GRU(RNNBase):
    """Gated recurrent unit; gates (r, z, n) stacked in that order in the weights."""

    def __init__(self, *args, **kwargs):
        if "proj_size" in kwargs:
            raise ValueError("proj_size argument is only supported for LSTM, not RNN or GRU")
        super().__init__("GRU", *args, **kwargs)

    def forward(self, input, hx=None):
        return self._single_state_forward(input, hx)


class LSTM(RNNBase):
    """Long short-term memory; gates (i, f, g, o) stacked in that order in the weights,
    with an optional projection ``h_t = W_hr (o * tanh(c_t))`` (``proj_size``)."""

    def __init__(self, *args, **kwargs):
        super().__init__("LSTM", *args, **kwargs)

    def get_expected_cell_size(self, input, batch_sizes):
        if batch_sizes is not None:
            mini_batch = int(batch_sizes[0])
        else:
            mini_batch = input.size(0) if self.batch_first else input.size(1)
        return (self.num_layers * (2 if self.bidirectional else 1), mini_batch,
                self.hidden_size)

    def check_forward_args(self, input, hidden, batch_sizes):
        self.check_input(input, batch_sizes)
        self.check_hidden_size(hidden[0], self.get_expected_hidden_size(input, batch_sizes),
                               "Expected hidden[0] size {}, got {}")
        self.check_hidden_size(hidden[1], self.get_expected_cell_size(input, batch_sizes),
                               "Expected hidden[1] size {}, got {}")

    def permute_hidden(self, hx, permutation):
        if permutation is None:
            return hx
        return hx[0].index_select(1, permutation), hx[1].index_select(1, permutation)

    def forward(self, input, hx=None):
        x, hx, batch_sizes, sorted_indices, unsorted_indices, batched = \
            self._prepare(input, hx)
        checked = x if batched or batch_sizes is not None else \
            x.unsqueeze(0 if self.batch_first else 1)
        real_hidden = self.proj_size if self.proj_size > 0 else self.hidden_size
        if hx is None:
            batch = (int(batch_sizes[0]) if batch_sizes is not None
                     else checked.size(0 if self.batch_first else 1))
            hx = (self._zeros(batch, real_hidden, x), self._zeros(batch, self.hidden_size, x))
            self.check_forward_args(checked, hx, batch_sizes)
        elif batch_sizes is not None:
            hx = self.permute_hidden(hx, sorted_indices)
            self.check_forward_args(checked, hx, batch_sizes)
        else:
            want = 3 if batched else 2
            if hx[0].dim() != want or hx[1].dim() != want:
                kind = "batched 3-D" if batched else "unbatched 2-D"
                raise RuntimeError(f"For {kind} input, hx and cx should also be {want}-D but "
                                   f"got ({hx[0].dim()}-D, {hx[1].dim()}-D) tensors")
            if not batched:
                hx = (hx[0].unsqueeze(1), hx[1].unsqueeze(1))
            self.check_forward_args(checked, hx, batch_sizes)
        out, (h_n, c_n) = self._run(checked, tuple(hx), batch_sizes, batched)
        if batch_sizes is not None:
            return (PackedSequence(out, batch_sizes, sorted_indices, unsorted_indices),
                    self.permute_hidden((h_n, c_n), unsorted_indices))
        if not batched:
            h_n, c_n = h_n.squeeze(1), c_n.squeeze(1)
        return out, (h_n, c_n)


# ---- cells --------------------------------------------------------------------------------

class RNNCellBase(Module):
    def __init__(self, input_size, hidden_size, bias, num_chunks, device=None, dtype=None):
        super().__init__()
        self.input_size = input_size
        self.hidden_size = hidden_size
        self.bias = bias
        self.weight_ih = Parameter(_creation.empty(num_chunks * hidden_size, input_size,
                                                   dtype=dtype, device=device))
        self.weight_hh = Parameter(_creation.empty(num_chunks * hidden_size, hidden_size,
                                                   dtype=dtype, device=device))
        if bias:
            n = num_chunks * hidden_size
            self.bias_ih = Parameter(_creation.empty(n, dtype=dtype, device=device))
            self.bias_hh = Parameter(_creation.empty(n, dtype=dtype, device=device))
        else:
            self.register_parameter("bias_ih", None)
            self.register_parameter("bias_hh", None)
        self.reset_parameters()

    def extra_repr(self):
        s = "{input_size}, {hidden_size}"
        if "bias" in self.__dict__ and self.bias is not True:
            s += ", bias={bias}"
        if "nonlinearity" in self.__dict__ and self.nonlinearity != "tanh":
            s += ", nonlinearity={nonlinearity}"
        return s.format(**self.__dict__)

    def reset_parameters(self):
        _uniform_init(self)

    def _check(self, name, input, hx):
        """The dimension checks of PyTorch's Python cell; returns (batched input, batched)."""
        if input.dim() not in (1, 2):
            raise ValueError(f"{name}: Expected input to be 1D or 2D, got {input.dim()}D "
                             "instead")
        states = hx if isinstance(hx, (tuple, list)) else (hx,)
        for idx, value in enumerate(states):
            if value is not None and value.dim() not in (1, 2):
                what = f"hx[{idx}]" if isinstance(hx, (tuple, list)) else "hidden"
                raise ValueError(f"{name}: Expected {what} to be 1D or 2D, got {value.dim()}D "
                                 "instead")
        batched = input.dim() == 2
        return (input if batched else input.unsqueeze(0)), batched

    def _check_sizes(self, input, states):
        """The size checks of PyTorch's cell kernels."""
        if input.size(1) != self.input_size:
            raise RuntimeError(f"input has inconsistent input_size: got {input.size(1)} "
                               f"expected {self.input_size}")
        for i, h in enumerate(states):
            if input.size(0) != h.size(0):
                raise RuntimeError(f"Input batch size {input.size(0)} doesn't match hidden{i} "
                                   f"batch size {h.size(0)}")
            if h.size(1) != self.hidden_size:
                raise RuntimeError(f"hidden{i} has inconsistent hidden_size: got {h.size(1)}, "
                                   f"expected {self.hidden_size}")

    def _zeros(self, input):
        return _creation.zeros(input.size(0), self.hidden_size, dtype=input.dtype,
                               device=input.device)

    def _step(self, mode, input, states):
        self._check_sizes(input, states)
        proj = _input_projection(input, mode, self.weight_ih, self.bias_ih, self.bias_hh)
        return _STEPS[mode](proj, *states, self.weight_hh.t(),
                            self.bias_hh if mode == "GRU" else None)


class RNNCell(RNNCellBase):
    """One Elman step: ``h' = tanh(x W_ih^T + b_ih + h W_hh^T + b_hh)`` (or ReLU)."""

    def __init__(self, input_size, hidden_size, bias=True, nonlinearity="tanh", device=None,
                 dtype=None):
        super().__init__(input_size, hidden_size, bias, num_chunks=1, device=device,
                         dtype=dtype)
        self.nonlinearity = nonlinearity

    def forward(self, input, hx=None):
        input, batched = self._check("RNNCell", input, hx)
        hx = self._zeros(input) if hx is None else (hx if batched else hx.unsqueeze(0))
        if self.nonlinearity not in ("tanh", "relu"):
            raise RuntimeError(f"Unknown nonlinearity: {self.nonlinearity}")
        mode = "RNN_TANH" if self.nonlinearity == "tanh" else "RNN_RELU"
        (h,) = self._step(mode, input, (hx,))
        return h if batched else h.squeeze(0)


class LSTMCell(RNNCellBase):
    """One LSTM step; returns ``(h', c')``."""

    def __init__(self, input_size, hidden_size, bias=True, device=None, dtype=None):
        super().__init__(input_size, hidden_size, bias, num_chunks=4, device=device,
                         dtype=dtype)

    def forward(self, input, hx=None):
        input, batched = self._check("LSTMCell", input, hx)
        if hx is None:
            zeros = self._zeros(input)
            hx = (zeros, zeros)
        elif not batched:
            hx = (hx[0].unsqueeze(0), hx[1].unsqueeze(0))
        h, c = self._step("LSTM", input, tuple(hx))
        return (h, c) if batched else (h.squeeze(0), c.squeeze(0))


class GRUCell(RNNCellBase):
    """One GRU step."""

    def __init__(self, input_size, hidden_size, bias=True, device=None, dtype=None):
        super().__init__(input_size, hidden_size, bias, num_chunks=3, device=device,
                         dtype=dtype)

    def forward(self, input, hx=None):
        input, batched = self._check("GRUCell", input, hx)
        hx = self._zeros(input) if hx is None else (hx if batched else hx.unsqueeze(0))
        (h,) = self._step("GRU", input, (hx,))
        return h if batched else h.squeeze(0)
