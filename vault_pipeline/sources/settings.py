"""Harvest configuration, resolved by the one resolver
(:func:`vault_pipeline.pipeline.settings.resolve`,
section `harvest`): built-in defaults, then a TOML file (`harvest.toml`, the section's own
file, else the `[harvest]` table of the data root's `vault.toml`), then environment
variables. The cutoff is not here: the harvests read the split's.

Every service's base URL can be changed (a mirror, or a local replay server in tests), and so
can the request spacing. Secrets (OpenReview credentials, the Semantic Scholar key) come from
the environment only: a config file that names one is refused, so none lands in a repository."""

from __future__ import annotations

import dataclasses
import os
import re
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path

from vault_pipeline.errors import VaultError
from vault_pipeline.pipeline import settings
from vault_pipeline.store.paths import VaultPaths

SECTION = "harvest"
CONFIG_NAME, CONFIG_ENV = settings.OWN_FILES[SECTION]
SECRET_KEY = re.compile(r"pass(word)?|token|secret|api_?key", re.IGNORECASE)
VERSION = "0.1.0"


@dataclass(frozen=True)
class RetrySettings:
    """How a failed request is retried (bounded in attempts and in the longest wait)."""

    max_attempts: int = 6
    backoff_base_s: float = 2.0
    backoff_max_s: float = 120.0
    max_wait_s: float = 3600.0
    timeout_s: float = 120.0


@dataclass(frozen=True)
class ResponseLimits:
    """What one response may cost: a body past ``max_response_mb`` (as sent or decompressed)
    is refused while it streams, and so is a chain of more than ``max_redirects``."""

    max_response_mb: float = 100.0
    max_redirects: int = 5

    @property
    def max_bytes(self) -> int:
        return int(self.max_response_mb * 2**20)


@dataclass(frozen=True)
class FulltextScope:
    """Which papers get their PDF and LaTeX source downloaded."""

    categories: tuple[str, ...] = ("cs.LG", "cs.CL", "cs.AI")
    published_from: date | None = date(2025, 1, 1)
    published_until: date | None = None
    kinds: tuple[str, ...] = ("pdf", "eprint")
    max_per_run: int = 500


@dataclass(frozen=True)
class ArxivSettings:
    oai_url: str = "https://oaipmh.arxiv.org/oai"
    api_url: str = "https://export.arxiv.org/api/query"
    pdf_url: str = "https://export.arxiv.org/pdf"
    eprint_url: str = "https://export.arxiv.org/e-print"
    interval_s: float = 3.0
    metadata_prefix: str = "arXivRaw"
    oai_set: str | None = None
    first_day: date = date(2007, 5, 23)
    page_size: int = 2000
    result_ceiling: int = 30000
    ids_per_request: int = 100
    fulltext: FulltextScope = field(default_factory=FulltextScope)
    redirect_origins: tuple[str, ...] = ()  # other origins a redirect may lead to


@dataclass(frozen=True)
class VenueSettings:
    """One OpenReview venue. Invitation names differ per venue and year: unset names are read
    from the venue group (API v2) or fall back to the usual ones."""

    id: str
    api: int = 2
    submission: str | None = None
    review: str | None = None
    meta_review: str | None = None
    decision: str | None = None
    v1_invitations: tuple[str, ...] = ("Blind_Submission", "Withdrawn_Submission",
                                       "Desk_Rejected_Submission")


DEFAULT_VENUES = (
    VenueSettings("ICLR.cc/2024/Conference"),
    VenueSettings("ICLR.cc/2025/Conference"),
    VenueSettings("NeurIPS.cc/2025/Conference"),
)


@dataclass(frozen=True)
class OpenReviewSettings:
    api_url: str = "https://api2.openreview.net"
    api_v1_url: str = "https://api.openreview.net"
    interval_s: float = 1.0
    page_size: int = 1000
    venues: tuple[VenueSettings, ...] = DEFAULT_VENUES
    redirect_origins: tuple[str, ...] = ()


@dataclass(frozen=True)
class S2Settings:
    api_url: str = "https://api.semanticscholar.org/graph/v1"
    interval_s: float = 1.0
    batch_size: int = 500
    refresh_days: int = 30
    evaluation_population: bool = True  # with a key: the evaluation venues' counts too
    redirect_origins: tuple[str, ...] = ()


@dataclass(frozen=True)
class HarvestConfig:
    contact: str | None = None
    retry: RetrySettings = field(default_factory=RetrySettings)
    limits: ResponseLimits = field(default_factory=ResponseLimits)
    arxiv: ArxivSettings = field(default_factory=ArxivSettings)
    openreview: OpenReviewSettings = field(default_factory=OpenReviewSettings)
    s2: S2Settings = field(default_factory=S2Settings)
    source: str = "defaults"

    @property
    def user_agent(self) -> str:
        contact = f"; mailto:{self.contact}" if self.contact else ""
        return f"research-idea-vault/{VERSION} (polite metadata harvester{contact})"


settings.register(SECTION, HarvestConfig)

# Environment variable → (dotted) setting. Documented in docs/harvesting.md.
ENV_OVERRIDES = {
    "VAULT_ARXIV_OAI_URL": "arxiv.oai_url",
    "VAULT_ARXIV_API_URL": "arxiv.api_url",
    "VAULT_ARXIV_PDF_URL": "arxiv.pdf_url",
    "VAULT_ARXIV_EPRINT_URL": "arxiv.eprint_url",
    "VAULT_ARXIV_INTERVAL": "arxiv.interval_s",
    "VAULT_OPENREVIEW_URL": "openreview.api_url",
    "VAULT_OPENREVIEW_V1_URL": "openreview.api_v1_url",
    "VAULT_OPENREVIEW_INTERVAL": "openreview.interval_s",
    "VAULT_S2_URL": "s2.api_url",
    "VAULT_S2_INTERVAL": "s2.interval_s",
}

SECRET_ENV = {
    "openreview_username": "OPENREVIEW_USERNAME",
    "openreview_password": "OPENREVIEW_PASSWORD",
    "openreview_token": "OPENREVIEW_TOKEN",
    "s2_api_key": "S2_API_KEY",
}


def secret(name: str) -> str | None:
    """A secret from the environment (never from a file, never logged)."""
    return os.environ.get(SECRET_ENV[name]) or None


def refuse_secrets(key: str, where: str) -> None:
    """A config file never holds a secret (it would land in a repository)."""
    if SECRET_KEY.search(key):
        raise VaultError(f"{where}: {key}: secrets come from the environment "
                         f"({', '.join(SECRET_ENV.values())}), never from a config file")


def config_path(paths: VaultPaths | None, explicit: Path | None = None) -> Path | None:
    """The config file in use: the argument, else ``$VAULT_HARVEST_CONFIG``, else
    ``<data root>/harvest.toml`` when it exists."""
    return settings.own_file(SECTION, paths.home if paths else None, explicit)


def load_config(paths: VaultPaths | None = None, explicit: Path | None = None) -> HarvestConfig:
    """Defaults, overridden by the config file, overridden by the environment (read now,
    for the vault given: never at import)."""
    home = paths.home if paths else None
    config = settings.resolve(HarvestConfig, SECTION, home=home, file=explicit,
                              aliases=ENV_OVERRIDES, check=refuse_secrets)
    _values, _where, source = settings.read_section(SECTION, home, explicit)
    return dataclasses.replace(config, source=source)


def state_dir(paths: VaultPaths) -> Path:
    """Harvest state (cursors, the shared request clocks) inside the data root."""
    directory = paths.home / "harvest"
    directory.mkdir(parents=True, exist_ok=True)
    return directory
