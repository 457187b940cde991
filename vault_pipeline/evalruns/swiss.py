"""Swiss rounds (seed 001): ⌈log2 n⌉ rounds; round 1 a seeded random draw, later rounds
pair papers of equal standing, avoiding repeat matchups: a minimum-cost matching of the
standings (networkx's blossom algorithm; greedy pairing down the standings can leave two
papers that have met although a pairing without a repeat exists). Each round's pairings
depend on the answers before it, so the rounds are asked one at a time; a rerun gets the
same answers from the cache, hence the same pairings, and asks nothing."""

from __future__ import annotations

import math
import random
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from itertools import combinations
from typing import Protocol

import networkx as nx

from vault_pipeline.evalruns.settings import EvalRunSettings
from vault_pipeline.evalruns.tasks import ABSTRACT, Unit, pair_text

SCORE = {"A": 1.0, "B": 0.0, "tie": 0.5}
BLOCK = 32  # papers matched together (even); see `pair_round`
_BYE = "\x00bye"  # the partner of the paper that sits a round out


class Asker(Protocol):
    def __call__(self, units: list[Unit]) -> list[str]: ...

    def answers(self, unit_ids: list[str]) -> dict[str, dict]: ...


@dataclass(frozen=True)
class _Matched:
    pairs: list[tuple[str, str]]
    sits: str | None
    repeats: int  # pairs met before (failed or not) and byes had before


def _match(players: Sequence[str], played: Collection[frozenset[str]],
           failed: Collection[frozenset[str]], byes: Collection[str], bye: bool) -> _Matched:
    """A minimum-cost perfect matching of ``players`` (best standing first; with ``bye``
    one more node whose partner sits out): a failed pairing costs more than every repeat
    together, a repeat (or a second bye) more than every fresh pairing together, then
    the squared distance in standing (a bye: the distance from the bottom), so neighbours
    meet and the lowest paper sits out. Integer weights, so ties resolve exactly."""
    size = len(players)
    fresh = (size // 2 + 1) * size * size  # above any matching's total squared distance
    repeat = fresh + 1
    again = (size // 2 + 2) * repeat
    top = again + repeat + fresh + 1  # every weight positive
    graph = nx.Graph()
    for (i, a), (j, b) in combinations(enumerate(players), 2):
        key = frozenset((a, b))
        penalty = again if key in failed else repeat if key in played else 0
        graph.add_edge(a, b, weight=top - penalty - (j - i) ** 2)
    if bye:
        for i, a in enumerate(players):
            penalty = repeat if a in byes else 0
            graph.add_edge(a, _BYE, weight=top - penalty - (size - 1 - i) ** 2)
    place = {f: i for i, f in enumerate(players)}
    pairs, sits, repeats = [], None, 0
    for a, b in nx.max_weight_matching(graph, maxcardinality=True):
        if _BYE in (a, b):
            sits = b if a == _BYE else a
            repeats += sits in byes
            continue
        first, second = sorted((a, b), key=place.__getitem__)
        repeats += frozenset((a, b)) in played or frozenset((a, b)) in failed
        pairs.append((first, second))
    return _Matched(pairs, sits, repeats)


def pair_round(order: Sequence[str], played: Collection[frozenset[str]],
               failed: Collection[frozenset[str]] = frozenset(),
               byes: Collection[str] = frozenset(), block: int = BLOCK
               ) -> tuple[list[tuple[str, str]], str | None]:
    """One round's pairings down ``order`` (best standing first) and who sits out (an odd
    field: the lowest paper that has not sat out yet): a matching, so nobody meets a paper
    met before (``played``) while the round has a pairing without, and a pairing whose
    match failed (``failed``) is re-made only when nothing else is left. The standings are
    matched ``block`` papers at a time (networkx's blossom matching is cubic: the whole
    field at once takes seconds per round for a few hundred papers); a block that cannot
    avoid a repeat takes in the next one, and when the rest of the field together still
    cannot, the whole field is matched at once, so a repeat is made only where no pairing
    of the round avoids it."""
    if block < 2 or block % 2:
        raise ValueError("block must be an even number of at least 2")
    odd = len(order) % 2 == 1
    pairs: list[tuple[str, str]] = []
    sits, start = None, 0
    while start < len(order):
        end = min(len(order), start + block)
        while True:
            found = _match(order[start:end], played, failed, byes, odd and end == len(order))
            if not found.repeats or end == len(order):
                break
            end = min(len(order), end + block)
        if found.repeats and start:
            found, pairs, end = _match(order, played, failed, byes, odd), [], len(order)
        pairs += found.pairs
        sits = found.sits if found.sits is not None else sits
        start = end
    rank = {f: i for i, f in enumerate(order)}
    return sorted(pairs, key=lambda p: rank[p[0]]), sits


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
    failed: set[frozenset[str]] = set()  # quarantined matches: asking again fails again
    byes: set[str] = set()
    rounds = math.ceil(math.log2(len(draw))) if len(draw) > 1 else 0
    for number in range(1, rounds + 1):
        order = draw if number == 1 else sorted(draw, key=lambda f: (-points[f], place[f]))
        pairs, sits = pair_round(order, played, failed, byes)
        if sits is not None:
            byes.add(sits)
        shown = [(a, b) if rng.random() < 0.5 else (b, a) for a, b in pairs]
        units = [Unit("swiss", f"r{number:02d}m{n:04d}", (a, b),
                      {"input": pair_text(papers[a], papers[b])}, input=source)
                 for n, (a, b) in enumerate(shown)]
        ids = ask(units)
        answers = ask.answers(ids)
        for (a, b), unit_id in zip(shown, ids, strict=True):
            played.add(frozenset((a, b)))
            answer = answers.get(unit_id)
            if answer is None:
                failed.add(frozenset((a, b)))
            else:
                points[a] += SCORE[answer["better"]]
                points[b] += 1.0 - SCORE[answer["better"]]
