"""Swiss rounds (seed 001): ⌈log2 n⌉ rounds; round 1 a seeded random draw, later rounds
pair papers of equal standing, avoiding repeat matchups. Each round's pairings depend on the
answers before it, so the rounds are asked one at a time; a rerun gets the same answers from
the cache, hence the same pairings, and asks nothing."""

from __future__ import annotations

import math
import random
from typing import Protocol

from vault_pipeline.evalruns.settings import EvalRunSettings
from vault_pipeline.evalruns.tasks import ABSTRACT, Unit, pair_text

SCORE = {"A": 1.0, "B": 0.0, "tie": 0.5}


class Asker(Protocol):
    def __call__(self, units: list[Unit]) -> list[str]: ...

    def answers(self, unit_ids: list[str]) -> dict[str, dict]: ...


def pair_round(order: list[str], played: set[frozenset[str]]
               ) -> tuple[list[tuple[str, str]], str | None]:
    """Greedy pairing down ``order`` (best standing first): each paper meets the next one it
    has not met (the next one at all when it has met every one left); an odd one out sits
    the round out."""
    left = list(order)
    pairs = []
    while len(left) > 1:
        first = left.pop(0)
        index = next((i for i, other in enumerate(left)
                      if frozenset((first, other)) not in played), 0)
        pairs.append((first, left.pop(index)))
    return pairs, (left[0] if left else None)


def swiss_rounds(ask: Asker, papers: dict[str, str], settings: EvalRunSettings,
                 source: str = ABSTRACT) -> None:
    """Ask every round of the tournament of ``papers`` (what the evaluator reads of each
    sampled paper for input ``source``; who is shown first: seeded random)."""
    rng = random.Random(f"swiss:{settings.seed}")
    draw = sorted(papers)
    rng.shuffle(draw)
    place = {f: i for i, f in enumerate(draw)}  # tie-break within a standing
    points = dict.fromkeys(draw, 0.0)
    played: set[frozenset[str]] = set()
    rounds = math.ceil(math.log2(len(draw))) if len(draw) > 1 else 0
    for number in range(1, rounds + 1):
        order = draw if number == 1 else sorted(draw, key=lambda f: (-points[f], place[f]))
        pairs, _ = pair_round(order, played)
        shown = [(a, b) if rng.random() < 0.5 else (b, a) for a, b in pairs]
        units = [Unit("swiss", f"r{number:02d}m{n:04d}", (a, b),
                      {"input": pair_text(papers[a], papers[b])}, input=source)
                 for n, (a, b) in enumerate(shown)]
        ids = ask(units)
        answers = ask.answers(ids)
        for (a, b), unit_id in zip(shown, ids, strict=True):
            played.add(frozenset((a, b)))
            answer = answers.get(unit_id)
            if answer is not None:
                points[a] += SCORE[answer["better"]]
                points[b] += 1.0 - SCORE[answer["better"]]
