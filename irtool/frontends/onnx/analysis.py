"""ONNX's checker and shape inference, run in a worker process so that no crash of theirs
ends irtool's.

Both are C++ inside the ``onnx`` package, and some invalid models make them abort the
process that calls them (a Split whose ``num_outputs`` is smaller than its outputs: an
assertion in shape inference, SIGABRT). ``analyse`` hands the serialized model to one
worker of ``irtool.core.workers`` (``python -m irtool.frontends.onnx.analysis``), kept for
later calls in this process and started early by ``prestart`` so that a conversion rarely
waits for it. The worker runs with its packages uninitialised (``Pool(bare_package=True)``),
so that it loads onnx and nothing of the frontend. A
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
from typing import Any

import onnx

from ...core.workers import Pool, serve

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
        # bare_package: the worker needs onnx and irtool.core.workers, not irtool's API, whose
        # imports took most of its start-up (which a conversion may wait for).
        _pool = Pool("irtool.frontends.onnx.analysis", name="ONNX's checker and shape inference",
                     timeout=TIMEOUT_S, bare_package=True)
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


WEIGHTLESS_ELEMENTS = 4096
"""Main-graph initializers with more elements than this reach the worker as graph inputs of
the same type and shape, without their data: ONNX's checker and shape inference need only
their types, and serialising the weights (hundreds of MB for large models) cost most of a
conversion's time and twice the weights in memory. Smaller ones go as they are: shape
inference's data propagation reads the values of shape-like constants, which are small."""


def weightless(model: onnx.ModelProto) -> onnx.ModelProto:
    """A copy of ``model`` whose large main-graph initializers are typed graph inputs
    instead; everything else (nodes and their bodies, small initializers) as it is."""
    light = onnx.ModelProto()
    _copy_fields(model, light, skip="graph")
    src, dst = model.graph, light.graph
    _copy_fields(src, dst, skip="initializer")
    declared = {vi.name for vi in src.input}
    for tensor in src.initializer:
        count = 1
        for d in tensor.dims:
            count *= d
        if count <= WEIGHTLESS_ELEMENTS or tensor.name in declared:
            # (An initializer also declared as an input keeps its data: moving it would
            # declare the input twice.)
            dst.initializer.append(tensor)
            continue
        vi = dst.input.add()
        vi.name = tensor.name
        tt = vi.type.tensor_type
        tt.elem_type = tensor.data_type
        tt.shape.SetInParent()
        for d in tensor.dims:
            tt.shape.dim.add().dim_value = d
    _unplace_external(light)
    return light


def _unplace_external(model: onnx.ModelProto) -> None:
    """Point the external tensors left in ``model`` at no file: the worker gets bytes, not
    the model's folder, so the checker would look for their files in its working folder.
    ONNX's checker does not look for a location starting with ``#`` (its mark for data
    held in memory), and shape inference reads no external data either way."""
    from .protos import walk_tensors

    tensors = list(walk_tensors(model.graph))
    for function in model.functions:
        for node in function.node:
            for attr in node.attribute:
                if attr.HasField("t"):
                    tensors.append(attr.t)
                tensors.extend(attr.tensors)
    for tensor in tensors:
        if tensor.data_location == onnx.TensorProto.EXTERNAL:
            for entry in tensor.external_data:
                if entry.key == "location" and not entry.value.startswith("#"):
                    entry.value = "#" + entry.value


def _copy_fields(src: Any, dst: Any, skip: str) -> None:
    """Copy every set field of message ``src`` into ``dst`` but ``skip``."""
    for field, value in src.ListFields():
        if field.name == skip:
            continue
        if field.is_repeated:
            getattr(dst, field.name).extend(value)
        elif field.message_type is not None:
            getattr(dst, field.name).CopyFrom(value)
        else:
            setattr(dst, field.name, value)


def take_inferred(model: onnx.ModelProto, inferred: onnx.ModelProto) -> None:
    """Write what shape inference found on ``weightless(model)`` (``inferred``) into
    ``model``: every graph's value_infos and the types of its inputs and outputs."""
    from .protos import subgraphs

    def graph(dst: onnx.GraphProto, src: onnx.GraphProto) -> None:
        del dst.value_info[:]
        dst.value_info.extend(src.value_info)
        # The weightless copy's inputs are the model's, then the moved initializers.
        for d, s in zip(dst.input, src.input):
            d.type.CopyFrom(s.type)
        for d, s in zip(dst.output, src.output):
            d.type.CopyFrom(s.type)
        for dn, sn in zip(dst.node, src.node):
            for (_, dg), (_, sg) in zip(subgraphs(dn), subgraphs(sn)):
                graph(dg, sg)

    graph(model.graph, inferred.graph)


def analyse(model: onnx.ModelProto) -> Analysis:
    """Check ``model`` and infer its shapes in the worker; never raises for the model.
    The worker gets ``weightless(model)``, so ``inferred`` is that copy with inferred
    value_infos: ``take_inferred`` puts them into the model."""
    try:
        data = weightless(model).SerializeToString()
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
    from .protos import subgraphs

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
