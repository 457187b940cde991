"""A small vault for the splits, index and export tests: `papers` and `views` tables in the
shapes the ideas and metadata stages write, with papers on both sides of a 2026-01-01
cutoff, in several fields, and the bad inputs the issue names (a paper without views,
duplicate views)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date

import polars as pl

from vault_pipeline.ideas.views import VIEW_NAMES
from vault_pipeline.schemas import PAPERS
from vault_pipeline.store.paths import VaultPaths

CUTOFF = date(2026, 1, 1)


@dataclass(frozen=True)
class Paper:
    arxiv_id: str
    published: date
    categories: tuple[str, ...]
    title: str
    abstract: str
    topic: str  # what its views talk about


PAPERS_LIST = [
    Paper("2401.00001", date(2024, 1, 10), ("cs.IR", "cs.LG"),
          "Two-Stage Retrieval with Cheap Candidate Generation",
          "We propose a two-stage ranking method that filters candidates cheaply.",
          "web search latency: retrieve a candidate set cheaply, then rerank the shortlist"),
    Paper("2402.00002", date(2024, 2, 11), ("cs.IR",),
          "Recommendation with First-Stage Filtering",
          "We introduce a recommender architecture with first-stage filtering.",
          "recommendation latency: filter items first, then score a shortlist finely"),
    Paper("2403.00003", date(2024, 3, 12), ("q-bio.NC",),
          "Sparse Coding in the Olfactory Bulb",
          "We develop a model of sparse coding in olfaction.",
          "odour recognition: sparse random projections of receptor signals"),
    Paper("2404.00004", date(2024, 4, 13), ("hep-th",),
          "Black Hole Entropy from Entanglement",
          "We derive a framework relating black hole entropy and entanglement.",
          "black hole entropy counted by entanglement across the horizon"),
    Paper("2405.00005", date(2025, 5, 14), ("cs.LG",),
          "Mixture of Experts Routing with Learned Capacity",
          "We propose a routing algorithm for sparse mixture-of-experts layers.",
          "expert routing: tokens overflow fixed expert capacity and are dropped"),
    Paper("2512.00006", date(2025, 12, 31), ("cs.CL",),
          "Speculative Decoding with Draft Trees",
          "We propose a speculative decoding method with tree-shaped drafts.",
          "decoding latency of large language models: draft many tokens, verify in parallel"),
    # post-cutoff papers
    Paper("2601.00007", date(2026, 1, 1), ("cs.LG",),
          "Adaptive Capacity for Expert Routing",
          "We propose a novel method that adapts expert capacity per batch.",
          "expert routing drops tokens when load is uneven across experts"),
    Paper("2602.00008", date(2026, 2, 2), ("cs.IR",),
          "A Survey of Neural Ranking",
          "This survey reviews neural ranking models for search.",
          "neural ranking survey of cascades and rerankers"),
    Paper("2603.00009", date(2026, 3, 3), ("cs.CL",),
          "LongBench-X: A Benchmark for Long-Context Reasoning",
          "We introduce a new benchmark of long documents for reasoning.",
          "long-context reasoning evaluation over long documents"),
    Paper("2604.00010", date(2026, 4, 4), ("cs.LG",),
          "Cascade Inference for Vision Transformers",
          "We propose a cascade architecture that exits early on easy images.",
          "vision transformer inference cost: easy images do not need every layer"),
    Paper("2605.00011", date(2026, 5, 5), ("cs.LG",),
          "Token Merging for Fast Diffusion",
          "We introduce a token merging algorithm that speeds up diffusion models.",
          "diffusion model sampling cost grows with the number of image tokens"),
    Paper("2606.00012", date(2026, 6, 6), ("cs.LG",),
          "Curriculum Routing without Views",
          "We propose a curriculum method for routing networks.",
          "this paper has no views"),
]
NO_VIEWS = "2606.00012"


def view_text(paper: Paper, view: str) -> str:
    return {
        "problem_setting": f"Setting: {paper.topic}. Inputs: requests. Outputs: a ranking.",
        "challenge": f"What fails: {paper.topic} becomes too slow or inaccurate at scale.",
        "research_gap": f"Prior work addresses {paper.topic} but leaves efficiency unresolved.",
        "intuition": f"Idea: restructure {paper.topic} so cheap steps come first.",
        "proposal": f"Method: a pipeline for {paper.topic}, trained end to end.",
    }[view]


def papers_frame(papers: list[Paper] | None = None) -> pl.DataFrame:
    rows = [{"arxiv_id": p.arxiv_id, "latest_version": 1, "title": p.title,
             "abstract": p.abstract, "authors": ["A. Author"], "categories": list(p.categories),
             "primary_category": p.categories[0], "published": p.published,
             "updated": p.published, "doi": None, "journal_ref": None, "comments": None,
             "license": "http://creativecommons.org/licenses/by/4.0/", "source": "arxiv_api",
             "raw_sha256": "0" * 64} for p in papers or PAPERS_LIST]
    return pl.DataFrame(rows, schema=PAPERS.polars)


def views_frame(papers: list[Paper] | None = None) -> pl.DataFrame:
    rows = [{"arxiv_id": p.arxiv_id, "view": v, "text": view_text(p, v),
             "backend": "extractive", "model": "extractive/1", "prompt_version": "none",
             "input_hash": f"h-{p.arxiv_id}"}
            for p in papers or PAPERS_LIST if p.arxiv_id != NO_VIEWS for v in VIEW_NAMES]
    return pl.DataFrame(rows)


def write_vault(paths: VaultPaths, papers: list[Paper] | None = None,
                views: pl.DataFrame | None = None) -> None:
    """Write `papers` and `views` as their stages would."""
    paths.store.write(PAPERS, papers_frame(papers))
    (views if views is not None else views_frame(papers)).write_parquet(paths.table("views"))
