"""`Vault`: the vault from Python (notebooks, scripts, the web service).

Tables come back as Polars frames, queries run through the same read-only DuckDB connection
as `vault sql`, and searches keep the index table and the embedding model loaded between
calls, so only the first search of a session pays for opening them. The query-time model
runs on ONNX Runtime (no torch import), with the weights the index was built with."""

from __future__ import annotations

import difflib
import os
from collections.abc import Iterable
from datetime import date
from typing import TYPE_CHECKING, Any

import polars as pl

from vault_pipeline.errors import VaultError
from vault_pipeline.store.paths import VaultPaths

if TYPE_CHECKING:
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
    ``$VAULT_HOME``, else ``./vault_home``."""

    def __init__(self, home: str | os.PathLike[str] | None = None) -> None:
        self.paths = VaultPaths.from_env(home).existing()
        self._index: Any = None
        self._embedder: Embedder | None = None

    def __repr__(self) -> str:
        return f"Vault({str(self.paths.home)!r})"

    def tables(self) -> list[str]:
        """The names of the tables written so far."""
        return self.paths.store.names()

    def table(self, name: str) -> pl.DataFrame:
        """One table, whole, as a Polars frame."""
        frame = self.paths.store.read_optional(name)
        if frame is None:
            raise VaultError(suggest(name, self.tables(), "table"))
        return frame

    def sql(self, query: str) -> pl.DataFrame:
        """A read-only DuckDB query over every table (each a view by its name)."""
        from vault_pipeline.store.sql import query as run_query

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
                                same_field=same_field, other_fields=other_fields)
        table = self._index_table()
        embedder = None if mode == "text" else self._query_embedder(table)
        hits = search(self.paths, text, embedder, k=k, filters=filters, mode=mode, table=table)
        return pl.DataFrame([h.as_dict() for h in hits], schema=HIT_SCHEMA)

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
