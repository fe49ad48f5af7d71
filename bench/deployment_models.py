"""Deployment IRs the producer fixtures lack, made here without torch: MobileNetV3-small
(torchvision's architecture: depthwise convolutions, squeeze-excitation, hard-swish; batch
norm folded into the convolutions, as OpenVINO's conversion folds it; random weights) and
ONNX LSTM / GRU sequence models, each written as ONNX with ``onnx.helper`` and converted
by OpenVINO's own ONNX frontend (``ov.convert_model`` + ``ov.save_model``, what ``ovc``
does), with one input file each and a MANIFEST in ``tests/fixtures/ir_producers``' form.

``bench/deployment_irs.py --extra`` adds them to its table; ``python
bench/deployment_models.py DIR`` writes them to DIR.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

F32 = np.float32

# torchvision.models.mobilenet_v3_small: (in, kernel, expanded, out, SE, activation, stride)
_SMALL = [(16, 3, 16, 16, True, "RE", 2), (16, 3, 72, 24, False, "RE", 2),
          (24, 3, 88, 24, False, "RE", 1), (24, 5, 96, 40, True, "HS", 2),
          (40, 5, 240, 40, True, "HS", 1), (40, 5, 240, 40, True, "HS", 1),
          (40, 5, 120, 48, True, "HS", 1), (48, 5, 144, 48, True, "HS", 1),
          (48, 5, 288, 96, True, "HS", 2), (96, 5, 576, 96, True, "HS", 1),
          (96, 5, 576, 96, True, "HS", 1)]


def _divisible(v: float, divisor: int = 8) -> int:
    """torchvision's _make_divisible."""
    new = max(divisor, int(v + divisor / 2) // divisor * divisor)
    return new + divisor if new < 0.9 * v else new


class _Graph:
    def __init__(self, seed: int) -> None:
        self.rng = np.random.default_rng(seed)
        self.nodes: list[onnx.NodeProto] = []
        self.inits: list[onnx.TensorProto] = []
        self.count = 0

    def name(self, stem: str) -> str:
        self.count += 1
        return f"{stem}{self.count}"

    def init(self, value: np.ndarray, stem: str = "w") -> str:
        name = self.name(stem)
        self.inits.append(numpy_helper.from_array(np.asarray(value), name))
        return name

    def node(self, op: str, inputs: list[str], **attrs: Any) -> str:
        out = self.name(op.lower())
        self.nodes.append(helper.make_node(op, inputs, [out], **attrs))
        return out

    def conv(self, x: str, cin: int, cout: int, k: int, stride: int = 1, group: int = 1,
             act: str | None = None) -> str:
        fan_in = cin // group * k * k
        w = (self.rng.standard_normal((cout, cin // group, k, k)) * np.sqrt(2 / fan_in))
        b = self.rng.standard_normal(cout) * 0.1
        y = self.node("Conv", [x, self.init(w.astype(F32)), self.init(b.astype(F32), "b")],
                      kernel_shape=[k, k], strides=[stride, stride], group=group,
                      pads=[k // 2] * 4)
        return self.act(y, act)

    def act(self, x: str, act: str | None) -> str:
        if act == "RE":
            return self.node("Relu", [x])
        if act == "HS":
            return self.node("HardSwish", [x])
        return x


def mobilenet_v3_small(size: int = 224, seed: int = 0) -> tuple[onnx.ModelProto,
                                                                 dict[str, np.ndarray]]:
    g = _Graph(seed)
    x = g.conv("x", 3, 16, 3, 2, act="HS")
    for cin, k, exp, cout, se, act, stride in _SMALL:
        y = x if exp == cin else g.conv(x, cin, exp, 1, act=act)
        y = g.conv(y, exp, exp, k, stride, group=exp, act=act)
        if se:
            squeeze = _divisible(exp // 4)
            s = g.node("GlobalAveragePool", [y])
            s = g.conv(s, exp, squeeze, 1, act="RE")
            s = g.conv(s, squeeze, exp, 1)
            s = g.node("HardSigmoid", [s], alpha=1 / 6, beta=0.5)
            y = g.node("Mul", [y, s])
        y = g.conv(y, exp, cout, 1)
        x = g.node("Add", [x, y]) if stride == 1 and cin == cout else y
    x = g.conv(x, 96, 576, 1, act="HS")
    x = g.node("Flatten", [g.node("GlobalAveragePool", [x])])
    for fin, fout, act in ((576, 1024, "HS"), (1024, 1000, None)):
        w = (g.rng.standard_normal((fout, fin)) / np.sqrt(fin)).astype(F32)
        x = g.act(g.node("Gemm", [x, g.init(w), g.init(np.zeros(fout, F32), "b")],
                         transB=1), act)
    g.nodes[-1].output[0] = "logits"
    model = _model(g, [("x", [1, 3, size, size])], [("logits", [1, 1000])])
    return model, {"x": g.rng.standard_normal((1, 3, size, size)).astype(F32)}


def recurrent(kind: str, seq: int = 64, batch: int = 1, inputs: int = 64, hidden: int = 128,
              seed: int = 0) -> tuple[onnx.ModelProto, dict[str, np.ndarray]]:
    """Two stacked ONNX LSTM or GRU layers (forward), then a linear head on every step."""
    g = _Graph(seed)
    gates = 4 if kind == "LSTM" else 3
    x = "x"
    width = inputs
    for _ in range(2):
        scale = 1 / np.sqrt(hidden)
        w = g.rng.uniform(-scale, scale, (1, gates * hidden, width)).astype(F32)
        r = g.rng.uniform(-scale, scale, (1, gates * hidden, hidden)).astype(F32)
        b = g.rng.uniform(-scale, scale, (1, 2 * gates * hidden)).astype(F32)
        attrs: dict[str, Any] = {"hidden_size": hidden}
        if kind == "GRU":
            attrs["linear_before_reset"] = 1  # torch's GRU, as exported
        y = g.node(kind, [x, g.init(w), g.init(r), g.init(b, "b")], **attrs)
        x = g.node("Squeeze", [y, g.init(np.array([1], np.int64), "axes")])  # [seq, batch, h]
        width = hidden
    w = (g.rng.standard_normal((hidden, 10)) / np.sqrt(hidden)).astype(F32)
    g.nodes.append(helper.make_node("MatMul", [x, g.init(w)], ["y"]))
    model = _model(g, [("x", [seq, batch, inputs])], [("y", [seq, batch, 10])])
    return model, {"x": g.rng.standard_normal((seq, batch, inputs)).astype(F32)}


def _model(g: _Graph, inputs: list[tuple[str, list[int]]],
           outputs: list[tuple[str, list[int]]]) -> onnx.ModelProto:
    graph = helper.make_graph(
        g.nodes, "g", [helper.make_tensor_value_info(n, TensorProto.FLOAT, s) for n, s in inputs],
        [helper.make_tensor_value_info(n, TensorProto.FLOAT, s) for n, s in outputs], g.inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    onnx.checker.check_model(model)
    return model


MODELS = {
    "mobilenet_v3_small": (mobilenet_v3_small, "torchvision's MobileNetV3-small as ONNX"),
    "lstm_onnx": (lambda: recurrent("LSTM"), "ONNX LSTM x2"),
    "gru_onnx": (lambda: recurrent("GRU"), "ONNX GRU x2"),
}


def write(folder: Path) -> Path:
    """Convert every model with OpenVINO's ONNX frontend into ``folder``, with its inputs and
    a MANIFEST.json ``producer_irs.load_manifest`` reads; returns the folder."""
    import openvino as ov

    folder.mkdir(parents=True, exist_ok=True)
    entries = []
    for name, (build, what) in MODELS.items():
        model, feed = build()
        onnx_path = folder / f"{name}.onnx"
        onnx.save(model, onnx_path)
        ov.save_model(ov.convert_model(str(onnx_path)), str(folder / f"{name}.xml"),
                      compress_to_fp16=False)
        np.savez(folder / f"{name}.inputs.npz", **feed)
        ops = sorted({f"{n.op_type}" for n in model.graph.node})
        entries.append({"name": name, "xml": f"{name}.xml", "feeds": [f"{name}.inputs.npz"],
                        "stateful": False, "raw_inputs": {}, "ops": ops,
                        "producer": f"ov.convert_model (ONNX: {what})"})
    manifest = {"versions": {"openvino": ov.__version__, "onnx": onnx.__version__},
                "skipped": {}, "irs": entries}
    (folder / "MANIFEST.json").write_text(json.dumps(manifest, indent=1))
    return folder


if __name__ == "__main__":
    print(write(Path(sys.argv[1])))
