"""``irtool.run`` end to end, on irtool's runtime and on OpenVINO (``run_ir``)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from support.ir_builders import A0, F32, Net, counting_expected, counting_loop

import irtool
from irtool.core.errors import BackendError, ExecutionError
from irtool.engines.openvino import one_line, run_ir

FEEDS = {"trip": np.array(3), "cond": np.array(True), "a0": A0}
EXPECTED = counting_expected(3, True, A0)


def same(out: dict, expected: dict) -> None:
    assert list(out) == list(expected)
    for name, want in expected.items():
        assert out[name].dtype == want.dtype and out[name].shape == want.shape
        np.testing.assert_allclose(out[name], want, rtol=1e-6)


@pytest.fixture(scope="module")
def xml(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return irtool.save(counting_loop(), tmp_path_factory.mktemp("api") / "loop.xml")


@pytest.mark.parametrize("backend", ["irtool", "openvino"])
def test_run_model_and_path(xml: Path, backend: str) -> None:
    same(irtool.run(counting_loop(), FEEDS, backend=backend), EXPECTED)
    same(irtool.run(xml, FEEDS, backend=backend), EXPECTED)
    same(irtool.run(str(xml), list(FEEDS.values()), backend=backend), EXPECTED)


def test_run_ir_names_outputs_like_irtool(xml: Path) -> None:
    assert list(run_ir(xml, FEEDS)) == irtool.load(xml).output_names()


@pytest.mark.parametrize("feeds,words", [
    ({"trip": np.array(3), "cond": np.array(True)}, ["missing input(s) a0"]),
    (dict(FEEDS, extra=A0), ["unknown input(s) extra"]),
    (dict(FEEDS, a0=A0.astype(np.float64)), ["'a0'", "float64", "f32"]),
    ([np.array(3)], ["1 inputs given, the model takes 3"]),
])
def test_run_ir_rejects_bad_feeds(xml: Path, feeds: object, words: list[str]) -> None:
    with pytest.raises(BackendError) as info:
        run_ir(xml, feeds)  # type: ignore[arg-type]
    msg = str(info.value)
    assert "\n" not in msg and str(xml) in msg
    for word in words:
        assert word in msg


def test_run_ir_wraps_openvino_failures_in_one_line(tmp_path: Path) -> None:
    net = Net()
    net.result(net.op("NoSuchOp", "opset1", [net.param("x", "f32", (2,))]))
    bad = irtool.save(net.model(), tmp_path / "bad.xml")
    with pytest.raises(BackendError) as info:
        run_ir(bad, {})
    msg = str(info.value)
    assert "\n" not in msg and msg.startswith(str(bad)) and "OpenVINO cannot compile" in msg


def test_one_line_skips_openvino_boilerplate() -> None:
    err = RuntimeError("Exception from src/inference/src/cpp/core.cpp:84:\n"
                       "Check 'false' failed at src/frontends/common/src/frontend.cpp:53:\n"
                       "node <port> is missing mandatory attribute: precision\n")
    assert one_line(err) == "node <port> is missing mandatory attribute: precision"


def test_unknown_backend() -> None:
    with pytest.raises(ExecutionError, match="unknown backend 'tvm'"):
        irtool.run(counting_loop(), FEEDS, backend="tvm")


def test_irtool_error_names_the_model_file(xml: Path) -> None:
    with pytest.raises(ExecutionError) as info:
        irtool.run(xml, dict(FEEDS, trip=np.array(2.0, F32)))
    assert str(info.value).startswith(str(xml))
