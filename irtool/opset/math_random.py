"""Random generators: RandomUniform-8 and Multinomial-13.

RandomUniform reproduces OpenVINO's sequence for the default ``tensorflow``
alignment: Philox-4x32-10 keyed by ``global_seed``, with the counter's high
word set to ``op_seed`` and one Philox call per 4 outputs (2 for 64-bit types),
the random bits mapped to [0, 1) through the mantissa. Both seeds 0 mean "non
deterministic" in the spec; irtool then draws a seed from numpy's entropy. The
``pytorch`` alignment (a Mersenne twister) is not implemented. Multinomial follows
OpenVINO's CPU plugin, which samples with ``std::mt19937`` (see the class).

**Draws from call to call.** A seeded RandomUniform is a generator that moves on: each
layer has its own position in its Philox sequence, which every execution advances. This
is where onnxruntime and OpenVINO's CPU plugin agree (measured with onnxruntime 1.32
and OpenVINO 2026.4): a session (onnxruntime) or compiled model (OpenVINO) gives new
values on every call and in every iteration of a loop, two layers with the same seeds
give the same values, and a fresh session gives the first call's values again. irtool's
position lives in the session (``irtool.compile``; ``reset_state`` leaves it, as
OpenVINO's does); ``irtool.run`` is a fresh session each time, so it gives the first
call's values every time. The step is OpenVINO's: ``DRAW_STRIDE`` Philox blocks per
output element per execution, so a session's calls match OpenVINO's CPU plugin bit for
bit (``RandomUniform.draw``). Inside a Loop body that plugin advances by
``DRAW_STRIDE`` per *4 elements* and starts again from the first draw on every call
(docs/openvino-quirks.md); irtool keeps one rule everywhere. onnxruntime's generator
is another (std::mt19937 per node), so its values are never matched, only its behaviour.
Multinomial gives the same samples on every call, as OpenVINO's CPU plugin does
(onnxruntime's moves on; no ONNX Multinomial converts to it).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from ..ir.types import ElementType, element_type
from ._common import const_ints, numpy_dtype
from .base import REQUIRED, Op, TensorInfo, register

_M_N = np.uint64(0xD2511F53)
_M_COUNTER = np.uint64(0xCD9E8D57)
_W_LOW = np.uint32(0x9E3779B9)
_W_HIGH = np.uint32(0xBB67AE85)
_MASK32 = np.uint64(0xFFFFFFFF)
_SHIFT32 = np.uint64(32)


DRAW_STRIDE = 256
"""Philox blocks OpenVINO's CPU plugin moves a RandomUniform's counter on by, per output
element, after each execution (its ``SKIP_CONST``)."""


def philox_blocks(count: int, key: int, counter_high: int, start: int = 0) -> np.ndarray:
    """``count`` Philox-4x32-10 outputs, shape [count, 4] of uint32.

    Block i encrypts the 128-bit counter (n = ``start`` + i as 64 bits, ``counter_high``
    as 64 bits) with the 64-bit ``key``, as OpenVINO's TensorFlow-aligned generator does.
    """
    n = (np.arange(count, dtype=np.uint64) + np.uint64(start & 0xFFFFFFFFFFFFFFFF))
    n_lo = n & _MASK32
    n_hi = n >> _SHIFT32
    c_lo = np.full(count, counter_high & 0xFFFFFFFF, dtype=np.uint64)
    c_hi = np.full(count, (counter_high >> 32) & 0xFFFFFFFF, dtype=np.uint64)
    k_lo = np.uint64(key & 0xFFFFFFFF)
    k_hi = np.uint64((key >> 32) & 0xFFFFFFFF)
    with np.errstate(over="ignore"):
        for round_no in range(10):
            prod0 = _M_N * n_lo
            prod1 = _M_COUNTER * c_lo
            n_lo, n_hi, c_lo, c_hi = (
                (prod1 >> _SHIFT32) ^ n_hi ^ k_lo,
                prod1 & _MASK32,
                (prod0 >> _SHIFT32) ^ c_hi ^ k_hi,
                prod0 & _MASK32,
            )
            if round_no < 9:
                k_lo = (k_lo + np.uint64(_W_LOW)) & _MASK32
                k_hi = (k_hi + np.uint64(_W_HIGH)) & _MASK32
    return np.stack([n_lo, n_hi, c_lo, c_hi], axis=1).astype(np.uint32)


def uniform_bits_to(values: np.ndarray, et: ElementType, low: np.ndarray,
                    high: np.ndarray, count: int) -> np.ndarray:
    """Map the flat uint32 stream ``values`` to ``count`` numbers of ``et`` in [low, high)."""
    dtype = numpy_dtype(et, "RandomUniform")
    name = et.name
    if name == "f32":
        bits = (np.uint32(127 << 23) | (values[:count] & np.uint32(0x7FFFFF)))
        unit = bits.view(np.float32) - np.float32(1)
    elif name == "f16":
        bits = np.uint16(15 << 10) | (values[:count].astype(np.uint16) & np.uint16(0x3FF))
        unit = bits.view(np.float16) - np.float16(1)
    elif name == "bf16":
        bits = np.uint16(127 << 7) | (values[:count].astype(np.uint16) & np.uint16(0x7F))
        unit = bits.view(dtype) - dtype.type(1)
    elif name == "f64":
        pairs = values[: 2 * count].astype(np.uint64).reshape(-1, 2)
        significand = ((pairs[:, 0] & np.uint64(0xFFFFF)) << _SHIFT32) | pairs[:, 1]
        unit = (np.uint64(1023 << 52) | significand).view(np.float64) - 1.0
    elif name == "i32":
        span = (np.asarray(high, np.int64) - np.asarray(low, np.int64)).astype(np.uint32)
        if span == 0:
            raise ValueError("RandomUniform: min must be less than max")
        picked = values[:count] % span
        return (picked + np.asarray(low).astype(np.uint32)).astype(np.int32)
    elif name == "i64":
        pairs = values[: 2 * count].astype(np.uint64).reshape(-1, 2)
        united = (pairs[:, 1] << _SHIFT32) + pairs[:, 0]
        with np.errstate(over="ignore"):
            span = (np.asarray(high, np.int64) - np.asarray(low, np.int64)).astype(np.uint64)
            if span == 0:
                raise ValueError("RandomUniform: min must be less than max")
            return ((united % span) + np.asarray(low).astype(np.uint64)).astype(np.int64)
    else:
        raise ValueError(f"RandomUniform: unsupported output type {name}")
    lo = np.asarray(low, dtype=dtype)
    hi = np.asarray(high, dtype=dtype)
    return (unit * (hi - lo) + lo).astype(dtype, copy=False)


_F32 = element_type("f32")
_I32 = element_type("i32")
_I32_INFO = np.iinfo(np.int32)


def random_uniform(shape: Sequence[int], et: ElementType, low: np.ndarray, high: np.ndarray,
                   global_seed: int, op_seed: int, position: int = 0) -> np.ndarray:
    """OpenVINO's RandomUniform sequence (TensorFlow alignment) reshaped to ``shape``,
    from Philox block ``position`` on (0: a fresh generator's first call).

    As OpenVINO's CPU plugin does, f16, bf16 and f64 outputs are generated as f32 and
    converted, and i64 as i32 when min and max fit in int32.
    """
    count = int(np.prod(shape, dtype=np.int64))
    if global_seed == 0 and op_seed == 0:
        global_seed = int(np.random.SeedSequence().generate_state(1)[0])
    if et.is_float and et.name != "f32":
        f32 = random_uniform(shape, _F32, np.float32(low), np.float32(high), global_seed,  # type: ignore[arg-type]
                             op_seed, position)
        return f32.astype(numpy_dtype(et, "RandomUniform"))
    if et.name == "i64" and all(_I32_INFO.min <= int(v) <= _I32_INFO.max for v in (low, high)):
        i32 = random_uniform(shape, _I32, np.int32(low), np.int32(high), global_seed, op_seed,  # type: ignore[arg-type]
                             position)
        return i32.astype(np.int64)
    per_block = 2 if et.bitwidth > 32 else 4
    blocks = -(-count // per_block)
    stream = philox_blocks(blocks, global_seed, op_seed, position).reshape(-1)
    return uniform_bits_to(stream, et, low, high, count).reshape(tuple(shape))


@register("RandomUniform", "opset8")
class RandomUniform(Op):
    """Uniform numbers in [min, max) of ``output_type``; inputs: shape, min, max."""

    pure = False  # a new draw on every call

    def __init__(self, attrs: Mapping[str, str] | None = None) -> None:
        super().__init__(attrs)
        self.out_type: ElementType = self.attr_type("output_type", REQUIRED)
        self.global_seed = self.attr_int("global_seed", 0) & 0xFFFFFFFFFFFFFFFF
        self.op_seed = self.attr_int("op_seed", 0) & 0xFFFFFFFFFFFFFFFF
        self.alignment = self.attr_str("alignment", "tensorflow").lower()
        if self.alignment not in ("tensorflow", "openvino"):
            raise ValueError(f"RandomUniform: alignment={self.alignment!r} is not supported "
                             "(only tensorflow)")

    def compute(self, inputs: list[np.ndarray]) -> list[np.ndarray]:
        """The first call's values (a fresh generator); the runtime calls ``draw``."""
        return [self.draw(inputs, 0)[0]]

    def draw(self, inputs: list[np.ndarray], position: int) -> tuple[np.ndarray, int]:
        """The values of an execution whose generator stands at Philox block ``position``,
        and where the next execution's starts (``DRAW_STRIDE`` blocks per element on, as
        OpenVINO's CPU plugin moves)."""
        shape = [int(d) for d in np.asarray(inputs[0]).reshape(-1)]
        if any(d < 0 for d in shape):
            raise ValueError(f"RandomUniform: negative output shape {shape}")
        low = np.asarray(inputs[1]).reshape(-1)[0]
        high = np.asarray(inputs[2]).reshape(-1)[0]
        value = random_uniform(shape, self.out_type, low, high, self.global_seed, self.op_seed,
                               position)
        return value, position + value.size * DRAW_STRIDE

    def infer(self, inputs: Sequence[TensorInfo],
              values: Sequence[np.ndarray | None]) -> list[TensorInfo]:
        dims = const_ints(values[0])
        if dims is None:
            s = inputs[0].shape
            rank = s[0] if s is not None and len(s) == 1 and s[0] >= 0 else None
            return [TensorInfo(self.out_type, None if rank is None else (-1,) * rank)]
        return [TensorInfo(self.out_type, tuple(dims))]


def seed_seq_state(seeds: Sequence[int], n: int = 624) -> np.ndarray:
    """What C++ ``std::seed_seq(seeds).generate`` writes into ``n`` uint32 words."""
    mask = 0xFFFFFFFF
    v = [int(x) & mask for x in seeds]
    s = len(v)
    t = 11 if n >= 623 else 7 if n >= 68 else 5 if n >= 39 else 3 if n >= 7 else (n - 1) // 2
    p = (n - t) // 2
    q = p + t
    m = max(s + 1, n)
    b = [0x8B8B8B8B] * n

    def mix(x: int) -> int:
        return x ^ (x >> 27)

    for k in range(m):
        r1 = (1664525 * mix(b[k % n] ^ b[(k + p) % n] ^ b[(k - 1) % n])) & mask
        if k == 0:
            r2 = (r1 + s) & mask
        elif k <= s:
            r2 = (r1 + k % n + v[k - 1]) & mask
        else:
            r2 = (r1 + k % n) & mask
        b[(k + p) % n] = (b[(k + p) % n] + r1) & mask
        b[(k + q) % n] = (b[(k + q) % n] + r2) & mask
        b[k % n] = r2
    for k in range(m, m + n):
        r3 = (1566083941 * mix((b[k % n] + b[(k + p) % n] + b[(k - 1) % n]) & mask)) & mask
        r4 = (r3 - k % n) & mask
        b[(k + p) % n] ^= r3
        b[(k + q) % n] ^= r4
        b[k % n] = r4
    return np.array(b, dtype=np.uint32)


def mt19937_uint32(seeds: Sequence[int], count: int) -> np.ndarray:
    """``count`` outputs of C++ ``std::mt19937`` seeded with ``std::seed_seq(seeds)``."""
    key = seed_seq_state(seeds)
    if not key[1:].any() and not (key[0] & np.uint32(0x80000000)):
        key[0] = np.uint32(0x80000000)  # the all-zero state rule of [rand.eng.mers]
    gen = np.random.MT19937()
    gen.state = {"bit_generator": "MT19937", "state": {"key": key, "pos": 624}}
    return gen.random_raw(count).astype(np.uint32)


@register("Multinomial", "opset13")
class Multinomial(Op):
    """Draws ``num_samples`` class indices per row of ``probs`` ([batch, classes]).

    This follows OpenVINO's CPU plugin, the implementation whose numbers users see:
    in f32, the per-row cumulative sums (of exp(probs) with ``log_probs``) are
    normalised by their last entry; uniforms are ``float(mt19937()) / float(2^32 - 1)``
    from ``std::mt19937`` seeded with ``std::seed_seq{global_seed, op_seed}`` (both 0:
    a random seed), one per output in row-major order; a sample picks the first class
    whose cdf reaches it. Without replacement, the drawn class's probability is removed
    from the row's cdf (renormalised) before the next draw.
    """

    pure = False  # a random draw (the same one every call, as on OpenVINO's CPU plugin)

    def __init__(self, attrs: Mapping[str, str] | None = None) -> None:
        super().__init__(attrs)
        self.convert_type: ElementType = self.attr_type("convert_type", REQUIRED)
        self.out_dtype = numpy_dtype(self.convert_type, "Multinomial")
        self.with_replacement = self.attr_bool("with_replacement", REQUIRED)
        self.log_probs = self.attr_bool("log_probs", REQUIRED)
        self.global_seed = self.attr_int("global_seed", 0) & 0xFFFFFFFFFFFFFFFF
        self.op_seed = self.attr_int("op_seed", 0) & 0xFFFFFFFFFFFFFFFF

    def compute(self, inputs: list[np.ndarray]) -> list[np.ndarray]:
        probs = np.asarray(inputs[0])
        vector = probs.ndim == 1
        if vector:
            probs = probs[None, :]
        if probs.ndim != 2:
            raise ValueError(f"Multinomial: probs must be 1-D or 2-D, got shape {probs.shape}")
        work = probs.astype(np.float32)
        n = int(np.asarray(inputs[1]).reshape(-1)[0])
        if n < 0:
            raise ValueError(f"Multinomial: num_samples={n} is negative")
        batch, classes = work.shape
        if self.log_probs:
            work = np.exp(work)
        cdf = np.cumsum(work, axis=1, dtype=np.float32)
        if classes:
            last = np.maximum(cdf[:, -1:], np.finfo(np.float32).tiny)
            cdf = (cdf / last).astype(np.float32)
        seeds = (self.global_seed, self.op_seed)
        if seeds == (0, 0):
            seeds = tuple(int(x) for x in np.random.SeedSequence().generate_state(2))  # type: ignore[assignment]
        raw = mt19937_uint32(seeds, batch * n)
        uniform = (raw.astype(np.float32) / np.float32(4294967295.0)).reshape(batch, n)
        out = np.zeros((batch, n), dtype=np.int64)
        if self.with_replacement:
            for b in range(batch):
                # first class whose cdf is >= the sample
                out[b] = np.minimum(np.searchsorted(cdf[b], uniform[b], side="left"),
                                    max(classes - 1, 0))
        else:
            for b in range(batch):
                row = cdf[b].copy()
                for j in range(n):
                    hits = np.nonzero(uniform[b, j] <= row)[0]
                    if hits.size == 0:
                        continue
                    sel = int(hits[0])
                    out[b, j] = sel
                    prob = row[sel] - (row[sel - 1] if sel else np.float32(0))
                    row[sel:] -= prob
                    with np.errstate(divide="ignore", invalid="ignore"):
                        # the last class left divides by zero: NaNs, as on the CPU
                        row = (row / (np.float32(1) - prob)).astype(np.float32)
        result = out[0] if vector else out
        return [result.astype(self.out_dtype)]

    def infer(self, inputs: Sequence[TensorInfo],
              values: Sequence[np.ndarray | None]) -> list[TensorInfo]:
        n = const_ints(values[1])
        samples = n[0] if n else -1
        shape = inputs[0].shape
        if shape is None:
            return [TensorInfo(self.convert_type, None)]
        out = (samples,) if len(shape) == 1 else (shape[0], samples)
        return [TensorInfo(self.convert_type, out)]
