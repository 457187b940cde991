"""The `training_examples` table: for every target (train / validation / test, one partition
for all roles) and every producer role, the role's inputs and its reference artifact.

Roles read the same inputs, the target's problem setting and challenge; each is scored
against its own reference artifact (`role_artifacts`: the gaps, the candidate, the report),
with that artifact's citation set for the citation-set F1. The matching view of the target
stays in `reference` for text-only use. `messages` / `prompt` / `completion` are the same
example in the forms trainers read, from the versioned role templates."""

from __future__ import annotations

import functools
from dataclasses import dataclass, field

import polars as pl

from vault_pipeline.duplicates.decontamination import decontaminate
from vault_pipeline.duplicates.settings import DuplicatesSettings
from vault_pipeline.ids import id_expr
from vault_pipeline.llm.prompting import read_sections
from vault_pipeline.schemas import ROLE_ARTIFACTS, SPLITS, TRAINING_EXAMPLES
from vault_pipeline.splits.assign import TARGET_SPLITS
from vault_pipeline.splits.build import VAULT
from vault_pipeline.splits.contamination import evaluation_papers
from vault_pipeline.splits.inputs import clean_views, views_wide
from vault_pipeline.store.paths import VaultPaths

ROLES: dict[str, str] = {"gap_finder": "research_gap", "innovator": "intuition",
                         "report_writer": "proposal"}
INPUT_VIEWS = ("problem_setting", "challenge")
TEMPLATES = {role: f"{role}.v1" for role in ROLES}  # versioned role templates


@functools.lru_cache(maxsize=8)
def _template(version: str) -> dict[str, str]:
    return read_sections(version, ("system", "user"), "vault_pipeline.datasets",
                         "templates")[0]


def role_messages(role: str, problem_setting: str, challenge: str,
                  artifact: str | None = None) -> list[dict[str, str]]:
    """System and user turns of a role (and the assistant turn: the artifact, if given)."""
    sections = _template(TEMPLATES[role])
    user = (sections["user"].replace("{{problem_setting}}", problem_setting)
            .replace("{{challenge}}", challenge))
    turns = [{"role": "system", "content": sections["system"]},
             {"role": "user", "content": user}]
    return turns + ([{"role": "assistant", "content": artifact}] if artifact else [])


def _chat_columns(row: dict) -> dict:
    turns = role_messages(row["role"], row["problem_setting"], row["challenge"],
                          row["artifact"])
    has = row["artifact"] is not None
    return {"messages": turns if has else None,
            "prompt": f"{turns[0]['content']}\n\n{turns[1]['content']}" if has else None,
            "completion": row["artifact"]}


@dataclass
class TrainingReport:
    rows: int = 0
    targets: int = 0
    by_role_split: dict[str, int] = field(default_factory=dict)
    targets_without_views: list[str] = field(default_factory=list)
    decontamination: dict[str, object] = field(default_factory=dict)


def cited_ids(targets: list[str], records: pl.DataFrame | None,
              citations: pl.DataFrame | None) -> pl.DataFrame:
    """arxiv_id → sorted arXiv ids it cites, from the citations table and the resolved
    references of its masked record."""
    parts = [pl.DataFrame(schema={"arxiv_id": pl.String, "cited": pl.String})]
    if citations is not None and {"citing_arxiv_id", "cited_arxiv_id"} <= set(citations.columns):
        parts.append(citations.select(id_expr("citing_arxiv_id").alias("arxiv_id"),
                                      id_expr("cited_arxiv_id").alias("cited")))
    if records is not None and "references" in records.columns:
        parts.append(records.select("arxiv_id", pl.col("references").list.eval(
            pl.element().struct.field("arxiv_id"))).explode("references")
            .select("arxiv_id", id_expr("references").alias("cited")))
    pairs = (pl.concat(parts).drop_nulls().filter(pl.col("arxiv_id").is_in(targets))
             .unique().sort("arxiv_id", "cited"))
    return pairs.group_by("arxiv_id").agg(pl.col("cited").sort())


def _provenance(views: pl.DataFrame) -> pl.DataFrame:
    columns = [c for c in ("backend", "model", "prompt_version") if c in views.columns]
    first = views.group_by("arxiv_id").agg(pl.col(c).drop_nulls().first() for c in columns)
    for c in ("backend", "model", "prompt_version"):
        if c not in first.columns:
            first = first.with_columns(pl.lit(None, pl.String).alias(c))
    return first.select("arxiv_id", *(pl.col(c).alias(f"views_{c}")
                                      for c in ("backend", "model", "prompt_version")))


def _artifacts(artifacts: pl.DataFrame | None) -> pl.DataFrame:
    """arxiv_id, role → artifact JSON and its citation set."""
    if artifacts is None:
        return pl.DataFrame(schema={"arxiv_id": pl.String, "role": pl.String,
                                    "artifact": pl.String,
                                    "artifact_citations": pl.List(pl.String)})
    return artifacts.select("arxiv_id", "role", pl.col("data").alias("artifact"),
                            pl.col("citations").alias("artifact_citations"))


def compute_training(splits: pl.DataFrame, views: pl.DataFrame, papers: pl.DataFrame,
                     records: pl.DataFrame | None, citations: pl.DataFrame | None,
                     artifacts: pl.DataFrame | None = None,
                     evaluation: set[str] | None = None
                     ) -> tuple[pl.DataFrame, TrainingReport]:
    report = TrainingReport()
    targets = splits.filter(pl.col("split").is_in(TARGET_SPLITS)).select(
        "arxiv_id", "split", "cutoff", "seed")
    ids = targets["arxiv_id"].to_list()
    report.targets = len(ids)
    clean = clean_views(views).views.filter(pl.col("arxiv_id").is_in(ids))
    wide = views_wide(clean)
    complete = wide.drop_nulls([*INPUT_VIEWS, *ROLES.values()])
    report.targets_without_views = sorted(set(ids) - set(complete["arxiv_id"].to_list()))
    vault = set(splits.filter(pl.col("split") == VAULT)["arxiv_id"].to_list())
    cited = cited_ids(ids, records, citations).with_columns(
        pl.col("cited").list.eval(pl.element().filter(pl.element().is_in(list(vault))))
        .alias("in_vault"))
    paper_cols = ["arxiv_id", "title", "published", "primary_category", "categories",
                  "license"]
    base = (targets.join(complete, on="arxiv_id", how="inner")
            .join(papers.select([c for c in paper_cols if c in papers.columns]),
                  on="arxiv_id", how="left")
            .join(cited, on="arxiv_id", how="left")
            .join(_provenance(clean), on="arxiv_id", how="left")
            .with_columns(pl.col("cited").fill_null(pl.lit([], pl.List(pl.String))),
                          pl.col("in_vault").fill_null(pl.lit([], pl.List(pl.String)))))
    frames = [base.with_columns(pl.lit(role).alias("role"),
                                pl.lit(view).alias("reference_view"),
                                pl.col(view).alias("reference"),
                                pl.col("cited").alias("reference_citations"),
                                pl.col("in_vault").alias("citations_in_vault"))
              for role, view in ROLES.items()]
    out = (pl.concat(frames, how="diagonal_relaxed")
           .join(_artifacts(artifacts), on=["arxiv_id", "role"], how="left")
           .with_columns(pl.col("artifact_citations").fill_null(pl.lit([], pl.List(pl.String))),
                         pl.col("role").replace_strict(TEMPLATES).alias("template_version"),
                         pl.col("arxiv_id").is_in(sorted(evaluation or ()))
                         .alias("evaluation_paper")))
    chat = [_chat_columns(r) for r in out.select(
        "role", "problem_setting", "challenge", "artifact").iter_rows(named=True)]
    kinds = TRAINING_EXAMPLES.polars
    chat_frame = pl.DataFrame(chat, schema={k: kinds[k] for k in ("messages", "prompt",
                                                                  "completion")})
    out = out.with_columns(*chat_frame.get_columns())
    for column in TRAINING_EXAMPLES.names:
        if column not in out.columns:
            out = out.with_columns(pl.lit(None).alias(column))
    out = out.select(TRAINING_EXAMPLES.names).sort("role", "split", "arxiv_id")
    report.rows = out.height
    report.by_role_split = {f"{r}/{s}": n for r, s, n in
                            out.group_by("role", "split").len().sort("role", "split")
                            .iter_rows()}
    return out, report


def build_training(paths: VaultPaths, overlap: DuplicatesSettings | None = None
                   ) -> TrainingReport:
    """Read splits, views, papers (and records, citations, role artifacts and evaluation sets
    where present); write the table, without the training targets whose views hold more
    than the threshold of a held-out target's n-grams (``overlap``: the duplicates settings;
    their defaults when not given)."""
    store = paths.store
    splits = store.read_required(SPLITS, ("arxiv_id", "split", "cutoff", "seed"))
    views = store.read_required("views", ("arxiv_id", "view", "text"))
    papers = store.read_required("papers", ("arxiv_id", "title", "published"))
    frame, report = compute_training(splits, views, papers, store.read_optional("masked_records"),
                                     store.read_optional("citations"),
                                     store.read_optional(ROLE_ARTIFACTS.name),
                                     evaluation_papers(paths))
    found = decontaminate(splits, views, overlap or DuplicatesSettings())
    removed = found.against_training["query"].implode()
    frame = frame.filter(~(pl.col("split").eq("train") & pl.col("arxiv_id").is_in(removed)))
    report.decontamination = found.summary()
    report.rows = frame.height
    store.write(TRAINING_EXAMPLES, frame)
    return report
