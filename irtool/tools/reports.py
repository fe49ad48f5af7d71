"""The report of a batch, in the format a CI or a code-review tool reads.

- ``text``: a line per finding in the compiler convention (``Diagnostic.format``:
  ``file:line: error: CODE layer <id> "<name>": message``), which editors and CI log
  parsers jump from; ``check`` and ``convert`` add a line per model that passed;
- ``json``: ``{"summary": {...}, "files": [{"file", "valid" (``ok`` for check and
  convert), "status", "errors", "warnings", "baselined", "seconds", "diagnostics"}]}``;
- ``junit``: JUnit XML, one ``testcase`` per model, a ``failure`` per finding that fails
  the gate, an ``error`` when the model could not be worked on (a crash, a time-out),
  warnings and accepted findings in ``system-out``: Jenkins' and GitLab's test reports;
- ``sarif``: SARIF 2.1.0 (OASIS), one result per finding with its rule, level, file and
  line, the layer as a logical location; accepted findings carry a suppression, so that
  GitHub code scanning does not raise them; every model is an artifact;
- ``github``: GitHub Actions workflow commands (``::error file=...,line=...::...``), which
  annotate the files of a pull request.

Whether a finding fails the gate is ``judge``'s: an error does, a warning with
``strict``, neither when the baseline accepts it. ``ReportWriter`` takes rows as they come:
a text or github report streams; a JSON, JUnit or SARIF report written to a file is
rewritten whole (all or nothing) at most every ``REWRITE_SECONDS`` and at the end, so a
run that is killed leaves a report of what it finished, which ``read_report`` reads
back for ``--resume``.
"""

from __future__ import annotations

import datetime
import hashlib
import json
import os
import re
import sys
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any
from urllib.parse import quote, unquote, urlparse

from ..core.diagnostics import Diagnostic
from ..core.files import write_files
from .baseline import Baseline, relative_file
from .batch import BATCH_CODES, Row

FORMATS = ("text", "json", "junit", "sarif", "github")
STREAMED = ("text", "github")
RESUMABLE = ("json", "junit", "sarif")
BY_SUFFIX = {".json": "json", ".xml": "junit", ".sarif": "sarif", ".txt": "text"}
REWRITE_SECONDS = 2.0
SARIF_SCHEMA = ("https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/"
                "sarif-schema-2.1.0.json")
_TOOL_URI = "https://github.com/openvinotoolkit/openvino"  # no home page of irtool's own


class ReportError(ValueError):
    """A report that cannot be read back (``--resume``): a usage error."""


@dataclass
class Judged:
    """A row and, per diagnostic, whether the baseline accepts it and whether it fails."""

    row: Row
    baselined: list[bool]
    failing: list[bool]

    @property
    def ok(self) -> bool:
        return not any(self.failing)

    def count(self, severity: str) -> int:
        """Findings of ``severity`` the baseline does not accept."""
        return sum(d.severity == severity and not b
                   for d, b in zip(self.row.diagnostics, self.baselined))


def judge(row: Row, *, strict: bool = False, baseline: Baseline | None = None) -> Judged:
    """Which findings of ``row`` fail: errors, and warnings when ``strict``, unless the
    baseline accepts them."""
    accepted = (baseline.match(row.diagnostics, row.file) if baseline is not None
                else [False] * len(row.diagnostics))
    failing = [not ok and (d.severity == "error" or (strict and d.severity == "warning"))
               for d, ok in zip(row.diagnostics, accepted)]
    return Judged(row, accepted, failing)


@dataclass
class Summary:
    """The counts of a run: models, those that pass, findings by kind."""

    command: str
    files: int = 0
    ok: int = 0
    errors: int = 0
    warnings: int = 0
    baselined: int = 0

    @classmethod
    def of(cls, command: str, judged: Iterable[Judged]) -> Summary:
        out = cls(command)
        for j in judged:
            out.files += 1
            out.ok += j.ok
            out.errors += j.count("error")
            out.warnings += j.count("warning")
            out.baselined += sum(j.baselined)
        return out

    @property
    def word(self) -> str:
        """What a model that passes is: ``valid`` IR, an ``ok`` check or conversion."""
        return "valid" if self.command == "validate" else "ok"

    def to_dict(self) -> dict[str, int]:
        return {"files": self.files, self.word: self.ok, "errors": self.errors,
                "warnings": self.warnings, "baselined": self.baselined}

    def line(self) -> str:
        """``12 file(s): 10 valid, 2 failed; 3 error(s), 1 warning(s), 0 baselined``."""
        return (f"{self.files} file(s): {self.ok} {self.word}, {self.files - self.ok} "
                f"failed; {self.errors} error(s), {self.warnings} warning(s), "
                f"{self.baselined} baselined")


@dataclass
class Context:
    """What a report says about the run: the command, the gate's settings, when."""

    command: str
    strict: bool = False
    baseline: str | None = None
    base: str = field(default_factory=os.getcwd)
    started: float = field(default_factory=time.time)
    version: str = ""


def rules(command: str) -> dict[str, tuple[str, str]]:
    """Code -> (severity, meaning) of every finding ``command`` can report."""
    if command != "validate":
        return dict(BATCH_CODES)
    from ..validation.codes import RULES

    return {**{c: (r.severity, r.summary) for c, r in RULES.items()}, **BATCH_CODES}


# -- text and GitHub workflow commands, a model at a time ---------------------------------


def text_lines(j: Judged, *, verbose: bool = False) -> list[str]:
    """The model's findings as compiler lines (accepted ones only when ``verbose``), then,
    for a model that passed, what the command made of it (``details["summary"]``)."""
    lines = [d.format() + (" [baselined]" if b else "")
             for d, b in zip(j.row.diagnostics, j.baselined) if verbose or not b]
    if j.ok and j.row.details.get("summary"):
        lines.append(f"{j.row.file}: {j.row.details['summary']}")
    return lines


def _escape_data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _escape_property(text: str) -> str:
    return _escape_data(text).replace(":", "%3A").replace(",", "%2C")


def github_lines(j: Judged) -> list[str]:
    """A workflow command per finding the baseline does not accept: ``::error`` or
    ``::warning``, with the file and line GitHub annotates."""
    out = []
    for d, accepted in zip(j.row.diagnostics, j.baselined):
        if accepted:
            continue
        level = "error" if d.severity == "error" else "warning"
        props = [f"file={_escape_property(d.file or j.row.file)}"]
        if d.line is not None:
            props.append(f"line={d.line}")
        props.append(f"title={_escape_property('irtool ' + d.code)}")
        what = d.what()[len(d.code):].removeprefix(":").strip()  # the title names the code
        out.append(f"::{level} {','.join(props)}::{_escape_data(what)}")
    return out


# -- the documents ------------------------------------------------------------------------


def _entry(j: Judged, word: str) -> dict[str, Any]:
    entry: dict[str, Any] = {
        "file": j.row.file, word: j.ok, "status": j.row.status, "errors": j.count("error"),
        "warnings": j.count("warning"), "baselined": sum(j.baselined),
        "seconds": round(j.row.seconds, 4),
        "diagnostics": [{**d.to_dict(), "baselined": b}
                        for d, b in zip(j.row.diagnostics, j.baselined)]}
    if j.row.command != "validate":
        entry["command"] = j.row.command
    if j.row.details:
        entry["details"] = j.row.details
    return entry


def json_document(judged: Sequence[Judged], ctx: Context) -> str:
    summary = Summary.of(ctx.command, judged)
    return json.dumps({"summary": summary.to_dict(),
                       "files": [_entry(j, summary.word) for j in judged]}, indent=2) + "\n"


def _iso(seconds: float, utc: bool = False) -> str:
    moment = datetime.datetime.fromtimestamp(seconds, datetime.timezone.utc if utc else None)
    text = moment.replace(microsecond=0, tzinfo=None).isoformat()
    return text + ("Z" if utc else "")


def junit_document(judged: Sequence[Judged], ctx: Context) -> bytes:
    """JUnit XML (the schema Jenkins' and GitLab's readers take)."""
    from lxml import etree

    failures = sum(not j.ok and j.row.status == "done" for j in judged)
    errors = sum(j.row.status != "done" for j in judged)
    seconds = f"{sum(j.row.seconds for j in judged):.3f}"
    counts = {"tests": str(len(judged)), "failures": str(failures), "errors": str(errors)}
    name = f"irtool {ctx.command}"
    root = etree.Element("testsuites", name=name, time=seconds, **counts)
    suite = etree.SubElement(root, "testsuite", name=name, skipped="0", time=seconds,
                             timestamp=_iso(ctx.started), **counts)
    for j in judged:
        case = etree.SubElement(suite, "testcase", classname=f"irtool.{ctx.command}",
                                name=j.row.file, time=f"{j.row.seconds:.3f}")
        quiet = []
        for d, fails, accepted in zip(j.row.diagnostics, j.failing, j.baselined):
            if fails:
                kind = "failure" if j.row.status == "done" else "error"
                etree.SubElement(case, kind, type=d.code, message=d.message).text = d.format()
            else:
                quiet.append(d.format() + (" [baselined]" if accepted else ""))
        if j.ok and j.row.details.get("summary"):
            quiet.append(f"{j.row.file}: {j.row.details['summary']}")
        if quiet:
            etree.SubElement(case, "system-out").text = "\n".join(quiet)
    return etree.tostring(root, xml_declaration=True, encoding="UTF-8", pretty_print=True)


def artifact_uri(path: str, base: str) -> tuple[str, str | None]:
    """(uri, uriBaseId): relative to ``base`` (``SRCROOT``) for a file inside it, else an
    absolute ``file://`` URI."""
    rel = relative_file(path, base)
    if rel.startswith("../") or rel == ".." or os.path.isabs(rel):
        return Path(os.path.abspath(path)).as_uri(), None
    return quote(rel), "SRCROOT"


def _fingerprint(d: Diagnostic, file: str, base: str) -> str:
    key = "\0".join([relative_file(d.file or file, base), d.code, d.layer_name or "",
                     d.message])
    return hashlib.sha256(key.encode("utf-8")).hexdigest()


def _location(uri: str, base_id: str | None, index: int) -> dict[str, Any]:
    where: dict[str, Any] = {"uri": uri, "index": index}
    if base_id:
        where["uriBaseId"] = base_id
    return where


def sarif_document(judged: Sequence[Judged], ctx: Context) -> str:
    """SARIF 2.1.0: one run, the command's rules, a result per finding, an artifact per
    model (with its row, so that ``--resume`` can read it back)."""
    table = rules(ctx.command)
    rule_ids = sorted(table)
    index = {code: i for i, code in enumerate(rule_ids)}
    artifacts, results = [], []
    for i, j in enumerate(judged):
        uri, base_id = artifact_uri(j.row.file, ctx.base)
        row = j.row.to_dict()
        del row["diagnostics"]
        artifacts.append({"location": _location(uri, base_id, i), "roles": ["analysisTarget"],
                          "properties": {"irtool": row}})
        for d, accepted in zip(j.row.diagnostics, j.baselined):
            d_uri, d_base = (uri, base_id) if (d.file or j.row.file) == j.row.file else \
                artifact_uri(d.file or j.row.file, ctx.base)
            physical: dict[str, Any] = {"artifactLocation": _location(d_uri, d_base, i)}
            if d.line is not None and d.line >= 1:
                physical["region"] = {"startLine": d.line}
            location: dict[str, Any] = {"physicalLocation": physical}
            if d.layer_id is not None:
                path = f"{d.scope}/{d.layer_id}" if d.scope else str(d.layer_id)
                location["logicalLocations"] = [{"name": d.layer_name or path,
                                                 "fullyQualifiedName": path,
                                                 "kind": "object"}]
            result: dict[str, Any] = {
                "ruleId": d.code, "level": "error" if d.severity == "error" else (
                    "warning" if d.severity == "warning" else "note"),
                "message": {"text": d.what()}, "locations": [location],
                "partialFingerprints": {"irtoolFinding/v1": _fingerprint(d, j.row.file,
                                                                          ctx.base)},
                "properties": {"irtool": d.to_dict()}}
            if d.code in index:
                result["ruleIndex"] = index[d.code]
            if ctx.baseline is not None:
                result["baselineState"] = "unchanged" if accepted else "new"
            if accepted:
                result["suppressions"] = [{"kind": "external", "justification":
                                           f"accepted in the baseline {ctx.baseline}"}]
            results.append(result)
    driver = {"name": "irtool", "version": ctx.version, "informationUri": _TOOL_URI,
              "rules": [{"id": c, "shortDescription": {"text": table[c][1]},
                         "defaultConfiguration": {"level": table[c][0]}} for c in rule_ids]}
    summary = Summary.of(ctx.command, judged)
    run = {"tool": {"driver": driver},
           "invocations": [{"executionSuccessful": True,
                            "startTimeUtc": _iso(ctx.started, utc=True),
                            "properties": {"irtool": {"command": ctx.command,
                                                      "strict": ctx.strict,
                                                      "summary": summary.to_dict()}}}],
           "originalUriBaseIds": {"SRCROOT": {"uri": Path(ctx.base).as_uri() + "/"}},
           "artifacts": artifacts, "results": results}
    return json.dumps({"$schema": SARIF_SCHEMA, "version": "2.1.0", "runs": [run]},
                      indent=1) + "\n"


def document(fmt: str, judged: Sequence[Judged], ctx: Context) -> bytes:
    """The whole report of ``judged`` as ``fmt`` (the streamed formats: every line)."""
    if fmt == "json":
        return json_document(judged, ctx).encode("utf-8")
    if fmt == "junit":
        return junit_document(judged, ctx)
    if fmt == "sarif":
        return sarif_document(judged, ctx).encode("utf-8")
    lines = [ln for j in judged for ln in (github_lines(j) if fmt == "github"
                                           else text_lines(j))]
    return "".join(ln + "\n" for ln in lines).encode("utf-8")


# -- writing as rows come -----------------------------------------------------------------


class ReportWriter:
    """Rows in, the report out (see the module docstring). ``path`` None: stdout.
    ``earlier``: the rows of the report resumed, kept first. ``echo``: also print the text
    lines of each model on stdout (the report goes to a file)."""

    def __init__(self, fmt: str, ctx: Context, path: str | None, *,
                 earlier: Sequence[Judged] = (), echo: bool = False,
                 verbose: bool = False, stdout: IO[str] | None = None) -> None:
        self.fmt, self.ctx, self.path = fmt, ctx, path
        self.echo, self.verbose = echo, verbose
        self.stdout = stdout or sys.stdout
        self.judged: list[Judged] = list(earlier)
        self._written = time.monotonic()
        self._stream: IO[str] | None = None
        if path is not None and fmt in STREAMED:
            self._stream = open(path, "w", encoding="utf-8")  # noqa: SIM115 - close()
            for j in earlier:
                self._write_lines(self._stream, j)
        elif path is not None:
            self._rewrite()  # the file exists from the start, and holds what is resumed

    def _lines(self, j: Judged) -> list[str]:
        return github_lines(j) if self.fmt == "github" else text_lines(j, verbose=self.verbose)

    def _write_lines(self, out: IO[str], j: Judged) -> None:
        for line in self._lines(j):
            out.write(line + "\n")
        out.flush()

    def add(self, j: Judged) -> None:
        """One more model's row: streamed, or kept for the document."""
        self.judged.append(j)
        if self.echo:
            for line in text_lines(j, verbose=self.verbose):
                print(line, file=self.stdout, flush=True)
        if self.fmt in STREAMED:
            self._write_lines(self._stream or self.stdout, j)
        elif self.path is not None and time.monotonic() - self._written >= REWRITE_SECONDS:
            self._rewrite()

    def _rewrite(self) -> None:
        assert self.path is not None
        write_files({self.path: document(self.fmt, self.judged, self.ctx)})
        self._written = time.monotonic()

    def close(self, order: dict[str, int] | None = None) -> None:
        """The final report: the rows in ``order`` (file -> position; others last)."""
        if order is not None:
            self.judged.sort(key=lambda j: order.get(j.row.file, len(order)))
        if self._stream is not None:
            self._stream.close()
        elif self.fmt not in STREAMED:
            if self.path is not None:
                self._rewrite()
            else:
                self.stdout.write(document(self.fmt, self.judged, self.ctx).decode("utf-8"))
                self.stdout.flush()


# -- reading a report back (--resume) -----------------------------------------------------


def read_report(path: str) -> tuple[str, list[Row]]:
    """The format and the rows of a JSON, JUnit or SARIF report irtool wrote; an empty
    list when ``path`` does not exist yet (a first run with ``--resume``)."""
    try:
        data = Path(path).read_bytes()
    except FileNotFoundError:
        return "", []
    except OSError as err:
        raise ReportError(f"{path}: cannot read the report: {err.strerror or err}") from None
    text = data.lstrip()
    try:
        if text.startswith(b"<"):
            return "junit", _junit_rows(data)
        doc = json.loads(data)
        if isinstance(doc, dict) and "runs" in doc:
            return "sarif", _sarif_rows(doc, path)
        if isinstance(doc, dict) and "files" in doc:
            return "json", _json_rows(doc)
    except (ValueError, KeyError, TypeError, AttributeError) as err:
        raise ReportError(f"{path}: not a report irtool wrote: {err}") from None
    raise ReportError(f"{path}: not a JSON, JUnit or SARIF report irtool wrote (text and "
                      "github reports cannot be resumed)")


def _json_rows(doc: dict[str, Any]) -> list[Row]:
    rows = []
    for entry in doc["files"]:
        row = Row.from_dict({**entry, "command": entry.get("command", "validate")})
        rows.append(row)
    return rows


def _sarif_rows(doc: dict[str, Any], path: str) -> list[Row]:
    run = doc["runs"][0]
    rows = [Row.from_dict(a["properties"]["irtool"]) for a in run.get("artifacts", [])]
    for result in run.get("results", []):
        index = result["locations"][0]["physicalLocation"]["artifactLocation"]["index"]
        rows[index].diagnostics.append(Diagnostic.from_dict(result["properties"]["irtool"]))
    return rows


_LINE = re.compile(r":(?P<line>\d+)?:? ?(?P<severity>error|warning|note|info): "
                   r"(?P<code>[A-Za-z0-9_]+)(?P<rest>.*)$", re.DOTALL)
_LAYER = re.compile(r" layer (?P<path>[0-9]+(?:/[^/ ]+/[0-9]+)*) \"")


def parse_line(text: str, file: str, message: str | None = None) -> Diagnostic:
    """The diagnostic ``Diagnostic.format`` printed as ``text`` (of the model ``file``);
    ``message`` when it is known, which makes a layer name holding ``": `` unambiguous."""
    text = text.removesuffix(" [baselined]")
    if not text.startswith(file):
        raise ValueError(f"a finding of another file: {text!r}")
    m = _LINE.match(text, len(file))
    if m is None:
        raise ValueError(f"not a finding line: {text!r}")
    rest = m.group("rest")
    layer_id = name = None
    scope = ""
    layer = _LAYER.match(rest)
    if layer is not None:
        head, _, tail = rest[layer.end():].partition('": ')
        if message is not None:
            head = rest[layer.end():len(rest) - len(message) - 3]
            tail = message
        *outer, last = layer.group("path").split("/")
        scope, layer_id, name, rest = "/".join(outer), int(last), head, tail
    else:
        rest = rest.removeprefix(": ")
    return Diagnostic(m.group("code"), message if message is not None else rest, file,
                      int(m.group("line")) if m.group("line") else None, layer_id, name,
                      scope, m.group("severity"))


def _junit_rows(data: bytes) -> list[Row]:
    from lxml import etree

    root = etree.fromstring(data, etree.XMLParser(resolve_entities=False, no_network=True))
    rows = []
    for case in root.iter("testcase"):
        file = case.get("name")
        command = (case.get("classname") or "irtool.validate").rpartition(".")[2]
        row = Row(file, command, seconds=float(case.get("time") or 0.0))
        for element in case:
            if element.tag in ("failure", "error"):
                row.diagnostics.append(parse_line(element.text or "", file,
                                                  element.get("message")))
                if element.tag == "error":
                    row.status = {"MODEL_CRASHED": "crash", "MODEL_TIMEOUT": "timeout",
                                  "MODEL_LOST": "lost"}.get(element.get("type", ""), "error")
            elif element.tag == "system-out":
                for line in (element.text or "").splitlines():
                    if line.startswith(f"{file}: ") and not _LINE.match(line, len(file)):
                        row.details["summary"] = line[len(file) + 2:]
                    elif line.strip():
                        row.diagnostics.append(parse_line(line, file))
        rows.append(row)
    return rows


def resolve_uri(uri: str, base: str) -> str:
    """A report's artifact URI as a path (relative ones against ``base``)."""
    parsed = urlparse(uri)
    if parsed.scheme == "file":
        return unquote(parsed.path)
    return os.path.join(base, unquote(uri))
