"""Phrase mining for rule authors: the phrases of a concept's missed problems that would recover them.

Pure: no Django imports. The caller passes the bank's texts, each problem's label for the concept
(True: labelled with it, False: labelled without it, None: not labelled) and whether the current
pattern matches it. :func:`mine` returns

- **phrases**: word n-grams (1 to 3 words) and LaTeX commands (``\\binom``, ``\\bar{x}``) of the
  problems the pattern misses (its FN), each as a ready branch (escaped, word-bounded), with how
  many FN it would recover and how many FP it would add on the labelled problems, and how many
  unlabelled problems it would newly match; best first;
- **suggestions**: a few of those phrases chosen greedily, each one for the FN the earlier ones
  leave, so that appending them in order keeps paying off.

Candidates come from the FN texts' tokens; every count then comes from matching the branch itself
(with RE2, as the extractor will run it) over every problem the pattern does not match yet. So the
figures are what the preview will show once the branch is appended, not an estimate from tokens.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field, replace
from typing import Sequence

import re2

from concepts.extraction import _raw_match, _re2_options

MAX_N = 3
FP_WEIGHT = 2.0  # a phrase is worth its recovered FN minus this many per FP it adds
MAX_CANDIDATES = 2000  # the candidates found in the most FN texts are matched over the bank
PRIOR_WEIGHT = 10.0  # pseudo-problems of prior behind each phrase's precision
MIN_PRECISION = 0.3  # a phrase is suggested only if it is expected to be right this often
HINT_PRIOR = 0.5  # prior precision of a phrase that holds a word of the concept's own definition
STEM = 6  # letters a stem keeps
COMMON_HINT = 0.1  # words in more than this share of all concepts' descriptions hint at none
NUM = "#"  # how a number shows in a phrase: any number matches there
MAX_ALTERNATIVES = 6  # other words of the same effect kept with a phrase

# Function words: a phrase may hold them inside ("type i error", "at least") but neither starts nor
# ends with one, and none is a phrase alone; the contentful part around them is the same branch.
STOPWORDS = frozenset(
    """a an the of and or to in on at by for from with as is are was were be been being it its this
    that these those there their they them he she his her we our you your i if then than so such not
    no but which who whom what when where how do does did has have had can could will would shall
    should may might must into onto over under about each any all some both either neither also only
    very more most less other same just""".split()
)
# Layout commands that say nothing about a concept on their own (with a braced argument they are
# kept: \mathrm{Var}, \text{SE}).
LAYOUT_COMMANDS = frozenset(
    "left right text textbf textit emph mathrm mathbf mathit mbox quad qquad displaystyle begin end "
    "hline item cdot ldots dots cdots".split()
)
# Commands whose braced argument is part of what they say: \bar{x}, \hat{p}, \mathrm{Var}, \begin{tabular}.
# (The first argument of \binom{n}{k} or \frac{a}{b} is just a symbol.)
ARGUMENT_COMMANDS = frozenset(
    "bar hat overline underline tilde widehat widetilde vec dot ddot mathrm mathbf mathbb mathcal mathit "
    "text textrm textit operatorname begin".split()
)

# A LaTeX command (letters after a backslash), with a short braced argument when there is one, or a
# word: a maximal run of ASCII \w, exactly what `\b...\b` delimits in a rule.
# A table's column specification (`\begin{tabular}{|l|c|}`) is layout, not words: it is skipped whole.
_SCAN = re.compile(
    r"(?P<skip>\\begin\s*\{(?P<env>tabular|array)\*?\}\s*\{[^{}]*\})"
    r"|\\(?P<cmd>[A-Za-z]+)(?:\s*\{\s*(?P<arg>[A-Za-z0-9]{1,12})\s*\})?"
    r"|\w+",
    re.ASCII,
)
_WORD_GAP = re.compile(r"[\s-]+", re.ASCII)  # words separated only by spaces or hyphens form a phrase
_DIGITS = re.compile(r"\d+", re.ASCII)


@dataclass(frozen=True)
class Phrase:
    """A candidate branch and what appending it to the pattern would change.

    ``recovered`` and ``false_positives`` are indices into the texts given to :func:`mine`.
    """

    text: str  # as shown: "sampling distribution", "\\bar{x}", "roll # dice"
    branch: str  # the regex alternative to append: "\\bsampling[\\s-]+distribution\\b"
    recovered: tuple[int, ...]  # FN of the current pattern it matches
    false_positives: tuple[int, ...]  # labelled negatives it would newly match
    positives: int  # labelled positives it matches, the ones the pattern matches already included
    negatives: int  # labelled negatives it matches, likewise
    unlabelled: int  # unlabelled problems it would newly match
    precision: float  # expected on new problems (see `precision`)
    score: float
    # Other phrases with exactly the same effect on the labelled and unlabelled problems, as
    # (text, branch): other words for the same choice ("gas", "unleaded", "stations" of one exercise).
    alternatives: tuple[tuple[str, str], ...] = ()

    @property
    def fn_recovered(self) -> int:
        return len(self.recovered)

    @property
    def fp_added(self) -> int:
        return len(self.false_positives)


@dataclass(frozen=True)
class Suggestion:
    """One step of the greedy plan: the phrase, what it adds beyond the steps before it, and the FN left."""

    phrase: Phrase
    fn_recovered: int
    fp_added: int
    fn_left: int


@dataclass
class Mining:
    positives: int  # labelled with the concept
    negatives: int  # labelled, without the concept
    missed: int  # positives the current pattern does not match (its FN)
    candidates: int  # phrases matched over the bank
    phrases: list[Phrase] = field(default_factory=list)
    suggestions: list[Suggestion] = field(default_factory=list)


# --- features ------------------------------------------------------------------------------------

# A feature is ("w", tokens) for a word n-gram (NUM for a number) or ("c", name, argument) for a command.
Feature = tuple


def _norm(word: str, ignore_case: bool) -> str:
    if _DIGITS.fullmatch(word):
        return NUM
    return word.lower() if ignore_case else word


def _words_ok(tokens: tuple[str, ...]) -> bool:
    if len(tokens) == 1:
        w = tokens[0]
        return w != NUM and len(w) > 1 and w.lower() not in STOPWORDS
    if tokens[0].lower() in STOPWORDS or tokens[-1].lower() in STOPWORDS:
        return False
    return any(t != NUM and len(t) > 1 for t in tokens)  # not only numbers and single letters


def features(text: str, *, ignore_case: bool = True, max_n: int = MAX_N) -> set[Feature]:
    """The candidate features of one text: its word n-grams (n <= max_n; words that follow one another
    with only spaces or hyphens between them) and its LaTeX commands, alone and with a short argument."""
    found: set[Feature] = set()
    run: list[str] = []  # the words of the current phrase run
    last_end = -1
    for m in _SCAN.finditer(text):
        if m.group("skip") is not None:
            found.add(("c", "begin", m.group("env")))
            run, last_end = [], m.end()
            continue
        name = m.group("cmd")
        if name is not None:
            run = []
            key = name.lower() if ignore_case else name
            if name.lower() not in LAYOUT_COMMANDS:
                found.add(("c", key, None))
            if m.group("arg") is not None and name in ARGUMENT_COMMANDS:
                arg = m.group("arg").lower() if ignore_case else m.group("arg")
                found.add(("c", key, arg))
            last_end = m.end()
            continue
        word = _norm(m.group(0), ignore_case)
        if not (run and _WORD_GAP.fullmatch(text, last_end, m.start())):
            run = []
        run.append(word)
        last_end = m.end()
        for n in range(1, min(max_n, len(run)) + 1):
            tokens = tuple(run[-n:])
            if _words_ok(tokens):
                found.add(("w", tokens))
    return found


def _word_regex(token: str) -> str:
    return r"\d+" if token == NUM else re.escape(token)


def branch_of(feature: Feature) -> str:
    """The regex alternative of a feature: escaped and word-bounded, so it reads as the phrase."""
    if feature[0] == "w":
        return r"\b" + r"[\s-]+".join(_word_regex(t) for t in feature[1]) + r"\b"
    _, name, arg = feature
    if arg is None:
        # The command's name ends where its letters do: `\sum_{i}` and `\binom{n}` both end it.
        return "\\\\" + name + r"(?:[^A-Za-z]|$)"
    return "\\\\" + name + r"\s*\{\s*" + re.escape(arg) + r"\s*\}"


def text_of(feature: Feature) -> str:
    if feature[0] == "w":
        return " ".join(feature[1])
    _, name, arg = feature
    return f"\\{name}" if arg is None else f"\\{name}{{{arg}}}"


def append_branch(pattern: str, branch: str) -> str:
    """The pattern with one more top-level alternative (the branch alone for an empty pattern)."""
    return f"{pattern}|{branch}" if pattern.strip() else branch


# --- mining --------------------------------------------------------------------------------------


def stem(word: str) -> str:
    """A crude stem, enough to tie "histograms" to "histogram" and "deviations" to "deviation"."""
    word = word.lower()
    return word[:STEM] if len(word) > STEM else word


def hint_stems(concept_text: str, other_texts: Sequence[str] = ()) -> frozenset[str]:
    """The stems of the words that define a concept (its slug, name and description), less those
    common to many concepts' descriptions ("solving", "requires", "probability", ...)."""
    def stems(text: str) -> set[str]:
        return {stem(w) for w in re.findall(r"[A-Za-z]{3,}", text) if w.lower() not in STOPWORDS}

    mine = stems(concept_text)
    if other_texts:
        df = Counter(s for text in other_texts for s in stems(text))
        mine = {s for s in mine if df[s] <= max(2, COMMON_HINT * len(other_texts))}
    return frozenset(mine)


def hinted_share(feature: Feature, hints: frozenset[str]) -> float:
    """The share of a phrase's content words (not numbers, not function words) that are hints."""
    words = feature[1] if feature[0] == "w" else tuple(w for w in feature[1:] if w)
    content = [w for w in words if w != NUM and w.lower() not in STOPWORDS]
    return sum(1 for w in content if stem(w) in hints) / len(content) if content else 0.0


def precision(positives: int, negatives: int, hinted: float, base_rate: float) -> float:
    """The precision to expect of a phrase on new problems: what it shows on the labelled ones, shrunk
    towards a prior, so that one lucky problem does not make a branch. The prior is the concept's
    base rate, raised towards even odds by the share of the phrase's words that are the concept's own
    (`hinted`, see :func:`hinted_share`)."""
    prior = base_rate + (HINT_PRIOR - base_rate) * hinted if base_rate < HINT_PRIOR else base_rate
    return (positives + PRIOR_WEIGHT * prior) / (positives + negatives + PRIOR_WEIGHT)


def score(fn: int, fp: int, expected_precision: float, fp_weight: float = FP_WEIGHT) -> float:
    """What appending a phrase is worth: the FN it recovers, discounted by the precision to expect of
    it elsewhere, minus ``fp_weight`` per FP it adds on the labelled problems."""
    return fn * expected_precision - fp_weight * fp


def _nested(a: Feature, b: Feature) -> bool:
    """Whether one feature is part of the other: a word n-gram inside another, or a command alone and
    with an argument."""
    if a[0] != b[0]:
        return False
    if a[0] == "c":
        return a[1] == b[1] and None in (a[2], b[2])
    short, long = sorted((a[1], b[1]), key=len)
    return any(long[i : i + len(short)] == short for i in range(len(long) - len(short) + 1))


def _rank_key(p: Phrase, n_tokens: int) -> tuple:
    # Best score; then more FN; then the more general phrase (fewer words, shorter); then by text.
    return (-p.score, -p.fn_recovered, n_tokens, len(p.text), p.text)


def mine(
    texts: Sequence[str],
    labels: Sequence[bool | None],
    matched: Sequence[bool],
    *,
    ignore_case: bool = True,
    max_n: int = MAX_N,
    limit: int = 30,
    suggestions: int = 5,
    fp_weight: float = FP_WEIGHT,
    max_candidates: int = MAX_CANDIDATES,
    hints: frozenset[str] = frozenset(),
    min_precision: float = MIN_PRECISION,
) -> Mining:
    """Phrases that separate a concept's missed positives from its negatives, and a greedy plan.

    Parameters
    ----------
    texts : sequence of str, shape (n_problems,)
    labels : sequence of {True, False, None}, shape (n_problems,)
        True: labelled with the concept; False: labelled, not with it; None: unlabelled.
    matched : sequence of bool, shape (n_problems,)
        Whether the current pattern matches the text (all False for a concept with no rule yet).
    ignore_case : bool
        The rule's flag: phrases are matched the way the rule will match them.
    limit, suggestions : int
        How many phrases and greedy suggestions to return.
    fp_weight : float
        A phrase scores its recovered FN (times its expected precision) minus ``fp_weight`` per FP it
        adds; only phrases with a positive score are suggested.
    hints : frozenset of str
        Stems of the concept's own words (:func:`hint_stems`): a phrase holding one starts from a
        better prior precision.
    min_precision : float
        The expected precision (see :func:`precision`) a phrase needs to be suggested.

    Returns
    -------
    Mining
    """
    if not (len(texts) == len(labels) == len(matched)):
        raise ValueError(f"{len(texts)} texts, {len(labels)} labels and {len(matched)} matches")
    missed = [i for i, (label, hit) in enumerate(zip(labels, matched)) if label is True and not hit]
    result = Mining(
        positives=sum(1 for label in labels if label is True),
        negatives=sum(1 for label in labels if label is False),
        missed=len(missed),
        candidates=0,
    )
    if not missed:
        return result
    base_rate = result.positives / max(result.positives + result.negatives, 1)
    support: Counter[Feature] = Counter()
    for i in missed:
        support.update(features(texts[i], ignore_case=ignore_case, max_n=max_n))
    # The features of the most missed problems first; shorter ones first among equals (more general).
    ranked = sorted(support, key=lambda f: (-support[f], len(f[1]) if f[0] == "w" else 1, text_of(f)))
    chosen = ranked[:max_candidates]
    result.candidates = len(chosen)

    compiled = re2.Set.SearchSet(_re2_options(1 << 30))
    for feature in chosen:
        branch = branch_of(feature)
        compiled.Add(f"(?i:{branch})" if ignore_case else branch)
    compiled.Compile()
    match = _raw_match(compiled)

    recovered: list[list[int]] = [[] for _ in chosen]
    false_pos: list[list[int]] = [[] for _ in chosen]
    pos_all = [0] * len(chosen)
    neg_all = [0] * len(chosen)
    unlabelled = [0] * len(chosen)
    # Labelled problems all (how well each phrase separates positives from negatives); unlabelled ones
    # only where the pattern does not match yet (a branch changes nothing on the others).
    for i, (text, label, hit) in enumerate(zip(texts, labels, matched)):
        if label is None and hit:
            continue
        hits = match(text.encode())
        if not hits:
            continue
        if label is True:
            for h in hits:
                pos_all[h] += 1
            if not hit:
                for h in hits:
                    recovered[h].append(i)
        elif label is False:
            for h in hits:
                neg_all[h] += 1
            if not hit:
                for h in hits:
                    false_pos[h].append(i)
        else:
            for h in hits:
                unlabelled[h] += 1

    # Nested phrases of the same effect are one choice: "binomial", "binomial distribution" and "the
    # binomial" often recover the same problems with the same FP, and "binomial" (the more general,
    # first in rank order) stands for them. Different words of the same effect stay: each is a choice.
    candidates: list[tuple[tuple, Feature, Phrase]] = []
    for k, feature in enumerate(chosen):
        if len(recovered[k]) <= len(false_pos[k]):
            continue  # as many wrong problems as right ones (or none right): it separates nothing
        expected = precision(pos_all[k], neg_all[k], hinted_share(feature, hints), base_rate)
        phrase = Phrase(
            text=text_of(feature),
            branch=branch_of(feature),
            recovered=tuple(recovered[k]),
            false_positives=tuple(false_pos[k]),
            positives=pos_all[k],
            negatives=neg_all[k],
            unlabelled=unlabelled[k],
            precision=expected,
            score=score(len(recovered[k]), len(false_pos[k]), expected, fp_weight),
        )
        candidates.append((_rank_key(phrase, len(feature[1]) if feature[0] == "w" else 1), feature, phrase))
    candidates.sort(key=lambda c: c[0])
    # One row per effect: the best phrase, with the other words of that effect (and of the same
    # expected precision: a word of the concept's definition is a better bet) as its alternatives.
    kept: dict[tuple, list[Feature]] = {}
    first: dict[tuple, int] = {}
    phrases: list[Phrase] = []
    others: list[list[tuple[str, str]]] = []
    for _, feature, phrase in candidates:
        effect = (phrase.recovered, phrase.false_positives, phrase.unlabelled, phrase.positives, phrase.negatives, phrase.precision)
        same = kept.setdefault(effect, [])
        if any(_nested(feature, other) for other in same):
            continue
        same.append(feature)
        if effect in first:
            if len(others[first[effect]]) < MAX_ALTERNATIVES:
                others[first[effect]].append((phrase.text, phrase.branch))
            continue
        first[effect] = len(phrases)
        phrases.append(phrase)
        others.append([])
    phrases = [replace(p, alternatives=tuple(alt)) if alt else p for p, alt in zip(phrases, others)]
    result.suggestions = suggest(
        phrases, missed=len(missed), limit=suggestions, fp_weight=fp_weight, min_precision=min_precision
    )
    result.phrases = phrases[:limit]
    return result


def suggest(
    phrases: Sequence[Phrase], *, missed: int, limit: int = 5, fp_weight: float = FP_WEIGHT, min_precision: float = MIN_PRECISION
) -> list[Suggestion]:
    """Greedy: each step takes the phrase with the best score on what the steps before it left (FN
    not yet recovered, FP not yet added), until `limit` steps or no phrase scores above zero. Only
    phrases expected to be right at least `min_precision` of the time are suggested: one that occurs
    in a single problem and nowhere else says little about the concept."""
    out: list[Suggestion] = []
    got_fn: set[int] = set()
    got_fp: set[int] = set()
    left = [p for p in phrases if p.precision >= min_precision]
    while left and len(out) < limit:
        scored = []
        for order, p in enumerate(left):
            fn = sum(1 for i in p.recovered if i not in got_fn)
            fp = sum(1 for i in p.false_positives if i not in got_fp)
            scored.append((score(fn, fp, p.precision, fp_weight), fn, -order, fp, p))
        worth, fn, _, fp, phrase = max(scored, key=lambda s: s[:3])
        if worth <= 0 or fn == 0:
            break
        got_fn.update(phrase.recovered)
        got_fp.update(phrase.false_positives)
        out.append(Suggestion(phrase=phrase, fn_recovered=fn, fp_added=fp, fn_left=missed - len(got_fn)))
        left.remove(phrase)
    return out
