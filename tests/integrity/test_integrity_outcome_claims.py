"""Outcome claims written without a digit are findings of the rules: efficacy and safety
verdicts, null and negative findings, observed associations and predictions, comparisons
in words, shares in words, conclusions about the proposed method. What prior work lacks,
background knowledge and plans are not."""

from __future__ import annotations

import pytest

from vault_pipeline.integrity.leaks import check_sentence

OUTCOMES = [
    ("The intervention was safe, feasible, and cost-effective when delivered by nurses.",
     "efficacy_verdict"),
    ("The proposed method is effective and efficient.", "efficacy_verdict"),
    ("The proposed approach avoids the problem effectively.", "efficacy_verdict"),
    ("The treatment was well tolerated.", "efficacy_verdict"),
    ("We did not detect any difference between groups.", "null_finding"),
    ("The supplement has only marginal effects on sleep.", "null_finding"),
    ("No patient experienced serious adverse events.", "null_finding"),
    ("There was no significant difference in pain scores.", "null_finding"),
    ("Baseline anxiety predicted depression at follow-up.", "association"),
    ("Combining A with B increased predictability of relapse.", "association"),
    ("Self-report is a better predictor of adherence than pill counts.", "association"),
    ("Higher intake was significantly associated with lower mortality.", "association"),
    ("Models trained this way generalize better to new domains.", "comparison_words"),
    ("Our model exhibits strong transferability across domains.", "comparison_words"),
    ("The majority of participants reported improved sleep.", "share_in_words"),
    ("Seventy-three percent of respondents preferred the app.", "number_words"),
]
CLEAN = [
    "Existing methods do not scale to long documents.",
    "Obesity is associated with increased cardiovascular risk.",
    "Prior layer-wise schemes freeze earlier layers, which limits expressivity.",
    "Standard abstractions based on method calls and threads do not work.",
    "We will test whether the model generalizes better than BERT.",
    "We ask whether combining A with B improves the prediction of relapse at follow-up.",
    "Sparse mixture-of-experts layers drop tokens when an expert is full.",
    "Over the past decade, language models for code have proven to be a valuable tool.",
]


@pytest.mark.parametrize(("text", "kind"), OUTCOMES)
def test_outcome_claims_without_numbers_are_findings(text: str, kind: str) -> None:
    kinds = {f.kind for f in check_sentence(text)}
    assert kind in kinds, (text, kinds)


@pytest.mark.parametrize("text", CLEAN)
def test_gaps_background_and_plans_are_not(text: str) -> None:
    assert check_sentence(text) == [], text


def test_a_prediction_field_does_not_excuse_an_observed_association() -> None:
    assert check_sentence("Baseline anxiety predicted depression at follow-up.", planning=True)
