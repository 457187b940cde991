"""The `splits` table: every paper exactly once, as `vault`, a target split or `excluded`,
each with the reason, the cutoff and the seed.

Pre-cutoff papers (published before the cutoff) form the retrievable vault, each in the last
version created before the cutoff (:mod:`vault_pipeline.papers.versions`; `version` says which): a
paper revised after the cutoff stays in the vault through that earlier version, whose text
the documents, views and index hold. Only a paper revised after the cutoff whose earlier
versions no source lists is excluded (neither indexed nor a target): its one known text may
hold post-cutoff content. A post-cutoff
paper becomes a target when, as in seed 002, it has all five usable views, is
methodological, is filed under one of the configured fields (machine learning by default),
its full text came from its LaTeX source, and enough of its cited work is in the vault;
otherwise it is excluded and every criterion it failed is named. A criterion that cannot be
checked yet (citations or documents not harvested) is named as unknown in the reason and
counted in the report; `unknown_evidence` decides whether such a paper stays a target."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

import polars as pl

from vault_pipeline.ideas.views import VIEW_NAMES
from vault_pipeline.papers.versions import text_before, text_dates, vault_versions
from vault_pipeline.pipeline.counters import Counters
from vault_pipeline.schemas import (
    CITATIONS,
    DOCUMENTS,
    DUPLICATE_CLUSTERS,
    DUPLICATE_PAIRS,
    MASKED_RECORDS,
    PAPER_VERSIONS,
    PAPERS,
    SPLITS,
    SUBMISSIONS,
    VIEWS,
)
from vault_pipeline.splits import assign, leakage
from vault_pipeline.splits.classifiers import (
    UNCLASSIFIED,
    ClassifierInput,
    ExtractiveClassifier,
    input_sha256,
)
from vault_pipeline.splits.coverage import Coverage, coverage
from vault_pipeline.splits.inputs import clean_views
from vault_pipeline.splits.kinds import PaperKind
from vault_pipeline.splits.leakage import Verdict
from vault_pipeline.splits.settings import SplitSettings
from vault_pipeline.store.paths import VaultPaths

VAULT, EXCLUDED = "vault", "excluded"
SPLIT_NAMES = (VAULT, *assign.TARGET_SPLITS, EXCLUDED)


class Classifier(Protocol):
    name: str

    def __call__(self, batch: Sequence[ClassifierInput]) -> list[PaperKind]: ...


@dataclass
class SplitsReport(Counters, counts=("rows", "post_cutoff", "citations_known")):
    """Rows written, papers after the cutoff, papers whose citations are known; the rows by
    split, the excluded by reason, the post-cutoff papers by criterion left unknown."""

    counts: dict[str, int] = field(default_factory=dict)
    excluded_by_reason: dict[str, int] = field(default_factory=dict)
    unknown_criteria: dict[str, int] = field(default_factory=dict)  # post-cutoff papers
    warnings: list[str] = field(default_factory=list)


def _records_by_id(records: pl.DataFrame | None, ids: list[str]) -> dict[str, dict]:
    if records is None or "arxiv_id" not in records.columns:
        return {}
    rows = records.filter(pl.col("arxiv_id").is_in(ids))
    return {r["arxiv_id"]: r for r in rows.iter_rows(named=True)}


def _view_gaps(views: pl.DataFrame, problems: pl.DataFrame) -> dict[str, str]:
    """Why a paper's views cannot serve as target inputs and references, by paper."""
    have: dict[str, set[str]] = {}
    for pid, view in views.select("arxiv_id", "view").iter_rows():
        have.setdefault(pid, set()).add(view)
    flagged: dict[str, dict[str, str]] = {}
    for pid, view, problem in problems.filter(pl.col("view").is_in(VIEW_NAMES)).iter_rows():
        flagged.setdefault(pid, {})[view] = problem
    gaps = {}
    for pid in set(have) | set(flagged):
        reasons = []
        if pid in flagged:
            reasons.append("unusable views: " + ", ".join(
                f"{view} ({problem})" for view, problem in sorted(flagged[pid].items())))
        missing = [v for v in VIEW_NAMES
                   if v not in have.get(pid, set()) and v not in flagged.get(pid, {})]
        if missing:
            reasons.append("missing views: " + ", ".join(missing))
        if reasons:
            gaps[pid] = "; ".join(reasons)
    return gaps


# Kinds of exclusion reason, for the metadata: a paper counts under every criterion it failed.
REVISED, NO_VIEWS, BAD_VIEWS, MISSING_VIEWS = ("revised after the cutoff", "no views",
                                               "unusable views", "missing views")
OUTSIDE_FIELDS, NO_LATEX, LATEX_UNKNOWN = ("outside the fields", "no LaTeX source",
                                           "LaTeX source unknown")
FEW_CITED, CITATIONS_UNKNOWN = "cited work in vault below threshold", "citations unknown"


def _late_views(views: pl.DataFrame | None, papers: pl.DataFrame, vault: pl.Series,
                cutoff) -> dict[str, str]:
    """Vault papers whose views were read from a version written on or after the cutoff
    (the index leaves them out), with that version."""
    if views is None or "version" not in views.columns:
        return {}
    rows = views.filter(pl.col("arxiv_id").is_in(vault.implode())).select(
        "arxiv_id", "version").unique()
    late = text_dates(rows, papers).filter(~text_before(cutoff))
    return {pid: str(version) if version is not None else "?"
            for pid, version in late.select("arxiv_id", "version").iter_rows()}


def _coverage_verdict(cov: Coverage, threshold: float) -> tuple[bool | None, str]:
    """(passed, text); passed is None when the paper's citations are unknown."""
    share = cov.fraction()
    if share is None:
        return None, (f"citations unknown ({cov.source}): the {threshold:.0%} cited-work "
                      "threshold not applied (cannot be checked)")
    text = (f"cited work in vault {cov.in_vault}/{cov.cited} ({share:.0%}; {cov.source})")
    if share < threshold:
        return False, f"{text} below {threshold:.0%}"
    return True, f"{text} ≥ {threshold:.0%}"


def _field_verdict(categories: list[str] | None, fields: tuple[str, ...]) -> str | None:
    """Why the paper is outside the configured fields, or None."""
    if not fields or set(categories or ()) & set(fields):
        return None
    return (f"outside the fields: categories {', '.join(categories or ()) or 'unknown'} "
            f"(targets: {', '.join(fields)})")


def latex_sources(documents: pl.DataFrame | None) -> dict[str, str] | None:
    """Where each converted paper's text came from (`latex` when its LaTeX source was
    downloaded and converted); None without a documents table."""
    if documents is None or "source" not in documents.columns:
        return None
    done = documents.filter(pl.col("arxiv_id").is_not_null())
    if "status" in done.columns:
        done = done.filter(pl.col("status") == "ok")
    sources: dict[str, str] = {}
    for pid, source in done.select("arxiv_id", "source").iter_rows():
        if sources.get(pid) != "latex":
            sources[pid] = source
    return sources


def _latex_verdict(pid: str, sources: dict[str, str] | None) -> tuple[bool | None, str]:
    if sources is None:
        return None, "LaTeX source unknown (no documents table): the LaTeX filter not applied"
    if pid not in sources:
        return None, ("LaTeX source unknown (not converted yet): the LaTeX filter not "
                      "applied")
    if sources[pid] != "latex":
        return False, f"no LaTeX source (full text from {sources[pid]})"
    return True, "LaTeX source"


def _weigh(ok: bool | None, text: str, failed: str, unknown: str,
           verdicts: tuple[list[str], list[str], list[str]], settings: SplitSettings,
           report: SplitsReport) -> None:
    """File one criterion's verdict as passed or failed (with its kind); an unknown one is
    counted and, with `unknown_evidence = keep`, passed with its text saying so."""
    passed, failures, kinds_failed = verdicts
    if ok is None:
        report.unknown_criteria[unknown] = report.unknown_criteria.get(unknown, 0) + 1
        if settings.unknown_evidence == "keep":
            ok = True
    if ok:
        passed.append(text)
        return
    failures.append(text)
    kinds_failed.append(failed if ok is False else unknown)


def compute_splits(papers: pl.DataFrame, views: pl.DataFrame | None,
                   records: pl.DataFrame | None, citations: pl.DataFrame | None,
                   documents: pl.DataFrame | None, settings: SplitSettings,
                   classifier: Classifier | None = None,
                   previous: pl.DataFrame | None = None,
                   earlier: pl.DataFrame | None = None,
                   duplicates: dict[str, Verdict] | None = None
                   ) -> tuple[pl.DataFrame, SplitsReport]:
    """The splits of ``papers``: a pure function of the tables and the settings (and, with
    sizes, of the previous assignment under the same cutoff and seed); ``earlier`` is the
    `paper_versions` table, where known; ``duplicates`` the policy's verdicts on papers of
    duplicate clusters (:mod:`.leakage`)."""
    duplicates = duplicates or {}
    report = SplitsReport()
    for column, dtype in (("categories", pl.List(pl.String)), ("latest_version", pl.Int32),
                          ("versions", PAPERS.polars["versions"])):
        if column not in papers.columns:
            papers = papers.with_columns(pl.lit(None, dtype).alias(column))
    papers = papers.select("arxiv_id", "published", "updated", "title", "abstract",
                           "categories", "latest_version", "versions").unique("arxiv_id")
    held = vault_versions(papers, earlier, settings.cutoff)
    early = held.join(papers.select("arxiv_id", "published"), on="arxiv_id")
    unknown = pl.col("revised") & pl.col("version").is_null()
    before = early.filter(~unknown)
    after = papers.filter(pl.col("published") >= settings.cutoff).sort("arxiv_id")
    report.post_cutoff = after.height
    if after.is_empty():
        report.warnings.append(f"no paper is published on or after the cutoff "
                               f"{settings.cutoff}: there are no targets")
    clean = clean_views(views) if views is not None else None
    view_gaps = (_view_gaps(clean.views, clean.problems) if clean is not None
                 else {})
    has_views = set(clean.views["arxiv_id"].to_list()) if clean is not None else set()

    late_views = _late_views(clean.views if clean is not None else None, papers,
                             before["arxiv_id"], settings.cutoff)
    if late_views:
        report.warnings.append(
            f"{len(late_views)} vault paper(s) have views read from a version written on or "
            "after the cutoff (documents and ideas ran at another cutoff): they are not "
            "indexed until those stages run at this one")
    rows: list[dict[str, Any]] = []
    for paper in early.filter(unknown).iter_rows(named=True):
        rows.append({"arxiv_id": paper["arxiv_id"], "split": EXCLUDED,
                     "published": paper["published"],
                     "reason": f"published {paper['published']}, before the cutoff, but its "
                               f"latest version is of {paper['updated']} and no source lists "
                               "its earlier versions: its one known text may hold "
                               "post-cutoff content, so it is neither indexed nor a target",
                     "_kinds": [REVISED]})
    for paper in before.iter_rows(named=True):
        reason = f"published {paper['published']}, before the cutoff"
        verdict = duplicates.get(paper["arxiv_id"])
        if verdict is not None:  # an alias: its canonical member is the vault's row
            rows.append({"arxiv_id": paper["arxiv_id"], "split": EXCLUDED,
                         "published": paper["published"], "version": paper["version"],
                         "reason": f"{reason}; {verdict.reason}, so not in the index",
                         "_kinds": [verdict.kind], "duplicate_of": verdict.duplicate_of})
            continue
        if paper["revised"]:
            reason += (f"; revised after it (v{paper['latest_version'] or '?'} of "
                       f"{paper['updated']}): the vault holds v{paper['version']} of "
                       f"{paper['created']}")
            if paper["note"]:
                reason += f" ({paper['note']})"
        if paper["arxiv_id"] not in has_views:
            reason += "; no views yet, so not in the index"
        elif paper["arxiv_id"] in late_views:
            reason += (f"; its views are of v{late_views[paper['arxiv_id']]}, written after "
                       "the cutoff, so not in the index")
        rows.append({"arxiv_id": paper["arxiv_id"], "split": VAULT, "reason": reason,
                     "published": paper["published"], "version": paper["version"]})

    ids = after["arxiv_id"].to_list()
    recs = _records_by_id(records, ids)
    batch = [ClassifierInput(p["arxiv_id"], p["title"], p["abstract"], recs.get(p["arxiv_id"]))
             for p in after.iter_rows(named=True)]
    hashes, kinds = _classify(batch, classifier or ExtractiveClassifier(), previous)
    covs = coverage(ids, before["arxiv_id"].to_list(), citations, documents)
    sources = latex_sources(documents) if settings.require_latex else None
    eligible = []
    for paper, kind in zip(after.iter_rows(named=True), kinds, strict=True):
        pid = paper["arxiv_id"]
        cov = covs[pid]
        report.citations_known += cov.cited is not None
        failures, kinds_failed, passed = [], [], [kind.reason()]
        verdicts = (passed, failures, kinds_failed)

        if pid not in has_views and pid not in view_gaps:
            failures.append("no views (the ideas stage has not decomposed it)")
            kinds_failed.append(NO_VIEWS)
        elif pid in view_gaps:
            failures.append(view_gaps[pid])
            kinds_failed += [k for k in (BAD_VIEWS, MISSING_VIEWS) if k in view_gaps[pid]]
        if not kind.methodological:
            failures.append(kind.reason())
            kinds_failed.append(f"not methodological: {kind.kind}")
        outside = _field_verdict(paper["categories"], settings.fields)
        if outside:
            failures.append(outside)
            kinds_failed.append(OUTSIDE_FIELDS)
        if settings.require_latex:
            _weigh(*_latex_verdict(pid, sources), NO_LATEX, LATEX_UNKNOWN, verdicts,
                   settings, report)
        covered, cov_text = _coverage_verdict(cov, settings.min_cited_in_vault)
        _weigh(covered, cov_text, FEW_CITED, CITATIONS_UNKNOWN, verdicts, settings,
               report)
        duplicate = duplicates.get(pid)
        if duplicate is not None:
            failures.append(duplicate.reason)
            kinds_failed.append(duplicate.kind)
        row = {"arxiv_id": pid, "published": paper["published"],
               "version": paper["latest_version"], "paper_kind": kind.kind,
               "classifier": kind.classifier, "kind_evidence": kind.evidence,
               "kind_input_sha256": hashes[pid], "cited_works": cov.cited,
               "cited_in_vault": cov.in_vault,
               "duplicate_of": duplicate.duplicate_of if duplicate else None}
        if failures:
            row |= {"split": EXCLUDED, "reason": "; ".join(failures), "_kinds": kinds_failed}
        else:
            row |= {"split": None, "reason": "; ".join(passed)}
            eligible.append(pid)
        rows.append(row)

    for criterion, count in sorted(report.unknown_criteria.items()):
        report.warnings.append(
            f"{count} post-cutoff paper(s) with {criterion}: "
            + ("kept as targets without that check (unknown_evidence = keep)"
               if settings.unknown_evidence == "keep" else "excluded (unknown_evidence = "
               "exclude)"))
    report.excluded_by_reason = _reason_counts(rows)
    assignment = _assign(eligible, settings, previous)
    for row in rows:
        if row["split"] is None:
            row["split"] = assignment[row["arxiv_id"]]
    if not rows:  # no metadata yet (PDFs alone, say): empty splits, not a crash
        report.warnings.append("no papers (no metadata in the raw zone): the splits are empty")
        return SPLITS.polars.to_frame(), report
    frame = pl.DataFrame(rows, schema_overrides={"published": pl.Date, "version": pl.Int32},
                         infer_schema_length=None)
    frame = frame.with_columns(pl.lit(settings.cutoff).alias("cutoff"),
                               pl.lit(settings.seed, pl.Int64).alias("seed"))
    for column in SPLITS.names:
        if column not in frame.columns:
            frame = frame.with_columns(pl.lit(None).alias(column))
    frame = frame.select(SPLITS.names).sort("arxiv_id")
    report.rows = frame.height
    report.counts = {s: int((frame["split"] == s).sum()) for s in SPLIT_NAMES}
    return frame, report


def _classify(batch: list[ClassifierInput], classifier: Classifier,
              previous: pl.DataFrame | None) -> tuple[dict[str, str], list[PaperKind]]:
    """Verdicts for the batch, reusing every previous verdict on the same input."""
    hashes = {p.arxiv_id: input_sha256(classifier.name, p) for p in batch}
    known: dict[str, PaperKind] = {}
    if previous is not None and "kind_input_sha256" in previous.columns:
        reusable = previous.filter(pl.col("kind_input_sha256").is_in(list(hashes.values()))
                                   & (pl.col("paper_kind") != UNCLASSIFIED))
        for row in reusable.iter_rows(named=True):
            if hashes.get(row["arxiv_id"]) == row["kind_input_sha256"]:
                known[row["arxiv_id"]] = PaperKind(row["paper_kind"], row["kind_evidence"],
                                                   row["classifier"])
    ask = [p for p in batch if p.arxiv_id not in known]
    known |= dict(zip([p.arxiv_id for p in ask], classifier(ask) if ask else [], strict=True))
    return hashes, [known[p.arxiv_id] for p in batch]


def _reason_counts(rows: list[dict[str, Any]]) -> dict[str, int]:
    """Excluded papers by kind of reason, most frequent first (for metadata): a paper counts
    under every criterion it failed, and a kind never carries a date or a count of its own,
    so the buckets stay few however many papers there are."""
    counts: dict[str, int] = {}
    for row in rows:
        for kind in dict.fromkeys(row.get("_kinds") or ()):
            counts[kind] = counts.get(kind, 0) + 1
    return dict(sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])))


def _assign(ids: list[str], settings: SplitSettings,
            previous: pl.DataFrame | None) -> dict[str, str]:
    if not settings.uses_sizes:
        return assign.by_fraction(ids, settings.seed, settings.validation, settings.test)
    before = {}
    if previous is not None and not previous.is_empty():
        same = previous.filter((pl.col("cutoff") == settings.cutoff)
                               & (pl.col("seed") == settings.seed))
        before = dict(same.select("arxiv_id", "split").iter_rows())
    return assign.by_size(ids, settings.seed, int(settings.validation), int(settings.test),
                          before)


def build_splits(paths: VaultPaths, settings: SplitSettings,
                 classifier: Classifier | None = None) -> SplitsReport:
    """Read the tables upstream, compute the splits, write the `splits` table."""
    store = paths.store
    papers = store.read_required(PAPERS, ("arxiv_id", "published", "updated", "title",
                                          "abstract", "categories"))
    views = store.read_optional(VIEWS)
    dates = leakage.member_dates(papers, store.read_optional(SUBMISSIONS))
    duplicates = leakage.verdicts(store.read_optional(DUPLICATE_CLUSTERS),
                                  store.read_optional(DUPLICATE_PAIRS), dates, settings.cutoff)
    frame, report = compute_splits(
        papers, views, store.read_optional(MASKED_RECORDS), store.read_optional(CITATIONS),
        store.read_optional(DOCUMENTS), settings, classifier, store.read_optional(SPLITS),
        store.read_optional(PAPER_VERSIONS), duplicates)
    if views is None:
        report.warnings.append("no views table: no paper can be a target yet")
    paths.store.write(SPLITS, frame)
    return report
