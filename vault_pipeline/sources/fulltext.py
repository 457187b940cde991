"""PDF and e-print (LaTeX source) downloads for the papers in scope, into the raw zone.

Files are stored under the names the documents stage reads the arXiv id from:
``<id>v<N>.pdf`` and ``arXiv-<id>v<N>.tar.gz`` (``.gz`` for a single gzipped source file,
``.pdf`` when arXiv only has a PDF), with ``/`` of old-style ids replaced by ``_``
(``hep-th_9901001v2.pdf``); ``origin`` is the URL. A file already in the raw zone under its
name is not asked for again, and a paper that failed (withdrawn, no source) is not retried
until ``retry_failed``.

Each paper is fetched in the version the vault holds at the split's cutoff
(:mod:`vault_pipeline.papers.versions`): its latest, except for a paper published before the cutoff
and revised after it, which is fetched by versioned id in the last version created before
the cutoff (``/pdf/IDvK``, ``/e-print/IDvK``); one whose earlier versions no source lists is
not fetched (:func:`plan` names it in ``unversioned``)."""

from __future__ import annotations

import gzip
import io
import logging
from dataclasses import dataclass
from datetime import UTC, datetime

import polars as pl

from vault_pipeline.errors import RawFormatError
from vault_pipeline.papers.versions import vault_versions
from vault_pipeline.schemas import PAPER_VERSIONS, PAPERS
from vault_pipeline.sources.context import Downloads, HarvestContext
from vault_pipeline.sources.http import HarvestError
from vault_pipeline.sources.settings import FulltextScope

log = logging.getLogger(__name__)
KINDS = ("pdf", "eprint")
CURSOR = "fulltext-failures"


def file_stem(arxiv_id: str, version: int | None) -> str:
    return arxiv_id.replace("/", "_") + (f"v{version}" if version else "")


@dataclass(frozen=True)
class FulltextItem:
    arxiv_id: str
    version: int | None
    kind: str
    url: str

    @property
    def stem(self) -> str:
        prefix = "arXiv-" if self.kind == "eprint" else ""
        return prefix + file_stem(self.arxiv_id, self.version)


@dataclass
class FulltextReport(Downloads):
    """The PDFs and e-prints of one full-text harvest."""


def eprint_name(stem: str, data: bytes) -> str:
    """The e-print's file name from what arXiv sent: a gzipped tar, one gzipped file, a PDF."""
    if data[:5] == b"%PDF-":
        return f"{stem}.pdf"
    if data[:2] == b"\x1f\x8b":
        try:
            with gzip.open(io.BytesIO(data)) as handle:
                head = handle.read(512)
        except (OSError, EOFError):
            return f"{stem}.gz"
        return f"{stem}.tar.gz" if head[257:262] == b"ustar" else f"{stem}.gz"
    return f"{stem}.tar.gz"


def stored_stems(ctx: HarvestContext) -> set[str]:
    """Name stems of every PDF and e-print already in the raw zone."""
    stems = set()
    for record in ctx.zone.files(("pdf", "eprint"), check=False):
        name = record.original_name or ""
        stems.add(name.removesuffix(".pdf").removesuffix(".tar.gz").removesuffix(".gz"))
    return stems


def papers_in_scope(ctx: HarvestContext, scope: FulltextScope,
                    ids: list[str] | None = None) -> pl.DataFrame:
    """The papers to fetch, newest first, each with the version to fetch (``latest_version``
    is the one the vault holds: see the module docstring; null when the source gave no
    version number, or for a revised paper with no known pre-cutoff version, then
    ``unversioned`` is true)."""
    frame = ctx.paths.store.scan_optional(PAPERS)
    if frame is None:
        return pl.DataFrame(schema={"arxiv_id": pl.String, "latest_version": pl.Int32,
                                    "published": pl.Date, "unversioned": pl.Boolean})
    if ids:
        frame = frame.filter(pl.col("arxiv_id").is_in(ids))
    else:
        if scope.categories:
            frame = frame.filter(pl.col("categories").list.eval(
                pl.element().is_in(list(scope.categories))).list.any()
                | pl.col("primary_category").is_in(list(scope.categories)))
        if scope.published_from:
            frame = frame.filter(pl.col("published") >= scope.published_from)
        if scope.published_until:
            frame = frame.filter(pl.col("published") <= scope.published_until)
    held = vault_versions(frame, ctx.paths.store.read_optional(PAPER_VERSIONS),
                          ctx.uses("splits").cutoff).filter("revised")
    chosen = (frame.select("arxiv_id", "latest_version", "published").collect()
              .join(held.select("arxiv_id", pl.col("version").alias("_held"), "revised"),
                    on="arxiv_id", how="left"))
    revised = pl.col("revised").fill_null(False)
    return (chosen.select(
        "arxiv_id",
        latest_version=pl.when(revised).then("_held").otherwise("latest_version"),
        published="published", unversioned=revised & pl.col("_held").is_null())
        .sort("published", "arxiv_id", descending=[True, False]))


def plan(ctx: HarvestContext, scope: FulltextScope | None = None, ids: list[str] | None = None,
         kinds: tuple[str, ...] | None = None, retry_failed: bool = False,
         limit: int | None = None) -> list[FulltextItem]:
    """What would be downloaded: papers in scope, minus files present or failed before."""
    scope = scope or ctx.config.arxiv.fulltext
    kinds = kinds or scope.kinds
    unknown = set(kinds) - set(KINDS)
    if unknown:
        raise HarvestError(f"unknown full-text kind(s) {sorted(unknown)}; use pdf, eprint")
    present = stored_stems(ctx)
    failed = {} if retry_failed else ctx.cursors.load(CURSOR)
    base = {"pdf": ctx.config.arxiv.pdf_url, "eprint": ctx.config.arxiv.eprint_url}
    items = []
    papers = papers_in_scope(ctx, scope, ids)
    unversioned = papers.filter("unversioned")["arxiv_id"].to_list()
    if unversioned:  # revised after the cutoff, no earlier version known: nothing is safe
        log.warning("%d paper(s) not fetched: revised after the cutoff and no source lists "
                    "their earlier versions (e.g. %s)", len(unversioned), unversioned[0])
    for arxiv_id, version, _published, late in papers.iter_rows():
        if late:
            continue
        for kind in kinds:
            suffix = f"v{version}" if version else ""
            item = FulltextItem(arxiv_id, version, kind,
                                f"{base[kind].rstrip('/')}/{arxiv_id}{suffix}")
            if item.stem not in present and item.stem not in failed:
                items.append(item)
    cap = limit if limit is not None else scope.max_per_run
    return items[:cap]


def fetch(ctx: HarvestContext, items: list[FulltextItem]) -> FulltextReport:
    report = FulltextReport(planned=len(items))
    client = ctx.client("arxiv")
    for item in items:
        try:
            response = client.get(item.url)
            data = response.content
            name = eprint_name(item.stem, data) if item.kind == "eprint" else f"{item.stem}.pdf"
            raw, new = ctx.store(data, name, str(response.url))
        except (HarvestError, RawFormatError) as exc:
            if isinstance(exc, HarvestError) and not exc.item_specific:
                raise  # the service is unwell, not this paper: stop, a rerun resumes
            report.failed.append((item.stem, str(exc)))
            failures = ctx.cursors.load(CURSOR)
            failures[item.stem] = {"reason": str(exc), "url": item.url,
                                   "at": datetime.now(UTC).isoformat()}
            ctx.cursors.save(CURSOR, failures)
            ctx.progress(1, len(items), f"failed {item.stem}")
            continue
        report.stored(raw, new)
        ctx.progress(1, len(items), item.stem)
    return report
