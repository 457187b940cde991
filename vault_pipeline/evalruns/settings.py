"""Settings of one evaluation run. The backend is the ideas stage's (`IdeasSettings`, given
as `ideas`); `model` and `temperature` here override it so a run names its evaluator."""

from __future__ import annotations

import dataclasses
import hashlib
import json
from dataclasses import dataclass, field
from typing import Any

from vault_pipeline.errors import VaultError
from vault_pipeline.llm.settings import IdeasSettings
from vault_pipeline.pipeline.settings import StageSettings

REVIEW_TASKS = ("direct", "anchor", "group", "elo", "swiss")
IDEA_TASKS = ("idea_point3", "idea_point2", "idea_pair", "idea_group")
TASKS = REVIEW_TASKS + IDEA_TASKS
# The review-paradigm study's three inputs (seed 001): title and abstract, and the abstract
# with a vanilla or an objective summary of the full text (`evalruns.summaries`).
INPUTS = ("abstract", "vanilla", "objective")


ELO_ORDERS = ("schedule", "returned")
STAGE = "evalruns"  # `vault.toml [evalruns]`, `VAULT_EVALRUNS_<FIELD>`


@dataclass(frozen=True)
class EvalRunSettings(StageSettings):
    SECTION = STAGE
    LABEL = "evaluation-run settings"

    run_id: str = "default"
    """Name of the run: its calls, predictions and metrics are kept under it."""
    tasks: tuple[str, ...] = TASKS
    """Tasks run: review paradigms (direct, anchor, group, elo, swiss) and InnoEval tasks
    (idea_point3, idea_point2, idea_pair, idea_group)."""
    inputs: tuple[str, ...] = INPUTS  # what the review paradigms read; each runs on each
    """What the review paradigms read, each paradigm on each: `abstract`, `vanilla` and
    `objective` (summaries of the full text made by the summarizer)."""
    model: str | None = None
    """Evaluator model; unset: the ideas backend's."""
    temperature: float = 0.0
    """Sampling temperature of the evaluator."""
    seed: int = 0  # groups, Elo pairings and presentation orders; backend seed = seed + repeat
    """Seed of groups, Elo pairings and presentation orders; the backend's seed is seed + repeat."""
    repeats: int = 1  # test-retest: every call asked this many times (different seeds)
    """Times every call is asked (test-retest), each with another seed."""
    call_budget: int | None = None  # most new calls a run may make (None: no limit)
    """Most new calls a run may make; unset: no limit."""
    anchors_k: int = 3
    """Anchor papers shown with each paper in the anchor paradigm."""
    group_size: int = 5
    """Papers ranked together in the group paradigm."""
    elo_pairs_per_paper: int = 10
    """Pairwise comparisons per paper in the Elo paradigm."""
    elo_k: float = 32.0
    """Elo K-factor."""
    elo_order: str = "schedule"
    """Order the Elo updates replay the comparisons in: `schedule` (default: the fixed
    schedule's, the same ratings from any backend, batch engines included) or `returned`
    (the order the answers came back, as the review-paradigm study updated its ratings)."""
    accept_threshold: float = 6.0
    """Score from which a prediction counts as accept."""
    bootstrap: int = 1000
    """Bootstrap resamples of each metric's confidence interval."""
    embedder: str = "embedded"  # as the evaluation sets: `embedded`, a model, or `lexical`
    """Similarity model of the tasks that retrieve: `embedded`, a model, or `lexical`."""
    price_in: float | None = None  # per million prompt tokens, for the cost of each call
    """Price per million prompt tokens, for the cost of each call."""
    price_out: float | None = None  # per million completion tokens
    """Price per million completion tokens."""

    def cost(self, tokens_in: int, tokens_out: int) -> float | None:
        """What a call's tokens cost at the run's prices (None without prices)."""
        if self.price_in is None and self.price_out is None:
            return None
        return (tokens_in * (self.price_in or 0.0) + tokens_out * (self.price_out or 0.0)) / 1e6
    ideas: dict[str, Any] = field(default_factory=dict)  # backend settings (IdeasSettings)
    """Backend settings, as the ideas stage's (`backend`, `model`, ...)."""
    summarizer: dict[str, Any] = field(default_factory=dict)
    """The summaries' backend, as the ideas stage's settings over `ideas` (e.g. `backend:
    extractive` for offline summaries beside an LLM evaluator); empty: the run's own."""

    def __post_init__(self) -> None:
        problems = [f"unknown task {t!r} (known: {', '.join(TASKS)})"
                    for t in self.tasks if t not in TASKS]
        problems += [f"unknown input {i!r} (known: {', '.join(INPUTS)})"
                     for i in self.inputs if i not in INPUTS]
        if not self.inputs:
            problems.append("inputs cannot be empty")
        if self.repeats < 1:
            problems.append("repeats must be at least 1")
        if self.group_size < 2 or self.anchors_k < 1 or self.elo_pairs_per_paper < 2:
            problems.append("group_size >= 2, anchors_k >= 1, elo_pairs_per_paper >= 2")
        if self.elo_order not in ELO_ORDERS:
            problems.append(f"elo_order must be one of {', '.join(ELO_ORDERS)}")
        if self.call_budget is not None and self.call_budget < 0:
            problems.append("call_budget cannot be negative")
        if not self.run_id or ":" in self.run_id:
            problems.append("run_id must be a non-empty name without ':'")
        if problems:
            raise VaultError("evaluation-run settings: " + "; ".join(problems))

    def backend_settings(self, ideas: IdeasSettings, repeat: int = 0) -> IdeasSettings:
        """The ideas stage's backend settings (``ideas``, the `[ideas]` section the stage
        ``uses``) with this run's `ideas` over them, then its model, temperature and seed."""
        changes = {"model": self.model, "temperature": self.temperature,
                   "seed": self.seed + repeat}
        base = ideas.over({k: v for k, v in self.ideas.items() if k != "prompt"})
        return base.replace(**{k: v for k, v in changes.items() if v is not None})

    def summarizer_settings(self, ideas: IdeasSettings) -> IdeasSettings:
        """The backend that writes the summaries: `summarizer` over the run's backend (the
        first repeat's seed), so by default the evaluator summarizes, as in the study."""
        base = self.backend_settings(ideas, 0)
        own = {k: v for k, v in self.summarizer.items() if k != "prompt"}
        if own.get("backend", base.backend) != base.backend and "model" not in own:
            own["model"] = None  # another backend: its own default model
        return base.replace(**own)

    def fingerprint(self) -> str:
        text = json.dumps(dataclasses.asdict(self), sort_keys=True, default=list)
        return hashlib.sha256(text.encode()).hexdigest()[:12]
