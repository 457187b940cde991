"""The modules the commands load on first use, named once for every command module: `vault
--help` starts in a fraction of a second, and a light command never pays for the table store's
or the live clients' imports. A command module imports them from here by name
(``from vault_pipeline.cli.modules import raw_zone``); each is a lazily loaded module
(:func:`vault_pipeline.pipeline.lazy.lazy_import`) whose import runs on its first use."""

from __future__ import annotations

from types import ModuleType

from vault_pipeline.pipeline.lazy import lazy_import

MODULES: dict[str, str] = {
    # the table store and the vault's state (vault_pipeline.cli.app)
    "lock": "vault_pipeline.store.lock",
    "raw_zone": "vault_pipeline.raw.zone",
    "sql_module": "vault_pipeline.store.sql",
    "sql_output": "vault_pipeline.store.sql_output",
    "fingerprints": "vault_pipeline.freshness.fingerprints",
    "repair": "vault_pipeline.store.repair",
    # the live clients and the harvest stages (vault_pipeline.cli.harvest)
    "httpx": "httpx",
    "arxiv_api": "vault_pipeline.sources.arxiv_api",
    "oai_pmh": "vault_pipeline.sources.oai_pmh",
    "openreview": "vault_pipeline.sources.openreview",
    "openreview_pdf": "vault_pipeline.sources.openreview_pdf",
    "semantic_scholar": "vault_pipeline.sources.semantic_scholar",
    "sources_context": "vault_pipeline.sources.context",
    "harvest_stages": "vault_pipeline.sources.stage",
    "stages": "vault_pipeline.pipeline.stage",
    "citations_stage": "vault_pipeline.citations.stage",
}
"""The name a command module uses: the module it stands for."""


def __getattr__(name: str) -> ModuleType:
    if name not in MODULES:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    module = globals()[name] = lazy_import(MODULES[name])
    return module
