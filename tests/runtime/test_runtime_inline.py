"""Inlined steps (``fastpath.inline_for``): plain numpy calls in the generated plan code.

An inlined step must give exactly what the operation's kernel gives, for every
input, not only the declared dtype: the same class (an ndarray, never a numpy
scalar), dtype, shape and bits, and the same error. Each case runs a one-op
plan on inputs that pass the inline guard and on inputs that must fall back
(other dtypes, 0-d arrays, numpy scalars, views), compares with the kernel and,
for the declared dtype, with numpy written out by hand.
"""

from __future__ import annotations

import re
from collections.abc import Callable

import numpy as np
import pytest
from support.compare import assert_matmul_close
from support.ir_builders import Net

from irtool.core.errors import ExecutionError
from irtool.opset import make_op
from irtool.runtime import compile_graph

F32 = np.float32
RNG = np.random.default_rng(3)


def outcome(fn: Callable[[], list]) -> tuple[str, object]:
    """("ok", value) or ("error", exception type); the plan's ExecutionError counts as the
    kernel error that caused it."""
    try:
        with np.errstate(all="ignore"):  # the kernels' own warnings (NaN cast to int, ...)
            return "ok", fn()[0]
    except ExecutionError as err:
        return "error", type(err.__cause__)
    except Exception as err:
        return "error", type(err)


def assert_identical(got: tuple[str, object], want: tuple[str, object], what: str) -> None:
    assert got[0] == want[0], f"{what}: {got} vs {want}"
    if got[0] == "error":
        assert got[1] is want[1], what
        return
    g, w = got[1], want[1]
    assert type(g) is type(w), f"{what}: {type(g)} vs {type(w)}"
    g, w = np.asarray(g), np.asarray(w)
    assert g.dtype == w.dtype and g.shape == w.shape, f"{what}: {g.dtype}{g.shape} vs " \
        f"{w.dtype}{w.shape}"
    assert g.tobytes() == w.tobytes(), what  # bit for bit, NaNs included


def one_op(op_type: str, version: str, ets: list[str], attrs: dict | None = None,
           const: np.ndarray | None = None, out_et: str | None = None):  # type: ignore[no-untyped-def]
    """A plan of one ``op_type`` layer on Parameters of element types ``ets`` (and
    ``const`` as its last input when given); returns (plan, op)."""
    net = Net()
    ins = [net.param(f"x{k}", et, None) for k, et in enumerate(ets)]
    if const is not None:
        ins.append(net.const(const))
    net.result(net.op(op_type, version, ins, attrs or {}, et=out_et, shape=None))
    return compile_graph(net.graph), make_op(op_type, version, attrs or {})


def f32(*shape: int) -> np.ndarray:
    return RNG.standard_normal(shape).astype(F32)


BROADCAST = {"auto_broadcast": "numpy"}
BINARY = [
    ("Add", np.add, False), ("Subtract", np.subtract, False), ("Multiply", np.multiply, False),
    ("Maximum", np.maximum, False), ("Minimum", np.minimum, False), ("Less", np.less, True),
    ("Equal", np.equal, True), ("GreaterEqual", np.greater_equal, True),
    ("Divide", np.true_divide, False), ("Power", np.power, False), ("Mod", np.fmod, False),
    ("FloorMod", np.mod, False),
]


def binary_inputs() -> list[tuple[str, list]]:
    """(label, [a, b]): the declared f32 case first, then inputs that must fall back."""
    a = f32(3, 4)
    return [
        ("f32 2-D", [a, f32(3, 4)]),
        ("f32 broadcast", [f32(3, 1), f32(4)]),
        ("f32 0-d and 1-D", [np.array(1.5, F32), f32(4)]),
        ("f32 0-d", [np.array(1.5, F32), np.array(-2, F32)]),
        ("f32 views", [a[:, ::2], a.T[1::2].T]),  # strided (3, 2) and (3, 2)
        ("f64", [f32(3).astype(np.float64), f32(3).astype(np.float64)]),
        ("mixed f32 f64", [f32(3), f32(3).astype(np.float64)]),
        ("f16", [f32(3).astype(np.float16), f32(3).astype(np.float16)]),
        ("i32", [np.arange(4, dtype=np.int32), np.arange(4, dtype=np.int32) - 2]),
        ("numpy scalars", [F32(1.5), F32(2.5)]),
        ("scalar and f32 array", [F32(1.5), f32(2)]),
        ("no broadcast", [f32(3), f32(4)]),
    ]


@pytest.mark.parametrize("op_type,func,bool_out", BINARY)
def test_binary_inline_matches_kernel_and_numpy(op_type: str, func: Callable,
                                                bool_out: bool) -> None:
    plan, op = one_op(op_type, "opset1", ["f32", "f32"], BROADCAST,
                      out_et="boolean" if bool_out else None)
    assert plan.steps[0].inlined is not None
    for label, args in binary_inputs():
        got = outcome(lambda: plan.execute(args))  # noqa: B023
        assert_identical(got, outcome(lambda: op.compute(args)), f"{op_type} {label}")  # noqa: B023
        if label.startswith("f32"):
            # numpy computes every declared-f32 case, so both paths raising is a failure.
            with np.errstate(all="ignore"):
                want = np.asarray(func(*args))
            assert_identical(got, ("ok", want), f"{op_type} {label} vs numpy")
        elif label == "no broadcast":  # shapes (3,) and (4,): numpy refuses, so must irtool
            with pytest.raises(ValueError):
                func(*args)
            assert got == ("error", ValueError), f"{op_type} {label}: {got}"


@pytest.mark.parametrize("const", [np.array([0.5, -1, 2, 4], F32), np.array(0.5, F32)])
def test_binary_inline_with_a_constant(const: np.ndarray) -> None:
    plan, op = one_op("Add", "opset1", ["f32"], BROADCAST, const=const)
    inline = plan.steps[0].inlined
    assert inline is not None and inline.guarded == (0,)
    assert bool(inline.ndim_inputs) == (const.ndim == 0)  # a 1-D constant needs no check
    for x in [f32(3, 4), f32(4), np.array(2, F32), F32(2), f32(4).astype(np.float64)]:
        got = outcome(lambda: plan.execute([x]))  # noqa: B023
        assert_identical(got, outcome(lambda: op.compute([x, const])), f"Add {x!r}")  # noqa: B023
        if x.__class__ is np.ndarray and x.dtype == F32:
            assert_identical(got, ("ok", np.asarray(x + const)), "Add vs numpy")


def sigmoid(x: np.ndarray) -> np.ndarray:
    one = x.dtype.type(1)
    return (one / (one + np.exp(-x))).astype(x.dtype)  # the textbook form (no overflow here)


UNARY = [
    ("Tanh", "opset1", np.tanh), ("Exp", "opset1", np.exp), ("Sqrt", "opset1", np.sqrt),
    ("Sigmoid", "opset1", sigmoid), ("Relu", "opset1", lambda x: np.maximum(x, 0)),
    ("Abs", "opset1", np.abs), ("Negative", "opset1", np.negative),
    ("Floor", "opset1", np.floor), ("Clamp", "opset1", lambda x: np.clip(x, F32(-0.5), F32(1))),
]


@pytest.mark.parametrize("op_type,version,func", UNARY)
def test_unary_inline_matches_kernel_and_numpy(op_type: str, version: str,
                                               func: Callable) -> None:
    attrs = {"min": "-0.5", "max": "1"} if op_type == "Clamp" else {}
    plan, op = one_op(op_type, version, ["f32"], attrs)
    assert plan.steps[0].inlined is not None
    x = f32(3, 4) * 3
    for label, arg in [("f32 2-D", x), ("f32 view", x[::2, ::-1]), ("f32 0-d", np.array(-2, F32)),
                       ("f64", x.astype(np.float64)), ("f16", x.astype(np.float16)),
                       ("i32", np.arange(-3, 3, dtype=np.int32)), ("scalar", F32(0.25)),
                       ("bool", np.array([True, False]))]:
        got = outcome(lambda: plan.execute([arg]))  # noqa: B023
        assert_identical(got, outcome(lambda: op.compute([arg])), f"{op_type} {label}")  # noqa: B023
        if label in ("f32 2-D", "f32 view"):
            with np.errstate(all="ignore"):
                want = np.asarray(func(arg))
            assert_identical(got, ("ok", want), f"{op_type} {label} vs numpy")


def test_unary_inline_on_0d_input_gives_an_array() -> None:
    """numpy's tanh of a 0-d array is a numpy scalar; the step's output stays an array."""
    plan, _ = one_op("Tanh", "opset1", ["f32"])
    out = plan.execute([np.array(0.5, F32)])[0]
    assert out.__class__ is np.ndarray and out.shape == () and out.dtype == F32
    assert out.tobytes() == np.tanh(np.array([0.5], F32)).tobytes()


MATMUL_INPUTS = [
    ("2-D", [f32(2, 3), f32(3, 4)]),
    ("batched", [f32(2, 2, 3), f32(3, 4)]),
    ("1-D @ 2-D", [f32(3), f32(3, 4)]),
    ("2-D @ 1-D", [f32(2, 3), f32(3)]),
    ("1-D @ 1-D", [f32(3), f32(3)]),  # a scalar: must come back as a 0-d array
    ("view", [f32(3, 2).T, f32(4, 3).T]),
    ("f64", [f32(2, 3).astype(np.float64), f32(3, 4).astype(np.float64)]),
    ("f16", [f32(2, 3).astype(np.float16), f32(3, 4).astype(np.float16)]),  # widened
    ("i32", [np.arange(6, dtype=np.int32).reshape(2, 3), np.ones((3, 2), np.int32)]),
    ("0-d", [np.array(2, F32), f32(3)]),
    ("0-d @ 3-D", [np.array(2, F32), f32(2, 3, 4)]),
    ("mismatch", [f32(2, 3), f32(4, 2)]),
]


def test_matmul_inline_matches_kernel_and_numpy() -> None:
    plan, op = one_op("MatMul", "opset1", ["f32", "f32"])
    inline = plan.steps[0].inlined
    assert inline is not None and inline.ndim_inputs == (0, 1) and inline.min_ndim == 3
    for label, args in MATMUL_INPUTS:
        got = outcome(lambda: plan.execute(args))  # noqa: B023
        assert_identical(got, outcome(lambda: op.compute(args)), f"MatMul {label}")  # noqa: B023
        if label in ("2-D", "batched", "1-D @ 2-D", "2-D @ 1-D", "view"):
            assert_identical(got, ("ok", np.matmul(*args)), f"MatMul {label} vs numpy")


def _transposed(x: np.ndarray, flag: bool) -> np.ndarray:
    """A copy of ``x`` with its last two dims swapped when ``flag`` (a MatMul transpose
    attribute swaps them back)."""
    return np.ascontiguousarray(np.swapaxes(x, -1, -2)) if flag and x.ndim >= 2 else x


@pytest.mark.parametrize("transpose_a,transpose_b", [(True, False), (False, True), (True, True)])
def test_transposed_matmul_inline_matches_kernel_and_numpy(transpose_a: bool,
                                                           transpose_b: bool) -> None:
    attrs = {"transpose_a": str(transpose_a).lower(), "transpose_b": str(transpose_b).lower()}
    plan, op = one_op("MatMul", "opset1", ["f32", "f32"], attrs)
    assert plan.steps[0].inlined is not None
    for label, (a, b) in MATMUL_INPUTS:
        args = [_transposed(a, transpose_a), _transposed(b, transpose_b)]
        got = outcome(lambda: plan.execute(args))  # noqa: B023
        assert_identical(got, outcome(lambda: op.compute(args)), f"MatMul {label}")  # noqa: B023
        if label in ("2-D", "batched", "1-D @ 2-D", "2-D @ 1-D", "view"):
            # the inputs were transposed by hand: numpy on the untransposed ones, whose
            # other memory layout may take another BLAS kernel (other rounding)
            assert got[0] == "ok", f"MatMul {label}: {got}"
            assert_matmul_close(np.asarray(got[1]), a, b, f"MatMul {label} vs numpy")


def test_matmul_inline_with_a_constant_transposed_weight() -> None:
    """The vectorised map loop's form: X @ W^T with W a Const (transpose_b)."""
    w = f32(4, 3)
    plan, op = one_op("MatMul", "opset1", ["f32"], {"transpose_b": "true"}, const=w)
    assert plan.steps[0].inlined is not None
    for x in [f32(3), f32(5, 3), f32(2, 5, 3), f32(3).astype(np.float64), f32(4)]:
        got = outcome(lambda: plan.execute([x]))  # noqa: B023
        assert_identical(got, outcome(lambda: op.compute([x, w])), f"MatMul {x.shape}")  # noqa: B023
        if x.dtype == F32 and x.shape[-1] == 3:
            assert_identical(got, ("ok", np.asarray(np.matmul(x, w.T))), f"MatMul {x.shape}")
        elif x.dtype == F32:
            assert got[0] == "error", f"MatMul {x.shape}: {got}"


def test_matmul_inline_with_a_constant_weight() -> None:
    w = f32(3, 4)
    plan, op = one_op("MatMul", "opset1", ["f32"], const=w)
    inline = plan.steps[0].inlined
    assert inline is not None and inline.guarded == (0,) and not inline.ndim_inputs
    for x in [f32(3), f32(5, 3), f32(3).astype(np.float64), f32(4)]:
        got = outcome(lambda: plan.execute([x]))  # noqa: B023
        assert_identical(got, outcome(lambda: op.compute([x, w])), f"MatMul {x.shape}")  # noqa: B023
        if x.dtype == F32 and x.shape[-1] == 3:  # the declared case, by hand
            assert_identical(got, ("ok", np.asarray(np.matmul(x, w))), f"MatMul {x.shape}")
        elif x.dtype == F32:  # (4,) @ (3, 4): numpy refuses, so must irtool
            assert got[0] == "error", f"MatMul {x.shape}: {got}"


@pytest.mark.parametrize("op_type,version,ets,attrs", [
    ("Add", "opset1", ["f32", "f32"], {"auto_broadcast": "none"}),
    ("Add", "opset1", ["f32", "f32"], {"auto_broadcast": "pdpd"}),
    ("Add", "opset1", ["f32", "i32"], BROADCAST),  # mixed declared types
    ("Add", "opset1", ["f32", "dynamic"], BROADCAST),  # a type not known
    ("Divide", "opset1", ["i32", "i32"], BROADCAST),  # truncates: not numpy's division
    ("Power", "opset1", ["i32", "i32"], BROADCAST),
    ("MatMul", "opset1", ["f16", "f16"], {}),  # widened to f32 by the kernel
    ("Tanh", "opset1", ["i32"], {}),  # integers go through float64 and rounding
    ("Tanh", "opset1", ["f16"], {}),  # computed in f32
    ("Gelu", "opset7", ["f32"], {}),  # not on the list of plain numpy functions
])
def test_not_inlined(op_type: str, version: str, ets: list[str], attrs: dict) -> None:
    plan, _ = one_op(op_type, version, ets, attrs)
    assert plan.steps[0].inlined is None


def test_inline_failure_names_the_layer() -> None:
    net = Net()
    a, b = net.param("a", "f32", (3,)), net.param("b", "f32", (4,))
    net.result(net.op("Add", "opset1", [a, b], BROADCAST, name="plus"))
    plan = compile_graph(net.graph)
    assert plan.steps[0].inlined is not None
    with pytest.raises(ExecutionError, match=r'"plus" \(Add-opset1\): ValueError'):
        plan.execute([f32(3), f32(4)])


def test_replacing_a_kernel_turns_its_inline_form_off() -> None:
    plan, _ = one_op("Add", "opset1", ["f32", "f32"], BROADCAST)
    plan.steps[0].kernel = lambda ins: [ins[0] - ins[1]]
    plan.refresh()
    assert plan.steps[0].inlined is None
    np.testing.assert_array_equal(plan.execute([np.ones(2, F32), np.ones(2, F32)])[0],
                                  np.zeros(2, F32))


def chain_plan():  # type: ignore[no-untyped-def]
    """x @ W + b -> tanh -> * y -> < 0 -> Convert(f32), each step's op alongside."""
    w, b, zero = f32(3, 4), f32(4), np.array(0, F32)
    net = Net()
    x, y = net.param("x", "f32", None), net.param("y", "f32", None)
    a = net.op("MatMul", "opset1", [x, net.const(w)], shape=None)
    s = net.op("Add", "opset1", [a, net.const(b)], BROADCAST, shape=None)
    t = net.op("Tanh", "opset1", [s], shape=None)
    m = net.op("Multiply", "opset1", [t, y], BROADCAST, shape=None)
    neg = net.op("Less", "opset1", [m, net.const(zero)], BROADCAST, et="boolean", shape=None)
    back = net.op("Convert", "opset1", [neg], {"destination_type": "f32"}, et="f32", shape=None)
    for v in (t, m, back):
        net.result(v)
    ops = [make_op("MatMul", "opset1"), make_op("Add", "opset1", BROADCAST),
           make_op("Tanh", "opset1"), make_op("Multiply", "opset1", BROADCAST),
           make_op("Less", "opset1", BROADCAST),
           make_op("Convert", "opset1", {"destination_type": "f32"})]

    def by_kernels(xv: np.ndarray, yv: np.ndarray) -> list:
        av = ops[0].compute([xv, w])[0]
        tv = ops[2].compute([ops[1].compute([av, b])[0]])[0]
        mv = ops[3].compute([tv, yv])[0]
        return [tv, mv, ops[5].compute([ops[4].compute([mv, zero])[0]])[0]]

    return compile_graph(net.graph), by_kernels, (w, b)


def test_chain_of_inlined_steps_is_checked_once() -> None:
    plan, by_kernels, (w, b) = chain_plan()
    # MatMul, Add, Tanh, Multiply and Less run as one chain: a guard on x and y, then five
    # numpy calls in a row.
    lines = plan.execute.source.splitlines()
    first = next(k for k, line in enumerate(lines) if "is ndarray" in line)
    assert "v0.__class__ is ndarray" in lines[first] and "v1.__class__" in lines[first]
    assert all(re.match(r"\s+v\d+ = f\d\(", line) for line in lines[first + 1:first + 6])
    x, y = f32(2, 3), f32(4)
    inputs = [
        ("f32", x, y), ("1-D x", f32(3), y), ("0-d y", x, np.array(0.5, F32)),
        ("f64 x", x.astype(np.float64), y), ("f64 y", x, y.astype(np.float64)),
        ("i32 y", x, np.arange(4, dtype=np.int32)), ("scalar y", x, F32(2)),
        ("views", f32(3, 2).T, f32(8)[::2]), ("bad x", f32(2, 5), y),
    ]
    for label, xv, yv in inputs:
        got = [outcome(lambda k=k: [plan.execute([xv, yv])[k]]) for k in range(3)]  # noqa: B023
        want = [outcome(lambda k=k: [by_kernels(xv, yv)[k]]) for k in range(3)]  # noqa: B023
        for k in range(3):
            assert_identical(got[k], want[k], f"{label} output {k}")
        if label in ("f32", "views"):
            t = np.tanh(xv @ w + b)
            assert_identical(got[0], ("ok", t), f"{label} vs numpy")
            assert_identical(got[1], ("ok", t * yv), f"{label} vs numpy")
            assert_identical(got[2], ("ok", (t * yv < 0).astype(F32)), f"{label} vs numpy")


def test_chain_does_not_trust_declared_types() -> None:
    """The IR declares Less's output f32 (it is boolean): the Add after it must not join
    the chain on that word, and gives what its kernel gives on a boolean input."""
    c = np.array([0.5, 2], F32)
    net = Net()
    x = net.param("x", "f32", None)
    lt = net.op("Less", "opset1", [x, net.const(np.array(0, F32))], BROADCAST, et="f32")
    net.result(net.op("Add", "opset1", [lt, net.const(c)], BROADCAST, et="f32"))
    plan = compile_graph(net.graph)
    assert all(step.inlined is not None for step in plan.steps)
    xv = np.array([-1, 1], F32)
    less = make_op("Less", "opset1", BROADCAST).compute([xv, np.array(0, F32)])[0]
    want = make_op("Add", "opset1", BROADCAST).compute([less, c])[0]
    assert want.dtype == np.bool_  # the kernel keeps its first input's type
    assert_identical(outcome(lambda: plan.execute([xv])), ("ok", want), "Less -> Add")


def test_vector_times_matrix_chain_with_no_constants() -> None:
    """tanh(x @ W + b) with W and b plain inputs (as in a loop body that captures them):
    a vector x still takes the chain's fast branch; two vectors fall back to the kernels
    (their product is a scalar) and still agree with them."""
    net = Net()
    x, w, b = (net.param(n, "f32", None) for n in ("x", "W", "b"))
    mm = net.op("MatMul", "opset1", [x, w], shape=None)
    net.result(net.op("Tanh", "opset1", [net.op("Add", "opset1", [mm, b], BROADCAST,
                                                  shape=None)], shape=None))
    plan = compile_graph(net.graph)
    lines = plan.execute.source.splitlines()
    first = next(k for k, line in enumerate(lines) if "is ndarray" in line)
    assert "v0.ndim + v1.ndim >= 3" in lines[first]
    assert all(re.match(r"\s+v\d+ = f\d\(", line) for line in lines[first + 1:first + 4])
    ops = [make_op("MatMul", "opset1"), make_op("Add", "opset1", BROADCAST),
           make_op("Tanh", "opset1")]

    def by_kernels(args: list) -> list:
        prod = ops[0].compute(args[:2])[0]
        return ops[2].compute([ops[1].compute([prod, args[2]])[0]])

    for label, args in [("vector @ matrix", [f32(3), f32(3, 4), f32(4)]),
                        ("vector @ vector", [f32(3), f32(3), f32(4)]),
                        ("f64 bias", [f32(3), f32(3, 4), f32(4).astype(np.float64)])]:
        got = outcome(lambda: plan.execute(args))  # noqa: B023
        assert_identical(got, outcome(lambda: by_kernels(args)), label)  # noqa: B023
    x_, w_, b_ = f32(3), f32(3, 4), f32(4)
    assert_identical(outcome(lambda: plan.execute([x_, w_, b_])),
                     ("ok", np.tanh(x_ @ w_ + b_)), "vs numpy")
