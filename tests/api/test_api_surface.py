"""The package namespace: irtool.backend and irtool.inspect reachable after ``import irtool``,
check's options typed and documented, a Model's repr readable."""

from __future__ import annotations

import inspect as pyinspect
import subprocess
import sys

import onnx
from support import SAMPLES

import irtool


def test_backend_and_inspect_in_the_namespace() -> None:
    code = ("import irtool, onnx.backend.base as b; "
            "assert issubclass(irtool.backend.IrtoolBackend, b.Backend); "
            "print(irtool.inspect)")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert {"backend", "inspect"} <= set(irtool.__all__)


def test_inspect_names_what_onnx_declares() -> None:
    proto = onnx.load(str(SAMPLES / "scan_cumsum.onnx"))
    text = irtool.inspect(SAMPLES / "scan_cumsum.onnx")
    assert isinstance(text, str)
    for vi in [*proto.graph.input, *proto.graph.output]:
        assert f"  {vi.name}: " in text
    report = irtool.inspect(irtool.convert(SAMPLES / "scan_cumsum.onnx"), as_dict=True)
    assert [i["name"] for i in report["inputs"]] == [vi.name for vi in proto.graph.input]


def test_check_options_are_typed_keywords_with_docs() -> None:
    signature = pyinspect.signature(irtool.check)
    options = [p for p in signature.parameters.values() if p.kind == p.KEYWORD_ONLY]
    assert {p.name for p in options} >= {"seed", "shapes", "rtol", "atol", "keep_dir",
                                          "timeout", "max_iterations", "progress"}
    assert not any(p.kind == p.VAR_KEYWORD for p in signature.parameters.values())
    doc = irtool.check.__doc__ or ""
    for p in options:
        assert p.annotation is not p.empty, p.name
        assert f"``{p.name}``" in doc, p.name
    report = irtool.check(SAMPLES / "predict_net.onnx", seed=3, rtol=1e-3, atol=1e-4)
    assert report.ok


def test_model_repr() -> None:
    model = irtool.convert(SAMPLES / "predict_net.onnx")
    text = repr(model)
    assert " at 0x" not in text
    proto = onnx.load(str(SAMPLES / "predict_net.onnx"))
    assert repr(proto.graph.name) in text and "IR v11" in text
    for vi in [*proto.graph.input, *proto.graph.output]:
        assert f"{vi.name}: " in text
    assert "b: i32[]" in text  # predict_net's b is an int32 scalar (the ONNX spec's example)
