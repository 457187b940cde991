"""What each task asks: its answer model (the JSON schema the backend is held to), its
prompt file, and the units of work built from an evaluation set. A unit carries only what
the evaluator may see: titles, abstracts or ideas, and for anchors the anchors' own human
scores; never a score of a paper under evaluation (:func:`check_no_leak`)."""

from __future__ import annotations

import random
import re
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np
import polars as pl
from pydantic import BaseModel, ConfigDict, Field

from vault_pipeline.errors import VaultError
from vault_pipeline.evalruns.settings import EvalRunSettings
from vault_pipeline.records.idea import IDEA_FIELDS

ABSTRACT, IDEA = "abstract", "idea"


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Rating(_Strict):
    rating: int = Field(ge=1, le=10)


class IdRating(_Strict):
    id: int
    rating: int = Field(ge=1, le=10)


class GroupRatings(_Strict):
    ratings: list[IdRating]


class PairChoice(_Strict):
    better: Literal["A", "B", "tie"]


class IdeaChoice(_Strict):
    better: Literal["A", "B"]


class Label3(_Strict):
    label: Literal["Reject", "Poster", "Highlight"]


class Label2(_Strict):
    label: Literal["Reject", "Accept"]


class GroupChoice(_Strict):
    best: int
    ranking: list[int]


@dataclass(frozen=True)
class TaskSpec:
    prompt: str
    model: type[BaseModel]
    input: str  # what the evaluator reads: `abstract` or `idea`


SPECS: dict[str, TaskSpec] = {
    "direct": TaskSpec("review_direct.v1", Rating, ABSTRACT),
    "anchor": TaskSpec("review_anchor.v1", Rating, ABSTRACT),
    "group": TaskSpec("review_group.v1", GroupRatings, ABSTRACT),
    "elo": TaskSpec("review_pair.v1", PairChoice, ABSTRACT),
    "swiss": TaskSpec("review_pair.v1", PairChoice, ABSTRACT),
    "idea_point3": TaskSpec("idea_point3.v1", Label3, IDEA),
    "idea_point2": TaskSpec("idea_point2.v1", Label2, IDEA),
    "idea_pair": TaskSpec("idea_pair.v1", IdeaChoice, IDEA),
    "idea_group": TaskSpec("idea_group.v1", GroupChoice, IDEA),
}


@dataclass(frozen=True)
class Unit:
    """One call before rendering: the forums shown, in order, and the prompt's fields."""

    task: str
    item_id: str
    items: tuple[str, ...]
    fields: dict[str, str]
    anchors: tuple[str, ...] = field(default=())  # anchor forum ids shown (anchor task)
    input: str = ABSTRACT  # what the evaluator reads: `abstract`, `vanilla`, `objective`, `idea`


def paper_text(title: str | None, abstract: str | None, summary: str | None = None) -> str:
    """Title and abstract, then the summary where the input has one (the study's
    `{summary_section}`)."""
    text = f"Title: {title or '(untitled)'}\nAbstract: {abstract or '(no abstract)'}"
    return text + f"\nSummary:\n{summary}" if summary else text


def input_texts(sample: pl.DataFrame, summaries: dict[str, str] | None = None
                ) -> dict[str, str]:
    """What the evaluator reads of each sampled paper for one input: title and abstract,
    with the paper's summary when ``summaries`` is given (a paper without one is left out
    of that input)."""
    out = {}
    for row in sample.iter_rows(named=True):
        summary = None if summaries is None else summaries.get(row["forum_id"])
        if summaries is None or summary:
            out[row["forum_id"]] = paper_text(row["title"], row["abstract"], summary)
    return out


def idea_text(idea: dict[str, Any] | None) -> str:
    idea = idea or {}
    return "\n".join(f"{name.replace('_', ' ').capitalize()}: {idea[name]}"
                     for name in IDEA_FIELDS if idea.get(name))


def _listed(labels: list[str], texts: list[str], word: str) -> str:
    return "\n\n".join(f"### {word} {label}\n{text}" for label, text in zip(labels, texts,
                                                                           strict=True))


def direct_units(papers: dict[str, str], source: str = ABSTRACT) -> list[Unit]:
    return [Unit("direct", f, (f,), {"input": text}, input=source)
            for f, text in papers.items()]


def _norm_title(title: str | None) -> str:
    return re.sub(r"\W+", " ", (title or "").lower()).strip()


def nearest_anchors(sample: pl.DataFrame, anchors: pl.DataFrame, k: int,
                    similarity: np.ndarray) -> dict[str, list[int]]:
    """Row indices of the ``k`` most similar anchors of each paper (``similarity``: papers x
    anchors), never the paper itself: not its forum, nor a paper of the same title."""
    anchor_forums = anchors.get_column("forum_id").to_list()
    anchor_titles = [_norm_title(t) for t in anchors.get_column("title").to_list()]
    out = {}
    for row, paper in enumerate(sample.iter_rows(named=True)):
        order = np.argsort(-similarity[row], kind="stable")
        own = _norm_title(paper["title"])
        out[paper["forum_id"]] = [int(i) for i in order if anchor_forums[i] != paper["forum_id"]
                                  and anchor_titles[i] != own][:k]
    return out


def anchor_units(sample: pl.DataFrame, anchors: pl.DataFrame, k: int,
                 similarity: np.ndarray, papers: dict[str, str] | None = None,
                 source: str = ABSTRACT) -> list[Unit]:
    """The anchors are shown by title and abstract whatever the input (the study summarises
    only the papers rated); the paper itself as ``papers`` has it."""
    nearest = nearest_anchors(sample, anchors, k, similarity)
    rows = anchors.to_dicts()
    units = []
    for paper in sample.iter_rows(named=True):
        if papers is not None and paper["forum_id"] not in papers:
            continue
        chosen = [rows[i] for i in nearest[paper["forum_id"]]]
        shown = "\n\n".join(f"### Reference {n} (score {a['mean_rating']:g})\n"
                            f"{paper_text(a['title'], a['abstract'])}"
                            for n, a in enumerate(chosen, 1))
        text = papers[paper["forum_id"]] if papers is not None else paper_text(
            paper["title"], paper["abstract"])
        units.append(Unit("anchor", paper["forum_id"], (paper["forum_id"],),
                          {"input": text, "anchors": shown or "(none)"},
                          tuple(a["forum_id"] for a in chosen), source))
    return units


def group_units(papers: dict[str, str], size: int, seed: int, source: str = ABSTRACT
                ) -> list[Unit]:
    """Seeded random groups of ``size``; a last group of one joins the one before."""
    order = sorted(papers)
    random.Random(f"group:{seed}").shuffle(order)
    groups = [order[i:i + size] for i in range(0, len(order), size)]
    if len(groups) > 1 and len(groups[-1]) == 1:
        last = groups.pop()
        groups[-1] += last
    return [Unit("group", f"g{n:04d}", tuple(g),
                 {"count": str(len(g)), "input": _listed([str(i) for i in range(1, len(g) + 1)],
                                                         [papers[f] for f in g], "Submission")},
                 input=source)
            for n, g in enumerate(groups)]


def elo_schedule(forums: list[str], per_paper: int, seed: int) -> list[tuple[str, str]]:
    """Pairings fixed in advance: on a seeded circle each paper meets the next
    ``per_paper // 2`` papers, so each plays ``per_paper`` games (fewer in a small sample);
    the play order and who is shown first are seeded random too."""
    rng = random.Random(f"elo:{seed}")
    circle = sorted(forums)
    rng.shuffle(circle)
    seen, pairs = set(), []
    for step in range(1, per_paper // 2 + 1):
        for i, a in enumerate(circle):
            b = circle[(i + step) % len(circle)]
            if a != b and frozenset((a, b)) not in seen:
                seen.add(frozenset((a, b)))
                pairs.append((a, b) if rng.random() < 0.5 else (b, a))
    rng.shuffle(pairs)
    return pairs


def pair_text(first: str, second: str) -> str:
    return _listed(["A", "B"], [first, second], "Submission")


def elo_units(papers: dict[str, str], per_paper: int, seed: int, source: str = ABSTRACT
              ) -> list[Unit]:
    return [Unit("elo", f"m{n:05d}", (a, b), {"input": pair_text(papers[a], papers[b])},
                 input=source)
            for n, (a, b) in enumerate(elo_schedule(list(papers), per_paper, seed))]


def point_units(task: str, pointwise: pl.DataFrame) -> list[Unit]:
    """One unit per submission with an idea (one whose extraction was quarantined stays in
    the set with its `idea_note`, and out of the run: there is nothing to show)."""
    return [Unit(task, r["forum_id"], (r["forum_id"],), {"input": idea_text(r["idea"])},
                 input=IDEA)
            for r in pointwise.iter_rows(named=True) if r["idea"] is not None]


def pair_units(pairwise: pl.DataFrame) -> list[Unit]:
    """The set's own (seeded, random) order: `a` is shown as A; pairs with both ideas."""
    return [Unit("idea_pair", r["pair_id"], (r["forum_id_a"], r["forum_id_b"]),
                 {"input": _listed(["A", "B"], [idea_text(r["idea_a"]), idea_text(r["idea_b"])],
                                   "Idea")}, input=IDEA)
            for r in pairwise.iter_rows(named=True)
            if r["idea_a"] is not None and r["idea_b"] is not None]


def idea_group_units(groupwise: pl.DataFrame) -> list[Unit]:
    """One unit per group whose every member has an idea."""
    units = []
    for (group,), rows in groupwise.sort("group_id", "position").group_by(
            "group_id", maintain_order=True):
        members = rows.to_dicts()
        if any(m["idea"] is None for m in members):
            continue
        units.append(Unit("idea_group", str(group), tuple(m["forum_id"] for m in members),
                          {"count": str(len(members)),
                           "input": _listed([str(i) for i in range(1, len(members) + 1)],
                                            [idea_text(m["idea"]) for m in members], "Idea")},
                          input=IDEA))
    return units


def check_no_leak(units: list[Unit]) -> None:
    """The leakage guard, run before any call: scores reach a prompt only through the
    anchors, and no anchor is a paper under evaluation."""
    for unit in units:
        if set(unit.anchors) & set(unit.items):
            raise VaultError(f"{unit.task} {unit.item_id}: an anchor is the paper itself")
        if not unit.anchors and "(score " in unit.fields.get("anchors", ""):
            raise VaultError(f"{unit.task} {unit.item_id}: scores shown without anchors")


def task_units(task: str, sets: dict[str, pl.DataFrame], settings: EvalRunSettings,
               similarity: np.ndarray | None = None, papers: dict[str, str] | None = None,
               source: str = ABSTRACT) -> list[Unit]:
    """The units of one task; a review paradigm's for one input (``papers``: what the
    evaluator reads of each sampled paper, by default title and abstract)."""
    sample = sets.get("stratified")
    if task in ("direct", "anchor", "group", "elo"):
        papers = papers if papers is not None else input_texts(sample)
    if task == "direct":
        return direct_units(papers, source)
    if task == "anchor":
        assert similarity is not None
        return anchor_units(sample, sets["anchors"], settings.anchors_k, similarity, papers,
                            source)
    if task == "group":
        return group_units(papers, settings.group_size, settings.seed, source)
    if task == "elo":
        return elo_units(papers, settings.elo_pairs_per_paper, settings.seed, source)
    if task == "swiss":  # asked round by round (`swiss.swiss_rounds`)
        return []
    if task in ("idea_point3", "idea_point2"):
        return point_units(task, sets["pointwise"])
    if task == "idea_pair":
        return pair_units(sets["pairwise"])
    return idea_group_units(sets["groupwise"])
