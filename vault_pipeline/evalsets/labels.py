"""Decision labels of the InnoEval sets and the seeded order every sample is drawn in.

Labels: Reject / Poster / Spotlight / Oral, grouped into three classes (Reject / Poster /
Highlight, where Highlight is Spotlight or Oral) and two (Reject / Accept), as in seed 000.
Withdrawn and desk-rejected submissions are either kept out with that reason or, when asked
for, labelled as such (grouped with Reject in the three- and two-class labels: they were not
accepted).

Sampling order: each item's key is the sha256 of (seed, scope, id), so a sample does not
depend on the order rows arrive in, the same seed always draws the same items, and adding
submissions to a venue leaves most of an earlier sample in place."""

from __future__ import annotations

import hashlib
import re

from vault_pipeline.evalsets.settings import LABELS, OFF_TRACK

TIER_OF_DECISION = {"Accept (oral)": "Oral", "Accept (spotlight)": "Spotlight",
                    "Accept (poster)": "Poster", "Reject": "Reject",
                    "Withdrawn": "Withdrawn", "Desk rejected": "Desk rejected"}
THREE_CLASS = {"Reject": "Reject", "Poster": "Poster", "Spotlight": "Highlight",
               "Oral": "Highlight", "Withdrawn": "Reject", "Desk rejected": "Reject"}
BINARY = {"Reject": "Reject", "Poster": "Accept", "Spotlight": "Accept", "Oral": "Accept",
          "Withdrawn": "Reject", "Desk rejected": "Reject"}
RANK = {label: position for position, label in enumerate(reversed(LABELS), start=1)}
_YEAR = re.compile(r"(?<!\d)(19|20)\d{2}(?!\d)")


def label_of(decision: str | None, withdrawn: str = "exclude") -> tuple[str | None, str | None]:
    """(label, None) or (None, why the submission has no label)."""
    if decision is None:
        return None, "no decision yet"
    label = TIER_OF_DECISION.get(decision)
    if label is None:
        if decision == "Accept":
            return None, "accepted without a presentation tier (oral, spotlight, poster)"
        return None, f"decision {decision!r} is not one of the labels"
    if label in OFF_TRACK and withdrawn == "exclude":
        return None, f"{label.lower()} (kept out: withdrawn = exclude)"
    return label, None


def order_key(seed: int, scope: str, item: str) -> str:
    """The item's place in the seeded order of ``scope``."""
    return hashlib.sha256(f"{seed}\x1f{scope}\x1f{item}".encode()).hexdigest()


def seeded_order(items: list[str], seed: int, scope: str) -> list[str]:
    return sorted(items, key=lambda item: order_key(seed, scope, item))


def coin(seed: int, scope: str, item: str) -> bool:
    """A seeded fair coin for one item (e.g. which side of a pair comes first)."""
    return int(order_key(seed, scope, item)[-1], 16) % 2 == 1


def venue_year(venue_id: str) -> int | None:
    match = _YEAR.search(venue_id)
    return int(match.group()) if match else None
