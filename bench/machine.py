"""What a timing was taken on: the CPU model, the widest vector ISA it has, and the ISA each
library is told to stop at (numpy's OpenBLAS by ``OPENBLAS_CORETYPE``, OpenVINO's oneDNN by
``ONEDNN_MAX_CPU_ISA``, onnxruntime's MLAS by nothing: it always takes what the CPU has).

The kernel and deployment benches print ``describe()`` under their tables: their ratios
change with the ISA (the issue-27 numbers were taken on an AVX2-only EPYC, the targets must
hold on AVX-512 CPUs too), so a table without it cannot be read. ``python bench/machine.py``
prints it alone.
"""

from __future__ import annotations

import os
import platform
from pathlib import Path


def cpu_model() -> str:
    """The CPU's model name (``/proc/cpuinfo``; ``platform.processor()`` elsewhere)."""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown CPU"


def cpu_flags() -> set[str]:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("flags"):
                return set(line.split(":", 1)[1].split())
    except OSError:
        pass
    return set()


def widest_isa(flags: set[str] | None = None) -> str:
    """``AVX-512`` (with ``+bf16`` / ``+vnni`` when present), ``AVX2``, ``AVX`` or ``SSE``."""
    flags = cpu_flags() if flags is None else flags
    if "avx512f" in flags:
        extra = [name for flag, name in (("avx512_vnni", "vnni"), ("avx512_bf16", "bf16"))
                 if flag in flags]
        return "AVX-512" + "".join(f"+{e}" for e in extra)
    for flag, name in (("avx2", "AVX2"), ("avx", "AVX")):
        if flag in flags:
            return name
    return "SSE"


def blas() -> str:
    """numpy's BLAS and the kernels it runs (threadpoolctl's ``architecture``)."""
    from threadpoolctl import threadpool_info

    found = [f"{i.get('internal_api')} {i.get('version')} {i.get('architecture')}"
             for i in threadpool_info() if i.get("user_api") == "blas"]
    return ", ".join(found) or "unknown"


def describe() -> str:
    """One line: CPU, its ISA, and the caps each library runs under."""
    caps = ", ".join(f"{v}={os.environ.get(v, 'unset')}"
                     for v in ("OPENBLAS_CORETYPE", "ONEDNN_MAX_CPU_ISA"))
    return (f"CPU: {cpu_model()} ({os.cpu_count()} cores), {widest_isa()}; numpy's BLAS: "
            f"{blas()}; {caps}")


if __name__ == "__main__":
    print(describe())
