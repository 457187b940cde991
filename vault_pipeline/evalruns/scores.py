"""Scores from pairwise outcomes: Elo on the fixed schedule (order-dependent, as the study
runs it) and a Bradley-Terry fit over all outcomes at once (order-independent)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import numpy as np

# (first, second, score of first: 1 win, 0.5 tie, 0 loss)
Outcome = tuple[str, str, float]


def elo(outcomes: Iterable[Outcome], k: float = 32.0, start: float = 1500.0
        ) -> dict[str, float]:
    """Ratings after playing ``outcomes`` in order, each update with the usual logistic
    expectation on a 400-point scale."""
    ratings: dict[str, float] = {}
    for a, b, score in outcomes:
        ra, rb = ratings.setdefault(a, start), ratings.setdefault(b, start)
        expected = 1.0 / (1.0 + 10 ** ((rb - ra) / 400.0))
        ratings[a] = ra + k * (score - expected)
        ratings[b] = rb - k * (score - expected)
    return ratings


def bradley_terry(outcomes: Sequence[Outcome], iterations: int = 1000, tol: float = 1e-9,
                  prior: float = 0.1) -> dict[str, float]:
    """Log-strengths (mean 0) by Hunter's MM algorithm; a tie counts half a win each way and
    ``prior`` adds that many virtual half-wins against an average item, so a paper that won
    or lost everything still gets a finite strength."""
    names = sorted({n for a, b, _ in outcomes for n in (a, b)})
    if not names:
        return {}
    index = {n: i for i, n in enumerate(names)}
    size = len(names)
    wins = np.full(size, prior)  # virtual: half a win and half a loss against strength 1
    games = np.zeros((size, size))
    for a, b, score in outcomes:
        i, j = index[a], index[b]
        wins[i] += score
        wins[j] += 1.0 - score
        games[i, j] += 1.0
        games[j, i] += 1.0
    strength = np.ones(size)
    for _ in range(iterations):
        pair_sum = strength[:, None] + strength[None, :]
        denom = (games / pair_sum).sum(axis=1) + 2 * prior / (strength + 1.0)
        fresh = wins / denom
        fresh /= np.exp(np.log(fresh).mean())
        done = np.max(np.abs(np.log(fresh) - np.log(strength))) < tol
        strength = fresh
        if done:
            break
    logs = np.log(strength)
    return {n: float(logs[index[n]]) for n in names}
