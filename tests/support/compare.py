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
