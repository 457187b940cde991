"""The citations stage's declaration: Semantic Scholar responses in the raw zone to
`citations` and `citation_counts`."""

from __future__ import annotations

from vault_pipeline.citations.build import build_citations
from vault_pipeline.pipeline.stage import Stage, plain
from vault_pipeline.schemas import CITATION_COUNTS, CITATIONS

STAGE = Stage(
    "citations", "citations", inputs=("raw_files",), outputs=(CITATIONS, CITATION_COUNTS),
    run=plain(build_citations),
    describe=lambda r: (f"{r.citations} references of {r.papers} papers from {r.files} "
                        "Semantic Scholar responses"),
    figures=lambda r: {
        CITATIONS.name: {"dagster/row_count": r.citations, "responses_parsed": r.files,
                         "cited_with_arxiv_id": r.cited_with_arxiv_id},
        CITATION_COUNTS.name: {"dagster/row_count": r.papers}})
