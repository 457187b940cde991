"""Every table of the vault, defined once: name, columns, Arrow types and what each column
means. Writers cast to these schemas, the README documents them, tests compare against them."""

from __future__ import annotations

from dataclasses import dataclass

import polars as pl
import pyarrow as pa


@dataclass(frozen=True)
class Column:
    name: str
    type: pa.DataType
    doc: str
    nullable: bool = True


@dataclass(frozen=True)
class TableSchema:
    name: str
    doc: str
    columns: tuple[Column, ...]

    @property
    def arrow(self) -> pa.Schema:
        return pa.schema(
            [pa.field(c.name, c.type, nullable=c.nullable, metadata={"doc": c.doc})
             for c in self.columns],
            metadata={"table": self.name, "doc": self.doc},
        )

    @property
    def polars(self) -> pl.Schema:
        return pl.Schema(pl.from_arrow(self.arrow.empty_table()).schema)

    @property
    def names(self) -> list[str]:
        return [c.name for c in self.columns]

    def empty(self) -> pa.Table:
        return self.arrow.empty_table()

    def markdown(self) -> str:
        """A Markdown table of the columns, as the README shows it."""
        lines = ["| column | type | meaning |", "|---|---|---|"]
        lines += [f"| `{c.name}` | `{c.type}` | {c.doc} |" for c in self.columns]
        return "\n".join(lines)


_str = pa.string()
_date = pa.date32()
_ts = pa.timestamp("us", tz="UTC")

PAPERS = TableSchema(
    "papers",
    "One row per arXiv paper, parsed from every raw file; the newest version wins.",
    (
        Column("arxiv_id", _str, "Version-less arXiv id; old-style ids (`hep-th/9901001`) kept "
               "exactly, a subject class in them (`math.GT/0309136`) dropped.", False),
        Column("latest_version", pa.int32(), "Highest version seen (`vN`), null if no source "
               "said (OAI `arXiv`, `oai_dc`)."),
        Column("title", _str, "Title, whitespace normalised.", False),
        Column("abstract", _str, "Abstract, whitespace normalised.", False),
        Column("authors", pa.list_(_str), "Author names, `Forenames Surname`, in order.", False),
        Column("categories", pa.list_(_str), "arXiv categories, primary first; null if the "
               "source has none (`oai_dc`)."),
        Column("primary_category", _str, "Primary arXiv category."),
        Column("published", _date, "Date of v1.", False),
        Column("updated", _date, "Date of the latest version.", False),
        Column("doi", _str, "DOI of the published version."),
        Column("journal_ref", _str, "Journal reference."),
        Column("comments", _str, "Authors' comments (pages, figures, venue)."),
        Column("license", _str, "License URL as arXiv states it."),
        Column("source", _str, "Raw file kind the winning row came from: `arxiv_api`, "
               "`oai_arXiv`, `oai_arXivRaw`, `oai_dc`, `arxiv_snapshot`.", False),
        Column("raw_sha256", _str, "sha256 of the raw file the winning row came from.", False),
    ),
)

PAPERS_REJECTED = TableSchema(
    "papers_rejected",
    "Records (or whole raw files) that could not become a `papers` row, with the reason.",
    (
        Column("raw_sha256", _str, "sha256 of the raw file.", False),
        Column("source", _str, "Raw file kind.", False),
        Column("position", pa.int64(), "Line number in the raw file (JSON lines, XML); null "
               "when the whole file failed."),
        Column("record_id", _str, "Identifier as found in the record, if any."),
        Column("reason", _str, "Why it was rejected.", False),
        Column("snippet", _str, "Up to 200 characters of the offending input."),
    ),
)

RAW_FILES = TableSchema(
    "raw_files",
    "The raw zone's manifest: one row per stored file (content-addressed, never overwritten).",
    (
        Column("sha256", _str, "sha256 of the bytes as received; the file's identity.", False),
        Column("kind", _str, "What the content is: `arxiv_api`, `oai_pmh`, `arxiv_snapshot`, "
               "`pdf`.", False),
        Column("wrapper", _str, "How the content is wrapped: `recorded_http` (a recorded "
               "`{url, status_code, body}` response), `gzip`, or null."),
        Column("formats", _str, "Metadata formats seen in it (`arXiv`, `arXivRaw`, `dc`, "
               "`arxiv_api`, `arxiv_snapshot`)."),
        Column("path", _str, "Path relative to the raw zone.", False),
        Column("size_bytes", pa.int64(), "Size in bytes.", False),
        Column("original_name", _str, "File name it was imported or fetched as."),
        Column("origin", _str, "Where it came from: `import:<path>` or a URL."),
        Column("records", pa.int64(), "Records counted when checked at import (XML pages); "
               "null for streams not counted up front."),
        Column("received_at", _ts, "When it entered the raw zone.", False),
    ),
)

IMPORT_REJECTS = TableSchema(
    "import_rejects",
    "Files `vault import` kept out of the raw zone, with the reason.",
    (
        Column("path", _str, "Path as given to `vault import`.", False),
        Column("sha256", _str, "sha256 of the file, if it could be read."),
        Column("reason", _str, "Why it was kept out.", False),
        Column("rejected_at", _ts, "When.", False),
    ),
)

ALL_TABLES: dict[str, TableSchema] = {
    t.name: t for t in (PAPERS, PAPERS_REJECTED, RAW_FILES, IMPORT_REJECTS)
}


if __name__ == "__main__":  # `python -m vault_pipeline.schemas`: the README's table section
    for _table in ALL_TABLES.values():
        print(f"### `{_table.name}`\n\n{_table.doc}\n\n{_table.markdown()}\n")
