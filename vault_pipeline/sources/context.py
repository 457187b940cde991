"""What every harvester needs: the vault, its config, the raw zone, the cursors, and one
polite client per service (built once, so a whole harvest shares one connection per service)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from vault_pipeline.pipeline.counters import Counters
from vault_pipeline.pipeline.progress import Progress, no_progress
from vault_pipeline.pipeline.stage import given_section
from vault_pipeline.raw.zone import RawFile, RawZone
from vault_pipeline.sources.cursor import CursorStore
from vault_pipeline.sources.http import PoliteClient, RequestCounter
from vault_pipeline.sources.limiter import SharedRateLimiter
from vault_pipeline.sources.settings import HarvestConfig, load_config, secret, state_dir
from vault_pipeline.store.paths import VaultPaths


@dataclass
class Downloads(Counters, counts=("planned", "fetched", "already_present", "bytes")):
    """What a harvest of files (PDFs, e-prints) did: files planned, stored new, found already
    in the raw zone, their bytes, and each file that failed with its reason."""

    failed: list[tuple[str, str]] = field(default_factory=list)

    def stored(self, raw: RawFile, new: bool) -> None:
        """Count one file the raw zone holds now (:meth:`HarvestContext.store`'s answer)."""
        self.fetched += int(new)
        self.already_present += int(not new)
        self.bytes += raw.size_bytes


@dataclass
class Listing(Counters, counts=("pages",)):
    """What a resumable listing read page by page (an OAI-PMH window, an OpenReview venue)
    did: skipped (listed to its end already), resumed from its cursor, the pages read, and
    the raw files they were stored as (sha256)."""

    skipped: bool = field(default=False, kw_only=True)
    resumed: bool = field(default=False, kw_only=True)
    files: list[str] = field(default_factory=list, kw_only=True)


@dataclass
class HarvestContext:
    paths: VaultPaths
    config: HarvestConfig
    progress: Progress = no_progress
    settings: Mapping[str, Any] = field(default_factory=dict)
    """Other sections' settings the harvest's stage declared in ``uses``, as its runner
    resolved them (the `[splits]` cutoff, the `[evalsets]` venues)."""
    _clients: dict[str, PoliteClient] = field(default_factory=dict)
    _counters: dict[str, RequestCounter] = field(default_factory=dict)

    @classmethod
    def open(cls, paths: VaultPaths, config: HarvestConfig | None = None,
             progress: Progress = no_progress,
             settings: Mapping[str, Any] | None = None) -> HarvestContext:
        return cls(paths.ensure(), config or load_config(paths), progress, dict(settings or {}))

    def uses(self, section: str) -> Any:
        """The settings of ``section`` as the harvest's stage was given them (its declared
        ``uses``, resolved by :meth:`vault_pipeline.pipeline.stage.Stage.used_settings`)."""
        return given_section(self.settings, section)

    @property
    def zone(self) -> RawZone:
        return RawZone(self.paths)

    @property
    def cursors(self) -> CursorStore:
        return CursorStore(state_dir(self.paths) / "cursors")

    def limiter(self, service: str) -> SharedRateLimiter:
        interval = {"arxiv": self.config.arxiv.interval_s,
                    "openreview": self.config.openreview.interval_s,
                    "s2": self.config.s2.interval_s}[service]
        return SharedRateLimiter(state_dir(self.paths) / "clocks", service, interval)

    def urls(self, service: str) -> tuple[str, ...]:
        """The service's own URLs, as configured: where its secrets may go."""
        arxiv, openreview = self.config.arxiv, self.config.openreview
        return {"arxiv": (arxiv.oai_url, arxiv.api_url, arxiv.pdf_url, arxiv.eprint_url),
                "openreview": (openreview.api_url, openreview.api_v1_url),
                "s2": (self.config.s2.api_url,)}[service]

    def redirect_origins(self, service: str) -> tuple[str, ...]:
        """The other origins the service's redirects may lead to (its allow-list)."""
        return {"arxiv": self.config.arxiv, "openreview": self.config.openreview,
                "s2": self.config.s2}[service].redirect_origins

    def client(self, service: str) -> PoliteClient:
        """The one polite httpx client of ``arxiv``, ``openreview`` or ``s2`` for this
        harvest; the Semantic Scholar key goes to the service's own origin only."""
        if service not in self._clients:
            secrets = {}
            if service == "s2" and (key := secret("s2_api_key")):
                secrets["x-api-key"] = key
            self._clients[service] = PoliteClient(
                self.limiter(service), self.config.retry, self.config.user_agent,
                counter=self.counter(service), limits=self.config.limits, secrets=secrets,
                secret_origins=self.urls(service),
                redirect_origins=self.redirect_origins(service))
        return self._clients[service]

    def counter(self, service: str) -> RequestCounter:
        """The requests sent to ``service`` in this harvest (kept after :meth:`close`)."""
        return self._counters.setdefault(service, RequestCounter())

    def requests_sent(self) -> dict[str, int]:
        return {name: counter.sent for name, counter in self._counters.items() if counter.sent}

    def store(self, data: bytes, name: str, origin: str) -> tuple[RawFile, bool]:
        """Put a received response into the raw zone (checked there, stored once)."""
        return self.zone.add_bytes(data, name, origin)

    def close(self) -> None:
        for client in self._clients.values():
            client.close()
        self._clients.clear()

    def __enter__(self) -> HarvestContext:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()
