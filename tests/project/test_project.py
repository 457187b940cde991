"""Project contracts: the layering rule, the README's schemas, the CI command."""

import ast
import re
from pathlib import Path

from vault_pipeline.schemas import ALL_TABLES

ROOT = Path(__file__).parents[2]
WIRING = {"definitions.py"}  # and the cli/ package: the two faces


def _imports(path: Path) -> set[str]:
    tree = ast.parse(path.read_text())
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names |= {alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module.split(".")[0])
    return names


def test_domain_library_does_not_import_dagster() -> None:
    offenders = [
        str(path.relative_to(ROOT))
        for path in (ROOT / "vault_pipeline").rglob("*.py")
        if not (path.name in WIRING or "cli" in path.relative_to(ROOT).parts)
        and {"dagster", "assets", "sensors"} & _imports(path)
    ]
    assert offenders == []


def test_docs_document_every_table() -> None:
    tables = (ROOT / "docs" / "tables.md").read_text()
    missing = [name for name, table in ALL_TABLES.items() if table.markdown() not in tables]
    assert missing == [], "refresh with `python -m vault_pipeline.schemas > docs/tables.md`"


def test_ci_runs_the_readme_test_command() -> None:
    readme = (ROOT / "README.md").read_text()
    blocks = re.findall(r"```bash\n(.*?)\n```", readme, flags=re.S)
    test_command = next(b for b in blocks if "pytest" in b)
    assert test_command.strip() in (ROOT / ".ci" / "run").read_text()


def _allocator_settings(env: dict[str, str]) -> str:
    import os
    import subprocess
    import sys

    code = ("import vault_pipeline, polars, os; "
            "print(os.environ['_RJEM_MALLOC_CONF'])")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          check=True, env={k: v for k, v in os.environ.items()
                                           if k != "_RJEM_MALLOC_CONF"} | env)
    return done.stdout.strip()


def test_allocator_keeps_freed_pages_for_batch_builds_unless_the_user_says_otherwise() -> None:
    """jemalloc takes the last value of each option: ours must come after Polars' defaults."""
    from vault_pipeline.pipeline.allocator import BATCH_SETTINGS

    assert _allocator_settings({}).endswith("," + BATCH_SETTINGS)
    assert _allocator_settings({"_RJEM_MALLOC_CONF": "dirty_decay_ms:0"}).endswith(
        ",dirty_decay_ms:0")


def _relative_imports(path: Path) -> set[str]:
    tree = ast.parse(path.read_text())
    return {"." * node.level + (node.module or "") for node in ast.walk(tree)
            if isinstance(node, ast.ImportFrom) and node.level}


def test_schemas_are_data_at_the_ground_floor() -> None:
    """The tables import only the record models, never a stage."""
    for path in [ROOT / "vault_pipeline" / "schemas.py",
                 *(ROOT / "vault_pipeline" / "records").glob("*.py")]:
        stages = {m for m in _relative_imports(path)
                  if not m.startswith((".records", ".arrow", ".masked", ".idea",
                                       "..integrity.placeholders"))}
        assert stages == set(), f"{path.name} imports {stages}"


def test_only_the_table_store_locates_tables() -> None:
    offenders = [str(path.relative_to(ROOT)) for folder in ("vault_pipeline", "assets")
                 for path in (ROOT / folder).rglob("*.py")
                 if path.name not in {"tables.py", "paths.py"}
                 and re.search(r"(?<!MetadataValue)(?<!\bmd)\.table\(|read_if_exists|tables\.glob",
                                  path.read_text())]
    assert offenders == []


def test_evaluation_sets_do_not_import_the_export() -> None:
    offenders = [path.name for path in (ROOT / "vault_pipeline" / "evalsets").glob("*.py")
                 if any("datasets" in m for m in _relative_imports(path))]
    assert offenders == []
