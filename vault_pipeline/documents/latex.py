"""LaTeX e-print to Markdown-like text: find the main file, inline ``\\input``/``\\include``
(never reaching outside the unpacked folder), splice in the ``.bbl`` for
``\\bibliography``, expand argument-free ``\\newcommand``s, then let pylatexenc (a tolerant
LaTeX parser) render text with section structure kept as Markdown headings, display math as
``$$`` blocks, tables as Markdown tables, and figures, captions, labels and citation commands
left out. References come out under a ``## References`` heading and ``\\appendix`` as
``## Appendix``, so the shared cleaning puts them in their own columns.

File resolution and macro expansion are written here because pylatexenc parses one string
and knows nothing of files or user macros."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path

import pylatexenc
from pylatexenc import latexwalker, macrospec
from pylatexenc.latex2text import (
    EnvironmentTextSpec,
    LatexNodes2Text,
    MacroTextSpec,
    get_default_latex_context_db,
)

from vault_pipeline.documents.outcome import (
    EMPTY,
    TOO_LARGE,
    UNSUPPORTED,
    ConversionError,
    Converted,
)

LATEX_VERSION = "1"
MAX_INLINE_DEPTH = 12
MAX_SOURCE_CHARS = 20_000_000
MAIN_NAMES = ("main", "ms", "paper", "article", "manuscript")

_COMMENT = re.compile(r"(?<!\\)%.*")
_INPUT = re.compile(
    r"\\(?:(?:input|include|subfile)\s*(?:\{([^{}]+)\}|\s+([^\s{}\\%]+))"
    r"|(?:sub)?import\s*\{([^{}]*)\}\s*\{([^{}]+)\})")
_BIBLIOGRAPHY = re.compile(r"\\(?:bibliography\s*\{[^{}]*\}|printbibliography\b(?:\[[^\]]*\])?)")
_DOCUMENTCLASS = re.compile(r"\\documentclass\b|\\documentstyle\b")
_BEGIN_DOCUMENT = re.compile(r"\\begin\s*\{document\}")
_TITLE = re.compile(r"\\title\s*(?:\[[^\]]*\])?\s*\{")
_NEWCOMMAND = re.compile(r"\\(?:re|provide)?newcommand\*?\s*\{?\\([A-Za-z]+)\}?\s*\{|"
                         r"\\def\s*\\([A-Za-z]+)\s*\{")
_LABEL = re.compile(r"\\(?:label|tag\*?|nonumber|notag)\s*(?:\{[^{}]*\})?")
_RULE = re.compile(r"\\(?:hline|toprule|midrule|bottomrule|cline\s*\{[^{}]*\}|"
                   r"cmidrule(?:\([^)]*\))?\s*\{[^{}]*\})")

CITE_MACROS = ("cite", "citep", "citet", "citealp", "citealt", "citeauthor", "citeyear",
               "citeyearpar", "parencite", "textcite", "autocite", "footcite", "Cite",
               "Citep", "Citet", "nocite", "supercite")
REF_MACROS = ("ref", "eqref", "autoref", "cref", "Cref", "nameref", "pageref", "vref")
DROP_MACROS = {"caption": "*[{", "label": "{", "includegraphics": "*[{",
               "bibliographystyle": "{", "thanks": "{", "author": "[{", "date": "{",
               "maketitle": "", "email": "{", "affiliation": "[{", "institute": "{",
               "vspace": "*{", "hspace": "*{", "setlength": "{{", "addtolength": "{{",
               "setcounter": "{{", "newtheorem": "*{[{[", "DeclareMathOperator": "*{{",
               "graphicspath": "{", "hypersetup": "{", "keywords": "{", "acknowledgments": "",
               "centering": "", "noindent": "", "clearpage": "", "newpage": "",
               "tableofcontents": "", "title": "[{"}
MATH_ENVIRONMENTS = ("equation", "align", "gather", "multline", "eqnarray", "displaymath",
                     "flalign", "alignat")
DROP_ENVIRONMENTS = ("figure", "figure*", "wrapfigure", "comment", "tikzpicture",
                     "subfigure")


def converter_version() -> str:
    return f"pylatexenc {pylatexenc.__version__}, latex-md {LATEX_VERSION}"


def strip_comments(text: str) -> str:
    return "\n".join(_COMMENT.sub("", line) for line in text.split("\n"))


def read_tex(path: Path) -> str:
    return path.read_bytes().decode("utf-8", errors="replace")


def balanced(text: str, start: int) -> tuple[str, int] | None:
    """The content of the brace group opening at ``text[start] == '{'`` and the index after
    its closing brace; None when it never closes."""
    depth = 0
    for index in range(start, len(text)):
        char = text[index]
        if char == "\\":
            continue
        if char == "{" and (index == 0 or text[index - 1] != "\\"):
            depth += 1
        elif char == "}" and text[index - 1] != "\\":
            depth -= 1
            if depth == 0:
                return text[start + 1:index], index + 1
    return None


def _toplevel_from_readme(root: Path) -> Path | None:
    """arXiv's ``00README.json`` (or the older ``00README.XXX``) may name the main file."""
    readme = root / "00README.json"
    try:
        if readme.is_file():
            for source in json.loads(readme.read_text()).get("sources", []):
                if source.get("usage") == "toplevel":
                    return root / source["filename"]
        legacy = root / "00README.XXX"
        if legacy.is_file():
            for line in legacy.read_text(errors="replace").splitlines():
                parts = line.split()
                if len(parts) == 2 and parts[1] == "toplevelfile":
                    return root / parts[0]
    except (ValueError, KeyError, TypeError, AttributeError, OSError):
        return None
    return None


def find_main(root: Path, files: list[Path]) -> Path:
    """The file LaTeX would be run on: named by 00README, else the ``.tex`` file with
    ``\\documentclass`` and ``\\begin{document}`` (common names first, then the largest)."""
    named = _toplevel_from_readme(root)
    if named is not None and named.is_file() and _inside(named, root):
        return named
    candidates = []
    for path in files:
        if path.suffix.lower() not in {".tex", ".ltx", ".latex", ""}:
            continue
        text = strip_comments(read_tex(path)[:MAX_SOURCE_CHARS])
        if _DOCUMENTCLASS.search(text) and _BEGIN_DOCUMENT.search(text):
            candidates.append((path.stem.lower() not in MAIN_NAMES, -len(text), str(path), path))
    if not candidates:
        raise ConversionError(UNSUPPORTED, "no LaTeX main file (\\documentclass and "
                                           "\\begin{document}) in the e-print")
    return min(candidates)[3]


def _inside(path: Path, root: Path) -> bool:
    try:
        return path.resolve().is_relative_to(root.resolve())
    except OSError:
        return False


def _resolve(root: Path, name: str) -> Path | None:
    name = name.strip().strip('"')
    for candidate in (root / name, root / f"{name}.tex"):
        if candidate.is_file() and not candidate.is_symlink() and _inside(candidate, root):
            return candidate
    return None


def inline_inputs(text: str, root: Path, notes: list[str], depth: int = 0) -> str:
    """Replace ``\\input``, ``\\include``, ``\\subfile`` and ``\\(sub)import`` by the files."""
    def replace(match: re.Match[str]) -> str:
        name = match.group(1) or match.group(2) or (match.group(3) or "") + match.group(4)
        target = _resolve(root, name)
        if target is None:
            notes.append(f"missing input {name}")
            return ""
        if depth >= MAX_INLINE_DEPTH:
            raise ConversionError(TOO_LARGE, f"\\input nested deeper than {MAX_INLINE_DEPTH}")
        included = inline_inputs(strip_comments(read_tex(target)), root, notes, depth + 1)
        return f"\n{included}\n"

    result = _INPUT.sub(replace, text)
    if len(result) > MAX_SOURCE_CHARS:
        raise ConversionError(TOO_LARGE, f"source over {MAX_SOURCE_CHARS:,} characters "
                                         "after inlining its inputs")
    return result


def splice_bibliography(text: str, main: Path, files: list[Path], notes: list[str]) -> str:
    """Put the ``.bbl`` (what BibTeX wrote) where ``\\bibliography`` stands."""
    if not _BIBLIOGRAPHY.search(text):
        return text
    bbls = [p for p in files if p.suffix.lower() == ".bbl"]
    same_stem = [p for p in bbls if p.stem == main.stem]
    chosen = same_stem[0] if same_stem else (bbls[0] if len(bbls) == 1 else None)
    if chosen is None:
        notes.append("no .bbl for \\bibliography: references not available")
        return _BIBLIOGRAPHY.sub("", text)
    bbl = strip_comments(read_tex(chosen))
    return _BIBLIOGRAPHY.sub(lambda _m: f"\n{bbl}\n", text, count=1)


def expand_simple_macros(text: str) -> str:
    """Expand argument-free ``\\newcommand``/``\\def`` macros (names, symbols, spellings of
    a method), three rounds at most so a self-referencing macro cannot loop."""
    macros: dict[str, str] = {}
    for match in _NEWCOMMAND.finditer(text):
        group = balanced(text, match.end() - 1)
        if group is not None:
            macros[match.group(1) or match.group(2)] = group[0]
    if not macros:
        return text
    pattern = re.compile(r"\\(" + "|".join(sorted(map(re.escape, macros), key=len,
                                                      reverse=True)) + r")(?![A-Za-z])")
    body_start = _BEGIN_DOCUMENT.search(text)
    head, body = (text[:body_start.start()], text[body_start.start():]) if body_start else \
        ("", text)
    for _ in range(3):
        expanded = pattern.sub(lambda m: macros[m.group(1)], body)
        if expanded == body:
            break
        body = expanded
    return head + body


def extract_title(text: str) -> str | None:
    match = _TITLE.search(text)
    if match is None:
        return None
    group = balanced(text, match.end() - 1)
    return group[0] if group else None


def _heading(level: int) -> Callable:
    def render(node, l2tobj: LatexNodes2Text) -> str:
        argument = node.nodeargd.argnlist[-1] if node.nodeargd and node.nodeargd.argnlist \
            else None
        title = l2tobj.nodelist_to_text([argument]).strip() if argument is not None else ""
        return f"\n\n{'#' * level} {' '.join(title.split())}\n\n"
    return render


def _display_math(node) -> str:
    body = "".join(n.latex_verbatim() for n in node.nodelist)
    body = _LABEL.sub("", body).strip()
    return f"\n\n$$\n{body}\n$$\n\n" if body else ""


def _tabular(node, l2tobj: LatexNodes2Text) -> str:
    """A ``tabular`` as a Markdown table (cells converted one by one)."""
    source = _RULE.sub("", "".join(n.latex_verbatim() for n in node.nodelist))
    rows = []
    for raw_row in re.split(r"\\\\(?:\[[^\]]*\])?", source):
        cells = [" ".join(l2tobj.latex_to_text(c).split()) for c in re.split(r"(?<!\\)&", raw_row)]
        if any(cells):
            rows.append("| " + " | ".join(c.replace("|", "/") for c in cells) + " |")
    if not rows:
        return ""
    width = rows[0].count(" | ") + 1
    return "\n\n" + "\n".join([rows[0], "|" + "---|" * width, *rows[1:]]) + "\n\n"


def _section_env(title: str) -> Callable:
    def render(node, l2tobj: LatexNodes2Text) -> str:
        return f"\n\n## {title}\n\n{l2tobj.nodelist_to_text(node.nodelist).strip()}\n\n"
    return render


def _walker_context() -> macrospec.LatexContextDb:
    db = latexwalker.get_default_latex_context_db()
    macros = [macrospec.MacroSpec(name, args) for name, args in DROP_MACROS.items()]
    macros += [macrospec.MacroSpec(name, "*[[{") for name in CITE_MACROS]
    macros += [macrospec.MacroSpec(name, "*{") for name in REF_MACROS]
    macros += [macrospec.MacroSpec("paragraph", "*[{"), macrospec.MacroSpec("subparagraph", "*[{"),
               macrospec.MacroSpec("bibitem", "[{"), macrospec.MacroSpec("newblock", ""),
               macrospec.MacroSpec("href", "{{"), macrospec.MacroSpec("appendix", "")]
    environments = [macrospec.EnvironmentSpec("thebibliography", "{"),
                    macrospec.EnvironmentSpec("tabular", "{"),
                    macrospec.EnvironmentSpec("tabular*", "{{"),
                    macrospec.EnvironmentSpec("tabularx", "{{")]
    db.add_context_category("vault", macros=macros, environments=environments, prepend=True)
    return db


def _text_context():
    db = get_default_latex_context_db()
    macros = [MacroTextSpec(name, discard=True) for name in (*DROP_MACROS, *CITE_MACROS)]
    macros += [MacroTextSpec(name, simplify_repl="") for name in REF_MACROS]
    macros += [MacroTextSpec(name, simplify_repl=_heading(level)) for name, level in
               (("section", 2), ("subsection", 3), ("subsubsection", 4), ("paragraph", 5),
                ("subparagraph", 6))]
    macros += [MacroTextSpec("appendix", simplify_repl="\n\n## Appendix\n\n"),
               MacroTextSpec("bibitem", simplify_repl="\n\n- "),
               MacroTextSpec("newblock", simplify_repl=" "),
               MacroTextSpec("href", simplify_repl="%(2)s"),
               MacroTextSpec("url", simplify_repl="%(1)s")]
    environments = [EnvironmentTextSpec(name, discard=True) for name in DROP_ENVIRONMENTS]
    environments += [EnvironmentTextSpec(name + star, simplify_repl=_display_math)
                     for name in MATH_ENVIRONMENTS for star in ("", "*")]
    environments += [EnvironmentTextSpec(name, simplify_repl=_tabular)
                     for name in ("tabular", "tabular*", "tabularx")]
    environments += [EnvironmentTextSpec("abstract", simplify_repl=_section_env("Abstract")),
                     EnvironmentTextSpec("thebibliography",
                                         simplify_repl=_section_env("References"))]
    db.add_context_category("vault", macros=macros, environments=environments, prepend=True)
    return db


_WALKER_CONTEXT = _walker_context()
_TEXT_CONTEXT = _text_context()


def latex_to_markdown(source: str) -> str:
    """Render a whole (inlined) LaTeX document as Markdown-like text."""
    begin = _BEGIN_DOCUMENT.search(source)
    body = source[begin.end():] if begin else source
    body = re.split(r"\\end\s*\{document\}", body, maxsplit=1)[0]
    walker = latexwalker.LatexWalker(body, latex_context=_WALKER_CONTEXT, tolerant_parsing=True)
    nodes, _, _ = walker.get_latex_nodes()
    converter = LatexNodes2Text(latex_context=_TEXT_CONTEXT, math_mode="verbatim",
                                strict_latex_spaces=True)
    text = converter.nodelist_to_text(nodes)
    title = extract_title(source)
    if title:
        title_text = " ".join(converter.latex_to_text(title).split())
        text = f"# {title_text}\n\n{text}"
    text = re.sub(r"^- *\n+\s*", "- ", text, flags=re.MULTILINE)  # \bibitem{key}<newline>
    return re.sub(r"\n{3,}", "\n\n", text).strip()


def eprint_to_markdown(root: Path, files: list[Path]) -> Converted:
    """Convert an unpacked e-print."""
    notes: list[str] = []
    main = find_main(root, files)
    source = inline_inputs(strip_comments(read_tex(main)), root, notes)
    source = expand_simple_macros(splice_bibliography(source, main, files, notes))
    markdown = latex_to_markdown(source)
    if not markdown.strip():
        raise ConversionError(EMPTY, f"{main.name} renders to no text")
    relative = main.relative_to(root)
    return Converted(markdown=markdown, notes=(f"main file {relative}", *notes))
