"""A report's counts: named once, each an int from 0, keyword-only, inherited and added."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field

import pytest

from vault_pipeline.llm.batches import IncrementalCounts
from vault_pipeline.pipeline.counters import Counters


@dataclass
class Harvest(Counters, counts=("pages", "files")):
    window: str
    skipped: bool = False
    notes: list[str] = field(default_factory=list)


@dataclass
class Extraction(IncrementalCounts, counts=("leaky",)):
    backend: str = "extractive"


def test_counts_start_at_zero_and_leave_the_other_fields_their_places() -> None:
    report = Harvest("2025-01-01..2025-01-02", True)
    report.pages += 2
    assert (report.pages, report.files, report.skipped) == (2, 0, True)
    assert report.counted() == {"pages": 2, "files": 0}
    assert Harvest("w", files=3) == Harvest("w", files=3) != Harvest("w")
    assert [f.name for f in dataclasses.fields(Harvest)] == [
        "pages", "files", "window", "skipped", "notes"]
    with pytest.raises(TypeError):
        Harvest("w", 1, [], 4)  # a count is never positional


def test_a_derived_report_adds_its_counts_and_takes_a_part_s() -> None:
    assert Extraction.COUNTS == ("reused", "processed", "records", "quarantined", "leaky")
    report = Extraction(leaky=1)
    report.add(IncrementalCounts(reused=3, processed=2, records=5, quarantined=0))
    report.add(IncrementalCounts(processed=1))
    assert report.counted() == {"reused": 3, "processed": 3, "records": 5, "quarantined": 0,
                                "leaky": 1}


def test_a_count_named_twice_is_refused() -> None:
    with pytest.raises(TypeError, match="names a count twice"):
        @dataclass
        class Again(IncrementalCounts, counts=("records",)):
            pass
