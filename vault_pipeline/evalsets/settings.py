"""Settings of the evaluation sets, with the seeds' choices as defaults.

Point- and pair-wise quotas are totals over the idea venues, as InnoEval reports its sets:
217 ideas (Reject 138, Poster 66, Spotlight 9, Oral 4) and 372 pairs (172 easy, 200 hard,
split as InnoEval's released set is: poster-oral 69, reject-poster 67, poster-spotlight 64).
Per-venue halves cannot reach those totals (9 spotlights make 5 + 5 or 4 + 4). The group
settings give its 172 groups (86 per venue) retrieved from a pool of 800 reranked to 120.
Hard pairs and group members must be at least 0.4 similar (cosine) to their partner or
query: the off-topic cases found on the sample were 0.297 (a "hard" pair) and 0.335 (a
group's best member among members at 0.99); in the synthetic benchmark venue same-topic
pairs are 0.50-0.56 by TF-IDF and other topics at most 0.07. The floor is on the similarity's
own scale: raise it for an embedder whose unrelated texts already score high. The
review-paradigm defaults are those of seed 001: ICLR 2025 scored population, 30 papers per
integer score bin 2-8 (every paper in the other bins), accept threshold 6, an anchor set of
100 zero-variance ICLR 2024 papers, full text truncated at 30,000 characters."""

from __future__ import annotations

import dataclasses
import hashlib
import json
from dataclasses import dataclass, field
from typing import Any

from vault_pipeline.errors import VaultError
from vault_pipeline.pipeline.settings import StageSettings

STAGE = "evalsets"

LABELS = ("Reject", "Poster", "Spotlight", "Oral")
OFF_TRACK = ("Withdrawn", "Desk rejected")  # decisions that are not a verdict on the idea
PAIR_TYPES = {  # name: (lower label, higher label, easy or hard)
    "reject-oral": ("Reject", "Oral", "easy"),
    "poster-oral": ("Poster", "Oral", "hard"),
    "reject-poster": ("Reject", "Poster", "hard"),
    "poster-spotlight": ("Poster", "Spotlight", "hard"),
}
WITHDRAWN_MODES = ("exclude", "label")
BIN_RULES = ("floor", "round")
LEXICAL = "lexical"  # the similarity used when asked for, or when no embedder is installed


@dataclass(frozen=True)
class EvalSetsSettings(StageSettings):
    SECTION = STAGE
    LABEL = "evaluation-set"

    seed: int = 0
    """Seed of every sample the sets draw."""
    # idea sets (seed 000)
    idea_venues: tuple[str, ...] = ("ICLR.cc/2025/Conference", "NeurIPS.cc/2025/Conference")
    """OpenReview venues the idea sets are drawn from."""
    pointwise_quota: dict[str, int] = field(default_factory=lambda: {
        "Reject": 138, "Poster": 66, "Spotlight": 9, "Oral": 4})  # totals over idea_venues
    """Point-wise papers per decision label, in total over the idea venues (InnoEval's 217)."""
    withdrawn: str = "exclude"  # or "label": Withdrawn / Desk rejected as labels of their own
    """`exclude` withdrawn and desk-rejected submissions, or `label` them as labels of their own."""
    pair_quota: dict[str, int] = field(default_factory=lambda: {  # totals over idea_venues
        "reject-oral": 172, "poster-oral": 69, "reject-poster": 67, "poster-spotlight": 64})
    """Pairs per pair type (lower-higher label), in total over the idea venues (InnoEval's
    released 372)."""
    pair_min_similarity: float | None = None  # floor for every pair; None: none
    """Least similarity of any pair's two ideas; unset: no floor."""
    hard_pair_min_similarity: float | None = 0.4  # floor for hard pairs (close topics)
    """Least similarity of a hard pair's two ideas (close topics); unset: no floor."""
    groups_per_venue: int = 86
    """Group-wise sets per venue."""
    group_pool: int = 800  # retrieval: nearest candidates by similarity
    """Candidates retrieved by similarity for each group."""
    group_top_k: int = 120  # kept after reranking
    """Candidates kept after reranking."""
    group_min_labels: int = 3  # distinct labels a group must span
    """Distinct labels a group must span."""
    group_min_similarity: float | None = 0.4  # every member's similarity to the query
    """Least similarity of every group member to the group's query (keeps the best member on
    topic); unset: no floor."""
    rerank_area_bonus: float = 0.05  # added to the similarity of a same-primary-area candidate
    """Added to the similarity of a candidate in the same primary area."""
    rerank_keyword_weight: float = 0.10  # times the Jaccard overlap of author keywords
    """Weight of the Jaccard overlap of author keywords in reranking."""
    embedder: str = "embedded"  # `embedded`, a model folder or hub id, or `lexical`
    """Similarity model: `embedded`, a model folder or hub id, or `lexical`."""
    embed_batch_size: int = 64
    """Texts embedded per batch."""
    embed_backend: str = "onnx"
    """`onnx` (ONNX Runtime, as the index's) or `torch` (sentence-transformers): the same
    weights and similarities; ONNX saves importing torch (benchmarks/bench_topic_space.py)."""
    # idea extraction: the vault's LLM backends (`backend`, `model`, ... as in the ideas stage)
    prompt: str = "idea_extract.v2"
    """Prompt file of idea extraction from submissions."""
    ideas: dict[str, Any] = field(default_factory=dict)
    """Backend settings of idea extraction, as the ideas stage's (`backend`, `model`, ...)."""
    # review-paradigm sets (seed 001)
    review_venue: str = "ICLR.cc/2025/Conference"
    """Venue of the review-paradigm sets (scored population)."""
    anchor_venue: str = "ICLR.cc/2024/Conference"
    """Venue of the anchor set."""
    anchor_size: int = 100
    """Papers in the anchor set (zero-variance ratings)."""
    anchor_min_reviews: int = 2
    """Reviews an anchor paper needs."""
    accept_threshold: float = 6.0
    """Mean rating from which a paper counts as accepted."""
    per_bin: int = 30
    """Papers sampled per integer score bin."""
    dense_bins: tuple[int, ...] = (2, 3, 4, 5, 6, 7, 8)
    """Score bins sampled `per_bin` papers; every paper is kept in the others."""
    bin_rule: str = "floor"  # integer score bin of a mean rating: floor (5.75 -> 5) or round
    """Integer bin of a mean rating: `floor` (5.75 -> 5) or `round`."""
    include_withdrawn: bool = False  # in the anchors and the reliability figures
    """Keep withdrawn papers in the anchors and the reliability figures."""
    withdrawn_as_non_accepted: bool = True
    """The stratified sample keeps rated withdrawn / desk-rejected papers and counts them as
    not accepted, as the review-paradigm study did; off: left out unless include_withdrawn."""
    anchors_per_paper: int = 3  # nearest anchors by abstract embedding, kept with each paper
    """Nearest anchors by abstract embedding kept with each sampled paper."""
    rating_scale: tuple[float, float] = (1.0, 10.0)
    """Lowest and highest rating of the venue's scale."""
    max_text_chars: int = 30_000
    """Characters of a paper's full text kept."""

    def __post_init__(self) -> None:
        problems = []
        if self.withdrawn not in WITHDRAWN_MODES:
            problems.append(f"withdrawn must be one of {WITHDRAWN_MODES}")
        if self.bin_rule not in BIN_RULES:
            problems.append(f"bin_rule must be one of {BIN_RULES}")
        known = set(LABELS) | set(OFF_TRACK)
        problems += [f"unknown point-wise label {k!r} (known: {sorted(known)})"
                     for k in self.pointwise_quota if k not in known]
        problems += [f"unknown pair type {k!r} (known: {sorted(PAIR_TYPES)})"
                     for k in self.pair_quota if k not in PAIR_TYPES]
        quotas = [*self.pointwise_quota.values(), *self.pair_quota.values(),
                  self.groups_per_venue, self.anchor_size, self.per_bin]
        if any(int(q) < 0 for q in quotas):
            problems.append("quotas cannot be negative")
        if not 1 <= self.group_top_k <= self.group_pool:
            problems.append("group_top_k must be between 1 and group_pool")
        if self.group_min_labels < 2:
            problems.append("group_min_labels must be at least 2")
        low, high = self.rating_scale
        if not low < high:
            problems.append("rating_scale must be (low, high) with low < high")
        floors = (self.pair_min_similarity, self.hard_pair_min_similarity,
                  self.group_min_similarity)
        if any(f is not None and not -1.0 <= f <= 1.0 for f in floors):
            problems.append("similarity floors are cosines: between -1 and 1, or null")
        if self.anchors_per_paper < 0:
            problems.append("anchors_per_paper cannot be negative")
        if self.max_text_chars < 1:
            problems.append("max_text_chars must be positive")
        if problems:
            raise VaultError("evaluation-set settings: " + "; ".join(problems))

    def as_dict(self) -> dict[str, Any]:
        return json.loads(json.dumps(dataclasses.asdict(self), default=list))

    def fingerprint(self) -> str:
        """Short hash of every setting, recorded with each set."""
        text = json.dumps(self.as_dict(), sort_keys=True)
        return hashlib.sha256(text.encode()).hexdigest()[:12]
