"""Arrow types derived from the pydantic record models, so the record is defined once.

pyarrow has no pydantic bridge and the mapping is a few lines (str, optional str, list,
nested model), so it is written here rather than pulled in as a dependency."""

from __future__ import annotations

import types
import typing
from typing import Any

import pyarrow as pa
from pydantic import BaseModel


def arrow_type(annotation: Any) -> pa.DataType:
    """The Arrow type of one field annotation of a record model."""
    origin = typing.get_origin(annotation)
    if origin is typing.Annotated:
        return arrow_type(typing.get_args(annotation)[0])
    if origin in (typing.Union, types.UnionType):
        inner = [a for a in typing.get_args(annotation) if a is not type(None)]
        if len(inner) != 1:
            raise TypeError(f"unsupported union {annotation!r}")
        return arrow_type(inner[0])
    if origin is list:
        return pa.list_(arrow_type(typing.get_args(annotation)[0]))
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return pa.struct([pa.field(name, arrow_type(f.annotation))
                          for name, f in annotation.model_fields.items()])
    if annotation is str:
        return pa.string()
    if annotation is int:
        return pa.int64()
    raise TypeError(f"no Arrow type for {annotation!r}")


def model_columns(model: type[BaseModel]) -> list[tuple[str, pa.DataType, str]]:
    """(name, Arrow type, doc) for each top-level field of ``model``."""
    out = []
    for name, field in model.model_fields.items():
        doc = field.description or f"Record field `{name}`."
        out.append((name, arrow_type(field.annotation), doc))
    return out
