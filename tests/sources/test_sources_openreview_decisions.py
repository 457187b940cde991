"""Decisions read from an API v2 note's venue group and venue string."""

import pytest

from vault_pipeline.parse.openreview import decision_from_venue

VENUE = "ICLR.cc/2025/Conference"


@pytest.mark.parametrize(("venueid", "venue", "expected"), [
    (VENUE, "ICLR 2025 Oral", "Accept (oral)"),
    (VENUE, "ICLR 2025 Poster", "Accept (poster)"),
    (VENUE, None, "Accept"),
    (VENUE, "Submitted to ICLR 2025", None),  # in the group, not yet decided
    (f"{VENUE}/Rejected_Submission", "Submitted to ICLR 2025", "Reject"),
    (f"{VENUE}/Withdrawn_Submission", "ICLR 2025 Conference Withdrawn Submission", "Withdrawn"),
    (f"{VENUE}/Desk_Rejected_Submission", None, "Desk rejected"),
    (f"{VENUE}/Submission", "Submitted to ICLR 2025", None),
])
def test_decision_from_venue(venueid: str, venue: str | None, expected: str | None) -> None:
    assert decision_from_venue(VENUE, venueid, venue) == expected
