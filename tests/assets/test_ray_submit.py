"""A Ray job server that has no agent yet is asked again; any other refusal is final."""

from __future__ import annotations

import pytest

from assets import ray_jobs

NO_AGENT = ("Request failed with status code 500: No available agent to submit job, "
            "please try again later..")


def _answers(*errors: str):
    """A submit that fails with each of ``errors`` in turn, then returns "job-1"."""
    left = list(errors)

    def submit() -> str:
        if left:
            raise RuntimeError(left.pop(0))
        return "job-1"

    return submit


def test_a_server_without_its_agent_yet_is_asked_again(monkeypatch) -> None:
    monkeypatch.setattr(ray_jobs.time, "sleep", lambda _s: None)
    assert ray_jobs._submitted(_answers(NO_AGENT, NO_AGENT)) == "job-1"


def test_other_refusals_and_a_spent_wait_are_raised(monkeypatch) -> None:
    monkeypatch.setattr(ray_jobs.time, "sleep", lambda _s: None)
    with pytest.raises(RuntimeError, match="status code 403"):
        ray_jobs._submitted(_answers("Request failed with status code 403: forbidden"))
    with pytest.raises(RuntimeError, match="try again later"):
        ray_jobs._submitted(_answers(NO_AGENT), wait_s=-1)
