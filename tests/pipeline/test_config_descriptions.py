"""Every field a user can set in the launchpad says what it does: the config schemas of all
assets and checks are walked, nested fields included."""

import dagster as dg

from vault_pipeline.definitions import build_defs

LAYERS_ONLY = ("default ", "unset:")  # a generated field whose setting has no docstring


def _fields(config_type, prefix: str = ""):
    """(path, field) for each field of a config schema, nested shapes walked."""
    for name, field in getattr(config_type, "fields", {}).items():
        yield f"{prefix}{name}", field
        inner = field.config_type
        while getattr(inner, "inner_type", None) is not None:  # Noneable, Array
            inner = inner.inner_type
        yield from _fields(inner, f"{prefix}{name}.")


def _undescribed(defs: dg.Definitions) -> list[str]:
    """`op: field` of every config field without a description, in assets and checks."""
    nodes = [*defs.resolve_asset_graph().assets_defs, *(defs.asset_checks or [])]
    missing = set()
    for node in nodes:
        if not isinstance(node, dg.AssetsDefinition) or not node.is_executable:
            continue
        for op in node.node_def.iterate_op_defs():
            if op.config_schema is None:
                continue
            for path, field in _fields(op.config_schema.config_type):
                text = (field.description or "").strip()
                if not text or text.startswith(LAYERS_ONLY):  # where it falls back, not what
                    missing.add(f"{op.name}: {path}")
    return sorted(missing)


def test_every_launchpad_field_has_a_description(vault_paths) -> None:
    assert _undescribed(build_defs(vault_paths)) == []


class Bare(dg.Config):
    limit: int = 3


def test_a_field_without_description_is_caught(vault_paths) -> None:
    @dg.asset
    def bare(config: Bare) -> None:
        return None

    assert _undescribed(dg.Definitions(assets=[bare])) == ["bare: limit"]


def test_generated_fields_carry_the_setting_docstring() -> None:
    from assets.stages import config_class
    from vault_pipeline.documents.settings import DocumentsSettings
    from vault_pipeline.documents.stage import STAGE
    from vault_pipeline.pipeline.settings import field_docs

    DocumentsRunConfig = config_class(STAGE)

    assert field_docs(DocumentsSettings)["workers"] == "Conversion processes; 0: one per core."
    described = DocumentsRunConfig.model_fields["workers"].description
    assert described.startswith("Conversion processes; 0: one per core. (default 0; unset:")
