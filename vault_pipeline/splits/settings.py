"""What decides the splits: the cutoff, the seed, the held-out shares and the target filters
of seed 002 (machine learning fields, LaTeX source, the cited-work threshold, the classifier).
One frozen value, recorded on every row and in every export manifest."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date

from vault_pipeline.errors import VaultError
from vault_pipeline.pipeline import settings as config
from vault_pipeline.pipeline.settings import StageSettings

STAGE = "splits"
DEFAULT_CUTOFF = config.CUTOFF
# The seed paper's partition: 14,500 / 200 / 277 of 14,977 targets.
DEFAULT_VALIDATION = 200 / 14_977
DEFAULT_TEST = 277 / 14_977
DEFAULT_MIN_CITED_IN_VAULT = 0.7
CLASSIFIERS = ("auto", "extractive", "llm")
# "Training samples start from machine learning papers" (seed 002): arXiv's machine learning
# categories and the fields its ML papers are filed under. Empty: every field.
ML_FIELDS = ("cs.LG", "stat.ML", "cs.AI", "cs.CL", "cs.CV", "cs.NE")
UNKNOWN_EVIDENCE = ("keep", "exclude")


@dataclass(frozen=True)
class SplitSettings(StageSettings):
    """``validation`` and ``test`` below 1 are fractions of the targets; 1 or more are sizes
    (held-out sets filled in hash order, then frozen: see :mod:`.assign`)."""

    SECTION = STAGE

    cutoff: date = DEFAULT_CUTOFF
    """Temporal cutoff (YYYY-MM-DD): papers before it form the vault, papers after it are the
    targets."""
    seed: int = 0
    """Seed of the hash that orders targets into the held-out sets."""
    validation: float = DEFAULT_VALIDATION
    """Validation set: a fraction of the targets (below 1) or a size (1 or more)."""
    test: float = DEFAULT_TEST
    """Test set: a fraction of the targets (below 1) or a size (1 or more)."""
    min_cited_in_vault: float = DEFAULT_MIN_CITED_IN_VAULT
    """Share of a target's resolved references that must be vault papers for it to be kept."""
    classifier: str = "auto"
    """Who classifies cited works: `extractive`, `llm` (the ideas stage's LLM backend) or `auto`."""
    fields: tuple[str, ...] = ML_FIELDS
    """arXiv categories a target must have one of (machine learning by default); empty: any."""
    require_latex: bool = True
    """A target's full text must come from its LaTeX source."""
    unknown_evidence: str = "keep"
    """A target whose citations or LaTeX source are not known yet: `keep` (its reason and the
    report say which criterion was not applied) or `exclude`."""

    def __post_init__(self) -> None:
        for name in ("validation", "test"):
            value = getattr(self, name)
            if value < 0 or (value >= 1 and value != int(value)):
                raise VaultError(f"{name} must be a fraction in [0, 1) or a whole size, "
                                 f"not {value}")
        kinds = {value >= 1 for value in (self.validation, self.test) if value != 0}
        if len(kinds) > 1 or (not self.uses_sizes and self.validation + self.test >= 1):
            raise VaultError("validation and test must both be fractions (summing below 1) "
                             f"or both be sizes, not {self.validation} and {self.test}")
        if not 0 <= self.min_cited_in_vault <= 1:
            raise VaultError(f"min_cited_in_vault must lie in [0, 1], not "
                             f"{self.min_cited_in_vault}")
        if self.unknown_evidence not in UNKNOWN_EVIDENCE:
            raise VaultError(f"unknown_evidence must be one of {UNKNOWN_EVIDENCE}, not "
                             f"{self.unknown_evidence!r}")
        if self.classifier not in CLASSIFIERS:
            raise VaultError(f"unknown classifier {self.classifier!r} "
                             f"({', '.join(CLASSIFIERS)})")

    @property
    def uses_sizes(self) -> bool:
        return self.validation >= 1 or self.test >= 1

    @classmethod
    def parse(cls, cutoff: str | date, **kwargs) -> SplitSettings:
        """Settings from user input; a bad date is a clear error."""
        return cls.resolve(run_config={"cutoff": cutoff, **kwargs}, environ={})
