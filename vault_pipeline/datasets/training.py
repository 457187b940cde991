"""The `training_examples` table: for every target (train / validation / test, one partition
for all roles) and every producer role, the role's inputs and its reference artifact.

Roles read the same inputs, the target's problem setting and challenge; each is scored
against its own view of the target (seed paper): the gap finder against the research gap,
the innovator against the intuition, the report writer against the proposal. The cited ids
are what the citation-set F1 reward compares with."""

from __future__ import annotations

from dataclasses import dataclass, field

import polars as pl

from ..ids import id_expr
from ..paths import VaultPaths
from ..schemas import SPLITS, TRAINING_EXAMPLES
from ..splits.assign import TARGET_SPLITS
from ..splits.build import VAULT
from ..splits.inputs import clean_views, views_wide

ROLES: dict[str, str] = {"gap_finder": "research_gap", "innovator": "intuition",
                         "report_writer": "proposal"}
INPUT_VIEWS = ("problem_setting", "challenge")


@dataclass
class TrainingReport:
    rows: int = 0
    targets: int = 0
    by_role_split: dict[str, int] = field(default_factory=dict)
    targets_without_views: list[str] = field(default_factory=list)


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


def compute_training(splits: pl.DataFrame, views: pl.DataFrame, papers: pl.DataFrame,
                     records: pl.DataFrame | None,
                     citations: pl.DataFrame | None) -> tuple[pl.DataFrame, TrainingReport]:
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
    out = pl.concat(frames, how="diagonal_relaxed") if frames else base
    for column in TRAINING_EXAMPLES.names:
        if column not in out.columns:
            out = out.with_columns(pl.lit(None).alias(column))
    out = out.select(TRAINING_EXAMPLES.names).sort("role", "split", "arxiv_id")
    report.rows = out.height
    report.by_role_split = {f"{r}/{s}": n for r, s, n in
                            out.group_by("role", "split").len().sort("role", "split")
                            .iter_rows()}
    return out, report


def build_training(paths: VaultPaths) -> TrainingReport:
    """Read splits, views, papers (and records, citations where present); write the table."""
    store = paths.store
    splits = store.read_required(SPLITS, ("arxiv_id", "split", "cutoff", "seed"))
    views = store.read_required("views", ("arxiv_id", "view", "text"))
    papers = store.read_required("papers", ("arxiv_id", "title", "published"))
    frame, report = compute_training(splits, views, papers, store.read_optional("masked_records"),
                                     store.read_optional("citations"))
    store.write(TRAINING_EXAMPLES, frame)
    return report
