"""Compare one output array with a reference: shape, dtype, errors, verdict.

Tolerances depend on the reference's element type: floats use
``|actual - ref| <= atol + rtol * |ref|`` (numpy's ``allclose`` rule) with
looser defaults for f16/bf16, integers, booleans and strings must be equal.
NaN matches NaN at the same position; an infinity matches the same infinity.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

# Defaults per dtype name: (rtol, atol). f64 uses f32's because OpenVINO's CPU
# plugin computes f64 models in f32; a tighter bound would flag every f64 model.
_FLOAT_TOLERANCES: dict[str, tuple[float, float]] = {
    "float64": (1e-4, 1e-5),
    "float32": (1e-4, 1e-5),
    "float16": (1e-2, 1e-3),
    "bfloat16": (2e-2, 1e-2),
}
# The 8-bit and 4-bit float formats have two or three mantissa bits.
_LOW_PRECISION_FLOAT = (1.25e-1, 1e-1)


def default_tolerance(dtype: np.dtype) -> tuple[float, float]:
    """``(rtol, atol)`` for comparing values of ``dtype``; ``(0, 0)`` means exact."""
    dtype = np.dtype(dtype)
    if dtype.name in _FLOAT_TOLERANCES:
        return _FLOAT_TOLERANCES[dtype.name]
    if _is_float(dtype):
        return _LOW_PRECISION_FLOAT
    return (0.0, 0.0)


def _is_float(dtype: np.dtype) -> bool:
    # ml_dtypes' bfloat16/float8 types have kind "V" (or "f"); their names say what they are.
    return dtype.kind == "f" or dtype.name.startswith(("bfloat", "float"))


@dataclass
class Comparison:
    """How one backend's value of one output compares with the reference.

    ``verdict`` is ``ok``, ``mismatch`` (values beyond tolerance), ``shape``,
    ``dtype``, ``missing`` (the backend produced no such output) or ``extra``
    (only the backend has it).
    """

    output: str
    verdict: str
    shape: tuple[int, ...] | None = None
    ref_shape: tuple[int, ...] | None = None
    dtype: str | None = None
    ref_dtype: str | None = None
    max_abs: float | None = None
    max_rel: float | None = None
    mismatched: int = 0
    total: int = 0
    rtol: float = 0.0
    atol: float = 0.0
    note: str = ""

    @property
    def ok(self) -> bool:
        return self.verdict == "ok"

    def describe(self) -> str:
        """One phrase saying what is wrong (or ``ok``)."""
        if self.verdict == "ok":
            return "ok"
        if self.verdict == "shape":
            return f"shape {list(self.shape or ())} != reference {list(self.ref_shape or ())}"
        if self.verdict == "dtype":
            return f"dtype {self.dtype} != reference {self.ref_dtype}"
        if self.verdict == "missing":
            return "output missing"
        if self.verdict == "extra":
            return "output not in the reference"
        exact = self.rtol == 0 and self.atol == 0
        rule = "exact" if exact else f"rtol={self.rtol:g} atol={self.atol:g}"
        text = f"{self.mismatched} of {self.total} elements differ ({rule}"
        if self.max_abs is not None and np.isfinite(self.max_abs):
            text += f", max abs err {self.max_abs:.3g}"
        text += ")"
        return text + (f"; {self.note}" if self.note else "")

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        for key in ("shape", "ref_shape"):
            if data[key] is not None:
                data[key] = list(data[key])
        for key in ("max_abs", "max_rel"):
            value = data[key]
            if value is not None and not np.isfinite(value):
                data[key] = str(value)  # JSON has no inf/nan
        return data


def compare(name: str, actual: Any, reference: Any, *, rtol: float | None = None,
            atol: float | None = None) -> Comparison:
    """Compare ``actual`` with ``reference``; ``rtol``/``atol`` override the dtype defaults
    for floating-point outputs (integers, booleans and strings are always exact)."""
    act = np.asarray(actual)
    ref = np.asarray(reference)
    row = Comparison(name, "ok", tuple(act.shape), tuple(ref.shape), _dtype_name(act.dtype),
                     _dtype_name(ref.dtype), total=int(ref.size))
    if _is_text(ref.dtype) or _is_text(act.dtype):
        return _compare_text(row, act, ref)
    if act.dtype != ref.dtype:
        row.verdict = "dtype"
        return row
    if act.shape != ref.shape:
        row.verdict = "shape"
        return row
    if _is_float(ref.dtype):
        d_rtol, d_atol = default_tolerance(ref.dtype)
        row.rtol = d_rtol if rtol is None else float(rtol)
        row.atol = d_atol if atol is None else float(atol)
        _compare_float(row, act.astype(np.float64), ref.astype(np.float64))
    else:
        _compare_exact(row, act, ref)
    return row


def compare_outputs(outputs: Sequence[str], got: Mapping[str, Any],
                    reference: Mapping[str, Any], *, rtol: float | None = None,
                    atol: float | None = None) -> list[Comparison]:
    """One ``Comparison`` per output in ``outputs`` that the reference has (``missing`` when
    ``got`` lacks it), then one ``extra`` row per output only ``got`` has."""
    rows = []
    for name in outputs:
        if name not in reference:
            continue  # the reference itself lacks it; nothing to compare with
        if name not in got:
            rows.append(Comparison(name, "missing", ref_shape=tuple(np.shape(reference[name]))))
            continue
        rows.append(compare(name, got[name], reference[name], rtol=rtol, atol=atol))
    for name in got:
        if name not in outputs:
            rows.append(Comparison(name, "extra", shape=tuple(np.shape(got[name]))))
    return rows


def _dtype_name(dtype: np.dtype) -> str:
    return "str" if _is_text(dtype) else np.dtype(dtype).name


def _is_text(dtype: np.dtype) -> bool:
    return np.dtype(dtype).kind in ("U", "S", "O")


def _compare_text(row: Comparison, act: np.ndarray, ref: np.ndarray) -> Comparison:
    if not (_is_text(act.dtype) and _is_text(ref.dtype)):
        row.verdict = "dtype"
        return row
    if act.shape != ref.shape:
        row.verdict = "shape"
        return row
    a = [_as_str(x) for x in act.ravel()]
    r = [_as_str(x) for x in ref.ravel()]
    row.mismatched = sum(x != y for x, y in zip(a, r))
    row.verdict = "ok" if row.mismatched == 0 else "mismatch"
    return row


def _as_str(value: Any) -> str:
    return value.decode("utf-8", "replace") if isinstance(value, bytes) else str(value)


def _compare_exact(row: Comparison, act: np.ndarray, ref: np.ndarray) -> None:
    if ref.dtype.kind == "V":
        # Raw bytes (an ml_dtypes value read back from .npz loses its type): equal or not.
        row.mismatched = int(sum(a != r for a, r in zip(act.ravel().tolist(),
                                                        ref.ravel().tolist())))
        row.verdict = "ok" if row.mismatched == 0 else "mismatch"
        return
    if ref.dtype == np.bool_:
        diff = (act != ref).astype(np.float64)
    else:
        # Python ints: no overflow for u64/i64 differences.
        diff = np.abs(act.astype(object) - ref.astype(object)).astype(np.float64) \
            if ref.size else np.zeros(0)
    row.mismatched = int(np.count_nonzero(act != ref))
    row.max_abs = float(diff.max()) if diff.size else 0.0
    if ref.dtype != np.bool_ and ref.size:
        scale = np.abs(ref.astype(np.float64))
        nz = scale > 0
        row.max_rel = float((diff[nz] / scale[nz]).max()) if nz.any() else 0.0
    row.verdict = "ok" if row.mismatched == 0 else "mismatch"


def _compare_float(row: Comparison, act: np.ndarray, ref: np.ndarray) -> None:
    act_nan, ref_nan = np.isnan(act), np.isnan(ref)
    nan_bad = act_nan != ref_nan
    both_finite = np.isfinite(act) & np.isfinite(ref)
    # Infinities must match exactly (same sign, same place).
    inf_bad = ~both_finite & ~(act_nan | ref_nan) & (act != ref)
    with np.errstate(invalid="ignore", over="ignore"):
        diff = np.where(both_finite, np.abs(act - ref), 0.0)
        scale = np.abs(ref)
        value_bad = both_finite & (diff > row.atol + row.rtol * scale)
    bad = nan_bad | inf_bad | value_bad
    row.mismatched = int(np.count_nonzero(bad))
    row.max_abs = float(diff.max()) if diff.size else 0.0
    if nan_bad.any() or inf_bad.any():
        row.max_abs = float("inf")
        row.note = (f"NaN at {int(nan_bad.sum())} position(s) only one side has"
                    if nan_bad.any() else "infinities differ")
    nz = both_finite & (scale > 0)
    with np.errstate(invalid="ignore", divide="ignore"):
        row.max_rel = float((diff[nz] / scale[nz]).max()) if nz.any() else 0.0
    if nan_bad.any() or inf_bad.any():
        row.max_rel = float("inf")
    row.verdict = "ok" if row.mismatched == 0 else "mismatch"
