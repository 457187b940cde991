"""One configuration mechanism: defaults < `vault.toml` < `VAULT_<STAGE>_<FIELD>` < run config
< CLI flags, resolved when a stage runs (never at import), for the vault it runs on."""

from __future__ import annotations

import dataclasses
from datetime import date

import pytest

from assets.ideas import IdeasRunConfig
from vault_pipeline.definitions import build_defs
from vault_pipeline.errors import VaultError
from vault_pipeline.llm.settings import IdeasSettings
from vault_pipeline.pipeline.settings import resolve
from vault_pipeline.sources.settings import (
    FulltextScope,
    HarvestConfig,
    S2Settings,
    VenueSettings,
)
from vault_pipeline.splits.settings import SplitSettings
from vault_pipeline.store.paths import VaultPaths


def test_each_layer_over_the_one_before(tmp_path) -> None:
    (tmp_path / "vault.toml").write_text("[splits]\nseed = 2\nmin_cited_in_vault = 0.2\n"
                                         "validation = 0.2\ntest = 0.2\n")
    env = {"VAULT_SPLITS_MIN_CITED_IN_VAULT": "0.3", "VAULT_SPLITS_VALIDATION": "0.3",
           "VAULT_SPLITS_TEST": "0.3", "VAULT_SPLITS_CUTOFF": "2025-01-01"}
    split = SplitSettings.resolve(home=tmp_path, environ=env, flags={"test": 0.5},
                                  run_config={"validation": 0.4, "test": 0.4, "seed": None})
    assert split == SplitSettings(cutoff=date(2025, 1, 1), seed=2, min_cited_in_vault=0.3,
                                  validation=0.4, test=0.5)
    assert SplitSettings.resolve(environ={}) == SplitSettings()


@pytest.mark.parametrize(("text", "env", "message"), [
    ("[splits]\nz = 1\n", {}, "unknown splits settings: ['z'], in vault.toml [splits]"),
    ("", {"VAULT_SPLITS_SEED": "many"}, "VAULT_SPLITS_SEED"),
    ("", {"VAULT_SPLITS_CUTOFF": "2025-13-01"}, "cutoff '2025-13-01' is not a date"),
    ("[splits\n", {}, "vault.toml")])
def test_bad_values_are_one_line(tmp_path, text, env, message) -> None:
    (tmp_path / "vault.toml").write_text(text)
    with pytest.raises(VaultError, match=message.replace("[", r"\[")) as err:
        SplitSettings.resolve(home=tmp_path, environ=env)
    assert "\n" not in str(err.value)


def test_stages_read_the_vault_file(tmp_path) -> None:
    (tmp_path / "vault.toml").write_text('[splits]\ncutoff = 2025-01-01\n'
                                         '[ideas]\nbackend = "openai"\nconcurrency = 2\n')
    assert SplitSettings.resolve(home=tmp_path, environ={}).cutoff == date(2025, 1, 1)
    ideas = IdeasSettings.resolve(run_config={"concurrency": 3}, environ={}, home=tmp_path)
    assert (ideas.backend, ideas.concurrency) == ("openai", 3)


def test_run_config_is_generated_from_the_settings() -> None:
    fields = set(IdeasRunConfig.model_fields)
    settings = {f.name for f in dataclasses.fields(IdeasSettings)}
    assert fields == settings - {"vllm_engine_args"}  # a free-form mapping: file or env only
    assert all(value is None for value in IdeasRunConfig().model_dump().values())


@pytest.mark.parametrize("file", ["harvest.toml", "vault.toml"])
def test_harvest_partitions_come_from_the_vault_they_are_built_for(tmp_path, file) -> None:
    home = tmp_path / "x"
    home.mkdir()
    section = "[harvest.openreview]" if file == "vault.toml" else "[openreview]"
    (home / file).write_text(f'{section}\nvenues = [{{id = "ICLR.cc/2023/Conference"}}]\n')
    defs = build_defs(VaultPaths(home))
    venues = defs.resolve_assets_def("openreview_harvest").partitions_def
    assert venues.get_partition_keys() == ["ICLR.cc/2023/Conference"]
    default = build_defs(VaultPaths(tmp_path / "y")).resolve_assets_def("openreview_harvest")
    assert len(default.partitions_def.get_partition_keys()) == 3


def test_documents_settings_give_the_build_its_limits(tmp_path) -> None:
    from vault_pipeline.documents.settings import DocumentsSettings

    (tmp_path / "vault.toml").write_text("[documents]\nmemory_mb = 0\nmax_unpacked_mb = 1\n")
    built = DocumentsSettings.resolve(home=tmp_path, run_config={"workers": 2}, environ={}).config()
    assert (built.pool.workers, built.pool.memory_mb) == (2, None)  # 0: no memory cap
    assert built.settings.archive.max_unpacked_bytes == 1 << 20


def test_nested_tables_merge_key_by_key_over_the_layers(tmp_path) -> None:
    """A nested table keeps the keys a layer leaves out; an array of tables replaces the
    default; an empty string unsets an optional field; an alias sets a nested field."""
    (tmp_path / "vault.toml").write_text('[harvest.s2]\ninterval_s = 2\n'
                                         '[harvest.arxiv.fulltext]\npublished_from = ""\n'
                                         '[[harvest.openreview.venues]]\nid = "b"\napi = 1\n')
    harvest = resolve(HarvestConfig, "harvest", home=tmp_path, environ={"X_URL": "http://alias"},
                      aliases={"X_URL": "s2.api_url"})
    assert harvest.s2 == S2Settings(api_url="http://alias", interval_s=2.0)
    assert harvest.arxiv.fulltext == FulltextScope(published_from=None)
    assert harvest.openreview.venues == (VenueSettings("b", api=1),)
    (tmp_path / "vault.toml").write_text("[[harvest.openreview.venues]]\napi = 1\n")
    with pytest.raises(VaultError, match=r"'id', in vault.toml \[harvest.openreview.venues\]"):
        resolve(HarvestConfig, "harvest", home=tmp_path, environ={})
    (tmp_path / "vault.toml").write_text("[harvest.s2]\nurl_s = 1\n")
    with pytest.raises(VaultError, match=r"unknown harvest.s2 settings: \['url_s'\], in "
                                         r"vault.toml \[harvest.s2\]"):
        resolve(HarvestConfig, "harvest", home=tmp_path, environ={})


def test_harvest_toml_is_the_harvest_section_own_file(tmp_path, monkeypatch) -> None:
    """`harvest.toml` replaces `[harvest]` of vault.toml; the environment goes over both;
    a secret in either file is refused."""
    from vault_pipeline.sources.settings import load_config

    monkeypatch.delenv("VAULT_HARVEST_CONFIG", raising=False)
    monkeypatch.setenv("VAULT_S2_INTERVAL", "4")
    (tmp_path / "vault.toml").write_text("[harvest.s2]\nrefresh_days = 3\ninterval_s = 9\n")
    shared = load_config(VaultPaths(tmp_path))
    assert (shared.s2.refresh_days, shared.s2.interval_s) == (3, 4.0)
    assert shared.source == str(tmp_path / "vault.toml")
    (tmp_path / "harvest.toml").write_text("[s2]\nbatch_size = 7\n")
    own = load_config(VaultPaths(tmp_path))
    assert (own.s2.refresh_days, own.s2.batch_size, own.source) == (
        30, 7, str(tmp_path / "harvest.toml"))
    (tmp_path / "harvest.toml").unlink()
    (tmp_path / "vault.toml").write_text('[harvest.openreview]\ntoken = "t"\n')
    with pytest.raises(VaultError, match="secrets come from the environment"):
        load_config(VaultPaths(tmp_path))
