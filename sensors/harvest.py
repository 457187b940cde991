"""The live refresh: a daily schedule harvesting yesterday's arXiv datestamps, and a sensor
polling the configured OpenReview venues for new or changed decisions. Both start STOPPED
(turn them on in the UI or with `dagster schedule start` / `dagster sensor start`), so a fresh
vault never touches the network by itself."""

import dataclasses
import hashlib
import json

import dagster as dg

from assets.resources import VaultResource
from vault_pipeline.errors import VaultError
from vault_pipeline.sources import openreview
from vault_pipeline.sources.context import HarvestContext

arxiv_daily_harvest = dg.define_asset_job(
    "arxiv_daily_harvest", selection=dg.AssetSelection.assets("arxiv_oai_harvest"),
    description="OAI-PMH harvest of one datestamp day (or a backfill range).")

arxiv_daily_schedule = dg.build_schedule_from_partitioned_job(
    arxiv_daily_harvest, hour_of_day=4, minute_of_hour=30,
    default_status=dg.DefaultScheduleStatus.STOPPED,
    description="Every day, harvest yesterday's datestamps (the last complete partition).")

openreview_refresh = dg.define_asset_job(
    "openreview_refresh", selection=dg.AssetSelection.assets("openreview_harvest"),
    description="List one OpenReview venue again (submissions, reviews, decisions).")

POLL_ATTEMPTS = 2
POLL_MAX_WAIT_S = 20.0


@dg.sensor(
    job=openreview_refresh, minimum_interval_seconds=6 * 3600,
    default_status=dg.DefaultSensorStatus.STOPPED,
    description="Polls each API v2 venue's decision buckets (accepted, rejected, withdrawn, "
                "desk-rejected counts); when they change, requests a refresh of that venue. "
                "The cursor (JSON) keeps the last counts per venue; a venue whose poll fails "
                "keeps its old counts, so the next tick tries it again.",
)
def openreview_decisions_sensor(context: dg.SensorEvaluationContext, vault: VaultResource):
    cursor = json.loads(context.cursor) if context.cursor else {}
    requests, failures = [], []
    with HarvestContext.open(vault.paths()) as ctx:
        retry = dataclasses.replace(ctx.config.retry, max_attempts=POLL_ATTEMPTS,
                                    max_wait_s=POLL_MAX_WAIT_S)
        ctx.config = dataclasses.replace(ctx.config, retry=retry)
        venues = [v for v in ctx.config.openreview.venues if v.api == 2]
        connection = openreview.connect(ctx, 2) if venues else None
        for venue in venues:
            try:
                counts = openreview.decision_counts(ctx, venue, connection)
            except (VaultError, OSError) as exc:
                failures.append(f"{venue.id}: {exc}")
                context.log.warning(f"decision poll of {venue.id} failed: {exc}")
                continue
            if cursor.get(venue.id) != counts:
                digest = hashlib.sha256(json.dumps(counts, sort_keys=True).encode()).hexdigest()
                requests.append(dg.RunRequest(
                    run_key=f"{venue.id}-{digest[:12]}", partition_key=venue.id,
                    run_config={"ops": {"openreview_harvest": {"config": {"refresh": True}}}},
                    tags={"decision_counts": json.dumps(counts)}))
                cursor[venue.id] = counts
    context.update_cursor(json.dumps(cursor, sort_keys=True))
    if requests:
        return requests
    reason = "; ".join(failures) if failures else "no decision changed"
    return dg.SkipReason(reason)
