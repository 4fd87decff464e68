"""Does a question in a conversation refer back to an earlier turn, or can it be searched on its own?

The rule-based answerer searches with the previous question's words only when the new question leans on them.
Borrowing for a self-contained question pulls the old topic's passages ahead of the new one's (issue #19), and not
borrowing for "why?" leaves nothing to search with. A question refers back when it

1. continues the previous one explicitly: "and on Windows?", "what about the CLI?", "why not?", "... instead?"
   (not "instead of X"), "... too?", "also", "anything else?", "does the same apply ...?";
2. holds a pronoun whose antecedent is not in the question itself: "How do I configure it?" does, while "How do I
   restart a worker when it crashes?" ("it" after a clause of its own), "Is it possible to ...?" (a placeholder
   "it"), "Is there a way to ...?" (existential "there") and "the file that holds the config" (relative "that")
   do not;
3. is an ellipsis, with no topic word of its own: "Why?", "Can you give an example?", "Which is better?";
4. is a fragment of one or two topic words that is not phrased as a question or request: "Docker?", "on Windows".

Anything else is complete, however short: "How do I limit upload bandwidth?", "What does exit code 2 mean?".
A rule of thumb, not a parser: the model-backed answerer rewrites follow-ups itself.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

_WORD = re.compile(r"[a-z0-9_]+(?:['.\-][a-z0-9_]+)*")
_CODE_SPAN = re.compile(r"`[^`\n]*`")
_CODE_WORD = "code_span"  # stands for a `quoted` identifier: a topic of its own, never a pronoun
# Matched against the question's words joined by single spaces (punctuation gone).
_CONTINUATION = re.compile(
    r"^(?:and|also|but|or|so|then|plus|same|another|more)\b"
    r"|^(?:what about|how about|why not|any other|tell me more|for example|for instance)\b"
    r"|\b(?:instead(?! of)|also|else)\b"
    r"|\b(?:too|either|as well|then)$"
)

_AUX = frozenset("is are was were be been am do does did can could will would should shall may might must has have "
                 "had isn't aren't don't doesn't didn't can't won't".split())
_WH = frozenset("what what's how how's why when where which who whom whose".split())
_PREPOSITIONS = frozenset("about with for of on in to from by like than at into onto over under without after "
                          "before between through via per against".split())
_DETERMINERS = frozenset("a an the each every my your our".split())
# After these the rest is a clause of its own whose pronoun may point back into the question: "restart a worker
# when it crashes". A coordinator needs two topic words before it ("stop the server and restart it" resolves
# inside, "install and configure it" does not), or one and a new question after it ("what is X and how ...").
_SUBORDINATORS = frozenset("when whenever if after before until unless while once because whether".split())
_COORDINATORS = frozenset("and or but then so".split())
_OPENS_QUESTION = _AUX | _WH
_BEFORE_DEMONSTRATIVE = _AUX | _WH | _PREPOSITIONS | _COORDINATORS | {""}  # "" is the question's start
_PRONOUNS = frozenset("it it's its they them their theirs he she him her".split())
_DEMONSTRATIVES = frozenset("this these those ones".split())
# "it" that only holds a place: "is it possible to ...", "how long does it take to ...", "is it a good idea to ...".
_PLACEHOLDER_SKIPS = frozenset("is was be been would will should could still really also even ever usually always "
                               "generally a good bad make".split())
_PLACEHOLDER_HEADS = frozenset("possible impossible safe ok okay necessary required recommended advisable better "
                               "best worth normal common true enough easy hard difficult allowed mandatory idea "
                               "sense take takes took cost costs matter matters".split())
_SAME_VERBS = frozenset("apply applies hold holds go goes".split())
_ONE_HEADS = frozenset("which the a this that another other new old first last next right best better same each "
                       "any every default".split())
_STOPWORDS = (
    _AUX | _WH | _PREPOSITIONS | _DETERMINERS | _SUBORDINATORS | _COORDINATORS | _PRONOUNS | _DEMONSTRATIVES
    | frozenset("i i'm me you we us there here that that's there's one no not any some all same yes please thanks "
                "thank just too very much many really again ever still where which".split())
)
# Words that ask for something without naming it: a question made only of these leans on the previous turn.
_GENERIC = frozenset("do doing done work works working mean means meaning happen happens use using need want get "
                     "make go give show tell explain describe help know say like think example examples more "
                     "detail details thing things way ways else other others another difference alternative "
                     "alternatives reason default better best worse faster slower easier safer cheaper recommended "
                     "preferred possible option options sure ok okay right wrong correct".split())
# First words that make a fragment a complete question, request or statement: "What is X?", "Explain X", "I get X".
_PHRASED = _AUX | _WH | frozenset("explain describe show list tell give define compare summarise summarize find "
                                  "help i i'm my we our".split())


def refers_back(question: str) -> bool:
    """True when `question` leans on an earlier turn (see the module docstring for the four rules)."""
    words = _words(question)
    topics = sum(map(_is_topic, words))
    if _CONTINUATION.search(" ".join(words)) or not topics:  # rule 1, and rule 3 (an ellipsis)
        return True
    if topics <= 2 and words[0] not in _PHRASED:  # rule 4 (a fragment)
        return True
    inner, determiner = _inner_clause(words), next((i for i, w in enumerate(words) if w in _DETERMINERS), len(words))
    return any(_stands_for_something(words, i) and not _resolved_inside(words, i, inner, determiner)
               for i in range(len(words)))  # rule 2


def _words(question: str) -> list[str]:
    text = _CODE_SPAN.sub(f" {_CODE_WORD} ", question.replace("\u2019", "'")).lower()
    words = _WORD.findall(text)
    return words[1:] if words[:1] == ["please"] else words


def _stands_for_something(words: Sequence[str], i: int) -> bool:
    """Whether words[i] is used as a pronoun (or a demonstrative), rather than as a placeholder, an existential,
    a relative pronoun or a numeral."""
    word, before, after = words[i], words[i - 1] if i else "", words[i + 1] if i + 1 < len(words) else ""
    if word in ("that", "that's"):  # "is that required?", "explain that in detail"; not "the file that holds ..."
        return not after or before in _BEFORE_DEMONSTRATIVE or after in _PREPOSITIONS
    if word == "there":  # "how do I get there?"; not "is there a way to ...?"
        return after not in _AUX and before not in _AUX
    if word == "one":  # "which one?", "a new one"; not "more than one worker", "one of the workers"
        return after != "of" and (before in _ONE_HEADS or not after)
    if word == "same":  # "does the same apply?", "do the same with the API"; not "the same key for two gurus"
        return before == "the" and (not _is_topic(after) or after in _SAME_VERBS)
    if word in ("it", "it's"):
        return not _placeholder(words, i)
    return word in _PRONOUNS or word in _DEMONSTRATIVES


def _placeholder(words: Sequence[str], i: int) -> bool:
    """'it' holding the place of a clause that follows: "is it safe to ...", "does it matter which ..."."""
    for j in range(i + 1, min(i + 5, len(words))):
        if words[j] in _PLACEHOLDER_HEADS:
            return j + 1 < len(words)  # "is it safe?" alone asks about something said before
        if words[j] not in _PLACEHOLDER_SKIPS:
            return False
    return False


def _inner_clause(words: Sequence[str]) -> int:
    """Index of the first clause break that follows a named topic (len(words) when there is none)."""
    topics = 0
    for j, word in enumerate(words[:-1]):
        opens_question = words[j + 1] in _OPENS_QUESTION  # "what is X and how do I use it?"
        if topics and (word in _SUBORDINATORS or word in _COORDINATORS and opens_question) or (
                topics >= 2 and word in _COORDINATORS):
            return j
        topics += _is_topic(word)
    return len(words)


def _resolved_inside(words: Sequence[str], i: int, inner: int, determiner: int) -> bool:
    """Whether the question names what words[i] stands for: before a clause break the pronoun comes after, or,
    for a possessive, as a determiner-led subject ("how does a worker report its status", not "the value of
    its ...")."""
    possessive = words[i] in ("its", "their", "her")
    return inner < i or possessive and determiner < i and words[i - 1] not in _PREPOSITIONS


def _is_topic(word: str) -> bool:
    return word not in _STOPWORDS and word not in _GENERIC and word.removesuffix("s") not in _GENERIC
