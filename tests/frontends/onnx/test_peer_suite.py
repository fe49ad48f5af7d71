"""The peer suite: OpenVINO's own ONNX-frontend control-flow test models, through irtool.

The models live in ``../shared/peer-tests/openvino-onnx`` (next to the repo,
verbatim ``.prototxt``); its README's table says what each tests and whether
OpenVINO's test expects success or an error. For every model expected to work:

* irtool converts it;
* irtool's runtime and OpenVINO on irtool's IR both match onnxruntime;
* where onnxruntime refuses the model (it is stricter than OpenVINO), both must
  match OpenVINO's own frontend (``read_model`` on the ``.onnx``) and, where
  that cannot run either, values derived by hand from the model text; and
  irtool's runtime must match OpenVINO on irtool's IR. Every disagreement is listed.

Models expected to fail must fail in ``irtool.convert`` with a one-line
``ConversionError``. Where the peer contradicts the ONNX spec we follow the spec
(``loop_concat_values``, ``loop_state_input_same_name_as_parent_with_invariant``;
see ``SPEC_OVERRIDES``).

Inputs follow the README: dynamic dims 2, bools True, integers 3 (trip counts
included), floats uniform in [0.5, 1.5) seeded from the file name; plus the
README's shapes for unknown ranks and N=3 for ``sal_dynamic_unit_split_loop_idiom``.
If models run a second time with every bool False, so both branches are checked.
"""

from __future__ import annotations

import os
import re
import zlib
from collections.abc import Callable
from pathlib import Path

import numpy as np
import onnx
import pytest
from google.protobuf import text_format
from support import SHARED

import irtool
from irtool.engines.base import EngineResult
from irtool.engines.isolate import Isolated
from irtool.engines.onnxruntime import OnnxRuntimeEngine
from irtool.engines.openvino import OpenVINOEngine, OpenVINOFrontendEngine
from irtool.engines.runtime import IrtoolEngine
from irtool.tools.compare import compare
from irtool.tools.inputs import input_specs

PEER = SHARED / "peer-tests" / "openvino-onnx"
# The README of the peer suite lists 75 models; a different count means a partial copy.
PEER_MODELS = 75
MISSING = ("PEER SUITE MISSING: {} not found, so none of OpenVINO's 75 control-flow "
           "peer models were run (this is not a pass)")


def _under_ci() -> bool:
    return os.environ.get("CI", "").lower() in ("1", "true", "yes")

# Expectations the README leaves open ("not referenced in the runner versions read"),
# decided by the ONNX spec.
UNREFERENCED = {
    # An If node with two inputs: not valid ONNX; every tool refuses it.
    "if_with_reducemean": "error",
    "loop_concat_growing_merged_dim": "success",
    "sal_dynamic_unit_split_loop_idiom": "success",
    "sal_sequence_at_loop_iter_index": "success",
    "sequence_empty_insert_concat": "success",
}
# Where the peer contradicts the ONNX spec, the spec wins.
SPEC_OVERRIDES = {
    # The body has 4 inputs for 1 loop-carried value: ONNX wants exactly 2 + N body inputs
    # (iteration number, condition, carried values); onnxruntime refuses it too.
    "loop_state_input_same_name_as_parent_with_invariant": "error",
    # The scan output changes shape per
    # iteration (invalid), and the carried state is numbered by ONNX iteration numbers.
    # Checked by check_concat_values.
    "loop_concat_values": "spec",
}
# Shapes from the README for inputs of unknown rank or a size rule.
SHAPES = {
    "if_dynamic_inputs": {"condition": (), "x": (4, 10), "y": (4, 10)},
    "scan15_dyn_rank": {"initial": (1, 3, 2), "initial_next": (1, 3, 2),
                        "seq_mul": (1, 3, 5, 2), "seq_div": (1, 5, 3, 2)},
    "scan15_dyn_rank_neg_axes": {"initial": (1, 3, 2), "initial_next": (1, 3, 2),
                                 "seq_mul": (1, 3, 5, 2), "seq_div": (1, 5, 3, 2)},
    # The Loop reads data[i] for i < trip count (3), so N must be at least 3.
    "sal_dynamic_unit_split_loop_idiom": {"data": (3,)},
}


def _loop_2d_add(iterations: int) -> Callable[[dict[str, np.ndarray]], dict[str, np.ndarray]]:
    """The loop_2d_add family by hand: each iteration a = a + [1, 1]; a_values stacks them."""

    def ref(feed: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        a = feed["a_init"].astype(np.float32)
        steps = [a + np.float32(k + 1) for k in range(iterations)]
        values = np.stack(steps) if steps else np.zeros((0, *a.shape), np.float32)
        return {"a_final": steps[-1] if steps else a, "a_values": values}

    return ref


# Values derived by hand from the model text, for models that neither onnxruntime nor
# OpenVINO's frontend can run (README: CPU compile fails on a dynamic-rank body Parameter).
HAND_DERIVED: dict[str, Callable[[dict[str, np.ndarray]], dict[str, np.ndarray]]] = {
    # trip count 3 (input), body cond i < 5: 3 iterations.
    "loop_2d_add_cond_and_trip_count_as_inputs": _loop_2d_add(3),
    # trip count 10, cond true, body cond i < 3: iterations i = 0..3 run (the one with
    # i = 3 computes cond false), so 4 iterations.
    "loop_2d_add_const_no_identity_termination_cond": _loop_2d_add(4),
    # trip count 3 (input), constant-true cond.
    "loop_2d_add_trip_count_dynamic": _loop_2d_add(3),
    # The initial condition is false: zero iterations.
    "loop_2d_add_no_identity_termination_cond_false": _loop_2d_add(0),
}
# Outputs where OpenVINO's frontend contradicts the ONNX spec, so it is no reference there.
OPENVINO_FRONTEND_OFF_SPEC = {
    # Zero iterations: ONNX scan outputs then have leading dimension 0 ([0, 1, 2]);
    # OpenVINO's frontend returns a [1, 2] tensor.
    "loop_2d_add_no_identity_termination_cond_false": {"a_values"},
}


# Known gaps of irtool, each naming the missing feature. strict: a fix makes the test XPASS
# and fail, so the entry is removed as soon as the feature lands.
KNOWN_GAPS: dict[str, str] = {}


def _readme_rows() -> dict[str, dict[str, str]]:
    text = (PEER / "README.md").read_text(encoding="utf-8")
    rows = {}
    for line in text.splitlines():
        m = re.match(r"^\| (\S+)\.prototxt \| (.*?) \| (.*?) \| (.*?) \| (.*?) \| (.*?) \|$",
                     line)
        if m:
            rows[m.group(1)] = {"what": m.group(2), "expected": m.group(3),
                                "ort": m.group(5), "ov": m.group(6)}
    return rows


def expectation(name: str, row: dict[str, str]) -> str:
    """success, error, error-or-success (the peer tolerates success), or spec."""
    if name in SPEC_OVERRIDES:
        return SPEC_OVERRIDES[name]
    expected = row["expected"]
    if expected.startswith("success"):
        return "success"
    if expected.startswith("error"):
        return "error-or-success" if "success tolerated" in expected else "error"
    return UNREFERENCED[name]


def _params() -> list:  # type: ignore[type-arg]
    if not PEER.is_dir():
        return [pytest.param(None, id="peer-suite-missing")]
    rows = _readme_rows()
    files = sorted(p.stem for p in PEER.glob("*.prototxt"))
    missing = [n for n in files if n not in rows]
    assert not missing, f"not in the README table: {missing}"
    return [pytest.param(name, id=name, marks=[pytest.mark.xfail(strict=True,
                                                                reason=KNOWN_GAPS[name])]
                         if name in KNOWN_GAPS else []) for name in files]


def load(name: str) -> onnx.ModelProto:
    text = (PEER / f"{name}.prototxt").read_text(encoding="utf-8")
    return text_format.Parse(text, onnx.ModelProto())


def readme_inputs(model: onnx.ModelProto, name: str, bools: bool = True) -> dict[str, np.ndarray]:
    """The README's input rule: dims 2, bools True, ints 3, floats uniform [0.5, 1.5)."""
    rng = np.random.default_rng(zlib.crc32(name.encode()))
    shapes = SHAPES.get(name, {})
    feed = {}
    for spec in input_specs(model):
        if spec.name in shapes:
            shape = shapes[spec.name]
        elif spec.dims is None:
            raise AssertionError(f"input {spec.name} has unknown rank; add it to SHAPES")
        else:
            shape = tuple(2 if d is None else d for d in spec.dims)
        if spec.dtype == np.bool_:
            feed[spec.name] = np.full(shape, bools, dtype=np.bool_)
        elif spec.dtype.kind in "iu":
            feed[spec.name] = np.full(shape, 3, dtype=spec.dtype)
        else:
            feed[spec.name] = rng.uniform(0.5, 1.5, size=shape).astype(spec.dtype)
    return feed


def _disagreements(candidate: EngineResult,
                   reference: EngineResult | tuple[str, dict]) -> list[str]:
    ref_name, ref_out = (reference.engine, reference.outputs) \
        if isinstance(reference, EngineResult) else reference
    if candidate.error is not None:
        return [f"{candidate.engine} failed: {candidate.error}"]
    problems = []
    for out, value in (ref_out or {}).items():
        got = (candidate.outputs or {}).get(out)
        if got is None:
            problems.append(f"{candidate.engine}: output {out!r} missing")
            continue
        row = compare(out, got, value)
        if not row.ok:
            problems.append(f"{candidate.engine} vs {ref_name}: output {out!r}: "
                            f"{row.describe()}")
    return problems


def _static_ir(xml: Path, feed: dict[str, np.ndarray], out: Path) -> Path:
    """A copy of the IR whose Parameters have the shapes of ``feed``."""
    model = irtool.load(xml)
    for layer, name in zip(model.inputs, model.input_names()):
        shape = tuple(feed[name].shape)
        layer.attrs["shape"] = ",".join(str(d) for d in shape)
        layer.outputs[0].dims = shape
    return irtool.save(model, out)


def _static_onnx(model: onnx.ModelProto, feed: dict[str, np.ndarray]) -> onnx.ModelProto:
    """A copy of the ONNX model whose graph inputs have the shapes of ``feed``."""
    copy = onnx.ModelProto()
    copy.CopyFrom(model)
    for vi in copy.graph.input:
        if vi.name in feed:
            tt = vi.type.tensor_type
            tt.ClearField("shape")
            tt.shape.SetInParent()
            for d in feed[vi.name].shape:
                tt.shape.dim.add().dim_value = d
    return copy


def _convert(model: onnx.ModelProto) -> irtool.Model:
    try:
        return irtool.convert(model)
    except irtool.IRToolError as err:
        pytest.fail(f"irtool cannot convert a model the peer expects to work: {err}")


def check_success(name: str, model: onnx.ModelProto, tmp: Path) -> None:
    """The success flow: convert, run all backends on each feed, list every disagreement."""
    ir = _convert(model)
    xml = irtool.save(ir, tmp / f"{name}.xml")
    onnx_path = tmp / f"{name}.onnx"
    onnx.save(model, str(onnx_path))
    feeds = [readme_inputs(model, name)]
    if name.startswith("if_") and any(v.dtype == np.bool_ for v in feeds[0].values()):
        feeds.append(readme_inputs(model, name, bools=False))
    problems: list[str] = []
    for feed in feeds:
        flag = next((bool(v.flat[0]) for v in feed.values() if v.dtype == np.bool_), None)
        label = "" if len(feeds) == 1 else f"[bools {flag}] "
        ir_feed = {n: feed[n] for n in ir.input_names() if n in feed}
        ort = OnnxRuntimeEngine(model).try_run(feed)
        irt = IrtoolEngine(xml).try_run(ir_feed)
        # OpenVINO runs in a child process: some IR makes it crash, which is a finding to
        # report, not a reason to lose the whole test session.
        ovir = Isolated(OpenVINOEngine(xml)).try_run(ir_feed)
        if ovir.error and "dynamic rank" in ovir.error:
            # OpenVINO's CPU plugin compiles no Parameter of dynamic rank; as the README
            # did, give the IR's inputs the fed shapes and try once more.
            static = _static_ir(xml, ir_feed, tmp / f"{name}.static.xml")
            ovir = Isolated(OpenVINOEngine(static)).try_run(ir_feed)
        if ort.ok:
            references: list[EngineResult | tuple[str, dict]] = [ort]
        else:
            references = []
            ovfe = Isolated(OpenVINOFrontendEngine(onnx_path)).try_run(feed)
            if ovfe.error and "dynamic rank" in ovfe.error:
                static_onnx = tmp / f"{name}.static.onnx"
                onnx.save(_static_onnx(model, feed), str(static_onnx))
                ovfe = Isolated(OpenVINOFrontendEngine(static_onnx)).try_run(feed)
            if ovfe.ok:
                off_spec = OPENVINO_FRONTEND_OFF_SPEC.get(name, set())
                references.append((ovfe.engine, {k: v for k, v in (ovfe.outputs or {}).items()
                                                  if k not in off_spec}))
            if name in HAND_DERIVED:
                references.append(("hand-derived values", HAND_DERIVED[name](feed)))
            if not references:
                problems.append(f"{label}no independent reference: onnxruntime: {ort.error}; "
                                f"openvino-frontend: {ovfe.error}")
            problems += [label + p for p in _disagreements(irt, ovir)
                         if ovir.ok]  # irtool's runtime vs OpenVINO on the same IR
        for ref in references:
            for cand in (irt, ovir):
                problems += [label + p for p in _disagreements(cand, ref)]
    problems = list(dict.fromkeys(problems))
    assert not problems, "\n".join(problems)


def test_peer_suite_present() -> None:
    """The suite is all there: 75 models, each in the README table. Outside CI a missing
    suite is one loud skip; under CI it is a failure, since nothing of it ran."""
    if not PEER.is_dir():
        if _under_ci():
            pytest.fail(MISSING.format(PEER))
        pytest.skip(MISSING.format(PEER))
    files = sorted(p.stem for p in PEER.glob("*.prototxt"))
    assert len(files) == PEER_MODELS, f"{len(files)} peer models in {PEER}, not {PEER_MODELS}"
    assert sorted(_readme_rows()) == files


@pytest.mark.parametrize("name", _params())
def test_peer_model(name: str | None, tmp_path: Path) -> None:
    if name is None:
        if _under_ci():
            pytest.fail(MISSING.format(PEER))
        pytest.skip(MISSING.format(PEER))
    row = _readme_rows()[name]
    model = load(name)
    expect = expectation(name, row)
    if expect == "spec":
        check_concat_values(model, tmp_path)
        return
    if name == "loop_2d_add_trip_count_and_cond_skipped":
        check_unbounded_loop(model)
        return
    if expect in ("error", "error-or-success"):
        try:
            irtool.convert(model)
        except irtool.ConversionError as err:
            message = str(err)
            assert message and "\n" not in message, repr(message)
            assert err.node or re.search(r"Loop|If|Scan|body|branch|graph", message), message
            return
        except irtool.IRToolError as err:
            pytest.fail(f"expected a ConversionError, got {type(err).__name__}: {err}")
        if expect == "error":
            pytest.fail(f"irtool converted a model the peer (and the ONNX spec) reject: "
                        f"{row['expected']}")
    check_success(name, model, tmp_path)


def check_unbounded_loop(model: onnx.ModelProto) -> None:
    """No trip count, no condition: the peer checks conversion and output shapes only.
    irtool converts it, keeps the shapes, and its runtime stops it with a clear error."""
    ir = _convert(model)
    out = {name: r for name, r in zip(ir.output_names(), ir.outputs)}
    assert out["a_final"].inputs[0].dims == (1, 2)
    dims = out["a_values"].inputs[0].dims
    assert dims is not None and len(dims) == 3 and dims[1:] == (1, 2)
    with pytest.raises(irtool.ExecutionError, match="iteration"):
        irtool.run(ir, {"a_init": np.ones((1, 2), np.float32)}, max_iterations=20)


def check_concat_values(model: onnx.ModelProto, tmp_path: Path) -> None:
    """The peer expects the state [0..5] and a [5,6] scan output; ONNX says otherwise.

    * Iteration numbers start at 0, so the carried state after M=5 iterations from
      seq_init=[0] is [0, 0, 1, 2, 3, 4] (onnxruntime agrees once the invalid scan output
      is removed; OpenVINO's frontend agrees too).
    * Each iteration's scan value has a different length, and ONNX concatenates scan
      values of one shape; onnxruntime refuses. irtool must refuse too, with a clear
      error, rather than return OpenVINO's uninitialised [5,6] tensor.
    """
    feed = {"iter_count_init": np.array(5, np.int64), "cond_init": np.array(True),
            "seq_init": np.array([0], np.int64)}
    state_only = onnx.ModelProto()
    state_only.CopyFrom(model)
    # Drop the scan output: from the Loop node, the graph outputs and the body.
    loop = state_only.graph.node[0]
    del loop.output[1]
    del state_only.graph.output[1]
    body = loop.attribute[0].g
    assert body.output[2].name == "seq_final_out"
    del body.output[2]
    kept = [n for n in body.node if "seq_final_out" not in n.output]
    del body.node[:]
    body.node.extend(kept)
    ort = OnnxRuntimeEngine(state_only).run(feed)
    np.testing.assert_array_equal(ort["seq_final"], [0, 0, 1, 2, 3, 4])
    ir = _convert(state_only)
    xml = irtool.save(ir, tmp_path / "state_only.xml")
    for backend in (IrtoolEngine(xml), Isolated(OpenVINOEngine(xml))):
        got = backend.run(feed)["seq_final"]
        assert got.dtype == np.int64, backend.name
        np.testing.assert_array_equal(got, ort["seq_final"], err_msg=backend.name)
    with pytest.raises(irtool.IRToolError) as info:
        irtool.run(irtool.convert(model), feed)
    assert "\n" not in str(info.value)
