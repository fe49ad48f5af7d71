"""The iteration helpers of ``irtool/runtime/iteration.py`` on their own: errors naming the
layer and the iteration, cutting sliced inputs into parts, joining the iterations' values.

Expected values are worked out by hand from OpenVINO's TensorIterator / Loop spec (a
negative ``start`` / ``end`` counts from the end, -1 being the axis length; a negative
``stride`` walks the axis backwards) and written as plain numpy slicing.
"""

from __future__ import annotations

import numpy as np
import pytest
from support.ir_builders import Net

from irtool.core.errors import ExecutionError
from irtool.ir.graph import Layer, Port
from irtool.runtime import compile_graph
from irtool.runtime.iteration import (
    ConcatOutput,
    Iteration,
    SlicedInput,
    Stacking,
    annotate_iteration,
    concatenate,
    fail,
    slice_bounds,
    slice_parts,
    squeezes_match,
    stack,
)

LAYER = Layer(id=7, name="loop", type="TensorIterator", version="opset1",
              outputs=[Port(3), Port(4)])
SCOPE = "2/body"
WHERE = 'layer 2/body/7 "loop" (TensorIterator-opset1)'
VALUE = np.arange(24, dtype=np.float32).reshape(3, 8)


def sliced(axis: int = 1, start: int = 0, end: int = -1, stride: int = 1,
           part: int = 1) -> SlicedInput:
    return SlicedInput(param=0, outer=0, axis=axis, start=start, end=end, stride=stride,
                       part_size=part, port_id=5)


def concat(axis: int = 0, reverse: bool = False) -> ConcatOutput:
    return ConcatOutput(output=1, result=0, axis=axis, reverse=reverse, empty_dims=None,
                        empty_dtype=None, why_no_empty="")


def test_fail_names_the_layer_its_scope_and_the_line() -> None:
    err = fail(LAYER, SCOPE, "boom", line=12)
    assert isinstance(err, ExecutionError)
    assert (err.line, err.layer) == (12, '2/body/7 "loop" (TensorIterator-opset1)')
    assert str(err) == f"line 12: {WHERE}: boom"
    top = fail(LAYER, "", "boom")
    assert top.line is None
    assert str(top) == 'layer 7 "loop" (TensorIterator-opset1): boom'


def test_annotate_iteration_nests_innermost_first() -> None:
    err = ExecutionError("bad value", layer="3/body/5")
    annotate_iteration(err, "iteration 2 of 3/body/5")
    assert err.message == "bad value (at iteration 2 of 3/body/5)"
    annotate_iteration(err, "iteration 0 of 3")
    assert err.message == "bad value (at iteration 2 of 3/body/5; iteration 0 of 3)"
    assert str(err) == "layer 3/body/5: bad value (at iteration 2 of 3/body/5; iteration 0 of 3)"
    assert err.args == (str(err),)
    # A message that merely ends in ")" gets its own note.
    other = ExecutionError("f(x)")
    annotate_iteration(other, "iteration 1 of 4")
    assert other.message == "f(x) (at iteration 1 of 4)"


@pytest.mark.parametrize("axis", [2, -3, 5])
def test_slice_axis_out_of_range(axis: int) -> None:
    with pytest.raises(ExecutionError) as info:
        slice_bounds(sliced(axis=axis), VALUE, LAYER, SCOPE)
    assert str(info.value) == (f"{WHERE}: sliced input on port 5: axis {axis} is out of "
                               f"range for shape [3, 8]")


@pytest.mark.parametrize("spec,lo,hi,count", [
    (sliced(axis=1), 0, 8, 8),
    (sliced(axis=-1), 0, 8, 8),  # the last axis
    (sliced(axis=0), 0, 3, 3),
    (sliced(axis=-2), 0, 3, 3),
    (sliced(start=-1, end=0, stride=-1), 0, 8, 8),  # -1 is the axis length: walk back
    (sliced(start=2, end=-3, stride=2, part=2), 2, 6, 2),  # end -3: 8 + 1 - 3 = 6
    (sliced(start=0, end=2, part=3), 0, 2, 0),  # shorter than one part: no iteration
    (sliced(start=0, end=2, part=2), 0, 2, 1),  # exactly one part
    (sliced(start=3, end=3), 3, 3, 0),  # empty range
    (sliced(start=3, end=3, part=2), 3, 3, 0),  # empty range, wider parts: still 0
    (sliced(start=0, end=1, stride=1, part=4), 0, 1, 0),  # 3 short of a part: 0, not -2
    (sliced(start=1, end=8, stride=3, part=1), 1, 8, 3),  # parts at 1, 4, 7
])
def test_slice_bounds_by_hand(spec: SlicedInput, lo: int, hi: int, count: int) -> None:
    arr, axis, got_lo, got_hi, got_count = slice_bounds(spec, VALUE, LAYER, SCOPE)
    assert arr is VALUE
    assert axis == spec.axis % 2
    assert (got_lo, got_hi, got_count) == (lo, hi, count)


@pytest.mark.parametrize("spec,what", [
    (sliced(start=0, end=9), "start=0 end=9 stride=1 do not fit axis 1 of length 8"),
    (sliced(start=5, end=2), "start=5 end=2 stride=1 do not fit axis 1 of length 8"),
    (sliced(start=-10, end=-1), "start=-10 end=-1 stride=1 do not fit axis 1 of length 8"),
    (sliced(start=0, end=8, stride=2, part=3),
     "the range of length 8 does not split into parts of 3 every 2"),
])
def test_slice_bounds_refused(spec: SlicedInput, what: str) -> None:
    with pytest.raises(ExecutionError) as info:
        slice_bounds(spec, VALUE, LAYER, SCOPE)
    assert str(info.value) == f"{WHERE}: sliced input on port 5: {what}"


@pytest.mark.parametrize("spec,limit,want", [
    (sliced(axis=1, stride=2, part=2), 9, [VALUE[:, b:b + 2] for b in (0, 2, 4, 6)]),
    (sliced(axis=1, stride=2, part=2), 3, [VALUE[:, b:b + 2] for b in (0, 2, 4)]),
    (sliced(axis=1, start=-1, end=0, stride=-2, part=2), 9,
     [VALUE[:, b:b + 2] for b in (6, 4, 2, 0)]),
    (sliced(axis=0, start=-1, end=0, stride=-1), 9, [VALUE[b:b + 1] for b in (2, 1, 0)]),
    (sliced(axis=1, start=1, end=8, stride=3), 9, [VALUE[:, b:b + 1] for b in (1, 4, 7)]),
    (sliced(axis=1, start=-1, end=1, stride=-3), 9, [VALUE[:, b:b + 1] for b in (7, 4, 1)]),
])
def test_slice_parts_by_hand(spec: SlicedInput, limit: int, want: list[np.ndarray]) -> None:
    got = slice_parts(spec, VALUE, limit, LAYER, SCOPE)
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert g.shape == w.shape
        np.testing.assert_array_equal(g, w)
    if spec.part_size == 1:  # squeezed: the slicing axis dropped
        squeezed = slice_parts(spec, VALUE, limit, LAYER, SCOPE, squeeze=True)
        assert len(squeezed) == len(want)
        for g, w in zip(squeezed, want):
            np.testing.assert_array_equal(g, np.squeeze(w, axis=spec.axis))


def _iteration(axis: int) -> Iteration:
    return Iteration(body=None, slices=[sliced(axis=axis)])  # type: ignore[arg-type]


@pytest.mark.parametrize("slice_axis,squeeze_axis,rank,match", [
    (1, 1, 2, True), (1, -1, 2, True), (-1, 1, 2, True), (-1, -1, 2, True),
    (0, 0, 2, True), (0, -2, 2, True), (-2, 0, 2, True),
    (1, 0, 2, False), (0, 1, 2, False), (0, -1, 2, False), (-1, 0, 2, False),
    (1, 2, 2, False), (1, -3, 2, False),  # Squeeze axis out of range
    (2, 2, 2, False),  # both out of range: never a match
    (0, 0, 3, True), (2, -1, 3, True), (-3, 0, 3, True), (1, -1, 3, False),
])
def test_squeezes_match(slice_axis: int, squeeze_axis: int, rank: int, match: bool) -> None:
    outer = [np.zeros((2,) * rank, np.float32)]
    assert squeezes_match(_iteration(slice_axis), outer, {0: squeeze_axis}) is match
    # One mismatch among several is enough to refuse.
    if match:
        two = Iteration(body=None, slices=[sliced(axis=slice_axis), sliced(axis=slice_axis)])  # type: ignore[arg-type]
        assert squeezes_match(two, outer, {0: squeeze_axis, 1: squeeze_axis}) is True
        wrong = squeeze_axis + 1 if squeeze_axis + 1 < rank else squeeze_axis - 1
        assert squeezes_match(two, outer, {0: squeeze_axis, 1: wrong}) is False


def test_squeezes_match_without_squeezes() -> None:
    assert squeezes_match(_iteration(0), [VALUE], {}) is True


@pytest.mark.parametrize("axis", [0, -1])
@pytest.mark.parametrize("reverse", [False, True])
def test_concatenate_scalars_stacks_them(axis: int, reverse: bool) -> None:
    values = [np.array(1.5, np.float32), np.array(2.5, np.float32), np.array(4, np.float32)]
    got = concatenate(values, concat(axis, reverse), LAYER, SCOPE)
    want = np.array([4, 2.5, 1.5] if reverse else [1.5, 2.5, 4], np.float32)
    assert got.dtype == want.dtype
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("axis", [1, -2])
def test_concatenate_scalars_on_another_axis_is_refused(axis: int) -> None:
    values = [np.array(1.5, np.float32)] * 2
    with pytest.raises(ExecutionError) as info:
        concatenate(values, concat(axis), LAYER, SCOPE)
    assert str(info.value) == (f"{WHERE}: output port 4: scalar slices concatenate along axis "
                               f"0 only, not {axis}")


@pytest.mark.parametrize("axis,reverse,want", [
    (0, False, np.array([[0, 1], [2, 3], [4, 5]])),
    (1, False, np.array([[0, 1, 2, 3, 4, 5]])),
    (-1, False, np.array([[0, 1, 2, 3, 4, 5]])),
    (-2, True, np.array([[4, 5], [2, 3], [0, 1]])),
    (-1, True, np.array([[4, 5, 2, 3, 0, 1]])),
])
def test_concatenate_by_hand(axis: int, reverse: bool, want: np.ndarray) -> None:
    values = [np.array([[0, 1]]), np.array([[2, 3]]), np.array([[4, 5]])]
    np.testing.assert_array_equal(concatenate(values, concat(axis, reverse), LAYER, SCOPE),
                                  want)


@pytest.mark.parametrize("axis", [2, -3])
def test_concatenate_along_an_axis_out_of_range_is_refused(axis: int) -> None:
    """Rank-2 values have no axis 2 or -3 (not wrapped around)."""
    values = [np.zeros((1, 2)), np.zeros((1, 2))]
    with pytest.raises(ExecutionError) as info:
        concatenate(values, concat(axis), LAYER, SCOPE)
    assert str(info.value).startswith(f"{WHERE}: output port 4: cannot concatenate the "
                                      f"iterations' values along axis {axis}: ")


def test_concatenate_of_mismatched_values_names_the_output() -> None:
    values = [np.zeros((1, 2)), np.zeros((1, 3))]
    with pytest.raises(ExecutionError) as info:
        concatenate(values, concat(0), LAYER, SCOPE)
    message = str(info.value)
    assert message.startswith(f"{WHERE}: output port 4: cannot concatenate the iterations' "
                              f"values along axis 0: ")
    assert "\n" not in message


def test_slice_parts_backwards_from_inside_the_axis() -> None:
    """start=5, end=0, stride=-1 on an axis of 8: parts 4, 3, 2, 1, 0 (not from the end)."""
    got = slice_parts(sliced(axis=1, start=5, end=0, stride=-1), VALUE, 9, LAYER, SCOPE)
    want = [VALUE[:, b:b + 1] for b in (4, 3, 2, 1, 0)]
    assert len(got) == len(want)
    for g, w in zip(got, want):
        np.testing.assert_array_equal(g, w)


def test_slice_parts_overlapping_windows() -> None:
    """stride 1, part 2 on an axis of 8: seven overlapping windows 0..6, forwards."""
    got = slice_parts(sliced(axis=1, stride=1, part=2), VALUE, 9, LAYER, SCOPE)
    want = [VALUE[:, b:b + 2] for b in range(7)]
    assert len(got) == len(want)
    for g, w in zip(got, want):
        np.testing.assert_array_equal(g, w)


def test_slice_parts_refusal_names_the_layer() -> None:
    with pytest.raises(ExecutionError) as info:
        slice_parts(sliced(axis=1, start=0, end=9), VALUE, 9, LAYER, SCOPE)
    assert str(info.value) == (f"{WHERE}: sliced input on port 5: start=0 end=9 stride=1 do "
                               f"not fit axis 1 of length 8")


def unsqueeze_body(axes: np.ndarray):  # type: ignore[no-untyped-def]
    """A body plan whose only step is Unsqueeze(x, axes), and that step's index."""
    net = Net()
    x = net.param("x", "f32", None)
    net.result(net.op("Unsqueeze", "opset1", [x, net.const(axes)], shape=None, name="unsq"))
    body = compile_graph(net.graph, "2/body/7/body")
    step = next(k for k, s in enumerate(body.steps) if s.layer.type == "Unsqueeze")
    return body, step


@pytest.mark.parametrize("fused,cat", [
    (0, 0), (-2, 0), (0, -2), (1, 1), (-1, -1), (1, -1), (-1, 1),  # one np.stack
    (0, 1), (1, 0), (0, -1), (-1, 0),  # Unsqueeze then Concat along another axis
])
@pytest.mark.parametrize("reverse", [False, True])
def test_stack_is_unsqueeze_then_concat(fused: int, cat: int, reverse: bool) -> None:
    axes = np.array([fused])
    body, step = unsqueeze_body(axes)
    values = [np.array([1, 2], np.float32), np.array([3, 4], np.float32),
              np.array([5, 6], np.float32)]
    got = stack(values, concat(cat, reverse), Stacking(step, fused, axes), body, LAYER, SCOPE)
    by_hand = np.concatenate([np.expand_dims(v, fused) for v in values[::-1 if reverse else 1]],
                             axis=cat)
    assert got.shape == by_hand.shape and got.dtype == by_hand.dtype
    np.testing.assert_array_equal(got, by_hand)


def test_stack_of_values_that_differ_in_shape_names_the_output() -> None:
    axes = np.array([0])
    body, step = unsqueeze_body(axes)
    values = [np.zeros(2, np.float32), np.zeros(3, np.float32)]
    with pytest.raises(ExecutionError) as info:
        stack(values, concat(0), Stacking(step, 0, axes), body, LAYER, SCOPE)
    assert str(info.value).startswith(f"{WHERE}: output port 4: cannot concatenate the "
                                       f"iterations' values along axis 0: ")


def test_stack_failure_in_the_unsqueeze_names_it_and_the_iteration() -> None:
    """Unsqueeze at axis 1 of a 0-d value fails (rank 1 has no axis 1): the error names
    the Unsqueeze in the body and the iteration of the loop."""
    axes = np.array([1])
    body, step = unsqueeze_body(axes)
    values = [np.array(1, np.float32), np.array(2, np.float32)]
    with pytest.raises(ExecutionError) as info:
        stack(values, concat(0), Stacking(step, 1, axes), body, LAYER, SCOPE)
    message = str(info.value)
    assert message.startswith(f'layer 2/body/7/body/{body.steps[step].layer.id} "unsq" '
                              f"(Unsqueeze-opset1): ")
    assert message.endswith(" (at iteration 0 of 2/body/7)")
    cause = info.value.__cause__
    assert cause is not None
    assert f"(Unsqueeze-opset1): {type(cause).__name__}: {cause} (at " in message
