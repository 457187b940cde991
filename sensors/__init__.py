"""Schedules and sensors of the vault."""

from .raw_zone import raw_zone_sensor, refresh_from_raw

all_jobs = [refresh_from_raw]
all_sensors = [raw_zone_sensor]

__all__ = ["all_jobs", "all_sensors"]
