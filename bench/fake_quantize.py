"""How close irtool and OpenVINO are on a FakeQuantize-quantized CNN.

irtool computes FakeQuantize by the spec's formula; OpenVINO's CPU plugin may turn the
quantized graph into int8 kernels (u8/i8 convolutions with requantization, where the CPU
has them), whose arithmetic differs from the formula in the last bits. This runs the
NNCF-quantized CNN of the producer fixtures (``tests/fixtures/ir_producers/cnn_int8_fq``:
conv-bn-relu, depthwise conv, maxpool, linear, softmax over 10 classes; five FakeQuantize
layers, int8 weights), saved with its logits as a second output, on a batch of seeded
random inputs in both and prints top-1 agreement and, for the logits and the softmax
probabilities, the largest absolute and relative difference next to the largest value.
``--float`` also runs the same IR with every FakeQuantize removed (its input passed
through) on irtool, to show how large quantization itself is next to that gap.

    python bench/fake_quantize.py [--batch 256] [--seed 0] [--float]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

import numpy as np
import openvino as ov

import irtool
from irtool.ir import GraphBuilder

REPO = Path(__file__).resolve().parent.parent
IR = REPO / "tests" / "fixtures" / "ir_producers" / "cnn_int8_fq.xml"


def _inputs(batch: int, seed: int) -> list[np.ndarray]:
    """Seeded images of the fixture's [1, 3, 16, 16]: standard normal, like its feed."""
    rng = np.random.default_rng(seed)
    return [rng.standard_normal((1, 3, 16, 16)).astype(np.float32) for _ in range(batch)]


def _without_fake_quantize(model: irtool.Model) -> irtool.Model:
    """``model`` with each FakeQuantize's consumers fed from its data input instead."""
    graph = model.graph
    for layer in graph.layers_of_type("FakeQuantize"):
        source = graph.source(layer.id, layer.inputs[0].id)
        for consumer, port in graph.consumers(layer.id):
            graph.disconnect_input(consumer, port)
            graph.connect(source[0], source[1], consumer, port)
    return model


def _with_logits(model: irtool.Model, folder: Path) -> Path:
    """The IR saved to ``folder`` with a second output: the logits the SoftMax reads."""
    graph = model.graph
    softmax = graph.layers_of_type("SoftMax")[0]
    source, port = graph.source(softmax.id, softmax.inputs[0].id)
    builder = GraphBuilder(graph)
    builder.result(builder.value(source, port), name="logits")
    graph.layer(source).port(port).names = ("logits",)
    return irtool.save(model, folder / IR.name)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--batch", type=int, default=256, help="random inputs (default 256)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--float", action="store_true",
                        help="also run irtool with the FakeQuantize layers removed")
    args = parser.parse_args(argv)

    inputs = _inputs(args.batch, args.seed)
    with tempfile.TemporaryDirectory() as tmp:
        xml = _with_logits(irtool.load(IR), Path(tmp))
        ours = _outputs(lambda x: irtool.run(xml, {"x": x}), inputs)
        compiled = ov.Core().compile_model(str(xml), "CPU", {"INFERENCE_PRECISION_HINT": "f32"})
        theirs = _outputs(lambda x: {("logits" if "logits" in o.get_names() else "other"): r
                                     for o, r in compiled({"x": x}).items()}, inputs)
        rows = [("irtool vs OpenVINO CPU", ours, theirs)]
        if args.float:
            plain = _without_fake_quantize(irtool.load(xml))
            rows.append(("irtool vs irtool without FakeQuantize", ours,
                         _outputs(lambda x: irtool.run(plain, {"x": x}), inputs)))

    print(f"{IR.name}: {args.batch} random inputs [1, 3, 16, 16], seed {args.seed}; "
          f"{ours['logits'].shape[1]} classes")
    print(f"{'comparison':<40} {'output':<14} {'top-1 agree':>12} {'max abs diff':>13} "
          f"{'max |value|':>12} {'max rel diff':>13}")
    for label, a, b in rows:
        agree = float(np.mean(a["logits"].argmax(axis=1) == b["logits"].argmax(axis=1)))
        for name in ("logits", "probabilities"):
            diff = np.abs(a[name].astype(np.float64) - b[name].astype(np.float64))
            rel = diff / np.maximum(np.abs(b[name].astype(np.float64)), 1e-12)
            print(f"{label:<40} {name:<14} {agree:>12.2%} {diff.max():>13.3g} "
                  f"{np.abs(b[name]).max():>12.3g} {rel.max():>13.3g}")
    return 0


def _outputs(run: Callable[[np.ndarray], dict], inputs: list[np.ndarray]
             ) -> dict[str, np.ndarray]:
    """``logits`` and ``probabilities`` over the batch (the IR's softmax output has no
    tensor name of its own: it is the output that is not ``logits``)."""
    per_input = [run(x) for x in inputs]
    other = next(k for k in per_input[0] if k != "logits")
    return {"logits": np.concatenate([np.asarray(o["logits"]) for o in per_input]),
            "probabilities": np.concatenate([np.asarray(o[other]) for o in per_input])}


if __name__ == "__main__":
    sys.exit(main())
