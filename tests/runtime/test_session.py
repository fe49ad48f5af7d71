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
from support.stateful import accumulator

import irtool
from irtool.engines.openvino import REFERENCE_CONFIG
from irtool.runtime.cache import PLANS

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
    for number, feed in enumerate(feeds):
        if number == 3:  # both back to the initial value
            request.reset_state()
            session.reset_state()
            assert dict(session.state) == {}
        _assert_same(session.run(feed), _ov_step(request, feed))
        _assert_same(dict(session.state), _ov_state(request))
    # Setting the state: the next step starts from it in both.
    value = np.full((2, 3), 10.0, dtype=np.float32)
    for s in request.query_state():
        s.state = ov.Tensor(value)
    session.state["acc"] = value
    _assert_same(session.run(feeds[0]), _ov_step(request, feeds[0]))
    _assert_same(dict(session.state), _ov_state(request))


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
    assert dict(session.state) == {}


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
    from support.stateful import two_variables

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
    from support.stateful import two_variables

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
    assert sorted(session.state) == ["acc"]
    _assert_same(session.run(feeds[2]), _ov_step(request, feeds[2]))
    _assert_same(dict(session.state), _ov_state(request))
