"""Small stateful models built with OpenVINO's own Python API (``openvino.opset6``) and saved
with ``ov.save_model``, for tests of sessions, the CLI and the validator."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import openvino as ov
import openvino.opset6 as ov6


def accumulator(path: Path, *, with_init: bool = False) -> Path:
    """acc <- acc + x (x: f32 [2, 3]); outputs the new sum as ``sum``. Initial value: zeros
    (ReadValue-6 without input, static variable shape), or 2*x of the first step (ReadValue
    with an init input)."""
    x = ov6.parameter([2, 3], np.float32, name="x")
    x.output(0).set_names({"x"})
    if with_init:
        init = ov6.multiply(x, ov6.constant(np.float32(2)))
        read = ov6.read_value(init, "acc", np.float32, [2, 3])
    else:
        read = ov6.read_value("acc", np.float32, [2, 3])
    total = ov6.add(read, x)
    total.output(0).set_names({"sum"})
    assign = ov6.assign(total, "acc")
    ov.save_model(ov.Model([ov6.result(total)], [assign], [x], "accumulator"), str(path),
                  compress_to_fp16=False)
    return path


def two_variables(path: Path) -> Path:
    """Two variables as OpenVINO writes them: ``acc`` (ReadValue-6 ``read_acc``, f32 [2, 3],
    no init input; Assign-6 of ``sum``) and ``prev`` (ReadValue-3 ``read_prev`` whose init
    input is ``x``; Assign-3 ``assign_prev`` of ``delta = x - prev``)."""
    import openvino.opset3 as ov3

    x = ov6.parameter([2, 3], np.float32, name="x")
    x.output(0).set_names({"x"})
    total = ov6.add(ov6.read_value("acc", np.float32, [2, 3], name="read_acc"), x, name="sum")
    total.output(0).set_names({"sum"})
    delta = ov6.subtract(x, ov3.read_value(x, "prev", name="read_prev"), name="delta")
    delta.output(0).set_names({"delta"})
    sinks = [ov6.assign(total, "acc"), ov3.assign(delta, "prev", name="assign_prev")]
    model = ov.Model([ov6.result(total, name="out_sum"), ov6.result(delta, name="out_delta")],
                     sinks, [x], "two_variables")
    ov.save_model(model, str(path), compress_to_fp16=False)
    return path
