"""Every table of the vault, defined once: name, columns, Arrow types and what each column
means. Writers cast to these schemas, the README documents them, tests compare against them.
Tables are data here: the record columns come from the record models of
:mod:`vault_pipeline.records` (the ground floor), never from a stage."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import polars as pl
import pyarrow as pa

from vault_pipeline.records.arrow import model_columns
from vault_pipeline.records.idea import NULLABLE_FIELDS, IdeaRecord, idea_arrow_type
from vault_pipeline.records.masked import MaskedRecord


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

    @cached_property
    def arrow(self) -> pa.Schema:
        return pa.schema(
            [pa.field(c.name, c.type, nullable=c.nullable, metadata={"doc": c.doc})
             for c in self.columns],
            metadata={"table": self.name, "doc": self.doc},
        )

    @cached_property
    def _polars(self) -> pl.Schema:
        return pl.Schema(pl.from_arrow(self.empty()).schema)

    @property
    def polars(self) -> pl.Schema:
        """The Polars schema (a copy: `pl.Schema` is mutable; the conversion runs once)."""
        return pl.Schema(self._polars)

    @property
    def names(self) -> list[str]:
        return [c.name for c in self.columns]

    def empty(self) -> pa.Table:
        # not ``Schema.empty_table()``: it imports pandas, 0.4 s at every process start
        return pa.Table.from_batches([], schema=self.arrow)

    def markdown(self) -> str:
        """A Markdown table of the columns, as the README shows it."""
        lines = ["| column | type | meaning |", "|---|---|---|"]
        lines += [f"| `{c.name}` | `{c.type}` | {c.doc} |" for c in self.columns]
        return "\n".join(lines)


_str = pa.string()
_date = pa.date32()
_ts = pa.timestamp("us", tz="UTC")
_VERSION = pa.struct([pa.field("version", pa.int32()), pa.field("created", _date)])
_CHAT = pa.list_(pa.struct([pa.field("role", _str), pa.field("content", _str)]))  # turns

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
        Column("versions", pa.list_(_VERSION), "Every version the source lists, with the day "
               "it was created (snapshot `versions`, OAI `arXivRaw` `<version>`; from the "
               "API v1 and the entry's own version), oldest first; null when the source "
               "gives no history (OAI `arXiv`, `oai_dc`). What picks the version the vault "
               "holds of a paper revised after the cutoff."),
        Column("doi", _str, "DOI of the published version."),
        Column("journal_ref", _str, "Journal reference."),
        Column("comments", _str, "Authors' comments (pages, figures, venue)."),
        Column("license", _str, "License URL as arXiv states it."),
        Column("source", _str, "Raw file kind the winning row came from: `arxiv_api`, "
               "`oai_arXiv`, `oai_arXivRaw`, `oai_dc`, `arxiv_snapshot`.", False),
        Column("raw_sha256", _str, "sha256 of the raw file the winning row came from.", False),
    ),
)

PAPER_VERSIONS = TableSchema(
    "paper_versions",
    "Title and abstract of a paper's earlier versions, where a source gave them (an arXiv "
    "API answer for a versioned id `IDvK` describes version K): what the vault reads for a "
    "paper revised after the cutoff. The latest version's are in `papers`.",
    (
        Column("arxiv_id", _str, "Version-less arXiv id.", False),
        Column("version", pa.int32(), "The version described.", False),
        Column("created", _date, "Day the version was created.", False),
        Column("title", _str, "Title of that version, whitespace normalised.", False),
        Column("abstract", _str, "Abstract of that version, whitespace normalised.", False),
        Column("source", _str, "Raw file kind it came from.", False),
        Column("raw_sha256", _str, "sha256 of that raw file.", False),
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
    "References read from Semantic Scholar: one row per reference of a citing paper (an "
    "unresolved one too) and per paper listed as citing one, from the newest read of each "
    "list (every page of it).",
    (
        Column("citing_s2_id", _str, "Semantic Scholar paper id of the citing paper.", False),
        Column("citing_arxiv_id", _str, "arXiv id of the citing paper."),
        Column("citing_doi", _str, "DOI of the citing paper."),
        Column("cited_s2_id", _str, "Semantic Scholar paper id of the cited paper; null when "
               "S2 could not resolve the reference."),
        Column("cited_arxiv_id", _str, "arXiv id of the cited paper (version-less)."),
        Column("cited_doi", _str, "DOI of the cited paper."),
        Column("cited_position", pa.int32(), "Position of the reference in the citing paper's "
               "list (0 first): one row per reference, resolved or not."),
        Column("cited_title", _str, "Title of the reference as Semantic Scholar lists it."),
        Column("read_at", _date, "Day Semantic Scholar was read.", False),
        Column("raw_sha256", _str, "sha256 of the raw response.", False),
        Column("citing_date", _date, "Publication date of the citing paper, where Semantic "
               "Scholar gives one (`publicationDate`; for citation windows)."),
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
    "One row per paper (or per unidentified PDF/e-print), and one per OpenReview "
    "submission: its best full text as cleaned Markdown (LaTeX, else PDF, else the "
    "abstract), with status and reason.",
    (
        Column("arxiv_id", _str, "Version-less arXiv id; null for a file no id could be read "
               "from (status `unidentified` or a failure, keyed by `sha256`) and for an "
               "OpenReview submission's row."),
        Column("forum_id", _str, "OpenReview forum id of a submission's row: the text of its "
               "PDF fetched from OpenReview, else its OpenReview abstract with the reason; "
               "null for arXiv papers."),
        Column("version", pa.int32(), "arXiv version of the text: of the converted file "
               "(from its name or URL), or the version the abstract describes; for a paper "
               "revised after the cutoff never later than the last version before it (a "
               "later file is left out and named in `notes`); null if unknown."),
        Column("sha256", _str, "sha256 of the raw input the text comes from (for "
               "`abstract_only`, of the input that failed); null when there was none."),
        Column("source", _str, "Where the text comes from: `latex`, `pdf` or `abstract_only`.",
               False),
        Column("status", _str, "`ok`; `unidentified` (converted, no arXiv id); `no_source` "
               "(nothing to convert); or why the full text failed: `timeout`, `crashed`, "
               "`encrypted`, `corrupt`, `empty`, `too_large`, `unsupported`, `failed`.", False),
        Column("error", _str, "Why conversion failed, per input tried (`latex: ...; pdf: "
               "...`)."),
        Column("text", _str, "Cleaned Markdown body (references, appendix, citation "
               "markers, line numbers, headers and footers removed; captions kept as "
               "emphasised paragraphs), truncated."),
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
        Column("converter", _str, "`pymupdf4llm`, `pymupdf-fast`, `pylatexenc` or `abstract`."),
        Column("converter_version", _str, "Converter, cleaning and truncation versions: a "
               "conversion is reused only while input hash and this are unchanged."),
        Column("input_name", _str, "File name the input was imported or fetched as."),
        Column("identified_by", _str, "How the row's paper was found: `origin` or `name` (the "
               "id in the file's URL or name), `forum` (an OpenReview PDF or submission), "
               "`arxiv_stamp`, `doi`, `title` or `submission_title` (read from the PDF's "
               "content and matched against `papers` / `submissions`), `metadata` (a paper "
               "with no file); null when nothing matched (status `unidentified`)."),
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
        Column("converter", _str, "`pymupdf4llm`, `pymupdf-fast` or `pylatexenc`.", False),
        Column("converter_version", _str, "Converter, cleaning and truncation versions.", False),
        Column("attempted_at", _ts, "When.", False),
        Column("limits", _str, "Worker limits of the attempt (timeout, memory): a transient "
               "failure (`timeout`, `crashed`, `failed`) is tried again when they change."),
        Column("tries", pa.int32(), "Consecutive transient failures of this input (retried "
               "while under the retry budget)."),
        Column("identifiers", _str, "What the PDF's first page says the paper is, as JSON "
               "(`arxiv`: the margin stamp, `doi`, `title`, `head`: the page's opening), "
               "matched against `papers` and `submissions` when the file's name and origin "
               "carry no id."),
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
        Column("version", pa.int32(), "Version the vault holds: for a vault paper the last "
               "created before the cutoff (a paper revised after it is kept in that earlier "
               "version); for a target its latest; null when unknown."),
        Column("paper_kind", _str, "Classifier verdict for post-cutoff papers: "
               "`methodological`, `survey`, `position`, `dataset_benchmark`, `empirical`, "
               "`no_method_found`; null for vault papers."),
        Column("classifier", _str, "Which classifier decided (`extractive/3+paper-kind-lr/"
               "<weights>`: cue rules and learned model, or `llm:<backend>:<model>:"
               "<prompt version>`)."),
        Column("kind_evidence", _str, "What decided the verdict (the cue found, the learned "
               "model's score where no cue decided, or the LLM's evidence)."),
        Column("kind_input_sha256", _str, "sha256 of the classifier and what it read: a "
               "verdict is reused while this is unchanged (LLM answers are not asked twice)."),
        Column("cited_works", pa.int64(), "Cited works known from the `citations` table; "
               "null when unknown (then the threshold is not applied)."),
        Column("cited_in_vault", pa.int64(), "Of those, vault papers (with full text where "
               "the `documents` table exists)."),
        Column("duplicate_of", _str, "The record this paper duplicates, when the duplicates "
               "policy keeps it out: the canonical member it is an alias of, or the "
               "pre-cutoff member of its cluster (`duplicate_clusters`); else null."),
    ),
)

DUPLICATE_PAIRS = TableSchema(
    "duplicate_pairs",
    "Every match between two records of the same work, one row per pair and method: what "
    "makes every cluster traceable.",
    (
        Column("a", _str, "One record: a version-less arXiv id, `openreview:<forum id>` or "
               "`s2:<paper id>` (the smaller of the two).", False),
        Column("b", _str, "The other record, in the same forms.", False),
        Column("method", _str, "`exact_arxiv_id`, `exact_doi`, `exact_title_author`, "
               "`link_openreview`, `minhash_abstract`, `minhash_fulltext`, `semantic` or "
               "`views_ngram`.", False),
        Column("score", pa.float64(), "1 for exact matches and links; estimated Jaccard "
               "(MinHash), cosine (semantic) or shared n-gram share (views).", False),
        Column("evidence", _str, "What matched, in words (the key, the estimate and its "
               "parameters, the model).", False),
    ),
)

DUPLICATE_CLUSTERS = TableSchema(
    "duplicate_clusters",
    "One row per cluster of records of one work (two or more members): the canonical member "
    "is the one that may be retrieved or be a target, the others are aliases.",
    (
        Column("cluster_id", _str, "`dup-` and 16 hex digits of the sha256 of the sorted "
               "members (changes when the members do).", False),
        Column("canonical_id", _str, "The member that may be retrieved: the earliest arXiv "
               "paper (else the earliest record).", False),
        Column("members", pa.list_(_str), "Every member, sorted, the canonical one "
               "included.", False),
        Column("why", _str, "The pairs that joined them and why the canonical one was "
               "chosen.", False),
    ),
)

DUPLICATE_SIGNATURES = TableSchema(
    "duplicate_signatures",
    "What the duplicates stage compared, per record and method: the hash of the text, its "
    "MinHash signature or embedding. A refresh signs and compares only texts whose hash is "
    "not here.",
    (
        Column("id", _str, "Record id (as in `duplicate_pairs`).", False),
        Column("method", _str, "`minhash_abstract`, `minhash_fulltext`, `semantic` or "
               "`views_ngram`.", False),
        Column("params", _str, "Parameters and threshold the entry was made under; another "
               "value makes it new again.", False),
        Column("text_sha256", _str, "sha256 of the text compared.", False),
        Column("signature", pa.list_(pa.uint32()), "MinHash signature (MinHash methods)."),
        Column("vector", pa.list_(pa.float32()), "Unit embedding (semantic method)."),
    ),
)

VIEWS_INDEX = TableSchema(
    "views_index",
    "The retrieval index (LanceDB table `views_index` under `index/`, not Parquet): one row "
    "per vault paper and view, with its normalised embedding and a full-text index on "
    "`text`. Never holds a paper published on or after the cutoff.",
    (
        Column("arxiv_id", _str, "Version-less arXiv id.", False),
        Column("version", pa.int32(), "arXiv version the view was read from: created "
               "before the cutoff (null if the source gave no version number)."),
        Column("view", _str, "`problem_setting`, `challenge`, `research_gap`, `intuition` or "
               "`proposal`.", False),
        Column("text", _str, "The view's text (full-text indexed).", False),
        Column("published", _date, "Date of v1; always before the cutoff.", False),
        Column("version_created", _date, "Day the version the vault holds (the paper's last "
               "before the cutoff) was created: a session cut at `as_of` sees the row only "
               "when this is before it (null: unknown, never seen)."),
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
        Column("artifact", _str, "The role's reference artifact as JSON (`gaps`, "
               "`candidate` or `report`: `role_artifacts`); null when it was quarantined."),
        Column("artifact_citations", pa.list_(_str), "Vault ids the artifact cites: the "
               "reference citation set of the citation-set F1.", False),
        Column("messages", _CHAT, "Chat form (system, user, assistant) from the versioned "
               "role template; null without an artifact."),
        Column("prompt", _str, "The system and user text as one prompt."),
        Column("completion", _str, "The assistant text: the artifact JSON."),
        Column("template_version", _str, "Role template version (`gap_finder.v1`).", False),
        Column("evaluation_paper", pa.bool_(), "Whether an evaluation set uses this paper "
               "(left out of training exports by default).", False),
        Column("views_backend", _str, "Backend that produced the views."),
        Column("views_model", _str, "Model that produced the views."),
        Column("views_prompt_version", _str, "Prompt version of the views."),
        Column("cutoff", _date, "Cutoff of the split.", False),
        Column("seed", pa.int64(), "Seed of the split.", False),
    ),
)

def _ideas_columns() -> tuple[Column, ...]:
    """The record's fields as columns, from its pydantic models (defined once there)."""
    return tuple(Column(name, kind, doc, False) for name, kind, doc in
                 model_columns(MaskedRecord))


_READ_VERSION = (  # the paper and the version of it a record was read from
    Column("arxiv_id", _str, "Version-less arXiv id.", False),
    Column("version", pa.int32(), "arXiv version whose text was read (for a paper revised "
           "after the cutoff, the last version before it); null if unknown."),
)
_REJECTED = (  # a quarantined answer: why it was refused, and what it said last
    Column("reason", _str, "Why the last answer was rejected.", False),
    Column("reasons", pa.list_(_str), "Why each answer was rejected, in order.", False),
    Column("raw_answer", _str, "The last answer exactly as returned."),
)
_finding = pa.struct([pa.field("field", _str), pa.field("kind", _str),
                      pa.field("match", _str), pa.field("layer", _str)])
_PROVENANCE = (
    Column("backend", _str, "Backend that produced it: `extractive`, `openai`, `vllm` or "
           "`batch_file`.", False),
    Column("model", _str, "Model name (for `extractive`, its rule version).", False),
    Column("prompt_version", _str, "Prompt file version (`decompose.v2`); `none` for the "
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
        *_READ_VERSION,
        *_ideas_columns(),
        *_PROVENANCE,
        Column("schema_version", _str, "Record schema version.", False),
        Column("attempts", pa.int32(), "Answers asked for (1 + retries).", False),
        Column("leaky_answer", pa.bool_(), "Whether an answer for this paper stated a "
               "measured result (then retried or masked).", False),
        Column("masked_findings", pa.list_(_finding), "What the integrity gate removed from "
               "the accepted answer (field, kind, matched text, layer: `rules`, `source`, "
               "`judge`, `method`); empty when nothing was.", False),
        Column("tokens_in", pa.int64(), "Prompt tokens over all attempts (null: no model)."),
        Column("tokens_out", pa.int64(), "Completion tokens over all attempts."),
        Column("created_at", _ts, "When the record was produced.", False),
    ),
)

VIEWS = TableSchema(
    "views",
    "The views of every masked record (`problem_setting`, `challenge`, `research_gap`, "
    "`intuition`, `proposal`), derived by `vault_pipeline.ideas.views.derive_views`; a view "
    "the record has nothing substantive for has no row.",
    (
        *_READ_VERSION,
        Column("view", _str, "View name.", False),
        Column("text", _str, "View text: what the index embeds and roles read.", False),
        *_PROVENANCE,
        Column("views_version", _str, "Version of the view derivation.", False),
        Column("n_chars", pa.int32(), "Length of `text`.", False),
        Column("masked_findings", pa.list_(_finding), "What was removed from this view's "
               "text, with the layer that flagged it (`method`: the problem views' solution "
               "statements and method names); empty when none.", False),
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
        *_REJECTED,
        Column("finish_reason", _str, "Finish reason of the last answer (`length`: cut off "
               "at the token limit)."),
        Column("failed_at", _ts, "When it was quarantined.", False),
    ),
)

ROLE_ARTIFACTS = TableSchema(
    "role_artifacts",
    "One reference artifact per target and producer role, reconstructed from the paper and "
    "judged by the integrity gate: the gap finder's `gaps`, the innovator's `candidate`, the "
    "report writer's `report` (the masked record).",
    (
        Column("arxiv_id", _str, "The target paper.", False),
        Column("role", _str, "`gap_finder`, `innovator` or `report_writer`.", False),
        Column("artifact", _str, "`gaps`, `candidate` or `report`.", False),
        Column("split", _str, "The target's split.", False),
        Column("data", _str, "The artifact as JSON, valid against its schema "
               "(`vault_pipeline.datasets.artifacts`); null where the paper does not say.",
               False),
        Column("citations", pa.list_(_str), "Vault ids it cites (near-miss papers, source "
               "paper, resolved references), sorted: its citation set.", False),
        Column("unresolved_citations", pa.list_(_str), "Ids it cites that are not in the "
               "vault.", False),
        *_PROVENANCE[:4],
        Column("schema_version", _str, "Artifact schema version.", False),
        Column("attempts", pa.int32(), "Answers asked for.", False),
        Column("leaky_answer", pa.bool_(), "Whether an answer stated a result or the "
               "solution (then retried or masked).", False),
        Column("masked_findings", pa.list_(_finding), "What the integrity gate removed.",
               False),
        Column("created_at", _ts, "When it was made.", False),
    ),
)

ROLE_ARTIFACT_FAILURES = TableSchema(
    "role_artifact_failures",
    "Role artifacts rejected after every retry: quarantined with the last raw answer and the "
    "reasons, never dropped silently.",
    (
        Column("arxiv_id", _str, "The target paper.", False),
        Column("role", _str, "Producer role.", False),
        *_PROVENANCE[:4],
        *LLM_FAILURES.columns[-6:],
    ),
)

# Tables of an export only: the retrievable vault shipped with the training data.
EXPORT_VAULT_PAPERS = TableSchema(
    "vault/papers",
    "The retrievable vault's papers (published before the cutoff): record metadata, of the "
    "version the vault holds.",
    (
        *(c for c in PAPERS.columns if c.name in ("arxiv_id",)),
        Column("version", pa.int32(), "Version the vault holds (the last created before the "
               "cutoff); null if unknown."),
        Column("version_created", _date, "Day that version was created: a session cut at "
               "`as_of` sees the paper only when this is before it (null: never)."),
        Column("title", _str, "Title of that version; null for a paper revised after the "
               "cutoff whose earlier title no source gave (the later one is withheld)."),
        *(c for c in PAPERS.columns if c.name in ("published", "primary_category",
                                                  "categories", "license")),
        Column("evaluation_paper", pa.bool_(), "Whether an evaluation set uses it.", False),
    ),
)
EXPORT_VAULT_VIEWS = TableSchema(
    "vault/views",
    "The retrievable vault's views (pre-cutoff papers only): what retrieval-grounded roles "
    "search and cite.",
    (
        Column("arxiv_id", _str, "Version-less arXiv id.", False),
        Column("view", _str, "View name.", False),
        Column("text", _str, "View text.", False),
    ),
)
EXPORT_OPENAI = TableSchema(
    "openai",
    "Chat fine-tuning lines (`<role>/<split>.openai.jsonl`): one per example with a "
    "reference artifact.",
    (Column("messages", _CHAT, "System, user and assistant turns; the assistant turn is the "
            "artifact JSON.", False),),
)


def _idea_columns() -> tuple[Column, ...]:
    """The six parts as columns, from the pydantic model (defined once there)."""
    return tuple(Column(name, kind, doc, name in NULLABLE_FIELDS) for name, kind, doc in
                 model_columns(IdeaRecord))


def _idea_struct(name: str, doc: str) -> Column:
    return Column(name, idea_arrow_type(), doc)


EVAL_IDEAS = TableSchema(
    "eval_ideas",
    "The six-part idea of each OpenReview submission in scope of the evaluation sets (TLDR, "
    "motivation, research question, method, experimental setting, expected results), with "
    "every measured result withheld.",
    (
        Column("forum_id", _str, "OpenReview forum id of the submission.", False),
        Column("venue_id", _str, "Venue id.", False),
        *_idea_columns(),
        *_PROVENANCE,
        Column("schema_version", _str, "Idea record schema version.", False),
        Column("attempts", pa.int32(), "Answers asked for (1 + retries).", False),
        Column("leaky_answer", pa.bool_(), "Whether an answer stated a measured result (then "
               "retried or masked).", False),
        Column("masked_findings", pa.list_(_finding), "What the leak checker removed from "
               "the accepted answer; empty when nothing was.", False),
        Column("created_at", _ts, "When the idea was extracted.", False),
    ),
)

EVAL_IDEA_FAILURES = TableSchema(
    "eval_idea_failures",
    "Submissions whose idea extraction was rejected after every retry: quarantined with the "
    "last raw answer and the reasons (they are left out of the idea sets, and the cards say "
    "how many).",
    (
        Column("forum_id", _str, "OpenReview forum id.", False),
        Column("venue_id", _str, "Venue id.", False),
        *_PROVENANCE,
        Column("attempts", pa.int32(), "Answers asked for.", False),
        *_REJECTED,
        Column("finish_reason", _str, "Finish reason of the last answer."),
        Column("failed_at", _ts, "When it was quarantined.", False),
    ),
)

_SUBMISSION_COLUMNS = (
    Column("forum_id", _str, "OpenReview forum id.", False),
    Column("venue_id", _str, "Venue id, e.g. `ICLR.cc/2025/Conference`.", False),
    Column("year", pa.int32(), "Year of the venue."),
    Column("title", _str, "Title."),
    Column("abstract", _str, "Abstract."),
    Column("keywords", pa.list_(_str), "Author keywords."),
    Column("primary_area", _str, "Primary area, where the venue asks for one."),
    Column("author_tldr", _str, "TL;DR the authors gave on OpenReview, where given."),
)
_LABEL_DOC = ("`Reject`, `Poster`, `Spotlight` or `Oral` (`Withdrawn` / `Desk rejected` when "
              "the set labels them)")
_RATING_COLUMNS = (
    Column("ratings", pa.list_(pa.float64()), "Valid overall ratings of the official reviews, "
           "in review order."),
    Column("confidences", pa.list_(pa.float64()), "Reviewer confidences, aligned with "
           "`ratings` (null where a review gave none)."),
    Column("mean_rating", pa.float64(), "Mean of `ratings`; null without a valid rating."),
)

EVAL_POINTWISE = TableSchema(
    "eval_pointwise",
    "Point-wise idea set (InnoEval): submissions sampled per venue and decision label by a "
    "seeded quota, each with its six-part idea and its label in four, three and two classes.",
    (
        *_SUBMISSION_COLUMNS,
        Column("decision", _str, "Decision as the `submissions` table has it.", False),
        Column("label", _str, f"{_LABEL_DOC}.", False),
        Column("label_3class", _str, "`Reject`, `Poster` or `Highlight` (Spotlight, Oral).",
               False),
        Column("label_binary", _str, "`Reject` or `Accept`.", False),
        *_RATING_COLUMNS,
        _idea_struct("idea", "The six-part idea (no results)."),
        Column("idea_note", _str, "Why the idea is incomplete: the parts the submission "
               "does not state, or why its extraction was quarantined (then `idea` is "
               "null; the runs' idea tasks leave it out); null when complete."),
        Column("seed", pa.int64(), "Seed of the sample.", False),
    ),
)

EVAL_PAIRWISE = TableSchema(
    "eval_pairwise",
    "Pair-wise idea set (InnoEval): two submissions of one venue and a close topic with "
    "different labels, in random order; the better one (higher label) is recorded.",
    (
        Column("pair_id", _str, "Stable id of the pair (hash of its two forum ids).", False),
        Column("venue_id", _str, "Venue of both submissions.", False),
        Column("pair_type", _str, "`reject-oral` (easy), `poster-oral`, `reject-poster`, "
               "`poster-spotlight` (hard).", False),
        Column("difficulty", _str, "`easy` or `hard`.", False),
        Column("forum_id_a", _str, "First submission as presented.", False),
        Column("forum_id_b", _str, "Second submission as presented.", False),
        Column("label_a", _str, "Label of the first.", False),
        Column("label_b", _str, "Label of the second.", False),
        Column("better", _str, "`a` or `b`: which one has the higher label.", False),
        Column("better_forum_id", _str, "Forum id of the better one.", False),
        Column("similarity", pa.float64(), "Topic similarity of the two (cosine).", False),
        Column("similarity_method", _str, "`embedding:<model>` or `lexical-tfidf` (used only "
               "when asked for or when no embedder is installed).", False),
        Column("title_a", _str, "Title of the first."),
        Column("title_b", _str, "Title of the second."),
        Column("mean_rating_a", pa.float64(), "Mean reviewer rating of the first."),
        Column("mean_rating_b", pa.float64(), "Mean reviewer rating of the second."),
        _idea_struct("idea_a", "Six-part idea of the first."),
        _idea_struct("idea_b", "Six-part idea of the second."),
        Column("idea_note_a", _str, "Why the first one's idea is incomplete (as "
               "`eval_pointwise.idea_note`; `idea_a` null when quarantined)."),
        Column("idea_note_b", _str, "Why the second one's idea is incomplete (as "
               "`eval_pointwise.idea_note`; `idea_b` null when quarantined)."),
        Column("seed", pa.int64(), "Seed of the sample and of the order.", False),
    ),
)

EVAL_GROUPWISE = TableSchema(
    "eval_groupwise",
    "Group-wise idea set (InnoEval): one row per member of a group of same-topic submissions "
    "of one venue spanning labels (retrieval over a candidate pool, then reranking); the best "
    "idea and the full ranking are the labels.",
    (
        Column("group_id", _str, "Group id (venue and query).", False),
        Column("venue_id", _str, "Venue of every member.", False),
        Column("query_forum_id", _str, "The submission the group was retrieved for.", False),
        Column("forum_id", _str, "This member.", False),
        Column("is_query", pa.bool_(), "Whether this member is the query.", False),
        Column("position", pa.int32(), "Place of the member as presented (seeded shuffle, "
               "from 1).", False),
        Column("label", _str, "`Reject`, `Poster`, `Spotlight` or `Oral`.", False),
        Column("rank", pa.int32(), "Rank by label, 1 = best (one member per label, so no "
               "ties).", False),
        Column("is_best", pa.bool_(), "Whether this member is the best idea of the group.",
               False),
        Column("best_forum_id", _str, "Forum id of the group's best idea.", False),
        Column("ranking", pa.list_(_str), "Forum ids of the group, best first.", False),
        Column("similarity", pa.float64(), "Topic similarity to the query (1 for the query).",
               False),
        Column("final_score", pa.float64(), "Reranking score: similarity + area bonus + "
               "keyword weight x keyword overlap (the query's own: null)."),
        Column("retrieval_rank", pa.int32(), "Place among the reranked top-k (the query: "
               "null)."),
        Column("similarity_method", _str, "`embedding:<model>` or `lexical-tfidf`.", False),
        *_SUBMISSION_COLUMNS[2:],
        *_RATING_COLUMNS,
        _idea_struct("idea", "Six-part idea of this member."),
        Column("idea_note", _str, "Why the idea is incomplete: the parts the submission "
               "does not state, or why its extraction was quarantined (then `idea` is "
               "null; the runs' idea tasks leave it out); null when complete."),
        Column("seed", pa.int64(), "Seed of the query sample and of the order.", False),
    ),
)

_REVIEW_COLUMNS = (
    Column("forum_id", _str, "OpenReview forum id.", False),
    Column("venue_id", _str, "Venue id.", False),
    Column("number", pa.int64(), "Submission number within the venue."),
    Column("title", _str, "Title."),
    Column("abstract", _str, "Abstract."),
    Column("keywords", pa.list_(_str), "Author keywords."),
    Column("primary_area", _str, "Primary area."),
    Column("decision", _str, "Recorded decision; null while undecided."),
    Column("withdrawn", pa.bool_(), "Withdrawn or desk rejected.", False),
    Column("accepted", pa.bool_(), "The decision target: whether the paper was accepted "
           "(withdrawn and desk-rejected papers count as not accepted, as in seed 001); null "
           "while undecided."),
    *_RATING_COLUMNS[:2],
    Column("rated_reviews", pa.int32(), "Official reviews with a valid rating.", False),
    Column("review_count", pa.int32(), "Official reviews found (valid rating or not)."),
    Column("mean_rating", pa.float64(), "Mean reviewer rating: the ground truth.", False),
    Column("rating_sd", pa.float64(), "Sample standard deviation of the ratings (null with "
           "one rating)."),
    Column("score_bin", pa.int32(), "Integer score bin of the mean (floor by default).",
           False),
    Column("accept_by_threshold", pa.bool_(), "Whether the mean reaches the accept "
           "threshold.", False),
    Column("accept_threshold", pa.float64(), "The threshold (default 6).", False),
    Column("arxiv_id", _str, "arXiv id of the same paper, where matched."),
    Column("s2_id", _str, "Semantic Scholar paper id, where matched."),
    Column("citation_count", pa.int64(), "Citations counted by Semantic Scholar."),
    Column("influential_citation_count", pa.int64(), "Influential citations."),
    Column("citations_read_at", _date, "Day the count was read (counts change over time)."),
    Column("citation_match", _str, "How the Semantic Scholar record was matched, as in seed "
           "001: `doi`, `arxiv_id` or `title` (difflib ratio of normalised titles >= 0.90); "
           "null when unmatched."),
    Column("citation_title_ratio", pa.float64(), "The title ratio of a `title` match."),
)
_REPRESENTATION_COLUMNS = (
    Column("title_abstract", _str, "Input representation 1: title and abstract.", False),
    Column("full_text", _str, "Input representation 2: cleaned full text cut at the "
           "configured length (30,000 characters); the title and abstract when no full text "
           "was converted.", False),
    Column("full_text_source", _str, "`openreview_pdf` (the submission's own PDF from "
           "OpenReview, what seed 001 converted), `latex` or `pdf` (its arXiv match's), or "
           "`abstract_only`.", False),
    Column("full_text_truncated", pa.bool_(), "Whether the full text was cut.", False),
    Column("full_text_chars", pa.int64(), "Length of the cleaned full text before cutting."),
    Column("full_text_note", _str, "Why there is no full text, when there is none (the "
           "OpenReview PDF's or the arXiv document's failure, or no source at all)."),
    Column("seed", pa.int64(), "Seed of the sample.", False),
)

EVAL_REVIEW_POPULATION = TableSchema(
    "eval_review_population",
    "Review-paradigm scored population (seed 001): every submission of the venue with at "
    "least one valid reviewer rating; the mean rating is the ground truth.",
    _REVIEW_COLUMNS,
)

EVAL_REVIEW_STRATIFIED = TableSchema(
    "eval_review_stratified",
    "Review-paradigm stratified sample (seed 001): a seeded fixed number per integer score "
    "bin (default 30 in bins 2-8) and every paper of the sparse bins, with both input "
    "representations.",
    (*_REVIEW_COLUMNS, *_REPRESENTATION_COLUMNS,
     Column("nearest_anchors", pa.list_(_str), "Forum ids of the paper's nearest anchors "
            "(default 3) by cosine of abstract embeddings, most similar first: the Anchor "
            "Rating retrieval of seed 001."),
     Column("nearest_anchor_similarities", pa.list_(pa.float64()), "Their cosine "
            "similarities, aligned with `nearest_anchors`.")),
)

EVAL_REVIEW_ANCHORS = TableSchema(
    "eval_review_anchors",
    "Review-paradigm anchor set (seed 001): zero-variance papers (every reviewer gave the "
    "same rating) of an earlier venue, default ICLR 2024, for calibration.",
    (*_REVIEW_COLUMNS, *_REPRESENTATION_COLUMNS),
)

EVAL_CITATION_WINDOWS = TableSchema(
    "eval_citation_windows",
    "Citation counts as seed 001 measured them: one row per review-paradigm submission "
    "(population and anchors) matched to Semantic Scholar, with the citing papers dated "
    "within 12 and 17 months after its publication date, counted from the `citations` "
    "table, beside Semantic Scholar's total. The publication date is the OpenReview "
    "submission's creation day: every submission has one, one kind of date for the whole "
    "venue (the study closed each window on one day for all papers), while Semantic "
    "Scholar's `publicationDate` is missing for many records, is an arXiv date months "
    "before the venue for preprints, and is not stored by the vault.",
    (
        Column("forum_id", _str, "OpenReview forum id.", False),
        Column("venue_id", _str, "Venue id.", False),
        Column("title", _str, "Title."),
        Column("s2_id", _str, "Semantic Scholar paper id matched.", False),
        Column("citation_match", _str, "How it was matched: `doi`, `arxiv_id` or `title`."),
        Column("published", _date, "Publication date the windows start from: the OpenReview "
               "submission's `created` day."),
        Column("citations_12m", pa.int64(), "Citing papers dated on or before publication + "
               "12 months (day clamped to the month's end); null when unknown (see "
               "`window_note`)."),
        Column("citations_17m", pa.int64(), "The same within 17 months."),
        Column("citing_papers", pa.int64(), "Distinct citing papers in the `citations` table, "
               "dated or not.", False),
        Column("citing_undated", pa.int64(), "Of them, those without a usable date: counted "
               "here and in no window.", False),
        Column("citing_read_at", _date, "Newest day the citing papers were read."),
        Column("citation_count", pa.int64(), "Total citations counted by Semantic Scholar."),
        Column("citations_read_at", _date, "Day that total was read."),
        Column("window_note", _str, "Why a window is null or a lower bound; null when the "
               "counts are complete."),
    ),
)

EVAL_EXCLUDED = TableSchema(
    "eval_excluded",
    "What the evaluation sets left out, and why: unusable ratings, submissions without "
    "reviews or decisions, labels kept out, failed idea extractions, queries that found no "
    "group.",
    (
        Column("set_name", _str, "Set concerned (`ratings` concerns every set).", False),
        Column("venue_id", _str, "Venue id."),
        Column("forum_id", _str, "Submission."),
        Column("note_id", _str, "Review note, when one review is concerned."),
        Column("reason", _str, "Why it was left out.", False),
    ),
)

EVAL_CARDS = TableSchema(
    "eval_cards",
    "The data card of each evaluation set: metrics computed from the data (label and score "
    "distributions, ICC(1,1), ICC(1,k), the Spearman ceiling, pair and group counts, "
    "shortfalls) and the card itself.",
    (
        Column("set_name", _str, "Set: `pointwise`, `pairwise`, `groupwise`, "
               "`review_population`, `review_stratified`, `review_anchors`.", False),
        Column("table_name", _str, "Table holding the set.", False),
        Column("rows", pa.int64(), "Rows of the set.", False),
        Column("metrics", _str, "The card's metrics as JSON.", False),
        Column("card", _str, "The data card (Markdown).", False),
        Column("settings", _str, "Every setting the sets were built with, as JSON.", False),
        Column("settings_fingerprint", _str, "Short hash of the settings.", False),
        Column("built_at", _ts, "When the set was built.", False),
    ),
)

_METERED = (  # what a call spent: every attempt counts, a quarantined call's too
    Column("tokens_in", pa.int64(), "Prompt tokens of every attempt (re-asks and plain "
           "retries included), as reported."),
    Column("tokens_out", pa.int64(), "Completion tokens of every attempt."),
    Column("cost", pa.float64(), "Price of those tokens at the run's `price_in` / "
           "`price_out` (per million tokens); null when the run set no price (a summary: "
           "or another summarizer than the evaluator wrote it)."),
    Column("seconds", pa.float64(), "Seconds the backend spent on every attempt: each "
           "request's own time where the backend measures it (HTTP retries and back-off "
           "included), else its share of its batch's wall time."),
)

_SUMMARY_UNIT = (
    Column("summary_id", _str, "`<forum>:<kind>:<backend>/<model>`: one summary of one paper "
           "by one summarizer (a new text or prompt replaces it).", False),
    Column("input_hash", _str, "sha256 of everything the summary depends on (paper text, "
           "kind, prompt file, backend, model, generation settings).", False),
    Column("forum_id", _str, "Submission summarized (stratified review sample).", False),
    Column("kind", _str, "`vanilla` (one 200-300 word paragraph) or `objective` (Background, "
           "Method, Results, Limitations).", False),
    Column("backend", _str, "Backend that summarized (`extractive`: the paper's own "
           "sentences, offline).", False),
    Column("model", _str, "Summarizer model (or the extractive rules' version).", False),
    Column("prompt_version", _str, "Prompt file, e.g. `summary_vanilla.v1`.", False),
    Column("prompt_sha256", _str, "sha256 of the prompt file.", False),
    Column("source", _str, "Where the summarized text came from: `openreview_pdf`, `latex`, "
           "`pdf` or `abstract_only` (the set's `full_text_source`).", False),
    Column("attempts", pa.int32(), "Answers asked for (1 + re-asks).", False),
)

EVAL_SUMMARIES = TableSchema(
    "eval_summaries",
    "The review-paradigm study's summary inputs (seed 001): a vanilla and an objective "
    "summary of each sampled paper's full text, made by the backend with versioned prompts "
    "and cached by input hash (every evaluation run with the same summarizer reuses them).",
    (
        *_SUMMARY_UNIT,
        Column("summary", _str, "The summary as the evaluator reads it (objective: the four "
               "headings, each on its own line).", False),
        Column("answer", _str, "The schema-valid answer as JSON.", False),
        Column("words", pa.int32(), "Words of `summary`.", False),
        *_METERED,
        Column("created_at", _ts, "When it was made.", False),
    ),
)

EVAL_SUMMARY_FAILURES = TableSchema(
    "eval_summary_failures",
    "Summaries with no valid answer after every re-ask: quarantined with the last raw answer; "
    "the paper's summary inputs are then left out of the run (counted in its log).",
    (
        *_SUMMARY_UNIT,
        *_REJECTED,
        *_METERED,
        Column("failed_at", _ts, "When it was quarantined.", False),
    ),
)

_RUN_UNIT = (
    Column("unit_id", _str, "One call of the run: `<run>:<task>:<input>:<item>:<repeat>`.",
           False),
    Column("input_hash", _str, "sha256 of everything the answer depends on (run, backend, "
           "model, generation settings, prompt file, messages, schema, repeat).", False),
    Column("run_id", _str, "Evaluation run (one evaluator model).", False),
    Column("task", _str, "`direct`, `anchor`, `group`, `elo`, `swiss` (review paradigms on "
           "the stratified sample; a Swiss item id is `r<round>m<match>`), `idea_point3`, "
           "`idea_point2`, `idea_pair`, `idea_group` (InnoEval sets).", False),
    Column("input", _str, "What the evaluator read: `abstract` (title and abstract), "
           "`vanilla` / `objective` (the abstract with that summary of the full text, from "
           "`eval_summaries`) or `idea` (six-part idea).", False),
    Column("item_id", _str, "Forum, pair or group id the call is about.", False),
    Column("items", pa.list_(_str), "Forum ids as presented to the evaluator, in order "
           "(the first is `A` / `1`).", False),
    Column("repeat", pa.int32(), "Repeat number, from 0 (backend seed = run seed + "
           "repeat).", False),
    Column("backend", _str, "Backend that answered.", False),
    Column("model", _str, "Evaluator model.", False),
    Column("prompt_version", _str, "Prompt file, e.g. `review_direct.v1`.", False),
    Column("prompt_sha256", _str, "sha256 of the prompt file.", False),
    Column("attempts", pa.int32(), "Answers asked for (1 + re-asks after an invalid one).",
           False),
)

EVAL_RUN_CALLS = TableSchema(
    "eval_run_calls",
    "Every answered call of the evaluation runs, cached by input hash: a rerun asks nothing "
    "it has answered, a killed run resumes at its last finished batch.",
    (
        *_RUN_UNIT,
        Column("answer", _str, "The schema-valid answer as JSON.", False),
        *_METERED,
        Column("answered_at", _ts, "When the accepted answer came back from the backend "
               "(the order comparisons were returned in, for Elo's `elo_order = "
               "returned`)."),
        Column("created_at", _ts, "When it was answered.", False),
    ),
)

EVAL_RUN_CALL_FAILURES = TableSchema(
    "eval_run_call_failures",
    "Calls of the evaluation runs with no valid answer after every re-ask (invalid JSON, "
    "refusals, out-of-range values, transport errors after their plain retries): "
    "quarantined with the last raw answer and what their attempts spent; the metrics count "
    "them as missing.",
    (
        *_RUN_UNIT,
        *_REJECTED,
        *_METERED,
        Column("failed_at", _ts, "When it was quarantined.", False),
    ),
)

EVAL_RUN_PREDICTIONS = TableSchema(
    "eval_run_predictions",
    "One prediction per run, task, input, repeat and item, beside the human truth: a rating "
    "(direct, anchor, group), an Elo, Bradley-Terry or Swiss strength (min-max mapped onto "
    "1-10), a label, a choice or a rank.",
    (
        Column("run_id", _str, "Evaluation run.", False),
        Column("task", _str, "Task or derived score (`elo`, `bradley_terry`).", False),
        Column("input", _str, "Input representation: `abstract` (title and abstract), "
               "`vanilla` / `objective` (abstract and that summary) or `idea` (six-part "
               "idea).", False),
        Column("repeat", pa.int32(), "Repeat number.", False),
        Column("item_id", _str, "Forum, pair or group id.", False),
        Column("predicted", pa.float64(), "Predicted rating or strength (null for labels)."),
        Column("human", pa.float64(), "Human mean rating (review tasks)."),
        Column("predicted_label", _str, "Predicted label, choice (forum id) or ranking "
               "(forum ids joined by `,`)."),
        Column("human_label", _str, "The set's label, better forum id or ranking."),
        Column("difficulty", _str, "Pair difficulty (`easy` / `hard`) for pair tasks."),
    ),
)

EVAL_RUN_METRICS = TableSchema(
    "eval_run_metrics",
    "Metrics of each run as the studies report them, per task and input, with seeded "
    "bootstrap 95% intervals where computed.",
    (
        Column("run_id", _str, "Evaluation run.", False),
        Column("task", _str, "Task or derived score.", False),
        Column("input", _str, "Input representation.", False),
        Column("metric", _str, "e.g. `pearson`, `spearman`, `kendall`, `mse`, `inflation`, "
               "`auc`, at the accept threshold `accuracy`, `balanced_accuracy`, "
               "`always_reject_accuracy` (the baseline that rejects every paper), "
               "`accuracy_over_always_reject`, `kappa_fixed`, `f1_macro`, `f1_weighted`, "
               "`reject_recall`, at the base-rate-matched cut `matched_cut`, "
               "`kappa_matched`, `f1_macro_matched`; InnoEval `accuracy`, "
               "`pair_accuracy_easy`, `best_accuracy`, `ranking_kendall`.", False),
        Column("value", pa.float64(), "The value (null when undefined, e.g. one class)."),
        Column("ci_low", pa.float64(), "Bootstrap 2.5th percentile."),
        Column("ci_high", pa.float64(), "Bootstrap 97.5th percentile."),
        Column("n", pa.int64(), "Items the value is computed over.", False),
    ),
)

TOOL_CALLS = TableSchema(
    "tool_calls",
    "The agent tools' trajectory log: one row per call of a session (`vault_pipeline.access`), "
    "to join to rollouts by `session_id` and `seq`.",
    (
        Column("session_id", _str, "The session (a rollout's own id when it opened it).", False),
        Column("seq", pa.int64(), "Order of the call within its session, from 0.", False),
        Column("tool", _str, "Tool called (as given, an unknown name too).", False),
        Column("arguments", _str, "Arguments as JSON, as given.", False),
        Column("answer", _str, "The answer as JSON (an error answer too).", False),
        Column("paper_ids", pa.list_(_str), "Paper ids the answer showed.", False),
        Column("error", _str, "Error code of an error answer (`not_found`, `bad_arguments`...)."),
        Column("started_at", _ts, "When the call (or its batch) started.", False),
        Column("ms", pa.float64(), "Milliseconds until answered (a batch: the whole batch).",
               False),
        Column("as_of", _date, "The session's cutoff: it saw only versions created before it.",
               False),
        Column("target", _str, "The session's target paper, hidden with its near-duplicates."),
    ),
)

EVAL_RUN_TABLES = (EVAL_SUMMARIES, EVAL_SUMMARY_FAILURES, EVAL_RUN_CALLS, EVAL_RUN_CALL_FAILURES,
                   EVAL_RUN_PREDICTIONS, EVAL_RUN_METRICS)
"""What the `evaluation_runs` stage writes (its report reads them, and `eval_cards`)."""

ALL_TABLES: dict[str, TableSchema] = {
    t.name: t for t in (PAPERS, PAPER_VERSIONS, PAPERS_REJECTED, RAW_FILES, IMPORT_REJECTS,
                        SUBMISSIONS, REVIEWS, CITATIONS, CITATION_COUNTS, DOCUMENTS,
                        DOCUMENT_ATTEMPTS, DUPLICATE_PAIRS, DUPLICATE_CLUSTERS,
                        DUPLICATE_SIGNATURES, SPLITS, VIEWS_INDEX, TRAINING_EXAMPLES,
                        MASKED_RECORDS, VIEWS, LLM_FAILURES, ROLE_ARTIFACTS,
                        ROLE_ARTIFACT_FAILURES, EVAL_IDEAS, EVAL_IDEA_FAILURES,
                        EVAL_POINTWISE, EVAL_PAIRWISE, EVAL_GROUPWISE, EVAL_REVIEW_POPULATION,
                        EVAL_REVIEW_STRATIFIED, EVAL_REVIEW_ANCHORS, EVAL_CITATION_WINDOWS,
                        EVAL_EXCLUDED, EVAL_CARDS, *EVAL_RUN_TABLES, TOOL_CALLS)
}


if __name__ == "__main__":  # `python -m vault_pipeline.schemas > docs/tables.md`
    print("# Tables\n\nOne Parquet file per table under `$VAULT_HOME/tables/` (the index: a "
          "LanceDB table under `$VAULT_HOME/index/`). Generated from "
          "`vault_pipeline/schemas.py`, the one definition of every table.\n")
    for _table in ALL_TABLES.values():
        print(f"## `{_table.name}`\n\n{_table.doc}\n\n{_table.markdown()}\n")
    print("# Export-only tables\n")
    for _table in (EXPORT_VAULT_PAPERS, EXPORT_VAULT_VIEWS, EXPORT_OPENAI):
        print(f"## `{_table.name}`\n\n{_table.doc}\n\n{_table.markdown()}\n")
