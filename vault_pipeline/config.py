"""One configuration mechanism for every stage. A stage's frozen settings dataclass gives the
fields and their defaults; values then come, each layer over the one before:

    defaults < `vault.toml` under the data root (a `[<stage>]` table)
             < environment `VAULT_<STAGE>_<FIELD>` < run config < CLI flags

A value of None in the run config or the flags means "not set". Nothing is read at import
time: a stage resolves its settings when it runs, for the data root it runs on.

Each field is documented by the string right under it (an attribute docstring, as in
pydantic's ``use_attribute_docstrings``); :func:`field_docs` reads them, and the generated
Dagster run config shows them in the launchpad."""

from __future__ import annotations

import ast
import dataclasses
import functools
import inspect
import itertools
import json
import os
import textwrap
import tomllib
import types
import typing
from collections.abc import Mapping
from datetime import date
from pathlib import Path
from typing import Any, TypeVar

from .errors import VaultError

CONFIG_FILE = "vault.toml"
CUTOFF = date(2026, 1, 1)  # the default cutoff of the split, for every stage that needs one
T = TypeVar("T")


def env_name(stage: str, name: str) -> str:
    return f"VAULT_{stage.upper()}_{name.upper()}"


def read_file(home: Path | None) -> dict[str, Any]:
    """The data root's `vault.toml` (empty when there is none)."""
    if home is None or not (home / CONFIG_FILE).is_file():
        return {}
    file = home / CONFIG_FILE
    try:
        return tomllib.loads(file.read_text(encoding="utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise VaultError(f"{file}: {exc}") from None


def _kind(annotation: Any) -> Any:
    """The field's type without Optional (``int | None`` → ``int``)."""
    if typing.get_origin(annotation) in (typing.Union, types.UnionType):
        inner = [a for a in typing.get_args(annotation) if a is not type(None)]
        return inner[0] if len(inner) == 1 else annotation
    return annotation


def coerce(annotation: Any, value: Any, name: str, where: str) -> Any:
    """A value from a file, a variable or a run config as the field's type; strings (from the
    environment) are parsed. A bad value is a one-line VaultError naming where it came from."""
    kind = _kind(annotation)
    origin = typing.get_origin(kind) or kind
    try:
        if isinstance(value, str) and origin in (dict, list, tuple):
            value = json.loads(value)
        if origin is bool and isinstance(value, str):
            return value.strip().lower() in {"1", "true", "yes", "on"}
        if origin in (int, float) and not isinstance(value, bool):
            return origin(value)
        if origin is date and not isinstance(value, date):
            try:
                return date.fromisoformat(str(value).strip())
            except ValueError:
                raise VaultError(f"{name} {value!r} is not a date (YYYY-MM-DD), "
                                 f"in {where}") from None
        if origin is tuple:
            return tuple(value)
    except (TypeError, ValueError) as exc:
        raise VaultError(f"{name}: {exc}, in {where}") from None
    return value


def _layer(values: Mapping[str, Any], where: str, hints: dict[str, Any], label: str
           ) -> dict[str, Any]:
    unknown = sorted(set(values) - set(hints))
    if unknown:
        raise VaultError(f"unknown {label} settings: {unknown}, in {where} "
                         f"(known: {', '.join(sorted(hints))})")
    return {k: coerce(hints[k], v, k, where) for k, v in values.items() if v is not None}


def resolve(cls: type[T], stage: str, *, home: Path | None = None,
            run_config: Mapping[str, Any] | None = None,
            flags: Mapping[str, Any] | None = None,
            environ: Mapping[str, str] | None = None, label: str | None = None) -> T:
    """The stage's settings from every layer, in the order of the module docstring;
    ``label`` names the settings in errors (default: the stage)."""
    environ = os.environ if environ is None else environ
    label = label or stage
    hints = settings_fields(cls)
    values: dict[str, Any] = {}
    section = read_file(home).get(stage, {})
    values |= _layer(section, f"{CONFIG_FILE} [{stage}]", hints, label)
    for name in hints:
        if env_name(stage, name) in environ:
            values[name] = coerce(hints[name], environ[env_name(stage, name)], name,
                                  env_name(stage, name))
    values |= _layer(run_config or {}, "the run config", hints, label)
    values |= _layer(flags or {}, "the command's options", hints, label)
    return cls(**values)


def settings_fields(cls: type) -> dict[str, Any]:
    """Each field of a settings dataclass and its type, in declaration order."""
    hints = typing.get_type_hints(cls)
    return {f.name: hints[f.name] for f in dataclasses.fields(cls)}  # type: ignore[arg-type]


@functools.cache
def field_docs(cls: type) -> dict[str, str]:
    """The docstring under each field of a settings dataclass (its own and its bases'), by
    field name; fields without one are absent."""
    docs: dict[str, str] = {}
    for klass in reversed(cls.__mro__[:-1]):
        try:
            tree = ast.parse(textwrap.dedent(inspect.getsource(klass)))
        except (OSError, TypeError, SyntaxError):  # no source (built-in, interactive)
            continue
        body = tree.body[0].body if tree.body and isinstance(tree.body[0], ast.ClassDef) else []
        for field, after in itertools.pairwise(body):
            if (isinstance(field, ast.AnnAssign) and isinstance(field.target, ast.Name)
                    and isinstance(after, ast.Expr) and isinstance(after.value, ast.Constant)
                    and isinstance(after.value.value, str)):
                docs[field.target.id] = " ".join(after.value.value.split())
    return docs
