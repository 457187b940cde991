"""The agent tools, implemented once: every face (Python, OpenAI schemas, MCP, HTTP,
batches) calls `Session.call`, which validates the arguments against `specs`, answers within
the session's world and logs the call.

`Toolbox` holds what every session of one vault shares (the catalog, the index, the query
model, the citation edges) and runs searches in batches: one model call embeds every query
of a batch, one walk of the search graph per distinct filter searches all of its vectors
(`vector_graph`, over the views the tools search). Concurrent
single calls are coalesced the same way (`coalesce=True`): a caller that finds the searcher
busy waits for the next batch instead of competing for the cores."""

from __future__ import annotations

import queue
import threading
import time
import uuid
from collections import OrderedDict
from collections.abc import Sequence
from concurrent.futures import Future
from dataclasses import dataclass, field
from datetime import UTC, date, datetime
from typing import TYPE_CHECKING, Any

import numpy as np
import polars as pl

from vault_pipeline.access import specs, wire
from vault_pipeline.access.fulltext import pages, sections
from vault_pipeline.access.log import CallRecord, frame
from vault_pipeline.access.world import Catalog, World, canonical_id, clusters_of, make_world
from vault_pipeline.access.world import target_title as target_title_of
from vault_pipeline.errors import VaultError
from vault_pipeline.index.layout import in_list, sql_literal

if TYPE_CHECKING:
    from vault_pipeline.store.paths import VaultPaths

PRIOR_ART_VIEWS = ("problem_setting", "challenge")
MECHANISM_VIEWS = ("challenge",)
SEARCHED_VIEWS = tuple(dict.fromkeys(PRIOR_ART_VIEWS + MECHANISM_VIEWS))  # what the graph holds
QUERY_ENCODERS = ("model", "static")
MAX_BATCH = 256  # calls in one batch
STATUS = {"not_found": 404, "no_full_text": 404, "no_section": 404, "no_page": 404,
          "bad_arguments": 400, "batch_too_large": 413}


class ToolError(Exception):
    """A call answered with an error: ``code`` for programs, ``message`` for the agent."""

    def __init__(self, code: str, message: str, status: int = 400) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.status = status

    def answer(self) -> dict[str, Any]:
        return {"error": self.code, "message": self.message}


def not_found(raw: str) -> ToolError:
    """The one answer for an id the session may not see, whatever the reason."""
    return ToolError("not_found", f"no paper {raw!r} in this vault", 404)


@dataclass(frozen=True)
class SearchRequest:
    """One search: its text, the prefilter it shares with others of the same cutoff, the
    rows it wants, and the ids its session may not see (taken out of its rows by the
    session's `World.seen`)."""

    text: str
    where: str
    depth: int
    hidden: frozenset[str] = frozenset()

    @property
    def fetch(self) -> int:
        """Rows to ask for so that ``depth`` remain once hidden papers' rows (five views
        at most each) are taken out."""
        return self.depth + 5 * len(self.hidden)


class Toolbox:
    """The shared side of the tools over one vault (thread-safe; load once per process)."""

    def __init__(self, paths: VaultPaths, coalesce: bool = False, max_batch: int = 64,
                 cached_queries: int = 16_384, query_encoder: str = "model") -> None:
        """``query_encoder``: ``model`` embeds search texts with the index's own model;
        ``static`` with a static encoder distilled from it (`embeddings.static_query`:
        about 70x cheaper, slightly less accurate), for rollouts bound by the model."""
        if query_encoder not in QUERY_ENCODERS:
            raise VaultError(f"query encoder {query_encoder!r}: use one of "
                             f"{', '.join(QUERY_ENCODERS)}")
        self.paths = paths
        self.query_encoder = query_encoder
        self._static: Any = None
        self.max_batch = max_batch
        self.cached_queries = cached_queries
        self._vectors: OrderedDict[str, np.ndarray] = OrderedDict()
        self._lock = threading.Lock()
        self._graph_lock = threading.Lock()  # a first build takes minutes: not under _lock
        self._catalog: Catalog | None = None
        self._table: Any = None
        self._embedder: Any = None
        self._citations: pl.DataFrame | None = None
        self._clusters: pl.DataFrame | bool | None = False
        self._documents: OrderedDict[str, pl.DataFrame] = OrderedDict()
        self._worlds: OrderedDict[tuple, World] = OrderedDict()
        self._graph: Any = None
        self._tuned = False
        self._row_papers: np.ndarray | None = None
        self._queue: queue.Queue[tuple[SearchRequest, Future]] | None = None
        if coalesce:
            self._queue = queue.Queue()
            threading.Thread(target=self._coalescer, daemon=True, name="vault-search").start()

    # -- shared state, loaded on first use ----------------------------------------------
    @property
    def catalog(self) -> Catalog:
        with self._lock:
            if self._catalog is None:
                self._catalog = Catalog.of(self.paths)
            return self._catalog

    @property
    def clusters(self) -> pl.DataFrame | None:
        with self._lock:
            if self._clusters is False:
                self._clusters = clusters_of(self.paths)
            return self._clusters  # type: ignore[return-value]

    def index(self):
        with self._lock:
            if self._table is None:
                from vault_pipeline.index.lance_index import open_index

                self._table = open_index(self.paths)
            return self._table

    def embedder(self):
        table = self.index()
        with self._lock:
            if self._embedder is None:
                from vault_pipeline.embeddings.embedders import EMBEDDED, load_query_embedder
                from vault_pipeline.index.lance_index import index_metadata

                source = index_metadata(table).get("embedder_source", EMBEDDED)
                self._embedder = load_query_embedder(source)
            return self._embedder

    def query_model(self):
        """What search texts are embedded with: the index's model, or the static encoder
        distilled from it for this index version (read back or distilled once)."""
        if self.query_encoder == "model":
            return self.embedder()
        graph, model = self.graph(), self.embedder()
        with self._graph_lock:
            if self._static is None:
                from vault_pipeline.embeddings.static_query import for_index
                from vault_pipeline.index.layout import index_dir

                path = index_dir(self.paths) / "graph" / f"query-{graph.name}.npz"
                self._static = for_index(graph.rows.column("text").to_pylist(),
                                         graph.vectors, model, path)
            return self._static

    def warm(self) -> None:
        """Load everything a first call would (catalog and its titles, index and its search
        graph, model)."""
        self.catalog.similar_titles("warm up")
        self.searched_graph()
        self.query_model().embed(["warm up"])

    def world(self, as_of: str | date | None = None, target: str | None = None,
              target_title: str | None = None) -> World:
        """The world cut at ``as_of`` (default: the vault's cutoff) without ``target`` and
        its near-duplicates; kept for the next session of the same target."""
        catalog = self.catalog
        if as_of is None:
            if catalog.cutoff is None:
                raise VaultError("the vault has no split yet: give as_of")
            as_of = catalog.cutoff
        key = (str(as_of), target, target_title)
        with self._lock:
            found = self._worlds.get(key)
        if found is None:
            title = target_title or (target and target_title_of(self.paths, target))
            found = make_world(catalog, as_of, target, title, self.clusters)
            with self._lock:
                self._worlds[key] = found
                while len(self._worlds) > 1_024:
                    self._worlds.popitem(last=False)
        return found

    def session(self, as_of: str | date | None = None, target: str | None = None,
                session_id: str | None = None, target_title: str | None = None,
                within: World | None = None) -> Session:
        """A session cut at ``as_of`` (default: the vault's cutoff) that never sees
        ``target`` or its near-duplicates (nor what ``within`` rules out)."""
        world = self.world(as_of, target, target_title).narrowed(within)
        return Session(self, world, session_id or uuid.uuid4().hex)

    # -- searches ----------------------------------------------------------------------
    def search(self, requests: Sequence[SearchRequest]) -> list[tuple[np.ndarray, np.ndarray]]:
        """The nearest graph rows of each request and their scores (`VectorGraph.nearest`),
        best first, in one batch; `Session._hits` keeps the session's papers among them."""
        if not requests:
            return []
        if self._queue is None or len(requests) > 1:
            return self._search_now(list(requests))
        done: Future = Future()
        self._queue.put((requests[0], done))
        return [done.result()]

    def _coalescer(self) -> None:
        assert self._queue is not None
        while True:
            batch = [self._queue.get()]
            while len(batch) < self.max_batch:
                try:
                    batch.append(self._queue.get_nowait())
                except queue.Empty:
                    break
            try:
                results = self._search_now([request for request, _ in batch])
            except Exception as exc:  # noqa: BLE001 - handed to each waiting caller
                for _, done in batch:
                    done.set_exception(exc)
                continue
            for (_, done), rows in zip(batch, results, strict=True):
                done.set_result(rows)

    def graph(self):
        """The in-memory search graph of the index (built or read once per process)."""
        table = self.index()
        with self._graph_lock:
            if self._graph is None:
                from vault_pipeline.access.vector_graph import VectorGraph
                from vault_pipeline.index.layout import IndexSettings, index_dir

                self._graph = VectorGraph.of_table(table, index_dir(self.paths) / "graph",
                                                   IndexSettings().ann_min_rows,
                                                   views=SEARCHED_VIEWS)
            return self._graph

    def searched_graph(self):
        """The graph, its search depth tuned once for this toolbox's query encoder (the
        recall it reaches is kept beside the graph: `VectorGraph.tune`)."""
        graph = self.graph()
        if not self._tuned:
            encoder = self.query_model()
            with self._graph_lock:
                if not self._tuned:
                    from vault_pipeline.index.layout import index_dir

                    graph.tune(encoder, index_dir(self.paths) / "graph")
                    self._tuned = True
        return graph

    def _search_now(self, requests: list[SearchRequest]
                    ) -> list[tuple[np.ndarray, np.ndarray]]:
        """One walk per distinct (filter, text): the trajectories of one target send the
        same first searches, and sessions of different targets share a filter (hidden ids
        are taken out of the rows afterwards)."""
        graph = self.searched_graph()
        vectors = self._embed([r.text for r in requests])
        groups: dict[str, dict[str, list[int]]] = {}
        for i, request in enumerate(requests):
            groups.setdefault(request.where, {}).setdefault(request.text, []).append(i)
        out: list[tuple[np.ndarray, np.ndarray]] = [None] * len(requests)  # type: ignore[list-item]
        for where, by_text in groups.items():
            walked = [members[0] for members in by_text.values()]
            depth = max(requests[i].fetch for members in by_text.values() for i in members)
            found, scores = graph.nearest(vectors[walked], where, depth)
            for row, members in enumerate(by_text.values()):
                for slot in members:
                    out[slot] = (found[row], scores[row])
        return out

    def row_papers(self) -> np.ndarray:
        """The catalog row of each graph row's paper (-1 where the catalog lacks it), made
        once: a search's rows are then judged by array lookups, not one by one."""
        graph, catalog = self.searched_graph(), self.catalog
        with self._lock:
            if self._row_papers is None:
                self._row_papers = np.fromiter(
                    (-1 if (p := catalog.position(i)) is None else p for i in graph.ids),
                    np.int64, len(graph.ids))
            return self._row_papers

    def _embed(self, texts: list[str]) -> np.ndarray:
        """Query vectors, from a bounded cache where the text was searched before (the
        trajectories of one target share its problem setting and challenge)."""
        with self._lock:
            found = {t: self._vectors[t] for t in texts if t in self._vectors}
            for text in found:
                self._vectors.move_to_end(text)
        missing = list(dict.fromkeys(t for t in texts if t not in found))
        if missing:
            fresh = self.query_model().embed(missing)
            with self._lock:
                for text, vector in zip(missing, fresh, strict=True):
                    found[text] = vector
                    self._vectors[text] = vector
                while len(self._vectors) > self.cached_queries:
                    self._vectors.popitem(last=False)
        return np.stack([found[t] for t in texts])

    # -- per-paper reads ---------------------------------------------------------------
    def views(self, arxiv_id: str) -> dict[str, str]:
        rows = (self.index().search().where(f"arxiv_id = {sql_literal(arxiv_id)}")
                .select(["view", "text"])
                .limit(32).to_arrow().to_pylist())
        return {row["view"]: row["text"] for row in sorted(rows, key=lambda r: r["view"])}

    def citations(self) -> pl.DataFrame:
        with self._lock:
            if self._citations is None:
                frame = self.paths.store.read_optional(
                    "citations", ("citing_arxiv_id", "cited_arxiv_id", "cited_position"))
                if frame is None:
                    frame = pl.DataFrame(schema={"citing_arxiv_id": pl.String,
                                                 "cited_arxiv_id": pl.String,
                                                 "cited_position": pl.Int32})
                self._citations = (frame.drop_nulls(["citing_arxiv_id", "cited_arxiv_id"])
                                   .sort("cited_position", nulls_last=True)
                                   .unique(["citing_arxiv_id", "cited_arxiv_id"],
                                           keep="first", maintain_order=True))
            return self._citations

    def document(self, world: World, arxiv_id: str) -> str | None:
        """The full text of the version the world holds (None: no text of it)."""
        key = arxiv_id
        with self._lock:
            cached = self._documents.get(key)
        if cached is None:
            cached = self._read_documents(arxiv_id)
            with self._lock:
                self._documents[key] = cached
                while len(self._documents) > 64:
                    self._documents.popitem(last=False)
        from vault_pipeline.papers.versions import text_before, text_dates

        papers = self.paths.store.scan("papers").filter(pl.col("arxiv_id") == arxiv_id)
        dated = text_dates(cached, papers).filter(text_before(world.as_of))
        if dated.is_empty():
            return None
        return dated.sort("version", nulls_last=False)["text"][-1]

    def _read_documents(self, arxiv_id: str) -> pl.DataFrame:
        scan = self.paths.store.scan_optional("documents")
        empty = pl.DataFrame(schema={"arxiv_id": pl.String, "version": pl.Int32,
                                     "text": pl.String})
        if scan is None:
            return empty
        return (scan.filter((pl.col("arxiv_id") == arxiv_id) & (pl.col("status") == "ok")
                            & pl.col("text").is_not_null())
                .select("arxiv_id", "version", "text").collect())


@dataclass
class Session:
    """One agent's view of the vault: its world, and the log of its calls."""

    toolbox: Toolbox
    world: World
    session_id: str
    calls: list[CallRecord] = field(default_factory=list)
    _seq_lock: threading.Lock = field(default_factory=threading.Lock, repr=False)
    _fields: list[str] | None = field(default=None, repr=False)

    # -- the five tools, as Python functions ------------------------------------------
    def search_prior_art(self, problem_setting: str, challenge: str, k: int = 10) -> dict:
        return self.call("search_prior_art", {"problem_setting": problem_setting,
                                              "challenge": challenge, "k": k})

    def search_mechanisms(self, challenge: str, exclude_fields: list[str] | None = None,
                          k: int = 10) -> dict:
        arguments: dict[str, Any] = {"challenge": challenge, "k": k}
        if exclude_fields is not None:
            arguments["exclude_fields"] = exclude_fields
        return self.call("search_mechanisms", arguments)

    def get_paper(self, id: str) -> dict:
        return self.call("get_paper", {"id": id})

    def read_paper(self, id: str, section: str | None = None, page: int = 1) -> dict:
        arguments: dict[str, Any] = {"id": id, "page": page}
        if section is not None:
            arguments["section"] = section
        return self.call("read_paper", arguments)

    def get_citations(self, id: str, direction: str = "references", k: int = 50) -> dict:
        return self.call("get_citations", {"id": id, "direction": direction, "k": k})

    # -- one entry for every face --------------------------------------------------------
    def call(self, tool: str, arguments: Any) -> dict:
        """Validate, answer and log one call; an error is an answer (``{"error": ...}``) for
        the agent, raised for programs only by `call_or_raise`."""
        return self.call_many([(tool, arguments)])[0]

    def call_or_raise(self, tool: str, arguments: Any) -> dict:
        answer = self.call(tool, arguments)
        if "error" in answer:
            raise ToolError(answer["error"], answer["message"], STATUS.get(answer["error"], 400))
        return answer

    def call_many(self, calls: Sequence[tuple[str, Any]]) -> list[dict]:
        return call_batch([(self, tool, arguments) for tool, arguments in calls])

    # -- answers -------------------------------------------------------------------------
    def _paper_row(self, raw: str) -> dict:
        position = self.world.resolve(raw)
        if position is None:
            raise not_found(raw)
        return self.world.catalog.row(position)

    def _hits(self, found: tuple[np.ndarray, np.ndarray], k: int) -> tuple[dict, list[int]]:
        """The answer of a search: the best row of each of the first ``k`` papers this
        session may see (one array pass, `World.seen`), its texts left for the caller to
        read in one take (`VectorGraph.texts`), with the rows they are at."""
        rows, scores = found
        papers = self.toolbox.row_papers()[np.maximum(rows, 0)]
        keep = (rows >= 0) & (papers >= 0)
        keep[keep] = self.world.seen[papers[keep]]
        rows, scores, papers = rows[keep].tolist(), scores[keep].tolist(), papers[keep].tolist()
        first: dict[int, int] = {}  # each paper's best row (`_hits`: 63 us, 70 with np.unique)
        for j, paper in enumerate(papers):
            if paper not in first:
                first[paper] = j
                if len(first) == k:
                    break
        catalog, views, hits = self.world.catalog, self.toolbox.graph().views, []
        for paper, j in first.items():
            brief = catalog.brief(paper)
            hits.append({"id": brief["arxiv_id"], "title": brief["title"],
                         "published": brief["published"],
                         "primary_category": brief["primary_category"],
                         "score": round(scores[j], 6), "view": views[rows[j]], "text": None})
        return {"results": hits}, [rows[j] for j in first.values()]

    def _search_request(self, args: specs._Args) -> SearchRequest:
        from vault_pipeline.index.search import _field_clause

        where, hidden = self.world.where(hidden=False), self.world.hidden
        if isinstance(args, specs.SearchPriorArt):
            return SearchRequest(f"{args.problem_setting}\n{args.challenge}",
                                 f"{where} AND {in_list('view', PRIOR_ART_VIEWS)}",
                                 args.k * len(PRIOR_ART_VIEWS) + 8, hidden)
        assert isinstance(args, specs.SearchMechanisms)
        fields = args.exclude_fields
        if fields is None:
            fields = self._target_fields()
        clause = f"{where} AND {in_list('view', MECHANISM_VIEWS)}"
        if fields:
            try:
                clause += " AND " + _field_clause(",".join(fields), negate=True)
            except VaultError as exc:
                raise ToolError("bad_arguments", f"search_mechanisms: {exc}") from None
        return SearchRequest(args.challenge, clause, args.k + 8, hidden)

    def _target_fields(self) -> list[str]:
        """The target's categories (read once): the fields a mechanism search leaves out."""
        if self._fields is None:
            papers = self.toolbox.paths.store.scan_optional("papers")
            found = (papers.filter(pl.col("arxiv_id") == self.world.target)
                     .select("categories").collect()
                     if papers is not None and self.world.target is not None else None)
            self._fields = (list(found["categories"].to_list()[0] or [])
                            if found is not None and found.height else [])
        return self._fields

    def _answer(self, args: specs._Args) -> dict:
        if isinstance(args, specs.GetPaper):
            paper = self._paper_row(args.id)
            return {"id": paper["arxiv_id"], "title": paper["title"],
                    "authors": paper["authors"], "abstract": paper["abstract"],
                    "published": paper["published"], "version": paper["version"],
                    "categories": paper["categories"], "doi": paper["doi"],
                    "views": self.toolbox.views(paper["arxiv_id"])}
        if isinstance(args, specs.ReadPaper):
            return self._read(args)
        if isinstance(args, specs.GetCitations):
            return self._citations(args)
        raise AssertionError(type(args))

    def _read(self, args: specs.ReadPaper) -> dict:
        paper = self._paper_row(args.id)
        text = self.toolbox.document(self.world, paper["arxiv_id"])
        if text is None:
            raise ToolError("no_full_text", f"the vault holds no full text of {args.id!r}; "
                                            "get_paper gives its record and views", 404)
        parts = sections(text)
        headings = [heading for heading, _ in parts]
        chosen = text
        if args.section is not None:
            wanted = args.section.strip()
            index = (int(wanted) - 1 if wanted.isdigit() else
                     next((i for i, h in enumerate(headings) if h.lower() == wanted.lower()),
                          None))
            if index is None or not 0 <= index < len(parts):
                raise ToolError("no_section", f"{args.id!r} has no section {args.section!r} "
                                              f"(sections: {len(parts)})", 404)
            chosen = parts[index][1]
        cut = pages(chosen)
        if args.page > len(cut):
            raise ToolError("no_page", f"page {args.page} of {len(cut)}", 404)
        return {"id": paper["arxiv_id"], "section": args.section, "sections": headings,
                "page": args.page, "pages": len(cut), "text": cut[args.page - 1]}

    def _citations(self, args: specs.GetCitations) -> dict:
        paper = self._paper_row(args.id)
        edges = self.toolbox.citations()
        mine, other = (("citing_arxiv_id", "cited_arxiv_id") if args.direction == "references"
                       else ("cited_arxiv_id", "citing_arxiv_id"))
        ids = edges.filter(pl.col(mine) == paper["arxiv_id"])[other].to_list()
        found = []
        for raw in ids:
            position = self.world.resolve(raw)
            if position is None:  # a post-cutoff paper, the target or an unknown work
                continue
            row = self.world.catalog.brief(position)
            found.append({"id": row["arxiv_id"], "title": row["title"],
                          "published": row["published"]})
        return {"id": paper["arxiv_id"], "direction": args.direction,
                "total": len(found), "papers": found[: args.k]}

    def record(self, tool: str, arguments: Any, answer: dict, started: float,
               started_at: datetime) -> None:
        with self._seq_lock:
            seq = len(self.calls)
            self.calls.append(CallRecord(
                self.session_id, seq, tool, wire.dumps(arguments, sort_keys=True),
                wire.dumps(answer, sort_keys=True),
                answer_ids(answer), answer.get("error"), started_at,
                round((time.perf_counter() - started) * 1000, 3), self.world.as_of,
                self.world.target))

    def log_frame(self) -> pl.DataFrame:
        return frame(self.calls)


def answer_ids(answer: dict) -> list[str]:
    """The paper ids an answer showed (what a citation reward may count as seen)."""
    if "results" in answer:
        return [hit["id"] for hit in answer["results"]]
    if "papers" in answer:
        return [answer["id"], *(p["id"] for p in answer["papers"])]
    return [answer["id"]] if "id" in answer and "error" not in answer else []


def call_batch(calls: Sequence[tuple[Session, str, Any]]) -> list[dict]:
    """Answer many calls, of one session or many (an RL step across trajectories): every
    search among them runs in one batch; each call is validated and logged on its own."""
    if len(calls) > MAX_BATCH:
        raise ToolError("batch_too_large", f"a batch holds at most {MAX_BATCH} calls, not "
                                           f"{len(calls)}", 413)
    started, started_at = time.perf_counter(), datetime.now(UTC)
    answers: list[dict | None] = [None] * len(calls)
    parsed: list[specs._Args | None] = [None] * len(calls)
    searches: list[tuple[int, SearchRequest]] = []
    for i, (session, tool, arguments) in enumerate(calls):
        try:
            args = specs.validate(tool, arguments)
            parsed[i] = args
            if isinstance(args, specs.SearchPriorArt | specs.SearchMechanisms):
                searches.append((i, session._search_request(args)))
        except specs.ArgumentError as exc:
            answers[i] = {"error": "bad_arguments", "message": str(exc)}
        except ToolError as exc:
            answers[i] = exc.answer()
    if searches:
        toolbox = calls[searches[0][0]][0].toolbox
        rows = toolbox.search([request for _, request in searches])
        shown: list[dict] = []
        positions: list[int] = []
        for (i, _), found in zip(searches, rows, strict=True):
            answers[i], at = calls[i][0]._hits(found, parsed[i].k)  # type: ignore[union-attr]
            shown.extend(answers[i]["results"])
            positions.extend(at)
        for hit, text in zip(shown, toolbox.graph().texts(positions), strict=True):
            hit["text"] = text
    for i, (session, _, _) in enumerate(calls):
        if answers[i] is None:
            try:
                answers[i] = session._answer(parsed[i])  # type: ignore[arg-type]
            except ToolError as exc:
                answers[i] = exc.answer()
    native = {i for i, _ in searches}  # search answers are made of JSON values (`_hits`)
    out = []
    for i, ((session, tool, arguments), answer) in enumerate(zip(calls, answers, strict=True)):
        assert answer is not None
        if i not in native:
            answer = wire.jsonable(answer)
        session.record(tool, arguments, answer, started, started_at)
        out.append(answer)
    return out


def paper_id(raw: str) -> str | None:
    return canonical_id(raw)
