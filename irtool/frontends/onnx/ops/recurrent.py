"""Recurrent ONNX operators RNN, GRU, LSTM -> RNNSequence-5, GRUSequence-5, LSTMSequence-5.

Layouts: ONNX (layout=0) has X [seq, batch, input], initial states [dirs, batch, hidden],
Y [seq, dirs, batch, hidden]; layout=1 puts batch first everywhere. OpenVINO's sequence
ops take X [batch, seq, input], states [batch, dirs, hidden] and give Y
[batch, dirs, seq, hidden]. ONNX's bias is W-bias and R-bias concatenated; OpenVINO
wants their sum (GRU with linear_before_reset keeps the hidden R-bias apart). LSTM
gates are i, o, f, c in ONNX and f, i, c, o in OpenVINO.
"""

from __future__ import annotations

import numpy as np

from ....opset import TensorInfo
from ..context import NodeContext, Value, onnx_op
from ._common import I64, binary, check_size, concat_1d, const_of, convert, dim_of, i64

_GATES = {"RNN": 1, "GRU": 3, "LSTM": 4}
_DEFAULT_ACTIVATIONS = {"RNN": ["Tanh"], "GRU": ["Sigmoid", "Tanh"],
                        "LSTM": ["Sigmoid", "Tanh", "Tanh"]}
_ACTIVATIONS = {"sigmoid": "sigmoid", "tanh": "tanh", "relu": "relu"}
# OpenVINO gate order as indices into ONNX's gate blocks.
_LSTM_ORDER = [2, 0, 3, 1]  # ONNX i, o, f, c -> OpenVINO f, i, c, o


def _recurrent(ctx: NodeContext) -> list[Value | None]:
    kind = ctx.node.op_type
    gates = _GATES[kind]
    x, w, r = ctx.required_input(0), ctx.required_input(1), ctx.required_input(2)
    bias, lengths, h0 = ctx.input(3), ctx.input(4), ctx.input(5)
    c0 = ctx.input(6) if kind == "LSTM" else None
    hidden = int(ctx.attr("hidden_size", 0)) or (r.shape[-1] if r.shape else 0)
    if hidden <= 0:
        raise ctx.error("hidden_size must be known")
    rows = r.shape[1] if r.shape is not None and len(r.shape) == 3 else -1
    if rows >= 0 and rows != gates * hidden:  # before hidden_size sizes any constant
        raise ctx.error(f"hidden_size is {hidden} but R has {rows} rows, not {gates} x "
                        f"{hidden}")
    check_size(ctx, [2, (gates + 1) * hidden], "the bias")
    direction = ctx.attr("direction", "forward")
    if direction not in ("forward", "reverse", "bidirectional"):
        raise ctx.error(f"direction {direction!r} is not supported")
    dirs = 2 if direction == "bidirectional" else 1
    layout = int(ctx.attr("layout", 0))
    if kind == "LSTM":
        _check_lstm_extras(ctx)
    activations = _activations(ctx, kind, dirs)
    if layout == 0:
        x = _transpose(ctx, x, [1, 0, 2])
    batch = dim_of(ctx, x, 0)
    seq = dim_of(ctx, x, 1)

    def state(value: Value | None) -> Value:
        if value is None:
            return _zeros(ctx, x, [batch, i64(ctx, [dirs]), i64(ctx, [hidden])])
        return _transpose(ctx, value, [1, 0, 2]) if layout == 0 else value

    if kind == "LSTM":
        w, r = _reorder(ctx, w, gates, hidden), _reorder(ctx, r, gates, hidden)
    b = _bias(ctx, kind, bias, w, gates, hidden, dirs)
    if kind == "LSTM":
        b = _reorder(ctx, b, gates, hidden)
    if lengths is None:
        lengths = ctx.op("Broadcast", "opset3", [convert(ctx, _scalar(ctx, seq), I64), batch],
                          {"mode": "numpy"}, outputs=[TensorInfo(I64, (x.shape[0]
                                                                       if x.shape else -1,))])[0]
    else:
        lengths = convert(ctx, lengths, I64)
    inputs = [x, state(h0)]
    if kind == "LSTM":
        inputs.append(state(c0))
    inputs += [lengths, w, r, b]
    attrs = {"direction": direction, "hidden_size": hidden, "activations": activations,
             "activations_alpha": [float(a) for a in ctx.attr("activation_alpha", [])],
             "activations_beta": [float(a) for a in ctx.attr("activation_beta", [])],
             "clip": float(ctx.attr("clip", 0.0))}
    if kind == "GRU":
        attrs["linear_before_reset"] = bool(ctx.attr("linear_before_reset", 0))
    outs = ctx.op(f"{kind}Sequence", "opset5", inputs, attrs)
    y_perm = [2, 1, 0, 3] if layout == 0 else [0, 2, 1, 3]
    state_perm = [1, 0, 2] if layout == 0 else [0, 1, 2]
    results: list[Value | None] = []
    for k, name in enumerate(ctx.node.output):
        if not name or k >= len(outs):
            results.append(None)
            continue
        perm = y_perm if k == 0 else state_perm
        results.append(ctx.op("Transpose", "opset1", [outs[k], i64(ctx, perm)],
                              refine=ctx.onnx_types(k))[0])
    return results


def _check_lstm_extras(ctx: NodeContext) -> None:
    if ctx.attr("input_forget", 0):
        raise ctx.error("input_forget=1 is not supported")
    peepholes = ctx.input(7)
    if peepholes is not None:
        const = ctx.const_value(peepholes)
        if const is None or np.any(const != 0):
            raise ctx.error("peephole weights (input P) are not supported")


def _activations(ctx: NodeContext, kind: str, dirs: int) -> list[str]:
    given = ctx.attr("activations")
    names = list(given) if given else _DEFAULT_ACTIVATIONS[kind] * dirs
    per_dir = len(_DEFAULT_ACTIVATIONS[kind])
    if len(names) == per_dir * dirs and dirs == 2 and names[:per_dir] != names[per_dir:]:
        raise ctx.error("different activations per direction are not supported")
    out = []
    for name in names[:per_dir]:
        low = name.lower()
        if low not in _ACTIVATIONS:
            raise ctx.error(f"activation {name!r} is not supported")
        out.append(_ACTIVATIONS[low])
    return out


def _transpose(ctx: NodeContext, value: Value, perm: list[int]) -> Value:
    shape = tuple(value.shape[p] for p in perm) if value.shape is not None else None
    return ctx.op("Transpose", "opset1", [value, i64(ctx, perm)],
                   outputs=[TensorInfo(value.element_type, shape)])[0]


def _scalar(ctx: NodeContext, value: Value) -> Value:
    const = ctx.const_value(value)
    if const is not None:
        return i64(ctx, int(np.ravel(const)[0]))
    return ctx.op("Squeeze", "opset1", [value, i64(ctx, [0])], outputs=[TensorInfo(I64, ())])[0]


def _zeros(ctx: NodeContext, like: Value, dims: list[Value]) -> Value:
    consts = [ctx.const_value(d) for d in dims]
    if all(c is not None for c in consts):
        shape = [int(np.ravel(c)[0]) for c in consts]  # type: ignore[arg-type]
        return const_of(ctx, np.zeros(shape), like)
    return ctx.op("Broadcast", "opset3", [const_of(ctx, 0, like), concat_1d(ctx, dims)],
                   {"mode": "numpy"})[0]


def _reorder(ctx: NodeContext, value: Value, gates: int, hidden: int) -> Value:
    """Gate blocks along axis 1 of [dirs, gates*hidden, ...] in OpenVINO's LSTM order."""
    parts = ctx.op("Split", "opset1", [value, i64(ctx, 1)], {"num_splits": gates})
    return ctx.op("Concat", "opset1", [parts[i] for i in _LSTM_ORDER], {"axis": 1},
                   outputs=[value.info])[0]


def _bias(ctx: NodeContext, kind: str, bias: Value | None, w: Value, gates: int, hidden: int,
          dirs: int) -> Value:
    lbr = kind == "GRU" and bool(ctx.attr("linear_before_reset", 0))
    width = (gates + 1) * hidden if lbr else gates * hidden
    if bias is None:
        return const_of(ctx, np.zeros((dirs, width)), w)
    w_bias, r_bias = ctx.op("Split", "opset1", [bias, i64(ctx, 1)], {"num_splits": 2},
                            outputs=[TensorInfo(bias.element_type, (dirs, gates * hidden))] * 2)
    if not lbr:
        return binary(ctx, "Add", w_bias, r_bias)
    # [Wz+Rz, Wr+Rr, Wh, Rh]: the hidden gate's R-bias is applied after the reset gate.
    lengths = i64(ctx, [2 * hidden, hidden])
    info = [TensorInfo(bias.element_type, (dirs, 2 * hidden)),
            TensorInfo(bias.element_type, (dirs, hidden))]
    wzr, wh = ctx.op("VariadicSplit", "opset1", [w_bias, i64(ctx, 1), lengths], outputs=info)
    rzr, rh = ctx.op("VariadicSplit", "opset1", [r_bias, i64(ctx, 1), lengths], outputs=info)
    return ctx.op("Concat", "opset1", [binary(ctx, "Add", wzr, rzr), wh, rh], {"axis": 1},
                   outputs=[TensorInfo(bias.element_type, (dirs, width))])[0]


onnx_op("RNN", 1, 7, 14, 22)(_recurrent)
onnx_op("GRU", 1, 3, 7, 14, 22)(_recurrent)
onnx_op("LSTM", 1, 7, 14, 22)(_recurrent)
