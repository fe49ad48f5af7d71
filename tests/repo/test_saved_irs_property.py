"""The suite-wide property of ``tests/support/saved_irs.py``: a test that saves IR which
``irtool validate`` rejects fails, unless it is marked ``saves_invalid_ir``."""

from __future__ import annotations

import pytest
from support import TESTS

pytest_plugins = ["pytester"]

INNER = '''
import pytest
import irtool
from irtool.ir import Graph, Layer, Model, Port

def _model(valid):
    graph = Graph()
    f32 = irtool.ir.element_type("f32")
    graph.add_layer(Layer(0, "x", "Parameter", "opset1", {"shape": "2", "element_type": "f32"},
                          outputs=[Port(0, f32, (2,), ("x",))]))
    graph.add_layer(Layer(1, "y", "Result", "opset1",
                          inputs=[Port(0, f32, (2,) if valid else (3,))]))
    graph.connect(0, 0, 1, 0)
    return Model(graph)

def test_valid(tmp_path):
    irtool.save(_model(True), tmp_path / "ok.xml")

def test_invalid(tmp_path):
    irtool.save(_model(False), tmp_path / "bad.xml")  # an edge joining [2] to [3]

@pytest.mark.saves_invalid_ir
def test_invalid_on_purpose(tmp_path):
    irtool.save(_model(False), tmp_path / "bad.xml")
'''


def test_a_saved_ir_that_validate_rejects_fails_the_test(pytester: pytest.Pytester) -> None:
    pytester.makeconftest(f"import sys\nsys.path.insert(0, {str(TESTS)!r})\n"
                          "pytest_plugins = ['support.saved_irs']\n")
    pytester.makepyfile(test_inner=INNER)
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider")
    result.assert_outcomes(passed=3, errors=1)
    result.stdout.fnmatch_lines(["*irtool saved IR that irtool validate rejects*",
                                 "*bad.xml: 1 error(s), first:*EDGE_SHAPE_MISMATCH*"])
