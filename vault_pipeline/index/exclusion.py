"""InnoEval's self-exclusion rule for retrieval on behalf of a target: never the target
itself, nor a paper whose title contains 80% of the target's title (the same work under a
longer or reworded title)."""

from __future__ import annotations

import re
from collections.abc import Iterable

TITLE_SHARE = 0.8
_WORD = re.compile(r"[^\W_]+")


def title_words(title: str | None) -> list[str]:
    return _WORD.findall((title or "").lower())


def title_contained(target_title: str | None, other_title: str | None,
                    share: float = TITLE_SHARE) -> bool:
    """Whether ``other_title`` contains at least ``share`` of the target title's words (as a
    multiset: a word the target repeats must be there as often)."""
    wanted = title_words(target_title)
    if not wanted:
        return False
    have: dict[str, int] = {}
    for w in title_words(other_title):
        have[w] = have.get(w, 0) + 1
    found = 0
    for w in wanted:
        if have.get(w, 0) > 0:
            have[w] -= 1
            found += 1
    return found / len(wanted) >= share


def excluded_for(target_id: str, target_title: str | None,
                 candidates: Iterable[tuple[str, str | None]],
                 share: float = TITLE_SHARE) -> set[str]:
    """Ids among ``candidates`` (id, title) that retrieval for this target must not return."""
    return {cid for cid, title in candidates
            if cid == target_id or title_contained(target_title, title, share)}
