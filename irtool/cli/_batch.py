"""The multi-model modes: ``validate PATH...``, ``check DIR/``, ``convert DIR/ -o OUT/``.

Models are named by files, folders (searched recursively) and quoted globs
(``core.paths``); each is one ``tools.batch.Task``, done here in this process, in worker
processes (``--jobs N``, ``--model-timeout``) or on a Dask cluster (``--scheduler``), and
each row goes into one report as it comes (``tools.reports``: ``--format``, ``--report``),
judged against ``--strict`` and ``--baseline`` (validate). ``--resume REPORT`` skips the
models a report already holds and keeps their rows.

This module is also the batch's worker (``python -m irtool.cli._batch``): ``handle`` does
one model of any of the three commands.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import logging
import os
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..core.diagnostics import Diagnostic
from ..core.errors import IRToolError, UsageError

if TYPE_CHECKING:  # imported where used: the parser is built on every start of irtool
    from ..core.paths import Expanded
    from ..core.workers import Pool
    from ..tools.batch import Row, Task

log = logging.getLogger("irtool")

WORKER = "irtool.cli._batch"
FORMATS = ("text", "json", "junit", "sarif", "github")
"""``tools.reports.FORMATS``, named here too so that building the parser imports no report
code (a test keeps the two in step)."""

_MAGIC = frozenset("*?[")


def many(arg: str) -> bool:
    """Whether a model argument names several models: a folder, or a glob no file is
    called."""
    return os.path.isdir(arg) or (bool(_MAGIC & set(arg)) and not os.path.exists(arg))


def add_options(p: argparse.ArgumentParser, *, timeout_default: str) -> None:
    """The options every multi-model mode takes."""
    g = p.add_argument_group("many models (folders, globs)")
    g.add_argument("--format", choices=FORMATS, default=None,
                   help="the report: text (compiler lines), json, junit (JUnit XML), sarif "
                        "(SARIF 2.1.0), github (workflow annotations); default: from the "
                        "--report suffix (.json, .xml, .sarif), else text")
    g.add_argument("--report", metavar="FILE",
                   help="write the report to FILE, rewritten as models finish (stdout "
                        "then shows the text lines); default: stdout")
    g.add_argument("--resume", metavar="REPORT",
                   help="skip the models REPORT (json, junit or sarif, from an earlier "
                        "run) already holds, keep their rows, and write the whole report "
                        "there (unless --report says elsewhere)")
    g.add_argument("--jobs", "-j", type=int, default=1, metavar="N",
                   help="models at once, each in a worker process (default 1: one after "
                        "the other, in this process)")
    g.add_argument("--scheduler", metavar="tcp://HOST:PORT",
                   help="run on this Dask distributed cluster instead (pip install "
                        "'irtool[dask]'; the workers need irtool too)")
    g.add_argument("--model-timeout", type=float, default=None, metavar="SECONDS",
                   help="a model taking longer is stopped and reported (MODEL_TIMEOUT); "
                        f"runs models in worker processes (default: {timeout_default})")


def found_models(args: list[str], kind: str, *, only_models: bool = False) -> Expanded:
    """The models ``args`` name; ``UsageError`` for a folder or glob without any."""
    from ..core.paths import NoModels, expand

    try:
        found = expand(args, kind, only_models=only_models)
    except NoModels as err:
        raise UsageError(str(err)) from None
    for path, why in found.skipped:
        log.info("skipped %s: %s", path, why)
    return found


def report_format(args: argparse.Namespace, resumed: str) -> str:
    from ..tools.reports import BY_SUFFIX

    if args.format:
        return str(args.format)
    if resumed:
        return resumed
    target = args.report or args.resume
    return BY_SUFFIX.get(Path(target).suffix.lower(), "text") if target else "text"


def early_workers(args: argparse.Namespace) -> contextlib.AbstractContextManager[Pool | None]:
    """The worker processes ``--jobs`` / ``--model-timeout`` ask for, started at once so
    that they load while the models are looked for (``run_models(pool=)``), stopped at
    the end of the block; None when the models are done in this process or on Dask (whose
    client library, most of a second to import, is then imported meanwhile)."""
    from ..tools.batch import early_pool

    if args.scheduler is not None:
        threading.Thread(target=_import_quietly, args=("distributed",), daemon=True,
                         name="import distributed").start()
        return contextlib.nullcontext()
    if args.jobs < 1 or (args.model_timeout is not None and args.model_timeout <= 0):
        return contextlib.nullcontext()  # run_models says what is wrong, if anything
    pool = early_pool(WORKER, jobs=args.jobs, timeout=args.model_timeout)
    return contextlib.nullcontext() if pool is None else pool


def _import_quietly(name: str) -> None:
    """Import ``name`` ahead of its use; a failure is left for that use to report."""
    with contextlib.suppress(Exception):
        importlib.import_module(name)


def run_models(args: argparse.Namespace, command: str, found: Expanded,
               options: dict[str, Any], *, strict: bool = False,
               baseline: str | None = None, write_baseline: str | None = None,
               pool: Pool | None = None) -> int:
    """Every model of ``found`` through ``command``, the report written as rows come;
    0 when every model passes, 1 otherwise (``UsageError`` before any work for options
    that cannot go together). ``pool``: the workers ``early_workers`` started."""
    from .. import __version__
    from ..tools.baseline import Baseline, BaselineError
    from ..tools.batch import Task, run_tasks
    from ..tools.reports import (
        RESUMABLE,
        Context,
        Judged,
        ReportError,
        ReportWriter,
        Summary,
        judge,
        read_report,
    )

    if args.jobs < 1:
        raise UsageError("--jobs must be 1 or more")
    if args.model_timeout is not None and args.model_timeout <= 0:
        raise UsageError("--model-timeout must be more than 0 seconds")
    accepted = None
    if baseline is not None:
        try:
            accepted = Baseline.load(baseline)
        except BaselineError as err:
            raise UsageError(str(err)) from None
    resumed_format = ""
    earlier_rows: list[Row] = []
    if args.resume:
        try:
            resumed_format, earlier_rows = read_report(args.resume)
        except ReportError as err:
            raise UsageError(str(err)) from None
    fmt = report_format(args, resumed_format)
    target = args.report or args.resume
    if args.resume and fmt not in RESUMABLE:
        raise UsageError(f"--resume needs a report that lists every model: --format "
                         f"{', '.join(RESUMABLE)} (not {fmt})")
    if resumed_format and fmt != resumed_format:
        raise UsageError(f"{args.resume} is a {resumed_format} report; resume it as one")

    def key(path: str) -> str:
        return os.path.normcase(os.path.realpath(path))

    done = {key(r.file) for r in earlier_rows}
    tasks = [Task(command, f.path, f.name, options) for f in found.found
             if not done or key(f.path) not in done]
    if earlier_rows:
        log.info("resuming %s: %d model(s) done, %d to do", args.resume,
                 len(found.found) - len(tasks), len(tasks))
    ctx = Context(command, strict=strict, baseline=baseline, version=__version__)

    def judged(row: Row) -> Judged:  # by ``accepted`` as it is when called
        return judge(row, strict=strict, baseline=accepted)

    writer = ReportWriter(fmt, ctx, target, earlier=[judged(r) for r in earlier_rows],
                          echo=target is not None and not args.quiet,
                          verbose=args.verbose > 0)
    bar = _bar(len(tasks), command, quiet=args.quiet)
    order = {f.path: i for i, f in enumerate(found.found)}

    def on_row(row: Row) -> None:
        writer.add(judged(row))
        if bar is not None:
            bar.update(1)
        errors = sum(d.severity == "error" for d in row.diagnostics)
        log.info("%s: %d error(s), %d warning(s)%s", row.file, errors,
                 len(row.diagnostics) - errors, "" if row.status == "done" else
                 f" ({row.status})")

    try:
        if args.scheduler is not None:
            from ..tools.batch_dask import run_on_dask

            run_on_dask(tasks, on_row, worker=WORKER, scheduler=args.scheduler,
                        timeout=args.model_timeout)
        else:
            run_tasks(tasks, handle, on_row, worker=WORKER, jobs=args.jobs,
                      timeout=args.model_timeout, pool=pool)
    except BaseException:  # interrupted: the report holds what finished, for --resume
        writer.close(order)
        raise
    finally:
        if bar is not None:
            bar.close()
    if write_baseline is not None:  # what was found is accepted from now on
        everything = [j.row for j in writer.judged]
        accepted = Baseline.of(write_baseline, [
            (d, r.file) for r in everything if r.status == "done" for d in r.diagnostics])
        accepted.write()
        writer.judged = [judged(r) for r in everything]  # judged by the new baseline
        print(f"irtool {command}: wrote {write_baseline} "
              f"({sum(accepted.accepted.values())} finding(s))", file=sys.stderr)
    writer.close(order)
    summary = Summary.of(command, writer.judged)
    failed = summary.files - summary.ok
    if failed or not args.quiet:
        print(f"irtool {command}: {summary.line()}", file=sys.stderr)
    return 1 if failed else 0


def check_models(args: argparse.Namespace, shapes: dict[str, tuple[int | None, ...]]) -> int:
    """``irtool check DIR/|'GLOB'``: every ONNX model checked on random inputs, one row each
    (``CHECK_FAILED`` when an engine fails or disagrees, the verdict otherwise)."""
    def work() -> int:
        if args.inputs:
            raise UsageError("an .npz of inputs belongs to one model: with a folder or a "
                             "glob each model gets random inputs (--seed, --shape)")
        if args.keep:
            raise UsageError("--keep keeps one model's IR: give one model")
        if args.localize or args.reference:
            raise UsageError("--localize and --reference look into one model: give one model")
        if args.json:
            args.format = one_format(args.format, "json")
        found = found_models([args.model], "onnx")
        options = {"seed": args.seed, "shapes": shapes, "rtol": args.rtol, "atol": args.atol,
                   "timeout": args.timeout, "max_iterations": args.max_iterations,
                   "optimize": not args.no_optimize, "extensions": list(args.extension)}
        return run_models(args, "check", found, options)

    return work()


def convert_models(args: argparse.Namespace,
                   shapes: dict[str, tuple[int | None, ...]] | None) -> int:
    """``irtool convert DIR/|'GLOB' -o OUT/``: every ONNX model converted to
    ``OUT/<its path inside DIR>.xml`` (+ .bin), one row each."""
    def work() -> int:
        if not args.output_model:
            raise UsageError("converting a folder or a glob needs -o OUTDIR/, the folder the "
                             "IR files go to")
        if args.opset:
            raise UsageError("--opset prints one model's opsets: give one model")
        if args.no_optimize and args.slice_inputs:
            raise UsageError("--slice-inputs is an optimisation, which --no-optimize turns "
                             "off")
        found = found_models([args.model], "onnx")
        targets: dict[Path, str] = {}
        for f in found.found:
            out = convert_output(args.output_model, f.name)
            if out in targets:
                raise UsageError(f"{targets[out]} and {f.path} would both be written to {out}")
            targets[out] = f.path
        options = {"output_dir": args.output_model, "slice_inputs": args.slice_inputs,
                   "vectorize": not args.no_vectorize, "input_shapes": shapes,
                   "optimize": not args.no_optimize,
                   "compress_to_fp16": args.compress_to_fp16}
        return run_models(args, "convert", found, options)

    return work()


def one_format(given: str | None, implied: str) -> str:
    """The format ``--json`` implies, unless ``--format`` asks for another."""
    if given not in (None, implied):
        raise UsageError(f"--json and --format {given} ask for two formats")
    return implied


def _bar(total: int, command: str, *, quiet: bool) -> Any:
    """A progress bar on stderr when it is a terminal (tqdm loads only then)."""
    if quiet or total < 2 or not sys.stderr.isatty():
        return None
    from tqdm import tqdm

    return tqdm(total=total, desc=f"irtool {command}", unit="model", leave=False)


# -- one model of each command (in this process or in a worker) ---------------------------


def _load_extensions(task: Task) -> None:
    from ..core.extensions import load_extension

    for path in task.options.get("extensions", ()):
        load_extension(path)


def validate_model(task: Task) -> Row:
    """``validate`` of one IR file: its diagnostics."""
    from .. import api
    from ..tools.batch import timed

    _load_extensions(task)
    return timed(task, lambda: (api.validate(task.path, openvino=task.options.get("openvino")),
                                {}))


def _refused(task: Task, err: IRToolError, code: str) -> list[Diagnostic]:
    """The error that refused the model as its finding, placed in the model's file (another
    file it names, the layer and the ONNX node lead the message)."""
    here = err.file in (None, task.path)
    where = [] if here or not err.file else [
        err.file if err.line is None else f"{err.file}:{err.line}"]
    where += [f"layer {err.layer}"] * bool(err.layer) + [f"node {err.node}"] * bool(err.node)
    return [Diagnostic(code, ": ".join([*where, err.message]), task.path,
                       err.line if here else None)]


def check_model(task: Task) -> Row:
    """``check`` of one ONNX model (random inputs): a ``CHECK_FAILED`` finding when an
    engine failed or disagrees, the report's verdict and the report itself as details."""
    from .. import api
    from ..core.errors import ConversionError
    from ..tools.batch import timed

    _load_extensions(task)
    o = task.options

    def work() -> tuple[list[Diagnostic], dict[str, Any]]:
        try:
            report = api.check(task.path, None, seed=o.get("seed", 0), shapes=o.get("shapes"),
                               rtol=o.get("rtol"), atol=o.get("atol"),
                               timeout=o.get("timeout", 300.0),
                               max_iterations=o.get("max_iterations"),
                               optimize=o.get("optimize", True))
        except ConversionError as err:  # UnsupportedOpError too
            return _refused(task, err, "CONVERSION_FAILED"), {}
        except IRToolError as err:  # inputs that cannot be made, a file that is no model
            return _refused(task, err, "CHECK_FAILED"), {}
        found = [] if report.ok else [Diagnostic("CHECK_FAILED", "; ".join(
            report.failures()) or report.verdict(), task.path)]
        return found, {"summary": report.verdict(), "report": report.to_dict()}

    return timed(task, work)


def convert_output(output_dir: str, name: str) -> Path:
    """Where ``convert DIR/ -o OUT/`` writes the model found as ``name`` inside DIR."""
    return Path(output_dir) / Path(name).with_suffix(".xml")


def convert_model(task: Task) -> Row:
    """``convert`` of one ONNX model into ``options["output_dir"]``, the folders under the
    one it was found in kept."""
    from .. import api
    from ..tools.batch import timed

    o = task.options
    out = convert_output(o["output_dir"], task.name)

    def work() -> tuple[list[Diagnostic], dict[str, Any]]:
        try:
            model = api.convert(task.path, slice_inputs=o.get("slice_inputs", False),
                                vectorize=o.get("vectorize", True),
                                input_shapes=o.get("input_shapes"),
                                optimize=o.get("optimize", True))
            xml = api.save(model, out, compress_to_fp16=o.get("compress_to_fp16", False))
        except IRToolError as err:
            return _refused(task, err, "CONVERSION_FAILED"), {}
        return [], {"summary": f"wrote {xml}", "output": str(xml)}

    return timed(task, work)


HANDLERS: dict[str, Callable[[Task], Row]] = {
    "validate": validate_model, "check": check_model, "convert": convert_model}


def handle(task: Task) -> Row:
    """One model of any of the commands (what the batch's workers serve)."""
    return HANDLERS[task.command](task)


if __name__ == "__main__":
    from ..core.workers import serve

    sys.exit(serve(handle))
