"""Dagster run config generated from a stage's settings dataclass, so that no field is
mirrored by hand: every field, unset by default (an unset field falls back to the lower
layers of :mod:`vault_pipeline.pipeline.settings`: `vault.toml`, then `VAULT_<STAGE>_<FIELD>`,
then the
default)."""

import dataclasses
import datetime
import typing
from typing import Any

import dagster as dg
import pydantic

from vault_pipeline.pipeline.settings import env_name, field_docs, settings_fields


def _config_type(annotation: Any) -> Any:
    """The Dagster-config form of a field type (dates as text, tuples as lists); None when
    Dagster config cannot hold it (a free-form mapping)."""
    args = [a for a in typing.get_args(annotation) if a is not type(None)]
    origin = typing.get_origin(annotation)
    if origin in (typing.Union, type(int | None)) and len(args) == 1:
        return _config_type(args[0])
    if annotation is datetime.date:
        return str
    if origin is tuple:
        return list[args[0]]
    if origin is dict and args[1] is Any:
        return None
    return annotation


def stage_config(settings: type, stage: str, name: str, doc: str,
                 base: type[dg.Config] = dg.Config,
                 **extra: tuple[Any, Any]) -> type[dg.Config]:
    """A `dg.Config` class (a subclass of ``base``) with one optional field per settings
    field, described by the field's docstring (``extra`` adds or replaces fields, as
    pydantic ``(type, default)`` or ``(type, Field(...))`` pairs)."""
    defaults = {f.name: f.default for f in dataclasses.fields(settings)}
    docs = field_docs(settings)
    fields: dict[str, Any] = {}
    for field, annotation in settings_fields(settings).items():
        kind = _config_type(annotation)
        if kind is None or field in extra:
            continue
        default = defaults[field]
        shown = "" if default is dataclasses.MISSING else f"default {default!r}; "
        layers = f"{shown}unset: `vault.toml` [{stage}], then {env_name(stage, field)}"
        described = f"{docs[field]} ({layers})" if field in docs else layers
        fields[field] = (kind | None, pydantic.Field(default=None, description=described))
    return pydantic.create_model(name, __base__=base, __doc__=doc, **fields, **extra)
