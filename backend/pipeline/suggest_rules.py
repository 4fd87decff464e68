"""The rules behind the offline Suggest draft: a domain sentence from the summary, questions from its terms."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from itertools import chain, zip_longest

from backend.pipeline.extractive import candidate_sentences
from backend.pipeline.text import STOPWORDS, terms

OFFLINE_DRAFTER = "offline-rules"
DOMAIN_SENTENCES = 2
DOMAIN_CHARS = 500
MAX_TITLE_WORDS = 12
MAX_NAME_WORDS = 3

_GENERIC_WORDS = frozenset({"guru", "bot", "assistant", "ai", "helper", "docs", "expert", "gpt", "chat", "qa"})
# Words that are capitalised for grammar or are too common to ask about on their own.
_NOT_NAMES = STOPWORDS | frozenset(
    "also all any each every however here it its many most much no not note one other our see some such than "
    "they this those though thus use using we while yes api url urls http https html json css pdf faq cli ui id "
    "ok todo yaml xml sql cpu gpu ram os etc january february march april may june july august september "
    "october november december monday tuesday wednesday thursday friday saturday sunday".split()
)
_WEAK_START = frozenset("it this that these those they he she we also however but and or so then".split())
_DEFINED = re.compile(
    r"^(?:(?P<article>A|An|The)\s+)?(?P<subject>[\w][\w.+#/-]*(?:\s+[\w][\w.+#/-]*){0,3}?)\s+"
    r"(?P<verb>is|are)\s+(?:a|an|the|one|used|designed|built)\b"
)
_TITLE_SPLIT = re.compile(r"\s+[|—–·-]\s+|\s*::\s*")
_FILE_NAME = re.compile(r"^\S+\.\w{2,5}$")
# A host as a title: an address, host:port, or the "<host> sitemap" / "<host> crawl" name a multi-page source gets.
_ADDRESS = re.compile(r"(^|\s)((\d{1,3}\.){3}\d{1,3}|localhost|[\w-]+(\.[\w-]+)*:\d+)(\s|$)"
                      r"|^\S+\.\S+\s+(sitemap|crawl)$", re.IGNORECASE)
_QUESTION_START = frozenset("what why when where which who how can should is are does do will".split())
_START_TITLES = frozenset({"getting started", "get started", "quickstart", "quick start", "introduction",
                           "overview", "first steps", "tutorial", "start here"})
_PUNCT = ",.;:!?()[]{}\"'“”‘’`*_<>"
GENERIC_QUESTIONS = (
    "What topics do the sources cover?",
    "Where should a beginner start?",
    "What are the main concepts to understand?",
    "What are the most important features?",
    "What problems does this solve?",
)


def _sentences(summary: str) -> list[str]:
    return [s.text for s in candidate_sentences([summary])]


def _stem(word: str) -> str:
    """A word without punctuation and plural s, to count "broker" and "brokers" as one."""
    return word.strip(_PUNCT).removesuffix("s")


def _word_set(summary: str) -> frozenset[str]:
    return frozenset(re.findall(r"[\w+#.-]+", summary))


def topic_of(name: str, summary: str) -> str:
    """The guru's subject from its name ("Celery Guru" -> "Celery") when the summary mentions it."""
    words = name.split()
    while words and words[-1].casefold().strip(_PUNCT) in _GENERIC_WORDS:
        words.pop()
    topic = " ".join(words).strip(_PUNCT + " ")
    mentioned = topic and re.search(rf"(?<!\w){re.escape(topic)}(?!\w)", summary, re.IGNORECASE)
    return topic if mentioned else ""


def offline_domain(*, name: str, summary: str, titles: Sequence[str]) -> str:
    """The summary's most central one or two sentences (by shared terms), in reading order."""
    sentences = [s for s in _sentences(summary) if len(s) <= DOMAIN_CHARS]
    if not sentences:
        named = [t for t in (_clean_title(t) for t in titles) if t]
        return f"{name} answers questions from its sources" + (f": {', '.join(named)}." if named else ".")
    frequency = Counter(t for s in sentences for t in set(terms(s)))

    def score(i: int) -> tuple[bool, float, int]:
        own = set(terms(sentences[i]))
        weak = sentences[i].split()[0].casefold() in _WEAK_START  # "It also…" reads badly on its own
        return weak, -sum(frequency[t] for t in own) / (1 + len(own)), i

    chosen: list[int] = []
    for i in sorted(range(len(sentences)), key=score):
        used = sum(len(sentences[j]) + 1 for j in chosen)
        if len(chosen) < DOMAIN_SENTENCES and used + len(sentences[i]) <= DOMAIN_CHARS:
            chosen.append(i)
    return " ".join(sentences[i] for i in sorted(chosen))


def _lowered_start(phrase: str, words: frozenset[str], names: set[str]) -> str:
    """The phrase with its first word lowercased when that is only grammar's capital (sentence case).

    Kept: names, headline case ("Periodic Tasks"), and a single word the summary never writes in lowercase.
    """
    first, _, rest = phrase.partition(" ")
    if first in names or not first[:1].isupper() or first[1:] != first[1:].lower():
        return phrase
    if any(w[:1].isupper() and w.casefold() not in _NOT_NAMES for w in rest.split()):
        return phrase
    if not rest and first.lower() not in words:
        return phrase
    return f"{first.lower()} {rest}".strip()


def defined_terms(sentences: Sequence[str], words: frozenset[str], names: set[str]) -> list[str]:
    """"What is X?" for each sentence that defines X ("X is a …", "The X is the …")."""
    mentions = Counter(_stem(w) for w in chain.from_iterable(s.casefold().split() for s in sentences))
    questions: list[str] = []
    for sentence in sentences:
        found = _DEFINED.match(sentence)
        if found is None:
            continue
        subject = found.group("subject")
        if any(w.casefold() in _NOT_NAMES for w in subject.split()):
            continue
        if " " not in subject and mentions[_stem(subject.casefold())] < 2:
            continue  # "The result is a list": one passing word, not a subject of the summary
        article = (found.group("article") or "").lower()
        if not article:
            subject = _lowered_start(subject, words, names)
        questions.append(f"What {found.group('verb')} {article + ' ' if article else ''}{subject}?")
    return questions


def _name_like(token: str, first: bool, capitalised: frozenset[str]) -> bool:
    """A name: capitalised mid-sentence (or first, when it is capitalised mid-sentence elsewhere too),
    or an identifier with inner capitals or digits (RabbitMQ, S3)."""
    if len(token) < 2 or token.casefold() in _NOT_NAMES or not token[0].isalpha():
        return False
    if any(c.isupper() for c in token[1:]) or any(c.isdigit() for c in token):
        return True
    return token[0].isupper() and (not first or token in capitalised)


def _mid_sentence_capitals(sentences: Sequence[str]) -> frozenset[str]:
    found = (raw.strip(_PUNCT) for s in sentences for raw in s.split()[1:])
    return frozenset(t for t in found if t[:1].isupper())


def names_in(sentences: Sequence[str]) -> Counter[str]:
    """Proper names and identifiers (runs of up to MAX_NAME_WORDS capitalised words), by occurrences."""
    capitalised = _mid_sentence_capitals(sentences)
    counts: Counter[str] = Counter()
    for sentence in sentences:
        run: list[str] = []
        for position, raw in enumerate(sentence.split()):
            token = raw.strip(_PUNCT)
            name_like = _name_like(token, position == 0, capitalised)
            if run and (not name_like or len(run) == MAX_NAME_WORDS):
                counts[" ".join(run)] += 1
                run = []
            if name_like:
                run.append(token)
                if token != raw:  # punctuation ends the name
                    counts[" ".join(run)] += 1
                    run = []
        if run:
            counts[" ".join(run)] += 1
    return counts


def _clean_title(title: str) -> str:
    """A title without its site suffix ("Tasks — Celery docs" -> "Tasks"); "" for addresses and file names."""
    text = " ".join(title.split())
    if not text or "://" in text or _FILE_NAME.match(text) or _ADDRESS.search(text):
        return ""
    head = _TITLE_SPLIT.split(text)[0].strip(_PUNCT.replace("?", "") + " ")
    return head if 0 < len(head.split()) <= MAX_TITLE_WORDS else ""


def title_question(title: str, topic: str, words: frozenset[str], names: set[str]) -> str:
    """An honest question about what a source is about, shaped by how its title reads."""
    head = _clean_title(title)
    if not head:
        return ""
    lowered = head.casefold()
    first = lowered.split()[0]
    if any(lowered == start or lowered.startswith(start + " ") for start in _START_TITLES):
        return f"How do I get started with {topic}?" if topic else "How do I get started?"
    if lowered.startswith("how to "):
        return f"How do I {head[7:]}?"
    if head.endswith("?"):
        return head
    if first in _QUESTION_START:
        return f"{head}?"
    return f"What should I know about {_lowered_start(head, words, names)}?"


def offline_questions(*, name: str, summary: str, titles: Sequence[str]) -> list[str]:
    """Candidate questions, best first; the caller keeps the distinct, well-formed ones."""
    sentences = _sentences(summary)
    words = _word_set(summary)
    names = names_in(sentences)
    known = set(names)
    topic = topic_of(name, summary)
    about_topic = [f"What is {topic}?", f"What can I do with {topic}?"] if topic else []
    defined = defined_terms(sentences, words, known)
    from_titles = [title_question(t, topic, words, known) for t in titles]
    ranked = sorted(names.items(), key=lambda item: (-item[1], item[0]))
    frequent = [f"What should I know about {n}?" for n, c in ranked if c >= 2 and n != topic]
    rare = [f"What should I know about {n}?" for n, c in ranked if c < 2 and n != topic]
    mixed = [q for q in chain.from_iterable(zip_longest(defined, from_titles, frequent)) if q]
    return [*about_topic, *mixed, *GENERIC_QUESTIONS, *rare]
