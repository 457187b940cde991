"""Synthetic arXiv papers for the benchmarks: deterministic by seed, shaped like the real
metadata (sizes, line-wrapped titles and abstracts, old-style ids, several versions, nulls
where arXiv has them), so parsers do the same work per record as on real data.

Hand-written because no library generates arXiv-shaped metadata; ``faker`` would add a
dependency for names alone and still know nothing of ids, versions or wrapping."""

from __future__ import annotations

import random
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

_WORD_TEXT = (
    "we study the a of and in to for with on by from is are this that which model models "
    "method methods approach results show propose present new novel based using data "
    "learning neural network networks deep training performance analysis theory quantum "
    "field fields energy system systems problem problems algorithm algorithms optimal bound "
    "bounds space spaces function functions graph graphs random matrix matrices linear "
    "nonlinear equation equations solution solutions dynamics dimensional large small scale "
    "high low order phase transition temperature magnetic spin state states ground excited "
    "galaxy galaxies star stars stellar mass black hole holes gravitational wave waves dark "
    "matter cosmological observations survey sample samples measurement measurements "
    "estimate estimates estimator robust efficient convergence rate rates stochastic "
    "gradient descent inference bayesian posterior prior distribution distributions "
    "language transformer attention representation representations embedding benchmark "
    "benchmarks dataset datasets experiments experimental numerical simulations simulation "
    "framework general particular class classes property properties structure structures "
    "invariant invariants manifold manifolds group groups algebra algebras operator "
    "operators spectrum spectral symmetry symmetries lattice gauge string strings boundary "
    "conditions condition limit limits regime regimes effect effects coupling constant "
    "finite infinite exact approximate approximation perturbation perturbative "
    "nonperturbative scattering amplitude amplitudes cross section sections decay decays "
    "detector collider hadron quark gluon photon electron neutrino proton fermion boson "
    "entanglement qubit qubits circuit circuits channel channels noise error errors "
    "correction protocol protocols security privacy federated reinforcement policy agent "
    "agents reward control robot robotic planning vision image images video segmentation "
    "detection classification regression prediction forecasting time series temporal "
    "spatial local global sparse dense kernel kernels convex nonconvex loss losses "
    "generalization overparameterized diffusion generative adversarial variational "
    "autoencoder latent sampling monte carlo markov chain chains ergodic entropy "
    "information channel capacity coding codes decoding polynomial polynomials prime primes "
    "conjecture theorem lemma proof proofs prove proves moreover furthermore however "
    "finally also here our these those such as well both between under over within without"
)
WORDS = tuple(_WORD_TEXT.split())
LATEX = ("$\\alpha$", "$O(n \\log n)$", "$\\mathbb{R}^d$", "$\\sqrt{s}=13$ TeV",
         "$T_c$", "$\\epsilon$-net", "$SU(N)$", "$L^2$", "$k$-means", "$z \\sim 2$")
FIRST = ("Anna", "Pavel", "Louis", "Ileana", "Wei", "Hiroshi", "Maria", "John", "Ahmed",
         "Sofia", "Lukas", "Chen", "Priya", "Olga", "Mohit", "Arnaud", "Helge", "Ewa",
         "Carlos", "Yuki", "Fatima", "David", "Elena", "Tomas", "Ingrid", "Rahul")
INITIALS = ("C.", "E. L.", "P. M.", "C.-P.", "A.", "J.-P.", "S. K.", "M.", "R.", "T.")
LAST = ("Nadolsky", "Berger", "Streinu", "Theran", "Zhang", "Wang", "Tanaka", "Garcia",
        "Smith", "Kumar", "Ivanova", "Mueller", "Rossi", "Nowak", "Silva", "Kim", "Chen",
        "Ahuja", "Gotlieb", "Spieker", "Haddad", "Okafor", "Larsen", "Dubois", "Yuan", "Lee")
# (LaTeX form used in the `authors` string, Unicode form used in `authors_parsed`)
ACCENTED = (("Bal\\'azs", "Balázs"), ("M\\\"uller", "Müller"), ("Garc\\'ia", "García"),
            ("Dvo\\v{r}\\'ak", "Dvořák"), ("Sch\\\"on", "Schön"), ("Jos\\'e", "José"))
SUFFIXES = ("Jr", "III")
ARCHIVES = ("hep-th", "hep-ph", "hep-ex", "hep-lat", "astro-ph", "cond-mat", "gr-qc",
            "quant-ph", "math", "nucl-th", "math-ph", "nlin", "physics", "cs", "q-alg",
            "alg-geom", "chao-dyn", "solv-int")
OLD_CATEGORY = {"math": ("math.AG", "math.GT", "math.PR", "math.CO"),
                "cs": ("cs.LG", "cs.DS", "cs.CC"), "physics": ("physics.optics",
                "physics.comp-ph"), "nlin": ("nlin.SI", "nlin.CD"),
                "cond-mat": ("cond-mat.str-el", "cond-mat.stat-mech", "cond-mat.mes-hall")}
NEW_CATEGORIES = ("cs.LG", "cs.CV", "cs.CL", "cs.AI", "stat.ML", "math.OC", "math.PR",
                  "math.AP", "hep-th", "hep-ph", "quant-ph", "astro-ph.GA", "astro-ph.CO",
                  "cond-mat.mtrl-sci", "cond-mat.str-el", "physics.optics", "eess.SP",
                  "q-bio.NC", "econ.EM", "gr-qc", "math.CO", "cs.SE", "cs.RO", "nlin.SI")
LICENSES = ("http://arxiv.org/licenses/nonexclusive-distrib/1.0/",
            "http://creativecommons.org/licenses/by/4.0/",
            "http://creativecommons.org/licenses/by-nc-sa/4.0/",
            "http://creativecommons.org/publicdomain/zero/1.0/")
JOURNALS = ("Phys.Rev.D76:013009,2007", "JHEP 0903:041,2009", "Astrophys.J. 712 (2010) 1",
            "Lett. Math. Phys. 108 (2018), no. 2, 359-376", "Nature 567 (2019) 491-495")
COMMENTS = ("{p} pages, {f} figures", "{p} pages, {f} figures; published version",
            "{p} pages, LaTeX, no figures", "Accepted at NeurIPS; {p} pages",
            "{p} pages, {f} figures, revised and abridged, in this version the typos were "
            "fixed (including some that crept into the published version too)")
OLD_STYLE_MONTHS = [f"{y % 100:02d}{m:02d}" for y in range(1991, 2008) for m in range(1, 13)
                    if (1991, 8) <= (y, m) <= (2007, 3)]
NEW_STYLE_MONTHS = [f"{y % 100:02d}{m:02d}" for y in range(2007, 2025) for m in range(1, 13)
                    if (y, m) >= (2007, 4)]
DAYS = ("Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun")
MONTHS = ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec")


@dataclass(frozen=True)
class Author:
    keyname: str  # LaTeX form, as in the snapshot's `authors` string
    keyname_unicode: str  # as in `authors_parsed`
    forenames: str
    suffix: str = ""

    @property
    def display(self) -> str:
        return " ".join(p for p in (self.forenames, self.keyname, self.suffix) if p)

    @property
    def display_unicode(self) -> str:
        return " ".join(p for p in (self.forenames, self.keyname_unicode, self.suffix) if p)


@dataclass(frozen=True)
class Paper:
    """One paper with every field any arXiv format carries; renderers pick what they need."""

    id: str
    submitter: str | None
    authors: tuple[Author, ...]
    title: str  # wrapped with "\n  " as in the snapshot
    abstract: str  # "  " indent, wrapped at ~80 columns, trailing newline, as in the snapshot
    comments: str | None
    journal_ref: str | None
    doi: str | None
    report_no: str | None
    categories: tuple[str, ...]
    license: str | None
    versions: tuple[datetime, ...]
    update_date: str


def rfc2822(moment: datetime) -> str:
    """``Mon, 2 Apr 2007 19:18:42 GMT``: arXiv's form (day not zero-padded)."""
    return (f"{DAYS[moment.weekday()]}, {moment.day} {MONTHS[moment.month - 1]} "
            f"{moment.year} {moment:%H:%M:%S} GMT")


def wrap(words: list[str], width: int, joiner: str) -> str:
    """Greedy line wrap (much faster than textwrap for millions of short texts)."""
    lines, line, size = [], [], 0
    for word in words:
        if line and size + 1 + len(word) > width:
            lines.append(" ".join(line))
            line, size = [], 0
        size += len(word) + (1 if line else 0)
        line.append(word)
    if line:
        lines.append(" ".join(line))
    return joiner.join(lines)


class PaperFactory:
    """Deterministic stream of distinct papers; ``old_style_share`` of ids are pre-2007."""

    def __init__(self, seed: int = 0, old_style_share: float = 0.13):
        self.rng = random.Random(seed)
        self.old_style_share = old_style_share
        self._used: dict[str, int] = {}

    def _next_number(self, bucket: str, capacity: int) -> int | None:
        number = self._used.get(bucket, 0) + 1
        if number > capacity:
            return None
        self._used[bucket] = number
        return number

    def _identifier(self) -> tuple[str, datetime, tuple[str, ...]]:
        rng = self.rng
        for _ in range(1000):
            if rng.random() < self.old_style_share:
                archive = rng.choice(ARCHIVES)
                month = rng.choice(OLD_STYLE_MONTHS)
                number = self._next_number(f"{archive}/{month}", 999)
                if number is None:
                    continue
                primary = rng.choice(OLD_CATEGORY.get(archive, (archive,)))
                categories = (primary, *rng.sample(NEW_CATEGORIES, rng.choice((0, 0, 1))))
                return f"{archive}/{month}{number:03d}", self._month_start(month), categories
            month = rng.choice(NEW_STYLE_MONTHS)
            five = month >= "1501"
            number = self._next_number(month, 99_999 if five else 9_999)
            if number is None:
                continue
            extra = rng.choice((0, 0, 1, 1, 2, 3))
            categories = tuple(dict.fromkeys(rng.sample(NEW_CATEGORIES, 1 + extra)))
            ident = f"{month}.{number:05d}" if five else f"{month}.{number:04d}"
            return ident, self._month_start(month), categories
        raise RuntimeError("ran out of distinct arXiv ids; ask for fewer records")

    @staticmethod
    def _month_start(yymm: str) -> datetime:
        yy, mm = int(yymm[:2]), int(yymm[2:])
        return datetime(1900 + yy if yy >= 91 else 2000 + yy, mm, 1, tzinfo=UTC)

    def _author(self) -> Author:
        rng = self.rng
        if rng.random() < 0.08:
            latex, uni = rng.choice(ACCENTED)
        else:
            latex = uni = rng.choice(LAST)
        forenames = rng.choice(FIRST) if rng.random() < 0.6 else rng.choice(INITIALS)
        suffix = rng.choice(SUFFIXES) if rng.random() < 0.01 else ""
        return Author(latex, uni, forenames, suffix)

    def _text(self, low: int, high: int) -> list[str]:
        rng = self.rng
        words = rng.choices(WORDS, k=rng.randint(low, high))
        for _ in range(rng.choice((0, 0, 1, 2))):
            words[rng.randrange(len(words))] = rng.choice(LATEX)
        words[0] = words[0].capitalize()
        return words

    def paper(self) -> Paper:
        rng = self.rng
        ident, start, categories = self._identifier()
        n_authors = (rng.randint(30, 300) if rng.random() < 0.005
                     else min(1 + int(rng.expovariate(0.45)), 25))
        authors = tuple(self._author() for _ in range(n_authors))
        title_words = self._text(4, 13)
        abstract_words = self._text(100, 170)
        abstract_words[-1] += "."
        first = start + timedelta(days=rng.randrange(28), seconds=rng.randrange(86_400))
        n_versions = rng.choices((1, 2, 3, 4, 5, 7), weights=(60, 25, 9, 4, 1.5, 0.5))[0]
        versions = [first]
        for _ in range(n_versions - 1):
            versions.append(versions[-1] + timedelta(days=rng.randint(1, 400),
                                                     seconds=rng.randrange(86_400)))
        update = versions[-1] + timedelta(days=rng.choice((0, 0, 3, 40, 900)))
        pages, figures = rng.randint(4, 60), rng.randint(0, 20)
        return Paper(
            id=ident,
            submitter=authors[0].display_unicode if rng.random() < 0.995 else None,
            authors=authors,
            title=wrap(title_words, 70, "\n  "),
            abstract="  " + wrap(abstract_words, 78, "\n") + "\n",
            comments=(rng.choice(COMMENTS).format(p=pages, f=figures)
                      if rng.random() < 0.75 else None),
            journal_ref=rng.choice(JOURNALS) if rng.random() < 0.35 else None,
            doi=(f"10.{rng.randint(1000, 9999)}/{rng.choice(('PhysRevD', 'JHEP', 's11005'))}"
                 f".{rng.randint(1, 999)}.{rng.randint(1, 99999)}"
                 if rng.random() < 0.45 else None),
            report_no=f"ANL-HEP-PR-{rng.randint(1, 99):02d}-{rng.randint(1, 99)}"
            if rng.random() < 0.08 else None,
            categories=categories,
            license=rng.choice(LICENSES) if ident[0].isdigit() and rng.random() < 0.8 else None,
            versions=tuple(versions),
            update_date=f"{update:%Y-%m-%d}",
        )

    def papers(self, count: int) -> Iterator[Paper]:
        for _ in range(count):
            yield self.paper()


def author_string(authors: tuple[Author, ...]) -> str:
    """``A, B, C and D`` as the snapshot and arXivRaw write it (LaTeX accents kept)."""
    names = [a.display for a in authors]
    if len(names) <= 1:
        return "".join(names)
    return ", ".join(names[:-1]) + " and " + names[-1]
