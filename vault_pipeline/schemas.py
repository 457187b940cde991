"""Every table of the vault, defined once: name, columns, Arrow types and what each column
means. Writers cast to these schemas, the README documents them, tests compare against them."""

from __future__ import annotations

from dataclasses import dataclass

import polars as pl
import pyarrow as pa


@dataclass(frozen=True)
class Column:
    name: str
    type: pa.DataType
    doc: str
    nullable: bool = True


@dataclass(frozen=True)
class TableSchema:
    name: str
    doc: str
    columns: tuple[Column, ...]

    @property
    def arrow(self) -> pa.Schema:
        return pa.schema(
            [pa.field(c.name, c.type, nullable=c.nullable, metadata={"doc": c.doc})
             for c in self.columns],
            metadata={"table": self.name, "doc": self.doc},
        )

    @property
    def polars(self) -> pl.Schema:
        return pl.Schema(pl.from_arrow(self.arrow.empty_table()).schema)

    @property
    def names(self) -> list[str]:
        return [c.name for c in self.columns]

    def empty(self) -> pa.Table:
        return self.arrow.empty_table()

    def markdown(self) -> str:
        """A Markdown table of the columns, as the README shows it."""
        lines = ["| column | type | meaning |", "|---|---|---|"]
        lines += [f"| `{c.name}` | `{c.type}` | {c.doc} |" for c in self.columns]
        return "\n".join(lines)


_str = pa.string()
_date = pa.date32()
_ts = pa.timestamp("us", tz="UTC")

PAPERS = TableSchema(
    "papers",
    "One row per arXiv paper, parsed from every raw file; the newest version wins.",
    (
        Column("arxiv_id", _str, "Version-less arXiv id; old-style ids (`hep-th/9901001`) kept "
               "exactly, a subject class in them (`math.GT/0309136`) dropped.", False),
        Column("latest_version", pa.int32(), "Highest version seen (`vN`), null if no source "
               "said (OAI `arXiv`, `oai_dc`)."),
        Column("title", _str, "Title, whitespace normalised.", False),
        Column("abstract", _str, "Abstract, whitespace normalised.", False),
        Column("authors", pa.list_(_str), "Author names, `Forenames Surname`, in order.", False),
        Column("categories", pa.list_(_str), "arXiv categories, primary first; null if the "
               "source has none (`oai_dc`)."),
        Column("primary_category", _str, "Primary arXiv category."),
        Column("published", _date, "Date of v1.", False),
        Column("updated", _date, "Date of the latest version.", False),
        Column("doi", _str, "DOI of the published version."),
        Column("journal_ref", _str, "Journal reference."),
        Column("comments", _str, "Authors' comments (pages, figures, venue)."),
        Column("license", _str, "License URL as arXiv states it."),
        Column("source", _str, "Raw file kind the winning row came from: `arxiv_api`, "
               "`oai_arXiv`, `oai_arXivRaw`, `oai_dc`, `arxiv_snapshot`.", False),
        Column("raw_sha256", _str, "sha256 of the raw file the winning row came from.", False),
    ),
)

PAPERS_REJECTED = TableSchema(
    "papers_rejected",
    "Records (or whole raw files) that could not become a `papers` row, with the reason.",
    (
        Column("raw_sha256", _str, "sha256 of the raw file.", False),
        Column("source", _str, "Raw file kind.", False),
        Column("position", pa.int64(), "Line number in the raw file (JSON lines, XML); null "
               "when the whole file failed."),
        Column("record_id", _str, "Identifier as found in the record, if any."),
        Column("reason", _str, "Why it was rejected.", False),
        Column("snippet", _str, "Up to 200 characters of the offending input."),
    ),
)

RAW_FILES = TableSchema(
    "raw_files",
    "The raw zone's manifest: one row per stored file (content-addressed, never overwritten).",
    (
        Column("sha256", _str, "sha256 of the bytes as received; the file's identity.", False),
        Column("kind", _str, "What the content is: `arxiv_api`, `oai_pmh`, `arxiv_snapshot`, "
               "`pdf`.", False),
        Column("wrapper", _str, "How the content is wrapped: `recorded_http` (a recorded "
               "`{url, status_code, body}` response), `gzip`, or null."),
        Column("formats", _str, "Metadata formats seen in it (`arXiv`, `arXivRaw`, `dc`, "
               "`arxiv_api`, `arxiv_snapshot`)."),
        Column("path", _str, "Path relative to the raw zone.", False),
        Column("size_bytes", pa.int64(), "Size in bytes.", False),
        Column("original_name", _str, "File name it was imported or fetched as."),
        Column("origin", _str, "Where it came from: `import:<path>` or a URL."),
        Column("records", pa.int64(), "Records counted when checked at import (XML pages); "
               "null for streams not counted up front."),
        Column("received_at", _ts, "When it entered the raw zone.", False),
    ),
)

IMPORT_REJECTS = TableSchema(
    "import_rejects",
    "Files `vault import` kept out of the raw zone, with the reason.",
    (
        Column("path", _str, "Path as given to `vault import`.", False),
        Column("sha256", _str, "sha256 of the file, if it could be read."),
        Column("reason", _str, "Why it was kept out.", False),
        Column("rejected_at", _ts, "When.", False),
    ),
)

SUBMISSIONS = TableSchema(
    "submissions",
    "One row per OpenReview submission (forum), newest version of the note; ratings and "
    "decision gathered from its replies.",
    (
        Column("forum_id", _str, "OpenReview forum (submission note) id.", False),
        Column("venue_id", _str, "Venue, e.g. `ICLR.cc/2025/Conference`.", False),
        Column("number", pa.int64(), "Submission number within the venue."),
        Column("title", _str, "Title, whitespace normalised."),
        Column("abstract", _str, "Abstract, whitespace normalised."),
        Column("authors", pa.list_(_str), "Author names; null while the venue hides them."),
        Column("keywords", pa.list_(_str), "Author keywords."),
        Column("primary_area", _str, "Primary area, where the venue asks for one."),
        Column("tldr", _str, "TL;DR, where given."),
        Column("venue", _str, "Venue string the note carries (`ICLR 2025 Oral`, `Submitted to "
               "ICLR 2025`)."),
        Column("venueid", _str, "Venue group the note sits in (accepted, rejected, withdrawn, "
               "desk-rejected groups differ)."),
        Column("decision", _str, "`Accept (oral)`, `Accept (spotlight)`, `Accept (poster)`, "
               "`Accept`, `Reject`, `Withdrawn`, `Desk rejected`; null while undecided."),
        Column("ratings", pa.list_(pa.float64()), "Overall rating of each official review, in "
               "review order."),
        Column("mean_rating", pa.float64(), "Mean of `ratings`; null without a rated review."),
        Column("confidences", pa.list_(pa.float64()), "Reviewer confidence of each review."),
        Column("review_count", pa.int32(), "Official reviews found.", False),
        Column("arxiv_id", _str, "arXiv id of the same paper, when a title and author match "
               "against `papers` is confident; else null."),
        Column("arxiv_match", _str, "How `arxiv_id` was matched (`title+author`), or null."),
        Column("pdf", _str, "OpenReview PDF path, where public."),
        Column("created", _ts, "When the submission was created."),
        Column("modified", _ts, "Last modification of the note."),
        Column("raw_sha256", _str, "sha256 of the raw page the winning note came from.", False),
    ),
)

REVIEWS = TableSchema(
    "reviews",
    "Official reviews, meta-reviews and decisions of OpenReview submissions, one row per "
    "reply note (newest version).",
    (
        Column("note_id", _str, "Reply note id.", False),
        Column("forum_id", _str, "Submission (forum) it belongs to.", False),
        Column("venue_id", _str, "Venue id.", False),
        Column("kind", _str, "`review`, `meta_review` or `decision`.", False),
        Column("invitation", _str, "Invitation the reply answered (names differ per venue "
               "and year).", False),
        Column("rating", pa.float64(), "Overall rating (the leading number of `6: marginally "
               "above...` or a plain number)."),
        Column("confidence", pa.float64(), "Reviewer confidence."),
        Column("soundness", pa.float64(), "Soundness sub-score."),
        Column("presentation", pa.float64(), "Presentation sub-score."),
        Column("contribution", pa.float64(), "Contribution sub-score."),
        Column("other_scores", _str, "Other numeric sub-scores as JSON (`quality`, `clarity`, "
               "`significance`, `originality`, ...)."),
        Column("decision", _str, "Decision or recommendation text (decisions, meta-reviews)."),
        Column("text", _str, "The reply's text fields as Markdown (`## summary` ...)."),
        Column("signatures", pa.list_(_str), "Signatures (anonymised reviewer groups)."),
        Column("created", _ts, "When the reply was posted."),
        Column("modified", _ts, "Last modification of the reply."),
        Column("raw_sha256", _str, "sha256 of the raw page the reply came from.", False),
    ),
)

CITATIONS = TableSchema(
    "citations",
    "References read from Semantic Scholar: one row per (citing, cited) pair, from the newest "
    "read of the citing paper's references.",
    (
        Column("citing_s2_id", _str, "Semantic Scholar paper id of the citing paper.", False),
        Column("citing_arxiv_id", _str, "arXiv id of the citing paper."),
        Column("citing_doi", _str, "DOI of the citing paper."),
        Column("cited_s2_id", _str, "Semantic Scholar paper id of the cited paper; null when "
               "S2 could not resolve the reference."),
        Column("cited_arxiv_id", _str, "arXiv id of the cited paper (version-less)."),
        Column("cited_doi", _str, "DOI of the cited paper."),
        Column("read_at", _date, "Day Semantic Scholar was read.", False),
        Column("raw_sha256", _str, "sha256 of the raw response.", False),
    ),
)

CITATION_COUNTS = TableSchema(
    "citation_counts",
    "Citation counts from Semantic Scholar, one row per paper, newest read wins.",
    (
        Column("s2_id", _str, "Semantic Scholar paper id.", False),
        Column("arxiv_id", _str, "arXiv id (version-less)."),
        Column("doi", _str, "DOI."),
        Column("title", _str, "Title as Semantic Scholar has it."),
        Column("year", pa.int32(), "Publication year as Semantic Scholar has it."),
        Column("citation_count", pa.int64(), "Citations counted by Semantic Scholar."),
        Column("influential_citation_count", pa.int64(), "Influential citations."),
        Column("reference_count", pa.int64(), "References counted by Semantic Scholar."),
        Column("read_at", _date, "Day the count was read (counts change over time).", False),
        Column("raw_sha256", _str, "sha256 of the raw response.", False),
    ),
)

DOCUMENTS = TableSchema(
    "documents",
    "One row per paper (or per unidentified PDF/e-print): its best full text as cleaned "
    "Markdown (LaTeX, else PDF, else the abstract), with status and reason.",
    (
        Column("arxiv_id", _str, "Version-less arXiv id; null for a file no id could be read "
               "from (status `unidentified` or a failure, keyed by `sha256`)."),
        Column("version", pa.int32(), "arXiv version of the converted file (from its name or "
               "URL), if known."),
        Column("sha256", _str, "sha256 of the raw input the text comes from (for "
               "`abstract_only`, of the input that failed); null when there was none."),
        Column("source", _str, "Where the text comes from: `latex`, `pdf` or `abstract_only`.",
               False),
        Column("status", _str, "`ok`; `unidentified` (converted, no arXiv id); `no_source` "
               "(nothing to convert); or why the full text failed: `timeout`, `crashed`, "
               "`encrypted`, `corrupt`, `empty`, `too_large`, `unsupported`, `failed`.", False),
        Column("error", _str, "Why conversion failed, per input tried (`latex: ...; pdf: "
               "...`)."),
        Column("text", _str, "Cleaned Markdown body (references, appendix, captions, "
               "citation markers, line numbers, headers and footers removed), truncated."),
        Column("references", _str, "The references section (or the e-print's `.bbl`)."),
        Column("appendix", _str, "Appendices and other material after the references, "
               "cleaned."),
        Column("n_pages", pa.int32(), "Pages of the PDF (null for LaTeX and abstracts)."),
        Column("n_chars", pa.int64(), "Length of the cleaned body before truncation."),
        Column("truncated", pa.bool_(), "Whether `text` was cut to the configured limit."),
        Column("hidden_chars", pa.int64(), "Characters of hidden text dropped (white, tiny, "
               "invisible: a prompt-injection vector)."),
        Column("notes", _str, "What was repaired, skipped or dropped on the way."),
        Column("duration_ms", pa.int64(), "Conversion time of the winning input, in ms."),
        Column("converter", _str, "`pymupdf4llm`, `pylatexenc` or `abstract`."),
        Column("converter_version", _str, "Converter, cleaning and truncation versions: a "
               "conversion is reused only while input hash and this are unchanged."),
        Column("input_name", _str, "File name the input was imported or fetched as."),
        Column("converted_at", _ts, "When the text was produced."),
    ),
)

DOCUMENT_ATTEMPTS = TableSchema(
    "document_attempts",
    "Every conversion of a raw PDF or e-print with the current converter versions, failed or "
    "not: what makes `documents` incremental (never convert the same input twice).",
    (
        Column("sha256", _str, "sha256 of the input file.", False),
        Column("kind", _str, "`pdf` or `latex`.", False),
        Column("arxiv_id", _str, "arXiv id read from its name or URL, if any."),
        Column("input_name", _str, "File name it was imported or fetched as."),
        Column("status", _str, "Conversion status (`ok`, `timeout`, `crashed`, ...).", False),
        Column("error", _str, "Why it failed."),
        Column("n_pages", pa.int32(), "Pages (PDF)."),
        Column("n_chars", pa.int64(), "Cleaned body length before truncation."),
        Column("duration_ms", pa.int64(), "Conversion time in ms."),
        Column("converter", _str, "`pymupdf4llm` or `pylatexenc`.", False),
        Column("converter_version", _str, "Converter, cleaning and truncation versions.", False),
        Column("attempted_at", _ts, "When.", False),
    ),
)

def _ideas_columns() -> tuple[Column, ...]:
    """The record's fields as columns, from its pydantic models (defined once there)."""
    from .ideas.arrow import model_columns
    from .ideas.record import MaskedRecord

    return tuple(Column(name, kind, doc, False) for name, kind, doc in
                 model_columns(MaskedRecord))


_finding = pa.struct([pa.field("field", _str), pa.field("kind", _str),
                      pa.field("match", _str)])
_PROVENANCE = (
    Column("backend", _str, "Backend that produced it: `extractive`, `openai`, `vllm` or "
           "`batch_file`.", False),
    Column("model", _str, "Model name (for `extractive`, its rule version).", False),
    Column("prompt_version", _str, "Prompt file version (`decompose.v1`); `none` for the "
           "extractive backend, which uses no prompt.", False),
    Column("input_hash", _str, "sha256 of the paper input, backend, model, prompt, schema "
           "and generation settings: the same hash is never processed twice.", False),
    Column("input_source", _str, "What was read: `latex`, `pdf` or `abstract_only` (title "
           "and abstract alone).", False),
    Column("input_note", _str, "Why the paper was decomposed from its abstract alone."),
)

MASKED_RECORDS = TableSchema(
    "masked_records",
    "One results-masked record per paper: what the authors set out to do and to test, with "
    "every measured result removed.",
    (
        Column("arxiv_id", _str, "Version-less arXiv id.", False),
        *_ideas_columns(),
        *_PROVENANCE,
        Column("schema_version", _str, "Record schema version.", False),
        Column("attempts", pa.int32(), "Answers asked for (1 + retries).", False),
        Column("leaky_answer", pa.bool_(), "Whether an answer for this paper stated a "
               "measured result (then retried or masked).", False),
        Column("masked_findings", pa.list_(_finding), "What the leak checker removed from "
               "the accepted answer (field, kind, matched text); empty when nothing was.",
               False),
        Column("tokens_in", pa.int64(), "Prompt tokens over all attempts (null: no model)."),
        Column("tokens_out", pa.int64(), "Completion tokens over all attempts."),
        Column("created_at", _ts, "When the record was produced.", False),
    ),
)

VIEWS = TableSchema(
    "views",
    "The five views of every masked record (`problem_setting`, `challenge`, `research_gap`, "
    "`intuition`, `proposal`), derived by `vault_pipeline.ideas.views.derive_views`.",
    (
        Column("arxiv_id", _str, "Version-less arXiv id.", False),
        Column("view", _str, "View name.", False),
        Column("text", _str, "View text: what the index embeds and roles read.", False),
        *_PROVENANCE,
        Column("views_version", _str, "Version of the view derivation.", False),
        Column("n_chars", pa.int32(), "Length of `text`.", False),
        Column("masked_findings", pa.list_(_finding), "Leaks removed from this view's text; "
               "empty when none.", False),
    ),
)

LLM_FAILURES = TableSchema(
    "llm_failures",
    "Papers whose answers were rejected after every retry: quarantined with the last raw "
    "answer and the reasons, never dropped silently.",
    (
        Column("arxiv_id", _str, "Version-less arXiv id.", False),
        *_PROVENANCE,
        Column("attempts", pa.int32(), "Answers asked for.", False),
        Column("reason", _str, "Why the last answer was rejected.", False),
        Column("reasons", pa.list_(_str), "Why each answer was rejected, in order.", False),
        Column("raw_answer", _str, "The last answer exactly as returned."),
        Column("finish_reason", _str, "Finish reason of the last answer (`length`: cut off "
               "at the token limit)."),
        Column("failed_at", _ts, "When it was quarantined.", False),
    ),
)

SPLITS = TableSchema(
    "splits",
    "Every paper once: `vault` (published before the cutoff: retrievable), a target split "
    "(`train`, `validation`, `test`, shared by every role) or `excluded`, with the reason.",
    (
        Column("arxiv_id", _str, "Version-less arXiv id.", False),
        Column("split", _str, "`vault`, `train`, `validation`, `test` or `excluded`.", False),
        Column("reason", _str, "Why: the date against the cutoff; for targets the method "
               "evidence and cited-work share; for excluded papers every criterion failed.",
               False),
        Column("cutoff", _date, "Cutoff date: papers published before it form the vault.",
               False),
        Column("seed", pa.int64(), "Seed of the hash that splits targets.", False),
        Column("published", _date, "Date of v1 (what is compared with the cutoff).", False),
        Column("paper_kind", _str, "Classifier verdict for post-cutoff papers: "
               "`methodological`, `survey`, `position`, `dataset_benchmark`, `empirical`, "
               "`no_method_found`; null for vault papers."),
        Column("classifier", _str, "Which classifier decided (`extractive/1`, or "
               "`llm:<backend>:<model>:<prompt version>`)."),
        Column("kind_evidence", _str, "What decided the verdict (the cue found, or the LLM's "
               "evidence)."),
        Column("kind_input_sha256", _str, "sha256 of the classifier and what it read: a "
               "verdict is reused while this is unchanged (LLM answers are not asked twice)."),
        Column("cited_works", pa.int64(), "Cited works known from the `citations` table; "
               "null when unknown (then the threshold is not applied)."),
        Column("cited_in_vault", pa.int64(), "Of those, vault papers (with full text where "
               "the `documents` table exists)."),
    ),
)

VIEWS_INDEX = TableSchema(
    "views_index",
    "The retrieval index (LanceDB table `views_index` under `index/`, not Parquet): one row "
    "per vault paper and view, with its normalised embedding and a full-text index on "
    "`text`. Never holds a paper published on or after the cutoff.",
    (
        Column("arxiv_id", _str, "Version-less arXiv id.", False),
        Column("view", _str, "`problem_setting`, `challenge`, `research_gap`, `intuition` or "
               "`proposal`.", False),
        Column("text", _str, "The view's text (full-text indexed).", False),
        Column("published", _date, "Date of v1; always before the cutoff.", False),
        Column("primary_category", _str, "Primary arXiv category."),
        Column("categories", pa.list_(_str), "arXiv categories, primary first."),
        Column("archives", pa.list_(_str), "Archives of the categories (`cs`, `math`, "
               "`hep-th`): field filters match a category or a whole archive."),
        Column("text_sha256", _str, "sha256 of `text`: a view is embedded again only when it "
               "changes.", False),
        Column("vector", pa.list_(pa.float32()), "Unit-length embedding (a fixed-size list of "
               "the model's dimension).", False),
    ),
)

TRAINING_EXAMPLES = TableSchema(
    "training_examples",
    "One row per target and producer role: the role's inputs (problem setting and challenge "
    "of the target) and its reference artifact, in the target's split.",
    (
        Column("role", _str, "`gap_finder`, `innovator` or `report_writer`.", False),
        Column("split", _str, "`train`, `validation` or `test` (one partition for all "
               "roles).", False),
        Column("arxiv_id", _str, "The target paper.", False),
        Column("title", _str, "Title of the target.", False),
        Column("published", _date, "Date of v1 (on or after the cutoff).", False),
        Column("primary_category", _str, "Primary arXiv category."),
        Column("categories", pa.list_(_str), "arXiv categories, primary first."),
        Column("license", _str, "The paper's license as arXiv states it (its text is under "
               "this license)."),
        Column("problem_setting", _str, "Input: the `problem_setting` view.", False),
        Column("challenge", _str, "Input: the `challenge` view.", False),
        Column("reference_view", _str, "Which view is the reference: `research_gap`, "
               "`intuition` or `proposal`.", False),
        Column("reference", _str, "Reference artifact: the text of that view.", False),
        Column("reference_citations", pa.list_(_str), "arXiv ids the target cites (citations "
               "table and resolved record references), sorted.", False),
        Column("citations_in_vault", pa.list_(_str), "Those of them in the vault (what a "
               "retrieval-grounded answer can cite).", False),
        Column("views_backend", _str, "Backend that produced the views."),
        Column("views_model", _str, "Model that produced the views."),
        Column("views_prompt_version", _str, "Prompt version of the views."),
        Column("cutoff", _date, "Cutoff of the split.", False),
        Column("seed", pa.int64(), "Seed of the split.", False),
    ),
)

def _ideas_columns() -> tuple[Column, ...]:
    """The record's fields as columns, from its pydantic models (defined once there)."""
    from .ideas.arrow import model_columns
    from .ideas.record import MaskedRecord

    return tuple(Column(name, kind, doc, False) for name, kind, doc in
                 model_columns(MaskedRecord))


ALL_TABLES: dict[str, TableSchema] = {
    t.name: t for t in (PAPERS, PAPERS_REJECTED, RAW_FILES, IMPORT_REJECTS,
                        SUBMISSIONS, REVIEWS, CITATIONS, CITATION_COUNTS, DOCUMENTS,
                        DOCUMENT_ATTEMPTS, SPLITS, VIEWS_INDEX, TRAINING_EXAMPLES,
                        MASKED_RECORDS, VIEWS, LLM_FAILURES)
}


if __name__ == "__main__":  # `python -m vault_pipeline.schemas`: the README's table section
    for _table in ALL_TABLES.values():
        print(f"### `{_table.name}`\n\n{_table.doc}\n\n{_table.markdown()}\n")
