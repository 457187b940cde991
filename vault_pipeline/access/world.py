"""What a session may see: the retrievable vault cut at the session's `as_of`, less its target.

The vault holds each pre-cutoff paper in one version, the last created before the split's
cutoff (`versions.py`). A session bound to ``as_of`` (on or before that cutoff; a later one
sees the whole vault, which holds nothing newer) sees a paper only when the version the vault
holds was created before ``as_of``: that version is then also the paper's last before
``as_of``, so every text the vault has of it is one its authors had written by then. A paper
whose held version is later is out, as is one with no known day for that version (a missing
date is unsafe). The session's target and its near-duplicates are out whatever their dates:
the members of the target's clusters in `duplicate_clusters` where that table has any, else
every paper whose normalised title is at least 80% like the target's (`difflib` ratio, the
measure the citation matching uses). Papers an evaluation set uses are out, as they are of
the index.

Membership is a predicate over one catalog per vault (sorted ids, days as integers), not a
set per session: a session costs its hidden ids, whatever the vault's size."""

from __future__ import annotations

import difflib
import threading
from dataclasses import dataclass, field
from datetime import date
from functools import cached_property
from typing import TYPE_CHECKING

import numpy as np
import polars as pl

from vault_pipeline.errors import VaultError
from vault_pipeline.ids import parse_arxiv_id
from vault_pipeline.index.layout import sql_literal
from vault_pipeline.papers.versions import vault_versions
from vault_pipeline.reviews.build import title_key
from vault_pipeline.schemas import PAPER_VERSIONS, PAPERS, SPLITS
from vault_pipeline.splits.build import VAULT
from vault_pipeline.splits.contamination import evaluation_papers

if TYPE_CHECKING:
    from vault_pipeline.store.paths import VaultPaths

TITLE_RATIO = 0.80  # the near-duplicate rule where no `duplicate_clusters` table exists
CLUSTERS = "duplicate_clusters"
CATALOG_COLUMNS = ("arxiv_id", "version", "version_created", "published", "title", "abstract",
                   "authors", "primary_category", "categories", "doi", "license",
                   "evaluation_paper")
_EPOCH = date(1970, 1, 1)


def day_number(day: date) -> int:
    return (day - _EPOCH).days


def parse_as_of(value: str | date) -> date:
    """A full ISO day; a year or a month alone is refused (it says nothing about the day)."""
    if isinstance(value, date):
        return value
    text = str(value).strip()
    try:
        if len(text) != 10:
            raise ValueError
        return date.fromisoformat(text)
    except ValueError:
        raise VaultError(f"as_of {value!r} is not a day (YYYY-MM-DD)") from None


BRIEF_COLUMNS = ("arxiv_id", "title", "published", "primary_category")


def _json_ready(column: pl.Series) -> list:
    """A column's values as `wire` writes them: dates and times as their text."""
    if column.dtype.is_temporal():
        return [None if v is None else str(v) for v in column.to_list()]
    return column.to_list()


def canonical_id(raw: str) -> str | None:
    """The version-less arXiv id of ``raw`` (`2401.00001v2`, `arXiv:...`), None if none."""
    try:
        return parse_arxiv_id(str(raw)).id
    except ValueError:
        return None


def catalog_frame(paths: VaultPaths, exclude_evaluation: bool = True) -> pl.DataFrame:
    """One row per retrievable paper (split `vault`): the held version, the day it was
    created (null when unknown), and that version's record (a title no source gave for it
    stays null rather than showing the later one)."""
    store = paths.store
    splits = store.read_optional(SPLITS, ("arxiv_id", "split", "cutoff"))
    papers = store.scan_optional(PAPERS)
    if splits is None or splits.is_empty() or papers is None:
        return empty_catalog()
    cutoff = splits["cutoff"][0]
    held = vault_versions(papers, store.read_optional(PAPER_VERSIONS), cutoff)
    ids = splits.filter(pl.col("split") == VAULT).select("arxiv_id")
    used = sorted(evaluation_papers(paths)) if exclude_evaluation else []
    record = papers.select("arxiv_id", "title", "abstract", "authors", "published",
                           "primary_category", "categories", "doi", "license").collect()
    frame = (ids.join(record, on="arxiv_id", how="inner")
             .join(held.select("arxiv_id", "version", pl.col("created").alias("version_created"),
                               "revised", pl.col("title").alias("_title"),
                               pl.col("abstract").alias("_abstract")),
                   on="arxiv_id", how="left")
             .with_columns(
                 title=pl.when(pl.col("revised").fill_null(False)).then("_title")
                 .otherwise("title"),
                 abstract=pl.when(pl.col("revised").fill_null(False)).then("_abstract")
                 .otherwise("abstract"),
                 evaluation_paper=pl.col("arxiv_id").is_in(used)))
    return frame.select(CATALOG_COLUMNS).sort("arxiv_id")


def empty_catalog() -> pl.DataFrame:
    schema = PAPERS.polars
    return pl.DataFrame(schema={
        "arxiv_id": pl.String, "version": pl.Int32, "version_created": pl.Date,
        "published": pl.Date, "title": pl.String, "abstract": pl.String,
        "authors": schema["authors"], "primary_category": pl.String,
        "categories": schema["categories"], "doi": pl.String, "license": pl.String,
        "evaluation_paper": pl.Boolean})


class Catalog:
    """The retrievable papers of one vault, looked up by id: what every session of that
    vault is cut from."""

    def __init__(self, frame: pl.DataFrame, cutoff: date | None = None) -> None:
        self.frame = frame.sort("arxiv_id")
        self.cutoff = cutoff
        self._ids = self.frame["arxiv_id"].to_numpy().astype(str)
        # a dict: a search batch looks up some 700 ids; one lookup 1.8 us against 5.4 us
        # for numpy's searchsorted (194k papers)
        self._positions = {arxiv_id: i for i, arxiv_id in enumerate(self._ids.tolist())}
        created = self.frame["version_created"].cast(pl.Int32)
        # a paper with no known day for its held version is never seen (no day is after int max)
        self._days = created.fill_null(np.iinfo(np.int32).max).to_numpy()
        self._hidden_always = self.frame["evaluation_paper"].fill_null(True).to_numpy()
        self._keys: list[str] | None = None
        self._brief: list[list] | None = None
        self._index: pl.DataFrame | None = None
        self._lock = threading.Lock()

    @classmethod
    def of(cls, paths: VaultPaths, exclude_evaluation: bool = True) -> Catalog:
        splits = paths.store.read_optional(SPLITS, ("cutoff",))
        cutoff = splits["cutoff"][0] if splits is not None and splits.height else None
        return cls(catalog_frame(paths, exclude_evaluation), cutoff)

    def __len__(self) -> int:
        return self.frame.height

    def position(self, arxiv_id: str) -> int | None:
        """The row of ``arxiv_id`` (canonical), None when the vault does not hold it."""
        return self._positions.get(arxiv_id)

    def row(self, position: int) -> dict:
        return self.frame.row(position, named=True)

    def brief(self, position: int) -> dict:
        """The columns a search hit or a citation shows, from Python lists made once: 3.6 us
        against 16 us for a row of the whole record (194k papers), some 700 a batch. Values
        are as JSON carries them (dates as ISO days), so an answer made of them needs no
        JSON round trip (`wire.jsonable`)."""
        if self._brief is None:
            with self._lock:
                if self._brief is None:
                    self._brief = [_json_ready(self.frame[c]) for c in BRIEF_COLUMNS]
        return {c: values[position]
                for c, values in zip(BRIEF_COLUMNS, self._brief, strict=True)}

    def visible(self, position: int, before_day: int) -> bool:
        return bool(self._days[position] < before_day and not self._hidden_always[position])

    def visible_before(self, before_day: int) -> np.ndarray:
        """`visible` of every row at once."""
        return (self._days < before_day) & ~self._hidden_always

    def similar_titles(self, title: str, ratio: float = TITLE_RATIO) -> list[str]:
        """Ids whose normalised title reaches ``ratio`` (`difflib`) against ``title``. The
        full ratio is computed for the titles that share at least half of its words and whose
        lengths allow the ratio (a title 80% alike by characters keeps most of its words);
        one join over the catalog's words finds them."""
        key = pl.DataFrame({"t": [title]}).select(title_key("t")).item() or ""
        words = sorted(set(key.split()))
        if not words or not len(self):
            return []
        keys, index = self._title_words()
        need = max(1, len(words) // 2)
        shared = (index.filter(pl.col("word").is_in(words)).group_by("row").len()
                  .filter(pl.col("len") >= need)["row"].to_list())
        found = []
        matcher = difflib.SequenceMatcher(autojunk=False)
        matcher.set_seq2(key)
        for row in shared:
            other = keys[row]
            if 2 * min(len(other), len(key)) < ratio * (len(other) + len(key)):
                continue
            matcher.set_seq1(other)
            if matcher.ratio() >= ratio:
                found.append(str(self._ids[row]))
        return found

    def _title_words(self) -> tuple[list[str], pl.DataFrame]:
        with self._lock:  # built once, by the first session with a target
            if self._index is None:
                keys = self.frame.select(title_key("title").fill_null("").alias("key"))
                self._keys = keys["key"].to_list()
                self._index = (keys.with_row_index("row").select(
                    pl.col("row").cast(pl.Int64), pl.col("key").str.split(" ").alias("word"))
                    .explode("word").filter(pl.col("word") != "").unique())
        return self._keys, self._index  # type: ignore[return-value]


@dataclass(frozen=True)
class World:
    """A session's world: the catalog's papers whose held version predates ``as_of``, less
    ``hidden`` (the target and its near-duplicates)."""

    catalog: Catalog
    as_of: date
    target: str | None = None
    hidden: frozenset[str] = field(default_factory=frozenset)

    @property
    def before_day(self) -> int:
        return day_number(self.as_of)

    def resolve(self, raw: str) -> int | None:
        """The catalog row of ``raw`` when the session may see it, else None: an unknown
        id, a malformed one and a hidden one are the same None."""
        arxiv_id = canonical_id(raw)
        return None if arxiv_id is None else self.position_of(arxiv_id)

    def position_of(self, arxiv_id: str) -> int | None:
        """`resolve` of an id already canonical (the index's and the citations' own ids)."""
        if arxiv_id in self.hidden:
            return None
        position = self.catalog.position(arxiv_id)
        if position is None or not self.catalog.visible(position, self.before_day):
            return None
        return position

    def admits(self, raw: str) -> bool:
        return self.resolve(raw) is not None

    @cached_property
    def seen(self) -> np.ndarray:
        """`position_of`'s rule over every catalog row, as one array (made once per world):
        a batch's search rows are kept or dropped by it together."""
        mask = self.catalog.visible_before(self.before_day)
        for arxiv_id in self.hidden:
            position = self.catalog.position(arxiv_id)
            if position is not None:
                mask[position] = False
        return mask

    def narrowed(self, other: World | None) -> World:
        """Both worlds' rules at once (a server's cutoff under a request's)."""
        if other is None:
            return self
        return World(self.catalog, min(self.as_of, other.as_of), self.target or other.target,
                     self.hidden | other.hidden)

    def where(self, hidden: bool = True) -> str:
        """The same rule as a LanceDB predicate over the index's columns; without the
        hidden ids when ``hidden`` is false (a batch filters them from its rows, so that
        sessions of one cutoff share one prefilter)."""
        clause = f"version_created < date '{self.as_of.isoformat()}'"
        if self.hidden and hidden:
            quoted = ", ".join(sql_literal(i) for i in sorted(self.hidden))
            clause += f" AND arxiv_id NOT IN ({quoted})"
        return clause

    def filter(self, frame: pl.DataFrame, column: str = "arxiv_id") -> pl.DataFrame:
        """The rows of ``frame`` whose ``column`` is a paper of this world."""
        seen = self.catalog.frame.filter(
            (pl.col("version_created") < self.as_of) & ~pl.col("evaluation_paper")
            & ~pl.col("arxiv_id").is_in(sorted(self.hidden))).select(
            pl.col("arxiv_id").alias(column))
        return frame.join(seen, on=column, how="semi")


def clusters_of(paths: VaultPaths) -> pl.DataFrame | None:
    """`duplicate_clusters` with one row per member (cluster_id, member), None without it."""
    frame = paths.store.read_optional(CLUSTERS)
    if frame is None:
        return None
    members = (frame.select("cluster_id", pl.concat_list(pl.col("members"),
                                                          pl.col("canonical_id")).alias("member"))
               .explode("member").drop_nulls("member").unique())
    return members.with_columns(pl.col("member").map_elements(
        lambda m: canonical_id(m) or m, return_dtype=pl.String)).unique()


def near_duplicates(catalog: Catalog, target: str, title: str | None,
                    clusters: pl.DataFrame | None) -> frozenset[str]:
    """The target and every paper that is the same work: the members of its clusters where
    the duplicates stage ran and clustered it, else the 80%-title rule over the catalog."""
    hidden = {target}
    if clusters is not None:
        ids = clusters.filter(pl.col("member") == target)["cluster_id"].to_list()
        if ids:
            return frozenset(hidden | set(
                clusters.filter(pl.col("cluster_id").is_in(ids))["member"].to_list()))
    if title:
        hidden |= set(catalog.similar_titles(title))
    return frozenset(hidden)


def target_title(paths: VaultPaths, target: str) -> str | None:
    """The target's title from `papers` (targets are post-cutoff: not in the catalog)."""
    papers = paths.store.scan_optional(PAPERS)
    if papers is None:
        return None
    found = papers.filter(pl.col("arxiv_id") == target).select("title").collect()
    return found["title"][0] if found.height else None


def make_world(catalog: Catalog, as_of: str | date, target: str | None = None,
               title: str | None = None, clusters: pl.DataFrame | None = None) -> World:
    """A session's world over ``catalog``, without ``target`` (whose title is ``title``)
    and its near-duplicates; ``as_of`` later than the vault's cutoff is the cutoff (the
    vault holds nothing newer)."""
    day = parse_as_of(as_of)
    if catalog.cutoff is not None:
        day = min(day, catalog.cutoff)
    if target is None:
        return World(catalog, day)
    canonical = canonical_id(target)
    if canonical is None:
        raise VaultError(f"target {target!r} is not an arXiv id")
    return World(catalog, day, canonical, near_duplicates(catalog, canonical, title, clusters))
