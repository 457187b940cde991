"""What decides a duplicate: the MinHash shingles and LSH bands, the thresholds of every
fuzzy method (calibrated on the `dev` half of the labelled pairs,
`benchmarks/bench_duplicates.py`; the `heldout` half only reports), the embedder, and the
n-gram size of the decontamination."""

from __future__ import annotations

from dataclasses import dataclass

from vault_pipeline.embeddings.embedders import EMBEDDED
from vault_pipeline.errors import VaultError
from vault_pipeline.pipeline.settings import StageSettings

STAGE = "duplicates"
NO_EMBEDDER = "none"


@dataclass(frozen=True)
class DuplicatesSettings(StageSettings):
    """Thresholds are calibrated on the labelled pairs' `dev` half (docs/duplicates.md)."""

    SECTION = STAGE

    ngram: int = 5
    """Words per MinHash shingle (title and abstract, full text)."""
    bands: int = 28
    """LSH bands: two texts are compared when one band of their signatures agrees (28 x 4:
    a pair of Jaccard 0.6 becomes a candidate with probability 0.98, of 0.3 with 0.2)."""
    rows: int = 4
    """Signature values per band (bands x rows permutations)."""
    abstract_threshold: float = 0.25
    """Estimated Jaccard of title-and-abstract shingles from which two records are one work."""
    fulltext_threshold: float = 0.5
    """Estimated Jaccard of full-text shingles from which two papers are one work."""
    fulltext_chars: int = 60_000
    """Characters of each full text compared (the body's start: where versions agree)."""
    model: str = EMBEDDED
    """Embedder of the semantic method (the index's models; `none`: no semantic method)."""
    backend: str = "onnx"
    """`onnx` or `torch`, as the index's."""
    semantic_threshold: float = 0.83
    """Cosine of title-and-abstract embeddings from which two records are one work."""
    overlap_n: int = 13
    """n of the n-gram decontamination of views (13, as NeMo Curator's task decontamination)."""
    overlap_threshold: float = 0.1
    """Share of the shorter text's n-grams found in the other from which two papers' views
    overlap (decontamination)."""

    def __post_init__(self) -> None:
        for name in ("abstract_threshold", "fulltext_threshold", "semantic_threshold",
                     "overlap_threshold"):
            if not 0 < getattr(self, name) <= 1:
                raise VaultError(f"{name} must lie in (0, 1], not {getattr(self, name)}")
        for name in ("ngram", "bands", "rows", "overlap_n", "fulltext_chars"):
            if getattr(self, name) < 1:
                raise VaultError(f"{name} must be at least 1, not {getattr(self, name)}")
