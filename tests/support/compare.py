"""One comparison of a backend's outputs with the expected ones, for every test helper."""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np


def assert_same(actual: Mapping[str, np.ndarray], expected: Mapping[str, np.ndarray],
                who: str, rtol: float = 1e-5, atol: float = 1e-6, *,
                float_dtypes: bool = True) -> None:
    """Same names and shapes; ints/bools exact with the same dtype, floats (and complex)
    within tolerance, with the same dtype too unless ``float_dtypes`` is off."""
    assert set(actual) == set(expected), f"{who}: outputs {sorted(actual)} != {sorted(expected)}"
    for name, want in expected.items():
        got = np.asarray(actual[name])
        want = np.asarray(want)
        assert got.shape == want.shape, f"{who}: {name} shape {got.shape} != {want.shape}"
        floating = want.dtype.kind in "fc"
        if float_dtypes or not floating:
            assert got.dtype == want.dtype, f"{who}: {name} dtype {got.dtype} != {want.dtype}"
        if floating:
            np.testing.assert_allclose(got, want, rtol=rtol, atol=atol, err_msg=f"{who}: {name}")
        else:
            np.testing.assert_array_equal(got, want, err_msg=f"{who}: {name}")


def assert_matmul_close(actual: np.ndarray, a: np.ndarray, b: np.ndarray, what: str,
                        *, transpose_b: bool = False) -> None:
    """``actual`` is ``a @ b`` (``b`` transposed when asked) up to the order of its sums.

    BLAS picks its kernel by CPU (AVX2, AVX-512) and by memory layout, and each sums the
    products in another order, so two correct products may differ in their last bits. The
    bound is the standard one for a dot product of length n computed in any order,
    ``n * eps * (|a| @ |b|)`` elementwise (Higham, Accuracy and Stability, 3.1).
    """
    b = np.swapaxes(b, -1, -2) if transpose_b else b
    expected = np.matmul(a.astype(np.float64), b.astype(np.float64))
    actual = np.asarray(actual)
    assert actual.shape == expected.shape, f"{what}: shape {actual.shape} != {expected.shape}"
    n = a.shape[-1]
    eps = np.finfo(np.result_type(a, b)).eps
    bound = n * eps * np.matmul(np.abs(a).astype(np.float64), np.abs(b).astype(np.float64))
    excess = np.abs(actual.astype(np.float64) - expected) - bound
    assert (excess <= 0).all(), f"{what}: off by more than the summation bound " \
        f"(worst excess {excess.max():.3g})"
