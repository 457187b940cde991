"""Cue phrases the extractive backend uses to tell which sentence says what (the problem, a
contribution, a gap, a design choice, a limitation ...). Plain regular expressions: the
backend is deterministic and explainable by design."""

from __future__ import annotations

import re

_F = re.IGNORECASE


def _cue(pattern: str) -> re.Pattern[str]:
    return re.compile(pattern, _F)


# The paper saying what it does ("we propose", "this study examines", "our work explores"),
# or what it is for ("the purpose of this paper is to ...").
CONTRIBUTION = _cue(
    r"\b(?:we|(?:in )?this (?:paper|work|article|note|letter|study|research)|our (?:work"
    r"|study|paper))\b.{0,40}?\b(?:propose|introduce|present|develop|design|describe"
    r"|formulate|construct|derive|extend|study|investigate|analy[sz]e|explore|examine"
    r"|consider|give|prove|build|define|implement|generali[sz]e)\w*"
    r"|\b(?:purpose|aim|goal|intent|objective) of this (?:paper|work|article|study) is to\b")
NOVELTY = _cue(r"\b(?:novel|new|first|key (?:idea|insight)|our (?:key|main) (?:idea|insight"
               r"|contribution)|unlike|instead of|rather than|in contrast)\b")
PROBLEM = _cue(r"\b(?:challeng\w*|problem\w*|difficult\w*|fail\w*|suffer\w*|limit\w*"
               r"|bottleneck\w*|struggl\w*|lack\w*|remain\w*|unclear|open question|costly"
               r"|expensive|intractable|impractical|hard to|cannot|unable|inefficien\w*|poorly)\b")
MATTERS = _cue(r"\b(?:important|crucial|critical|essential|central|fundamental|widely"
               r"|increasingly|necessary|matters|motivat\w*|need for|in practice"
               r"|applications?|concern)\b")
GAP = _cue(r"\b(?:however|but|although|yet|despite|do(?:es)? not|cannot|fail\w*|limit\w*"
           r"|lack\w*|remain\w*|ignor\w*|overlook\w*|neglect\w*|restricted|only|requir\w*"
           r"|expensive|costly|difficult|rarely|seldom|not known|unknown|unclear)\b")
# What a related-work paragraph says is left open besides the general cues: an area less
# studied, what earlier efforts assume, a concession to them ("While these efforts ...").
RELATED_GAP = _cue(r"\b(?:less|little|under|rarely|seldom)[ -]?(?:studied|explored|examined"
                   r"|addressed)\b|\bunexplored\b|\bassum\w*|^while (?:these|such|this|they)\b")
EXAMPLE = _cue(r"\b(?:for example|for instance|e\.g\.|such as|consider|as an example"
               r"|illustrat\w*)\b")
PRIOR = _cue(r"\b(?:prior|previous|existing|recent|traditional|conventional|classical"
             r"|standard|current|earlier) (?:work|works|methods?|approaches|techniques"
             r"|studies|models|systems|algorithms|research)\b|\bet al\b"
             r"|\b(?:many|several|various|numerous|a number of) (?:\w+ ){0,2}(?:techniques"
             r"|methods|approaches|tools|models|systems|algorithms|criteria|works|studies)"
             r" (?:have been|were|are being) (?:proposed|developed|introduced|studied)")
INPUTS = _cue(r"\b(?:given|inputs?|takes as input|receives|observes|conditioned on)\b")
OUTPUTS = _cue(r"\b(?:outputs?|produces?|predicts?|returns?|generates?|estimates?|computes?"
               r"|recovers?|classif(?:y|ies)|maps? \w+ to)\b")
DESIGN = _cue(r"\b(?:because|since|in order to|so that|to avoid|to ensure|to reduce|to enable"
              r"|to allow|which allows|this allows|we choose|we opt|we adopt)\b")
THEORY = _cue(r"\b(?:theorem|lemma|proposition|corollary|we prove|proof|guarantee\w*"
              r"|upper bound|lower bound|converge\w*|complexity)\b")
TRAINING = _cue(r"\b(?:train\w*|fine-?tun\w*|pre-?train\w*|optimi[sz]\w*|supervis\w*"
                r"|reinforcement learning|distill\w*)\b")
OBJECTIVE = _cue(r"\b(?:loss|objective|minimi[sz]\w*|maximi[sz]\w*|likelihood|reward"
                 r"|regulari[sz]\w*)\b")
ADAPTATION = _cue(r"\b(?:lora|adapters?|fine-?tun\w*|prompt[- ]tuning|transfer learning"
                  r"|domain adaptation|in-context learning)\b")
BASE_MODEL = re.compile(
    r"\b(?:based on|built (?:on|upon)|initiali[sz]ed (?:from|with)|fine-?tun\w* "
    r"(?:a |the )?(?:pre-?trained )?|backbone(?: is)?|on top of)\s+(?:a |the )?"
    r"(?P<name>[A-Z][\w.\-]*(?:[ -][A-Z0-9][\w.\-]*)?)")
DIFFERENCE = _cue(r"\b(?:unlike|in contrast to|contrary to|different from|differs? from"
                  r"|as opposed to|instead of)\s+(?P<other>[^,;.]{3,60})")
EVALUATION = _cue(r"\b(?:evaluat\w*|experiment\w*|benchmark\w*|datasets?|compar\w*"
                  r"|baselines?|metrics?|ablat\w*|tested on|test \w+ on|measur\w*)\b")
ABLATION = _cue(r"\bablat\w*")
LIMITATION = _cue(r"\b(?:limitations?|limited to|restricted to|assum\w*|only (?:applies"
                  r"|works|considers|handles)|does not|do not|cannot|future work"
                  r"|remains? (?:open|unclear|to be)|not (?:yet )?(?:address|consider|handle"
                  r"|support)\w*|drawbacks?|shortcomings?|we leave)\b")
NAMED = re.compile(r"\b(?:called|named|dubbed|termed|coined)\s+(?P<name>[A-Z][\w\-]+)"
                   r"|\b[Ww]e (?:propose|introduce|present)\s+(?P<name2>[A-Z][A-Za-z0-9\-]*[A-Z]"
                   r"[\w\-]*)")
ACRONYM = re.compile(r"(?P<term>\b[A-Za-z][\w\-]*(?:\s+[A-Za-z][\w\-]*){0,5})\s+"
                     r"\((?P<abbr>[A-Z][A-Za-z0-9\-]{1,10}s?)\)")
CITATION = re.compile(r"\(([A-Z][A-Za-z\-']+(?: et al\.?| and [A-Z][A-Za-z\-']+)?,? "
                      r"\d{4}[a-z]?)\)|(\[\d+(?:\s*[,–-]\s*\d+)*\])")
METRIC_NAMES = re.compile(
    r"\b(?:top-[15] accuracy|accuracy|F1(?:-score)?|precision|recall|BLEU|ROUGE(?:-[12L])?"
    r"|METEOR|perplexity|AUC|AUROC|mAP|NDCG|MRR|exact match|word error rate|WER|pass@\d+"
    r"|win rate|success rate|FID|PSNR|SSIM|IoU|mIoU|RMSE|MAE|MSE|latency|throughput"
    r"|code coverage|fault detection rate|coverage|calibration error|log-likelihood"
    r"|wall-clock time|sample efficiency|regret)\b")
BASELINE_LIST = _cue(r"\b(?:compar\w* (?:with|against|to)|baselines? (?:include|are|such as"
                     r"|:)|against)\s+(?P<list>[^.;]{3,160})")
PROPER_NAME = re.compile(r"\b[A-Z][A-Za-z]*(?:[A-Z0-9][\w\-.]*|-\d+[\w\-]*)\b")
NOT_NAMES = {"We", "Our", "The", "This", "In", "Table", "Figure", "Section", "For", "To",
             "It", "As", "On", "With", "And", "Appendix", "Eq", "Fig", "First", "Second",
             "Finally", "However", "These", "Each", "All", "An", "A", "By", "Both"}
