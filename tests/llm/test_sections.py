"""Section kinds from headings: a word inside another word is not that word."""

from __future__ import annotations

from vault_pipeline.llm.sections import heading_kind


def test_annotation_is_not_notation() -> None:
    assert heading_kind("3.2 Annotation interface") == "other"
    assert heading_kind("2 Notation") == "problem"
