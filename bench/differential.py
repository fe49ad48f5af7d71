"""Differential testing at length: generated Loop/Scan/If models, every irtool form against
onnxruntime (issue 21).

    python bench/differential.py [--count N] [--seed S] [--jobs K] [--out DIR]
                                 [--exclude CONSTRUCT ...] [--shrink-budget B]
    python bench/differential.py --seed S --case K      # one case, told in full

Case K of seed S is the model ``tests/support/differential/generate.py`` makes from a
``random.Random`` seeded with (S, K); every form of ``FORMS`` (``.../forms.py``) runs it
and gets a verdict: agree / differ / unsettled (differs only where onnxruntime and
OpenVINO's own ONNX frontend disagree, or the frontend cannot run it) / refused (a clean
one-line refusal of the converter) / error / engine-error (OpenVINO failed on irtool's IR).
Cases run in worker processes (``irtool.core.workers``), onnxruntime and OpenVINO in a child of
each (``irtool.engines.isolate``), so a crash of either is an outcome.

Prints the counts per form, then one line per saved reproducer. Each case with a verdict
in ``--save`` (default: differ, error, engine-error) is shrunk (its choice sequence replayed
shorter and smaller while the same form keeps the same verdict, ``shrink.py``) and saved in
``--out/<verdict>-<form>-s<S>-<K>/``: model.onnx, inputs.npz, description.txt (one line:
what differs, the model's control flow, how to rerun it), choices.json, verdicts.json.
Exit status 1 when any form ``differ``s or fails with an ``error`` (the claim broken).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
import time
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))  # the generator and the forms: tests/support/

DEFAULT_SAVE = ("differ", "error", "engine-error")


def case_seed(seed: int, index: int) -> int:
    return seed * 1_000_003 + index


def run_case(seed: int, index: int, options: dict[str, Any]) -> dict[str, Any]:
    """Generate case ``index`` of ``seed``, judge every form, save and shrink what fails."""
    import numpy as np  # noqa: F401  (loaded before the generator asks)
    from support.differential.forms import FORMS, evaluate
    from support.differential.generate import GeneratorBug, generate
    from support.differential.shrink import RecordingChooser

    exclude = frozenset(options["exclude"])
    chooser = RecordingChooser(case_seed(seed, index))
    result: dict[str, Any] = {"index": index}
    try:
        case = generate(chooser, exclude)
    except GeneratorBug as err:
        result["generator_bug"] = str(err).splitlines()[0][:300]
        return result
    forms = [f for f in FORMS if not options["forms"] or f.name in options["forms"]]
    evaluation = evaluate(case, forms)
    result.update(summary=case.summary, tags=sorted(case.tags), reference=evaluation.reference,
                  arbiter=evaluation.arbiter,
                  verdicts={v.form: [v.kind, v.detail[:400]] for v in evaluation.verdicts})
    saving = [v for v in evaluation.verdicts if v.kind in options["save"]]
    if saving and options["out"]:
        first = saving[0]
        form = next(f for f in forms if f.name == first.form)
        result["saved"] = save_reproducer(seed, index, chooser.choices, exclude, form,
                                          first.kind, first.detail, evaluation, options)
    return result


def signature(kind: str, detail: str) -> str:
    """What must stay the same while a failure shrinks: the verdict, and for failures with
    a message its first words with names and numbers blotted out."""
    if kind in ("differ", "unsettled"):
        return kind
    return kind + ":" + re.sub(r"[\w/.-]*\d[\w/.-]*|'[^']*'|\"[^\"]*\"", "#", detail)[:60]


def save_reproducer(seed: int, index: int, choices: list[int], exclude: frozenset[str],
                    form: Any, kind: str, detail: str, evaluation: Any,
                    options: dict[str, Any]) -> str:
    """Shrink the case while ``form`` keeps its verdict; write the files; the folder."""
    import numpy as np
    import onnx
    from support.differential.forms import FORMS, evaluate
    from support.differential.generate import GeneratorBug, generate
    from support.differential.shrink import ReplayChooser, shrink

    wanted = signature(kind, detail)

    def still_fails(candidate: list[int]) -> bool:
        try:
            case = generate(ReplayChooser(candidate), exclude)
        except GeneratorBug:
            return False
        verdict = evaluate(case, [form]).verdict(form.name)
        return verdict is not None and signature(verdict.kind, verdict.detail) == wanted

    budget = options["shrink_budget"]
    small, tries = shrink(choices, still_fails, budget) if budget else (list(choices), 0)
    case = generate(ReplayChooser(small), exclude)
    shrunk = evaluate(case, FORMS)
    final = shrunk.verdict(form.name)
    folder = Path(options["out"]) / f"{kind}-{form.name.replace(':', '_')}-s{seed}-{index}"
    folder.mkdir(parents=True, exist_ok=True)
    onnx.save(case.model, str(folder / "model.onnx"))
    np.savez(folder / "inputs.npz", **case.feed)
    failing = [v.form for v in evaluation.verdicts if v.kind == kind]
    shown = final.detail if final is not None else detail
    by = f" (settled by {final.settled_by})" if final is not None and final.settled_by else ""
    line = (f"{form.name} {kind}{by}: {shown[:300]} | {case.summary} | tags "
            f"{','.join(sorted(case.tags)) or '-'} | unshrunk also {kind} in "
            f"{','.join(failing)} | rerun: python bench/differential.py --seed {seed} "
            f"--case {index}")
    (folder / "description.txt").write_text(line.replace("\n", " ") + "\n")
    (folder / "choices.json").write_text(json.dumps({"seed": seed, "index": index,
                                                     "shrunk_in_tries": tries,
                                                     "exclude": sorted(exclude),
                                                     "choices": small}))
    (folder / "verdicts.json").write_text(json.dumps(
        {name: {"reference": e.reference, "arbiter": e.arbiter,
                "unsettled_outputs": e.unsettled_outputs,
                "verdicts": {v.form: [v.kind, v.settled_by, v.detail] for v in e.verdicts}}
         for name, e in (("shrunk", shrunk), ("unshrunk", evaluation))}, indent=1))
    return str(folder)


# -- the worker -------------------------------------------------------------------------------


def serve() -> int:
    from irtool.core.workers import serve as serve_jobs

    def handle(job: tuple[int, int, dict[str, Any]]) -> dict[str, Any]:
        seed, index, options = job
        return run_case(seed, index, options)

    def warm_up() -> None:
        from support.differential import forms  # noqa: F401

        import irtool.frontends.onnx  # noqa: F401  (the first case should not pay for the imports)

    return serve_jobs(handle, setup=warm_up)


# -- the parent -------------------------------------------------------------------------------


def run(args: argparse.Namespace) -> int:
    from support.differential.forms import FORMS, VERDICTS

    from irtool.core.workers import Pool

    options = {"exclude": args.exclude or [], "save": args.save, "out": str(args.out),
               "shrink_budget": args.shrink_budget, "forms": args.form or []}
    forms = [f.name for f in FORMS if not options["forms"] or f.name in options["forms"]]
    jobs = [(args.seed, index, options) for index in range(args.start, args.start + args.count)]
    counts: dict[str, Counter] = defaultdict(Counter)
    cases: Counter = Counter()
    problems: Counter = Counter()
    examples: dict[str, int] = {}
    saved: list[str] = []
    tag_failures: Counter = Counter()
    frontend_ran: Counter = Counter()
    started = time.monotonic()

    def note(what: str, reason: str, index: int) -> None:
        reason = re.sub(r"\S+\.xml: ", "", reason)  # the temporary IR's path
        key = f"{what}: {re.sub(r'[0-9]+', '#', reason)[:150]}"
        problems[key] += 1
        examples.setdefault(key, index)

    def on_outcome(outcome: Any) -> None:
        _, index, _ = outcome.job
        cases["done"] += 1
        if not outcome.ok:
            cases["case lost"] += 1
            note("case lost", f"{outcome.status} {outcome.reason}", index)
        else:
            result = outcome.value
            if result.get("generator_bug"):
                cases["generator bug"] += 1
                note("generator bug", result["generator_bug"], index)
            elif result.get("reference"):
                cases["onnxruntime failed"] += 1
                note("onnxruntime failed", result["reference"], index)
            else:
                cases["judged"] += 1
                if result.get("arbiter"):
                    cases["frontend failed"] += 1
                for form, (kind, detail) in result["verdicts"].items():
                    counts[form][kind] += 1
                    if kind in ("differ", "error"):
                        for tag in result["tags"]:
                            tag_failures[(form, tag)] += 1
                    if kind in ("error", "engine-error"):
                        note(f"{form} {kind}", detail, index)
                    if kind == "engine-error" and not result.get("arbiter"):
                        # OpenVINO ran its own conversion but not irtool's IR: the IR's form
                        frontend_ran[form] += 1
                        examples.setdefault(f"frontend ran: {form}", index)
                if result.get("saved"):
                    saved.append(result["saved"])
        if cases["done"] % 100 == 0:
            print(f"... {cases['done']}/{len(jobs)} cases, {time.monotonic() - started:.0f} s",
                  file=sys.stderr, flush=True)

    env = {"PYTHONPATH": os.pathsep.join([str(ROOT / "bench"), str(ROOT / "tests"),
                                          os.environ.get("PYTHONPATH", "")]),
           "OMP_NUM_THREADS": "1"}
    with Pool("differential", ["--serve"], workers=args.jobs, timeout=args.timeout, env=env,
              jobs_per_worker=100, name="the differential workers") as pool:
        pool.run(jobs, on_outcome)

    print(f"irtool differential: seed {args.seed}, cases {args.start}.."
          f"{args.start + args.count - 1}, {time.monotonic() - started:.0f} s, "
          f"{args.jobs} worker(s)")
    print(f"cases judged {cases['judged']} (OpenVINO's frontend could not run "
          f"{cases['frontend failed']} of them: their differences are unsettled); "
          f"onnxruntime failed on {cases['onnxruntime failed']}; generator bugs "
          f"{cases['generator bug']}; lost (worker crashed or timed out) {cases['case lost']}")
    print(format_table(forms, counts, VERDICTS))
    if frontend_ran:
        print("\nengine-errors where OpenVINO's own conversion ran (form: cases, first case): "
              + ", ".join(f"{form}: {n} (#{examples[f'frontend ran: {form}']})"
                          for form, n in sorted(frontend_ran.items())))
    if problems:
        print("\nfailures by reason (first case):")
        for key, n in problems.most_common(40):
            print(f"  {n:5}  #{examples[key]}  {key}")
    if tag_failures:
        print("\nconstructs in the cases that differ or fail (form, construct, cases):")
        for (form, tag), n in tag_failures.most_common(20):
            print(f"  {form:24} {tag:28} {n}")
    if saved:
        print(f"\n{len(saved)} reproducer(s) in {args.out}:")
        for folder in sorted(saved):
            text = (Path(folder) / "description.txt").read_text().strip()
            print(f"  {Path(folder).name}: {text[:400]}")
    bad = sum(counts[f]["differ"] + counts[f]["error"] for f in forms)
    return 1 if bad else 0


def format_table(forms: list[str], counts: dict[str, Counter], verdicts: tuple[str, ...]) -> str:
    """A Markdown table: one row per form, one column per verdict."""
    lines = ["| form | " + " | ".join(verdicts) + " |",
             "|---|" + "---:|" * len(verdicts)]
    for form in forms:
        lines.append(f"| {form} | " + " | ".join(str(counts[form][v]) for v in verdicts) + " |")
    return "\n".join(lines)


def one_case(args: argparse.Namespace) -> int:
    """``--case K``: the case in this process, its model and every verdict printed."""
    import onnx
    from support.differential.forms import FORMS, evaluate
    from support.differential.generate import generate
    from support.differential.shrink import RecordingChooser, ReplayChooser

    if args.choices:
        data = json.loads(Path(args.choices).read_text())
        case = generate(ReplayChooser(data["choices"]), frozenset(data.get("exclude", [])))
    else:
        case = generate(RecordingChooser(case_seed(args.seed, args.case)),
                        frozenset(args.exclude or []))
    print(case.summary, "| tags:", ", ".join(sorted(case.tags)))
    print(onnx.printer.to_text(case.model))
    forms = [f for f in FORMS if not args.form or f.name in args.form]
    keep = Path(args.out) / f"case-s{args.seed}-{args.case}" if args.keep else None
    evaluation = evaluate(case, forms, workdir=keep)
    print(f"onnxruntime: {evaluation.reference or 'ran'}; OpenVINO's frontend: "
          f"{evaluation.arbiter or 'ran'}; unsettled outputs: {evaluation.unsettled_outputs}")
    for v in evaluation.verdicts:
        print(f"  {v.form:24} {v.kind:12} {v.detail}")
    if keep:
        print(f"files kept in {keep}")
    return 1 if evaluation.failures() else 0


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["--serve"]:
        return serve()
    from support.differential.generate import CONSTRUCTS

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--count", type=int, default=1000, help="cases (default 1000)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--start", type=int, default=0, help="first case number")
    parser.add_argument("--jobs", type=int, default=2, help="worker processes (default 2)")
    parser.add_argument("--out", type=Path, default=Path("differential-out"),
                        help="where reproducers go (default ./differential-out)")
    parser.add_argument("--exclude", action="append", choices=sorted(CONSTRUCTS),
                        help="leave a construct out (repeatable)")
    parser.add_argument("--form", action="append", help="only this form (repeatable)")
    parser.add_argument("--save", type=lambda s: tuple(s.split(",")), default=DEFAULT_SAVE,
                        help="verdicts whose cases are shrunk and saved (comma-separated; "
                             "default differ,error,engine-error)")
    parser.add_argument("--shrink-budget", type=int, default=150,
                        help="evaluations spent shrinking one case (0: save it as is)")
    parser.add_argument("--timeout", type=float, default=1800.0,
                        help="seconds one case (with its shrinking) may take")
    parser.add_argument("--case", type=int, help="run case K alone, in this process")
    parser.add_argument("--choices", help="with --case: replay a saved choices.json")
    parser.add_argument("--keep", action="store_true", help="with --case: keep its files")
    args = parser.parse_args(argv)
    if args.case is not None:
        return one_case(args)
    return run(args)


if __name__ == "__main__":
    sys.exit(main())
