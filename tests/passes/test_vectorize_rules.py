"""The vectoriser's batching rules (``irtool.passes.vectorize``: ``_elementwise``,
``_matmul``, ``_gather``, the axes rules ...), one configuration at a time.

Each ONNX case is a Loop over the rows of ``X`` (row ``x_i = Gather(X, i)``) whose body
applies one op, named ``op``, in one configuration its rule tells apart: which operands
change per iteration, their ranks, the axis (negative or not), the indices' rank. A case
either vectorises (no Loop left in the IR, the IR valid, irtool's runtime on it equals
onnxruntime; the Loop kept by ``vectorize=False`` and run as a loop equals it too) or is
refused (the Loop stays, ``why_not`` names the op and the reason, and irtool still equals
onnxruntime). Forms the ONNX converter never writes (Gather-1, a Gather with batch_dims, a
MatMul with transposes or none of its attributes, ``auto_broadcast`` none or pdpd,
negative or out-of-range axes in IR) are made by editing the converted body, or built as
TensorIterators in IR; their expected values are onnxruntime's where the edit keeps the
meaning (Gather-1 without batch_dims is Gather-8 with 0, a 1-D operand ignores
``transpose_*``), else hand numpy's.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper
from support.compare import assert_same
from support.conversion import check_conversion, loop_layers, make_model, run_onnxruntime, vi

import irtool
from irtool.ir import ConstData, Model, element_type
from irtool.passes.vectorize import VectorizeLoops, why_not
from irtool.runtime import Executor

F32, I64, BOOL = np.float32, np.int64, np.bool_
N = 5  # rows: iterations


def _rand(*shape: int, seed: int = 0) -> np.ndarray:
    return np.random.default_rng(seed + sum(shape)).standard_normal(shape).astype(F32)


def _ints(high: int, *shape: int, seed: int = 1) -> np.ndarray:
    return np.random.default_rng(seed).integers(0, high, shape).astype(I64)


# ---------------------------------------------------------------------------
# ONNX Loops over the rows of X


class Case:
    """A Loop over the rows of the ``scanned`` inputs (``x_i``, ``k_i``, ... for X, K)
    whose body ``nodes`` compute ``y`` (scan output ``Y``); the other ``feeds`` are
    graph inputs the body reads as invariant values, ``inits`` initializers (constants
    in the body). The trip count is ``Shape(X)[0]`` over one scanned input, a constant
    ``N`` over several (every scanned input then has a static length ``N``). The other
    dims are static unless ``dynamic``."""

    def __init__(self, nodes: list, feeds: dict[str, np.ndarray], *,
                 inits: dict[str, np.ndarray] | None = None, scanned: tuple[str, ...] = ("X",),
                 out: type = F32, dynamic: bool = False) -> None:
        self.nodes, self.feeds, self.inits = nodes, feeds, inits or {}
        self.scanned, self.out, self.dynamic = scanned, out, dynamic

    def model(self) -> object:
        one = len(self.scanned) == 1
        rows = [helper.make_node("Gather", [s, "i"], [f"{s.lower()}_i"], axis=0)
                for s in self.scanned]
        body = helper.make_graph(
            [*rows, *self.nodes, helper.make_node("Identity", ["cond_in"], ["cond_out"])],
            "body", [vi("i", I64, []), vi("cond_in", BOOL, [])],
            [vi("cond_out", BOOL, []), vi("y", self.out, None)])
        if one:
            trip = [helper.make_node("Shape", ["X"], ["shape"]),
                    helper.make_node("Constant", [], ["axis0"], value_int=0),
                    helper.make_node("Gather", ["shape", "axis0"], ["trip"], axis=0)]
        else:
            trip = [helper.make_node("Constant", [], ["trip"], value=numpy_helper.from_array(
                np.array(N, I64)))]
        cond = helper.make_node("Constant", [], ["cond"], value=helper.make_tensor(
            "c", TensorProto.BOOL, [], [True]))
        loop = helper.make_node("Loop", ["trip", "cond"], ["Y"], body=body)
        inputs = [vi(k, v.dtype, [None] * v.ndim if self.dynamic and k in self.scanned else
                     [None if one else N, *v.shape[1:]] if k in self.scanned else
                     list(v.shape)) for k, v in self.feeds.items()]
        inits = [numpy_helper.from_array(v, k) for k, v in self.inits.items()]
        return make_model([*trip, cond, loop], inputs, [vi("Y", self.out, None)],
                          initializers=inits)


def node(op: str, inputs: list[str], out: str = "y", **attrs: object) -> object:
    """An ONNX node named after its output (the op under test: ``op``, output ``y``)."""
    return helper.make_node(op, inputs, [out], name="op" if out == "y" else out, **attrs)


def ints_const(name: str, values: object) -> object:
    return helper.make_node("Constant", [], [name], name=name,
                            value=numpy_helper.from_array(np.array(values, I64)))


X2, X3, X4 = _rand(N, 3, 4), _rand(N, 2, 3, 4), _rand(N, 2, 3, 3, seed=4)
K2 = _ints(3, N, 2)  # per-iteration indices below 3

ELEMENTWISE: dict[str, Callable[[], Case]] = {
    "row + invariant, same rank": lambda: Case(
        [node("Add", ["x_i", "B"])], {"X": X2, "B": _rand(3, 4)}),
    "invariant matrix + row vector": lambda: Case(
        [node("Add", ["M", "x_i"])], {"X": _rand(N, 4), "M": _rand(3, 4)}),
    "row vector - invariant rank 3": lambda: Case(
        [node("Sub", ["x_i", "M"])], {"X": _rand(N, 4), "M": _rand(2, 3, 4)}),
    "rank-3 row * its rank-1 sum": lambda: Case(
        [ints_const("ax01", [0, 1]),
         node("ReduceSum", ["x_i", "ax01"], "s", keepdims=0), node("Mul", ["s", "x_i"])],
        {"X": X3}),
    "scalar iteration number + row matrix": lambda: Case(
        [node("Cast", ["i"], "fi", to=TensorProto.FLOAT), node("Add", ["fi", "x_i"])],
        {"X": X2}),
    "where: row condition, invariant branch": lambda: Case(
        [node("Constant", [], "zero", value=numpy_helper.from_array(np.array(0, F32))),
         node("Greater", ["x_i", "zero"], "pos"), node("Where", ["pos", "x_i", "B"])],
        {"X": X2, "B": _rand(4)}),
}

MATMUL_VECTORISED: dict[str, Callable[[], Case]] = {
    "row matrix @ its transpose (both per iteration, rank 2)": lambda: Case(
        [node("Transpose", ["x_i"], "t"), node("MatMul", ["x_i", "t"])], {"X": X2}),
    "both per iteration, rank 3": lambda: Case([node("MatMul", ["x_i", "x_i"])], {"X": X4}),
    "row matrix @ invariant matrix": lambda: Case(
        [node("MatMul", ["x_i", "W"])], {"X": X2, "W": _rand(4, 2)}),
    "row matrix @ invariant vector": lambda: Case(
        [node("MatMul", ["x_i", "W"])], {"X": X2, "W": _rand(4)}),
    "row rank 3 @ invariant matrix": lambda: Case(
        [node("MatMul", ["x_i", "W"])], {"X": X3, "W": _rand(4, 2)}),
    "row rank 3 @ invariant rank 3": lambda: Case(
        [node("MatMul", ["x_i", "W"])], {"X": X3, "W": _rand(2, 4, 5)}),
    "row vector @ invariant matrix": lambda: Case(
        [node("MatMul", ["x_i", "W"])], {"X": _rand(N, 4), "W": _rand(4, 3)}),
    "invariant matrix @ row matrix": lambda: Case(
        [node("MatMul", ["W", "x_i"])], {"X": X2, "W": _rand(2, 3)}),
    "invariant vector @ row matrix": lambda: Case(
        [node("MatMul", ["W", "x_i"])], {"X": X2, "W": _rand(3)}),
    "invariant rank 3 @ row rank 3": lambda: Case(
        [node("MatMul", ["W", "x_i"])], {"X": X3, "W": _rand(2, 5, 3)}),
    "invariant matrix @ row vector": lambda: Case(
        [node("MatMul", ["W", "x_i"])], {"X": _rand(N, 4), "W": _rand(3, 4)}),
    "Gemm: row^T @ invariant^T": lambda: Case(
        [node("Gemm", ["x_i", "W"], transA=1, transB=1)], {"X": X2, "W": _rand(2, 3)}),
    "Gemm: invariant^T @ row^T": lambda: Case(
        [node("Gemm", ["W", "x_i"], transA=1, transB=1)], {"X": X2, "W": _rand(4, 2)}),
}

_RANKS = "body MatMul 'op' of ranks {} and {} (transposed: False, False) with these sides " \
    "per iteration"
MATMUL_REFUSED: dict[str, tuple[Callable[[], Case], str]] = {
    "both per iteration, vectors": (lambda: Case(
        [node("MatMul", ["x_i", "x_i"])], {"X": _rand(N, 4)}), _RANKS.format(1, 1)),
    "both per iteration, matrix @ vector": (lambda: Case(
        [ints_const("ax0", [0]), node("ReduceSum", ["x_i", "ax0"], "s", keepdims=0),
         node("MatMul", ["x_i", "s"])], {"X": X2}), _RANKS.format(2, 1)),
    "row vector . invariant vector": (lambda: Case(
        [node("MatMul", ["x_i", "W"])], {"X": _rand(N, 4), "W": _rand(4)}),
        _RANKS.format(1, 1)),
    "row vector @ invariant rank 3": (lambda: Case(
        [node("MatMul", ["x_i", "W"])], {"X": _rand(N, 4), "W": _rand(2, 4, 3)}),
        _RANKS.format(1, 3)),
    "row matrix @ invariant rank 3": (lambda: Case(
        [node("MatMul", ["x_i", "W"])], {"X": X2, "W": _rand(2, 4, 3)}),
        _RANKS.format(2, 3)),
    "invariant vector . row vector": (lambda: Case(
        [node("MatMul", ["W", "x_i"])], {"X": _rand(N, 4), "W": _rand(4)}),
        _RANKS.format(1, 1)),
    "invariant rank 3 @ row vector": (lambda: Case(
        [node("MatMul", ["W", "x_i"])], {"X": _rand(N, 4), "W": _rand(2, 3, 4)}),
        _RANKS.format(3, 1)),
    "invariant rank 3 @ row matrix": (lambda: Case(
        [node("MatMul", ["W", "x_i"])], {"X": X2, "W": _rand(2, 2, 3)}),
        _RANKS.format(3, 2)),
}

GATHER: dict[str, Callable[[], Case]] = {
    # the row of an input at the iteration number: all of the input
    "whole: X at i along axis -1": lambda: Case(
        [node("Gather", ["X", "i"], axis=-1)], {"X": _rand(N, N), "K": K2},
        scanned=("X", "K")),
    # per-iteration data, invariant indices
    "row at constant indices, axis 0": lambda: Case(
        [node("Gather", ["x_i", "I"], axis=0)], {"X": X2}, inits={"I": np.array([2, 0], I64)}),
    "row at constant indices, axis 1": lambda: Case(
        [node("Gather", ["x_i", "I"], axis=1)], {"X": X2},
        inits={"I": np.array([[3, 0], [1, 1]], I64)}),
    "rank-3 row at a constant index, axis -2": lambda: Case(
        [node("Gather", ["x_i", "I"], axis=-2)], {"X": X3}, inits={"I": np.array(2, I64)}),
    "row at invariant indices, axis 1": lambda: Case(
        [node("Gather", ["x_i", "J"], axis=1)], {"X": X2, "J": np.array([3, 1, 3], I64)}),
    # per-iteration data and indices: batch_dims 1
    "row at per-iteration indices, axis 0": lambda: Case(
        [node("Gather", ["x_i", "k_i"], axis=0)], {"X": X2, "K": K2}, scanned=("X", "K")),
    "row at per-iteration indices, axis 1": lambda: Case(
        [node("Gather", ["x_i", "k_i"], axis=1)], {"X": X2, "K": K2}, scanned=("X", "K")),
    "rank-3 row at a per-iteration index, axis -1": lambda: Case(
        [ints_const("zero", 0), node("Gather", ["k_i", "zero"], "k", axis=0),
         node("Gather", ["x_i", "k"], axis=-1)], {"X": X3, "K": K2}, scanned=("X", "K")),
    # invariant data, per-iteration indices: the iteration axis lands at the gather axis
    "invariant matrix at per-iteration indices, axis 0": lambda: Case(
        [node("Gather", ["W", "k_i"], axis=0)], {"X": X2, "K": K2, "W": _rand(3, 4)},
        scanned=("X", "K")),
    "invariant matrix at per-iteration indices, axis 1": lambda: Case(
        [node("Gather", ["W", "k_i"], axis=1)], {"X": X2, "K": K2, "W": _rand(4, 3)},
        scanned=("X", "K")),
    "invariant rank 3 at per-iteration indices, axis 0": lambda: Case(
        [node("Gather", ["W", "k_i"], axis=0)], {"X": X2, "K": K2, "W": _rand(3, 4, 5)},
        scanned=("X", "K")),
    "invariant rank 3 at per-iteration indices, axis 1": lambda: Case(
        [node("Gather", ["W", "k_i"], axis=1)], {"X": X2, "K": K2, "W": _rand(4, 3, 5)},
        scanned=("X", "K")),
    "invariant rank 3 at per-iteration indices, axis -1": lambda: Case(
        [node("Gather", ["W", "k_i"], axis=-1)], {"X": X2, "K": K2, "W": _rand(4, 5, 3)},
        scanned=("X", "K")),
    "constant rows at the iteration number": lambda: Case(
        [node("Gather", ["C", "i"], axis=0)], {"X": X2}, inits={"C": _rand(N, 4)}),
    "constant columns at the iteration number": lambda: Case(
        [node("Gather", ["C", "i"], axis=1)], {"X": X2}, inits={"C": _rand(2, N, 3)}),
    "invariant input at minus the iteration number": lambda: Case(
        [node("Neg", ["i"], "j"), node("Gather", ["W", "j"], axis=0)],
        {"X": X2, "W": _rand(N, 4)}),
}

AXES: dict[str, Callable[[], Case]] = {
    "ReduceMax over axes 0 and -1, kept": lambda: Case(
        [node("ReduceMax", ["x_i"], axes=[0, -1], keepdims=1)], {"X": X3}),
    "ReduceSum over axis -3": lambda: Case(
        [ints_const("ax", [-3]), node("ReduceSum", ["x_i", "ax"], keepdims=0)], {"X": X3}),
    "Unsqueeze at -1 and 0": lambda: Case(
        [ints_const("ax", [-1, 0]), node("Unsqueeze", ["x_i", "ax"])], {"X": X2}),
    "Squeeze at -2": lambda: Case(
        [ints_const("ax", [-2]), node("Squeeze", ["x_i", "ax"])], {"X": _rand(N, 3, 1, 4)}),
    "Squeeze of one of two 1-dims": lambda: Case(
        [ints_const("ax", [0]), node("Squeeze", ["x_i", "ax"])], {"X": _rand(N, 1, 3, 1)}),
    "Squeeze without axes": lambda: Case(
        [node("Squeeze", ["x_i"])], {"X": _rand(N, 1, 3, 1)}),
    "Concat along -2": lambda: Case(
        [node("Neg", ["x_i"], "n"), node("Concat", ["x_i", "n"], axis=-2)], {"X": X3}),
    "Transpose, reversed": lambda: Case([node("Transpose", ["x_i"])], {"X": X3}),
    "Transpose by a perm": lambda: Case([node("Transpose", ["x_i"], perm=[2, 0, 1])], {"X": X3}),
    "Softmax along -2": lambda: Case([node("Softmax", ["x_i"], axis=-2)], {"X": X3}),
}

AXES_REFUSED: dict[str, tuple[Callable[[], Case], str]] = {
    "Concat of a row and an invariant value": (lambda: Case(
        [node("Concat", ["x_i", "B"], axis=0)], {"X": X2, "B": _rand(1, 4)}),
        "body Concat 'op' joins per-iteration and invariant values"),
    "ReduceSum over per-iteration axes": (lambda: Case(
        [node("ReduceSum", ["x_i", "k_i"], keepdims=1)], {"X": X2, "K": np.ones((N, 1), I64)},
        scanned=("X", "K")), "the axes of body layer 'op' differ per iteration"),
    "ReduceSum over invariant axes given at run time": (lambda: Case(
        [node("ReduceSum", ["x_i", "A"], keepdims=1)], {"X": X2, "A": np.array([1], I64)}),
        "the axes of body layer 'op' are not constant"),
}

VECTORISED = {**ELEMENTWISE, **MATMUL_VECTORISED, **GATHER, **AXES}
REFUSED = {**MATMUL_REFUSED, **AXES_REFUSED}


def _close(got: dict, want: dict, who: str) -> None:
    assert_same(got, want, who, rtol=1e-5, atol=1e-5, float_dtypes=False)


def _the_loop(model: Model) -> object:
    (loop,) = loop_layers(model) or loop_layers(model, "TensorIterator")
    return loop


def _vectorised(model: object, feeds: dict, expected: dict) -> None:
    """The converted IR has no Loop, validates, and irtool's runtime on it gives
    ``expected``; the Loop kept (vectorize=False) has a batched form and, run as a loop,
    gives ``expected`` too."""
    ir = irtool.convert(model)
    assert not loop_layers(ir)
    problems = [p.format() for p in irtool.validate(ir) if p.severity == "error"]
    assert not problems, problems
    _close(Executor(ir).run(feeds), expected, "irtool, vectorised")
    kept = irtool.convert(model, vectorize=False)
    assert why_not(_the_loop(kept)) is None
    _close(Executor(kept, vectorize=False).run(feeds), expected, "irtool, as a loop")


def _refused(model: object, feeds: dict, expected: dict, why: str) -> None:
    """The Loop stays, ``why_not`` says ``why``, and irtool still gives ``expected``."""
    ir = irtool.convert(model)
    assert why_not(_the_loop(ir)) == f"Loop 'Y': {why}"
    _close(Executor(ir).run(feeds), expected, "irtool")


@pytest.mark.parametrize("case", list(VECTORISED))
def test_rule_vectorises_and_matches_onnxruntime(case: str) -> None:
    c = VECTORISED[case]()
    model = c.model()
    _vectorised(model, c.feeds, run_onnxruntime(model, c.feeds))


@pytest.mark.parametrize("case", list(REFUSED))
def test_rule_refuses_and_says_why(case: str) -> None:
    make, why = REFUSED[case]
    c = make()
    model = c.model()
    _refused(model, c.feeds, run_onnxruntime(model, c.feeds), why)


@pytest.mark.parametrize("case", ["invariant rank 3 at per-iteration indices, axis 1",
                                  "row at per-iteration indices, axis 1",
                                  "row at constant indices, axis 1",
                                  "invariant matrix @ row vector"])
def test_openvino_runs_the_vectorised_ir(case: str, tmp_path: Path) -> None:
    """OpenVINO on the vectorised IR (a transpose after an invariant-data Gather, a
    batch_dims Gather, a transposed MatMul) equals onnxruntime too."""
    c = VECTORISED[case]()
    model = c.model()
    ir = check_conversion(model, c.feeds, tmp_path, atol=1e-5, checker=False,
                          expected=run_onnxruntime(model, c.feeds))
    assert not loop_layers(ir)


# ---------------------------------------------------------------------------
# The converted body edited into forms the ONNX converter does not write


class Edited:
    """A case converted with its Loop kept, the body's layer ``op`` at hand to edit."""

    def __init__(self, case: Case) -> None:
        self.case = case
        self.onnx = case.model()
        self.ir = irtool.convert(self.onnx, vectorize=False)
        self.loop = _the_loop(self.ir)
        self.body = self.loop.bodies["body"]
        (self.op,) = [layer for layer in self.body.layers if layer.name == "op"]

    def source(self, index: int) -> object:
        src = self.body.sources()[(self.op.id, self.op.inputs[index].id)]
        return self.body.layer(src[0])

    def set_const(self, index: int, value: np.ndarray) -> None:
        """Input ``index`` of ``op`` (a Const read by ``op`` only) now holds ``value``."""
        const = self.source(index)
        assert const.type == "Const" and len(self.body.consumers(const.id)) == 1
        old = const.const_value()
        const.const = ConstData.from_array(np.asarray(value, old.dtype).reshape(old.shape))

    def rewire(self, index: int, layer_name_or_type: str) -> None:
        """Input ``index`` of ``op`` now reads the first output of that body layer."""
        (src,) = [layer for layer in self.body.layers
                  if layer_name_or_type in (layer.name, layer.type)]
        self.body.disconnect_input(self.op.id, self.op.inputs[index].id)
        self.body.connect(src.id, src.outputs[0].id, self.op.id, self.op.inputs[index].id)

    def why(self) -> str | None:
        return why_not(self.loop)

    def check(self, expected: dict | None = None) -> None:
        """The edited loop has a batched form; as a loop and vectorised in the IR (no loop
        left) irtool gives ``expected`` (onnxruntime's on the unedited model if None)."""
        feeds = self.case.feeds
        want = run_onnxruntime(self.onnx, feeds) if expected is None else expected
        assert self.why() is None
        _close(Executor(self.ir, vectorize=False).run(feeds), want, "irtool, as a loop")
        assert VectorizeLoops()(self.ir).changes == 1
        assert not loop_layers(self.ir)
        _close(Executor(self.ir).run(feeds), want, "irtool, vectorised")

    def check_refused(self, why: str, expected: dict | None = None) -> None:
        """Refused for ``why``; run as a loop irtool still gives ``expected``."""
        assert self.why() == f"Loop 'Y': {why}"
        feeds = self.case.feeds
        want = run_onnxruntime(self.onnx, feeds) if expected is None else expected
        _close(Executor(self.ir).run(feeds), want, "irtool")


def _rank_of(e: Edited) -> int:
    """The rank the op's axes count in: its output's for Unsqueeze, else its input's."""
    port = e.op.outputs[0] if e.op.type == "Unsqueeze" else e.op.inputs[0]
    return len(port.dims)


def _axes_at(e: Edited) -> int | None:
    """Which input of ``op`` holds its axes (None: the ``axis`` attribute)."""
    return {"Gather": 2, "Concat": None, "SoftMax": None}.get(e.op.type, 1)


WITH_AXES = [name for name, make in {**GATHER, **AXES}.items()
             if not name.startswith(("Transpose", "Squeeze without"))]


@pytest.mark.parametrize("case", WITH_AXES)
def test_negative_axes_are_the_same_axes(case: str) -> None:
    """The IR's axes written negative (``a - rank``; the ONNX converter writes them
    non-negative): the same batched values, onnxruntime's."""
    e = Edited(VECTORISED[case]())
    rank, at = _rank_of(e), _axes_at(e)
    if at is None:
        e.op.attrs["axis"] = str(int(e.op.attrs["axis"]) - rank)
    else:
        axes = e.source(at).const_value()
        e.set_const(at, np.where(axes >= 0, axes - rank, axes))
    e.check()


@pytest.mark.parametrize("case", [*[c for c in WITH_AXES if not c.startswith("Softmax")],
                                  "Transpose by a perm"])
def test_an_axis_past_the_rank_is_refused(case: str) -> None:
    """An axis equal to the rank (the IR invalid, which ``why_not`` may still be asked
    about) is refused with the axis, the layer and the rank named."""
    e = Edited(VECTORISED[case]())
    rank, at = _rank_of(e), _axes_at(e)
    if at is None:
        e.op.attrs["axis"] = str(rank)
    else:
        axes = e.source(at).const_value()
        e.set_const(at, np.full(axes.shape, rank))
    assert e.why() == f"Loop 'Y': axis {rank} of body layer 'op' is outside rank {rank}"


GATHER_BATCH_DIMS = [name for name in GATHER if "row at" in name and "per-iteration" in name]


@pytest.mark.parametrize("case", list(GATHER))
def test_gather_1(case: str) -> None:
    """Gather-1 (no batch_dims; the same values as Gather-8 with 0) batches as Gather-8
    does, but where data and indices both change per iteration, which needs batch_dims."""
    e = Edited(VECTORISED[case]())
    e.op.version = "opset1"
    del e.op.attrs["batch_dims"]
    if case in GATHER_BATCH_DIMS:
        e.check_refused("body Gather-1 'op' has no batch_dims")
    else:
        e.check()


def test_gather_with_batch_dims_in_the_body_is_refused() -> None:
    e = Edited(GATHER["row at per-iteration indices, axis 1"]())
    e.op.attrs["batch_dims"] = "1"
    assert e.why() == "Loop 'Y': body Gather 'op' with batch_dims or a per-iteration axis"


def test_gather_along_a_per_iteration_axis_is_refused() -> None:
    e = Edited(GATHER["rank-3 row at a per-iteration index, axis -1"]())
    e.rewire(2, "k")  # the axis: k, an index of each iteration
    assert e.why() == "Loop 'Y': body Gather 'op' with batch_dims or a per-iteration axis"


def test_gather_along_an_axis_given_at_run_time_is_refused() -> None:
    e = Edited(GATHER["row at invariant indices, axis 1"]())
    e.rewire(2, "J/capture")  # the axis: the invariant input J
    assert e.why() == "Loop 'Y': the axis of body layer 'op' are not constant"


MATMULS = [name for name in MATMUL_VECTORISED if not name.startswith("Gemm")]


@pytest.mark.parametrize("case", [*MATMULS, *MATMUL_REFUSED])
def test_matmul_without_transpose_attributes(case: str) -> None:
    """A MatMul without ``transpose_a``/``transpose_b`` (both false by default) batches,
    or is refused, as with them written false."""
    refused = MATMUL_REFUSED.get(case)
    e = Edited(refused[0]() if refused else VECTORISED[case]())
    for name in ("transpose_a", "transpose_b"):
        del e.op.attrs[name]
    if refused:
        e.check_refused(refused[1])
    else:
        e.check()


def _matmul_case(order: list[str], w: np.ndarray) -> Case:
    return Case([node("MatMul", order)], {"X": _rand(N, 4), "W": w})


W4 = _rand(4, 4, seed=9)


@pytest.mark.parametrize("flag", ["true", "1", "True"])
def test_invariant_matrix_transposed_times_a_row_vector(flag: str) -> None:
    """``W^T @ x_i`` for every row (``transpose_a`` on the invariant matrix; on the 1-D row
    ``transpose_b`` means nothing) is ``X @ W``: hand numpy's."""
    e = Edited(_matmul_case(["W", "x_i"], W4))
    e.op.attrs.update(transpose_a=flag, transpose_b=flag)
    x = e.case.feeds["X"]
    e.check({"Y": np.stack([W4.T @ row for row in x])})


@pytest.mark.parametrize("flags", [("true", "false"), ("1", "1"), ("false", "true")])
def test_row_vector_times_an_invariant_matrix_transposed(flags: tuple[str, str]) -> None:
    """``x_i @ W`` with ``transpose_a`` (meaning nothing on the 1-D row) and
    ``transpose_b`` (``W^T``): hand numpy's."""
    e = Edited(_matmul_case(["x_i", "W"], W4))
    e.op.attrs.update(transpose_a=flags[0], transpose_b=flags[1])
    w = W4.T if flags[1] in ("true", "1") else W4
    e.check({"Y": np.stack([row @ w for row in e.case.feeds["X"]])})


@pytest.mark.parametrize("flags", [("true", "1"), ("false", "true"), ("1", "false")])
def test_a_refused_matmul_names_its_transposes(flags: tuple[str, str]) -> None:
    """The refusal names the ranks and both transposes (on vectors they mean nothing:
    onnxruntime's values)."""
    e = Edited(_matmul_case(["x_i", "W"], _rand(4)))
    e.op.attrs.update(transpose_a=flags[0], transpose_b=flags[1])
    ta, tb = (str(f in ("true", "1")) for f in flags)
    e.check_refused(f"body MatMul 'op' of ranks 1 and 1 (transposed: {ta}, {tb}) with these "
                    "sides per iteration")


@pytest.mark.parametrize("mode", ["none", "NONE", "Numpy"])
def test_elementwise_broadcast_none_or_numpy(mode: str) -> None:
    """``auto_broadcast`` none (equal shapes, in any case of letters) or numpy: the
    batched op broadcasts the numpy way (the row has one more axis than the invariant)."""
    e = Edited(ELEMENTWISE["row + invariant, same rank"]())
    e.op.attrs["auto_broadcast"] = mode
    e.check()


@pytest.mark.parametrize("mode", ["pdpd", "explicit"])
def test_elementwise_broadcast_otherwise_is_refused(mode: str) -> None:
    e = Edited(ELEMENTWISE["row + invariant, same rank"]())
    e.op.attrs["auto_broadcast"] = mode
    e.check_refused(f"body layer 'op' broadcasts the {mode} way")


def test_squeeze_without_axes_of_a_static_0_dim() -> None:
    """Rows [1, 0, 3] squeezed without axes: every static 1 goes, the 0 stays; batched."""
    e = Edited(Case([node("Squeeze", ["x_i"])], {"X": np.zeros((N, 1, 0, 3), F32)}))
    e.body.disconnect_input(e.op.id, e.op.inputs[1].id)
    e.op.inputs.pop()
    e.check({"Y": np.zeros((N, 0, 3), F32)})


@pytest.mark.parametrize("rows", [1, N])
def test_squeeze_of_an_empty_axes_list_keeps_the_iteration_axis(rows: int) -> None:
    """Squeeze-1 of an empty axes list squeezes every 1-dim of the row; batched, the
    list must not stay empty, or a loop of one iteration loses its axis ([3] for [1, 3]).
    (The axes [0, 2] the model is made with mean the same: its shapes stay true.)"""
    x = _rand(rows, 1, 3, 1)
    e = Edited(Case([ints_const("ax", [0, 2]), node("Squeeze", ["x_i", "ax"])], {"X": x}))
    const = e.source(1)
    const.const, const.attrs["shape"] = ConstData.from_array(np.zeros(0, I64)), "0"
    const.outputs[0].dims = e.op.inputs[1].dims = [0]
    e.check({"Y": x.reshape(rows, 3)})


def test_squeeze_over_the_iteration_number_is_refused() -> None:
    """Axes that differ per iteration (an IR edit: the ONNX converter writes a run-time
    Squeeze as a Reshape) are refused as such, not as "not constant"."""
    e = Edited(AXES["Squeeze at -2"]())
    e.rewire(1, "i")
    assert e.why() == "Loop 'Y': the axes of body layer 'op' differ per iteration"


def test_squeeze_without_axes_of_a_dynamic_shape_is_refused() -> None:
    c = Case([node("Squeeze", ["x_i"])], {"X": _rand(N, 1, 3, 1)}, dynamic=True)
    model = c.model()
    _refused(model, c.feeds, run_onnxruntime(model, c.feeds),
             "body Squeeze 'op' without axes on a dynamic shape")


def test_axes_of_a_type_numpy_cannot_hold_are_refused() -> None:
    """ReduceSum over u1 axes (bit-packed: no numpy dtype holds them) in a TensorIterator
    body: the shifted axes could not be written back as u1 (the batched form once held an
    f64 array typed u1, an invalid Const), so the loop stays, and runs as numpy sums."""
    from support.ir_builders import Net, finish, info

    x = np.arange(24, dtype=F32).reshape(4, 2, 3)
    body, net = Net(), Net()
    row = body.param("row", "f32", (1, 2, 3))
    axes = body.builder.const(np.packbits(np.array([1], np.uint8)), element_type("u1"))
    result = body.result(body.op("ReduceSum", "opset1", [row, axes], {"keep_dims": "true"},
                                 shape=(1, 1, 3), name="op"))
    ti = net.tensor_iterator(body, "ti")
    ti.sliced(net.param("x", "f32", x.shape), row, axis=0)
    ti.output(result, info("f32", (4, 1, 3)), axis=0, names=["y"])
    model = finish(net, ti)
    assert why_not(_the_loop(model)) == \
        "TensorIterator 'ti': the axes of body layer 'op' are of type u1"
    assert VectorizeLoops()(model).changes == 0
    _close(Executor(model).run({"x": x}), {"y": x.sum(axis=1, keepdims=True)}, "irtool")
