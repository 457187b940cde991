"""`vault status`: tables, last materializations, check results and stale assets, as text or
JSON."""

from __future__ import annotations

from datetime import UTC, datetime

from vault_pipeline.cli.engine import _instance
from vault_pipeline.cli.planning import LIVE
from vault_pipeline.errors import VaultError
from vault_pipeline.pipeline.lazy import lazy_import
from vault_pipeline.sources import HARVEST_GROUP
from vault_pipeline.store.paths import VaultPaths

fingerprints = lazy_import("vault_pipeline.freshness.fingerprints")
sql_module = lazy_import("vault_pipeline.store.sql")


def _last_materializations(paths: VaultPaths, names: list[str]) -> dict[str, str]:
    from dagster import AssetKey

    instance = _instance(paths)
    found = {}
    for name in names:
        event = instance.get_latest_materialization_event(AssetKey(name))
        if event is not None:
            when = datetime.fromtimestamp(event.timestamp, UTC)
            found[name] = when.strftime("%Y-%m-%d %H:%M:%S UTC")
    return found


def _check_results(paths: VaultPaths) -> list[dict]:
    """The latest result of every asset check recorded in the vault's instance."""
    import dagster as dg
    from dagster._core.event_api import EventRecordsFilter

    records = _instance(paths).get_event_records(
        EventRecordsFilter(event_type=dg.DagsterEventType.ASSET_CHECK_EVALUATION),
        limit=2000, ascending=False)
    latest: dict[str, dict] = {}
    for record in records:
        data = record.event_log_entry.dagster_event.event_specific_data
        key = f"{data.asset_key.to_user_string()}:{data.check_name}"
        latest.setdefault(key, {
            "asset": data.asset_key.to_user_string(), "check": data.check_name,
            "passed": data.passed, "severity": data.severity.value,
            "description": data.description,
            "at": datetime.fromtimestamp(record.timestamp, UTC).isoformat()})
    return sorted(latest.values(), key=lambda c: (c["asset"], c["check"]))


def _status_json(paths: VaultPaths, files: list[str], zone_files: list) -> dict:
    """Everything `vault status` knows, for scripts and dashboards."""
    from vault_pipeline.index.lance_index import index_metadata_of

    def table(name: str) -> dict:
        try:
            rows = paths.store.rows(name)
        except VaultError as exc:
            return {"name": name, "damaged": str(exc)}
        return {"name": name, "rows": rows, "bytes": paths.store.size(name),
                "last_materialization": last.get(name)}

    def index() -> dict | None:
        try:
            return index_metadata_of(paths) or None
        except VaultError as exc:
            return {"damaged": str(exc)}

    last = _last_materializations(paths, list(files))
    state = fingerprints.load(paths)
    default = [a for a, node in state.graph.items() if node.group != HARVEST_GROUP]
    exports = sorted((paths.home / "exports").glob("*/manifest.json"))
    return {
        "home": str(paths.home),
        "raw_zone": {"files": len(zone_files), "bytes": sum(f.size_bytes for f in zone_files)},
        "tables": [table(name) for name in files],
        "index": index(),
        "exports": [{"path": str(m.parent), "manifest": str(m)} for m in exports],
        "stale_assets": sorted(fingerprints.stale(paths, state, default, None,
                                                  recorded_settings=True, live=LIVE))
        if default else None,
        "checks": _check_results(paths),
        "duckdb": str(paths.home / sql_module.CATALOG_FILE)
        if (paths.home / sql_module.CATALOG_FILE).exists() else None,
    }
