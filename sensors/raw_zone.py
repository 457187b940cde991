"""Start the pipeline when new raw data lands (an import, a harvest)."""


import json

import dagster as dg

from assets.resources import VaultResource
from vault_pipeline.raw.zone import RawZone
from vault_pipeline.sources import HARVEST_GROUP

refresh_from_raw = dg.define_asset_job(
    "refresh_from_raw",
    selection=dg.AssetSelection.assets("raw_files").downstream()
    - dg.AssetSelection.groups(HARVEST_GROUP, "evaluation_runs"),
    description="Rebuild every table downstream of the raw zone (never the live harvests, "
                "which write to the raw zone and run on their own schedule or on demand, "
                "nor the evaluation runs, which need an LLM and run on demand).",
    tags={"vault/writes": "true"},  # one such run per data root (deploy/dagster.yaml's queue)
)


@dg.sensor(
    job=refresh_from_raw,
    minimum_interval_seconds=60,
    default_status=dg.DefaultSensorStatus.STOPPED,
    description="Requests a refresh when the raw zone's content changes.",
)
def raw_zone_sensor(context: dg.SensorEvaluationContext, vault: VaultResource):
    fingerprint = RawZone(vault.paths()).fingerprint()
    cursor = json.loads(context.cursor) if context.cursor else {}
    if cursor.get("fingerprint") == fingerprint:
        return dg.SkipReason("raw zone unchanged")
    context.update_cursor(json.dumps({"fingerprint": fingerprint}))
    return dg.RunRequest(run_key=f"raw-{fingerprint[:16]}")
