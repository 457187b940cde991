"""The bundled sample stays redistributable and small: every file is attributed, every real
paper's manifest row names a license that allows redistribution and a file that is there."""

from __future__ import annotations

import json
from pathlib import Path

SAMPLE = Path(__file__).parents[2] / "vault_pipeline" / "sample"
REDISTRIBUTABLE = {"CC0-1.0", "CC-BY-4.0", "CC-BY-SA-4.0", "CC-BY-3.0", "public-domain"}


def test_every_file_is_attributed() -> None:
    attribution = (SAMPLE / "ATTRIBUTION.md").read_text()
    missing = [f.name for f in (SAMPLE / "raw").iterdir() if f"`{f.name}`" not in attribution]
    assert not missing, f"not in ATTRIBUTION.md: {missing}"


def test_manifest_rows_name_a_license_and_a_file_that_is_there() -> None:
    rows = json.loads((SAMPLE / "manifest.json").read_text())
    assert rows
    for row in rows:
        assert row["license"] in REDISTRIBUTABLE, row
        assert (SAMPLE / "raw" / row["file"]).is_file(), row
        assert row["source"] and row["what"], row


def test_the_installed_sample_stays_under_15_mb() -> None:
    size = sum(f.stat().st_size for f in SAMPLE.rglob("*") if f.is_file())
    assert size <= 15 << 20, f"{size:,} bytes"
