"""The leak checker: finds measured results (metric values, baseline comparisons, deltas,
headline claims, numeric table rows) in text that must only say what authors set out to test.

Deterministic rules, no model: every record and view goes through it, its findings are
stored, and the final tables must have none. It is written by hand because no library
detects "a result was stated" as opposed to "a number was mentioned": a learning rate, a
dataset size, a year or a planned threshold are not leaks, "outperforms X by 3 points" is.

How a sentence is judged:
1. Numbers that are not outcomes are blanked first: years, citation markers, references to
   sections/figures/tables, names with digits (GPT-4, CIFAR-10, 7B), hyperparameters and
   set-up sizes ("learning rate of 3e-4", "100 epochs", "5 seeds", "set to 10").
2. Rules look for outcome shapes in what is left: a number next to a metric, a delta ("by
   12%", "from 38.2 to 41.5", "3x faster"), a comparison ("outperforms", "beats"), a
   state-of-the-art or "achieves" claim, an empirical finding ("experiments show"), an
   uncertainty (±), a p-value, a count of successes ("solves 62 of 100"), a numeric table row.
3. A sentence in planning voice (will, should, expect, hypothesise, if, whether, refuted)
   is a plan or a prediction, not a result, unless it also says what was found (past-tense
   outcome verbs); only table rows and ± values count there regardless.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

import blingfire

RULESET_VERSION = "leaks/4"

_F = re.IGNORECASE

# -- numbers ------------------------------------------------------------------------------
NUM = r"(?<![\w.])[-+−]?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?(?:\s?[eE][-−]?\d+)?"
_NUM_RE = re.compile(NUM)

# -- spans blanked before the rules run (not outcomes) ------------------------------------
# Settings named before or after their value ("learning rate of 3e-4", "12 layers").
PARAM_WORDS = (
    r"learning[- ]rates?|lr|batch(?:[- ]sizes?)?|weight[- ]decay|dropout(?: rate)?|warm-?up"
    r"|momentum|temperatures?|top-?[pk]|beam(?: size| width)?|seeds?|epochs?"
    r"|layers?|heads?|hidden(?: size| dim\w*| units)?|dimensions?|dims?|rank"
    r"|window(?: size)?|stride|kernel(?: size)?|embedding(?: size| dim\w*)?|context(?: length"
    r"| window)?|sequence length|max(?:imum)? length|lambda|alpha|beta|gamma|epsilon|eps|tau"
    r"|margin|threshold|clipping|resolution"
)
# Set-up sizes, named after the number ("5 seeds", "20 services", "3 hospitals").
COUNT_WORDS = (
    rf"{PARAM_WORDS}|steps?|iterations?|updates?|tokens?|gpus?|tpus?|nodes?|parameters?"
    r"|params|neurons?|units|channels|filters|experts?|neighbou?rs|runs?|trials?|samples?"
    r"|examples?|images?|documents?|sentences?|classes|categories|datasets?|tasks?"
    r"|benchmarks?|languages?|domains?|environments?|games|participants|subjects|annotators"
    r"|hospitals|sites|queries|questions|dialogues|episodes|rollouts|generations|prompts"
    r"|shots?|minutes|hours|days|weeks|months|years|seconds|pages|words|characters|frames"
    r"|pixels|px|cores|services|tools|studies|papers|articles|users|apps|programs|projects"
    r"|repositories|files|cases|test cases|levels|stages|types|kinds|families|variants"
    r"|settings|configurations|models|baselines|methods|agents|robots|sensors|processors"
)
_NOT_COMPARATIVE = r"(?!(?:fewer|less|more|faster|slower|higher|lower|smaller|larger)\b)"
HYPER_NEAR = re.compile(
    rf"(?:\b(?:{PARAM_WORDS})\b(?:\s+(?:of|is|was|=|to|at|as|set to|fixed to|equal to|"
    rf"between|from|and|with|in|by|:)){{0,3}}\s*\(?{NUM}(?:\s*(?:and|to|-|–)\s*{NUM})?)"
    rf"|(?:{NUM}(?:\s*[-–]\s*{NUM})?\s*[-\s]?(?:{_NOT_COMPARATIVE}[A-Za-z]+[-\s]){{0,2}}?"
    rf"(?:{COUNT_WORDS})\b)",
    _F,
)
_ASSIGN = re.compile(
    rf"\b(?:set|fixed|chosen|initiali[sz]ed|clipped|capped|limited|truncated|padded|resized)"
    rf"\s+(?:to|at|as)\s+{NUM}"
    rf"|\b(?!(?:f1|em|bleu|acc|auc|map|wer|cer|psnr|ssim|fid|iou)\b)[a-zA-Zα-ωΑ-Ω_]\w{{0,3}}"
    rf"\s*(?:=|≤|≥|<|>)\s*{NUM}(?!\s*%)",
    _F,
)
# Names with digits (GPT-4, CIFAR-10, ResNet-50, L2, A100), except metric names (F1, top-1).
_IDENTIFIER = re.compile(r"\b[A-Za-z][\w]*[-_/]\d[\w.\-/]*|\b[A-Za-z]+\d[\w.\-]*")
_METRIC_NAME = re.compile(r"(?:macro-|micro-)?(?:f1|top-[15]|rouge-\w+|(?:pass|map|recall|hits"
                          r"|ndcg|precision)@\d+)", re.IGNORECASE)
_NOT_OUTCOME: list[re.Pattern[str]] = [
    re.compile(r"(?<![\d.])(?:19|20)\d\d(?![\d.%])"),  # years
    re.compile(r"\[\s*\d+(?:\s*[,–-]\s*\d+)*\s*\]"),  # numeric citations
    re.compile(r"\b(?:sections?|sec\.|figures?|fig\.|tables?|tab\.|eqs?\.|equations?"
               r"|theorems?|lemmas?|propositions?|corollar(?:y|ies)|definitions?|algorithms?"
               r"|appendix|chapters?|steps?|stages?|phases?|lines?|rows?|columns?|cases?"
               r"|assumptions?|conditions?|claims?|remarks?|examples?|versions?|v)"
               r"\s*\(?[\dIVX]+(?:\.\d+)*\)?", _F),
    re.compile(r"(?<![\w.])\(\d{1,2}[a-z]?\)(?![\d.])"),  # equation labels, list items
    _IDENTIFIER,
    re.compile(r"(?<![\w.])\d+(?:\.\d+)?(?![x×]\b)[A-Za-wyzα-ω]+\w*", _F),  # 7B, 3D, 1st
    re.compile(r"(?<![\d.])\d+\s*[x×]\s*\d+\b(?!\^)"),  # 3x3 kernels, 32x32 images
    re.compile(r"\b\d+[- ]fold cross[- ]validation", re.IGNORECASE),
    re.compile(r"\b\d+\^\d+"),  # 32^4 lattice
    re.compile(r"\bO\([^)]*\)"),  # big-O
    _ASSIGN,
    HYPER_NEAR,
]

# -- outcome vocabulary ------------------------------------------------------------------
_METRIC = (
    r"accura\w*|acc\b|f1|f-?scores?|f-?measure|precision|recall|bleu|rouge(?:-\w+)?|meteor"
    r"|cider|chrf|perplexit\w*|ppl|auc|auroc|auprc|roc|m?ap\b|ndcg|mrr|hits@\d+|recall@\d+"
    r"|exact match|\bem\b|wer|cer|word error|error(?: rate)?s?|errors?|top-[15]|pass@\d+"
    r"|win[- ]rates?|success(?: rate)?s?|scores?|rewards?|returns?|latency|throughput"
    r"|speed-?ups?|fid|inception score|psnr|ssim|m?iou|dice|rmse|mse|mae|correlation"
    r"|spearman|pearson|kappa|elo|rating|cross[- ]sections?|branching ratios?|significance"
    r"|confidence level|efficiency|fidelity|gains?|improvements?|reductions?|increases?"
    r"|decreases?|drops?|points?|pp|percentage points?|db|preferred|preference"
)
_METRIC_RE = rf"(?:\b(?:{_METRIC}))"
_PCT = rf"{NUM}\s?%"
_UNIT = (
    r"km/s|m/s|cm/s|km|cm|mm|nm|μm|um|pc|kpc|mpc|au|k|mk|ev|kev|mev|gev|tev|hz|khz|mhz|ghz"
    r"|thz|db|dbm|s|ms|ns|ps|fs|rad|mrad|microrad|deg|arcsec|arcmin|k|kelvin|t|gauss|pa|kpa"
    r"|gpa|j|kj|w|kw|mw|v|mv|a|ma|ohm|fm\^?2|pb|fb|nb|mb|sigma|σ|kg|g|mg|l|ml|mol|m"
)
_OUTCOME_VERB = (
    r"achiev\w*|attain\w*|obtain\w*|reach\w*|yield\w*|record\w*|scor\w*|deliver\w*"
    r"|find|finds|found|measur\w*|observ\w*|estimat\w*|determin\w*|report\w*|retain\w*"
    r"|preserv\w*|recover\w*|solv\w*|identif\w*|detect\w*|ranks?|ranked|wins?|won"
)
_CHANGE_VERB = (
    r"improv\w*|increas\w*|decreas\w*|reduc\w*|rais\w*|boost\w*|cuts?|cutting|drops?"
    r"|dropp\w*|falls?|fell|rises?|rose|lowers?|lowered|gain\w*|lift\w*|shrinks?|grows?"
    r"|speeds? up|accelerat\w*|halv\w*|doubl\w*|tripl\w*|sav\w*"
)

_RULES: list[tuple[str, re.Pattern[str]]] = [
    ("uncertainty", re.compile(rf"{NUM}\s*(?:±|\+/-|\+-|\\pm)\s*{NUM}"
                               rf"|\d\.\d+\(\d{{1,3}}\)", _F)),
    ("p_value", re.compile(r"\bp\s*(?:<|≤|=|<=)\s*0?\.\d+|statistically significant", _F)),
    ("metric_value", re.compile(
        rf"{_METRIC_RE}(?:\W+\w+){{0,5}}?\W+(?:{_PCT}|{NUM})"
        rf"|(?:{_PCT}|{NUM})(?:\W+\w+){{0,3}}?\W+{_METRIC_RE}", _F)),
    ("delta", re.compile(
        rf"\bby\s+(?:about\s+|roughly\s+|nearly\s+|over\s+|up to\s+|more than\s+|almost\s+)?"
        rf"(?:{_PCT}|{NUM}\s*(?:points?|pp|percentage points?|db|bleu|f1|x|×|times|fold)"
        rf"|a factor of\s+\w+|an order of magnitude|orders of magnitude)"
        rf"|(?:{_CHANGE_VERB})\s+(?:\w+\s+){{0,5}}?by\s+(?:half|a third|two|three|several"
        rf"|\w+-fold)"
        rf"|\b(?:one|two|three|\w+) orders? (?:of magnitude )?(?:decrease|increase|improvement"
        rf"|reduction|speed-?up|larger|smaller|higher|lower|faster|slower|better|worse)"
        rf"|\bfrom\s+{NUM}\s*%?\s+to\s+{NUM}\s*%?"
        rf"|(?<![\w.])\d+(?:\.\d+)?\s?[x×]\s+(?:faster|slower|fewer|less|more|smaller|larger"
        rf"|higher|lower|speed-?ups?|reduction|improvement|cheaper|better)"
        rf"|\b(?:\d+(?:\.\d+)?|two|three|four|five|ten|\w+ orders? of magnitude)[- ]fold\b"
        rf"|(?:{_PCT})\s+(?:\w+\s+){{0,2}}(?:faster|slower|fewer|less|more|smaller|larger"
        rf"|higher|lower|better|worse|cheaper|reduction|improvement|increase|decrease|gain"
        rf"|drop|of (?:the )?(?:[\w'’]+\s+){{0,2}}(?:performance|accuracy|quality|cases"
        rf"|comparisons|instances|queries|trials|problems))"
        rf"|(?:{_CHANGE_VERB})\s+(?:\w+\s+){{0,5}}?(?:to|by|within)\s+(?:{_PCT}|{NUM})", _F)),
    ("outcome_value", re.compile(
        rf"(?<!\bto )\b(?:{_OUTCOME_VERB}|succeed\w*)\s+(?:\S+\s+){{0,6}}?(?:{_PCT}|{NUM})", _F)),
    ("measured_quantity", re.compile(
        rf"(?:\babout|\bapproximately|\baround|\broughly|\bnearly|\bnear|~|≈)\s*~?\s*{NUM}"
        rf"(?:\s*[-–]\s*{NUM})?\s*(?:{_UNIT})(?![\w])"
        rf"|\b(?:is|are|was|were|of|about)\s+[-−]?\d+(?:\.\d+)?\s*(?:x|×|\\times)\s*10\^", _F)),
    ("count_outcome", re.compile(
        rf"\b(?:{_OUTCOME_VERB}|{_CHANGE_VERB}|correctly \w+|pass\w*|fail\w*|answer\w*"
        rf"|classif\w*|predict\w*|succeed\w*)\s+(?:\w+\s+){{0,3}}?{NUM}\s+(?:out\s+)?of"
        rf"\s+(?:the\s+|all\s+)?{NUM}", _F)),
    ("comparison", re.compile(
        r"\b(?:outperform\w*|out-perform\w*|surpass\w*|beats?|beating|exceed\w*"
        r"|improv\w* (?:up)?on|improv\w* over|better than|worse than|superior to"
        r"|inferior to|on par with|competitive with|comparable to"
        r"|wins? (?:on|in|against)|won (?:on|in|against)|rank(?:ed|s)? (?:first|second|third"
        r"|top|#?\d)|clear improvement|large margin|wide margin|significant margin"
        r"|halves|halved|doubles|doubled|triples|tripled"
        r"|(?:substantially|significantly|considerably|dramatically) (?:less|fewer|more"
        r"|lower|higher|faster|smaller|larger|better|worse)"
        r"|(?:consistent|significant|substantial|large|clear|notable|marked|dramatic|strong)"
        r" (?:improvements?|gains?|speed-?ups?|reductions?))\b", _F)),
    ("sota_claim", re.compile(
        r"\bstate[- ]of[- ]the[- ]art (?:results?|performance|accuracy|scores?) (?:on|in|for"
        r"|across)|\bstate[- ]of[- ]the[- ]art on\b|new state[- ]of[- ]the[- ]art"
        r"|(?:achiev|set|establish|obtain|reach|attain|deliver)\w* (?:a |the )?(?:new )?"
        r"(?:state[- ]of[- ]the[- ]art|sota|best|record)|\bsota (?:results? |performance )?"
        r"on\b|new records?|leaderboard|best[- ]performing|top[- ]performing", _F)),
    ("achieves_claim", re.compile(
        r"\b(?:achiev\w*|attain\w*)\s+(?:\w+\s+){0,4}?(?:best|competitive|comparable"
        r"|superior|strong|stronger|higher|lower|significant\w*|substantial\w*|remarkabl\w*"
        r"|excellent|impressive|good|better|state|sota|record|top|performance|accuracy"
        r"|results?|improvements?|gains?|speed-?ups?|reductions?|near-perfect|perfect)"
        r"|\b(?:reach\w*|deliver\w*|exhibit\w*|yield\w*|show\w*) (?:\w+ )?(?:extraordinary"
        r"|excellent|remarkable|superior|strong|impressive|outstanding|high|good) (?:performance"
        r"|accuracy|quality|results)", _F)),
    ("finding", re.compile(
        r"\b(?:experiments?|experimental results?|results?|evaluations?|empirical\w*"
        r"|ablations?|simulations?|analys[ie]s|measurements?|studies|tests?|benchmarks?"
        r"|numerical \w+|findings?|computations?|calculations?|data|observations?)\s+"
        r"(?:\w+\s+){0,6}?(?:show|shows|showed|demonstrate|demonstrates|demonstrated"
        r"|confirm|confirms|confirmed|indicate|indicates|indicated|reveal|reveals|revealed"
        r"|suggest|suggests|suggested|verify|verifies|verified|validate|validates|validated"
        r"|prove|proves|proved|establish|establishes|established|highlight|highlights"
        r"|highlighted|corroborate|corroborates|corroborated)\b"
        r"|\b(?:was|were|has been|have been) (?:\w+ )?(?:demonstrated|observed|found|detected"
        r"|confirmed|achieved|verified empirically)\b"
        r"|\b(?:demonstrates?|demonstrated|confirms?|confirmed|reveals?|revealed) that\b"
        r"|\b(?:is|are|was|were) found (?:to|that)\b|\b(?:is|are) observed\b"
        r"|\b(?:have|has) shown that|,\s*(?:showing|demonstrating|confirming|revealing"
        r"|indicating|finding) (?:that|it)\b"
        r"|\bagree(?:s|d)? (?:\w+ ){0,3}?with (?:\w+ ){0,3}?(?:model|data|evidence|observ\w*"
        r"|experiment\w*|theory|predictions?|results?|measurements?|simulations?|lattice)"
        r"|\bfor the first time\b"
        r"|\b(?:results?|values?|estimates?|measurements?|predictions?|calculations?) (?:are|is"
        r"|were|was) (?:\w+ )?(?:consistent|in agreement|compatible|in line)"
        r"|\bwe (?:also |further |empirically |experimentally |consistently )?"
        r"(?:find|found|observe|observed|show empirically|demonstrate empirically|see)\b"
        r"|\b(?:it|this) (?:is|was) (?:found|observed|shown empirically)"
        r"|\b(?:good|excellent|reasonable|fair|close|remarkable|satisfactory) agreement"
        r"|\bin agreement with|\bagreement (?:with|between) (?:\w+\s+){0,4}?(?:data|measure"
        r"\w*|observ\w*|experiment\w*|simulat\w*|spectra)"
        r"|\bconsistent with (?:the )?(?:data|observations|measurements|experiment\w*"
        r"|the standard model)"
        r"|\b(?:table|figure|fig\.)\s*\d+\s+(?:shows?|reports?|demonstrates?|confirms?)"
        r"|\b(?:significantly|substantially|consistently|dramatically|markedly|greatly"
        r"|considerably|notably|clearly) (?:improv\w*|outperform\w*|reduc\w*|increas\w*"
        r"|better|boost\w*|enhanc\w*|lower\w*|surpass\w*|beat\w*)"
        r"|\b(?:more|less) (?:accurate|efficient|robust|stable|precise|reliable|effective"
        r"|scalable|sample-efficient) than|\b(?:faster|slower|cheaper) than\b", _F)),
]

# -- results written in words, ratios, qualitative outcomes, ranks ---------------------------
_WORD_NUM = (
    r"(?:zero|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|fifteen|twenty"
    r"|thirty|forty|fifty|sixty|seventy|eighty|ninety|hundred|thousand|million|billion)"
    r"(?:[- ](?:zero|one|two|three|four|five|six|seven|eight|nine|point|hundred|thousand"
    r"|and))*"
)
_RESOURCE = (r"(?:time|memory|compute|cost|energy|latency|parameters|flops|gpu[- ]hours"
             r"|training time|inference time|runtime|wall[- ]clock(?: time)?|storage|budget"
             r"|data|labels|samples|steps|tokens)")
_RULES.extend([
    ("number_words", re.compile(
        rf"\b{_WORD_NUM}\s+(?:per ?cent|percent(?:age points?)?|points?)\b"
        rf"|\bone (?:in|out of) (?:a |every )?(?:ten|hundred|thousand|million|\d[\d,]*)\b"
        rf"|\b(?:half|a third|a quarter|a tenth|a fraction|a small fraction|two thirds"
        rf"|three quarters) (?:of )?(?:the )?{_RESOURCE}\b"
        rf"|\b(?:twice|thrice|{_WORD_NUM} times) (?:as (?:fast|accurate|many|much|good"
        rf"|efficient|large|small|often|likely)|faster|slower|fewer|less|more|smaller|larger"
        rf"|higher|lower|better|cheaper)\b"
        rf"|\b(?:doubl|tripl|halv|quadrupl)(?:es|ed|ing) (?:the )?(?:\w+ ){{0,2}}?"
        rf"(?:accuracy|speed|throughput|score|performance|success|{_RESOURCE})\b", _F)),
    ("qualitative_outcome", re.compile(
        r"\bnear[- ]perfect\b|\bperfect (?:accuracy|recall|precision|scores?|agreement"
        r"|reconstruction|separation|classification)|\b(?:almost|virtually|nearly) (?:no|zero"
        r"|all|every|perfect|identical)\b"
        r"|\b(?:match(?:es|ed)?|rivals?|rivall?ed|equals?|equall?ed|closes|closed|narrows"
        r"|narrowed) (?:the )?(?:\w+[- ]){0,3}?(?:model|baseline|teacher|performance|accuracy"
        r"|quality|gap|results?|counterpart|oracle|upper bound|human(?:s| performance)?)\b"
        r"|\b(?:at|for|with) (?:a |only a )?fraction of the\b"
        r"|\b(?:eliminat|remov|prevent|avoid|suppress|resolv|fix)(?:es|ed) (?:\w+ ){0,4}?"
        r"(?:in (?:every|all|each)|entirely|completely|altogether)\b"
        r"|\b(?:eliminated|prevented|avoided|resolved|removed|fixed|mitigated|reduced"
        r"|improved|boosted|stabili[sz]ed|accelerated) (?:\w+ ){0,3}?(?:collapse|divergence"
        r"|instabilit\w*|errors?|hallucinations?|failures?|forgetting|overfitting|accuracy"
        r"|performance|robustness|quality|convergence|stability)\b"
        r"|\b(?:raters|annotators|judges|humans|participants|users|evaluators|reviewers"
        r"|experts) (?:\w+ ){0,2}?(?:preferred|favou?red|chose|rated|judged|found|liked)\b"
        r"|\bpreferred (?:over|to) \w+|\bwas preferred\b|\bwere preferred\b"
        r"|\bconverged\b|\b(?:succeeded|worked|failed) (?:in|on|for|to) (?:\w+ ){0,3}?"
        r"(?:every|all|each|most|none|many)\b"
        r"|\b(?:robust|effective|successful|accurate|reliable) (?:in|on|across) (?:all|every"
        r"|each)\b|\b(?:proved|proves|turned out|turns out) (?:to be )?(?:effective"
        r"|successful|robust|superior|accurate|useful|essential|crucial|beneficial)\b"
        r"|\b(?:no|zero) (?:\w+ ){0,2}?(?:failures?|collapses?|errors?|regressions?"
        r"|divergences?) (?:were|was|is|are) (?:observed|seen|found|recorded|reported)\b"
        r"|\b(?:largely|substantially|dramatically|significantly|markedly|greatly) "
        r"(?:outperform|improv|reduc|mitigat|alleviat|eliminat|enhanc)\w*", _F)),
    ("rank", re.compile(
        r"\b(?:rank(?:s|ed|ing)?|plac(?:es|ed|ing)|finish(?:es|ed)) (?:\w+ ){0,2}?(?:first"
        r"|second|third|top|#?\d+(?:st|nd|rd|th)?|1st|2nd|3rd)\b|\b(?:first|second|third|top)"
        r" place\b|\btop of (?:the )?(?:\w+ )?(?:leaderboard|ranking|chart)|#1 on\b"
        r"|\b(?:tops|topped|leads|led) (?:the )?(?:\w+ ){0,2}?(?:leaderboard|ranking|benchmark)"
        r"|\b(?:best|top)[- ](?:\d+|three|five|ten) (?:on|in|of) (?:the )?(?:\w+ )?"
        r"(?:leaderboard|benchmark|ranking)", _F)),
    ("convergence", re.compile(
        r"\bconverge[sd]? (?:\w+ ){0,2}?(?:in|within|after) (?:only |just |about )?"
        r"(?:\d|a few\b|few\b|" + _WORD_NUM + r"\b)", _F)),
    ("results_reference", re.compile(
        r"\b(?:as|is|are|was|were) (?:shown|reported|seen|illustrated|summari[sz]ed|listed"
        r"|demonstrated) in (?:table|tab\.|figure|fig\.)\s*\d|\b(?:table|tab\.|figure"
        r"|fig\.)\s*\d+\w? (?:also |further |clearly )?(?:shows?|reports?|demonstrates?"
        r"|confirms?|indicates?|reveals?|lists?|summari[sz]es|illustrates?|highlights?"
        r"|compares?|presents?)\b|\b(?:according to|see|from) (?:table|figure|tab\.|fig\.)"
        r"\s*\d+\w?,", _F)),
    ("ratio", re.compile(
        rf"(?<![\w.])\d+(?:\.\d+)?\s?(?:x|×)\s+(?:the |less |more |fewer |lower |higher )?"
        rf"(?:{_RESOURCE}|throughput|speed|memory footprint)\b"
        rf"|\b(?:using|uses|used|needs|needed|requires|required|with|consum\w+|takes|took"
        rf"|in) (?:only |just |about |roughly )?(?:{_PCT}|half|a third|a quarter|a tenth"
        rf"|{NUM}\s?(?:x|×)) (?:of |as much |as many )?(?:the )?(?:\w+ )?{_RESOURCE}\b"
        rf"|\b(?:{_PCT}|{NUM}\s?(?:x|×)) (?:less|more|fewer|lower|higher|smaller|larger) "
        rf"{_RESOURCE}\b", _F)),
    ("theory_result", re.compile(
        r"\b(?:we|i) (?:also |further |then |first |finally |explicitly |rigorously )?"
        r"(?:prove|proved|show|showed|derived|establish|established|obtained|demonstrated"
        r"|extend the result|improve the (?:lower |upper )?bound|shall show|shall argue)\b"
        r"(?! (?:how|a method|an? (?:new )?(?:algorithm|approach|framework|scheme|model)))"
        r"|\b(?:is|are|was|were|has been|have been) (?:\w+ )?(?:proven|proved"
        r"|established|confirmed)\b"
        r"|\bturns? out (?:to|that)\b|\bit (?:is|was) (?:shown|proven|proved|found)\b"
        r"|\b(?:our|the) (?:key|main|central|principal|major) (?:results?|findings?)\b"
        r"|\b(?:interestingly|remarkably|surprisingly|strikingly),"
        r"|\bis a promising\b|\bfound (?:that|comparable|no|little|similar|significant"
        r"|strong|good|high|low)\b", _F)),
    ("narrated_outcome", re.compile(
        r"\b(?:diverged|collapsed|shrank|disappeared|vanished|degraded|plateaued|saturated"
        r"|stayed (?:above|below|within|flat|stable|constant)|did (?:not )?(?:worse|better"
        r"|well|poorly)|performed (?:\w+ )?(?:equally|comparably|similarly|worse|better|best"
        r"|poorly|well)|perform(?:s)? (?:about )?(?:equally|comparably|similarly)|held up"
        r"|broke down|breaks down|fail(?:s|ed)? to (?:converge|generali[sz]e|scale|preserve"
        r"|transfer|improve|help|match|beat|outperform|reach|reproduce|detect|recover|link)"
        r"|(?:over|under)estimat(?:es|ed)|reproduc(?:es|ed) (?:the )?(?:observed|measured"
        r"|experimental|known|reported)|(?:statistically )?indistinguishable from"
        r"|within (?:one|two|three|\d+) (?:standard deviations?|sigma|σ))\b", _F)),
    ("outcome_size", re.compile(
        r"\b(?:gains?|improvements?|effects?|differences?|benefits?|drops?|costs?|overheads?"
        r"|errors?|speed-?ups?|savings?|degradation|variance|agreement|correlations?)"
        r" (?:\w+ ){0,5}?(?:is|are|was|were|remains?|remained|stays?|stayed|becomes?|became"
        r"|proved|turned out) (?:\w+ )?(?:negligible|small|large|significant|substantial"
        r"|modest|marginal|minimal|consistent|limited|noticeable|dramatic|huge|tiny|strong"
        r"|weak|high|low|robust|stable)\b", _F)),
    ("count_found", re.compile(
        rf"^\s*there (?:are|is|were|was|exist) (?:about |around |over |only |exactly "
        rf"|approximately )?{NUM}\b"
        rf"|\b(?:only|just|all|none|most|half) (?:{NUM}|\w+) (?:of|out of) (?:the )?{NUM}\b",
        _F)),
    ("relative_outcome", re.compile(
        r"\b(?:higher|lower|narrower|wider|greater|smaller|larger|fewer|stronger|weaker"
        r"|more (?:accurate|robust|stable|consistent|reliable|useful|confident|efficient)"
        r"|less (?:accurate|robust|stable|consistent|reliable|useful|confident|efficient))"
        r" [\w\-/ ]{0,50}?\bthan\b", _F)),
])

# -- outcome claims without numbers: verdicts, null findings, associations, comparisons -----
_VERDICT = (r"safe|effective|efficacious|feasible|cost-effective|well[- ]tolerated|beneficial"
            r"|superior|successful|promising|useful|valuable|reliable|accurate|robust|efficient"
            r"|practical|viable|suitable|able|capable|competitive|scalable|advantageous")
_SUBJECT = (r"(?:our|the proposed|the presented|the introduced|the new|this|these|the resulting"
            r"|the developed|the designed) (?:[\w\-]+ ){0,3}?(?:methods?|approach(?:es)?"
            r"|models?|framework|system|technique|algorithm|scheme|tool|intervention|programm?e"
            r"|therapy|treatment|design|strategy|procedure|solution|architecture|network"
            r"|pipeline|estimator|classifier|detector|protocol|device|regimen)")
_FINDING_VERB = (r"detect|find|observe|show|reveal|improve|reduce|increase|change|affect"
                 r"|differ|alter|predict|lead|result|reach|demonstrate|yield|influence|benefit"
                 r"|help|correlate|decrease|enhance|prevent|support|confirm|achieve|exceed"
                 r"|outperform|perform|work|succeed|converge|generali[sz]e|transfer")
_RULES.extend([
    ("efficacy_verdict", re.compile(
        rf"(?<!has )(?<!have )\b(?:was|were|proved|proven|appeared|remained|turned out)\s+"
        rf"(?:to be\s+)?(?:\w+\s+)?"
        rf"(?:an?\s+)?(?:{_VERDICT})\b"
        rf"|\b{_SUBJECT} (?:is|are|proves|appears|remains|seems|has proven) (?:\w+ )?"
        rf"(?:an? )?(?:{_VERDICT}|better|faster|more \w+)\b"
        rf"|\b(?:is|are) (?:{_VERDICT}), (?:(?:{_VERDICT}),? )*(?:and|or) (?:{_VERDICT})\b"
        rf"|\b(?:is|are|was|were) (?:an? )?(?:safe and effective|effective and safe|well tolerated)"
        rf"|\b(?:effectively|successfully|efficiently|significantly|substantially|greatly"
        rf"|dramatically|markedly|consistently|reliably) (?:avoid|solv|resolv|address|overcom"
        rf"|alleviat|mitigat|handl|tackl|eliminat|reduc|improv|enhanc|increas|decreas|prevent"
        rf"|captur|outperform|surpass|boost|lower)\w*"
        rf"|\b(?:avoid|solv|resolv|overcom|alleviat|mitigat|eliminat)\w* (?:\w+ ){{0,4}}?"
        rf"(?:effectively|successfully|efficiently|completely|entirely)\b", _F)),
    ("null_finding", re.compile(
        rf"\bdid not (?:significantly |substantially |materially |meaningfully )?"
        rf"(?:{_FINDING_VERB})\w*"
        r"|\bno (?:statistically )?(?:significant|measurable|detectable|appreciable|relevant"
        r"|meaningful|notable|marked|major|clinically \w+) (?:\w+ )?(?:differences?|effects?"
        r"|changes?|associations?|improvements?|benefits?|correlations?|reductions?"
        r"|increases?|relationships?|impact|influence|toxicit\w+|adverse \w+|gains?)"
        r"|\b(?:had|have|has|showed|exerted|produced|yielded|made) (?:only )?(?:no|little|marginal"
        r"|minimal|negligible|limited|modest|minor|small|weak|slight) (?:\w+ )?(?:effects?"
        r"|impact|influence|benefits?|improvements?|differences?|gains?|role|contribution)"
        r"|\bonly (?:marginal|minimal|negligible|modest|minor|slight|small) (?:\w+ )?(?:effects?"
        r"|impact|improvements?|gains?|benefits?|differences?)"
        r"|\b(?:no|none of the) (?:[\w\-]+ ){0,2}?(?:patients?|participants?|subjects?"
        r"|animals?|mice|rats|children|cases|users|respondents|volunteers|women|men)\b"
        r"(?: \w+){0,2}? (?:had|needed|presented|showed)\b"
        r"|\b(?:no|none of the) (?:[\w\-]+ ){0,2}?[\w\-]+ (?:experienced|developed|reported"
        r"|died|required|suffered|relapsed|responded|diverged|collapsed|crashed)\b"
        r"|\b(?:was|were) not (?:\w+ )?(?:associated|correlated|significant\w*|different"
        r"|effective|observed|detected|found|affected|altered|changed|improved|reduced"
        r"|increased|superior|inferior)\b"
        r"|\b(?:failed|fail) to (?:show|demonstrate|detect|find|achieve|yield|produce|reduce"
        r"|increase|affect|alter|change|reach significance)", _F)),
    ("association", re.compile(
        r"\b(?:was|were) (?:\w+ ){0,2}?(?:associated|correlated|linked|related|predictive)"
        r" (?:with|to|of)\b"
        r"|\b(?:predicted|predicts) (?:\w+ ){0,4}?(?:at|over|during|after) (?:the )?(?:\w+ )?"
        r"(?:follow-up|followup|months?|years?|weeks?)"
        r"|\b(?:independently|significantly|strongly|best|positively|negatively|inversely)"
        r" (?:predicted|correlated|associated)\b"
        r"|\b(?:increased|improved|enhanced|reduced|decreased) (?:the )?predictab\w+"
        r"|\b(?:is|was|are|were) an? (?:better|stronger|weaker|worse|good|strong|independent"
        r"|significant|reliable|useful|poor) predictors? of"
        r"|\b(?:significant|strong|positive|negative|inverse|weak|moderate|clear)"
        r" (?:associations?|correlations?|relationships?) (?:was|were|between|with)\b", _F)),
    ("comparison_words", re.compile(
        r"\b(?:generali[sz]\w*|transfer\w*|scal(?:es|ed)|works?|worked|performs?|performed"
        r"|fares?|fared|converges?|converged|adapts?|adapted) (?:much |significantly "
        r"|substantially |considerably |slightly |far |consistently )?(?:better|worse)\b"
        r"|(?<!have )(?<!has )(?<!had )\b(?:exhibit|show|demonstrat|display|achiev|yield"
        r"|provid|deliver|attain)(?:s|es|ed|ing)? (?:\w+ )?(?:strong|excellent|good|high"
        r"|superior|remarkable|impressive|robust|great|better|improved|competitive|promising"
        r"|significant|considerable|outstanding|favou?rable|satisfactory|encouraging)"
        r" (?:\w+ )?(?:transferability|generali[sz]ation|robustness|performance|accuracy"
        r"|results?|efficiency|effectiveness|efficacy|improvements?|gains?|stability"
        r"|scalability|agreement|outcomes?|reliability|validity|capabilit\w+)"
        r"|\bthe (?:best|worst|highest|lowest|strongest|most accurate|most effective)"
        r" (?:\w+ )?(?:was|were|is|are)\b", _F)),
    ("share_in_words", re.compile(
        r"\b(?:the (?:vast )?majority|most|half|two[- ]thirds|one[- ]third|a third|a quarter"
        r"|three[- ]quarters|a minority|nearly all|almost all) of (?:the |all )?(?:\w+ )?"
        r"(?:patients|participants|subjects|respondents|users|cases|students|children|women|men"
        r"|responders|annotators|raters)\b(?: \w+){0,2}? (?:were|had|reported|showed"
        r"|experienced|developed|achieved|did|preferred|rated|agreed|responded|improved)\b", _F)),
])

# Rules that say a result whatever the voice of the sentence.
_ALWAYS = {"uncertainty", "table_row"}
# Rules read on the sentence as written (blanking `p < 0.01` as a setting would hide it).
_ON_ORIGINAL = {"uncertainty", "p_value", "convergence", "results_reference"}

_PLANNING = re.compile(
    r"\b(?:will|would|should|shall|could|might|may|expect\w*|hypothes\w*|predicted to"
    r"|plans? to|planning to|planned"
    r"|propose to|aims? to|aiming to|intend\w*|goal is|to test|to evaluate|to assess|to "
    r"measure|to verify|to check|whether|if|unless|refut\w*|falsif\w*|anticipat\w*|conjectur"
    r"\w*)\b", _F)
_PAST_OUTCOME = re.compile(
    r"\b(?:achieved|obtained|found|observed|showed|shown|demonstrated|outperformed"
    r"|surpassed|reached|attained|improved|reduced|yielded|resulted|confirmed|revealed)\b", _F)

# A reported-looking figure: a decimal or a percentage left once settings are blanked.
_FIGURE = re.compile(rf"(?<![\w.])\d+\.\d+(?!\.\d)\s?%?|{_PCT}")

_TABLE_CELL_NUM = re.compile(rf"^\s*\(?{NUM}\s*%?\)?\s*$")


@dataclass(frozen=True)
class Finding:
    """One measured result found in a text."""

    kind: str
    match: str
    sentence: str
    layer: str = "rules"  # which layer of the gate found it: rules, source, judge, method


def _blank(text: str, pattern: re.Pattern[str]) -> str:
    def spaces(match: re.Match[str]) -> str:
        if pattern is _IDENTIFIER and _METRIC_NAME.fullmatch(match.group()):
            return match.group()
        return " " * len(match.group())

    return pattern.sub(spaces, text)


def _neutralise(sentence: str) -> str:
    for pattern in _NOT_OUTCOME:
        sentence = _blank(sentence, pattern)
    return sentence


def _is_table_row(line: str) -> bool:
    """A Markdown/LaTeX/tab-separated row with at least two numeric cells."""
    for separator in ("|", "&", "\t"):
        if line.count(separator) >= 2:
            cells = [c.strip().rstrip("\\").strip() for c in line.split(separator)]
            numeric = sum(1 for c in cells if c and _TABLE_CELL_NUM.match(c))
            if numeric >= 2:
                return True
    return False


def sentences(text: str) -> list[str]:
    """Sentences of a text, line by line (blingfire's model knows abbreviations, decimals,
    "et al."); a table row stays one line."""
    out: list[str] = []
    for line in text.splitlines():
        line = line.strip()
        if not line:
            continue
        if _is_table_row(line) or len(line) < 12:
            out.append(line)
            continue
        out.extend(s.strip() for s in blingfire.text_to_sentences(line).split("\n")
                   if s.strip())
    return out


def check_sentence(sentence: str, planning: bool = False) -> list[Finding]:
    """Findings in one sentence (or one table line). ``planning``: the text is a prediction
    or a refutation condition by construction, so it is read in planning voice."""
    if _is_table_row(sentence):
        return [Finding("table_row", sentence[:120], sentence)]
    plain = _neutralise(sentence)
    found = []
    for kind, pattern in _RULES:
        hit = pattern.search(sentence if kind in _ON_ORIGINAL else plain)
        if hit:
            found.append(Finding(kind, sentence[hit.start():hit.end()].strip(), sentence))
    if not found:
        return []
    if (planning or _PLANNING.search(sentence)) and not _PAST_OUTCOME.search(sentence):
        figure = _FIGURE.search(plain)
        found = [f for f in found if f.kind in _ALWAYS or not _planned(f, sentence, planning)]
        if figure and not found:
            # a plan may name a metric, a direction and a condition, never a figure
            found = [Finding("figure_in_plan", figure.group().strip(), sentence)]
    return found


def _planned(finding: Finding, sentence: str, planning_field: bool) -> bool:
    """Whether a finding stands in planning voice: its own clause says will / should / if
    (a prediction's field is planning for the comparison shapes a prediction uses, but an
    outcome in words or a qualitative outcome needs the cue in its own clause)."""
    at = sentence.find(finding.match)
    clauses = _CLAUSE.split(sentence) if at >= 0 else [sentence]
    start = 0
    for clause in clauses:
        end = start + len(clause)
        if at < 0 or start <= at < end + 1:
            if _PLANNING.search(clause):
                return True
            break
        start = sentence.find(clause, start) + len(clause)
    return planning_field and finding.kind not in _OUTCOME_IN_WORDS


# Clauses of a sentence, so that "we expect X; it reached Y" is read clause by clause.
_CLAUSE = re.compile(r"\s*[;:]\s*|,\s+(?=(?:and|but|while|whereas|yet|although)\b)")
# Shapes a prediction does not use: a prediction field alone does not excuse them.
_OUTCOME_IN_WORDS = {"number_words", "qualitative_outcome", "rank", "convergence", "ratio",
                     "results_reference", "theory_result", "count_found",
                     "narrated_outcome", "outcome_size", "efficacy_verdict", "null_finding",
                     "association", "comparison_words", "share_in_words"}


def residual_number(sentence: str) -> bool:
    """A number is left once names, years, references and settings are blanked: the
    extractive backend's stricter test (a sentence it copies must not carry one)."""
    return bool(_NUM_RE.search(_neutralise(sentence)))


def find_leaks(text: str | None, planning: bool = False) -> list[Finding]:
    """Every measured result in a text; empty when it only plans, describes or motivates."""
    if not text:
        return []
    findings: list[Finding] = []
    for sentence in sentences(text):
        findings.extend(check_sentence(sentence, planning))
    return findings


@dataclass(frozen=True)
class Masked:
    text: str
    findings: list[Finding]


def drop_sentences(text: str, flag: Callable[[str], list[Finding]]) -> Masked:
    """``text`` without the sentences ``flag`` finds something in, lines kept apart."""
    kept: list[str] = []
    findings: list[Finding] = []
    for line in text.splitlines():
        kept_line: list[str] = []
        for sentence in sentences(line):
            hits = flag(sentence)
            if hits:
                findings.extend(hits)
            else:
                kept_line.append(sentence)
        if kept_line:
            kept.append(" ".join(kept_line))
    return Masked("\n".join(kept), findings)


def mask_text(text: str, planning: bool = False) -> Masked:
    """Drop every sentence that states a measured result; keep the rest in order."""
    return drop_sentences(text, lambda sentence: check_sentence(sentence, planning))
