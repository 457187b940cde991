"""`vault export OUT_DIR`: the training datasets as files a trainer loads in one line.

Layout: ``<role>/<split>.parquet`` and ``<role>/<split>.jsonl`` for each producer role and
target split (``<role>/<split>.openai.jsonl``, chat lines for fine-tuning services, with
``openai-jsonl``), ``vault/`` (the retrievable vault: pre-cutoff papers and their views),
``splits.parquet`` (the whole partition, with reasons), ``README.md`` (the
data card, whose YAML header lets `datasets.load_dataset(OUT_DIR, role)` find the files) and
``manifest.json`` (tables, row counts, schemas, sha256 of every file, cutoff, seed,
provenance, project version). The evaluation sets, when built, go to ``evaluation/<set>/``
(`vault_pipeline.datasets.evaluation`). The export is written in a scratch folder next to OUT_DIR
and renamed into place, so OUT_DIR is either the previous export or the new one, never half.
Every file is readable by other users (0644, folders 0755). Papers an evaluation set uses are
left out of the training files unless asked for (`include_evaluation`)."""

from __future__ import annotations

import json
import logging
import shutil
import tempfile
from dataclasses import dataclass, replace
from pathlib import Path

import polars as pl

from vault_pipeline.audit.report import current_report
from vault_pipeline.datasets.card import card_disagreements, data_card
from vault_pipeline.datasets.card_facts import read_facts
from vault_pipeline.datasets.evaluation import add_evaluation_sets
from vault_pipeline.datasets.manifest import (
    INTEGRITY_FILE,
    MANIFEST,
    FileEntry,
    build_manifest,
    verify_export,
    write_manifest,
    write_pair,
)
from vault_pipeline.datasets.training import ROLES
from vault_pipeline.duplicates.decontamination import decontaminate
from vault_pipeline.duplicates.settings import DuplicatesSettings
from vault_pipeline.errors import VaultError
from vault_pipeline.index.lance_index import TABLE, index_dir, index_metadata_of
from vault_pipeline.papers.versions import text_before, text_dates, vault_versions
from vault_pipeline.schemas import (
    EXPORT_OPENAI,
    EXPORT_VAULT_PAPERS,
    EXPORT_VAULT_VIEWS,
    PAPER_VERSIONS,
    SPLITS,
    TRAINING_EXAMPLES,
    TableSchema,
)
from vault_pipeline.splits.assign import TARGET_SPLITS
from vault_pipeline.splits.build import VAULT
from vault_pipeline.splits.contamination import evaluation_papers, mark
from vault_pipeline.store.atomic import fresh_dir
from vault_pipeline.store.paths import VaultPaths, is_url

log = logging.getLogger(__name__)

FORMATS = ("jsonl", "openai-jsonl")  # beside Parquet, which is always written


@dataclass(frozen=True)
class ExportReport:
    out_dir: Path | str  # a URL when published to an object store
    files: int
    rows: dict[str, int]
    cutoff: str
    seed: int
    evaluation_excluded: list[str]  # target papers left out: an evaluation set uses them


def _write_openai(frame: pl.DataFrame, folder: Path, stem: str) -> tuple[Path, int]:
    """One `{"messages": [...]}` line per example with a reference artifact."""
    chat = frame.filter(pl.col("messages").is_not_null()).select("messages")
    target = folder / f"{stem}.openai.jsonl"
    chat.write_ndjson(target)
    return target, chat.height


def _vault_tables(paths: VaultPaths, splits: pl.DataFrame,
                  evaluation: set[str]) -> tuple[pl.DataFrame, pl.DataFrame]:
    """The retrievable vault: pre-cutoff papers' metadata and their views."""
    ids = splits.filter(pl.col("split") == VAULT).select("arxiv_id")
    papers = paths.store.read_optional("papers")
    views = paths.store.read_optional("views")
    kept = ids if papers is None else ids.join(papers, on="arxiv_id", how="inner")
    if papers is not None and not splits.is_empty():  # the held version's title, never later
        cutoff = splits["cutoff"][0]
        held = vault_versions(papers, paths.store.read_optional(PAPER_VERSIONS), cutoff)
        kept = kept.drop("version", strict=False).join(
            held.select("arxiv_id", "version", pl.col("created").alias("version_created"),
                        "revised", pl.col("title").alias("_held")),
            on="arxiv_id", how="left").with_columns(
            title=pl.when(pl.col("revised").fill_null(False)).then("_held")
            .otherwise("title"))
        if views is not None:
            views = _written_before(views, papers, cutoff)
    for column in EXPORT_VAULT_PAPERS.names:
        if column not in kept.columns:
            kept = kept.with_columns(pl.lit(None, pl.String).alias(column))
    kept = mark(kept, evaluation).select(EXPORT_VAULT_PAPERS.names).sort("arxiv_id")
    texts = (pl.DataFrame(schema=EXPORT_VAULT_VIEWS.polars) if views is None else
             views.join(ids, on="arxiv_id", how="semi").select(EXPORT_VAULT_VIEWS.names)
             .drop_nulls("text").unique(["arxiv_id", "view"], keep="first")
             .sort("arxiv_id", "view"))
    return kept, texts


NO_INDEX = ("the index does not exist yet: materialize it first (vault materialize --select "
            "index), or export without the index")


def _written_before(views: pl.DataFrame, papers: pl.DataFrame, cutoff) -> pl.DataFrame:
    """The views read from a version written before the cutoff (as the index keeps them)."""
    if "version" not in views.columns:
        views = views.with_columns(version=pl.lit(None, pl.Int32))
    dated = text_dates(views, papers)
    return dated.filter(text_before(cutoff)).select(views.columns)


def _index_snapshot(paths: VaultPaths, staging: Path) -> list[FileEntry]:
    """A copy of the LanceDB index (vault views with vectors) under `vault/index/`; it can
    be large, so it is written only on request."""
    target = staging / "vault" / "index" / f"{TABLE}.lance"
    if paths.remote:
        from vault_pipeline.index.snapshot import fetch_index

        fetch_index(f"{paths.remote}/index/{TABLE}.lance", target)
    else:
        source = index_dir(paths) / f"{TABLE}.lance"
        if not source.is_dir():
            raise VaultError(NO_INDEX)
        shutil.copytree(source, target)
    return [FileEntry.of(staging, f, "vault/index", None) for f in sorted(target.rglob("*"))
            if f.is_file()]


def _check_target(out_dir: Path, overwrite: bool) -> None:
    if out_dir.exists() and not out_dir.is_dir():
        raise VaultError(f"{out_dir} exists and is not a folder")
    if out_dir.is_dir() and any(out_dir.iterdir()):
        if not (out_dir / MANIFEST).exists():
            raise VaultError(f"{out_dir} is not empty and holds no export: choose another "
                             "folder")
        if not overwrite:
            raise VaultError(f"{out_dir} already holds an export: pass --overwrite to "
                             "replace it")


def _export_remote(paths: VaultPaths, url: str, overwrite: bool, **options) -> ExportReport:
    """Build and verify the export in the local scratch, then publish it to ``url``."""
    from vault_pipeline.datasets.publish import check_remote_target, publish_export

    check_remote_target(url, overwrite)  # refused before any work, as a local folder is
    paths.scratch.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="export-", dir=paths.scratch) as folder:
        report = export_datasets(paths, Path(folder) / "export", **options)
        published = publish_export(Path(report.out_dir), url, overwrite)
    return replace(report, out_dir=published)


def _leakage(paths: VaultPaths, splits: pl.DataFrame,
             overlap: DuplicatesSettings | None) -> dict[str, object]:
    """The decontamination figures and the duplicates policy's counts, for the card."""
    views = paths.store.read_optional("views", ["arxiv_id", "view", "text"])
    found = decontaminate(splits, views if views is not None else
                          pl.DataFrame(schema={"arxiv_id": pl.String, "view": pl.String,
                                               "text": pl.String}),
                          overlap or DuplicatesSettings()).summary()
    kept_out = splits.filter(pl.col("duplicate_of").is_not_null())
    early = int(kept_out["reason"].str.contains("pre-cutoff duplicate").sum())
    found["policy"] = {"pre-cutoff duplicates": early, "aliases": kept_out.height - early}
    return found


def export_datasets(paths: VaultPaths, out_dir: Path | str, overwrite: bool = False,
                    index_info: dict[str, str] | None = None,
                    formats: tuple[str, ...] = ("jsonl",),
                    include_evaluation: bool = False,
                    include_index: bool = False,
                    overlap: DuplicatesSettings | None = None) -> ExportReport:
    """Write the export of the vault's current `training_examples` and `splits` (to a
    local folder, or to an object-store URL through :mod:`.publish`); ``overlap``: the
    duplicates settings the decontamination figures of the card are counted under (their
    defaults when not given)."""
    unknown = set(formats) - set(FORMATS)
    if unknown:
        raise VaultError(f"unknown export format {sorted(unknown)[0]!r}; choose from "
                         f"{', '.join(FORMATS)}")
    if isinstance(out_dir, str) and is_url(out_dir):
        return _export_remote(paths, out_dir, overwrite, index_info=index_info,
                              formats=formats, include_evaluation=include_evaluation,
                              include_index=include_index)
    out_dir = Path(out_dir).expanduser().resolve()
    _check_target(out_dir, overwrite)
    examples = paths.store.read_required(TRAINING_EXAMPLES, TRAINING_EXAMPLES.names)
    splits = paths.store.read_required(SPLITS, SPLITS.names)
    if splits.is_empty():  # a vault of PDFs alone: empty datasets, not a failed run
        log.warning("the splits table is empty (no paper metadata yet): the datasets are empty")
    evaluation = evaluation_papers(paths)
    examples = mark(examples, evaluation)
    excluded = [] if include_evaluation else sorted(
        set(examples.filter(pl.col("evaluation_paper"))["arxiv_id"].to_list()))
    examples = examples.filter(~pl.col("arxiv_id").is_in(excluded))
    out_dir.parent.mkdir(parents=True, exist_ok=True)
    staging = fresh_dir(out_dir.parent, f".{out_dir.name}.")  # the umask's permissions
    try:
        files: list[FileEntry] = []
        schemas: dict[str, TableSchema] = {"splits": SPLITS}
        for role in ROLES:
            for split in TARGET_SPLITS:
                part = examples.filter((pl.col("role") == role) & (pl.col("split") == split))
                written = write_pair(part, staging / role, split, TRAINING_EXAMPLES,
                                      "jsonl" in formats)
                files += [FileEntry.of(staging, f, f"{role}/{split}", part.height)
                          for f in written]
                if "openai-jsonl" in formats:
                    chat, lines = _write_openai(part, staging / role, split)
                    schemas[f"{role}/{split}/openai"] = EXPORT_OPENAI
                    files.append(FileEntry.of(staging, chat, f"{role}/{split}/openai", lines))
        written = write_pair(splits, staging, "splits", SPLITS)
        files += [FileEntry.of(staging, f, "splits", splits.height) for f in written]
        for frame, schema in zip(_vault_tables(paths, splits, evaluation),
                                 (EXPORT_VAULT_PAPERS, EXPORT_VAULT_VIEWS), strict=True):
            name = schema.name.split("/")[1]
            written = write_pair(frame, staging / "vault", name, schema, jsonl=False)
            schemas[schema.name] = schema
            files += [FileEntry.of(staging, f, schema.name, frame.height) for f in written]
        if index_info is None:
            index_info = index_metadata_of(paths)
        snapshot = _index_snapshot(paths, staging) if include_index else []
        manifest = build_manifest(files, examples, splits, index_info, schemas)
        manifest["files"] += [e.as_dict() for e in snapshot]
        manifest["evaluation"] = {"papers_marked": len(evaluation),
                                  "excluded_from_training": excluded,
                                  "included": include_evaluation}
        manifest["decontamination"] = _leakage(paths, splits, overlap)
        add_evaluation_sets(paths, staging, manifest)
        integrity = current_report(paths)
        report_file = staging / INTEGRITY_FILE
        report_file.write_text(json.dumps(integrity, indent=2, sort_keys=True) + "\n",
                               encoding="utf-8")
        manifest["files"].append(FileEntry.of(staging, report_file, "integrity_report",
                                              None).as_dict())
        card = staging / "README.md"
        card.write_text(data_card(manifest, read_facts(staging), integrity), encoding="utf-8")
        manifest["files"].append(FileEntry.of(staging, card, "data_card", None).as_dict())
        write_manifest(staging, manifest)
        problems = verify_export(staging) + [f"the card differs from the files: {line}"
                                             for line in card_disagreements(staging)]
        if problems:
            raise VaultError(f"export does not verify: {problems[0]}")
        _swap_into_place(staging, out_dir)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    rows = {t["name"]: t["rows"] for t in manifest["tables"]}
    return ExportReport(out_dir, len(manifest["files"]), rows, manifest["cutoff"],
                        manifest["seed"], excluded)


def _swap_into_place(staging: Path, out_dir: Path) -> None:
    """Replace ``out_dir`` by ``staging`` with two renames (the old export is removed only
    once the new one is in place)."""
    old = None
    if out_dir.exists():
        old = out_dir.with_name(f".{out_dir.name}.old")
        shutil.rmtree(old, ignore_errors=True)
        out_dir.rename(old)
    staging.rename(out_dir)
    if old is not None:
        shutil.rmtree(old, ignore_errors=True)
