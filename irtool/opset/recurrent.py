"""Recurrent cells and sequences: RNNCell, GRUCell, LSTMCell-4, RNNSequence-5, GRUSequence-5,
LSTMSequence-5.

OpenVINO's gate orders: LSTM ``f, i, c, o``; GRU ``z, r, h``. ``clip`` (when non-zero)
clamps gate pre-activations. In sequences, steps at or beyond ``seq_lengths[b]``
write zeros to ``Y`` and leave the state as it was; the reverse direction walks
each sequence from its own last valid step back to the first.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from ._nn import float_dtype_for, same
from .base import Attrs, Op, TensorInfo, register

Values = Sequence[np.ndarray | None]
Act = Callable[[np.ndarray], np.ndarray]


def _sigmoid(x: np.ndarray) -> np.ndarray:
    return 1.0 / (1.0 + np.exp(-x))


def _activation(name: str, alpha: float | None, beta: float | None) -> Act:
    name = name.lower()
    if name == "sigmoid":
        return _sigmoid
    if name == "tanh":
        return np.tanh
    if name == "relu":
        return lambda x: np.maximum(x, 0)
    if name == "hardsigmoid":
        a = 0.2 if alpha is None else alpha
        b = 0.5 if beta is None else beta
        return lambda x: np.clip(a * x + b, 0, 1)
    if name == "leakyrelu":
        a = 0.01 if alpha is None else alpha
        return lambda x: np.where(x >= 0, x, a * x)
    if name == "affine":
        a = 1.0 if alpha is None else alpha
        b = 0.0 if beta is None else beta
        return lambda x: a * x + b
    if name == "scaledtanh":
        a = 1.0 if alpha is None else alpha
        b = 1.0 if beta is None else beta
        return lambda x: a * np.tanh(b * x)
    if name == "elu":
        a = 1.0 if alpha is None else alpha
        return lambda x: np.where(x >= 0, x, a * (np.exp(x) - 1))
    if name == "softsign":
        return lambda x: x / (1 + np.abs(x))
    if name == "softplus":
        return lambda x: np.log1p(np.exp(x))
    raise ValueError(f"unsupported recurrent activation {name!r}")


class _Recurrent(Op):
    """Attributes shared by the cells and sequences."""

    default_activations: tuple[str, ...] = ("tanh",)

    def __init__(self, attrs: Attrs | None = None) -> None:
        super().__init__(attrs)
        self.hidden_size = self.attr_int("hidden_size", 0)
        names = [a.strip() for a in self.attr_str("activations", "").split(",") if a.strip()]
        names = names or list(self.default_activations)
        alphas = self.attr_floats("activations_alpha", [])
        betas = self.attr_floats("activations_beta", [])
        self.acts = [_activation(n, alphas[i] if i < len(alphas) else None,
                                 betas[i] if i < len(betas) else None)
                     for i, n in enumerate(names)]
        self.clip = self.attr_float("clip", 0.0)
        self.direction = self.attr_str("direction", "forward").lower()
        self.linear_before_reset = self.attr_bool("linear_before_reset", False)

    def _clip(self, x: np.ndarray) -> np.ndarray:
        if self.clip > 0:
            return np.clip(x, -self.clip, self.clip)
        return x

    # one step of the cell: (x_t, states, W, R, B) -> new states
    def step(self, x: np.ndarray, states: list[np.ndarray], w: np.ndarray, r: np.ndarray,
             b: np.ndarray) -> list[np.ndarray]:
        raise NotImplementedError


class _RNNStep(_Recurrent):
    def step(self, x: np.ndarray, states: list[np.ndarray], w: np.ndarray, r: np.ndarray,
             b: np.ndarray) -> list[np.ndarray]:
        (h,) = states
        return [self.acts[0](self._clip(x @ w.T + h @ r.T + b))]


class _GRUStep(_Recurrent):
    default_activations = ("sigmoid", "tanh")

    def step(self, x: np.ndarray, states: list[np.ndarray], w: np.ndarray, r: np.ndarray,
             b: np.ndarray) -> list[np.ndarray]:
        (h,) = states
        n = h.shape[-1]
        f, g = self.acts[0], self.acts[1]
        xw = x @ w.T
        rz_r = h @ r[:2 * n].T
        z = f(self._clip(xw[:, :n] + rz_r[:, :n] + b[:n]))
        rr = f(self._clip(xw[:, n:2 * n] + rz_r[:, n:] + b[n:2 * n]))
        if self.linear_before_reset:
            hh = g(self._clip(xw[:, 2 * n:] + rr * (h @ r[2 * n:].T + b[3 * n:4 * n])
                              + b[2 * n:3 * n]))
        else:
            hh = g(self._clip(xw[:, 2 * n:] + (rr * h) @ r[2 * n:].T + b[2 * n:3 * n]))
        return [(1 - z) * hh + z * h]


class _LSTMStep(_Recurrent):
    default_activations = ("sigmoid", "tanh", "tanh")

    def step(self, x: np.ndarray, states: list[np.ndarray], w: np.ndarray, r: np.ndarray,
             b: np.ndarray) -> list[np.ndarray]:
        h, c = states
        n = h.shape[-1]
        f, g, hact = self.acts[0], self.acts[1], self.acts[2]
        gates = self._clip(x @ w.T + h @ r.T + b)
        ft = f(gates[:, :n])
        it = f(gates[:, n:2 * n])
        ct = g(gates[:, 2 * n:3 * n])
        ot = f(gates[:, 3 * n:])
        c_new = ft * c + it * ct
        return [ot * hact(c_new), c_new]


# --------------------------------------------------------------------------- cells


class _Cell(_Recurrent):
    """Inputs X, H (, C), W, R, B; outputs the new states."""

    num_states = 1

    def infer(self, inputs: Sequence[TensorInfo], values: Values) -> list[TensorInfo]:
        return [inputs[1]] * self.num_states

    def compute(self, inputs: list[np.ndarray]) -> list[np.ndarray]:
        dtype = np.asarray(inputs[0]).dtype
        acc = float_dtype_for(dtype)
        k = self.num_states
        x = np.asarray(inputs[0]).astype(acc)
        states = [np.asarray(s).astype(acc) for s in inputs[1:1 + k]]
        w, r, b = (np.asarray(v).astype(acc) for v in inputs[1 + k:4 + k])
        return [s.astype(dtype) for s in self.step(x, states, w, r, b)]


@register("RNNCell", "opset1")
class RNNCell(_Cell, _RNNStep):
    """RNNCell-1 (activation default tanh)."""


@register("GRUCell", "opset3")
class GRUCell(_Cell, _GRUStep):
    """GRUCell-3 (``linear_before_reset``: B holds 4*hidden values)."""


@register("LSTMCell", "opset4")
class LSTMCell(_Cell, _LSTMStep):
    """LSTMCell-4: outputs H and C."""

    num_states = 2


# --------------------------------------------------------------------------- sequences


class _Sequence(_Recurrent):
    """Inputs X [B, S, I], initial states [B, D, H] (1 or 2 of them), seq_lengths [B],
    W [D, G*H, I], R [D, G*H, H], B [D, G*H]; outputs Y [B, D, S, H] and final states."""

    num_states = 1

    def infer(self, inputs: Sequence[TensorInfo], values: Values) -> list[TensorInfo]:
        x, h0 = inputs[0], inputs[1]
        if x.shape is None or h0.shape is None:
            return [same(x, None)] + [same(x, h0.shape)] * self.num_states
        b, s = x.shape[0], x.shape[1]
        d = h0.shape[1] if h0.shape is not None else -1
        hid = h0.shape[2] if h0.shape is not None else self.hidden_size
        return [same(x, (b, d, s, hid))] + [same(x, (b, d, hid))] * self.num_states

    def compute(self, inputs: list[np.ndarray]) -> list[np.ndarray]:
        k = self.num_states
        dtype = np.asarray(inputs[0]).dtype
        acc = float_dtype_for(dtype)
        x = np.asarray(inputs[0]).astype(acc)
        init = [np.asarray(s).astype(acc) for s in inputs[1:1 + k]]
        lengths = np.ravel(inputs[1 + k]).astype(np.int64)
        w, r, bias = (np.asarray(v).astype(acc) for v in inputs[2 + k:5 + k])
        batch, steps = x.shape[:2]
        num_dirs = w.shape[0]
        hidden = init[0].shape[-1]
        y = np.zeros((batch, num_dirs, steps, hidden), dtype=acc)
        finals: list[list[np.ndarray]] = [[] for _ in range(k)]
        lengths = np.minimum(lengths, steps)
        for d in range(num_dirs):
            reverse = self.direction == "reverse" or (self.direction == "bidirectional" and d == 1)
            states = [s[:, d] for s in init]
            for t in range(steps):
                if reverse:
                    # each sequence reversed within its own length
                    pos = lengths - 1 - t
                    active = pos >= 0
                    pos_c = np.where(active, pos, 0)
                else:
                    pos_c = np.full(batch, t)
                    active = t < lengths
                if not active.any():
                    continue
                xt = x[np.arange(batch), pos_c]
                new = self.step(xt, states, w[d], r[d], bias[d])
                mask = active[:, None]
                states = [np.where(mask, n, s) for n, s in zip(new, states)]
                y[np.arange(batch)[active], d, pos_c[active]] = new[0][active]
            for i in range(k):
                finals[i].append(states[i])
        outs = [y.astype(dtype)]
        outs += [np.stack(f, axis=1).astype(dtype) for f in finals]
        return outs


@register("RNNSequence", "opset5")
class RNNSequence(_Sequence, _RNNStep):
    """RNNSequence-5."""


@register("GRUSequence", "opset5")
class GRUSequence(_Sequence, _GRUStep):
    """GRUSequence-5."""


@register("LSTMSequence", "opset5")
class LSTMSequence(_Sequence, _LSTMStep):
    """LSTMSequence-5: outputs Y, Ho, Co."""

    num_states = 2


@register("LSTMCell", "opset1")
class LSTMCell1(LSTMCell):
    """LSTMCell-1: LSTMCell-4 plus peepholes ``P`` (input 6, ``[3*hidden]`` in f, i, o order:
    f and i see C(t-1), o sees C(t)) and ``input_forget`` (i = 1 - f). Only the ``fico``
    weights format exists in OpenVINO."""

    def __init__(self, attrs: Attrs | None = None) -> None:
        super().__init__(attrs)
        self.input_forget = self.attr_bool("input_forget", False)
        fmt = self.attr_str("weights_format", "fico").lower()
        if fmt != "fico":
            raise ValueError(f"LSTMCell: weights_format {fmt!r} is not supported")

    def compute(self, inputs: list[np.ndarray]) -> list[np.ndarray]:
        dtype = np.asarray(inputs[0]).dtype
        acc = float_dtype_for(dtype)
        x, h, c, w, r, b = (np.asarray(v).astype(acc) for v in inputs[:6])
        n = h.shape[-1]
        p = np.asarray(inputs[6]).astype(acc) if len(inputs) > 6 else np.zeros(3 * n, acc)
        pf, pi, po = p[:n], p[n:2 * n], p[2 * n:]
        f, g, hact = self.acts[0], self.acts[1], self.acts[2]
        gates = x @ w.T + h @ r.T + b
        ft = f(self._clip(gates[:, :n] + pf * c))
        it = 1 - ft if self.input_forget else f(self._clip(gates[:, n:2 * n] + pi * c))
        ct = g(self._clip(gates[:, 2 * n:3 * n]))
        c_new = ft * c + it * ct
        ot = f(self._clip(gates[:, 3 * n:] + po * c_new))
        return [(ot * hact(c_new)).astype(dtype), c_new.astype(dtype)]
