"""The extractive reader's problem and proposal fields by the sentence-role model's reading of
an abstract: the problem after a paper names only what it studies, the method from the
abstract's method part, and never a sentence of what the paper found."""

from __future__ import annotations

from types import SimpleNamespace

from vault_pipeline.ideas import cues
from vault_pipeline.ideas.extractive import Sentence, _method_roles, decompose
from vault_pipeline.ideas.views import PROBLEM_VIEWS, derive_views
from vault_pipeline.llm.inputs import PaperInput

# arXiv 2505.23720v1 (CC0 metadata, in the bundled sample): the paper first says what it
# studies, then what fails in prior work, then proposes its method.
COBRA = (
    "This paper considers a contextual bandit problem involving multiple agents, where a "
    "learner sequentially observes the contexts and the agent's reported arms, and then "
    "selects the arm that maximizes the system's overall reward. Existing work in contextual "
    "bandits assumes that agents truthfully report their arms, which is unrealistic in many "
    "real-life applications. For instance, consider an online platform with multiple sellers; "
    "some sellers may misrepresent product quality to gain an advantage, such as having the "
    "platform preferentially recommend their products to online users. To address this "
    "challenge, we propose an algorithm, COBRA, for contextual bandit problems involving "
    "strategic agents that disincentivize their strategic behavior without using any monetary "
    "incentives, while having incentive compatibility and a sub-linear regret guarantee. Our "
    "experimental results also validate the different performance aspects of our proposed "
    "algorithm.")
# arXiv 2507.13142v1 (CC0 metadata, in the bundled sample): no sentence may be copied as
# "we present ..." (the role model reads it as a result); the one after it says what the
# method does, and the two after that what it achieves.
ROOTS = (
    'Modern language models address complex questions through chain-of-thought (CoT) '
    'reasoning (Wei et al., 2023) and retrieval augmentation (Lewis et al., 2021), yet '
    'struggle with error propagation and knowledge integration. Tree-structured reasoning '
    'methods, particularly the Probabilistic Tree-of-Thought (ProbTree)(Cao et al., 2023) '
    'framework, mitigate these issues by decomposing questions into hierarchical '
    'structures and selecting answers through confidence-weighted aggregation of '
    "parametric and retrieved knowledge (Yao et al., 2023). However, ProbTree's static "
    'implementation introduces two key limitations: (1) the reasoning tree is fixed during'
    ' the initial construction phase, preventing dynamic adaptation to intermediate '
    'results, and (2) each node requires exhaustive evaluation of all possible solution '
    'strategies, creating computational inefficiency. We present a dynamic reinforcement '
    'learning (Sutton and Barto, 2018) framework that transforms tree-based reasoning into'
    ' an adaptive process. Our approach incrementally constructs the reasoning tree based '
    'on real-time confidence estimates, while learning optimal policies for action '
    "selection (decomposition, retrieval, or aggregation). This maintains ProbTree's "
    'probabilistic rigor while improving both solution quality and computational '
    'efficiency through selective expansion and focused resource allocation. The work '
    'establishes a new paradigm for treestructured reasoning that balances the reliability'
    ' of probabilistic frameworks with the flexibility required for real-world question '
    'answering systems.')


def _views(arxiv_id: str, title: str, abstract: str) -> dict[str, str | None]:
    paper = PaperInput(arxiv_id, title, abstract, None, None, "abstract_only",
                       "no documents row", ("cs.LG",))
    record, _ = decompose(paper)
    return derive_views(record)


def test_the_problem_stated_after_what_the_paper_studies_and_before_its_solution() -> None:
    views = _views("2505.23720", "COBRA: Contextual Bandit Algorithm for Ensuring Truthful "
                   "Strategic Agents", COBRA)
    assert all(views[name] for name in ("problem_setting", "challenge", "proposal"))
    assert "Existing work in contextual bandits assumes" in views["challenge"]
    for name in PROBLEM_VIEWS:
        assert "we propose" not in views[name] and "COBRA" not in views[name]
    assert "we propose an algorithm, COBRA" in views["proposal"]
    assert not any("experimental results" in v for v in views.values() if v)


def test_the_method_part_of_an_abstract_is_the_proposal_and_its_outcomes_never() -> None:
    views = _views("2507.13142", "From Roots to Rewards: Dynamic Tree Reasoning with RL", ROOTS)
    assert "Our approach incrementally constructs the reasoning tree" in views["proposal"]
    text = "\n".join(v for v in views.values() if v)
    assert "while improving both solution quality" not in text
    assert "establishes a new paradigm" not in text


def _sentence(text: str, role: str = "method", safe: bool = True, leaky: bool = False,
              before_method: bool = False) -> Sentence:
    return Sentence(text, "abstract", "Abstract", 0, safe, leaky, not safe,
                    before_method, role=role)


def test_the_method_part_ends_at_the_first_sentence_that_reports_anything() -> None:
    doc = SimpleNamespace(sentences=[
        _sentence("Surveys of this setting are fragmented across fields.", "background",
                  before_method=True),
        _sentence("This study builds a registry of the deployed systems."),
        # a solution statement held back only by where it stands does not end the part
        _sentence("We propose a shared schema for the registry entries.", safe=False),
        _sentence("The registry links every system to its operator."),
        _sentence("Most entries were incomplete."),  # a report: the part ends here
        _sentence("The registry covers the largest operators."),  # read as method: too late
    ])
    assert _method_roles(doc) == ["This study builds a registry of the deployed systems.",
                                  "The registry links every system to its operator."]
    # a judge-flagged sentence ends the part, whatever it says
    doc.sentences[2] = _sentence("We propose a schema that is more complete.", safe=False,
                                 leaky=True)
    assert _method_roles(doc) == ["This study builds a registry of the deployed systems."]


def test_the_contribution_cue_reads_what_a_study_examines_and_what_it_is_for() -> None:
    assert cues.CONTRIBUTION.search("This study examines the potential of KANs for intrusion "
                                    "detection.")
    assert cues.CONTRIBUTION.search("Our work examines the benefits of continuous tokens.")
    assert cues.CONTRIBUTION.search("The purpose of this paper is to demonstrate the "
                                    "applicability of ICA.")
    assert not cues.CONTRIBUTION.search("Existing studies examine only in-distribution data.")


# Written for this test: an abstract-only paper whose method is told in plain sentences
# after its contribution statement, then a procedure in the past tense, then its set-up.
ATTEND = [
    "Automatically describing an image in words connects vision and language.",
    "Existing captioning models either start from a gist of the image or from detected "
    "words, and rarely combine the two.",
    "In this paper, we propose a captioning algorithm that combines both through semantic "
    "attention.",
    "Our algorithm learns to attend to semantic concept proposals and fuses them into the "
    "hidden states of a recurrent network.",
    "The selection and the fusion form a feedback loop between the two directions.",
    "Concept proposals were collected from a detector trained on a separate corpus.",
    "We evaluate the algorithm on two public benchmarks against strong baselines.",
]


def test_an_abstract_only_paper_keeps_its_method_sentences_not_its_procedure() -> None:
    paper = PaperInput("2401.00004", "Semantic attention for captions", " ".join(ATTEND),
                       None, None, "abstract_only", None)
    record, _ = decompose(paper)
    flow = record["method"]["flow"] or ""
    assert ATTEND[2] in flow and ATTEND[3] in flow, flow
    assert ATTEND[5] not in flow and ATTEND[6] not in flow, flow


class _FixedJudge:
    """A judge that scores every sentence alike, between its strict bar and its own."""

    threshold, strict_threshold = 0.6, 0.4

    def scores(self, sentences):
        return [0.5] * len(sentences)

    def flags(self, sentences, strict=False):
        return [(self.strict_threshold if strict else self.threshold) <= 0.5] * len(sentences)


def test_the_judges_strict_bar_holds_past_the_opening_setting(monkeypatch) -> None:
    """The opening run of sentences read as background or objective, outside the outcome
    block, takes the judge's own bar; every sentence after it the strict one, even one read
    as background (a result may read so after the method)."""
    from vault_pipeline.ideas import extractive

    read = ["background", "objective", "method", "background", "method"]
    monkeypatch.setattr(extractive.classifier, "load", lambda: _FixedJudge())
    monkeypatch.setattr(extractive.roles, "read_block",
                        lambda block, method=None: ([False] * len(block), read[:len(block)]))
    paper = PaperInput("2401.00004", "Semantic attention for captions",
                       " ".join([ATTEND[0], ATTEND[2], ATTEND[3], ATTEND[1], ATTEND[4]]),
                       None, None, "abstract_only", None)
    leaky = [s.leaky for s in extractive._Doc(paper).sentences]
    assert leaky == [False, False, True, True, True], leaky


def test_what_a_study_did_is_never_its_problem() -> None:
    """A procedure told in the past tense ("Blood serum was separated ...") is what the study
    did: never a problem field, wherever it stands."""
    abstract = [
        "Low-dose radiation from cardiac imaging may damage the DNA of blood cells.",
        "To determine the biological effects of this radiation, we measured the activation "
        "of DNA damage response pathways.",
        "Blood serum was separated and subjected to nuclear magnetic resonance spectroscopy.",
        "Blood samples were collected from patients before and after imaging.",
        "Imaging raised the expression of DNA damage response genes in most patients.",
    ]
    paper = PaperInput("2401.00005", "Imaging and DNA damage", " ".join(abstract), None, None,
                       "abstract_only", None)
    record, _ = decompose(paper)
    problem = str([record["core_problem"], record["problem_definition"]])
    assert "serum was separated" not in problem and "were collected" not in problem, problem
    assert "may damage the DNA" in problem


def test_the_abstracts_method_part_ends_where_it_turns_to_outcomes(monkeypatch) -> None:
    """A sentence read as the method after one read as a result is not the method part: a
    structured abstract's results often describe what was done."""
    from vault_pipeline.ideas import extractive

    read = ["background", "background", "objective", "method", "result", "method"]
    monkeypatch.setattr(extractive.roles, "read_block",
                        lambda block, method=None: ([False] * len(block), read[:len(block)]))
    late = "The fusion module is trained jointly with the caption decoder."
    paper = PaperInput("2401.00004", "Semantic attention for captions",
                       " ".join([*ATTEND[:4], "Human raters prefer its captions.", late]),
                       None, None, "abstract_only", None)
    flow = extractive.decompose(paper)[0]["method"]["flow"] or ""
    assert ATTEND[3] in flow and late not in flow, flow


def test_an_abstracts_evaluation_set_up_is_never_copied() -> None:
    """"The spotter is evaluated on ..." opens an abstract's results (as CSAbstruct's
    annotators read one): never copied, even where the role model reads it as a method."""
    abstract = [
        "Keyword spotting must run on devices with little memory.",
        "Existing spotting networks need millions of multiplications per second.",
        "We propose TinySpot, a keyword spotter built from depthwise separable layers.",
        "The spotter is evaluated on a microcontroller board with a speech corpus.",
        "Its memory footprint fits the smallest boards.",
    ]
    paper = PaperInput("2401.00006", "TinySpot: small keyword spotting", " ".join(abstract),
                       None, None, "abstract_only", None)
    record, _ = decompose(paper)
    assert "is evaluated on" not in str(record), record["proposed_evaluation"]
    assert "We propose TinySpot" in (record["method"]["flow"] or "")


def test_the_setting_reads_up_to_three_opening_sentences() -> None:
    """An abstract-only paper's setting is its opening problem sentences, up to three."""
    abstract = [
        "Warehouses route hundreds of robots through narrow aisles every hour.",
        "Each robot must reach its shelf without blocking the others.",
        "Traffic rules written by hand break down when the layout changes.",
        "Operators then redesign the rules for every new warehouse.",
        "We propose FlowRoute, a planner that learns traffic rules from simulated layouts.",
    ]
    paper = PaperInput("2401.00007", "FlowRoute: learned warehouse traffic rules",
                       " ".join(abstract), None, None, "abstract_only", None)
    setting = decompose(paper)[0]["problem_definition"]["setting"] or ""
    assert all(s in setting for s in abstract[:3]), setting
    assert abstract[3] not in setting and "FlowRoute" not in setting
