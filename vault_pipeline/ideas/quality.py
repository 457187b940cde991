"""What a user checks on the ideas tables, as plain functions over the table store: the
asset checks call them, and so can anyone in a notebook."""

from __future__ import annotations

import polars as pl
from pydantic import ValidationError

from vault_pipeline.ideas.views import PROBLEM_VIEWS, VIEW_NAMES
from vault_pipeline.integrity.gate import PLAIN_TEXT, Gate, text_findings
from vault_pipeline.integrity.leaks import Finding
from vault_pipeline.integrity.method import method_leaks, method_terms
from vault_pipeline.pipeline.checks import Outcome
from vault_pipeline.records.masked import RECORD_FIELDS, MaskedRecord
from vault_pipeline.records.placeholders import is_placeholder
from vault_pipeline.schemas import LLM_FAILURES, MASKED_RECORDS, VIEWS
from vault_pipeline.store.tables import TableStore

PROVENANCE = ("backend", "model", "prompt_version", "input_hash", "input_source")


def leak_outcome(hits: list[tuple[str, str, Finding]], rows: int, what: str) -> Outcome:
    """The verdict of running the leak checker again over ``rows`` rows of ``what``: passed
    when nothing leaked; ``hits`` are (id, field, finding), the first ten shown."""
    examples = [f"{a} {p}: {f.kind} {f.match!r}" for a, p, f in hits[:10]]
    return Outcome(not hits, f"{len(hits)} leaked result(s) in {rows} {what}",
                   {"leaks": len(hits), what: rows, "examples": examples})


def record_leak_findings(store: TableStore) -> Outcome:
    """No field of any final record states a measured result, names its method in a problem
    field or addresses a model (the gate's deterministic layers run again: rules, method,
    instructions; the same whatever backend made the record)."""
    frame = store.read_optional(MASKED_RECORDS)
    if frame is None:
        return Outcome(True, "no masked_records table yet", {"leaks": 0})
    hits = []
    gate = Gate()
    for row in frame.select(["arxiv_id", *RECORD_FIELDS]).iter_rows(named=True):
        data = {k: row[k] for k in RECORD_FIELDS}
        hits += [(row["arxiv_id"], path, f) for path, f in gate.findings(data)]
    return leak_outcome(hits, frame.height, "records")


def view_leak_findings(store: TableStore) -> Outcome:
    frame = store.read_optional(VIEWS)
    if frame is None:
        return Outcome(True, "no views table yet", {"leaks": 0})
    gate = Gate(PLAIN_TEXT)
    hits = [(a, v, f) for a, v, text in frame.select(["arxiv_id", "view", "text"]).iter_rows()
            for f in text_findings(text, gate)]
    return leak_outcome(hits, frame.height, "views")


def records_valid(store: TableStore) -> Outcome:
    """Every row is a valid record with its provenance, one per paper."""
    frame = store.read_optional(MASKED_RECORDS)
    if frame is None:
        return Outcome(True, "no masked_records table yet")
    invalid = []
    for row in frame.select(["arxiv_id", *RECORD_FIELDS]).iter_rows(named=True):
        try:
            MaskedRecord.model_validate({k: row[k] for k in RECORD_FIELDS})
        except ValidationError as exc:
            invalid.append(f"{row['arxiv_id']}: {exc.errors()[0]['msg']}")
    missing = frame.filter(pl.any_horizontal(pl.col(c).is_null() for c in PROVENANCE)).height
    dupes = frame.height - frame.get_column("arxiv_id").n_unique()
    passed = not invalid and not missing and not dupes
    return Outcome(passed, f"{len(invalid)} invalid, {missing} without provenance, {dupes} "
                           "duplicated ids",
                   {"invalid": len(invalid), "missing_provenance": missing,
                    "duplicated_ids": dupes, "examples": invalid[:10]})


def views_complete(store: TableStore) -> Outcome:
    """Each record has its five views, each with substantive content; a view the record had
    nothing for is absent and counted here (such a paper is never a target)."""
    recs, vws = store.read_optional(MASKED_RECORDS), store.read_optional(VIEWS)
    if recs is None or vws is None:
        return Outcome(recs is None, "views missing" if recs is not None else "no records yet")
    expected = recs.select("arxiv_id", "input_hash").join(
        pl.DataFrame({"view": list(VIEW_NAMES)}), how="cross")
    present = vws.filter(~pl.col("text").map_elements(is_placeholder, pl.Boolean)).select(
        "arxiv_id", "input_hash", "view")
    missing = expected.join(present, on=["arxiv_id", "input_hash", "view"], how="anti")
    extra = vws.height - present.join(expected, on=["arxiv_id", "input_hash", "view"],
                                      how="semi").height
    by_view = dict(missing.group_by("view").len().iter_rows())
    complete = recs.height - missing.get_column("arxiv_id").n_unique()
    examples = [f"{a} {v}" for a, _, v in missing.head(10).iter_rows()]
    rate = missing.height / expected.height if expected.height else 0.0
    return Outcome(missing.is_empty() and extra == 0,
                   f"{missing.height} of {expected.height} views empty or missing "
                   f"({rate:.1%}; {complete} of {recs.height} records complete), {extra} "
                   "stale or extra",
                   {"missing": missing.height, "placeholder_rate": round(rate, 4),
                    "complete_records": complete, "extra": extra,
                    "missing_by_view": by_view, "examples": examples})


def problem_views_method_free(store: TableStore) -> Outcome:
    """No problem view (`problem_setting`, `challenge`) states the solution or names the
    paper's method (the method audit run again on the final table)."""
    recs, vws = store.read_optional(MASKED_RECORDS), store.read_optional(VIEWS)
    if recs is None or vws is None:
        return Outcome(True, "no views yet", {"method_leaks": 0})
    terms = {row["arxiv_id"]: method_terms(row) for row in
             recs.select("arxiv_id", "title", "key_novelty", "method").iter_rows(named=True)}
    problem = vws.filter(pl.col("view").is_in(PROBLEM_VIEWS))
    hits = [(a, v, f) for a, v, text in problem.select("arxiv_id", "view", "text").iter_rows()
            for f in method_leaks(text, terms.get(a, []))]
    removed = sum(1 for row in vws.filter(pl.col("view").is_in(PROBLEM_VIEWS))
                  .get_column("masked_findings").to_list()
                  for f in row or [] if f["layer"] == "method")
    examples = [f"{a} {v}: {f.kind} {f.match!r}" for a, v, f in hits[:10]]
    rate = len({(a, v) for a, v, _ in hits}) / problem.height if problem.height else 0.0
    return Outcome(not hits, f"{len(hits)} method leak(s) in {problem.height} problem views "
                             f"({rate:.1%}); {removed} sentence(s) removed while deriving them",
                   {"method_leaks": len(hits), "problem_views": problem.height,
                    "rate": round(rate, 4), "removed_at_derivation": removed,
                    "examples": examples})


def quarantine_rate(store: TableStore, limit: float) -> Outcome:
    """Share of papers quarantined in `llm_failures`; warned above ``limit``."""
    recs, fails = store.read_optional(MASKED_RECORDS), store.read_optional(LLM_FAILURES)
    n_records = recs.height if recs is not None else 0
    n_failed = fails.height if fails is not None else 0
    total = n_records + n_failed
    rate = n_failed / total if total else 0.0
    reasons: dict[str, int] = {}
    if fails is not None and n_failed:
        kinds = fails.get_column("reason").str.extract(r"^([^:(]+)", 1)
        reasons = dict(kinds.value_counts().iter_rows())
    return Outcome(rate <= limit, f"{n_failed} of {total} papers quarantined "
                                  f"({rate:.1%}; limit {limit:.0%})",
                   {"quarantined": n_failed, "rate": round(rate, 4), "by_reason": reasons})
