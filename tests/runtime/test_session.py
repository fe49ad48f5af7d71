"""Stateful models (ReadValue/Assign): ``irtool.compile`` sessions against OpenVINO's infer
request, step by step, with ``reset_state`` and reading and setting the state.

The models are built with OpenVINO's own Python API (``openvino.opset6.read_value`` /
``assign``, ``opset13.scaled_dot_product_attention``) and saved with ``ov.save_model``;
OpenVINO (``REFERENCE_CONFIG``: f32 arithmetic and KV cache) gives the expected values.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import openvino as ov
import openvino.opset6 as ov6
import openvino.opset8 as ov8
import openvino.opset13 as ov13
import pytest
from support.ir_builders import A0, Net, counting_loop, info
from support.stateful import accumulator, two_variables

import irtool
from irtool.engines.openvino import REFERENCE_CONFIG
from irtool.runtime.cache import PLANS
from irtool.runtime.session import CompiledModel

RTOL, ATOL = 1e-5, 1e-5


def _save(model: ov.Model, path: Path) -> Path:
    ov.save_model(model, str(path), compress_to_fp16=False)
    return path


def _request(xml: Path):  # type: ignore[no-untyped-def]
    core = ov.Core()
    return core.compile_model(core.read_model(str(xml)), "CPU", REFERENCE_CONFIG) \
        .create_infer_request()


def _ov_step(request, feed: dict[str, np.ndarray]) -> dict[str, np.ndarray]:  # type: ignore[no-untyped-def]
    request.infer(feed)
    return {port.get_any_name(): np.array(request.get_tensor(port).data)
            for port in request.model_outputs}


def _ov_state(request) -> dict[str, np.ndarray]:  # type: ignore[no-untyped-def]
    return {s.name: np.array(s.state.data) for s in request.query_state()}


def _assert_same(got: dict[str, np.ndarray], want: dict[str, np.ndarray]) -> None:
    assert sorted(got) == sorted(want)
    for name, value in want.items():
        assert got[name].dtype == value.dtype, name
        assert got[name].shape == value.shape, name
        np.testing.assert_allclose(got[name], value, rtol=RTOL, atol=ATOL, err_msg=name)


# --------------------------------------------------------------------------- accumulator

def _accumulator(path: Path, *, with_init: bool) -> Path:
    return accumulator(path, with_init=with_init)


@pytest.mark.parametrize("with_init", [False, True], ids=["zeros", "init_input"])
def test_accumulator_session_matches_openvino(tmp_path: Path, with_init: bool) -> None:
    xml = _accumulator(tmp_path / "acc.xml", with_init=with_init)
    request = _request(xml)
    session = irtool.compile(irtool.load(xml))
    rng = np.random.default_rng(0)
    feeds = [{"x": rng.standard_normal((2, 3)).astype(np.float32)} for _ in range(6)]
    _assert_same(dict(session.state), _ov_state(request))  # fresh: the initial values
    for number, feed in enumerate(feeds):
        if number == 3:  # both back to the initial value, and read as OpenVINO reads it
            request.reset_state()
            session.reset_state()
            _assert_same(dict(session.state), _ov_state(request))
        _assert_same(session.run(feed), _ov_step(request, feed))
        _assert_same(dict(session.state), _ov_state(request))
    # Setting the state: the next step starts from it in both.
    value = np.full((2, 3), 10.0, dtype=np.float32)
    for s in request.query_state():
        s.state = ov.Tensor(value)
    session.state["acc"] = value
    _assert_same(session.run(feeds[0]), _ov_step(request, feeds[0]))
    _assert_same(dict(session.state), _ov_state(request))


def test_reading_the_initial_value_is_not_setting_it(tmp_path: Path) -> None:
    """After ``reset_state`` a variable with an init input reads as zeros, as in OpenVINO's
    ``query_state``; the next step still starts from the init input's value (2x); setting
    the state to what it read makes the next step start from zeros, in both."""
    xml = _accumulator(tmp_path / "acc.xml", with_init=True)
    request = _request(xml)
    session = irtool.compile(irtool.load(xml))
    x = np.ones((2, 3), np.float32)
    for _ in range(2):
        _assert_same(session.run({"x": x}), _ov_step(request, {"x": x}))
    request.reset_state()
    session.reset_state()
    read = dict(session.state)
    _assert_same(read, _ov_state(request))
    np.testing.assert_array_equal(read["acc"], np.zeros((2, 3), np.float32))
    step = session.run({"x": x})
    np.testing.assert_array_equal(step["sum"], 3 * x)  # 2x + x: the init input's value
    _assert_same(step, _ov_step(request, {"x": x}))
    request.reset_state()
    session.reset_state()
    for s in request.query_state():
        s.state = ov.Tensor(np.array(s.state.data))
    session.state = dict(session.state)
    step = session.run({"x": x})
    np.testing.assert_array_equal(step["sum"], x)  # zeros + x: the value set
    _assert_same(step, _ov_step(request, {"x": x}))
    del session.state["acc"]  # back to the initial value: no error, nothing held
    assert "acc" in session.state and len(session.state) == 1


def test_run_stays_stateless_and_sessions_are_independent(tmp_path: Path) -> None:
    xml = _accumulator(tmp_path / "acc.xml", with_init=False)
    model = irtool.load(xml)
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    # Hand-computed: zeros + x on every stateless run; x, 2x, 3x in one session.
    for _ in range(3):
        np.testing.assert_array_equal(irtool.run(model, {"x": x})["sum"], x)
    first, second = irtool.compile(model), irtool.compile(model)
    for k in (1, 2, 3):
        np.testing.assert_array_equal(first.run({"x": x})["sum"], k * x)
    np.testing.assert_array_equal(second.run({"x": x})["sum"], x)
    np.testing.assert_array_equal(irtool.run(model, {"x": x})["sum"], x)
    assert first.variable_ids == ["acc"]


def test_state_refuses_unknown_ids_and_wrong_types(tmp_path: Path) -> None:
    session = irtool.compile(irtool.load(_accumulator(tmp_path / "acc.xml", with_init=False)))
    with pytest.raises(irtool.ExecutionError, match=r"no variable 'nope'.*'acc'"):
        session.state["nope"] = np.zeros((2, 3), np.float32)
    with pytest.raises(irtool.ExecutionError, match=r"'acc' holds f32 .* not float64"):
        session.state["acc"] = np.zeros((2, 3))
    with pytest.raises(irtool.ExecutionError, match=r"'acc' has shape \[2, 3\].*not \[3\]"):
        session.state = {"acc": np.zeros(3, np.float32)}
    assert list(session.state) == ["acc"]
    np.testing.assert_array_equal(session.state["acc"], np.zeros((2, 3), np.float32))
    with pytest.raises(KeyError):
        session.state["nope"]


def test_failed_step_keeps_the_state(tmp_path: Path) -> None:
    session = irtool.compile(irtool.load(_accumulator(tmp_path / "acc.xml", with_init=False)))
    x = np.ones((2, 3), np.float32)
    session.run({"x": x})
    with pytest.raises(irtool.ExecutionError):
        session.run({"x": np.ones((2, 4), np.float32)})
    np.testing.assert_array_equal(session.state["acc"], x)


# --------------------------------------------------------------------------- KV cache

HEADS, DIM, EMBED = 2, 4, 8


def _kv_decoder(path: Path, *, mask: str) -> Path:
    """One attention layer with a KV cache as optimum writes it: the cache variables start
    as an empty [batch, heads, 0, dim] tensor made from the input's batch size, are
    reordered by ``beam_idx`` (Gather on axis 0) every step, grow by the step's tokens
    (Concat on axis 2), and feed ScaledDotProductAttention-13 with an attention mask (a
    float or a boolean input) and a scale."""
    rng = np.random.default_rng(1)
    x = ov6.parameter([-1, -1, EMBED], np.float32, name="x")
    x.output(0).set_names({"x"})
    beam_idx = ov6.parameter([-1], np.int32, name="beam_idx")
    beam_idx.output(0).set_names({"beam_idx"})
    params = [x, beam_idx]
    batch = ov8.gather(ov6.shape_of(x, "i64"), ov6.constant(np.int64([0])),
                       ov6.constant(np.int64(0)))
    empty_shape = ov6.concat([batch, ov6.constant(np.int64([HEADS, 0, DIM]))], 0)
    empty = ov6.broadcast(ov6.constant(np.float32(0)), empty_shape)

    def heads(weight_seed: int):  # type: ignore[no-untyped-def]
        w = np.random.default_rng(weight_seed).standard_normal((EMBED, HEADS * DIM))
        proj = ov6.matmul(x, ov6.constant(w.astype(np.float32)), False, False)
        split = ov6.reshape(proj, ov6.constant(np.int64([0, 0, HEADS, DIM])), True)
        return ov6.transpose(split, ov6.constant(np.int64([0, 2, 1, 3])))

    q = heads(2)
    sinks, caches = [], {}
    for name, seed in (("past.key", 3), ("past.value", 4)):
        past = ov6.read_value(empty, name, np.float32, [-1, HEADS, -1, DIM])
        reordered = ov8.gather(past, beam_idx, ov6.constant(np.int64(0)))
        cache = ov6.concat([reordered, heads(seed)], 2)
        sinks.append(ov6.assign(cache, name))
        caches[name] = cache
    scale = ov6.constant(np.float32(0.5 + rng.random()))
    dtype = np.float32 if mask == "float" else np.bool_
    attention_mask = ov6.parameter([-1, 1, -1, -1], dtype, name="attention_mask")
    attention_mask.output(0).set_names({"attention_mask"})
    params.append(attention_mask)
    attn = ov13.scaled_dot_product_attention(q, caches["past.key"], caches["past.value"],
                                             attention_mask, scale, causal=False)
    merged = ov6.reshape(ov6.transpose(attn, ov6.constant(np.int64([0, 2, 1, 3]))),
                         ov6.constant(np.int64([0, 0, HEADS * DIM])), True)
    merged.output(0).set_names({"hidden"})
    return _save(ov.Model([ov6.result(merged)], sinks, params, "kv_decoder"), path)


def _decode_feeds(mask: str, steps: int = 5, batch: int = 2, prefill: int = 3
                  ) -> list[dict[str, np.ndarray]]:
    """A prefill of ``prefill`` tokens, then one token a step; the beams swap at step 2."""
    rng = np.random.default_rng(5)
    feeds, seen = [], 0
    for step in range(steps):
        new = prefill if step == 0 else 1
        seen += new
        feed = {"x": rng.standard_normal((batch, new, EMBED)).astype(np.float32),
                "beam_idx": (np.arange(batch)[::-1] if step == 2 else np.arange(batch))
                .astype(np.int32)}
        keep = rng.random((batch, 1, new, seen)) > 0.3
        keep[..., -1] = True  # every query sees at least its own token
        feed["attention_mask"] = (np.where(keep, 0.0, -1e4).astype(np.float32)
                                  if mask == "float" else keep)
        feeds.append(feed)
    return feeds


# Not causal=True: with a KV cache (queries fewer than keys) OpenVINO's CPU plugin fuses the
# attention with the cache and aligns the causal mask to the last key, where the spec (and
# OpenVINO on the op alone) aligns it to the first; exports pass an explicit mask instead.
@pytest.mark.parametrize("mask", ["float", "bool"])
def test_kv_cache_decoder_matches_openvino_step_by_step(tmp_path: Path, mask: str) -> None:
    xml = _kv_decoder(tmp_path / "kv.xml", mask=mask)
    assert irtool.validate(xml) == []
    request = _request(xml)
    session = irtool.compile(xml)
    feeds = _decode_feeds(mask)
    for number, feed in enumerate([*feeds, *feeds[:2]]):
        if number == len(feeds):  # a new sequence: empty caches again
            request.reset_state()
            session.reset_state()
            _assert_same(dict(session.state), _ov_state(request))  # empty caches
        _assert_same(session.run(feed), _ov_step(request, feed))
        state = _ov_state(request)
        _assert_same(dict(session.state), state)
        tokens = 3 + (number if number < len(feeds) else number - len(feeds))
        assert state["past.key"].shape[2] == tokens  # the cache grows a token a step
    # A cache set by hand (the same in both) is what the next step attends to: 4 tokens
    # now, so the step whose mask covers 5.
    rng = np.random.default_rng(7)
    for s in request.query_state():
        value = rng.standard_normal(s.state.shape).astype(np.float32)
        s.state = ov.Tensor(value)
        session.state[s.name] = value
    _assert_same(session.run(feeds[2]), _ov_step(request, feeds[2]))


def test_run_reuses_the_compiled_plan_until_the_model_changes(tmp_path: Path) -> None:
    model = irtool.load(_accumulator(tmp_path / "acc.xml", with_init=False))
    x = np.ones((2, 3), np.float32)
    before = PLANS.compilations
    irtool.run(model, {"x": x})
    irtool.run(model, {"x": x})
    irtool.compile(model).run({"x": x})
    assert PLANS.compilations == before + 1
    # Changed in place: the Add becomes a Subtract, and the cache compiles again.
    add = next(layer for layer in model.graph.layers if layer.type == "Add")
    add.type = "Subtract"
    np.testing.assert_array_equal(irtool.run(model, {"x": x})["sum"], -x)  # zeros - x
    assert PLANS.compilations == before + 2


def test_state_of_a_readvalue3_variable_is_checked_against_its_port(tmp_path: Path) -> None:
    """ReadValue-3 declares nothing: its output port (f32 [2, 3], written by OpenVINO) is
    what the variable holds."""
    session = irtool.compile(irtool.load(two_variables(tmp_path / "vars.xml")))
    with pytest.raises(irtool.ExecutionError, match=r"'prev' holds f32 .* not int32"):
        session.state["prev"] = np.zeros((2, 3), np.int32)
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    session.state["prev"] = np.ones((2, 3), np.float32)
    # Hand-computed: delta = x - prev, and prev <- delta for the next step.
    np.testing.assert_array_equal(session.run({"x": x})["delta"], x - 1)
    np.testing.assert_array_equal(session.state["prev"], x - 1)
    np.testing.assert_array_equal(session.run({"x": x})["delta"], np.ones((2, 3)))


def test_run_steps_is_one_session(tmp_path: Path) -> None:
    model = irtool.load(accumulator(tmp_path / "acc.xml"))
    xs = [np.full((2, 3), k, np.float32) for k in (1, 2, 3)]
    outs = irtool.run_steps(model, [{"x": x} for x in xs])
    # Hand-computed running sums: 1, 3, 6.
    assert [float(out["sum"][0, 0]) for out in outs] == [1.0, 3.0, 6.0]


def test_setting_the_whole_state_replaces_it(tmp_path: Path) -> None:
    """``session.state = {"acc": v}`` sets acc and sends every variable it does not name
    (prev) back to its initial value: what OpenVINO's infer request does after
    ``reset_state()`` and setting acc alone (its API sets one variable at a time). A
    merge would keep prev's value from the steps before, and the next delta would differ."""
    xml = two_variables(tmp_path / "vars.xml")
    request = _request(xml)
    session = irtool.compile(irtool.load(xml))
    rng = np.random.default_rng(3)
    feeds = [{"x": rng.standard_normal((2, 3)).astype(np.float32)} for _ in range(3)]
    for feed in feeds[:2]:
        _assert_same(session.run(feed), _ov_step(request, feed))
    assert sorted(session.state) == ["acc", "prev"]
    value = np.full((2, 3), 5.0, np.float32)
    request.reset_state()
    for s in request.query_state():
        if s.name == "acc":
            s.state = ov.Tensor(value)
    session.state = {"acc": value}
    _assert_same(dict(session.state), _ov_state(request))  # prev: its initial value
    _assert_same(session.run(feeds[2]), _ov_step(request, feeds[2]))
    _assert_same(dict(session.state), _ov_state(request))


# --------------------------------------------------------------------------- the session's options

def test_a_session_checks_the_model_unless_told_not_to(tmp_path: Path) -> None:
    """An Assign renamed to another variable leaves ``acc`` read but never written
    (VARIABLE_NO_ASSIGN): a session refuses the model, as ``irtool.run`` does, unless
    made with ``check=False``; then every step reads acc's initial zeros (hand-computed:
    the sum is x each time)."""
    model = irtool.load(accumulator(tmp_path / "acc.xml"))
    (assign,) = [layer for layer in model.graph.layers if layer.type == "Assign"]
    assign.attrs["variable_id"] = "other"
    with pytest.raises(irtool.IRValidationError, match="VARIABLE_NO_ASSIGN"):
        CompiledModel(model)
    session = CompiledModel(model, check=False)
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    for _ in range(2):
        np.testing.assert_array_equal(session.run({"x": x})["sum"], x)


def test_sessions_share_the_cached_plan_and_its_options(tmp_path: Path) -> None:
    """Sessions of one model share the plan ``irtool.run`` caches (compiled once), one per
    set of options: ``optimize=False`` has a plan of its own, with no rewrite applied,
    where the default fuses the ReLU into the MaxPool."""
    net = Net()
    x = net.param("x", "f32", (1, 1, 4, 4))
    pooled, _ = net.builder.op(
        "MaxPool", "opset8", [net.op("ReLU", "opset1", [x])],
        {"kernel": "2,2", "strides": "2,2", "pads_begin": "0,0", "pads_end": "0,0",
         "rounding_type": "floor", "auto_pad": "explicit", "dilations": "1,1",
         "index_element_type": "i64", "axis": "0"},
        outputs=[info("f32", (1, 1, 2, 2)), info("i64", (1, 1, 2, 2))])
    net.result(pooled, "y")
    model = net.model()
    first, second = CompiledModel(model), CompiledModel(model)
    assert first.plan is second.plan
    assert first.optimizations == {"fused pools": 1}
    plain = CompiledModel(model, optimize=False)
    assert plain.plan is not first.plan and plain.optimizations == {}
    feed = np.arange(16, dtype=np.float32).reshape(1, 1, 4, 4) - 8
    # Hand-computed: the maximum of each 2 x 2 block of relu(x).
    want = np.maximum(feed, 0).reshape(2, 2, 2, 2).max(axis=(1, 3)).reshape(1, 1, 2, 2)
    for session in (first, plain):
        np.testing.assert_array_equal(session.run({"x": feed})["y"], want)


def test_a_session_keeps_its_iteration_cap() -> None:
    """``max_iterations`` bounds every loop of every step: 5 iterations past a cap of 3
    fail; without a cap they run (hand-computed: acc + 0 + 1 + 2 + 3 + 4)."""
    model = counting_loop()
    feeds = {"trip": np.array(5, np.int64), "cond": np.array(True), "a0": A0}
    with pytest.raises(irtool.ExecutionError, match="3"):
        CompiledModel(model, max_iterations=3).run(feeds)
    np.testing.assert_array_equal(CompiledModel(model).run(feeds)["acc"], A0 + 10)


def test_state_errors_name_the_file_and_the_variables(tmp_path: Path) -> None:
    """A refused value names the model's file; an unknown id lists the model's variables
    (``none`` in a model without any)."""
    xml = two_variables(tmp_path / "vars.xml")
    session = irtool.compile(irtool.load(xml))
    for bad in ({"nope": np.zeros((2, 3), np.float32)}, {"acc": np.zeros((2, 3))},
                {"acc": np.zeros((2, 3, 1), np.float32)}):
        with pytest.raises(irtool.ExecutionError) as raised:
            session.state = bad
        assert str(raised.value.file) == str(xml)
    with pytest.raises(irtool.ExecutionError,
                       match=r"its variables: '(acc|prev)', '(acc|prev)'\)"):
        session.state["nope"] = np.zeros((2, 3), np.float32)
    net = Net()
    net.result(net.op("ReLU", "opset1", [net.param("x", "f32", (2,))]))
    with pytest.raises(irtool.ExecutionError, match=r"its variables: none\)"):
        irtool.compile(net.model()).state["nope"] = np.zeros(2, np.float32)


def test_a_declared_empty_dim_is_checked(tmp_path: Path) -> None:
    """A variable declared [0, 3] holds no rows: a value of 2 rows is refused, one of 0
    rows is taken (and read back by the next step: concatenated to x, hand-computed)."""
    x = ov6.parameter([2, 3], np.float32, name="x")
    x.output(0).set_names({"x"})
    read = ov6.read_value("empty", np.float32, [0, 3])
    joined = ov6.concat([read, x], 0)
    joined.output(0).set_names({"joined"})
    xml = _save(ov.Model([ov6.result(joined)], [ov6.assign(read, "empty")], [x], "empty"),
                tmp_path / "empty.xml")
    session = irtool.compile(irtool.load(xml))
    with pytest.raises(irtool.ExecutionError, match=r"'empty' has shape \[0, 3\]"):
        session.state["empty"] = np.zeros((2, 3), np.float32)
    session.state["empty"] = np.zeros((0, 3), np.float32)
    feed = np.ones((2, 3), np.float32)
    np.testing.assert_array_equal(session.run({"x": feed})["joined"], feed)


def test_the_state_shows_each_variable_by_type_and_shape(tmp_path: Path) -> None:
    session = irtool.compile(irtool.load(accumulator(tmp_path / "acc.xml")))
    assert repr(session.state) == "State({'acc': float32[2, 3] (initial)})"
    session.run({"x": np.ones((2, 3), np.float32)})
    assert repr(session.state) == "State({'acc': float32[2, 3]})"


# --------------------------------------------------------------------------- the variable store

def _read_value(model: irtool.Model) -> irtool.ir.Layer:
    (layer,) = [layer for layer in model.graph.layers if layer.type == "ReadValue"]
    return layer


def test_a_variable_read_and_never_assigned_holds_what_is_set(tmp_path: Path) -> None:
    """Without its Assign (IR the validator refuses, run with ``check=False``) acc is only
    read: what the state is set to is what each step reads (hand-computed: 5 + x)."""
    model = irtool.load(accumulator(tmp_path / "acc.xml"))
    (assign,) = [layer for layer in model.graph.layers if layer.type == "Assign"]
    model.graph.remove_layer(assign.id)
    session = CompiledModel(model, check=False)
    session.state["acc"] = np.full((2, 3), 5.0, np.float32)
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    for _ in range(2):
        np.testing.assert_array_equal(session.run({"x": x})["sum"], x + 5)


def test_a_readvalue3_variable_has_its_ports_shape(tmp_path: Path) -> None:
    """ReadValue-3's output port (f32 [2, 3]) gives the variable's shape too."""
    session = irtool.compile(irtool.load(two_variables(tmp_path / "vars.xml")))
    with pytest.raises(irtool.ExecutionError, match=r"'prev' has shape \[2, 3\].*not \[3\]"):
        session.state["prev"] = np.zeros(3, np.float32)


def test_a_readvalue6_variable_is_what_it_declares(tmp_path: Path) -> None:
    """ReadValue-6's variable_type and variable_shape (f32 [2, 3]) are the variable's,
    whatever its output port says (here, edited: no type; then f16 of any rows, which
    the validator refuses, so ``check=False``)."""
    model = irtool.load(accumulator(tmp_path / "acc.xml"))
    port = _read_value(model).outputs[0]
    port.precision = None
    with pytest.raises(irtool.ExecutionError, match=r"'acc' holds f32 .* not float64"):
        CompiledModel(model, check=False).state["acc"] = np.zeros((2, 3))
    port.precision, port.dims = irtool.ir.element_type("f16"), (-1, 3)
    session = CompiledModel(model, check=False)
    session.state["acc"] = np.zeros((2, 3), np.float32)
    with pytest.raises(irtool.ExecutionError, match=r"'acc' has shape \[2, 3\].*not \[5, 3\]"):
        session.state["acc"] = np.zeros((5, 3), np.float32)


def test_a_readvalue_without_its_output_compiles(tmp_path: Path) -> None:
    """A ReadValue whose output port is gone, the Add that read it reading x instead (IR
    the validator refuses, so ``check=False``): the plan compiles and runs (hand-computed:
    the sum is x + x)."""
    model = irtool.load(accumulator(tmp_path / "acc.xml"))
    graph = model.graph
    read = _read_value(model)
    ((add_id, add_port),) = graph.consumers(read.id)
    read.outputs.clear()
    graph.disconnect_input(add_id, add_port)
    (x,) = graph.parameters()
    graph.connect(x.id, x.outputs[0].id, add_id, add_port)
    feed = np.arange(6, dtype=np.float32).reshape(2, 3)
    np.testing.assert_array_equal(CompiledModel(model, check=False).run({"x": feed})["sum"],
                                  feed + feed)


@pytest.mark.parametrize("version", ["opset1", "known"])
@pytest.mark.parametrize("kind", ["ReadValue", "Assign", "RandomUniform"])
def test_a_stateful_layer_in_a_body_is_named_by_its_path(kind: str, version: str) -> None:
    """A ReadValue, Assign or RandomUniform in a Loop body of a version irtool does not
    know (opset1: none of them is in it), or of a known version without a variable_id
    or with an output type that is no element type: the error says what, and names the
    layer by its path, ``<loop id>/body/<layer id>`` (core.scopes)."""
    body = Net()
    i = body.param("i", "i64", ())
    if kind == "RandomUniform":
        layer_value = body.op(kind, "opset8" if version == "known" else version,
                              [body.const(np.array([2], np.int64)), body.const(np.float32(0)),
                               body.const(np.float32(1))],
                              {"output_type": "bogus", "global_seed": "1", "op_seed": "1"},
                              et="f32", shape=(2,))
    else:
        layer_value = body.op(kind, "opset3" if version == "known" else version,
                              [body.const(np.zeros(2, np.float32))], shape=(2,))
    r_out = body.result(body.op("Unsqueeze", "opset1",
                                [layer_value, body.const(np.array([0], np.int64))],
                                shape=(1, 2)))
    net = Net()
    lp = net.loop(body)
    lp.trip_count(net.const(np.int64(2)))
    lp.condition(net.const(np.array(True)))
    lp.current_iteration(i)
    lp.execution_condition(body.result(body.const(np.array(True))))
    lp.output(r_out, info("f32", (-1, 2)), names=["Y"], axis=0)
    loop, outs = lp.build()
    net.result(outs[0])
    path = f"{loop.id}/body/{layer_value.layer}"
    what = (f"operation {kind}-opset1 is not supported by the irtool runtime"
            if version == "opset1" else
            "output_type='bogus' is not an element type" if kind == "RandomUniform" else
            "attribute 'variable_id' is required")
    with pytest.raises(irtool.ExecutionError) as raised:
        CompiledModel(net.model(), check=False).run({})
    assert f'{path} "' in str(raised.value) and what in str(raised.value), str(raised.value)


def test_a_bare_plan_of_a_stateful_model_has_a_store_of_its_own(tmp_path: Path) -> None:
    """``compile_graph`` without an executor's options: the ReadValue and Assign share a
    store of their own, and the plan compiles."""
    from irtool.runtime import compile_graph

    plan = compile_graph(irtool.load(accumulator(tmp_path / "acc.xml")).graph)
    assert [step.layer.type for step in plan.steps].count("ReadValue") == 1


def test_a_top_level_draw_moves_on_as_openvinos(tmp_path: Path) -> None:
    """A RandomUniform at the top level and one in a Loop body with the same layer id (3
    in each graph): each keeps its own generator, so the top-level one gives OpenVINO's
    values call after call (OpenVINO moves top-level generators as irtool does; in a
    loop body it does otherwise, see test_random_ops.test_openvino_in_a_loop)."""
    def draw(net: Net) -> irtool.ir.Value:
        return net.op("RandomUniform", "opset8", [net.const(np.array([4], np.int64)),
                                                  net.const(np.float32(0)),
                                                  net.const(np.float32(1))],
                      {"output_type": "f32", "global_seed": "7", "op_seed": "5"},
                      et="f32", shape=(4,))

    body = Net()
    inner = draw(body)
    r_out = body.result(body.op("Unsqueeze", "opset1", [inner, body.const(np.array([0]))],
                                shape=(1, 4)))
    net = Net()
    top = draw(net)
    assert top.layer == inner.layer == 3
    net.result(net.op("Multiply", "opset1", [top, net.const(np.float32(1))],
                      {"auto_broadcast": "numpy"}, name="top"))
    lp = net.loop(body)
    lp.trip_count(net.const(np.int64(3)))
    lp.condition(net.const(np.array(True)))
    lp.execution_condition(body.result(body.const(np.array(True))))
    lp.output(r_out, info("f32", (-1, 4)), names=["Y"], axis=0)
    _, outs = lp.build()
    net.result(outs[0])
    xml = irtool.save(net.model(), tmp_path / "draws.xml")
    request = ov.Core().compile_model(str(xml), "CPU").create_infer_request()
    session = irtool.compile(irtool.load(xml))
    for _ in range(3):
        want = _ov_step(request, {})["top"]
        np.testing.assert_array_equal(session.run({})["top"], want)
