"""One configuration mechanism for every stage. A stage's frozen settings dataclass gives the
fields and their defaults; values then come, each layer over the one before:

    defaults < `vault.toml` under the data root (a `[<stage>]` table)
             < environment `VAULT_<STAGE>_<FIELD>` < run config < CLI flags

A value of None in the run config or the flags means "not set"; an empty string sets an
optional field to None. Nothing is read at import time: a stage resolves its settings when it
runs, for the data root it runs on.

A section may have a file of its own (:data:`OWN_FILES`: `harvest.toml` for `[harvest]`, the
documented file of venues and queries), which then takes the place of its table in
`vault.toml`. A field whose type is itself a settings dataclass is a nested table (`[harvest.
arxiv]`), merged key by key over the layers below; a tuple of dataclasses is an array of
tables (`[[harvest.openreview.venues]]`). Nested fields have no `VAULT_<STAGE>_<FIELD>`
variable of their own; a section may name variables for them (``aliases``).

Each field is documented by the string right under it (an attribute docstring, as in
pydantic's ``use_attribute_docstrings``); :func:`field_docs` reads them, and the generated
Dagster run config shows them in the launchpad."""

from __future__ import annotations

import ast
import dataclasses
import difflib
import functools
import inspect
import itertools
import json
import os
import textwrap
import tomllib
import types
import typing
from collections.abc import Callable, Mapping
from datetime import date
from pathlib import Path
from typing import Any, ClassVar, Self, TypeVar

from vault_pipeline.errors import VaultError

CONFIG_FILE = "vault.toml"
CUTOFF = date(2026, 1, 1)  # the default cutoff of the split, for every stage that needs one
T = TypeVar("T")


OWN_FILES: dict[str, tuple[str, str]] = {"harvest": ("harvest.toml", "VAULT_HARVEST_CONFIG")}
"""Sections with a file of their own that replaces their `vault.toml` table: (its name in the
data root, the variable that names another file)."""


SECTIONS: dict[str, list[type]] = {}
"""Every section a settings class is resolved under, with its classes: filled as the modules
that declare them are imported (each :class:`StageSettings` subclass and each stage's
declaration register theirs), so that a vault's settings can be checked whole before a run
and an unknown section refused."""

def register(section: str, cls: type) -> None:
    """Declare that ``cls`` is resolved under ``section`` (see :data:`SECTIONS`)."""
    known = SECTIONS.setdefault(section, [])
    if cls not in known:
        known.append(cls)


def suggest(name: str, known: list[str] | set[str]) -> str:
    """" (did you mean X?)" for a misspelt name, else ""."""
    close = difflib.get_close_matches(name, sorted(known), n=1, cutoff=0.6)
    return f" (did you mean {close[0]!r}?)" if close else ""


def env_name(stage: str, name: str) -> str:
    return f"VAULT_{stage.upper()}_{name.upper()}"


def _toml(file: Path, what: str) -> dict[str, Any]:
    try:
        return tomllib.loads(file.read_text(encoding="utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise VaultError(f"{what}: {exc}") from None


def read_file(home: Path | None) -> dict[str, Any]:
    """The data root's `vault.toml` (empty when there is none)."""
    if home is None or not (home / CONFIG_FILE).is_file():
        return {}
    return _toml(home / CONFIG_FILE, str(home / CONFIG_FILE))


def own_file(stage: str, home: Path | None, explicit: Path | None = None,
             environ: Mapping[str, str] | None = None) -> Path | None:
    """The file of its own a section reads (see :data:`OWN_FILES`): ``explicit``, else the
    file its variable names, else the one in the data root when it exists; None otherwise."""
    environ = os.environ if environ is None else environ
    name, variable = OWN_FILES.get(stage, (None, None))
    chosen = explicit or (Path(environ[variable]) if variable and environ.get(variable)
                          else None)
    if chosen is not None:
        if not chosen.is_file():
            raise VaultError(f"{stage} config {chosen} does not exist")
        return chosen
    if name and home is not None and (home / name).is_file():
        return home / name
    return None


def read_section(stage: str, home: Path | None, explicit: Path | None = None,
                 environ: Mapping[str, str] | None = None) -> tuple[dict[str, Any], str, str]:
    """A section's values, where they came from (for errors) and the file (for a reader):
    its own file when it has one, else its table of `vault.toml`."""
    file = own_file(stage, home, explicit, environ)
    if file is not None:
        return _toml(file, f"{stage} config {file}"), file.name, str(file)
    values = read_file(home).get(stage, {})
    return values, f"{CONFIG_FILE} [{stage}]", str(home / CONFIG_FILE) if values else "defaults"


def file_layers(home: Path | None, environ: Mapping[str, str] | None = None
                ) -> dict[str, Any]:
    """Every section's file layer, by section: each table of `vault.toml`, and each section
    with a file of its own (which replaces its table)."""
    layers: dict[str, Any] = dict(read_file(home))
    for section in OWN_FILES:
        layers[section] = read_section(section, home, None, environ)[0]
    return layers


def check_sections(home: Path | None, known: set[str] | list[str]) -> None:
    """Refuse a `vault.toml` table no settings class reads (a misspelt `[splitz]`), with the
    closest known section."""
    for section, values in read_file(home).items():
        if section not in known:
            raise VaultError(f"unknown section [{section}] in {CONFIG_FILE}"
                             f"{suggest(section, set(known))}; known sections: "
                             f"{', '.join(sorted(known))}")
        if not isinstance(values, dict):
            raise VaultError(f"{section} in {CONFIG_FILE} is a value, not a table "
                             f"([{section}] then its keys)")


def _has_input(section: str, layers: Mapping[str, Any]) -> bool:
    prefix = f"VAULT_{section.upper()}_"
    return bool(layers.get(section)) or any(k.startswith(prefix) for k in os.environ)


def check_home(home: Path | None) -> None:
    """Every section a vault sets (in a file or a `VAULT_*` variable) resolved now, against
    the sections registered so far: what `vault materialize` and the UI's code location
    check before any run, so that a bad setting is one line and no run is recorded."""
    check_sections(home, SECTIONS)
    layers = file_layers(home)
    for section, classes in sorted(SECTIONS.items()):
        if _has_input(section, layers):
            for cls in classes:
                resolve(cls, section, home=home)


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


KeyCheck = Callable[[str, str], None]
"""Called with (key, where) for every key of a file layer (to refuse secrets, say)."""


def _nested(annotation: Any) -> type | None:
    kind = _kind(annotation)
    return kind if dataclasses.is_dataclass(kind) else None


def _items(annotation: Any) -> type | None:
    """The dataclass of a ``tuple[Dataclass, ...]`` field (an array of tables)."""
    kind = _kind(annotation)
    args = typing.get_args(kind)
    if typing.get_origin(kind) is tuple and args and dataclasses.is_dataclass(args[0]):
        return args[0]  # type: ignore[return-value]
    return None


def _optional(annotation: Any) -> bool:
    return typing.get_origin(annotation) in (typing.Union, types.UnionType) and \
        type(None) in typing.get_args(annotation)


def _inner(where: str, key: str) -> str:
    """Where a nested table's values came from: `vault.toml [harvest.arxiv]`."""
    return f"{where[:-1]}.{key}]" if where.endswith("]") else f"{where} [{key}]"


def _build(cls: type[T], values: Mapping[str, Any], where: str) -> T:
    try:
        return cls(**values)
    except TypeError as exc:  # a required field missing (a venue without its id, say)
        raise VaultError(f"{exc}, in {where}") from None


def _layer(cls: type, values: Mapping[str, Any], layer: Mapping[str, Any], where: str,
           label: str, check: KeyCheck | None = None) -> dict[str, Any]:
    """``values`` with one layer applied over them, checked and coerced to the fields' types;
    a nested table is merged into the field's current value."""
    hints = settings_fields(cls)
    for key in layer if check else ():
        check(key, where)  # type: ignore[misc]
    unknown = sorted(set(layer) - set(hints))
    if unknown:
        raise VaultError(f"unknown {label} settings: {unknown}, in {where}"
                         f"{suggest(unknown[0], set(hints))} "
                         f"(known: {', '.join(sorted(hints))})")
    merged = dict(values)
    for key, value in layer.items():
        annotation = hints[key]
        if value is None:
            continue
        if value == "" and _optional(annotation):
            merged[key] = None
        elif (nested := _nested(annotation)) and isinstance(value, Mapping):
            current = merged.get(key, _default(cls, key))
            base = {f.name: getattr(current, f.name) for f in dataclasses.fields(current)} \
                if current is not None else {}
            inner = _inner(where, key)
            merged[key] = _build(nested, _layer(nested, base, value, inner, f"{label}.{key}",
                                                check), inner)
        elif (item := _items(annotation)) and isinstance(value, list | tuple) and all(
                isinstance(v, Mapping) for v in value):
            inner = _inner(where, key)
            merged[key] = tuple(_build(item, _layer(item, {}, v, inner, f"{label}.{key}",
                                                    check), inner) for v in value)
        else:
            merged[key] = coerce(annotation, value, key, where)
    return merged


def _default(cls: type, name: str) -> Any:
    field = next(f for f in dataclasses.fields(cls) if f.name == name)
    if field.default_factory is not dataclasses.MISSING:
        return field.default_factory()
    return None if field.default is dataclasses.MISSING else field.default


def _dotted(path: str, value: Any) -> dict[str, Any]:
    """``("arxiv.oai_url", v)`` as the layer ``{"arxiv": {"oai_url": v}}``."""
    head, _, rest = path.partition(".")
    return {head: _dotted(rest, value) if rest else value}


def resolve(cls: type[T], stage: str, *, home: Path | None = None,
            run_config: Mapping[str, Any] | None = None,
            flags: Mapping[str, Any] | None = None,
            environ: Mapping[str, str] | None = None, label: str | None = None,
            file: Path | None = None, aliases: Mapping[str, str] | None = None,
            check: KeyCheck | None = None) -> T:
    """The stage's settings from every layer, in the order of the module docstring;
    ``label`` names the settings in errors (default: the stage). ``file``: the section's
    own file, named explicitly (a `--config` option); ``aliases``: more variables, each
    setting a (dotted) field; ``check`` is called on every key of the file layer."""
    environ = os.environ if environ is None else environ
    label = label or stage
    hints = settings_fields(cls)
    section, where, _source = read_section(stage, home, file, environ)
    values = _layer(cls, {}, section, where, label, check)
    for name, annotation in hints.items():
        variable = env_name(stage, name)
        if variable in environ and not (_nested(annotation) or _items(annotation)):
            values = _layer(cls, values, {name: environ[variable]}, variable, label)
    for variable, path in (aliases or {}).items():
        if environ.get(variable):
            values = _layer(cls, values, _dotted(path, environ[variable]), variable, label)
    values = _layer(cls, values, run_config or {}, "the run config", label)
    values = _layer(cls, values, flags or {}, "the command's options", label)
    return _build(cls, values, label)


class StageSettings:
    """Base of every stage's settings dataclass: one way to resolve them, the same signature
    for every stage (and for :meth:`vault_pipeline.pipeline.stage.Stage.resolve`)."""

    SECTION: ClassVar[str]
    """The `vault.toml` table (and `VAULT_<SECTION>_<FIELD>` prefix) of these settings."""
    LABEL: ClassVar[str | None] = None
    """How errors name these settings (default: the section)."""

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if "SECTION" in vars(cls):
            register(cls.SECTION, cls)

    @classmethod
    def resolve(cls, *, home: Path | None = None, run_config: Mapping[str, Any] | None = None,
                flags: Mapping[str, Any] | None = None,
                environ: Mapping[str, str] | None = None) -> Self:
        """These settings from every layer, in the order of the module docstring."""
        return resolve(cls, cls.SECTION, home=home, run_config=run_config, flags=flags,
                       environ=environ, label=cls.LABEL)

    def over(self, layer: Mapping[str, Any], where: str = "the run config") -> Self:
        """These (resolved) settings with ``layer`` applied over them, checked and coerced as
        every layer is: how a stage lays its own overrides over a section it ``uses``."""
        cls, label = type(self), self.LABEL or self.SECTION
        values = {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}  # type: ignore[arg-type]
        return _build(cls, _layer(cls, values, layer, where, label), label)

    def replace(self, **changes: Any) -> Self:
        """These settings with ``changes`` (values of the fields' types)."""
        return dataclasses.replace(self, **changes)  # type: ignore[type-var]


SECTION_MODULES: dict[str, str] = {
    "splits": "vault_pipeline.splits.settings",
    "compute": "vault_pipeline.executors.settings",
    "ideas": "vault_pipeline.llm.settings",
    "evalsets": "vault_pipeline.evalsets.settings",
    "duplicates": "vault_pipeline.duplicates.settings",
}
"""Where the settings of each section a stage may declare in its ``uses`` are defined, so
that a stage reads another stage's settings through its declaration and the runner, never by
importing that stage (a stage upstream of `splits` reads its cutoff this way)."""


def section_settings(section: str, home: Path | None,
                     environ: Mapping[str, str] | None = None) -> Any:
    """The resolved settings of ``section`` (one of :data:`SECTION_MODULES`)."""
    import importlib

    if section not in SECTION_MODULES:
        raise VaultError(f"no settings section {section!r} to use; known: "
                         f"{', '.join(sorted(SECTION_MODULES))}")
    module = importlib.import_module(SECTION_MODULES[section])
    cls = next(c for c in vars(module).values() if isinstance(c, type)
               and issubclass(c, StageSettings) and getattr(c, "SECTION", None) == section)
    return cls.resolve(home=home, environ=environ)


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
