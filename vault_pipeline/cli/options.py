"""Options more than one command module takes, declared once so that each reads the same
way everywhere (name, environment variable, help)."""

from __future__ import annotations

from typing import Annotated

import typer

HomeOption = Annotated[  # a str: a Path would fold the `//` of an `s3://…` root
    str | None,
    typer.Option("--home", envvar="VAULT_HOME", help="Data root (default ./vault_home)."),
]
