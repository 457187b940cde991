"""Search by paper: the index holds one row per view, so a paper can fill several of the
top ``k`` places; a role wants ``k`` different papers (near-miss prior art, source papers
from other sub-fields), each once, by its best-matching view, its other views on request."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from datetime import date

from vault_pipeline.ideas.views import VIEW_NAMES
from vault_pipeline.index.search import SearchFilters, SearchHit, search_vault
from vault_pipeline.store.paths import VaultPaths


@dataclass(frozen=True)
class PaperHit:
    rank: int
    arxiv_id: str
    view: str  # its best-matching view
    score: float
    published: date
    primary_category: str | None
    categories: list[str]
    text: str
    other_views: list[dict] = field(default_factory=list)  # {view, score, text}, on request

    def as_dict(self) -> dict:
        return asdict(self)


def by_paper(hits: list[SearchHit], k: int, other_views: bool = False) -> list[PaperHit]:
    """The first ``k`` papers of ``hits`` (best first), each by its best view."""
    best: dict[str, SearchHit] = {}
    rest: dict[str, list[dict]] = {}
    for hit in hits:
        if hit.arxiv_id not in best:
            best[hit.arxiv_id] = hit
            rest[hit.arxiv_id] = []
        else:
            rest[hit.arxiv_id].append({"view": hit.view, "score": hit.score, "text": hit.text})
    papers = list(best.values())[:k]
    return [PaperHit(i + 1, h.arxiv_id, h.view, h.score, h.published, h.primary_category,
                     h.categories, h.text, rest[h.arxiv_id] if other_views else [])
            for i, h in enumerate(papers)]


def search_papers(paths: VaultPaths, query: str, *, k: int = 10,
                  filters: SearchFilters | None = None, mode: str = "hybrid",
                  other_views: bool = False) -> list[PaperHit]:
    """``k`` papers for ``query``: enough views are fetched for ``k`` papers even when each
    matches with all of its views."""
    hits = search_vault(paths, query, k=k * len(VIEW_NAMES), filters=filters, mode=mode)
    return by_paper(hits, k, other_views)
