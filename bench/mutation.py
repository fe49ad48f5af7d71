"""Mutation testing of irtool's semantic core with mutmut 3 -> docs/mutation.md.

    pip install -e '.[mutation]'
    nice -n 10 python bench/mutation.py [--module NAME ...] [--workers 2]
    python bench/mutation.py --report      # rewrite docs/mutation.md from the runs so far

Each module of ``MODULES`` is mutated on its own, against the test files that exercise it
(and mutmut runs, for each mutant, only those of them that reach the mutated function).
A run happens in a scratch copy of the repository, ``mutation-runs/<module>/`` (git-ignored),
whose ``[tool.mutmut]`` names that one module and those tests; mutmut writes its
``mutants/`` there, and this script keeps the result in ``mutation-runs/<module>.json``.

The report lists, per module, the mutants and what became of them, the score (killed and
timed out over all mutants), and every mutant that no test killed: each with its diff and
either the test that now kills it (re-run the module to see it killed) or, for an
equivalent mutant, why no test can tell it from the original (``EXPLAINED`` in
``bench/mutation_explained.py``, keyed by mutant name and checked against the diff), or
that it only rewords a message's prose (``_wording_only``). ``--recheck`` re-applies the
survivors to today's tree and runs the module's tests, a session per mutant in a scratch
copy, or with ``--in-process`` all in one session here (the mutated function swapped in).
Modules never run are listed as such. Exit status 1 when a survivor is unexplained.
``mutation-runs/`` is not in git: a module run in another checkout keeps the row and section
docs/mutation.md already has for it (``_kept``) until it is run here.

``--refresh`` brings a stored run to today's tree without starting over: today's files
go into the run's scratch copy and mutmut re-tests only the mutants of functions whose
code changed (and any not checked), keeping the other results and the kills
``--recheck`` confirmed for unchanged mutants. Not when the module's test list changed:
mutmut then starts the module over (its config is part of what it compares), so re-test
changed functions before adding a test file to ``MODULES``, or expect a full run.

A stopped run resumes where it was: ``mutmut run --max-children 2`` in its scratch copy
keeps every result of a function left unchanged (mutmut 3.8 can also stop on its own, a
KeyError in its worker pool: resume the same way); ``--collect`` then reads the results
again, keeping the kills ``--recheck`` already confirmed for the same mutants.
"""

from __future__ import annotations

import argparse
import difflib
import io
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
import tokenize
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
RUNS = REPO / "mutation-runs"
DOC = REPO / "docs" / "mutation.md"
COMMIT_FILE = ".mutation-commit"  # in a run's scratch copy: the commit it copied

sys.path.insert(0, str(Path(__file__).resolve().parent))
from mutation_explained import EXPLAINED  # noqa: E402

RUNTIME_TESTS = ("tests/runtime/test_iteration_helpers.py",
                 "tests/runtime/test_control_flow_errors.py",
                 "tests/runtime/test_control_flow_kernels.py",
                 "tests/runtime/test_runtime_control_flow.py",
                 "tests/runtime/test_loop_semantics.py",
                 "tests/runtime/test_runtime_loopgen.py",
                 "tests/runtime/test_runtime_declared.py")
# The translators of Loop, Scan and If (sequences appended in a Loop, zero-trip loops);
# the sliced-input tests add nothing here that the Loop tests do not.
CONVERT_TESTS = ("tests/frontends/onnx/test_convert_loop.py",
                 "tests/frontends/onnx/test_convert_scan.py",
                 "tests/frontends/onnx/test_convert_if.py",
                 "tests/frontends/onnx/test_convert_sequences.py",
                 "tests/frontends/onnx/test_zero_trip_loops.py")
# The sliced-input pass runs in every Loop conversion: its own tests, and the Loop and
# Scan tests (compared with onnxruntime) for loops it must leave alone.
SLICE_TESTS = ("tests/passes/test_slice_inputs.py", "tests/frontends/onnx/test_convert_loop.py",
               "tests/frontends/onnx/test_convert_scan.py")
# The generated Python loop: the runtime's Loop and TensorIterator tests (the slicing and
# stacking helpers' own tests do not reach it).
LOOPGEN_TESTS = ("tests/runtime/test_runtime_loopgen.py", "tests/runtime/test_loop_semantics.py",
                 "tests/runtime/test_runtime_control_flow.py",
                 "tests/runtime/test_control_flow_errors.py",
                 "tests/runtime/test_control_flow_kernels.py",
                 "tests/runtime/test_runtime_declared.py",
                 # the in-place writes (plan.Reuse) in loop bodies: what the loop keeps
                 "tests/runtime/test_runtime_inplace.py")
VALIDATE_TESTS = ("tests/validation/test_validate_rules.py", "tests/validation/test_validate.py")
IR_TESTS = ("tests/ir/test_ir_core.py", "tests/core/test_files.py", "tests/ir/test_builder.py",
            "tests/ir/test_canonical.py", "tests/ir/test_producer_fixtures.py")
# The reader's refusals of bad input are pinned in the validator's rule and hostile-file
# tests (lenient and strict), its IR v10/v11 reading by the schema and OpenVINO round trips.
READER_TESTS = (*IR_TESTS, "tests/ir/test_xml_reader.py", "tests/ir/test_schema.py",
                "tests/ir/test_round_trip_openvino_models.py",
                "tests/validation/test_validate_rules.py", "tests/validation/test_validate.py",
                "tests/cli/test_hostile_input.py")
# the writer's .bin: streamed from views, de-duplicated, external data and mmap'd Consts
WRITER_TESTS = (*IR_TESTS, "tests/ir/test_save_streaming.py",
                "tests/frontends/onnx/test_convert_weights.py",
                "tests/frontends/onnx/test_external_data.py")

# The loop facts: the vectoriser's and the sliced-input pass's proofs (trip count, purity,
# exact casts) and the converter's iteration-number slices (offset_from).
LOOP_FACTS_TESTS = ("tests/passes/test_loop_facts.py", "tests/passes/test_vectorize_soundness.py",
                    "tests/passes/test_vectorize.py", "tests/passes/test_slice_inputs.py",
                    "tests/frontends/onnx/test_iteration_slices.py")

# Sessions: the variables kept from step to step (against OpenVINO's infer request) and the
# random generators that move on from call to call.
SESSION_TESTS = ("tests/runtime/test_session.py", "tests/frontends/onnx/test_random_ops.py")


def _fixtures(*names: str) -> tuple[str, ...]:
    """The exported-model tests that run ``names`` with irtool's runtime (OpenVINO's runs
    of the same IR add nothing a converter mutant changes that irtool's would not show)."""
    return tuple("tests/frontends/onnx/test_exporter_fixtures.py::"
                 f"test_irtool_runtime_matches_onnxruntime[{name}]" for name in names)


@dataclass(frozen=True)
class Module:
    """A module to mutate and the test files that exercise it."""

    path: str
    tests: tuple[str, ...]

    @property
    def slug(self) -> str:
        return self.path.removeprefix("irtool/").removesuffix(".py").replace("/", ".")


# In the order the issue lists them; a partial run covers a prefix.
MODULES = (
    Module("irtool/runtime/control_flow.py", RUNTIME_TESTS),
    Module("irtool/runtime/codegen/loops.py", LOOPGEN_TESTS),
    Module("irtool/runtime/iteration.py", RUNTIME_TESTS),
    Module("irtool/frontends/onnx/control_flow.py", CONVERT_TESTS),
    Module("irtool/passes/slice_inputs.py", SLICE_TESTS),
    Module("irtool/validation/control_flow.py", VALIDATE_TESTS),
    Module("irtool/validation/structure.py", VALIDATE_TESTS),
    Module("irtool/ir/serde/xml_reader.py", READER_TESTS),
    Module("irtool/ir/serde/xml_writer.py", WRITER_TESTS),
    # Issue 21's modules never mutated before, in its order.
    Module("irtool/passes/loop_facts.py", LOOP_FACTS_TESTS),
    Module("irtool/passes/pool_fusion.py", ("tests/passes/test_pool_fusion.py",)),
    Module("irtool/runtime/session.py", SESSION_TESTS),
    Module("irtool/runtime/variables.py", SESSION_TESTS),
    Module("irtool/passes/decompression.py", ("tests/opset/test_low_precision.py",)),
    # Issue 21's modules not run yet (the next session's: the command in docs/mutation.md).
    # its own tests, and the runtime's batched forms (where they run, what they check)
    Module("irtool/passes/vectorize.py", ("tests/passes/test_vectorize.py",
                                          "tests/passes/test_vectorize_batcher.py",
                                          "tests/passes/test_vectorize_soundness.py",
                                          "tests/passes/test_vectorize_rules.py",
                                          "tests/passes/test_vectorize_proofs.py",
                                          "tests/runtime/test_control_flow_kernels.py")),
    # the plan's folding (pool fusion's file holds its tests), decompression chains, and
    # constant_value, which the ONNX If translator asks for a constant condition
    Module("irtool/passes/constant_folding.py", ("tests/passes/test_constant_folding.py",
                                                 "tests/passes/test_pool_fusion.py",
                                                 "tests/passes/test_pipelines.py",
                                                 "tests/opset/test_low_precision.py",
                                                 "tests/frontends/onnx/test_convert_if.py")),
    # sequences: its own tests, and the exported models built on Python lists (torch.jit
    # script: lists grown in a loop, stacked, concatenated ragged, nested), run by irtool
    Module("irtool/frontends/onnx/sequences.py",
           ("tests/frontends/onnx/test_convert_sequences.py",
            *_fixtures("ts_greedy_decode_eos_cat", "ts_greedy_decode_stack", "ts_list_stack_rnn",
                       "ts_map_loop_w16", "ts_nested_lists", "ts_ragged_cat",
                       "ts_ragged_cat_dynamic"))),
    # the tree ensembles: the ONNX-ML tests, and the exported LightGBM, XGBoost and
    # scikit-learn tree models run by irtool
    Module("irtool/frontends/onnx/ops/ml_trees.py",
           ("tests/frontends/onnx/test_onnx_ml.py", "tests/frontends/onnx/test_onnx_ml_trees.py",
            *_fixtures("lgbm_classifier", "lgbm_regressor", "skl_gradient_boosting_regressor",
                       "skl_random_forest_classifier", "xgb_classifier", "xgb_regressor"))),
)

# mutmut's exit codes of a mutant's test run, as in mutmut.stats.status_by_exit_code, but
# SIGBUS (-7, which mutmut calls suspicious) is a crash like SIGSEGV: a mutant that drops the
# writer's size check of a mapped weight file lets a test read past the file's end.
STATUS = {1: "killed", 3: "killed", 0: "survived", 5: "no tests", 33: "no tests",
          34: "skipped", 36: "timeout", -24: "timeout", 24: "timeout", 152: "timeout",
          255: "timeout", -11: "segfault", -9: "segfault", -7: "segfault",
          None: "not checked"}
NOT_KILLED = ("survived", "no tests", "suspicious", "not checked", "skipped")
COLUMNS = ("killed", "timeout", "segfault", "survived", "no tests", "suspicious",
           "not checked", "skipped")


def _config(module: Module) -> str:
    """The ``[tool.mutmut]`` table of one module's scratch copy."""
    tests = ", ".join(json.dumps(t) for t in module.tests)
    return ("[tool.mutmut]\n"
            'source_paths = ["irtool"]\n'
            f"only_mutate = [{json.dumps(module.path)}]\n"
            'also_copy = ["schemas", "samples", "docs"]\n'
            'pytest_add_cli_args = ["-p", "no:cacheprovider"]\n'
            f"pytest_add_cli_args_test_selection = [{tests}]\n"
            "use_git_change_detection = false\n")


def _scratch(module: Module, suffix: str = "", keep: bool = False) -> Path:
    """A fresh copy of the checked-in tree (plus uncommitted edits) for ``module``; with
    ``keep``, today's files copied over the run's scratch copy, its ``mutants/`` (the
    results so far) kept."""
    work = RUNS / (module.slug + suffix)
    if work.exists() and not keep:
        shutil.rmtree(work)
    files = subprocess.run(["git", "ls-files", "-co", "--exclude-standard"], cwd=REPO,
                           capture_output=True, text=True, check=True).stdout.split("\n")
    for name in filter(None, files):
        source = REPO / name
        if source.is_file():
            target = work / name
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target)
    pyproject = work / "pyproject.toml"
    text = pyproject.read_text(encoding="utf-8")
    # Replace the repository's [tool.mutmut] table with this module's.
    text = re.sub(r"\[tool\.mutmut\]\n.*?(?=\n\[)", _config(module).rstrip("\n"), text,
                  flags=re.S)
    pyproject.write_text(text, encoding="utf-8")
    return work


def _mutmut(work: Path, *args: str) -> subprocess.CompletedProcess[str]:
    mutmut = Path(sys.executable).with_name("mutmut")
    env = {**os.environ, "OMP_NUM_THREADS": "1", "PYTHONDONTWRITEBYTECODE": "1"}
    env.pop("CI", None)  # the fast tests only: slow ones would dominate every mutant
    return subprocess.run([str(mutmut), *args], cwd=work, capture_output=True, text=True,
                          env=env)


def run_module(module: Module, workers: int) -> dict:
    """Mutate ``module`` in a scratch copy; its mutants' statuses and the diffs of those
    no test killed."""
    start = time.monotonic()
    work = _scratch(module)
    (work / COMMIT_FILE).write_text(_commit(), encoding="utf-8")  # the tree mutated
    proc = _mutmut(work, "run", "--max-children", str(workers))
    meta = work / "mutants" / f"{module.path}.meta"
    if not meta.exists():
        raise SystemExit(f"mutmut run failed for {module.path}:\n{proc.stdout[-3000:]}\n"
                         f"{proc.stderr[-3000:]}")
    return collect(module, round(time.monotonic() - start))


def refresh_module(module: Module, workers: int) -> dict:
    """Bring ``module``'s stored run to today's tree: mutmut re-tests the mutants of the
    functions whose code changed since (it keeps the results of the others, as when a run
    resumes) and those it had not checked. A module never run gets a full run."""
    work = RUNS / module.slug
    if not (work / "mutants" / f"{module.path}.meta").exists():
        return run_module(module, workers)
    start = time.monotonic()
    _scratch(module, keep=True)
    (work / COMMIT_FILE).write_text(_commit(), encoding="utf-8")
    _mutmut(work, "run", "--max-children", str(workers))
    result = collect(module, resumed=True)
    result["seconds"] = round(time.monotonic() - start)
    result["refreshed"] = True
    (RUNS / f"{module.slug}.json").write_text(json.dumps(result, indent=1), encoding="utf-8")
    return result


def collect(module: Module, seconds: int | None = None, resumed: bool | None = None) -> dict:
    """The statuses of a (finished or stopped) run in ``mutation-runs/<module>/`` and the
    diffs of the mutants it did not catch; kept in ``mutation-runs/<module>.json``."""
    work = RUNS / module.slug
    meta = work / "mutants" / f"{module.path}.meta"
    codes = json.loads(meta.read_text(encoding="utf-8"))["exit_code_by_key"]
    statuses = {name: STATUS.get(code, "suspicious") for name, code in codes.items()}
    mutated = (work / "mutants" / module.path).read_text(encoding="utf-8")
    diffs = {name: _diff(mutated, name) for name, status in statuses.items()
             if status in NOT_KILLED and status != "not checked"}
    stopped = seconds is None if resumed is None else resumed
    if seconds is None:  # a stopped run: from its start to the last result written
        seconds = round(meta.stat().st_mtime - (work / "mutants").stat().st_ctime)
    stamp = work / COMMIT_FILE
    commit = stamp.read_text(encoding="utf-8") if stamp.exists() else _commit()
    # The tests the run was given, as _config wrote them (tomllib is Python 3.11+).
    given = re.search(r"^pytest_add_cli_args_test_selection = (\[.*?\])$",
                      (work / "pyproject.toml").read_text(encoding="utf-8"), re.M)
    tests = json.loads(given.group(1)) if given else list(module.tests)
    result = {"module": module.path, "tests": tests, "statuses": statuses,
              "diffs": diffs, "seconds": seconds, "commit": commit, "versions": _versions()}
    kept = RUNS / f"{module.slug}.json"
    if stopped and kept.exists():  # a resumed run collected again: confirmed kills stay
        before = json.loads(kept.read_text(encoding="utf-8"))
        killed = {name: test for name, test in before.get("killed_now", {}).items()
                  if before["diffs"].get(name) == diffs.get(name)}
        if killed:
            result["killed_now"] = killed
    RUNS.mkdir(exist_ok=True)
    kept.write_text(json.dumps(result, indent=1), encoding="utf-8")
    return result


def _function(mutated: str, name: str, signature: bool = False) -> list[str]:
    """The body lines of function ``name`` in mutmut's mutated module (no ``def`` line,
    unless ``signature``: then from the ``def`` on, named as in the source)."""
    found = re.search(rf"^([ \t]*)def {re.escape(name)}\(.*?(?=^\1(?:def |class |@)|^\S|\Z)",
                      mutated, re.S | re.M)
    if found is None:
        return []
    lines = found.group(0).strip("\n").splitlines()
    while lines and lines[-1].strip().startswith("#"):  # a comment heading what follows
        lines.pop()
        while lines and not lines[-1].strip():
            lines.pop()
    if signature:  # mutmut's x_f / xǁClassǁf, with __mutmut_<n>, is f in the source
        real = name.rsplit("__mutmut_", 1)[0].rpartition("ǁ")[2].removeprefix("x_")
        return [lines[0].replace(f"def {name}(", f"def {real}(", 1), *lines[1:]]
    body = next(k for k, line in enumerate(lines) if line.rstrip().endswith(":")) + 1
    return lines[body:]


def _diff(mutated: str, mutant: str) -> str:
    """A unified diff of the mutant's function against the original (mutmut keeps both
    in the mutated module, as ``<name>__mutmut_orig`` and ``<name>__mutmut_<n>``); of the
    whole function, signature included, when the body is the same (a default changed)."""
    function = mutant.rpartition(".")[2]
    original = function.rsplit("__mutmut_", 1)[0] + "__mutmut_orig"
    for signature in (False, True):
        diff = "\n".join(difflib.unified_diff(_function(mutated, original, signature),
                                               _function(mutated, function, signature),
                                               lineterm=""))
        if any(line[:1] in "+-" and line[:3] not in ("+++", "---")
               for line in diff.splitlines()):
            break
    return diff


def apply_diff(source: str, diff: str) -> str | None:
    """``source`` with the mutant of ``diff`` (mutmut's unified diff of one function)
    applied, or None when its lines are not found exactly once. When the code around the
    mutated lines changed since the run, less of the diff's context is asked for (the
    changed lines themselves must still be there, and found once)."""
    tagged = [(line[:1], line[1:]) for line in _trim(diff) if not line.startswith("@@")]
    changed = [k for k, (tag, _) in enumerate(tagged) if tag in "-+"]
    if not changed:
        return None
    first, last = changed[0], changed[-1]
    options = sorted(((b, a) for b in range(first + 1) for a in range(len(tagged) - last)),
                     key=lambda ba: -(ba[0] + ba[1]))
    for b, a in options:  # the most context first
        part = tagged[first - b:last + 1 + a]
        old = [text for tag, text in part if tag in " -"]
        new = [text for tag, text in part if tag in " +"]
        for indent in ("", "    ", "        "):  # methods come dedented from their class
            before = "\n".join(indent + t if t else t for t in old)
            if source.count(before) == 1:
                return source.replace(before, "\n".join(indent + t if t else t for t in new))
    return None


def recheck(module: Module, result: dict, tests: list[str] | None = None) -> dict[str, str]:
    """Each mutant of ``result`` that no test caught, applied to a copy of today's tree
    and run against the module's tests (they may have grown since): ``{mutant: the first
    test that fails}`` for those now killed."""
    work = _scratch(module, ".recheck")
    target = work / module.path
    original = target.read_text(encoding="utf-8")
    env = {**os.environ, "OMP_NUM_THREADS": "1", "PYTHONPATH": str(work),
           "PYTHONDONTWRITEBYTECODE": "1"}
    env.pop("CI", None)
    killed = dict(result.get("killed_now", {}))  # a recheck adds to the one before
    for name, diff in sorted(result["diffs"].items(), key=lambda kv: _mutant_order(kv[0])):
        if name in killed or explanation(name, diff) is not None:
            continue
        mutated = apply_diff(original, diff)
        if mutated is None:
            print(f"  {name}: cannot apply its diff", flush=True)
            continue
        target.write_text(mutated, encoding="utf-8")
        proc = subprocess.run([sys.executable, "-m", "pytest", "-x", "-q", "-p",
                               "no:cacheprovider", *(tests or module.tests)], cwd=work,
                              capture_output=True, text=True, env=env)
        failed = re.search(r"^FAILED (.+?)(?: - |$)", proc.stdout, re.M)
        if proc.returncode == 1 and failed:
            killed[name] = failed.group(1)
        print(f"  {name}: {killed.get(name, 'survives')}", flush=True)
    target.write_text(original, encoding="utf-8")
    shutil.rmtree(work)
    return killed


def recheck_in_process(module: Module, result: dict, tests: list[str] | None = None,
                       select: str | None = None) -> dict[str, str]:
    """``recheck`` in one pytest session of this process, for when a session per mutant is too
    slow: each mutant's function (from today's source with the mutant's diff applied)
    replaces the original while the tests (``-k select``) run, wherever irtool holds it (the
    module, modules that imported it by name, module-level tables such as a rule dict), and
    the original is put back after; what the mutated module registers when it runs (ONNX
    translators, ops) replaces the originals in their registries until then. Kills need
    confirming with a session per mutant: in this one session a test can fail after earlier
    swaps for reasons of its own (five of the reader's survivors were "killed" by
    test_ir_core's loop11 round trip here, and each passed it in a session of its own). Not
    for the IR writer: a mutant that writes a .bin some test has mapped takes the whole
    session down (SIGBUS); recheck it with a session per mutant."""
    import importlib

    import pytest
    from _pytest.runner import runtestprotocol

    modname = module.path.removesuffix(".py").replace("/", ".")
    target = importlib.import_module(modname)
    source = (REPO / module.path).read_text(encoding="utf-8")
    killed = dict(result.get("killed_now", {}))
    todo = [(name, diff) for name, diff in sorted(result["diffs"].items(),
                                                  key=lambda kv: _mutant_order(kv[0]))
            if name not in killed and explanation(name, diff) is None]

    from irtool.core.registry import Registry

    def registries() -> list[Registry]:
        return [value for mod in list(sys.modules.values())
                if getattr(mod, "__name__", "").startswith("irtool")
                for value in list(vars(mod).values()) if isinstance(value, Registry)]

    def swap(name: str, namespace: dict) -> list[tuple[object, str, object]]:
        """Put the mutant's function (from ``namespace``) in place of the original wherever
        irtool holds it; what to put back. mutmut names a function ``f`` ``x_f``, a method
        ``xǁClassǁf``."""
        base = name.rpartition(".")[2].rsplit("__mutmut_", 1)[0]
        if base.startswith("xǁ"):
            _, cls, attr = base.split("ǁ")
            owner, new = getattr(target, cls), namespace[cls].__dict__[attr]
            old = owner.__dict__[attr]
            setattr(owner, attr, new)
            return [(owner, attr, old)]
        attr = base.removeprefix("x_")
        new, old = namespace[attr], getattr(target, attr)
        swapped: list[tuple[object, str, object]] = []
        for mod in list(sys.modules.values()):
            if not getattr(mod, "__name__", "").startswith("irtool"):
                continue
            if vars(mod).get(attr) is old:  # the module, and imports by name
                swapped.append((mod, attr, old))
                setattr(mod, attr, new)
            for table in list(vars(mod).values()):  # e.g. a dict of rules
                if isinstance(table, dict):
                    for key, value in list(table.items()):
                        if value is old:
                            swapped.append((table, key, old))
                            table[key] = new
        return swapped

    def put_back(swapped: list[tuple[object, str, object]]) -> None:
        for owner, key, old in swapped:
            if isinstance(owner, dict):
                owner[key] = old
            else:
                setattr(owner, key, old)

    class Plugin:
        @staticmethod
        def pytest_runtestloop(session: pytest.Session) -> bool:
            items = session.items
            for name, diff in todo:
                mutated = apply_diff(source, diff)
                if mutated is None:
                    print(f"  {name}: cannot apply its diff", flush=True)
                    continue
                namespace = {"__name__": modname, "__package__": modname.rpartition(".")[0]}
                tables = registries()
                saved = [{key: dict(versions) for key, versions in r._items.items()}
                         for r in tables]
                add = Registry.add  # the mutated module registers again: replace, not refuse
                Registry.add = lambda r, key, version, item: r._items.setdefault(  # type: ignore[method-assign]
                    key, {}).__setitem__(version, item)
                try:
                    exec(compile(mutated, str(REPO / module.path), "exec"), namespace)
                finally:
                    Registry.add = add  # type: ignore[method-assign]
                swapped = swap(name, namespace)
                # A mutant that loops forever (mutmut's timeout): the alarm fails the test.
                signal.signal(signal.SIGALRM, _too_long)
                signal.alarm(IN_PROCESS_LIMIT)
                try:
                    for k, item in enumerate(items):
                        after = items[k + 1] if k + 1 < len(items) else items[0]
                        reports = runtestprotocol(item, nextitem=after, log=False)
                        if any(r.failed for r in reports):
                            killed[name] = item.nodeid
                            # Torn down as if items[k + 1] came next; the next mutant
                            # starts at items[0], whose setup would otherwise fail (and
                            # count as a kill) on the fixtures left set up.
                            session._setupstate.teardown_exact(items[0])
                            break
                finally:
                    signal.alarm(0)
                    put_back(swapped)
                    for r, items_before in zip(tables, saved):
                        r._items.clear()
                        r._items.update(items_before)
                print(f"  {name}: {killed.get(name, 'survives')}", flush=True)
            return True

    args = ["-q", "-p", "no:cacheprovider", *(tests or module.tests)]
    if select:
        args += ["-k", select]
    env_ci = os.environ.pop("CI", None)
    try:
        pytest.main(args, plugins=[Plugin()])
    finally:
        if env_ci is not None:
            os.environ["CI"] = env_ci
    return killed


IN_PROCESS_LIMIT = 120  # seconds of tests per mutant in recheck_in_process


def _too_long(signum: int, frame: object) -> None:
    raise TimeoutError(f"the tests ran past {IN_PROCESS_LIMIT} s on this mutant")


def _commit() -> str:
    head = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=REPO,
                          capture_output=True, text=True).stdout.strip()
    dirty = subprocess.run(["git", "status", "--porcelain", "--", "irtool", "tests"], cwd=REPO,
                           capture_output=True, text=True).stdout.strip()
    return head + ("+edits" if dirty else "")


def _versions() -> str:
    return ", ".join(f"{p} {metadata.version(p)}" for p in ("mutmut", "pytest", "numpy",
                                                         "onnx", "openvino"))


WORDING = ("message wording only: the mutant changes the prose of a message (mutmut's "
           "XX-wrapping or case change of a string with a space in it); the rule code, "
           "layer, line and the facts the message names are unchanged and are what the tests "
           "pin, the prose is not pinned")


def _tokens(line: str) -> list[tuple[int, str]]:
    """Python's tokens of one line of code (a line of a longer statement may leave brackets
    open: the tokens up to there)."""
    found: list[tuple[int, str]] = []
    try:
        for tok in tokenize.generate_tokens(io.StringIO(line.strip() + "\n").readline):
            found.append((tok.type, tok.string))
    except (tokenize.TokenError, SyntaxError, IndentationError):
        pass
    return found


def _prose(before: str, after: str) -> bool:
    """Whether string token ``after`` is mutmut's rewording of the prose ``before``."""
    if before[:1] not in "\"'" or " " not in before or before[1:].lstrip().startswith("<"):
        return False  # prefixed (bytes, f-string, raw), no space (a key or code), or XML
    quote, text = before[0], before[1:-1]
    return after in (f"{quote}XX{text}XX{quote}", quote + text.lower() + quote,
                     quote + text.upper() + quote)


def _wording_only(diff: str) -> bool:
    """Whether the mutant of ``diff`` only rewrites prose: each changed line differs from
    the original only in plain string literals holding a space (message text, never a key,
    a code or XML), each XX-wrapped, lower- or upper-cased by mutmut."""
    lines = _trim(diff)
    old = [line[1:] for line in lines if line.startswith("-")]
    new = [line[1:] for line in lines if line.startswith("+")]
    if not old or len(old) != len(new):
        return False
    for before, after in zip(old, new):
        a, b = _tokens(before), _tokens(after)
        if not a or len(a) != len(b):
            return False
        for (kind_a, x), (kind_b, y) in zip(a, b):
            if x != y and not (kind_a == kind_b == tokenize.STRING and _prose(x, y)):
                return False
    return True


def explanation(name: str, diff: str) -> str | None:
    """Why the surviving mutant ``name`` is not killed: equivalent, when EXPLAINED says so
    and the mutated line it names is still in the diff (else the note is stale), or a
    change of message prose only (``_wording_only``)."""
    note = EXPLAINED.get(name)
    if note is None:
        return WORDING if _wording_only(diff) else None
    changed = [line[1:].strip() for line in diff.splitlines()
               if line.startswith("+") and not line.startswith("+++")]
    if not any(note.line in line for line in changed):
        return None
    return note.why


def report(results: dict[str, dict]) -> tuple[str, int]:
    """docs/mutation.md's text, and how many survivors are unexplained."""
    lines = [
        "# Mutation testing of the semantic core",
        "",
        "Generated by `nice -n 10 python bench/mutation.py` (mutmut 3, the `mutation` extra; "
        "not run in CI: too slow); do not edit by hand. Each module is mutated on its own "
        "against the test files listed with it, and mutmut runs for each mutant only those "
        "tests that reach the mutated function. A mutant is *killed* when a test fails, "
        "*timeout* when the tests run past mutmut's limit (an endless loop, counted as "
        "caught), *segfault* when the test process dies of a signal (SIGSEGV, SIGBUS, "
        "SIGKILL: the tests crash on the mutant, counted as caught), *survived* when they "
        "all pass, *no tests* when none of the listed tests "
        "reaches the function, *not checked* when the run was stopped before mutmut got to "
        "it (a partial run: mutmut tries the mutants with the fastest tests first). Score = "
        "(killed + timeout + segfault) / mutants checked.",
        "",
        "Every mutant not caught is listed below with its diff and either the test that now "
        "kills it (added after the run; re-running the module shows it killed), why it is "
        "equivalent (no input can tell it from the original) or, marked *not equivalent*, "
        "why no test pins it (the notes are in `bench/mutation_explained.py`), or that it "
        "only rewords a message (*message wording only*: mutmut's XX-wrapping or case "
        "change of a string with a space in it, where the rule code, line and the facts "
        "named are pinned, the prose is not).",
        "",
        "## Score per module",
        "",
        "| module | mutants | " + " | ".join(COLUMNS) +
        " | score | not caught, killed since | minutes | commit |",
        "|---|---:|" + "---:|" * len(COLUMNS) + "---:|---:|---:|---|",
    ]
    unexplained = 0
    sections = []
    kept_rows, kept_sections, kept_versions = _kept(results)
    for module in MODULES:
        result = results.get(module.path)
        if result is None and module.path in kept_rows:
            lines.append(kept_rows[module.path])
            sections += kept_sections[module.path]
            unexplained += sum("**UNEXPLAINED**" in line for line in kept_sections[module.path])
            continue
        if result is None:
            lines.append(f"| `{module.path}` | not run |" + " |" * (len(COLUMNS) + 4))
            continue
        statuses = result["statuses"]
        counts = {c: sum(1 for s in statuses.values() if s == c) for c in COLUMNS}
        total = len(statuses)
        caught = counts["killed"] + counts["timeout"] + counts["segfault"]
        checked = total - counts["not checked"]
        score = f"{100 * caught / checked:.1f}%" if checked else "-"
        lines.append(f"| `{module.path}` | {total} | " +
                     " | ".join(str(counts[c]) for c in COLUMNS) +
                     f" | {score} | {len(result.get('killed_now', {}))} of "
                     f"{len(result['diffs'])} | {result['seconds'] / 60:.0f} | "
                     f"{result['commit']} |")
        body = [f"### `{module.path}`", "",
                "Tests: " + ", ".join(f"`{t}`" for t in result["tests"]) + ".", ""]
        survivors = sorted(result["diffs"], key=_mutant_order)
        if not survivors:
            body.append("Every mutant caught.")
        for name in survivors:
            diff = result["diffs"][name]
            why = explanation(name, diff)
            status = statuses[name]
            killer = result.get("killed_now", {}).get(name)
            if killer is not None:
                why = f"killed now by `{killer}` (the mutant re-applied to today's tree)"
            if why is None:
                unexplained += 1
                why = "**UNEXPLAINED**: no test kills it and no note says why it is equivalent."
            body += [f"- `{name}` ({status}): {why}", "", "  ```diff",
                     *[f"  {line}" for line in _trim(diff)], "  ```", ""]
        sections += [*body, ""]
    run = [r for r in results.values()]
    versions = sorted({r["versions"] for r in run} | kept_versions)
    missing = [m.path for m in MODULES if m.path not in results and m.path not in kept_rows]
    stopped = [r["module"] for r in run if "not checked" in r["statuses"].values()]
    status = []
    if stopped:
        status.append("Stopped before the end (partial, see *not checked*): "
                      + ", ".join(f"`{p}`" for p in stopped) + ".")
    if missing:
        status.append("Not run yet: " + ", ".join(f"`{p}`" for p in missing)
                      + " (`python bench/mutation.py --module <path>` runs one).")
    lines += ["", *status, "", "Installed: " + "; ".join(versions) + "." if versions else "",
              "", "## Mutants not caught", "", *sections]
    return "\n".join(lines).rstrip() + "\n", unexplained


def _kept(results: dict[str, dict]) -> tuple[dict[str, str], dict[str, list[str]], set[str]]:
    """The rows and sections of today's docs/mutation.md for the modules of ``MODULES`` with
    no run in ``results`` (``mutation-runs/`` is git-ignored: another checkout ran them), and
    the versions its runs were made with, so that a report of new runs keeps the old ones.
    A module the report lists as not run is not kept."""
    if not DOC.exists():
        return {}, {}, set()
    text = DOC.read_text(encoding="utf-8").splitlines()
    wanted = {m.path for m in MODULES if m.path not in results}
    rows = {path: line for line in text for path in wanted
            if line.startswith(f"| `{path}` | ") and " | not run |" not in line}
    sections: dict[str, list[str]] = {}
    current: str | None = None
    for line in text:
        heading = re.fullmatch(r"### `(.+)`", line)
        if heading is not None or line.startswith("## "):
            current = heading.group(1) if heading is not None else None
        if current in rows:
            sections.setdefault(current, []).append(line)
    versions: set[str] = set()
    if rows:
        for line in text:
            if line.startswith("Installed: "):
                versions = set(line.removeprefix("Installed: ").rstrip(".").split("; "))
    for path in rows:  # the file's last section lost the blank lines report() ends one with
        body = sections.setdefault(path, [])
        if body and body[-1]:
            body += ["", ""] if body[-1].strip() == "```" else [""]
    return rows, {path: sections[path] for path in rows}, versions


def _mutant_order(name: str) -> tuple[str, int]:
    base, _, number = name.rpartition("__mutmut_")
    return base, int(number) if number.isdigit() else 0


def _trim(diff: str) -> list[str]:
    """The hunk lines of a unified diff, without its file header."""
    return [line for line in diff.splitlines() if not line.startswith(("---", "+++"))]


def load_results() -> dict[str, dict]:
    results = {}
    for module in MODULES:
        path = RUNS / f"{module.slug}.json"
        if path.exists():
            results[module.path] = json.loads(path.read_text(encoding="utf-8"))
            stamp = RUNS / module.slug / COMMIT_FILE
            # The tree the run copied, whatever rewrote the json since; not the stamp of a
            # new run still going (newer than the json, which holds the run before).
            if stamp.exists() and stamp.stat().st_mtime <= path.stat().st_mtime:
                results[module.path]["commit"] = stamp.read_text(encoding="utf-8")
    return results


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--module", action="append", default=[],
                        help="a module path or slug (e.g. runtime.iteration); repeatable; "
                             "default: all, in order")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--refresh", action="store_true",
                        help="re-test only the mutants of functions changed since the stored "
                             "run of --module (and those not checked), keeping the rest")
    parser.add_argument("--collect", action="store_true",
                        help="read the results of a stopped run of --module (mutmut killed)")
    parser.add_argument("--recheck", action="store_true",
                        help="re-apply each stored survivor to today's tree and run the "
                             "module's tests (after adding tests that kill survivors)")
    parser.add_argument("--tests", nargs="+",
                        help="with --recheck: run these test files instead of the module's")
    parser.add_argument("--in-process", metavar="SELECT", nargs="?", const="",
                        help="with --recheck: one pytest session in this process for all "
                             "mutants (recheck_in_process), optionally only the tests "
                             "pytest -k SELECT picks")
    parser.add_argument("--report", action="store_true",
                        help="only rewrite docs/mutation.md from the runs so far")
    args = parser.parse_args(argv)
    known = {m.path: m for m in MODULES} | {m.slug: m for m in MODULES}
    unknown = [m for m in args.module if m not in known]
    if unknown:
        parser.error(f"unknown module {unknown[0]}; one of: "
                     + ", ".join(m.slug for m in MODULES))
    chosen = [known[m] for m in args.module] or list(MODULES)
    if args.collect:
        for module in chosen:
            collect(module)
    elif args.recheck:
        stored = load_results()
        for module in chosen:
            if module.path in stored:
                result = stored[module.path]
                if args.in_process is not None:
                    result["killed_now"] = recheck_in_process(module, result, args.tests,
                                                              args.in_process or None)
                else:
                    result["killed_now"] = recheck(module, result, args.tests)
                result["rechecked"] = _commit()
                (RUNS / f"{module.slug}.json").write_text(json.dumps(result, indent=1),
                                                          encoding="utf-8")
    elif not args.report:
        for module in chosen:
            result = (refresh_module if args.refresh else run_module)(module, args.workers)
            statuses = result["statuses"]
            caught = sum(1 for s in statuses.values() if s in ("killed", "timeout", "segfault"))
            print(f"{module.path}: {caught} of {len(statuses)} caught, "
                  f"{len(result['diffs'])} not, in {result['seconds']} s", flush=True)
    text, unexplained = report(load_results())
    DOC.write_text(text, encoding="utf-8")
    print(f"wrote {DOC.relative_to(REPO)}; {unexplained} unexplained survivors")
    return 1 if unexplained else 0


if __name__ == "__main__":
    sys.exit(main())
