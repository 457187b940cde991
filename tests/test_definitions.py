"""The Dagster code location the UI loads checks the vault's settings first: a run launched
from the UI never starts on settings that cannot resolve (the CLI's preflight, for the UI)."""

from __future__ import annotations

import pytest

from vault_pipeline.definitions import defs
from vault_pipeline.errors import VaultError


@pytest.mark.parametrize(("toml", "words"), [
    ('[splitz]\ncutoff = "2024-01-01"\n', ("splitz", "splits")),
    ('[splits]\ncutoff = "next tuesday"\n', ("cutoff", "next tuesday")),
    ('[splits]\ncutof = "2024-01-01"\n', ("cutof", "cutoff")),
])
def test_bad_settings_fail_the_code_location_in_one_line(tmp_path, monkeypatch, toml: str,
                                                         words: tuple[str, ...]) -> None:
    monkeypatch.setenv("VAULT_HOME", str(tmp_path))
    (tmp_path / "vault.toml").write_text(toml)
    with pytest.raises(VaultError) as refused:
        defs()
    line = str(refused.value)
    assert "\n" not in line and all(w in line for w in words), line


def test_good_settings_load(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("VAULT_HOME", str(tmp_path))
    (tmp_path / "vault.toml").write_text('[splits]\ncutoff = "2024-01-01"\n')
    keys = defs().resolve_asset_graph().get_all_asset_keys()
    assert any(k.to_user_string() == "splits" for k in keys)
