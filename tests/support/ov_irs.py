"""Session fixtures: IR that OpenVINO itself wrote (``ov.save_model``) for the ONNX
control-flow node cases. Registered for every test module by ``tests/conftest.py``."""

from __future__ import annotations

import warnings
from pathlib import Path

import openvino as ov
import pytest

# ONNX node cases with control flow that OpenVINO converts (the Loop/TensorIterator/If
# part of the corpus): Loop with scan output, TensorIterator (Scan-8/9, forward and
# reverse-free), If, and Loops from ONNX function expansion (Range).
ONNX_CONTROL_FLOW = (
    "test_loop11", "test_scan9_sum", "test_scan_sum", "test_scan9_multi_state",
    "test_scan9_scalar", "test_if", "test_range_float_type_positive_delta_expanded",
    "test_range_int32_type_negative_delta_expanded",
)


@pytest.fixture(scope="session")
def onnx_cases() -> dict:
    """The ONNX node test cases by name (collected once per session)."""
    from onnx.backend.test.case.node import collect_testcases

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return {c.name: c for c in collect_testcases()}


def ov_ir_from_onnx(case, folder: Path) -> Path:  # type: ignore[no-untyped-def]
    """``ov.save_model(ov.Core().read_model(model.onnx))`` for one ONNX node case."""
    import onnx

    folder.mkdir(parents=True, exist_ok=True)
    onnx_path = folder / "model.onnx"
    onnx.save(case.model, onnx_path)
    xml = folder / "model.xml"
    ov.save_model(ov.Core().read_model(str(onnx_path)), str(xml), compress_to_fp16=False)
    return xml


@pytest.fixture(scope="session")
def ov_control_flow_irs(onnx_cases: dict, tmp_path_factory: pytest.TempPathFactory
                        ) -> dict[str, Path]:
    """OpenVINO-written IR of the ONNX control-flow cases, by case name (made once)."""
    root = tmp_path_factory.mktemp("ov-control-flow")
    return {name: ov_ir_from_onnx(onnx_cases[name], root / name) for name in ONNX_CONTROL_FLOW}
