"""Start-up of the ``irtool`` command (issue 24, item 5): what a pre-commit hook pays on
every commit.

Each command runs in a fresh process, the commands interleaved (one run of each per round,
so that load from elsewhere skews no ratio), ``--repeats`` rounds; the table gives the
median and the minimum wall time of each (on a busy machine the minimum shows the cost
itself), and the median CPU time (user + system): what the wall time is on an idle
machine for these commands, which wait for nothing. ``python -c pass`` is the floor every
Python command pays. Targets:
``irtool --version`` under 0.3 s, ``irtool validate`` of one small IR under 0.5 s.

The small IR is ``samples/predict_net.onnx`` converted once (into a temporary folder);
``--ir FILE`` times another. ``--imports`` also lists, for ``validate``, the ten modules
whose import costs most (``python -X importtime``, cumulative).

    python bench/startup.py [--repeats N] [--ir FILE] [--imports]

Also a check: ``import irtool`` and ``irtool --version`` import none of onnx, onnxruntime,
openvino (``tests/cli/test_startup.py`` asserts that; this prints what they do import of
the heavy modules).
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
SAMPLE = HERE.parent / "samples" / "predict_net.onnx"
HEAVY = ("numpy", "networkx", "lxml", "onnx", "onnxruntime", "openvino", "tqdm")


def irtool_command() -> list[str]:
    """The ``irtool`` console script beside this Python (the venv's), else ``-m irtool``."""
    script = Path(sys.executable).with_name("irtool")
    return [str(script)] if script.exists() else [sys.executable, "-m", "irtool"]


# As installed irtool runs: with its bytecode cached (pip compiles it at install; an
# environment with PYTHONDONTWRITEBYTECODE would recompile every module on every start).
ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}


def _cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def wall(command: list[str]) -> tuple[float, float]:
    """(wall, CPU) seconds of ``command`` in a fresh process. The CPU time (user + system,
    the process and its children) is what the wall time would be on an idle machine, for
    a command that waits for nothing: on a loaded one it shows the cost itself."""
    cpu, started = _cpu(), time.perf_counter()
    proc = subprocess.run(command, capture_output=True, text=True, env=ENV)
    seconds = time.perf_counter() - started
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(command)} failed ({proc.returncode}): {proc.stderr}")
    return seconds, _cpu() - cpu


def heavy_imports(code: str) -> list[str]:
    probe = (f"{code}\nimport sys\n"
             f"print(' '.join(m for m in {HEAVY!r} if m in sys.modules))")
    proc = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                          check=True, env=ENV)
    return proc.stdout.split()


def top_imports(command: list[str], n: int = 10) -> list[tuple[int, str]]:
    """The ``n`` costliest imports of ``command`` (cumulative microseconds)."""
    env = {**ENV, "PYTHONPROFILEIMPORTTIME": "1"}
    proc = subprocess.run(command, capture_output=True, text=True, env=env)
    rows = []
    for line in proc.stderr.splitlines():
        if line.startswith("import time:") and "|" in line:
            _, cumulative, name = line.split("|")
            if cumulative.strip().isdigit():
                rows.append((int(cumulative), name.rstrip()))
    return sorted(rows, reverse=True)[:n]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=15)
    parser.add_argument("--ir", help="the IR to validate (default: samples/predict_net "
                                     "converted)")
    parser.add_argument("--imports", action="store_true",
                        help="also list validate's costliest imports")
    args = parser.parse_args()

    folder = tempfile.mkdtemp(prefix="irtool-startup-")
    try:
        xml = args.ir
        if xml is None:
            xml = str(Path(folder) / "predict_net.xml")
            subprocess.run([*irtool_command(), "convert", str(SAMPLE), "-o", xml, "-q"],
                           check=True, capture_output=True)
        cases = {
            "python -c pass": [sys.executable, "-c", "pass"],
            "python -c 'import irtool'": [sys.executable, "-c", "import irtool"],
            "irtool --version": [*irtool_command(), "--version"],
            "irtool validate (one small IR)": [*irtool_command(), "validate", xml, "-q"],
        }
        times: dict[str, list[tuple[float, float]]] = {name: [] for name in cases}
        for command in cases.values():  # untimed: writes the bytecode caches
            wall(command)
        for _ in range(args.repeats):
            for name, command in cases.items():
                times[name].append(wall(command))
        load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
        print(f"fresh processes, {args.repeats} interleaved rounds; load average at the end "
              f"{load:.2f} on {os.cpu_count()} cores\n")
        print("| command | wall median s | wall min s | CPU median s | target (wall) |")
        print("|---|---|---|---|---|")
        targets = {"irtool --version": "< 0.3", "irtool validate (one small IR)": "< 0.5"}
        for name, values in times.items():
            walls, cpus = [w for w, _ in values], [c for _, c in values]
            print(f"| {name} | {statistics.median(walls):.3f} | {min(walls):.3f} | "
                  f"{statistics.median(cpus):.3f} | {targets.get(name, '')} |")
        print()
        print("heavy modules imported by `import irtool`:",
              ", ".join(heavy_imports("import irtool")) or "none")
        print("heavy modules imported by `irtool --version`:",
              ", ".join(heavy_imports("import contextlib, io, sys\n"
                                      "sys.argv = ['irtool', '--version']\n"
                                      "from irtool.cli import main\n"
                                      "with contextlib.redirect_stdout(io.StringIO()):\n"
                                      "    try:\n        main()\n"
                                      "    except SystemExit:\n        pass"))
              or "none")
        if args.imports:
            print("\ncostliest imports of `irtool validate` (cumulative ms):")
            for micros, name in top_imports([*irtool_command(), "validate", xml, "-q"]):
                print(f"  {micros / 1000:7.1f}  {name.strip()}")
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
