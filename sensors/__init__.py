"""Schedules and sensors of the vault."""

from sensors.harvest import (
    arxiv_daily_harvest,
    arxiv_daily_schedule,
    openreview_decisions_sensor,
    openreview_refresh,
)
from sensors.raw_zone import raw_zone_sensor, refresh_from_raw

all_jobs = [refresh_from_raw, arxiv_daily_harvest, openreview_refresh]
all_sensors = [raw_zone_sensor, openreview_decisions_sensor]
all_schedules = [arxiv_daily_schedule]

__all__ = ["all_jobs", "all_schedules", "all_sensors"]
