"""ONNX's checker and shape inference, run in a worker process so that no crash of theirs
ends irtool's.

Both are C++ inside the ``onnx`` package, and some invalid models make them abort the
process that calls them (a Split whose ``num_outputs`` is smaller than its outputs: an
assertion in shape inference, SIGABRT). ``analyse`` hands the serialized model to one
worker of ``irtool.workers`` (``python -m irtool.onnx_analysis``), kept for later calls
in this process and started early by ``prestart`` so that a conversion rarely waits for
it. This module sits beside ``irtool.onnx`` rather than in it so that the worker (and the
command line, which starts it first thing) loads onnx and nothing of the frontend. A
worker that dies or overruns is replaced, and the conversion goes on without ONNX's
help: the translators check what they rely on themselves and name the node.

The checker's verdict, past what it asks for beyond what ONNX runtimes need
(``TOLERATED``: real exporters write value_infos without a shape or a type, unnamed body
graphs, functions importing another opset version, nodes out of order; irtool lists
operators without a translator itself), refuses a model outright only where irtool would
misread it (``REFUSED``: attributes of the wrong type). Otherwise the converter is as
lenient as OpenVINO's own frontend (an extra input its translator ignores is no reason to
fail), and the verdict is the reason it gives if the conversion then fails.
"""

from __future__ import annotations

import atexit
import re
import sys
from dataclasses import dataclass

import onnx

from .workers import Pool, serve

TIMEOUT_S = 300.0
"""How long the checker and shape inference may take on one model (the samples take
milliseconds; a large model's serialization dominates)."""

TOLERATED = re.compile(
    r"Field '\w+' of '\w+' is required (but missing|to be non-empty)"
    r"|Opset import for domain .* is not compatible"
    r"|No Op registered for|No opset import for domain"
    r"|Nodes in a graph must be topologically sorted")
"""Checker refusals that onnxruntime and OpenVINO's own ONNX frontend run anyway."""


REFUSED = re.compile(r"Mismatched attribute type")
"""Checker refusals that the converter gives at once: it would misread such a model."""

_BAD_NODE = re.compile(r"Bad node spec for node\. Name: (\S*) OpType: (\S+)")


@dataclass(frozen=True)
class Analysis:
    """What ONNX says of a model: ``invalid`` is the checker's reason to refuse it (None:
    nothing irtool minds), ``inferred`` the model with inferred value_infos (None when
    inference failed), ``failure`` why the worker gave no answer (a signal, a time-out)."""

    invalid: str | None
    inferred: onnx.ModelProto | None
    failure: str | None = None


_pool: Pool | None = None


def _shared_pool() -> Pool:
    global _pool
    if _pool is None:
        _pool = Pool("irtool.onnx_analysis", name="ONNX's checker and shape inference",
                     timeout=TIMEOUT_S)
    return _pool


@atexit.register
def _stop() -> None:
    global _pool
    if _pool is not None:
        _pool.close()
        _pool = None


def prestart() -> None:
    """Start the worker now, without waiting for it (a conversion calls this first)."""
    _shared_pool().start()


def analyse(model: onnx.ModelProto) -> Analysis:
    """Check ``model`` and infer its shapes in the worker; never raises for the model."""
    try:
        data = model.SerializeToString()
    except ValueError as err:  # over protobuf's 2 GiB: neither can read it
        return Analysis(None, None, str(err))
    outcome = _shared_pool().call(data)
    if outcome.status != "ok":
        return Analysis(None, None, outcome.reason or outcome.status)
    refusal, inferred = outcome.value
    if refusal is not None and TOLERATED.search(refusal):
        refusal = None
    model_out = None
    if inferred is not None:
        try:
            model_out = onnx.load_from_string(inferred)
        except Exception:  # inference is a help: without it the translators still decide
            model_out = None
    return Analysis(refusal, model_out)


def check_and_infer(data: bytes) -> tuple[str | None, bytes | None]:
    """The worker's job: why the checker refuses the model, beyond what is ``TOLERATED``
    (None: nothing), and the model with ONNX's inferred value_infos (None when inference
    raised)."""
    refusal = _checker_refusal(data)
    try:
        # The C++ entry point takes and gives bytes: no protobuf parsing in this process.
        inferred = onnx.shape_inference.C.infer_shapes(data, False, False, True)
    except Exception:
        inferred = None
    return refusal, inferred


def _checker_refusal(data: bytes) -> str | None:
    """The checker's first complaint that is not ``TOLERATED``. It stops at its first one,
    so a tolerated complaint is mended on a copy (a shape or type added, a graph named) and
    the check runs again, until it passes or says something irtool minds."""
    model: onnx.ModelProto | None = None
    for _ in range(8):
        try:
            onnx.checker.check_model(data if model is None else model)
            return None
        except Exception as err:  # ValidationError: the reason is the answer
            text = str(err)
        lines = [ln for ln in text.strip().splitlines() if ln.strip()]
        refusal = lines[0] if lines else "the checker refuses the model"
        if not TOLERATED.search(refusal):
            node = _BAD_NODE.search(text)
            if node:  # the checker says which node only on a later line
                refusal = f"node {node.group(1) or node.group(2)}: {refusal}"
            return refusal
        if model is None:
            model = onnx.load_from_string(data)
        if not _mend(model):
            return None  # a tolerated complaint that cannot be mended: trust the rest
    return None


def _mend(model: onnx.ModelProto) -> bool:
    """Add what the checker asks for and runtimes do without; whether anything changed."""
    from .onnx.protos import subgraphs

    changed = False
    graphs = [model.graph]
    for graph in graphs:
        if not graph.name:
            graph.name, changed = f"graph{len(graphs)}", True
        for values in (graph.input, graph.output, graph.value_info):
            for vi in list(values):
                if not vi.HasField("type"):
                    values.remove(vi)
                    changed = True
                elif vi.type.HasField("tensor_type") and \
                        not vi.type.tensor_type.HasField("shape"):
                    vi.type.tensor_type.shape.SetInParent()
                    changed = True
        for node in graph.node:
            graphs.extend(sub for _, sub in subgraphs(node))
    return changed


if __name__ == "__main__":
    sys.exit(serve(check_and_infer))
