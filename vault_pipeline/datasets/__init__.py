"""Datasets for trainers and evaluators: one row per target and producer role
(``training``), written out as Parquet and JSON lines with a manifest and a data card
(``export``, ``manifest``, ``card``)."""
