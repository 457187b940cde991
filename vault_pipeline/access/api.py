"""`Vault`: the vault from Python (notebooks, scripts, the web service).

Tables come back as Polars frames, queries run through the same read-only DuckDB connection
as `vault sql`, and searches keep the index table and the embedding model loaded between
calls, so only the first search of a session pays for opening them. The query-time model
runs on ONNX Runtime (no torch import), with the weights the index was built with."""

from __future__ import annotations

import copy
import difflib
import os
from collections.abc import Iterable
from datetime import date
from typing import TYPE_CHECKING, Any

import polars as pl

from vault_pipeline.errors import VaultError
from vault_pipeline.store.paths import VaultPaths

if TYPE_CHECKING:
    from vault_pipeline.access.tools import Toolbox
    from vault_pipeline.access.world import World
    from vault_pipeline.embeddings.embedders import Embedder

HIT_SCHEMA = {"rank": pl.Int64, "arxiv_id": pl.String, "view": pl.String,
              "score": pl.Float64, "published": pl.Date, "primary_category": pl.String,
              "categories": pl.List(pl.String), "text": pl.String}


def suggest(name: str, known: Iterable[str], what: str) -> str:
    """``unknown <what> 'x'`` with the closest known names (a typo costs one reread)."""
    known = sorted(known)
    close = difflib.get_close_matches(name, known, n=3, cutoff=0.6)
    hint = f"; did you mean {' or '.join(repr(c) for c in close)}?" if close else ""
    listed = f" (known: {', '.join(known)})" if known and not close else ""
    return f"unknown {what} {name!r}{hint}{listed}"


class Vault:
    """An existing vault, opened for reading: ``Vault(home)``; ``home`` defaults to
    ``$VAULT_HOME``, else ``./vault_home``. With ``as_of`` (and ``target``), every read is a
    session's: only papers whose held version predates ``as_of``, never the target or its
    near-duplicates (`vault_pipeline.access.world`); whole tables and SQL are refused."""

    def __init__(self, home: str | os.PathLike[str] | None = None, *,
                 as_of: str | date | None = None, target: str | None = None) -> None:
        self.paths = VaultPaths.from_env(home).existing()
        self._index: Any = None
        self._embedder: Embedder | None = None
        self._toolbox: Toolbox | None = None
        self.world: World | None = None
        if as_of is not None or target is not None:
            self.world = self.toolbox.world(as_of, target)

    def __repr__(self) -> str:
        cut = f", as_of={self.world.as_of.isoformat()!r}" if self.world else ""
        return f"Vault({str(self.paths.home)!r}{cut})"

    @property
    def toolbox(self) -> Toolbox:
        """The agent tools' shared state over this vault (catalog, index, model)."""
        if self._toolbox is None:
            from vault_pipeline.access.tools import Toolbox

            self._toolbox = Toolbox(self.paths)
        return self._toolbox

    def at(self, as_of: str | date | None = None, target: str | None = None) -> Vault:
        """This vault as a session cut at ``as_of`` without ``target`` sees it, within this
        one's own cutoff; it shares the loaded index and model."""
        if as_of is None and target is None:
            return self
        other = copy.copy(self)
        other.world = self.toolbox.world(as_of, target).narrowed(self.world)
        return other

    def _whole(self, what: str) -> None:
        if self.world is not None:
            raise VaultError(f"{what} reads whole tables, which a cutoff cannot bound: under "
                             "as_of use papers(), views(), search() or the agent tools")

    def tables(self) -> list[str]:
        """The names of the tables written so far."""
        return self.paths.store.names()

    def table(self, name: str) -> pl.DataFrame:
        """One table, whole, as a Polars frame."""
        self._whole("table()")
        frame = self.paths.store.read_optional(name)
        if frame is None:
            raise VaultError(suggest(name, self.tables(), "table"))
        return frame

    def sql(self, query: str) -> pl.DataFrame:
        """A read-only DuckDB query over every table (each a view by its name)."""
        from vault_pipeline.store.sql import query as run_query

        self._whole("sql()")
        return run_query(self.paths, query).pl()

    def papers(self, ids: str | Iterable[str]) -> pl.DataFrame:
        """The `papers` rows of these arXiv ids (any form: versions, `arXiv:` prefixes and
        old-style ids are normalised), in the order given; unknown ids are left out."""
        from vault_pipeline.ids import normalize_arxiv_id

        wanted = [ids] if isinstance(ids, str) else list(ids)
        normalised = []
        for raw in wanted:
            try:
                normalised.append(normalize_arxiv_id(raw))
            except ValueError:
                raise VaultError(f"{raw!r} is not an arXiv id") from None
        if self.world is not None:
            return self._world_papers(wanted)
        order = pl.DataFrame({"arxiv_id": normalised, "_order": range(len(normalised))},
                             schema={"arxiv_id": pl.String, "_order": pl.Int64})
        papers = self.paths.store.scan_optional("papers")
        if papers is None:
            raise VaultError(suggest("papers", self.tables(), "table"))
        return (papers.join(order.lazy(), on="arxiv_id", how="inner").sort("_order")
                .drop("_order").collect())

    def views(self, arxiv_id: str) -> pl.DataFrame:
        """The views of one paper (view, text), as the index and the datasets see them."""
        from vault_pipeline.ids import normalize_arxiv_id

        if self.world is not None:
            position = self.world.resolve(arxiv_id)
            shown = ({} if position is None else
                     self.toolbox.views(self.world.catalog.row(position)["arxiv_id"]))
            return pl.DataFrame({"view": list(shown), "text": list(shown.values())},
                                schema={"view": pl.String, "text": pl.String})
        views = self.paths.store.scan_optional("views")
        if views is None:
            return pl.DataFrame(schema={"view": pl.String, "text": pl.String})
        wanted = normalize_arxiv_id(arxiv_id)
        return (views.filter(pl.col("arxiv_id") == wanted).select("view", "text").collect())

    def search(self, text: str, *, k: int = 10, view: str | None = None,
               before: str | date | None = None, same_field: str | None = None,
               other_fields: str | None = None, mode: str = "hybrid") -> pl.DataFrame:
        """The ``k`` best vault views for ``text``, best first (see `vault search`)."""
        from vault_pipeline.index.search import SearchFilters, parse_date, search

        filters = SearchFilters(view=view, before=parse_date(before, "before"),
                                same_field=same_field, other_fields=other_fields,
                                within=self.world.where() if self.world else None)
        table = self._index_table()
        embedder = None if mode == "text" else self._query_embedder(table)
        hits = search(self.paths, text, embedder, k=k, filters=filters, mode=mode, table=table)
        return pl.DataFrame([h.as_dict() for h in hits], schema=HIT_SCHEMA)

    def _world_papers(self, wanted: list[str]) -> pl.DataFrame:
        """The record of each paper of the world among ``wanted``, as the tools show it."""
        assert self.world is not None
        catalog = self.world.catalog
        positions = [p for p in (self.world.resolve(raw) for raw in wanted) if p is not None]
        rows = catalog.frame[positions] if positions else catalog.frame.clear()
        return rows.drop("evaluation_paper")

    def refresh(self) -> None:
        """Forget the cached index and model (after the index was rebuilt)."""
        self._index = None
        self._embedder = None

    def _index_table(self):
        if self._index is None:
            from vault_pipeline.index.lance_index import open_index

            self._index = open_index(self.paths, fresh_s=5.0)  # a rebuilt index shows up
        return self._index

    def _query_embedder(self, table) -> Embedder:
        if self._embedder is None:
            from vault_pipeline.embeddings.embedders import EMBEDDED, load_query_embedder
            from vault_pipeline.index.lance_index import index_metadata

            source = index_metadata(table).get("embedder_source", EMBEDDED)
            self._embedder = load_query_embedder(source)
        return self._embedder
