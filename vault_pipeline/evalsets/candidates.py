"""The submissions the idea sets draw from: those of the configured venues with a decision
label, their valid ratings, and what was left out with the reason (no decision yet, an accept
without a tier, withdrawn or desk rejected when they are kept out)."""

from __future__ import annotations

from dataclasses import dataclass, field

import polars as pl

from vault_pipeline.evalsets.inputs import Inputs, attach_ratings, excluded_frame
from vault_pipeline.evalsets.labels import BINARY, THREE_CLASS, label_of, venue_year
from vault_pipeline.evalsets.settings import EvalSetsSettings

IDEA_SETS = "idea_sets"  # `set_name` of exclusions shared by the three idea sets


@dataclass
class Candidates:
    frame: pl.DataFrame  # labelled submissions of the idea venues
    excluded: pl.DataFrame
    notes: list[str] = field(default_factory=list)


def labelled_submissions(inputs: Inputs, settings: EvalSetsSettings) -> Candidates:
    subs = inputs.submissions.filter(pl.col("venue_id").is_in(list(settings.idea_venues)))
    notes = []
    for venue in settings.idea_venues:
        part = subs.filter(pl.col("venue_id") == venue)
        if part.is_empty():
            notes.append(f"{venue}: no submissions in the vault")
        elif part.get_column("decision").is_null().all():
            notes.append(f"{venue}: no decisions yet ({part.height} submissions undecided): "
                         "nothing to label")
    labels, rows = [], []
    for forum, venue, decision in subs.select("forum_id", "venue_id", "decision").iter_rows():
        label, reason = label_of(decision, settings.withdrawn)
        labels.append(label)
        if reason is not None:
            rows.append({"set_name": IDEA_SETS, "venue_id": venue, "forum_id": forum,
                         "note_id": None, "reason": reason})
    frame = (subs.with_columns(label=pl.Series(labels, dtype=pl.String))
             .filter(pl.col("label").is_not_null())
             .with_columns(label_3class=pl.col("label").replace_strict(THREE_CLASS),
                           label_binary=pl.col("label").replace_strict(BINARY),
                           year=pl.col("venue_id").map_elements(venue_year,
                                                                return_dtype=pl.Int32),
                           author_tldr=pl.col("tldr")))
    frame = attach_ratings(frame, inputs.reviews).sort("venue_id", "forum_id")
    return Candidates(frame, excluded_frame(rows), notes)
