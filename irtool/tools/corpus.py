"""A corpus of IR files written by OpenVINO itself, for tests.

The ONNX backend node test cases (``onnx.backend.test.case.node``) are turned
into OpenVINO IR by OpenVINO's own ONNX frontend and ``ov.save_model``.  A case
enters the corpus only when OpenVINO converts it *and* computes the ONNX
reference outputs within the case's tolerance, so every IR in the corpus is
one that OpenVINO both wrote and understands.  That makes it ground truth for
the XSD (every file must validate), the XML reader, and the numpy runtime
(``expected.npz`` holds OpenVINO's outputs for ``inputs.npz``).

Nothing is copied into the repository: the corpus is generated from the
installed ``onnx`` package and cached on disk, keyed by both versions:

* ``$IRTOOL_CORPUS_DIR`` if set, else
* ``~/.cache/irtool/ov-corpus/<openvino version>-onnx<onnx version>/``

Layout of the cache directory::

    manifest.json                 {"openvino", "onnx", "complete", "cases": {...}}
    <case name>/model.xml         written by ov.save_model(compress_to_fp16=False)
    <case name>/model.bin
    <case name>/inputs.npz        keyed by OV input tensor name (= ONNX name)
    <case name>/expected.npz      OV outputs of the reloaded model.xml, by any_name
    _build/                       progress logs of the (resumable) build

Command line::

    python -m irtool.tools.corpus --build [--limit N] [--workers W] [--fresh]
    python -m irtool.tools.corpus --ops       # distinct (type, version) over ok cases

OpenVINO can segfault, abort or hang on some inputs, so the cases run in the
workers of ``irtool.core.workers``: a case whose worker dies or overruns
is recorded as failed, and the build goes on. Each finished case is appended to
a progress file at once, so an interrupted build resumes where it stopped.
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import functools
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import warnings
import xml.etree.ElementTree as ET
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any, TypeVar

import numpy as np

from ..core.files import write_npz
from ..core.workers import Outcome, Pool, exit_reason, serve

MANIFEST = "manifest.json"
BUILD_SUBDIR = "_build"
CONTROL_FLOW_OPS: frozenset[str] = frozenset({"Loop", "TensorIterator", "If"})

# A single node test case finishes in well under a second; a case still running
# after this long is hung (an endless loop in a kernel), not slow.
CASE_TIMEOUT_S = 120.0
# A worker exits after this many cases and is started afresh, so that whatever
# OpenVINO caches per compiled model cannot accumulate over the whole corpus.
CASES_PER_WORKER_RUN = 500

# ---------------------------------------------------------------------------
# Versions and locations


def _dist_version(dist: str, module: str) -> str:
    """The installed version of a distribution, falling back to ``module.__version__``."""
    from importlib import metadata

    try:
        return metadata.version(dist)
    except metadata.PackageNotFoundError:
        # A source build of OpenVINO has no pip metadata; its __version__ is a
        # long build string with slashes, which _safe() makes path-safe.
        mod = __import__(module)
        return str(getattr(mod, "__version__", "unknown"))


def versions() -> tuple[str, str]:
    """``(openvino version, onnx version)`` of the installed packages."""
    return _dist_version("openvino", "openvino"), _dist_version("onnx", "onnx")


def _safe(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9._+-]", "_", text)


def corpus_dir() -> Path:
    """Where the corpus for the installed OpenVINO and ONNX versions lives."""
    env = os.environ.get("IRTOOL_CORPUS_DIR")
    if env:
        return Path(env).expanduser()
    ov_ver, onnx_ver = versions()
    base = Path("~/.cache/irtool/ov-corpus").expanduser()
    return base / f"{_safe(ov_ver)}-onnx{_safe(onnx_ver)}"


# ---------------------------------------------------------------------------
# Reading the corpus (what tests use)


def _load_npz(path: Path) -> dict[str, np.ndarray]:
    # Strings are stored as fixed-width unicode, so pickle is never needed.
    with np.load(path, allow_pickle=False) as data:
        return {key: data[key] for key in data.files}


@dataclasses.dataclass(frozen=True)
class CorpusCase:
    """One IR of the corpus: the XML/.bin pair, its feed and OpenVINO's outputs."""

    name: str
    xml: Path
    bin: Path
    ops: tuple[tuple[str, str], ...]

    @functools.cached_property
    def inputs(self) -> dict[str, np.ndarray]:
        """Input arrays keyed by tensor name (loaded on first use)."""
        return _load_npz(self.xml.parent / "inputs.npz")

    @functools.cached_property
    def expected(self) -> dict[str, np.ndarray]:
        """OpenVINO's outputs for :attr:`inputs`, keyed by output tensor name."""
        return _load_npz(self.xml.parent / "expected.npz")

    @property
    def op_types(self) -> set[str]:
        """The layer types used anywhere in the IR, bodies included."""
        return {t for t, _ in self.ops}


def read_manifest(directory: Path | None = None) -> dict[str, Any] | None:
    """The manifest of ``directory`` (default :func:`corpus_dir`), or None if absent/corrupt."""
    path = (directory or corpus_dir()) / MANIFEST
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def _manifest_current(manifest: dict[str, Any] | None) -> bool:
    if manifest is None:
        return False
    ov_ver, onnx_ver = versions()
    return (
        manifest.get("openvino") == ov_ver
        and manifest.get("onnx") == onnx_ver
        # A --limit build is a partial corpus; tests want the whole one.
        and manifest.get("complete", False)
    )


def ensure_corpus() -> Path:
    """Build the corpus unless an up-to-date, complete one exists; return its directory."""
    directory = corpus_dir()
    if not _manifest_current(read_manifest(directory)):
        build(directory)
    return directory


def corpus_cases(ok_only: bool = True) -> list[CorpusCase]:
    """All cases of the corpus (building it if needed), in ONNX collection order.

    With ``ok_only=False`` failed cases are included too; their files do not exist.
    """
    directory = ensure_corpus()
    manifest = read_manifest(directory) or {"cases": {}}
    cases = []
    for name, info in manifest["cases"].items():
        if ok_only and not info["ok"]:
            continue
        xml = directory / name / "model.xml"
        cases.append(
            CorpusCase(
                name=name,
                xml=xml,
                bin=xml.with_suffix(".bin"),
                ops=tuple((t, v) for t, v in info["ops"]),
            )
        )
    return cases


def cases_with_ops(types: Iterable[str]) -> list[CorpusCase]:
    """OK cases whose IR uses any of the layer ``types`` (e.g. :data:`CONTROL_FLOW_OPS`)."""
    wanted = set(types)
    return [case for case in corpus_cases() if case.op_types & wanted]


def distinct_ops(directory: Path | None = None) -> list[tuple[str, str]]:
    """Sorted distinct ``(type, version)`` pairs over the ok cases of the manifest."""
    manifest = read_manifest(directory) or {"cases": {}}
    pairs = {(t, v) for info in manifest["cases"].values() if info["ok"] for t, v in info["ops"]}
    return sorted(pairs)


# ---------------------------------------------------------------------------
# Worker side: one case at a time, in a child process


class CaseFailure(Exception):
    """A case that does not enter the corpus; the message becomes the manifest reason."""


# OpenVINO wraps its messages in lines saying where the exception was thrown
# from; those say nothing about the case, so the reason skips them.
_BOILERPLATE = re.compile(
    r"^(Exception from |FrontEnd API failed with|Model wasn't fully converted|Summary:|"
    r"-- Conversion is failed for|\[ ?\w+ ?\]\s*$)"
    r"|Check '.*' failed at \S+:\d+:?$"
)


T = TypeVar("T")


def _stage(stage: str, step: Callable[[], T]) -> T:
    """``step()``; any exception it raises becomes a ``CaseFailure`` naming ``stage``."""
    try:
        return step()
    except Exception as exc:
        raise CaseFailure(_reason(stage, exc)) from None


def _reason(stage: str, exc: BaseException) -> str:
    """A one-line reason: the stage plus the first informative line of ``exc``.

    The ONNX frontend reports ``-- Op-N with a message:`` and the message on
    the following lines; those two are joined so the reason names both.
    """
    lines = [ln.strip() for ln in str(exc).splitlines() if ln.strip()]
    useful = [ln for ln in lines if not _BOILERPLATE.search(ln)]
    text = (useful or lines or [type(exc).__name__])[0]
    if text.endswith("with a message:") and len(useful) > 1:
        text = f"{text} {useful[1]}"
    return f"{stage}: {text}"[:300]


def _as_array(value: Any) -> np.ndarray:
    """``value`` as a numpy array that numpy and OpenVINO both handle natively.

    Numpy scalars (0-d data) and TensorProtos (the Cast tests) are converted;
    sequences, optionals and the ml_dtypes types (bfloat16, float8, int4: numpy
    kind 'V') are not tensors OpenVINO's Python API can be fed or compared with,
    so those raise CaseFailure and the case is recorded as skipped.
    """
    import onnx
    from onnx import numpy_helper

    if isinstance(value, onnx.TensorProto):
        value = numpy_helper.to_array(value)
    elif isinstance(value, np.generic):
        value = np.asarray(value)
    if not isinstance(value, np.ndarray):
        raise CaseFailure(f"skipped: {type(value).__name__} value (sequence/optional)")
    if value.dtype.type.__module__ != "numpy":
        # ml_dtypes registers its types as user dtypes (kind "V", or "f" for
        # float8_e5m2); OpenVINO's Python API does not map them.
        raise CaseFailure(f"skipped: {value.dtype} has no native numpy dtype")
    if value.dtype == object:
        # ONNX string tensors are object arrays; fixed-width unicode keeps the
        # npz files pickle-free and is what OpenVINO accepts for strings.
        value = value.astype(str)
    # Not np.ascontiguousarray: it turns 0-d arrays into shape (1,).
    return np.require(value, requirements="C")


def compare_output(actual: np.ndarray, expected: np.ndarray, rtol: float, atol: float
                   ) -> str | None:
    """Why ``actual`` differs from ``expected`` (onnx backend-test rules), or None."""
    if actual.shape != expected.shape:
        return f"shape {actual.shape} != expected {expected.shape}"
    if expected.dtype.kind in "USO":
        if actual.dtype.kind not in "USO" or actual.tolist() != expected.tolist():
            return "string values differ"
        return None
    if actual.dtype != expected.dtype:
        return f"dtype {actual.dtype} != expected {expected.dtype}"
    if expected.dtype.kind in "biu":
        # Integers and booleans have no rounding: any difference is a bug.
        if not np.array_equal(actual, expected):
            bad = int(np.count_nonzero(actual != expected))
            return f"{bad} of {expected.size} integer values differ"
        return None
    try:
        np.testing.assert_allclose(actual, expected, rtol=rtol, atol=atol, equal_nan=True)
    except AssertionError:
        with np.errstate(all="ignore"):
            err = np.abs(actual.astype(np.float64) - expected.astype(np.float64))
        return f"values differ beyond rtol={rtol} atol={atol} (max abs err {np.nanmax(err):.3g})"
    return None


def _infer(
    core: Any, model: Any, feed: dict[str, np.ndarray], config: dict[str, str]
) -> tuple[list[tuple[set[str], str, np.ndarray]], dict[str, np.ndarray]]:
    """Compile ``model`` on CPU and run it once.

    Returns the outputs as ``(names, any_name, array)`` in model order, and the
    feed actually used keyed by input tensor name.  Each OV input is fed by
    whichever of its tensor names appears in ``feed``.  When an input has none
    (OpenVINO renames the Parameter of a pass-through graph, e.g. Identity or
    Dropout, to the output's name) but the input counts agree, inputs are fed
    by position, which the ONNX frontend preserves, and keyed by OV's name.
    """
    compiled = _stage("compile_model", lambda: core.compile_model(model, "CPU", config))
    used: dict[str, np.ndarray] = {}
    by_port = {}
    positional = list(feed.values()) if len(feed) == len(compiled.inputs) else None
    for index, port in enumerate(compiled.inputs):
        names = port.get_names()
        hits = sorted(n for n in names if n in feed)
        if hits:
            key, value = hits[0], feed[hits[0]]
        elif positional is not None and names:
            key, value = port.get_any_name(), positional[index]
        else:
            raise CaseFailure(f"feed: no data for OpenVINO input {sorted(names)}")
        used[key] = value
        by_port[port] = value
    try:
        result = compiled.create_infer_request().infer(by_port)
        outputs = [
            (set(port.get_names()), port.get_any_name(), np.array(result[port]))
            for port in compiled.outputs
        ]
    except Exception as exc:
        raise CaseFailure(_reason("infer", exc)) from None
    return outputs, used


def _check_outputs(
    outputs: list[tuple[set[str], str, np.ndarray]],
    expected: dict[str, np.ndarray],
    rtol: float,
    atol: float,
    stage: str,
) -> None:
    """Fail unless every ONNX graph output is produced and matches within tolerance."""
    for name, ref in expected.items():
        found = [arr for names, _, arr in outputs if name in names]
        if not found:
            raise CaseFailure(f"{stage}: no OpenVINO output named {name!r}")
        why = compare_output(found[0], ref, rtol, atol)
        if why:
            raise CaseFailure(f"{stage}: output {name!r}: {why}")


def xml_ops(xml_path: Path) -> list[list[str]]:
    """Sorted distinct ``[type, version]`` of all layers in an IR, bodies included."""
    root = ET.parse(xml_path).getroot()
    # iter() descends into body/then_body/else_body, which hold <layer>s too.
    pairs = {(el.get("type", ""), el.get("version", "")) for el in root.iter("layer")}
    return [list(p) for p in sorted(pairs)]


def run_case(case: Any, out_root: Path, core: Any, config: dict[str, str]) -> dict[str, Any]:
    """Convert, check and (if good) save one ONNX node test case; return its record."""
    import onnx
    import openvino as ov

    record: dict[str, Any] = {"name": case.name, "ok": False, "reason": None, "ops": []}
    final = out_root / case.name
    partial = out_root / BUILD_SUBDIR / "partial" / case.name
    try:
        inputs, outputs = case.data_sets[0]
        in_arrays = [_as_array(v) for v in inputs]
        out_arrays = [_as_array(v) for v in outputs]

        graph = case.model.graph
        # Old models list initializers among the graph inputs; the data set
        # only carries the inputs that have no initializer.
        initialized = {t.name for t in graph.initializer}
        in_names = [vi.name for vi in graph.input if vi.name not in initialized]
        if len(in_names) != len(in_arrays):
            in_names = [vi.name for vi in graph.input]
        if len(in_names) != len(in_arrays):
            raise CaseFailure(f"skipped: {len(in_arrays)} inputs for {len(in_names)} graph inputs")
        feed = dict(zip(in_names, in_arrays, strict=True))
        out_names = [vi.name for vi in graph.output]
        if len(out_names) != len(out_arrays):
            raise CaseFailure("skipped: output count differs from graph outputs")
        expected = dict(zip(out_names, out_arrays, strict=True))

        shutil.rmtree(partial, ignore_errors=True)
        partial.mkdir(parents=True)
        onnx_path = partial / "model.onnx"
        onnx.save_model(case.model, onnx_path)
        model = _stage("read_model", lambda: core.read_model(onnx_path))
        ov_outputs, _ = _infer(core, model, feed, config)
        _check_outputs(ov_outputs, expected, case.rtol, case.atol, "openvino")

        xml_path = partial / "model.xml"
        _stage("save_model", lambda: ov.save_model(model, xml_path, compress_to_fp16=False))
        onnx_path.unlink()

        # expected.npz must be what the *saved* IR computes, since that file is
        # what the tests read; it must also still be correct.
        reloaded = _stage("reload", lambda: core.read_model(xml_path))
        re_outputs, used = _infer(core, reloaded, feed, config)
        _check_outputs(re_outputs, expected, case.rtol, case.atol, "reloaded IR")
        expected_out = {any_name: arr for _, any_name, arr in re_outputs}
        if len(expected_out) != len(re_outputs):
            raise CaseFailure("reloaded IR: two outputs share an any_name")

        write_npz(partial / "inputs.npz", used)
        write_npz(partial / "expected.npz", expected_out)
        record["ops"] = xml_ops(xml_path)
        shutil.rmtree(final, ignore_errors=True)
        os.replace(partial, final)
        record["ok"] = True
    except CaseFailure as exc:
        record["reason"] = str(exc)
    except Exception as exc:
        # A bug in this module or an odd case: record it rather than lose the build.
        record["reason"] = _reason(f"error ({type(exc).__name__})", exc)
    finally:
        shutil.rmtree(partial, ignore_errors=True)
    if not record["ok"]:
        shutil.rmtree(final, ignore_errors=True)
    return record


def collect_cases() -> list[Any]:
    # Generating the cases runs numpy reference code that warns a lot (overflow,
    # invalid value, ...); none of it matters here.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        from onnx.backend.test.case.node import collect_testcases

        return list(collect_testcases())


def _worker_main(out_root: Path, threads: int) -> int:
    """A worker of ``build``: the cases and an OpenVINO core loaded once, then one case
    (by name) per job."""
    state: dict[str, Any] = {}

    def setup() -> None:
        warnings.simplefilter("ignore")
        np.seterr(all="ignore")
        import openvino as ov

        state["cases"] = {c.name: c for c in collect_cases()}
        state["core"] = ov.Core()

    # f32 precision: some CPUs would otherwise run f32 models in bf16 and miss the
    # tolerance; threads: workers share the cores instead of fighting.
    config = {"INFERENCE_PRECISION_HINT": "f32", "INFERENCE_NUM_THREADS": str(threads)}

    def handle(name: str) -> dict[str, Any]:
        case = state["cases"].get(name)
        if case is None:
            return {"name": name, "ok": False, "reason": "case vanished", "ops": []}
        return run_case(case, out_root, state["core"], config)

    return serve(handle, setup)


def _list_main() -> int:
    """Child process: print the case names as JSON (keeps the test cases out of the parent)."""
    print(json.dumps([c.name for c in collect_cases()]))
    return 0


# ---------------------------------------------------------------------------
# Parent side: the cases in workers, each result logged, the manifest written


def _read_done(build_dir: Path) -> dict[str, dict[str, Any]]:
    """The results earlier runs logged (resuming an interrupted build)."""
    done: dict[str, dict[str, Any]] = {}
    for path in sorted(build_dir.glob("progress-*.jsonl")):
        for line in path.read_bytes().split(b"\n"):
            with contextlib.suppress(ValueError):
                entry = json.loads(line)
                if isinstance(entry, dict) and "result" in entry:
                    done[entry["result"]["name"]] = entry["result"]
    return done


def _write_json_atomic(path: Path, data: Any) -> None:
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=path.name, suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            json.dump(data, fh, indent=1, sort_keys=False)
            fh.write("\n")
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


@contextlib.contextmanager
def _locked(directory: Path) -> Iterator[None]:
    """Serialise builds of one directory (e.g. parallel pytest sessions)."""
    try:
        import fcntl
    except ImportError:  # not POSIX: no lock, builds are still atomic per case
        yield
        return
    with (directory / ".lock").open("w") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


def _list_case_names() -> list[str]:
    out = subprocess.run(
        [sys.executable, "-m", "irtool.tools.corpus", "--_list"],
        capture_output=True,
        env={**os.environ, "PYTHONWARNINGS": "ignore"},
    )
    if out.returncode != 0:
        tail = out.stderr.decode(errors="replace")[-2000:]
        raise RuntimeError(f"ov-corpus: listing the ONNX node test cases failed:\n{tail}")
    return json.loads(out.stdout)


def build(
    directory: Path | None = None,
    limit: int | None = None,
    workers: int | None = None,
    fresh: bool = False,
    log: Callable[[str], None] | None = None,
) -> dict[str, Any]:
    """Build (or resume building) the corpus in ``directory``; return the manifest.

    Results of earlier runs with the same versions are kept, so an interrupted
    or ``limit``-ed build continues where it stopped.  ``fresh`` starts over.
    """
    say = log or (lambda msg: print(msg, file=sys.stderr, flush=True))
    directory = directory or corpus_dir()
    directory.mkdir(parents=True, exist_ok=True)
    ov_ver, onnx_ver = versions()
    t0 = time.monotonic()
    with _locked(directory):
        build_dir = directory / BUILD_SUBDIR
        meta_path = build_dir / "meta.json"
        meta = {"openvino": ov_ver, "onnx": onnx_ver}
        try:
            stale = json.loads(meta_path.read_text(encoding="utf-8")) != meta
        except (OSError, ValueError):
            stale = True
        if fresh or stale:
            # Results of other versions (possible with $IRTOOL_CORPUS_DIR) are
            # void.  Remove only what a build writes: the directory may be one
            # the user pointed us at with other things in it.
            for child in directory.iterdir():
                if child.is_dir() and (
                    child.name == BUILD_SUBDIR or child.name.startswith("test_")
                ):
                    shutil.rmtree(child)
            with contextlib.suppress(FileNotFoundError):
                (directory / MANIFEST).unlink()
            build_dir.mkdir()
            _write_json_atomic(meta_path, meta)

        names = _list_case_names()
        selected = names if limit is None else names[:limit]
        done = _read_done(build_dir)
        todo = [n for n in selected if n not in done]
        n_workers = max(1, min(workers or os.cpu_count() or 1, 4, len(todo) or 1))
        threads = max(1, (os.cpu_count() or 1) // n_workers)
        say(
            f"ov-corpus: {len(selected)} cases selected, {len(selected) - len(todo)} already "
            f"done, running {len(todo)} on {n_workers} worker(s) -> {directory}"
        )
        _run_cases(todo, directory, build_dir, n_workers, threads, done, say, t0)
        shutil.rmtree(build_dir / "partial", ignore_errors=True)

        # The per-case "name" is the manifest key already.
        cases = {n: {k: v for k, v in done[n].items() if k != "name"} for n in names if n in done}
        complete = all(n in done for n in names)
        manifest = {"openvino": ov_ver, "onnx": onnx_ver, "complete": complete, "cases": cases}
        _write_json_atomic(directory / MANIFEST, manifest)
    elapsed = time.monotonic() - t0
    n_ok = sum(1 for r in cases.values() if r["ok"])
    say(
        f"ov-corpus: {n_ok} ok of {len(cases)} cases"
        f"{'' if complete else f' (partial: {len(names)} exist)'} in {elapsed:.1f} s"
    )
    return manifest


def _run_cases(todo: list[str], out_root: Path, build_dir: Path, workers: int, threads: int,
               done: dict[str, dict[str, Any]], say: Callable[[str], None], t0: float) -> None:
    """The cases in ``todo`` in worker processes; each result into ``done`` and the log."""
    progress = build_dir / "progress-0.jsonl"
    finished = 0

    def record(outcome: Outcome) -> None:
        nonlocal finished
        name = outcome.job
        if outcome.ok:
            rec = outcome.value
        else:
            if outcome.status == "crash":
                why = f"crashed: worker died with {_describe_rc(outcome.returncode or 0)}"
            elif outcome.status == "timeout":
                why = f"timeout: no result after {CASE_TIMEOUT_S:.0f} s"
            else:
                why = f"error: {outcome.reason}"
            rec = {"name": name, "ok": False, "reason": why, "ops": []}
            say(f"ov-corpus: {name}: {why}")
            # The case may have left a half-written output behind.
            shutil.rmtree(out_root / name, ignore_errors=True)
            shutil.rmtree(build_dir / "partial" / name, ignore_errors=True)
        done[name] = rec
        with progress.open("a", encoding="utf-8") as fh:
            fh.write(json.dumps({"result": rec}) + "\n")
        finished += 1
        if finished % 100 == 0:
            say(f"ov-corpus: {finished}/{len(todo)} in {time.monotonic() - t0:.0f} s")

    with Pool("irtool.tools.corpus", ["--_worker", str(out_root), str(threads)],
              workers=workers, timeout=CASE_TIMEOUT_S, jobs_per_worker=CASES_PER_WORKER_RUN,
              name="ov-corpus workers") as pool:
        pool.run(todo, record)


def _describe_rc(rc: int) -> str:
    reason = exit_reason(rc)
    return f"signal {reason}" if rc < 0 else f"exit code {rc}"


# ---------------------------------------------------------------------------
# Command line


def main(argv: list[str] | None = None) -> int:
    """``python -m irtool.tools.corpus --build [--limit N]`` / ``--ops`` / ``--summary``."""
    argv = sys.argv[1:] if argv is None else argv
    if argv and argv[0] == "--_worker":
        return _worker_main(Path(argv[1]), int(argv[2]))
    if argv and argv[0] == "--_list":
        return _list_main()

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--build", action="store_true", help="build or resume the corpus")
    parser.add_argument("--limit", type=int, help="only the first N cases (a partial corpus)")
    parser.add_argument("--workers", type=int, help="worker processes (default: CPU count)")
    parser.add_argument("--fresh", action="store_true", help="discard earlier results first")
    parser.add_argument("--ops", action="store_true", help="print distinct (type, version) pairs")
    parser.add_argument("--summary", action="store_true", help="print failure reasons by count")
    args = parser.parse_args(argv)
    if not (args.build or args.ops or args.summary):
        parser.error("nothing to do: give --build, --ops and/or --summary")

    directory = corpus_dir()
    if args.build:
        build(directory, limit=args.limit, workers=args.workers, fresh=args.fresh)
    manifest = read_manifest(directory)
    if manifest is None:
        print(f"no corpus in {directory}; run with --build", file=sys.stderr)
        return 1
    if args.ops:
        pairs = distinct_ops(directory)
        for op_type, version in pairs:
            print(f"{op_type}\t{version}")
        print(f"# {len(pairs)} distinct (type, version) pairs", file=sys.stderr)
    if args.summary:
        reasons: dict[str, int] = {}
        for info in manifest["cases"].values():
            if not info["ok"]:
                key = re.sub(r"\d+", "N", info["reason"] or "?")[:120]
                reasons[key] = reasons.get(key, 0) + 1
        for key, count in sorted(reasons.items(), key=lambda kv: -kv[1]):
            print(f"{count:5d}  {key}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
