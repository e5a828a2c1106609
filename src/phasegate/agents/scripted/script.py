"""Scripts of model replies, replayed by the scripted agent and the scripted model server.

A script is an ordered list of replies. Each reply is what the model says in one API
response: optional text, then optional tool calls. A reply with tool calls makes the runtime
run the tools and ask again; a reply without them ends the agent's turn (it tries to stop).

Which reply comes next depends on what the last request holds, so one script can describe
a model that reacts to errors and feedback::

    replies:
      - text: I will fix app.py.
        tools:
          - Edit: {file_path: app.py, old_string: "eval(x)", new_string: "int(x)"}
      - when: tool_error          # only if the edit came back as an error
        tools:
          - Write: {file_path: app.py, content: "..."}
      - text: "PHASE 1 COMPLETE: Files have been edited"
      - when: user                # only after a new instruction, e.g. the gate's feedback
        contains: claimed_not_changed
        text: '{"files_changed": ["app.py"], "description": "..."}'

The next reply is the first one, at or after the current position, whose ``when`` and
``contains`` hold; the position then moves past it. A reply's ``delay`` (seconds) holds its
answer that long, as a model that takes time to think; the model server keeps answering other
requests (another session's) meanwhile. Paths in tool inputs are relative to the work directory
(but ``~/...``, from the home folder, as Claude Code reads it); each runtime makes them absolute
where it needs to.

A pipeline's branches (``needs:``) run sessions at once, each in its own folder
(``.phasegate/branches/BRANCH``). A reply with ``branch: B`` answers only the sessions
working in branch B's folder, each branch keeping its own place in the script, so the order
in which their requests arrive does not change which reply each gets; a branch the script
has no ``branch:`` reply for shares the main list (in arrival order, with ``contains``
telling the stages apart).

A subagent (Claude Code's Agent, formerly Task, tool) holds a conversation of its own,
interleaved with the main one when it runs in the background. A reply with ``agent: D``
answers only the conversation of the subagent whose Agent call the script made with
``description: D``; a reply without ``agent`` only the main conversation. Each conversation
keeps its own position in the script, so the order in which their requests arrive does not
change which reply each gets::

    replies:
      - tools:
          - Agent: {description: edit a.md, prompt: Replace old with new in a.md.,
                    subagent_type: general-purpose, run_in_background: false}
      - agent: edit a.md            # the subagent's first request, and its next
        tools:
          - Edit: {file_path: a.md, old_string: old, new_string: new}
      - agent: edit a.md
        text: Done.
      - text: "PHASE 1 COMPLETE: Files have been edited"   # the main agent, once told

Only the scripted model server tells subagents apart (it knows the Agent calls it sent); the
in-process scripted agent has none and uses only replies without ``agent``.

A ``rubric`` check is judged by a grader: a session of its own whose prompt starts with
:data:`~phasegate.prompts.grader.GRADER_OPENING`, which gives its verdicts through
``StructuredOutput``. A reply with ``grader: true`` answers only a grader's conversation, and
a reply without it never does. The grader's conversation keeps its own position in the script,
apart from the main one and the subagents', and the grader sessions of a run share it: the
second grader session goes on where the first one left off. Here the agent writes a file, the
grader finds a criterion not met, the gate's feedback brings a fix, and the next grader
session finds it met::

    replies:
      - tools:
          - Write: {file_path: NOTES.md, content: "# Notes\\n"}
      - text: Done.
      - grader: true              # the first grader session
        tools:
          - StructuredOutput:
              verdicts: [{id: c1, verdict: not_met, reason: "NOTES.md has a title only."}]
      - when: user                # the gate's feedback to the agent
        tools:
          - Write: {file_path: NOTES.md, content: "# Notes\\n\\nHow to run the tests.\\n"}
      - text: Fixed.
      - grader: true              # the second grader session
        tools:
          - StructuredOutput:
              verdicts: [{id: c1, verdict: met, reason: "NOTES.md says how to run the tests."}]

A reply cannot be both the grader's and a subagent's or a branch's (``grader`` with
``agent`` or ``branch`` is refused when the script loads).

Claude Code's Workflow tool runs a JavaScript script whose ``agent(prompt, {label})`` calls
each start a workflow agent: a conversation of its own whose first user message starts with
:data:`WORKFLOW_HARNESS` and holds the ``agent()`` prompt (each line indented). A reply with
``workflow: L`` answers only the conversation of the workflow agent whose ``agent()`` call had
``label: L``; each workflow agent keeps its own place in the script. The label appears in no
request: the model server reads it from the script it sent in the Workflow call's input,
where ``agent()`` is called with a string literal as its prompt and ``label`` as a string
literal in the options written beside it. A workflow agent whose call the server could not
read that way (a prompt computed at run time) is named by its task text instead::

    replies:
      - tools:
          - Workflow:
              script: |
                export const meta = {name: 'notes', description: 'one agent',
                                     phases: [{title: 'Edit'}]}
                phase('Edit')
                return await agent('Replace old with new in notes.md.',
                                   {label: 'edit notes', phase: 'Edit'})
      - when: tool_result         # "Workflow launched in background": the main agent waits
        text: Waiting for the workflow.
      - workflow: edit notes      # the workflow agent's first request, and its next
        tools:
          - Edit: {file_path: notes.md, old_string: old, new_string: new}
      - workflow: edit notes
        text: Done.
      - when: user                # the <task-notification> with the script's result
        text: The workflow is done.

A reply cannot be both a workflow agent's and a subagent's, a branch's or the grader's
(``workflow`` with ``agent``, ``branch`` or ``grader`` is refused when the script loads).

A request that no reply left matches is never passed over in silence: the cursor records it
as :class:`Unmatched` (which reply was next, what it expected, what came), and the model's
answer says the same, so a script that stopped matching (say, a CLI release that frames its
feedback differently) shows why instead of ending quietly. A subagent's request for which the
script has no reply at all is unmatched too, and so is a grader's request once no ``grader:
true`` reply is left: a grader must give verdicts, and the end of a script gives none.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from phasegate._files import Number, WholeNumber, read_mapping, validate_model
from phasegate.errors import ScriptFileError
from phasegate.phases.completion import full_tool_name

MAX_DELAY = 3600.0

WORKFLOW_HARNESS = "[Workflow harness — computed task]"
"""How the first user message of a workflow agent's conversation starts (Claude Code 2.1.332)."""
"""The longest ``delay`` a reply may ask for, in seconds."""

LastInput = Literal["start", "tool_result", "tool_error", "user"]
"""What the latest request to the model holds: the first prompt, tool results (all ok or at
least one error), or a new user instruction (feedback, a next-stage prompt)."""


class ToolStep(BaseModel):
    """One tool call: a tool name and its input.

    In files, write ``{Edit: {file_path: ..., ...}}`` or ``{tool: Edit, input: {...}}``.
    phasegate's completion tools may be named short: ``phase_complete: {phase: 1}`` and
    ``submit_summary: {summary: {...}}`` stand for their ``mcp__phasegate__`` names.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    tool: str = Field(min_length=1)
    input: dict[str, Any] = Field(default_factory=dict)

    @model_validator(mode="before")
    @classmethod
    def _shorthand(cls, value: object) -> object:
        if isinstance(value, dict) and len(value) == 1 and "tool" not in value:
            ((name, arguments),) = value.items()
            return {"tool": name, "input": arguments if arguments is not None else {}}
        return value

    @field_validator("tool")
    @classmethod
    def _full_name(cls, value: str) -> str:
        return full_tool_name(value)


class HttpFault(BaseModel):
    """An HTTP error the scripted model server answers instead of a reply."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    status: WholeNumber = Field(ge=400, le=599)
    retry_after: Number | None = Field(default=None, ge=0)
    message: str = "scripted failure"


class Reply(BaseModel):
    """One model response, or a fault standing in for one."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    when: LastInput | None = Field(
        default=None, description="Use this reply only when the last request holds this."
    )
    contains: str | None = Field(
        default=None, description="...and only when the last request's text contains this."
    )
    agent: str | None = Field(
        default=None,
        description="Use this reply only in the conversation of the subagent whose Agent "
        "(Task) call had this description; without it, only in the main conversation.",
    )
    branch: str | None = Field(
        default=None,
        description="Use this reply only in the conversation of a pipeline branch: a session "
        "working in that branch's folder (.phasegate/branches/BRANCH); without it, only in a "
        "session working anywhere else, or in a branch the script has no reply for.",
    )
    grader: bool = Field(
        default=False,
        description="Use this reply only in a grader's conversation (a session whose prompt "
        "starts with phasegate's grader opening); without it, never there.",
    )
    workflow: str | None = Field(
        default=None,
        min_length=1,
        description="Use this reply only in the conversation of the workflow agent (Claude "
        "Code's Workflow tool) whose agent() call had this label; without it, never there.",
    )
    text: str | None = None
    tools: tuple[ToolStep, ...] = ()
    error: HttpFault | None = Field(
        default=None, description="Answer this request with an HTTP error (model server)."
    )
    hang: bool = Field(default=False, description="Never answer this request (model server).")
    delay: Number = Field(
        default=0.0,
        ge=0,
        le=MAX_DELAY,
        description="Seconds to wait before answering, as a slow model would; other requests "
        "(a parallel session's) are answered meanwhile.",
    )

    @model_validator(mode="after")
    def _says_something(self) -> Reply:
        if self.text is None and not self.tools and self.error is None and not self.hang:
            raise ValueError("a reply needs text, tools, an error or hang: true")
        return self

    @model_validator(mode="after")
    def _grader_alone(self) -> Reply:
        if self.grader and (self.agent is not None or self.branch is not None):
            other = "agent" if self.agent is not None else "branch"
            raise ValueError(
                f"a reply with grader: true answers only a grader's conversation, so it cannot "
                f"also have {other}: give the grader and the "
                f"{'subagent' if other == 'agent' else 'branch'} a reply each"
            )
        return self

    @model_validator(mode="after")
    def _workflow_alone(self) -> Reply:
        if self.workflow is None:
            return self
        others = [
            name
            for name, given in (
                ("agent", self.agent is not None),
                ("branch", self.branch is not None),
                ("grader", self.grader),
            )
            if given
        ]
        if others:
            raise ValueError(
                f"a reply with workflow: {self.workflow!r} answers only that workflow agent's "
                f"conversation, so it cannot also have {others[0]}: give each conversation a "
                f"reply of its own"
            )
        return self

    def matches(self, last: LastInput, last_text: str) -> bool:
        """Whether this reply answers a request whose latest content is ``last``."""
        if self.when is not None and self.when != last:
            return False
        return self.contains is None or self.contains in last_text


class Script(BaseModel):
    """An ordered list of replies."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    replies: tuple[Reply, ...] = Field(min_length=1)


def load_script(path: str | Path) -> Script:
    """Read a script file (YAML or JSON); errors name the file and field."""
    file = Path(path)
    return validate_model(
        Script, read_mapping(file, ScriptFileError), path=file, error=ScriptFileError
    )


UNMATCHED_PREFIX = "(script stopped matching)"
"""How a scripted model's answer starts when replies are left but none matches the request;
the rest is :meth:`Unmatched.describe`. It is a plain end of turn."""

EXCERPT_CHARS = 300
"""How much of a request's text an :class:`Unmatched` keeps."""


@dataclass(frozen=True, kw_only=True)
class Unmatched:
    """A request that none of the replies left in a script matches."""

    reply: int
    """The 1-based number, in the script, of the first reply left (the one the script expected
    to use next); 0 when the script has no reply left for the request's conversation (for a
    subagent: none at all)."""
    expected: str
    """That reply's conditions, as a script writes them (``when: user, contains: '...'``)."""
    came: LastInput
    """What the request held."""
    text: str
    """The request's text, cut to :data:`EXCERPT_CHARS` characters."""
    agent: str | None = None
    """The subagent whose conversation the request was in (None: the main conversation)."""
    grader: bool = False
    """True when the request was a grader's."""
    workflow: str | None = None
    """The label of the workflow agent whose conversation the request was in."""

    def describe(self) -> str:
        """One line for a person: which reply, what it expected, what came."""
        text = self.text if self.text else "(no text)"
        if self.reply == 0 and self.grader:
            return (
                "no script reply is left for the grader's conversation (a reply with grader: "
                f"true); its request held {self.came}: {text!r}"
            )
        if self.reply == 0 and self.workflow is not None:
            return (
                f"no script reply is for the conversation of workflow agent {self.workflow!r} "
                f"(a reply with workflow: {self.workflow!r}); its request held {self.came}: "
                f"{text!r}"
            )
        if self.reply == 0:
            return (
                f"no script reply is for the conversation of subagent {self.agent!r} (a reply "
                f"with agent: {self.agent!r}); its request held {self.came}: {text!r}"
            )
        return (
            f"script reply {self.reply} ({self.expected}) did not match the request, "
            f"which held {self.came}: {text!r}; no later reply matched either"
        )


def conditions(reply: Reply) -> str:
    """A reply's ``when`` and ``contains``, as a script file writes them."""
    parts = [f"branch: {reply.branch!r}"] if reply.branch is not None else []
    parts += [f"agent: {reply.agent!r}"] if reply.agent is not None else []
    parts += ["grader: true"] if reply.grader else []
    parts += [f"workflow: {reply.workflow!r}"] if reply.workflow is not None else []
    if reply.when is not None:
        parts.append(f"when: {reply.when}")
    if reply.contains is not None:
        parts.append(f"contains: {reply.contains!r}")
    return ", ".join(parts) or "no conditions"


_Owner = tuple[str | None, str | None, bool, str | None]
"""Whose replies a list is (or where a conversation keeps its place): (branch, subagent,
grader, workflow agent); (None, None, False, None) is the main conversation's."""


def _owner(reply: Reply) -> _Owner:
    return reply.branch, reply.agent, reply.grader, reply.workflow


class ScriptCursor:
    """Where a replay stands in a script, per conversation; picks the reply for each new
    request."""

    def __init__(self, script: Script) -> None:
        self._replies = script.replies
        self._positions: dict[_Owner, int] = {}
        """Where each conversation stands, by (branch, subagent, grader, workflow agent)."""
        self._furthest: dict[_Owner, int] = {}
        """How far into each list of replies (by its owner) any conversation got."""
        self.unmatched: list[Unmatched] = []
        """Every request that no reply left matched, in order."""

    def next_reply(
        self,
        last: LastInput,
        last_text: str = "",
        *,
        agent: str | None = None,
        branch: str | None = None,
        grader: bool = False,
        workflow: str | None = None,
    ) -> Reply | None:
        """The first reply of ``agent``'s conversation (in ``branch``), of the grader's
        (``grader``), or of the workflow agent labelled ``workflow`` (with ``grader`` or
        ``workflow``, ``agent`` and ``branch`` are not read), at or after its position that
        matches, or None when none is left.

        None while replies are left (not :attr:`exhausted`) means none of them matches: the
        request is then the last entry of :attr:`unmatched`; so is a subagent's or a workflow
        agent's request for which the script has no reply at all, and a grader's once no
        grader reply is left.
        """
        key, replies = self._conversation(branch, agent, grader, workflow)
        position = self._positions.get(key, 0)
        for index in range(position, len(self._replies)):
            reply = self._replies[index]
            if _owner(reply) == replies and reply.matches(last, last_text):
                self._positions[key] = index + 1
                self._furthest[replies] = max(self._furthest.get(replies, 0), index + 1)
                return reply
        mine = [i for i, r in enumerate(self._replies) if _owner(r) == replies]
        left = [i for i in mine if i >= position]
        if left or grader or ((agent is not None or workflow is not None) and not mine):
            text = " ".join(last_text.split())
            if len(text) > EXCERPT_CHARS:
                text = text[: EXCERPT_CHARS - 1] + "…"
            expected = self._replies[left[0]] if left else None
            self.unmatched.append(
                Unmatched(
                    reply=left[0] + 1 if left else 0,
                    expected=conditions(expected) if expected is not None else "",
                    came=last,
                    text=text,
                    agent=None if grader or workflow is not None else agent,
                    grader=grader,
                    workflow=workflow,
                )
            )
        return None

    def left_for(
        self,
        agent: str | None,
        branch: str | None = None,
        *,
        grader: bool = False,
        workflow: str | None = None,
    ) -> bool:
        """Whether replies are left for ``agent``'s conversation (None: the main one) in
        ``branch`` (None: outside any pipeline branch), for the grader's (``grader``), or for
        the workflow agent labelled ``workflow``."""
        key, replies = self._conversation(branch, agent, grader, workflow)
        position = self._positions.get(key, 0)
        return any(_owner(r) == replies for r in self._replies[position:])

    def _conversation(
        self,
        branch: str | None,
        agent: str | None,
        grader: bool = False,
        workflow: str | None = None,
    ) -> tuple[_Owner, _Owner]:
        """Where a request's conversation keeps its place, and which replies it reads: the
        grader's conversation reads the ``grader: true`` replies, in whatever branch it
        works; a branch the script has ``branch:`` replies for reads those; any other branch
        reads the main list from its own place, which starts where the main conversation
        stood when the branch sent its first request (a script written without ``branch:``
        then serves branches running at once, ``contains`` telling their stages apart). A
        workflow agent reads the replies with its label, in whatever branch it works."""
        if workflow is not None:
            return (None, None, False, workflow), (None, None, False, workflow)
        if grader:
            return (None, None, True, None), (None, None, True, None)
        if branch is None or any(r.branch == branch for r in self._replies):
            return (branch, agent, False, None), (branch, agent, False, None)
        key = (f"\0{branch}", agent, False, None)
        if key not in self._positions:
            self._positions[key] = self._positions.get((None, agent, False, None), 0)
        return key, (None, agent, False, None)

    @property
    def exhausted(self) -> bool:
        """True when every reply has been used or skipped, in every conversation."""
        lists = {_owner(r) for r in self._replies}
        return all(
            not any(
                _owner(r) == replies
                for r in self._replies[max(self._positions.get(replies, 0),
                                           self._furthest.get(replies, 0)):]
            )
            for replies in lists
        )  # fmt: skip
