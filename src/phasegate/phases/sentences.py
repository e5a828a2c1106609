"""Exit conditions written as sentences, read into the structured checks they stand for.

Seed 004's pipeline writes ``exit_when: "architecture.md exists and has >100 lines"``. Where a
check is expected (a stage's ``exit_when``, a phase's or a task's ``checks``, a loop's
``--until``) a sentence in these forms is read as the checks it names:

* ``PATH exists`` → ``file_exists: PATH``;
* ``PATH exists and has >N lines`` → ``file_exists: PATH`` and ``min_lines: {path: PATH, n:
  N+1}`` (strictly more than N); ``>=N lines``, ``≥N lines`` and ``at least N lines`` → ``n:
  N``; ``PATH has >N lines`` alone → the ``min_lines`` check only;
* ``COMMAND passes`` → ``command: COMMAND``, split as a shell would split it (no shell runs
  it);
* clauses joined by ``and`` → one check (or two) per clause, in order.

A word or path with spaces is quoted as for a shell (``'my notes.md' exists``); an ``and``
inside quotes joins nothing; a subject in backticks (```make test` passes``) is read without
them. Each check is built through the same model as its structured form, so a path that
leaves the work directory is refused exactly as it would be there.

Any other sentence is a criterion only a reader can judge ("design.md names every endpoint
prd.md lists"): it becomes a ``rubric`` of that one criterion, which a grader judges
(docs/grader.md). So does a sentence only some of whose clauses are in the forms: the
sentence is judged whole, as written, rather than cut into pieces the writer never meant to
stand alone (write the mechanical part as a sentence of its own to have it run on the disk).

Pure: no file is read and nothing runs. The models keep what each sentence became
(:class:`Reading`) for ``pipeline check`` and ``check`` to print; a definition written back
(``pipeline convert``, :func:`~phasegate.phases.checks.check_as_file`) has the structured form.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, ClassVar, Self

from pydantic import BaseModel, ModelWrapValidatorHandler, PrivateAttr, model_validator

from phasegate._files import LocatedValueError
from phasegate.phases.checks import CHECK_KINDS, Check, Rubric, check_as_file, check_from_data

FORMS = (
    '"PATH exists"',
    '"PATH exists and has >N lines" (or >=N lines, at least N lines)',
    '"COMMAND passes"',
)
"""The sentence forms understood, as a refusal lists them."""

_KIND = re.compile(r"^[A-Za-z_]+$")
_AND = re.compile(r"\s+and\s+", re.IGNORECASE)
_LINES = re.compile(
    r"^(?:(?P<subject>.+?)\s+)?has\s+(?P<bound>>=|≥|>|at\s+least\s+)\s*(?P<n>\d+)\s+lines?\.?$",
    re.IGNORECASE | re.DOTALL,
)
_PASSES = re.compile(r"^(?P<subject>.+?)\s+passes\.?$", re.IGNORECASE | re.DOTALL)
_EXISTS = re.compile(r"^(?P<subject>.+?)\s+exists\.?$", re.IGNORECASE | re.DOTALL)


class SentenceError(ValueError):
    """A sentence that cannot stand for checks: empty, or naming a check its model refuses."""


class _NotAForm(SentenceError):
    """A sentence (or a clause) in none of the forms: a criterion for a grader."""


@dataclass(frozen=True)
class Reading:
    """One sentence and the checks it was read into."""

    sentence: str
    checks: tuple[Check, ...]

    @property
    def graded(self) -> bool:
        """Whether a grader judges it: a sentence in none of the forms."""
        return len(self.checks) == 1 and isinstance(self.checks[0], Rubric)

    def describe(self) -> str:
        """``"a.md exists" → file_exists: a.md``: the sentence, then each check as a file
        writes it, on one line; a sentence in none of the forms says a grader judges it."""
        if self.graded:
            return f'"{self.sentence}" → a grader judges it (rubric of one criterion)'
        return f'"{self.sentence}" → ' + "; ".join(check_line(c) for c in self.checks)


def check_line(check: Check) -> str:
    """``check`` as a file writes it, on one line: ``min_lines: {path: a.md, n: 101}``."""
    import yaml

    text = yaml.safe_dump(
        check_as_file(check), default_flow_style=True, sort_keys=False, width=1 << 30
    )
    return text.strip()[1:-1]  # the outer braces of the one-key mapping


def refusal(sentence: str, problem: str | None = None) -> str:
    """What is said of a sentence phasegate cannot read: the problem, the forms it can."""
    head = (
        f"{sentence!r}: {problem}"
        if problem
        else f"{sentence!r} is none of the forms phasegate reads"
    )
    return (
        f"{head}. Understood: {'; '.join(FORMS)}; clauses joined by 'and'; any other "
        f"sentence, judged by a grader; or a structured check ({', '.join(CHECK_KINDS)})"
    )


def read_sentence(sentence: str) -> tuple[Check, ...]:
    """The checks ``sentence`` names (see the module): those of its forms, or a one-criterion
    ``rubric`` of the whole sentence; a :class:`SentenceError` saying why when it is empty or
    names a check its model refuses (a path outside the work directory)."""
    text = sentence.strip()
    if not text:
        raise SentenceError(refusal(sentence, "the sentence is empty"))
    try:
        clauses = _clauses(text, sentence)
        checks: list[Check] = []
        last_path: str | None = None
        for clause in clauses:
            built, last_path = _clause(clause, last_path, sentence, several=len(clauses) > 1)
            checks.extend(built)
    except _NotAForm:
        return (_build({"rubric": text}, sentence),)
    return tuple(checks)


def checks_from_text(text: str) -> tuple[Check, ...]:
    """One ``--until`` value: a check written ``KIND: VALUE``
    (:func:`~phasegate.phases.checks.check_from_text`; a single word before a colon is read
    as a kind) or a sentence (:func:`read_sentence`). A :class:`ValueError` says what is
    wrong."""
    from phasegate.phases.checks import check_from_text

    kind, colon, _ = text.partition(":")
    if colon and _KIND.match(kind.strip()):  # KIND: VALUE, or meant to be (nope: 1)
        return (check_from_text(text),)
    return read_sentence(text)


def read_field(data: Any, field: str) -> tuple[Any, tuple[Reading, ...]]:
    """A model's raw ``data`` with the sentences of its ``field`` (one sentence, or a list
    mixing sentences and checks) replaced by their checks, and what each sentence became.
    Raises :class:`~phasegate._files.LocatedValueError` at the field (or its item)."""
    if not isinstance(data, dict) or field not in data:
        return data, ()
    value = data[field]
    if isinstance(value, str):
        items: Sequence[object] = [value]
        single = True
    elif isinstance(value, list | tuple):
        items, single = value, False
    else:
        return data, ()
    if not any(isinstance(item, str) for item in items):
        return data, ()
    checks: list[object] = []
    readings: list[Reading] = []
    for index, item in enumerate(items):
        if not isinstance(item, str):
            checks.append(item)
            continue
        try:
            built = read_sentence(item)
        except SentenceError as exc:
            where: tuple[str | int, ...] = (field,) if single else (field, index)
            raise LocatedValueError(str(exc), location=where) from None
        checks.extend(built)
        readings.append(Reading(sentence=item.strip(), checks=built))
    return {**data, field: checks}, tuple(readings)


def _clauses(text: str, sentence: str) -> list[str]:
    """``text`` cut at each ``and`` outside quotes and backticks."""
    clauses: list[str] = []
    start = 0
    quote: str | None = None
    position = 0
    while position < len(text):
        char = text[position]
        if quote is not None:
            if char == "\\" and quote == '"':
                position += 2
                continue
            if char == quote:
                quote = None
        elif char in "'\"`":
            quote = char
        elif char == "\\":
            position += 2
            continue
        elif char.isspace():
            found = _AND.match(text, position)
            if found is not None:
                clauses.append(text[start:position])
                start = position = found.end()
                continue
        position += 1
    if quote is not None:
        raise _NotAForm(refusal(sentence, f"its quote {quote} is never closed"))
    clauses.append(text[start:])
    if any(not clause.strip() for clause in clauses):
        raise _NotAForm(refusal(sentence, "an 'and' joins nothing"))
    return [clause.strip() for clause in clauses]


def _clause(
    clause: str, last_path: str | None, sentence: str, *, several: bool
) -> tuple[list[Check], str | None]:
    """The checks of one clause, and the path a following ``has N lines`` refers to."""
    where = f"the clause {clause!r}" if several else "it"
    if (found := _LINES.match(clause)) is not None:
        subject = found["subject"]
        path = _path(subject, sentence) if subject is not None else last_path
        if path is None:
            raise _NotAForm(
                refusal(sentence, f"{where} counts lines, but no file is named before it")
            )
        count = int(found["n"])
        n = count + 1 if found["bound"] == ">" else count
        return [_build({"min_lines": {"path": path, "n": n}}, sentence)], path
    if (found := _PASSES.match(clause)) is not None:
        argv = _words(found["subject"], sentence)
        return [_build({"command": argv}, sentence)], None
    if (found := _EXISTS.match(clause)) is not None:
        path = _path(found["subject"], sentence)
        return [_build({"file_exists": path}, sentence)], path
    if several:
        raise _NotAForm(refusal(sentence, f"{where} is none of the forms phasegate reads"))
    raise _NotAForm(refusal(sentence))


def _words(subject: str, sentence: str) -> list[str]:
    """``subject`` split as a shell would split it (a whole subject in backticks unwrapped)."""
    subject = subject.strip()
    if len(subject) > 1 and subject.startswith("`") and subject.endswith("`"):
        subject = subject[1:-1]
    try:
        return shlex.split(subject)
    except ValueError as exc:
        raise _NotAForm(refusal(sentence, f"{subject!r}: {exc}")) from None


def _path(subject: str, sentence: str) -> str:
    words = _words(subject, sentence)
    if len(words) != 1:
        raise _NotAForm(
            refusal(
                sentence,
                f"{subject.strip()!r} is not one path (quote a path with spaces: 'my file.md')",
            )
        )
    return words[0]


def _build(data: dict[str, Any], sentence: str) -> Check:
    try:
        return check_from_data(data, text=sentence)
    except ValueError as exc:
        raise SentenceError(str(exc)) from None


class WrittenAsSentences(BaseModel):
    """A model one of whose fields of checks (``sentence_field``) may be written as
    sentences: they are read into checks before validation, and :attr:`sentences` keeps what
    each became (a ``Phase``'s and a ``Task``'s ``checks``, a ``Stage``'s ``exit_when``)."""

    sentence_field: ClassVar[str] = "checks"
    _sentences: tuple[Reading, ...] = PrivateAttr(default=())

    @model_validator(mode="wrap")
    @classmethod
    def _read_sentences(cls, data: Any, handler: ModelWrapValidatorHandler[Self]) -> Self:
        data, readings = read_field(data, cls.sentence_field)
        made = handler(data)
        if readings:
            made._sentences = readings
        return made

    @property
    def sentences(self) -> tuple[Reading, ...]:
        """The sentences its checks were written in, each with the checks it became; empty
        when they were written as checks."""
        return self._sentences
