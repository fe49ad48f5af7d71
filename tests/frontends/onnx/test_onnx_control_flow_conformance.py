"""Every ONNX backend node case whose graph has a Loop, Scan or If, converted by irtool.

Each case is converted, written, loaded and run by OpenVINO's CPU plugin and by
irtool's runtime, and compared with the case's own expected outputs at the
case's tolerance. Cases whose graph inputs or outputs are sequences or
optionals cannot be IR inputs/outputs: for them the conversion must end in a
clear "unsupported type" ``ConversionError`` naming the input or output.

``PYTHONPATH=tests python tests/frontends/onnx/test_onnx_control_flow_conformance.py`` prints
the table (case, convert, openvino, irtool); so does pytest with ``-s`` or ``-rA``.
"""

from __future__ import annotations

import sys
import tempfile
import warnings
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import onnx
import pytest
from support.conversion import OV_CONFIG, ov_outputs, ov_tensor

import irtool
from irtool.runtime import Executor

CONTROL_FLOW = ("Loop", "Scan", "If")


def control_flow_cases() -> list:
    from onnx.backend.test.case.node import collect_testcases

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        cases = collect_testcases()
    return [c for c in cases if any(n.op_type in CONTROL_FLOW for n in c.model.graph.node)]


CASES = control_flow_cases()


def tensor_io(model: onnx.ModelProto) -> bool:
    return all(v.type.HasField("tensor_type")
               for v in [*model.graph.input, *model.graph.output])


def _ov_message(err: Exception) -> str:
    """The informative line of an OpenVINO exception (not its "Exception from" trail)."""
    lines = [ln.strip() for ln in str(err).splitlines() if ln.strip()]
    useful = [ln for ln in lines if not ln.startswith("Exception from")]
    return (useful or lines or [type(err).__name__])[-1][:160]


@dataclass
class Row:
    case: str
    convert: str
    openvino: str
    irtool: str


def _compare(got: dict[str, np.ndarray], names: list[str], expected: list[np.ndarray],
             rtol: float, atol: float) -> str:
    for name, want in zip(names, expected):
        if name not in got:
            return f"no output {name}"
        value = np.asarray(got[name])
        want = np.asarray(want)
        if value.shape != want.shape:
            return f"{name}: shape {value.shape} != {want.shape}"
        if want.dtype.kind in "fc" or want.dtype.name == "bfloat16":
            ok = np.allclose(value.astype(np.float64), want.astype(np.float64), rtol=rtol,
                             atol=atol, equal_nan=True)
        else:
            ok = value.dtype == want.dtype and np.array_equal(value, want)
        if not ok:
            return f"{name}: values differ"
    return "ok"


def run_case(case, tmp: Path) -> Row:
    """Convert and run one case; each column says ``ok`` or why not."""
    model = case.model
    if not tensor_io(model):
        try:
            irtool.convert(model)
        except irtool.ConversionError as err:
            bad = [v.name for v in [*model.graph.input, *model.graph.output]
                   if not v.type.HasField("tensor_type")]
            clear = "unsupported type" in str(err) and any(repr(n) in str(err) for n in bad)
            status = "unsupported type (clear error)" if clear else f"error: {err}"
            return Row(case.name, status, "-", "-")
        return Row(case.name, "converted a sequence/optional graph input or output", "-", "-")
    try:
        ir = irtool.convert(model)
        xml = irtool.save(ir, tmp / "model.xml")
    except irtool.IRToolError as err:
        return Row(case.name, f"error: {err}", "-", "-")
    import openvino as ov

    in_names = [v.name for v in model.graph.input]
    out_names = [v.name for v in model.graph.output]
    ov_status = irtool_status = "ok"
    try:
        core = ov.Core()
        compiled = core.compile_model(core.read_model(str(xml)), "CPU", OV_CONFIG)
    except Exception as err:  # OpenVINO raises RuntimeError subclasses
        ov_status = f"load: {_ov_message(err)}"
        compiled = None
    try:
        executor = Executor(irtool.load(xml))
    except irtool.IRToolError as err:
        irtool_status = f"compile: {err}"
        executor = None
    for inputs, expected in case.data_sets:
        feeds = dict(zip(in_names, inputs))
        if compiled is not None and ov_status == "ok":
            try:
                request = compiled.create_infer_request()
                request.infer({k: ov_tensor(v) for k, v in feeds.items()})
                got = ov_outputs(compiled, request)
                ov_status = _compare(got, out_names, expected, case.rtol, case.atol)
            except Exception as err:
                ov_status = f"infer: {_ov_message(err)}"
        if executor is not None and irtool_status == "ok":
            try:
                irtool_status = _compare(executor.run(feeds), out_names, expected, case.rtol,
                                         case.atol)
            except irtool.IRToolError as err:
                irtool_status = f"run: {err}"
    return Row(case.name, "ok", ov_status, irtool_status)


def format_table(rows: list[Row]) -> str:
    width = max(len(r.case) for r in rows)
    lines = [f"{'case':<{width}} | convert | openvino | irtool"]
    lines += [f"{r.case:<{width}} | {r.convert} | {r.openvino} | {r.irtool}" for r in rows]
    good = sum(1 for r in rows if (r.convert, r.openvino, r.irtool) == ("ok", "ok", "ok"))
    clear = sum(1 for r in rows if r.convert == "unsupported type (clear error)")
    lines.append(f"{good} of {len(rows)} pass on both backends; {clear} end in the clear "
                 "unsupported-type error")
    return "\n".join(lines)


@pytest.fixture(scope="module")
def table(request: pytest.FixtureRequest):
    """Collects one row per case; the table is printed at the end of the module."""
    rows: list[Row] = []
    yield rows
    reporter = request.config.pluginmanager.get_plugin("terminalreporter")
    if rows and reporter is not None:
        reporter.write_line("")
        for line in format_table(rows).splitlines():
            reporter.write_line(line)


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_control_flow_case(case, tmp_path: Path, table: list[Row]) -> None:
    row = run_case(case, tmp_path)
    table.append(row)
    if tensor_io(case.model):
        assert (row.convert, row.openvino, row.irtool) == ("ok", "ok", "ok"), row
    else:
        assert row.convert == "unsupported type (clear error)", row


def test_case_count() -> None:
    """The set of cases this file covers (onnx 1.23: 38, 28 of them with tensor I/O)."""
    assert len(CASES) >= 38
    assert sum(tensor_io(c.model) for c in CASES) >= 28


def main() -> int:
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for case in CASES:
            where = Path(tmp) / case.name
            where.mkdir()
            rows.append(run_case(case, where))
    print(format_table(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
