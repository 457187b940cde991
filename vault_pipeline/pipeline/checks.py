"""What a data check found, in one shape for every stage: passed or not, one sentence, and
the figures behind it. The library's quality functions return it; the Dagster asset checks
turn it into check results (``assets.metadata.check_result``)."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class Outcome:
    passed: bool
    description: str
    metadata: dict[str, object] = field(default_factory=dict)
