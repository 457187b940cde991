"""Build the `documents` table: one row per paper with its best full text.

For each paper the candidates are its newest e-print and its newest PDF in the raw zone, of
the version the vault holds: a paper published before the cutoff and revised after it is
converted from the last version created before the cutoff (:mod:`vault_pipeline.papers.versions`);
a later version's file is left out, and the row's notes (or error) name it.
LaTeX is converted first and wins when it converts cleanly; the PDF is converted only for
papers whose LaTeX failed or is missing; with neither, the abstract from `papers` is the text
(``abstract_only``) and the row says why.

Incremental and crash-safe: every conversion is recorded in `document_attempts` keyed by
input sha256 and converter version, and is never repeated while both are unchanged (its text
is taken from the previous `documents` table). Results are journalled to scratch Parquet
parts as they finish, so a run that dies resumes from them; the tables are replaced
atomically at the end and the journal removed. Texts are streamed (Polars lazy frames) from
the old table and the journal into the new one, never all held in memory."""

from __future__ import annotations

import dataclasses
import functools
import shutil
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import UTC, date, datetime
from pathlib import Path

import polars as pl

from vault_pipeline.documents.cleaning import CLEANING_VERSION
from vault_pipeline.documents.convert import LATEX, PDF, Settings, Task, convert_task
from vault_pipeline.documents.forums import FORUM_KEY, forum_of, with_submissions
from vault_pipeline.documents.identify import (
    BY_FORUM,
    Catalog,
    Clues,
    opening_key_expr,
    page_openings,
    title_key,
    title_key_expr,
)
from vault_pipeline.documents.naming import arxiv_id_of
from vault_pipeline.documents.outcome import (
    NO_SOURCE,
    OK,
    SUCCESS,
    TRANSIENT,
    UNIDENTIFIED,
    Conversion,
)
from vault_pipeline.documents.workers import PoolSettings, convert_batch, run_isolated
from vault_pipeline.executors import Executor
from vault_pipeline.papers.versions import read_vault_versions
from vault_pipeline.pipeline.counters import Counters
from vault_pipeline.pipeline.progress import Progress, no_progress
from vault_pipeline.pipeline.settings import CUTOFF
from vault_pipeline.raw.zone import RawZone
from vault_pipeline.schemas import DOCUMENT_ATTEMPTS, DOCUMENTS, PAPERS, SUBMISSIONS, TableSchema
from vault_pipeline.store.journal import Journal
from vault_pipeline.store.paths import VaultPaths

RAW_KINDS = {"pdf": PDF, "eprint": LATEX}
TEXT_COLUMNS = ["text", "references", "appendix", "truncated", "hidden_chars", "notes"]
JOURNAL_FLUSH = 16  # results per journal part
ABSTRACT_CONVERTER = "abstract"


@dataclass(frozen=True)
class DocumentsConfig:
    settings: Settings = field(default_factory=Settings)
    pool: PoolSettings = field(default_factory=PoolSettings)
    max_tries: int = 3  # transient failures of one input before it is left alone
    retry_failed: bool = False  # try every transient failure again, whatever its tries

    @property
    def limits(self) -> str:
        """The worker limits an attempt ran under: part of a transient failure's key."""
        return f"timeout_s {self.pool.timeout_s:g}; memory_mb {self.pool.memory_mb}"


@dataclass(frozen=True)
class Input:
    """A raw PDF or e-print and the paper it belongs to."""

    sha256: str
    kind: str
    path: Path
    name: str | None
    arxiv_id: str | None
    version: int | None
    received_at: datetime
    forum_id: str | None = None  # an OpenReview submission's PDF (see `forums`)
    identified_by: str | None = None  # origin, name or forum (identify.py); None: unknown

    @property
    def paper_key(self) -> str:
        if self.forum_id:
            return f"{FORUM_KEY}{self.forum_id}"
        return self.arxiv_id or f"sha256:{self.sha256}"


@dataclass
class DocumentsReport(Counters, counts=("rows", "converted", "reused", "resumed")):
    """Rows written; files converted in this run, or that had a result already (reused);
    attempts read back from an interrupted build's journal (resumed); the rows by status
    and by source, and the attempts by kind and status."""

    by_status: dict[str, int] = field(default_factory=dict)
    by_source: dict[str, int] = field(default_factory=dict)
    attempts_by_kind_status: dict[str, dict[str, int]] = field(default_factory=dict)


def collect_inputs(zone: RawZone) -> list[Input]:
    inputs = []
    for raw in zone.files(kinds=RAW_KINDS):
        forum, revision = forum_of(raw.original_name, raw.origin) if raw.kind == "pdf" \
            else (None, False)
        if revision:
            continue  # an earlier OpenReview revision: kept in the raw zone, not converted
        found, where = (None, BY_FORUM) if forum else arxiv_id_of(raw.original_name, raw.origin)
        inputs.append(Input(
            sha256=raw.sha256, kind=RAW_KINDS[raw.kind], path=zone.absolute(raw),
            name=raw.original_name, arxiv_id=found.id if found else None,
            version=found.version if found else None, received_at=raw.received_at,
            forum_id=forum, identified_by=where if forum or found else None,
        ))
    return inputs


def candidates_by_paper(inputs: Iterable[Input]) -> dict[str, list[Input]]:
    """Per paper: its best e-print, then its best PDF (highest version, then newest)."""
    best: dict[tuple[str, str], Input] = {}
    for item in inputs:
        slot = (item.paper_key, item.kind)
        current = best.get(slot)
        rank = (item.version or 0, item.received_at, item.sha256)
        if current is None or rank > (current.version or 0, current.received_at,
                                      current.sha256):
            best[slot] = item
    papers: dict[str, list[Input]] = {}
    for kind in (LATEX, PDF):
        for (key, slot_kind), item in sorted(best.items()):
            if slot_kind == kind:
                papers.setdefault(key, []).append(item)
    return papers


@dataclass(frozen=True)
class Held:
    """The version of a pre-cutoff paper the vault holds (see
    :mod:`vault_pipeline.papers.versions`)."""

    version: int | None
    revised: bool

    def allows(self, version: int | None) -> bool:
        """Whether a file of ``version`` may be this paper's text: not later than the held
        version; a file of unknown version only when no version is after the cutoff."""
        if version is None or self.version is None:
            return not self.revised
        return version <= self.version


def held_versions(versions: pl.DataFrame | None) -> dict[str, Held]:
    """Per pre-cutoff paper, the version its text must come from."""
    if versions is None:
        return {}
    return {pid: Held(version, revised) for pid, version, revised in
            versions.select("arxiv_id", "version", "revised").iter_rows()}


def keep_held(inputs: Iterable[Input], held: dict[str, Held]
              ) -> tuple[list[Input], dict[str, list[str]]]:
    """The inputs the vault may read, and per paper the files left out as later than the
    version it holds."""
    kept: list[Input] = []
    left_out: dict[str, list[str]] = {}
    for item in inputs:
        rule = held.get(item.arxiv_id) if item.arxiv_id else None
        if rule is None or rule.allows(item.version):
            kept.append(item)
            continue
        version = f"v{item.version}" if item.version else "unknown version"
        keeps = f"v{rule.version}" if rule.version else "no version known before it"
        left_out.setdefault(item.arxiv_id, []).append(
            f"{item.name or item.sha256[:12]} ({version}; the vault holds {keeps}: "
            "later versions are after the cutoff)")
    return kept, left_out


def _journal_schema() -> TableSchema:
    """Attempt rows with their texts: what a finished conversion leaves in the journal."""
    texts = {c.name: c for c in DOCUMENTS.columns}
    columns = (*DOCUMENT_ATTEMPTS.columns, *(texts[name] for name in TEXT_COLUMNS))
    return TableSchema("documents_journal", "Finished conversions of a running build.",
                       tuple(dataclasses.replace(c, nullable=True) for c in columns))


JOURNAL = _journal_schema()


def _attempt_row(item: Input, result: Conversion, config: DocumentsConfig,
                 previous: dict | None) -> dict:
    converter, version = config.settings.converter(item.kind)
    tries = None
    if result.status in TRANSIENT:  # rows of older versions have no count: one try
        repeated = previous is not None and previous["status"] in TRANSIENT
        tries = (previous.get("tries") or 1) + 1 if repeated else 1
    return {
        "sha256": item.sha256, "kind": item.kind, "arxiv_id": item.arxiv_id,
        "input_name": item.name, "status": result.status, "error": result.error,
        "n_pages": result.n_pages, "n_chars": result.n_chars,
        "duration_ms": result.duration_ms, "converter": converter,
        "converter_version": version, "attempted_at": datetime.now(UTC),
        "text": result.text, "references": result.references, "appendix": result.appendix,
        "truncated": result.truncated, "hidden_chars": result.hidden_chars,
        "notes": result.notes, "limits": config.limits, "tries": tries,
        "identifiers": result.identifiers,
    }


class DocumentsBuild:
    """One run of the stage (see the module docstring)."""

    def __init__(self, paths: VaultPaths, config: DocumentsConfig,
                 convert: Callable[[Task], Conversion] = convert_task,
                 executor: Executor | None = None, progress: Progress = no_progress,
                 cutoff: date | None = None):
        self.paths = paths
        self.cutoff = cutoff or CUTOFF
        self.versions = read_vault_versions(paths.store, self.cutoff)
        self.left_out: dict[str, list[str]] = {}
        self.config = config
        self.convert = convert
        self.executor = executor
        self.progress = progress
        self.planned = 0  # conversions to do in this run, as far as known
        self.journal = Journal(paths.scratch / "documents-journal", {"rows": JOURNAL},
                               flush_every=JOURNAL_FLUSH)
        self.unpack_dir = paths.scratch / "documents-unpack"
        self.report = DocumentsReport()
        self.converter_versions = {kind: config.settings.converter(kind)[1]
                                   for kind in (LATEX, PDF)}
        self.attempts: dict[str, dict] = {}  # sha256 -> attempt row (no text)
        self.text_from_table: set[str] = set()  # ok attempts whose text is in `documents`
        self.journal_shas: set[str] = set()  # attempts whose text is in the journal

    def _journal(self) -> pl.LazyFrame:
        """The journal's conversions, the last of each input."""
        return self.journal.scan().unique("sha256", keep="last")

    def load_previous(self) -> None:
        """Attempts and texts from the last run (with current versions) and the journal."""
        attempts = self.paths.store.read(DOCUMENT_ATTEMPTS)
        current = attempts.filter(
            pl.col("kind").replace_strict(self.converter_versions, default=None)
            == pl.col("converter_version"))
        for row in current.iter_rows(named=True):
            self.attempts[row["sha256"]] = row
        table = self.paths.store.scan_optional(DOCUMENTS)
        if table is not None:
            texts = (table.filter(pl.col("sha256").is_not_null() & pl.col("text").is_not_null())
                     .select("sha256", "converter_version").collect())
            self.text_from_table = {
                sha for sha, version in texts.iter_rows()
                if sha in self.attempts and self.attempts[sha]["converter_version"] == version
            }
        journal = self._journal().drop(TEXT_COLUMNS).collect()
        for row in journal.iter_rows(named=True):
            if self.converter_versions.get(row["kind"]) == row["converter_version"]:
                self.attempts[row["sha256"]] = row
                self.journal_shas.add(row["sha256"])
                self.report.resumed += 1

    def _has_result(self, item: Input) -> bool:
        attempt = self.attempts.get(item.sha256)
        if attempt is None:
            return False
        if attempt["status"] in TRANSIENT:
            return not self._retry(attempt)
        if attempt["status"] != OK:
            return True
        return item.sha256 in self.text_from_table or item.sha256 in self.journal_shas

    def _retry(self, attempt: dict) -> bool:
        """Whether a transient failure is tried again: on request, under other limits (a
        longer timeout), or while its tries are within the budget."""
        tries = attempt.get("tries") or 1
        return (self.config.retry_failed or attempt.get("limits") != self.config.limits
                or tries < self.config.max_tries)

    def convert_all(self, items: list[Input]) -> None:
        todo = [item for item in items if not self._has_result(item)]
        self.report.reused += len(items) - len(todo)
        if not todo:
            return
        self.planned += len(todo)  # LaTeX first, then PDFs: one total over both
        tasks = {item.sha256: item for item in todo}
        settings = self.config.settings
        work = [Task(item.sha256, item.kind, str(item.path), str(self.unpack_dir), settings)
                for item in todo]
        for task, result in self._run(work):
            row = _attempt_row(tasks[task.key], result, self.config,
                               self.attempts.get(task.key))
            self.journal.add(row)
            self.attempts[task.key] = {k: v for k, v in row.items() if k not in TEXT_COLUMNS}
            self.journal_shas.add(task.key)
            self.report.converted += 1
            self.progress(1, self.planned, f"documents: converting {task.kind}")
        self.journal.flush()

    def _run(self, work: list[Task]) -> Iterable[tuple[Task, Conversion]]:
        """The conversions: this machine's worker pool, or the same function in the same
        isolated workers on each node of a distributed executor."""
        if self.executor is None or not self.executor.distributed:
            return run_isolated(work, self.config.pool, self.convert)
        batch = functools.partial(convert_batch, settings=self.config.pool,
                                  function=self.convert)
        return self.executor.map_batches(batch, work)

    def run(self) -> DocumentsReport:
        self.paths.ensure()
        shutil.rmtree(self.unpack_dir, ignore_errors=True)
        self.load_previous()
        inputs, self.left_out = keep_held(collect_inputs(RawZone(self.paths)),
                                          held_versions(self.versions))
        papers = candidates_by_paper(inputs)
        # LaTeX first; a PDF only where the paper's LaTeX did not convert.
        self.convert_all([c[0] for c in papers.values() if c[0].kind == LATEX])
        self.convert_all([item for c in papers.values() for item in c
                          if item.kind == PDF and not self._latex_ok(c)])
        papers = self.identify(papers)
        selection = self.select(papers)
        self.write(selection)
        self.journal.clear()
        shutil.rmtree(self.unpack_dir, ignore_errors=True)
        return self.report

    def _latex_ok(self, candidates: list[Input]) -> bool:
        first = candidates[0]
        return first.kind == LATEX and self.attempts.get(first.sha256, {}).get("status") == OK

    def identify(self, papers: dict[str, list[Input]]) -> dict[str, list[Input]]:
        """Papers whose only files carry no id in their name or origin, identified by what
        their converted PDF says (identify.py); still unknown where nothing matches, where
        the paper found has a file of its own (its row is that file's), or where the
        stamp's version is later than the one the vault holds."""
        unknown = {key: c for key, c in papers.items()
                   if all(i.arxiv_id is None and i.forum_id is None for i in c)}
        if not unknown:
            return papers
        clues = {item.sha256: Clues.from_json(self.attempts[item.sha256].get("identifiers"))
                 for c in unknown.values() for item in c
                 if self.attempts.get(item.sha256, {}).get("status") == OK}
        catalog = self._catalog(list(clues.values()))
        held = held_versions(self.versions)
        out = {key: c for key, c in papers.items() if key not in unknown}
        for key, candidates in unknown.items():
            found = None
            for item in candidates:
                if item.sha256 in clues:
                    found = catalog.identify(clues[item.sha256])
                    if found is not None:
                        break
            new_key = (f"{FORUM_KEY}{found.forum_id}" if found and found.forum_id
                       else found.arxiv_id if found else None)
            rule = held.get(found.arxiv_id) if found and found.arxiv_id else None
            if found is None or new_key in out or (rule and not rule.allows(found.version)):
                out[key] = candidates
                continue
            out[str(new_key)] = [dataclasses.replace(item, arxiv_id=found.arxiv_id,
                                                     version=found.version,
                                                     forum_id=found.forum_id,
                                                     identified_by=found.method)
                                 for item in candidates]
        return out

    def _catalog(self, clues: list[Clues]) -> Catalog:
        """The papers and submissions whose DOI or title one of ``clues`` names: a lazy
        filter over the tables, so a vault of millions of papers is never read whole."""
        dois = sorted({c.doi for c in clues if c.doi})
        keys = sorted({title_key(c.title) for c in clues if c.title})
        # A known title written anywhere in a first page's opening words (under a banner set
        # larger than it) opens with one of that page's runs of words.
        openings = sorted(set().union(*(page_openings(c.text) for c in clues if c.text)))

        named = title_key_expr("title").is_in(keys) | opening_key_expr("title").is_in(openings)
        store = self.paths.store
        papers = store.scan_optional(PAPERS)
        rows = [] if papers is None else papers.select("arxiv_id", "doi", "title", "authors") \
            .filter(pl.col("doi").str.to_lowercase().is_in(dois) | named).collect().iter_rows()
        submissions = store.scan_optional(SUBMISSIONS)
        forums = [] if submissions is None else submissions.select(
            "forum_id", "title", "authors").filter(named).collect().iter_rows()
        return Catalog.build(rows, forums)

    def select(self, papers: dict[str, list[Input]]) -> pl.DataFrame:
        """One row per paper: the winning input, or the failures that explain its absence."""
        rows = []
        for key, candidates in papers.items():
            winner = next((c for c in candidates
                           if self.attempts.get(c.sha256, {}).get("status") == OK), None)
            tried = [c for c in candidates if c.sha256 in self.attempts]
            failures = [self.attempts[c.sha256] for c in tried]
            errors = "; ".join(f"{a['kind']}: {a['status']} ({a['error']})"
                               for a in failures if a["status"] != OK) or None
            chosen = winner or (tried[-1] if tried else candidates[-1])
            attempt = self.attempts.get(chosen.sha256, {})
            status = attempt.get("status", "failed")
            if winner is not None and winner.arxiv_id is None and winner.forum_id is None:
                status = UNIDENTIFIED
            rows.append({
                "paper_key": key, "arxiv_id": chosen.arxiv_id, "forum_id": chosen.forum_id,
                "version": chosen.version,
                "sha256": chosen.sha256, "source": chosen.kind, "status": status,
                "error": errors if winner is None else _unidentified_error(winner),
                "winner": winner is not None, "input_name": chosen.name,
                "converter": attempt.get("converter"),
                "converter_version": attempt.get("converter_version"),
                "n_pages": attempt.get("n_pages"), "n_chars": attempt.get("n_chars"),
                "duration_ms": attempt.get("duration_ms"),
                "converted_at": attempt.get("attempted_at"),
                "identified_by": chosen.identified_by,
            })
        schema = {"paper_key": pl.String, "winner": pl.Boolean} | {
            name: DOCUMENTS.polars[name] for name in
            ("arxiv_id", "forum_id", "version", "sha256", "source", "status", "error", "input_name",
             "converter", "converter_version", "n_pages", "n_chars", "duration_ms",
             "converted_at", "identified_by")}
        return pl.DataFrame(rows, schema=schema)

    def _texts(self) -> pl.LazyFrame:
        columns = ["sha256", *TEXT_COLUMNS]
        parts = [self._journal().select(columns)]
        table = self.paths.store.scan_optional(DOCUMENTS)
        if table is not None and self.text_from_table:
            parts.append(table.filter(pl.col("sha256").is_in(list(self.text_from_table)))
                         .select(columns))
        return pl.concat(parts, how="vertical_relaxed").unique("sha256", keep="first")

    def write(self, selection: pl.DataFrame) -> None:
        """Write `documents` (streamed) and `document_attempts`, each atomically."""
        store = self.paths.store
        papers = held_metadata(store.scan(PAPERS) if store.exists(PAPERS)
                               else store.read(PAPERS).lazy(), self.versions, self.left_out)
        with_files = selection.lazy().join(self._texts(), on="sha256", how="left")
        converted = with_files.with_columns(
            pl.when(pl.col("winner")).then(pl.col(c)).otherwise(None).alias(c)
            for c in ("text", "references", "appendix"))
        submissions = store.scan_optional(SUBMISSIONS)
        if submissions is not None:
            submissions = submissions.select("forum_id", "title", "abstract", "pdf").unique(
                "forum_id", keep="first")
        documents = (with_abstracts(converted, papers, submissions)
                     .select(DOCUMENTS.names).cast(DOCUMENTS.polars)  # type: ignore[arg-type]
                     .sort("arxiv_id", "forum_id", "sha256", nulls_last=True))
        with store.writing(DOCUMENTS) as tmp:
            documents.sink_parquet(tmp, compression="zstd")
        attempts = pl.DataFrame(list(self.attempts.values()), schema=DOCUMENT_ATTEMPTS.polars) \
            if self.attempts else pl.DataFrame(schema=DOCUMENT_ATTEMPTS.polars)
        store.write(DOCUMENT_ATTEMPTS, attempts.sort("kind", "sha256"))
        self._summarise(attempts)

    def _summarise(self, attempts: pl.DataFrame) -> None:
        table = self.paths.store.scan(DOCUMENTS)
        self.report.rows = table.select(pl.len()).collect().item()
        self.report.by_status = dict(table.group_by("status").len().collect().iter_rows())
        self.report.by_source = dict(table.group_by("source").len().collect().iter_rows())
        counts: dict[str, Counter] = {}
        for kind, status in attempts.select("kind", "status").iter_rows():
            counts.setdefault(kind, Counter())[status] += 1
        self.report.attempts_by_kind_status = {k: dict(v) for k, v in counts.items()}


def _unidentified_error(winner: Input) -> str | None:
    if winner.arxiv_id is not None or winner.forum_id is not None:
        return None
    return (f"no arXiv id in the file name {winner.name!r} or its origin, and no arXiv stamp, "
            "known DOI or known title in its text; the text is kept, keyed by sha256")


def held_metadata(papers: pl.LazyFrame, versions: pl.DataFrame | None,
                  left_out: dict[str, list[str]]) -> pl.LazyFrame:
    """Each paper's title and abstract as the documents read them, with the version they
    describe (``_abstract_version``) and what to say about them (``_held_note``): a paper
    revised after the cutoff has its held version's, or none where no source gave them."""
    papers = papers.select("arxiv_id", "title", "abstract",
                           pl.col("latest_version").alias("_abstract_version"))
    notes = pl.DataFrame({"arxiv_id": list(left_out),
                          "_left_out": ["left out: " + "; ".join(v) for v in left_out.values()]},
                         schema={"arxiv_id": pl.String, "_left_out": pl.String})
    papers = papers.join(notes.lazy(), on="arxiv_id", how="left")
    if versions is None:
        return papers.with_columns(_held_note=pl.col("_left_out")).drop("_left_out")
    held = versions.lazy().filter("revised").select(
        "arxiv_id", pl.col("version").alias("_v"), pl.col("title").alias("_t"),
        pl.col("abstract").alias("_a"), pl.col("note").alias("_n"), _revised=pl.lit(True))
    revised = pl.col("_revised").fill_null(False)
    return papers.join(held, on="arxiv_id", how="left").select(
        "arxiv_id",
        title=pl.when(revised).then("_t").otherwise("title"),
        abstract=pl.when(revised).then("_a").otherwise("abstract"),
        _abstract_version=pl.when(revised).then("_v").otherwise("_abstract_version"),
        _held_note=pl.concat_str([pl.col("_n"), pl.col("_left_out")], separator="; ",
                                 ignore_nulls=True).replace("", None),
    )


def abstract_text() -> pl.Expr:
    return pl.format("# {}\n\n## Abstract\n\n{}", pl.col("title"), pl.col("abstract"))


def with_abstracts(converted: pl.LazyFrame, papers: pl.LazyFrame,
                   submissions: pl.LazyFrame | None = None) -> pl.LazyFrame:
    """Rows of converted inputs (the abstract as text where conversion failed), plus one
    ``no_source`` row per paper, and per OpenReview submission, with nothing to convert."""
    now = datetime.now(UTC)
    abstract_version = f"cleaning {CLEANING_VERSION}"
    failed = pl.col("winner").not_() & pl.col("abstract").is_not_null()
    keyed = converted.join(papers, on="arxiv_id", how="left")
    extra = []
    if submissions is not None:
        keyed, no_pdf = with_submissions(keyed, submissions, abstract_version, now)
        extra.append(no_pdf)
    with_papers = keyed.with_columns(
        version=pl.when(failed).then("_abstract_version").otherwise("version"),
        text=pl.when(failed).then(abstract_text()).otherwise(pl.col("text")),
        source=pl.when(failed).then(pl.lit("abstract_only")).otherwise(pl.col("source")),
        converter=pl.when(failed).then(pl.lit(ABSTRACT_CONVERTER))
        .otherwise(pl.col("converter")),
        converter_version=pl.when(failed).then(pl.lit(abstract_version))
        .otherwise(pl.col("converter_version")),
    )
    missing = papers.join(converted.select("arxiv_id").drop_nulls().unique(), on="arxiv_id",
                          how="anti").with_columns(
        version="_abstract_version",
        text=abstract_text(), source=pl.lit("abstract_only"), status=pl.lit(NO_SOURCE),
        error=pl.lit("no PDF or e-print of this paper in the raw zone"),
        converter=pl.lit(ABSTRACT_CONVERTER), converter_version=pl.lit(abstract_version),
        converted_at=pl.lit(now, dtype=DOCUMENTS.polars["converted_at"]),
        identified_by=pl.lit("metadata"),
    )
    combined = pl.concat([with_papers, missing, *extra], how="diagonal_relaxed")
    return combined.with_columns(
        notes=pl.concat_str([pl.col("notes"), pl.col("_held_note")], separator="; ",
                            ignore_nulls=True).replace("", None),
        n_chars=pl.when(pl.col("source") == "abstract_only")
        .then(pl.col("text").str.len_chars().cast(pl.Int64)).otherwise(pl.col("n_chars")),
        truncated=pl.col("truncated").fill_null(False),
        hidden_chars=pl.col("hidden_chars").fill_null(0),
        identified_by=pl.coalesce(
            "identified_by", pl.when(pl.col("forum_id").is_not_null()).then(pl.lit(BY_FORUM))),
    )


def build_documents(paths: VaultPaths, config: DocumentsConfig | None = None,
                    convert: Callable[[Task], Conversion] = convert_task,
                    executor: Executor | None = None,
                    progress: Progress = no_progress,
                    cutoff: date | None = None) -> DocumentsReport:
    """Rebuild `documents` and `document_attempts`, converting only what is new (on the
    executor's workers when it is a distributed one); ``progress`` hears of each conversion
    done. ``cutoff`` (the split's; the stage passes the one its settings resolve) decides
    which version of a revised paper is read."""
    return DocumentsBuild(paths, config or DocumentsConfig(), convert, executor,
                          progress, cutoff).run()


def success_counts(attempts: pl.DataFrame) -> dict[str, tuple[int, int]]:
    """Per input kind: (successful conversions, attempts)."""
    out: dict[str, tuple[int, int]] = {}
    for kind, frame in attempts.group_by("kind"):
        ok = frame.filter(pl.col("status").is_in(list(SUCCESS))).height
        out[str(kind[0])] = (ok, frame.height)
    return out
