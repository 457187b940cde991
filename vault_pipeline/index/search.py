"""Search the vault: hybrid retrieval (vector and full text, fused by reciprocal rank),
filtered by view, date and field. The same function serves `vault search`, the library API
and the asset checks.

The two regimes of the seed paper are one call each: the gap finder's same-problem search is
``same_field="cs.LG"`` (papers in that category, or a whole archive such as ``cs``), the
innovator's cross-domain search is ``other_fields="cs.LG"`` (papers with no category in it).
Filters run before the vector and text searches (LanceDB prefilter), so a filter that
matches few rows still returns up to ``k`` of them, and one that matches none returns none.

A one-shot search (`search_vault`, the CLI's) runs the same queries through LanceDB's engine
without its Python package (`native.py`): the package takes over a second to import."""

from __future__ import annotations

import contextlib
import logging
import os
import re
import threading
from dataclasses import asdict, dataclass
from datetime import date
from typing import TYPE_CHECKING

from vault_pipeline.embeddings.embedders import (
    EMBEDDED,
    Embedder,
    EmbedderSettings,
    load_embedder,
    load_query_embedder,
)
from vault_pipeline.errors import VaultError
from vault_pipeline.index.layout import (
    DISTANCE,
    TABLE,
    IndexSettings,
    check_index,
    index_dir,
    index_exists,
    metadata_of,
)

if TYPE_CHECKING:
    from vault_pipeline.store.paths import VaultPaths

log = logging.getLogger(__name__)

MODES = ("hybrid", "vector", "text")
_CATEGORY = re.compile(r"^[a-z]+(?:-[a-z]+)?(?:\.[A-Za-z]+(?:-[A-Za-z]+)?)?$")
MIN_DEPTH = 40  # candidates each of the two searches hands to the fusion


@dataclass(frozen=True)
class SearchFilters:
    view: str | None = None
    before: date | None = None
    same_field: str | None = None
    other_fields: str | None = None
    within: str | None = None  # a session's world (`access.world.World.where`)

    def where(self) -> str | None:
        """The SQL predicate LanceDB applies before searching; inputs validated first."""
        clauses = [f"({self.within})"] if self.within else []
        if self.view is not None:
            from vault_pipeline.ideas.views import VIEW_NAMES

            if self.view not in VIEW_NAMES:
                raise VaultError(f"unknown view {self.view!r} ({', '.join(VIEW_NAMES)})")
            clauses.append(f"view = '{self.view}'")
        if self.before is not None:
            clauses.append(f"published < date '{self.before.isoformat()}'")
        if self.same_field and self.other_fields:
            raise VaultError("choose either same_field or other_fields, not both")
        for value, negate in ((self.same_field, False), (self.other_fields, True)):
            if value is not None:
                clauses.append(_field_clause(value, negate))
        return " AND ".join(clauses) or None


def _field_clause(value: str, negate: bool) -> str:
    """A category (`cs.LG`) matches that category; an archive (`cs`, `hep-th`) any of its
    categories. Several may be given, comma-separated."""
    parts = []
    for item in (v.strip() for v in value.split(",")):
        if not _CATEGORY.match(item):
            raise VaultError(f"{item!r} is not an arXiv category or archive (cs.LG, cs, hep-th)")
        column = "categories" if "." in item else "archives"
        parts.append(f"array_has({column}, '{item}')")
    clause = "(" + " OR ".join(parts) + ")"
    return f"NOT {clause}" if negate else clause


@dataclass(frozen=True)
class SearchHit:
    rank: int
    arxiv_id: str
    view: str
    score: float  # fused relevance (hybrid), cosine similarity (vector) or BM25 (text)
    published: date
    primary_category: str | None
    categories: list[str]
    text: str

    def as_dict(self) -> dict:
        return asdict(self)


def parse_date(value: str | date | None, what: str = "date") -> date | None:
    if value is None or isinstance(value, date):
        return value
    try:
        return date.fromisoformat(value.strip())
    except ValueError:
        raise VaultError(f"{what} {value!r} is not a date (YYYY-MM-DD)") from None


COLUMNS = ["arxiv_id", "view", "text", "published", "primary_category", "categories"]
SCORE = {"hybrid": "_relevance_score", "vector": "_distance", "text": "_score"}


def _check_request(query: str, k: int, mode: str) -> None:
    if not query or not query.strip():
        raise VaultError("the search text is empty")
    if k < 1:
        raise VaultError(f"k must be at least 1, not {k}")
    if mode not in MODES:
        raise VaultError(f"unknown mode {mode!r} ({', '.join(MODES)})")


def _check_model(built_with: str, embedder: Embedder | None, mode: str) -> None:
    if mode != "text" and embedder is None:
        raise VaultError(f"{mode} search needs the embedder the index was built with")
    if mode != "text" and built_with and built_with != embedder.name:  # type: ignore[union-attr]
        raise VaultError(f"the index was built with {built_with}, not {embedder.name}: "  # type: ignore[union-attr]
                         "search with the same model or rebuild the index")


def _hits(rows: list[dict], mode: str, k: int) -> list[SearchHit]:
    score = SCORE[mode]
    return [SearchHit(rank=i + 1, arxiv_id=r["arxiv_id"], view=r["view"],
                      score=float(1 - r[score] if mode == "vector" else r[score]),
                      published=r["published"], primary_category=r["primary_category"],
                      categories=list(r["categories"] or []), text=r["text"])
            for i, r in enumerate(rows[:k])]


def search(paths: VaultPaths, query: str, embedder: Embedder | None, *, k: int = 10,
           filters: SearchFilters | None = None, mode: str = "hybrid",
           settings: IndexSettings | None = None, table=None) -> list[SearchHit]:
    """The ``k`` best vault views for ``query`` under ``filters``, best first."""
    from vault_pipeline.index.lance_index import open_index

    _check_request(query, k, mode)
    filters = filters or SearchFilters()
    settings = settings or IndexSettings()
    where = filters.where()
    table = table if table is not None else open_index(paths)
    _check_model(metadata_of(table.schema.metadata).get("embedder", ""), embedder, mode)
    depth = max(k, MIN_DEPTH)
    if mode == "text":
        builder = table.search(query, query_type="fts", fts_columns="text")
    else:
        vector = embedder.embed([query])[0]  # type: ignore[union-attr]
        if mode == "vector":
            builder = table.search(vector, query_type="vector").distance_type(DISTANCE)
        else:
            builder = (table.search(query_type="hybrid", fts_columns="text").vector(vector)
                       .text(query).distance_type(DISTANCE))
        builder = builder.nprobes(settings.ann_nprobes)
    if where:
        builder = builder.where(where, prefilter=True)
    return _hits(builder.select(COLUMNS).limit(depth).to_arrow().to_pylist(), mode, k)


def _query_embedder(source: str, mode: str, backend: str) -> Embedder | None:
    if mode == "text":
        return None
    if backend == "onnx":
        return load_query_embedder(source)
    return load_embedder(EmbedderSettings(model=source, backend=backend))


def search_vault(paths: VaultPaths, query: str, *, k: int = 10,
                 filters: SearchFilters | None = None, mode: str = "hybrid",
                 backend: str = "onnx", engine: str = "native") -> list[SearchHit]:
    """Search with the model the index was built with (read from the index itself), run by
    ONNX Runtime unless ``backend`` is `torch`. ``engine``: `native` (LanceDB's engine
    alone, for a process that searches once) or `lancedb` (the package)."""
    _check_request(query, k, mode)
    check_index(paths)
    filters = filters or SearchFilters()
    where = filters.where()
    # the engine alone reads a local index; an object-store root goes through the package,
    # which carries the store's credentials and endpoint
    if (engine == "native" and not paths.remote
            and os.environ.get("VAULT_SEARCH_ENGINE") != "lancedb"):
        from vault_pipeline.index.native import EngineUnavailable, NativeTable

        if not index_exists(paths):
            raise VaultError("the index does not exist yet: materialize it first "
                             "(vault materialize --select index)")
        if mode != "text":  # imported while the index opens (the engine runs off the GIL)
            threading.Thread(target=_preload_onnx, daemon=True).start()
        try:
            table = NativeTable(index_dir(paths), TABLE)
        except EngineUnavailable as exc:
            log.warning("searching through the lancedb package: %s", exc)
        else:
            try:
                return _native_search(table, query, k, where, mode, backend)
            finally:
                table.close()
    from vault_pipeline.index.lance_index import index_metadata, open_index

    table = open_index(paths)
    source = index_metadata(table).get("embedder_source", EMBEDDED)
    return search(paths, query, _query_embedder(source, mode, backend), k=k, filters=filters,
                  mode=mode, table=table)


def _preload_onnx() -> None:
    with contextlib.suppress(ImportError):
        import onnxruntime  # noqa: F401
        import tokenizers  # noqa: F401


def _native_search(table, query: str, k: int, where: str | None, mode: str,
                   backend: str) -> list[SearchHit]:
    """`search`'s queries, same arguments, through the engine alone."""
    meta = metadata_of(table.schema.metadata)
    embedder = _query_embedder(meta.get("embedder_source", EMBEDDED), mode, backend)
    _check_model(meta.get("embedder", ""), embedder, mode)
    depth, nprobes = max(k, MIN_DEPTH), IndexSettings().ann_nprobes
    if mode == "text":
        rows = table.text(query, "text", COLUMNS, where, depth)
    else:
        vector = embedder.embed([query])[0]  # type: ignore[union-attr]
        rows = (table.vector(vector, COLUMNS, where, depth, DISTANCE, nprobes)
                if mode == "vector" else
                table.hybrid(query, vector, "text", COLUMNS, where, depth, DISTANCE, nprobes))
    return _hits(rows, mode, k)
