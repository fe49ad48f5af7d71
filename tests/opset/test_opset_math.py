"""Tests of the arithmetic opset: elementwise, activations, conversions, reductions,
normalisations, MatMul/TopK/CumSum/Einsum/Range/FakeQuantize, Fourier transforms and
random generators (irtool/opset/elementwise.py, activation.py, reduction.py,
normalization.py, math_*.py).

Expected values always come from OpenVINO itself:

* the ONNX node-test corpus OpenVINO wrote (irtool/tools/corpus.py): every case whose
  layers all belong to these modules must reproduce OpenVINO's outputs (slow sweep),
  and one case per operation runs in the fast suite, converted on the spot;
* small models built here with OpenVINO's Python opset builders, saved as IR and run
  on OpenVINO's CPU plugin, for operations and attributes the corpus lacks;
* OpenVINO's own shape inference (``get_output_partial_shape``) for ``infer`` on
  dynamic dims and ranks.
"""

from __future__ import annotations

import math
import tempfile
import warnings
import xml.etree.ElementTree as ET
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np
import openvino as ov
import pytest
from openvino import opset1, opset2, opset13
from support.opset_harness import (
    BOUNDARY,
    CPU_CONFIG,
    case_problem,
    load_fast_corpus,
    mismatch,
    run_irtool,
    share_case_names,
    share_predicate,
)

from irtool.ir.types import element_type
from irtool.opset import TensorInfo, make_op, registered
from irtool.opset._common import erf
from irtool.tools import corpus as ov_corpus

SHARE_MODULES = frozenset({
    "elementwise", "activation", "reduction", "normalization", "math_convert", "math_misc",
    "spectral", "math_random",
})


in_share = share_predicate(SHARE_MODULES)


def check_case(case: ov_corpus.CorpusCase) -> None:
    """irtool reproduces OpenVINO's outputs for one corpus case."""
    problem = case_problem(case)
    assert problem is None, f"{case.name}: {problem}"


# ---------------------------------------------------------------------------
# Registration: every version OpenVINO writes for these operations


def _all_share_nodes() -> list[ov.Node]:
    """One node of every operation version of the share, built with OpenVINO's builders."""
    f32, i32, b = np.float32, np.int32, np.bool_

    def p(shape: Sequence[int] = (2, 3), t: type = f32) -> ov.Node:
        return opset13.parameter(list(shape), t)

    def c(v: object, t: type = np.int64) -> ov.Node:
        return opset13.constant(np.array(v, t))

    nodes: list[ov.Node] = []
    for name in ("add", "subtract", "multiply", "divide", "power", "maximum", "minimum",
                 "squared_difference", "floor_mod", "mod", "equal", "not_equal", "less",
                 "less_equal", "greater", "greater_equal"):
        nodes.append(getattr(opset13, name)(p(), p()))
    for name in ("logical_and", "logical_or", "logical_xor"):
        nodes.append(getattr(opset13, name)(p(t=b), p(t=b)))
    for name in ("bitwise_and", "bitwise_or", "bitwise_xor"):
        nodes.append(getattr(opset13, name)(p(t=i32), p(t=i32)))
    from openvino import opset15
    nodes += [opset15.bitwise_left_shift(p(t=i32), p(t=i32)),
              opset15.bitwise_right_shift(p(t=i32), p(t=i32)),
              opset13.bitwise_not(p(t=i32)), opset13.logical_not(p(t=b))]
    for name in ("abs", "negative", "sign", "exp", "log", "sqrt", "floor", "ceiling", "sin",
                 "cos", "tan", "asin", "acos", "atan", "sinh", "cosh", "asinh", "acosh",
                 "atanh", "erf", "relu", "sigmoid", "tanh", "hswish", "hsigmoid", "softplus",
                 "softsign", "swish", "mish", "is_nan", "is_inf", "is_finite"):
        nodes.append(getattr(opset13, name)(p()))
    nodes += [
        opset13.round(p(), "half_to_even"), opset13.elu(p(), 1.0),
        opset13.selu(p(), c([1.0], f32), c([1.0], f32)), opset13.prelu(p(), c([1.0], f32)),
        opset13.clamp(p(), 0, 1), opset13.hard_sigmoid(p(), c(0.2, f32), c(0.5, f32)),
        opset2.gelu(p()), opset13.gelu(p(), "tanh"),
        opset1.softmax(p(), 1), opset13.softmax(p(), -1), opset13.log_softmax(p(), 1),
        opset13.convert(p(), "i32"), opset13.convert_like(p(), p(t=i32)),
        opset13.select(p(t=b), p(), p()),
        opset1.batch_norm_inference(p(), p((3,)), p((3,)), p((3,)), p((3,)), 1e-5),
        opset13.batch_norm_inference(p(), p((3,)), p((3,)), p((3,)), p((3,)), 1e-5),
        opset2.mvn(p(), True, True, 1e-5), opset13.mvn(p(), c([1]), True, 1e-5, "inside_sqrt"),
        opset13.normalize_l2(p(), c([1]), 1e-5, "add"),
        opset13.group_normalization(p((2, 4, 3)), p((4,)), p((4,)), 2, 1e-5),
        opset13.lrn(p((1, 3, 4, 4)), c([1]), 1, 1, 1, 3),
        opset13.matmul(p(), p((3, 2)), False, False),
        opset1.topk(p(), c(1), 1, "max", "value"),
        opset13.cumsum(p(), c(0)), opset13.einsum([p(), p((3, 2))], "ij,jk->ik"),
        opset13.dft(p((2, 3, 2)), c([1])), opset13.idft(p((2, 3, 2)), c([1])),
        opset13.rdft(p((2, 4)), c([1])), opset13.irdft(p((2, 3, 2)), c([1])),
        opset1.range(c(0.0, f32), c(4.0, f32), c(1.0, f32)),
        opset13.range(c(0), c(4), c(1), "i64"),
        opset13.fake_quantize(p(), c(0.0, f32), c(1.0, f32), c(0.0, f32), c(1.0, f32), 256),
        opset13.random_uniform(c([2]), c(0.0, f32), c(1.0, f32), "f32", 1, 2),
        opset13.multinomial(p(), c(2), "i32", True, False, 1, 2),
    ]
    from openvino import opset3, opset11
    nodes += [opset3.topk(p(), c(1), 1, "max", "value"),
              opset11.topk(p(), c(1), 1, "max", "value", stable=True)]
    for name in ("reduce_sum", "reduce_mean", "reduce_max", "reduce_min", "reduce_prod",
                 "reduce_l1", "reduce_l2"):
        nodes.append(getattr(opset13, name)(p(), c([1])))
    for name in ("reduce_logical_and", "reduce_logical_or"):
        nodes.append(getattr(opset13, name)(p(t=b), c([1])))
    return nodes


def test_every_version_openvino_writes_is_registered(tmp_path: Path) -> None:
    """Save one node of each operation version with OpenVINO and read back the layer
    types and versions it writes: each must resolve to a class of these modules."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        nodes = _all_share_nodes()
    outputs = [out for node in nodes for out in node.outputs()]
    ov.save_model(ov.Model(outputs, _parameters(nodes)), tmp_path / "all.xml",
                  compress_to_fp16=False)
    pairs = {(el.get("type"), el.get("version"))
             for el in ET.parse(tmp_path / "all.xml").getroot().iter("layer")}
    pairs = {pair for pair in pairs if pair[0] not in BOUNDARY}
    assert len(pairs) >= 100, sorted(pairs)
    # Exactly as written: no fallback from a later opset to an earlier registration.
    exact = set(registered())
    missing = sorted(pair for pair in pairs if pair not in exact or not in_share(*pair))
    assert missing == []


def _parameters(nodes: list[ov.Node]) -> list[ov.Node]:
    seen: dict[int, ov.Node] = {}
    stack = list(nodes)
    while stack:
        node = stack.pop()
        for inp in node.inputs():
            src = inp.get_source_output().get_node()
            if src.get_type_name() == "Parameter":
                seen[id(src)] = src
            else:
                stack.append(src)
    return list(seen.values())


# ---------------------------------------------------------------------------
# Corpus: the fast subset (one case per operation), converted on the spot

FAST_CASES = (
    "test_abs", "test_acos", "test_acosh", "test_add", "test_and2d",
    "test_argmax_keepdims_random", "test_asin", "test_asinh", "test_atan", "test_atanh",
    "test_batchnorm_example", "test_bitwise_and_i32_2d", "test_bitwise_not_2d",
    "test_bitwise_or_i32_2d", "test_bitwise_xor_i32_2d", "test_cast_FLOAT_to_FLOAT16",
    "test_castlike_FLOAT_to_FLOAT16", "test_ceil", "test_cos", "test_cosh", "test_cumsum_1d",
    "test_div", "test_div_int32_trunc", "test_einsum_sum", "test_elu", "test_equal",
    "test_erf", "test_exp", "test_floor", "test_gelu_tanh_1", "test_greater",
    "test_greater_equal", "test_group_normalization_example", "test_hardsigmoid",
    "test_hardswish", "test_isinf", "test_isnan", "test_less", "test_less_equal", "test_log",
    "test_logsoftmax_axis_0", "test_lrn", "test_matmul_2d", "test_max_int8", "test_min_int8",
    "test_mish", "test_mod_int64_fmod", "test_mod_uint8", "test_mul", "test_mvn", "test_neg",
    "test_not_2d", "test_or2d", "test_pow", "test_prelu_example", "test_quantizelinear",
    "test_range_float_type_positive_delta", "test_reduce_l1_empty_set",
    "test_reduce_l2_empty_set", "test_reduce_max_keepdims_random",
    "test_reduce_mean_keepdims_random", "test_reduce_min_empty_set",
    "test_reduce_prod_empty_set", "test_reduce_sum_empty_set", "test_relu", "test_round",
    "test_selu", "test_sigmoid", "test_sign", "test_sin", "test_sinh", "test_softmax_axis_0",
    "test_softplus", "test_softsign", "test_sqrt", "test_sub", "test_swish", "test_tan",
    "test_tanh", "test_where_example", "test_xor2d", "test_swiglu_float16_expanded",
)


@pytest.fixture(scope="module")
def fast_corpus(tmp_path_factory: pytest.TempPathFactory) -> dict[str, ov_corpus.CorpusCase]:
    return load_fast_corpus(FAST_CASES, tmp_path_factory)


@pytest.mark.parametrize("name", FAST_CASES)
def test_fast_corpus_case(name: str, fast_corpus: dict[str, ov_corpus.CorpusCase]) -> None:
    case = fast_corpus[name]
    foreign = sorted({t for t, v in case.ops if t not in BOUNDARY and not in_share(t, v)})
    assert foreign == [], f"{name} uses operations outside these modules: {foreign}"
    check_case(case)


# ---------------------------------------------------------------------------
# Corpus: every case whose layers all belong to these modules (slow)


_SHARE_CASES = share_case_names(in_share)


def test_the_share_has_its_corpus_cases() -> None:
    assert len(_SHARE_CASES) > 500, "suspiciously few corpus cases for these modules"


@pytest.fixture(scope="module")
def corpus_by_name() -> dict[str, ov_corpus.CorpusCase]:
    return {c.name: c for c in ov_corpus.corpus_cases()}


@pytest.mark.slow
@pytest.mark.parametrize("name", _SHARE_CASES)
def test_corpus_case(name: str, corpus_by_name: dict[str, ov_corpus.CorpusCase]) -> None:
    check_case(corpus_by_name[name])


# ---------------------------------------------------------------------------
# Single operations built with OpenVINO, run by OpenVINO's CPU plugin and by irtool


def against_openvino(outputs: ov.Node | list, params: list[ov.Node],
                     feeds: list[np.ndarray]) -> list[np.ndarray]:
    """Save the model as IR, run it on OpenVINO (CPU) and irtool; assert they agree.

    Returns OpenVINO's outputs, so callers can also check them against hand-made values.
    """
    outs = outputs.outputs() if isinstance(outputs, ov.Node) else \
        [o for node in outputs for o in node.outputs()]
    with tempfile.TemporaryDirectory() as tmp:
        xml = Path(tmp) / "m.xml"
        ov.save_model(ov.Model(outs, params), xml, compress_to_fp16=False)
        compiled = ov.Core().compile_model(xml, "CPU", CPU_CONFIG)
        result = compiled(feeds)
        expected = [np.array(result[o]) for o in compiled.outputs]
        got = run_irtool(xml, feeds)
    assert len(got) == len(expected)
    for i, (a, e) in enumerate(zip(got, expected)):
        why = mismatch(a, e)
        assert why is None, f"output {i}: {why}\nirtool:   {np.ravel(a)[:8]}\nopenvino: " \
            f"{np.ravel(e)[:8]}"
    return expected


def param(shape: Sequence[int], dtype: type = np.float32) -> ov.Node:
    return opset13.parameter(list(shape), dtype)


def const(value: object, dtype: type = np.int64) -> ov.Node:
    return opset13.constant(np.array(value, dtype))


RNG = np.random.default_rng(20260)
X23 = RNG.standard_normal((2, 3, 4)).astype(np.float32)


def _binary(build: Callable[[ov.Node, ov.Node], ov.Node], a: np.ndarray, b: np.ndarray) -> None:
    pa, pb = param(a.shape, a.dtype.type), param(b.shape, b.dtype.type)
    against_openvino(build(pa, pb), [pa, pb], [a, b])


INTS_A = np.array([[-7, -3, 0, 3, 7, 9], [5, -5, 6, -6, 100, -100]], np.int32)
INTS_B = np.array([[2, 2, 3, -2, -3, 4], [-3, 3, 4, -4, 7, 7]], np.int32)


# OpenVINO's CPU computes i8 SquaredDifference wrongly ((-7 - 2)^2 gives -7), so that
# pair has nothing to be compared against and is left out.
BINARY_CASES = [(name, dtype)
                for name in ("divide", "floor_mod", "mod", "squared_difference", "not_equal",
                             "maximum", "minimum", "subtract")
                for dtype in (np.int32, np.int64, np.int8, np.float32)
                if (name, dtype) != ("squared_difference", np.int8)]


@pytest.mark.parametrize(("name", "dtype"), BINARY_CASES)
def test_binary_arithmetic(name: str, dtype: type) -> None:
    """Integer division truncates, FloorMod follows the divisor's sign, Mod the dividend's.

    No value overflows: on overflow OpenVINO's CPU saturates i8/u8 results (and its i8
    SquaredDifference is plainly wrong), where irtool wraps like the spec's C++ types.
    """
    _binary(getattr(opset13, name), INTS_A.astype(dtype), INTS_B.astype(dtype))


def test_divide_integers_truncate_like_openvino_cpu() -> None:
    """m_pythondiv is true, yet OpenVINO's CPU truncates (and irtool follows it)."""
    a, b = param([4], np.int32), param([4], np.int32)
    got = against_openvino(opset13.divide(a, b), [a, b], [np.array([-3, 3, -3, 7], np.int32),
                                                         np.array([2, 2, -2, -2], np.int32)])
    np.testing.assert_array_equal(got[0], [-1, 1, 1, -3])  # -3/2, 3/2, -3/-2, 7/-2


@pytest.mark.parametrize("dtype", [np.int32, np.uint8])
def test_power_integers(dtype: type) -> None:
    _binary(opset13.power, np.array([2, 3, 0, 5, 1, 7], dtype), np.array([3, 0, 4, 1, 9, 2],
                                                                             dtype))


@pytest.mark.parametrize("name", ["bitwise_left_shift", "bitwise_right_shift"])
def test_bitwise_shifts(name: str) -> None:
    from openvino import opset15
    _binary(getattr(opset15, name), np.array([1, 5, 255, -8, 1024], np.int32),
            np.array([0, 1, 3, 2, 4], np.int32))


def test_logical_xor_and_numpy_broadcast() -> None:
    a = np.array([[True], [False]])
    b = np.array([True, False, True])
    _binary(opset13.logical_xor, a, b)


@pytest.mark.parametrize(("b_shape", "axis", "view"), [
    ((3, 4), 1, (1, 3, 4, 1)), ((4, 5), -1, (1, 1, 4, 5)), ((3, 1), 1, (1, 3, 1, 1)),
    ((2,), 0, (2, 1, 1, 1))])
def test_pdpd_broadcast(b_shape: tuple[int, ...], axis: int, view: tuple[int, ...]) -> None:
    """PDPD places B's dims at ``axis`` of A (OpenVINO's Python builders cannot set the
    axis, so the expectation is plain numpy)."""
    a = RNG.standard_normal((2, 3, 4, 5)).astype(np.float32)
    b = RNG.standard_normal(b_shape).astype(np.float32)
    op = make_op("Subtract", "opset1", {"auto_broadcast": "pdpd", "axis": str(axis)})
    np.testing.assert_array_equal(op.compute([a, b])[0], a - b.reshape(view))
    info = op.infer([TensorInfo.of(a), TensorInfo.of(b)], [None, None])
    assert info == [TensorInfo.of(a)]


UNARY_X = np.array([-3.7, -2.5, -1.0, -0.5, -0.2, 0.0, 0.3, 0.5, 1.5, 2.5, 4.2, 30.0],
                   np.float32)


@pytest.mark.parametrize("name", ["hsigmoid", "is_finite", "softsign", "mish", "softplus",
                                  "hswish", "sign", "floor", "ceiling", "negative", "abs",
                                  "erf", "tanh", "sigmoid", "relu", "atan", "sinh"])
def test_unary(name: str) -> None:
    x = UNARY_X.copy()
    if name == "is_finite":
        x[[0, 3, 6]] = [np.inf, -np.inf, np.nan]
    p = param(x.shape)
    against_openvino(getattr(opset13, name)(p), [p], [x])


@pytest.mark.parametrize("mode", ["half_to_even", "half_away_from_zero"])
def test_round_modes(mode: str) -> None:
    p = param(UNARY_X.shape)
    got = against_openvino(opset13.round(p, mode), [p], [UNARY_X])
    assert got[0][1] == (-2.0 if mode == "half_to_even" else -3.0)  # -2.5


@pytest.mark.parametrize("dtype", [np.float32, np.float16])
def test_gelu_both_versions(dtype: type) -> None:
    x = UNARY_X.astype(dtype)
    p = param(x.shape, dtype)
    against_openvino([opset2.gelu(p), opset13.gelu(p, "erf"), opset13.gelu(p, "tanh")], [p], [x])


@pytest.mark.parametrize(("lo", "hi", "dtype"), [(0, 255, np.int32), (-1.5, 2.5, np.int32),
                                                 (-1.5, 2.5, np.float32), (0.5, 0.7, np.int64)])
def test_clamp(lo: float, hi: float, dtype: type) -> None:
    """Integer clamps round min up and max down."""
    x = np.array([-300, -2, -1, 0, 1, 2, 3, 300], dtype)
    p = param(x.shape, dtype)
    against_openvino(opset13.clamp(p, lo, hi), [p], [x])


def test_prelu_channel_and_broadcast_slopes() -> None:
    p = param(X23.shape)
    against_openvino([opset13.prelu(p, const([0.1, 0.2, 0.3], np.float32)),
                      opset13.prelu(p, const([0.1, 0.2, 0.3, 0.4], np.float32))], [p], [X23])


def test_softmax_versions() -> None:
    p = param(X23.shape)
    against_openvino([opset1.softmax(p, 2), opset13.softmax(p, -2),
                      opset13.log_softmax(p, -1)], [p], [X23])


@pytest.mark.parametrize(("src", "dst"), [
    (np.float32, "i32"), (np.float32, "u8"), (np.float32, "i8"), (np.float32, "i16"),
    (np.float32, "boolean"), (np.float32, "f16"), (np.int32, "u8"), (np.int32, "i8"),
    (np.int32, "boolean"), (np.int32, "f32"), (np.int64, "i32"), (np.uint8, "i8"),
    (np.float64, "i64"), (np.float64, "u32"), (np.float16, "i32"), (np.float16, "u64"),
])
def test_convert_rules(src: type, dst: str) -> None:
    """Truncation, wrap-around and NaN handling of OpenVINO's CPU plugin."""
    if np.dtype(src).kind == "f":
        with np.errstate(over="ignore"):
            x = np.array([-2.7, -2.5, 2.5, 3.5, 300.7, -300.2, 1e10, -1e10, np.nan, np.inf,
                          -np.inf, 0.4, 0.0, 3e9], src)
    elif src == np.int64:
        x = np.array([-1, 2**31, 2**31 - 1, 70000, -(2**33) + 5, 0], src)
    elif src == np.uint8:
        x = np.array([0, 1, 127, 128, 200, 255], src)
    else:
        # INT32_MIN is left out: OpenVINO's CPU turns it (alone) into false for boolean.
        x = np.array([-(2**31) + 1, -129, -1, 0, 1, 255, 256, 300, 2**31 - 1], src)
    p = param(x.shape, src)
    against_openvino(opset13.convert(p, dst), [p], [x])


def test_convert_like_and_select() -> None:
    a, b = param((2, 3)), param((3,), np.int32)
    c = param((2, 1), np.bool_)
    feeds = [X23[:, :, 0] * 5, np.array([1, 2, 3], np.int32), np.array([[True], [False]])]
    against_openvino([opset13.convert_like(a, b), opset13.select(c, a, opset13.convert_like(
        b, a))], [a, b, c], feeds)


@pytest.mark.parametrize("keep", [True, False])
@pytest.mark.parametrize("name", ["reduce_sum", "reduce_mean", "reduce_max", "reduce_min",
                                  "reduce_prod", "reduce_l1", "reduce_l2"])
@pytest.mark.parametrize("dtype", [np.float32, np.int32])
def test_reductions(name: str, keep: bool, dtype: type) -> None:
    """Integer means truncate; reducing over no axes is the identity (|x| for L1, L2)."""
    x = (X23 * 4).astype(dtype)
    p = param(x.shape, dtype)
    fn = getattr(opset13, name)
    nodes = [fn(p, const([1, -1]), keep), fn(p, const([0]), keep)]
    if keep:  # OpenVINO's CPU rejects empty axes without keep_dims
        nodes.append(fn(p, const([], np.int64), keep))
    against_openvino(nodes, [p], [x])


@pytest.mark.parametrize("name", ["reduce_logical_and", "reduce_logical_or"])
def test_logical_reductions(name: str) -> None:
    x = X23 > 0
    p = param(x.shape, np.bool_)
    fn = getattr(opset13, name)
    against_openvino([fn(p, const([0]), True), fn(p, const([1, 2]), False)], [p], [x])


def test_normalizations_not_in_the_corpus() -> None:
    x = X23[None] * 3 + 1  # [1, 2, 3, 4]
    p = param(x.shape)
    vec = [param((3,)) for _ in range(4)]
    gamma, beta, mean = (np.array(v, np.float32) for v in ([1.0, 2.0, 0.5], [0.1, 0, -1],
                                                          [0.2, -0.3, 0.0]))
    var = np.array([1.0, 0.25, 4.0], np.float32)
    nodes = [
        opset2.mvn(p, False, True, 1e-5), opset2.mvn(p, True, False, 1e-5),
        opset13.mvn(p, const([2, 3]), True, 1e-3, "outside_sqrt"),
        opset13.normalize_l2(p, const([1]), 1e-3, "add"),
        opset13.normalize_l2(p, const([2, 3]), 10.0, "max"),
        opset13.lrn(p, const([2, 3]), 0.1, 0.75, 2.0, 3),
    ]
    x3 = X23.reshape(2, 3, 4)
    p3 = param(x3.shape)
    nodes += [opset1.batch_norm_inference(p3, *vec, 1e-3)]
    against_openvino(nodes, [p, p3, *vec], [x, x3, gamma, beta, mean, var])


def test_matmul_vectors_and_transposes() -> None:
    a, b = param((3,)), param((2, 3, 4))
    m, n = param((5, 3)), param((4, 5))
    feeds = [RNG.standard_normal(s).astype(np.float32) for s in ((3,), (2, 3, 4), (5, 3),
                                                                  (4, 5))]
    against_openvino([opset13.matmul(a, b, False, False), opset13.matmul(m, n, True, True),
                      opset13.matmul(b, a, True, False)], [a, b, m, n], feeds)


@pytest.mark.parametrize("mode", ["max", "min"])
@pytest.mark.parametrize("sort", ["value", "index"])
def test_topk_ties_and_sorting(mode: str, sort: str) -> None:
    """Equal values come out in index order, in every version."""
    x = np.array([[3, 1, 3, 2, 1, 3], [0, 0, 5, 5, 0, 1]], np.float32)
    p = param(x.shape)
    from openvino import opset3, opset11
    nodes = [opset1.topk(p, const(3), 1, mode, sort), opset3.topk(p, const(4), -1, mode, sort,
                                                                  "i64"),
             opset11.topk(p, const(2), 0, mode, sort, "i32", stable=True)]
    against_openvino(nodes, [p], [x])


@pytest.mark.parametrize(("exclusive", "reverse"), [(False, False), (True, False),
                                                    (False, True), (True, True)])
def test_cumsum(exclusive: bool, reverse: bool) -> None:
    x = (X23 * 3).astype(np.int32)
    p = param(x.shape, np.int32)
    against_openvino(opset13.cumsum(p, const(-1), exclusive, reverse), [p], [x])


@pytest.mark.parametrize(("start", "stop", "step", "out"), [
    (0, 10, 3, "i64"), (10, 0, -2, "i32"), (0.5, 3.2, 0.7, "f32"), (0.5, 3.2, 0.7, "i64"),
    (2, 2, 1, "f32"), (-1.5, 1, 0.5, "f16"),
])
def test_range(start: float, stop: float, step: float, out: str) -> None:
    ins = [param((), np.float32) for _ in range(3)]
    feeds = [np.array(v, np.float32) for v in (start, stop, step)]
    against_openvino(opset13.range(*ins, out), ins, feeds)
    ints = [param((), np.int32) for _ in range(3)]
    if all(float(v).is_integer() for v in (start, stop, step)):
        against_openvino(opset1.range(*ints), ints, [np.array(v, np.int32) for v in
                                                      (start, stop, step)])


def test_einsum_equations() -> None:
    a, b = param((2, 3, 4)), param((2, 4, 5))
    feeds = [RNG.standard_normal((2, 3, 4)).astype(np.float32),
             RNG.standard_normal((2, 4, 5)).astype(np.float32)]
    against_openvino([opset13.einsum([a, b], "bij,bjk->bik"), opset13.einsum([a], "bij->jb"),
                      opset13.einsum([a, b], "...ij,...jk->...ik")], [a, b], feeds)


def test_fake_quantize() -> None:
    x = np.linspace(-2, 2, 41, dtype=np.float32).reshape(1, 41)
    p = param(x.shape)
    node = opset13.fake_quantize(p, const(-1.0, np.float32), const(1.2, np.float32),
                                 const(0.0, np.float32), const(10.0, np.float32), 11)
    against_openvino(node, [p], [x])


@pytest.mark.parametrize(("axes", "sizes"), [([1], None), ([0, 1], None), ([-1], None),
                                             ([1, 2], [3, 7]), ([0, 2], [5, -1])])
def test_complex_dft(axes: list[int], sizes: list[int] | None) -> None:
    x = RNG.standard_normal((3, 4, 5, 2)).astype(np.float32)
    p = param(x.shape)
    extra = [] if sizes is None else [const(sizes)]
    against_openvino([opset13.dft(p, const(axes), *extra), opset13.idft(p, const(axes), *extra)],
                     [p], [x])


@pytest.mark.parametrize(("axes", "sizes"), [([1], None), ([0, 2], None), ([1, 2], [3, 5]),
                                             ([2], [4])])
def test_real_dft(axes: list[int], sizes: list[int] | None) -> None:
    x = RNG.standard_normal((3, 4, 6)).astype(np.float32)
    p = param(x.shape)
    extra = [] if sizes is None else [const(sizes)]
    against_openvino(opset13.rdft(p, const(axes), *extra), [p], [x])


@pytest.mark.parametrize(("axes", "sizes"), [([1], None), ([0, 2], None), ([1, 2], [3, 7]),
                                             ([2], [4])])
def test_inverse_real_dft(axes: list[int], sizes: list[int] | None) -> None:
    # Signal sizes needing more than the N/2 + 1 given entries are left out: OpenVINO's
    # CPU reads past its input there (garbage); irtool zero-pads as the reference does.
    x = RNG.standard_normal((3, 4, 4, 2)).astype(np.float32)
    p = param(x.shape)
    extra = [] if sizes is None else [const(sizes)]
    against_openvino(opset13.irdft(p, const(axes), *extra), [p], [x])


@pytest.mark.parametrize(("et", "lo", "hi"), [("f32", 0.0, 1.0), ("f32", -2.0, 5.0),
                                              ("f16", 0.0, 1.0), ("f64", 1.0, 3.0),
                                              ("i32", -5, 10), ("i64", 0, 100)])
@pytest.mark.parametrize(("seed", "op_seed"), [(150, 10), (1, 0), (0, 7), (2**33 + 5, 2**35 + 1)])
def test_random_uniform_reproduces_openvino(et: str, lo: float, hi: float, seed: int,
                                            op_seed: int) -> None:
    dtype = element_type(et).dtype
    node = opset13.random_uniform(const([3, 7]), const(lo, dtype.type), const(hi, dtype.type),
                                  et, seed, op_seed)
    dummy = param((1,))
    against_openvino([node, opset13.relu(dummy)], [dummy], [np.zeros(1, np.float32)])


@pytest.mark.parametrize(("shape", "n", "replace", "log"), [
    ((2, 5), 3, True, False), ((2, 5), 4, False, False), ((3, 4), 6, True, True),
    ((1, 10), 10, False, False)])
def test_multinomial_reproduces_openvino(shape: tuple[int, int], n: int, replace: bool,
                                         log: bool) -> None:
    probs = RNG.random(shape).astype(np.float32)
    if log:
        probs = np.log(probs)
    p = param(shape)
    node = opset13.multinomial(p, const(n), "i32", replace, log, 123, 45)
    against_openvino(node, [p], [probs])


# ---------------------------------------------------------------------------
# Kernels checked against independent hand-made values


def test_erf_matches_math_erf() -> None:
    x = np.concatenate([np.linspace(-7, 7, 20001), [0.0, -0.0, 1e-12, np.inf, -np.inf]])
    want = np.array([math.erf(v) for v in x])
    assert np.max(np.abs(erf(x) - want)) < 1e-8
    assert np.isnan(erf(np.array([np.nan]))[0])


def test_zero_dim_inputs_give_arrays() -> None:
    """Kernels take numpy scalars / 0-d arrays and always return ndarrays."""
    add = make_op("Add", "opset1")
    out = add.compute([np.float32(1.5), np.array(2.0, np.float32)])[0]
    assert isinstance(out, np.ndarray) and out.shape == () and out.dtype == np.float32
    less = make_op("Less", "opset1")
    assert less.compute([np.array(1), np.array(2)])[0].dtype == np.bool_


def test_bad_attributes_raise_value_errors() -> None:
    with pytest.raises(ValueError, match="auto_broadcast"):
        make_op("Add", "opset1", {"auto_broadcast": "sideways"})
    with pytest.raises(ValueError, match="mode"):
        make_op("TopK", "opset11", {"axis": "0", "mode": "median", "sort": "value"})
    with pytest.raises(ValueError, match="destination_type"):
        make_op("Convert", "opset1", {})


# ---------------------------------------------------------------------------
# infer with dynamic dims and ranks, against OpenVINO's shape inference


def _ov_param(shape: Sequence[int] | None, dtype: type = np.float32) -> ov.Node:
    if shape is None:
        ps = ov.PartialShape.dynamic()
    else:
        ps = ov.PartialShape([ov.Dimension() if d < 0 else d for d in shape])
    return opset13.parameter(ps, dtype)


def _info(output: ov.Output) -> TensorInfo:
    ps = output.get_partial_shape()
    shape = None if ps.rank.is_dynamic else tuple(d.get_length() if d.is_static else -1
                                                  for d in ps)
    return TensorInfo(element_type(output.get_element_type().get_type_name()), shape)


def _attr_text(value: object) -> str:
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, list):
        return ",".join(map(str, value))
    return str(value)


def assert_infer_like_openvino(node: ov.Node) -> None:
    """irtool's ``infer`` on the node's input types/shapes (constant inputs known)
    gives the element types and partial shapes OpenVINO infers."""
    info = node.get_type_info()
    attrs = {k: _attr_text(v) for k, v in node.get_attributes().items()}
    op = make_op(info.name, info.version_id, attrs)
    inputs, values = [], []
    for inp in node.inputs():
        src = inp.get_source_output()
        inputs.append(_info(src))
        producer = src.get_node()
        values.append(producer.get_data() if producer.get_type_name() == "Constant" else None)
    got = op.infer(inputs, values)
    want = [_info(out) for out in node.outputs()]
    assert got == want


DYNAMIC_PAIRS = [([-1, 3], [2, -1]), ([-1], [1, -1]), ([1, 3], [-1, 1]), (None, [3]),
                 ([4, 1, -1], [-1]), ([], [-1, 2])]


@pytest.mark.parametrize(("a", "b"), DYNAMIC_PAIRS)
@pytest.mark.parametrize("name", ["add", "power", "less", "logical_and", "bitwise_xor"])
def test_infer_binary(name: str, a: list[int] | None, b: list[int] | None) -> None:
    dtype = {"logical_and": np.bool_, "bitwise_xor": np.int32}.get(name, np.float32)
    assert_infer_like_openvino(getattr(opset13, name)(_ov_param(a, dtype), _ov_param(b, dtype)))


@pytest.mark.parametrize("shape", [[-1, 4, -1], None, []])
def test_infer_unary_activation_convert(shape: list[int] | None) -> None:
    x = _ov_param(shape)
    nodes = [opset13.exp(x), opset13.relu(x), opset13.is_nan(x), opset13.clamp(x, 0, 1),
             opset13.convert(x, "i8"), opset13.convert_like(x, _ov_param([2], np.int16)),
             opset13.swish(x), opset13.gelu(x, "tanh")]
    if shape != []:
        nodes += [opset13.softmax(x, -1), opset13.log_softmax(x, 0)]
    for node in nodes:
        assert_infer_like_openvino(node)


def test_infer_select() -> None:
    assert_infer_like_openvino(opset13.select(_ov_param([-1, 1], np.bool_), _ov_param([1, 4]),
                                              _ov_param([3, 1, -1])))
    assert_infer_like_openvino(opset13.select(_ov_param(None, np.bool_), _ov_param([1, 4]),
                                              _ov_param([4])))


@pytest.mark.parametrize("keep", [True, False])
@pytest.mark.parametrize("axes", [[1], [-1, 0], "unknown[2]", "unknown[?]", "unknown scalar"])
@pytest.mark.parametrize("data", [[-1, 3, -1], [-1, 3, 1], None])
def test_infer_reduction(data: list[int] | None, axes: object, keep: bool) -> None:
    x = _ov_param(data)
    if isinstance(axes, list):
        a = const(axes)
    else:
        a = _ov_param({"unknown[2]": [2], "unknown[?]": [-1], "unknown scalar": []}[axes],
                      np.int64)
    for fn in (opset13.reduce_sum, opset13.reduce_max, opset13.reduce_l2):
        assert_infer_like_openvino(fn(x, a, keep))


@pytest.mark.parametrize(("a", "b", "ta", "tb"), [
    ([-1, 4], [4, -1], False, False), ([2, -1, 3], [-1, 3, 5], False, False),
    ([3], [3], False, False), ([3], [-1, 3, 4], False, False), ([-1, 2, 3], [3], False, False),
    ([4, 3], [5, 4], True, True), (None, [3, 4], False, False), ([-1, -1], [-1, -1], True, False),
    ([1, -1, 2, 3], [7, 1, 3, 4], False, False), ([-1], [-1, -1, -1], False, True),
])
def test_infer_matmul(a: list[int] | None, b: list[int] | None, ta: bool, tb: bool) -> None:
    assert_infer_like_openvino(opset13.matmul(_ov_param(a), _ov_param(b), ta, tb))


@pytest.mark.parametrize(("shape", "k", "axis"), [([-1, 10], 3, 1), ([5, 10], 20, 1),
                                                  ([5, -1], 4, -1), ([5, -1], None, 1),
                                                  (None, 3, 0), ([-1, -1], None, 0)])
def test_infer_topk(shape: list[int] | None, k: int | None, axis: int) -> None:
    kk = const(k) if k is not None else _ov_param([], np.int64)
    from openvino import opset11
    assert_infer_like_openvino(opset11.topk(_ov_param(shape), kk, axis, "max", "value", "i64"))
    assert_infer_like_openvino(opset1.topk(_ov_param(shape), kk, axis, "min", "index"))


@pytest.mark.parametrize("shape", [[-1, 4, -1], None])
def test_infer_cumsum(shape: list[int] | None) -> None:
    x = _ov_param(shape)
    assert_infer_like_openvino(opset13.cumsum(x, const(1)))
    assert_infer_like_openvino(opset13.cumsum(x, _ov_param([], np.int64), True, True))


@pytest.mark.parametrize("values", [(0, 10, 3), (10, 0, -2), (0.5, 3.2, 0.7), (None, 5, 1),
                                    (2, 2, 1), (1, None, None), (-3.5, 2, 1.5)])
@pytest.mark.parametrize("out", ["i64", "f32", "i32"])
def test_infer_range(values: tuple, out: str) -> None:
    ins = [const(v, np.float32) if v is not None else _ov_param([], np.float32) for v in values]
    assert_infer_like_openvino(opset13.range(*ins, out))
    ints = [const(int(v), np.int32) if v is not None else _ov_param([], np.int32)
            for v in values]
    if all(v is None or float(v).is_integer() for v in values) and values[2] != 0:
        assert_infer_like_openvino(opset1.range(*ints))


def test_infer_fft_and_random() -> None:
    nodes = [opset13.dft(_ov_param([-1, -1, 2]), const([0])),
             opset13.idft(_ov_param([-1, 6, 2]), const([1]), const([4])),
             opset13.rdft(_ov_param([-1, 8]), const([1])),
             opset13.irdft(_ov_param([-1, 5, 2]), const([1])),
             opset13.dft(_ov_param(None), const([0])),
             opset13.random_uniform(const([2, 3]), const(0.0, np.float32),
                                    const(1.0, np.float32), "f32", 1, 2),
             opset13.random_uniform(_ov_param([3], np.int64), const(0.0, np.float32),
                                    const(1.0, np.float32), "f32", 1, 2),
             opset13.multinomial(_ov_param([-1, -1]), const(5), "i32", True, False, 1, 2)]
    for node in nodes:
        assert_infer_like_openvino(node)
