"""The stages of a pipeline as a graph: what each waits for, what may run at once, and which
branch (session and work directory) each runs on. Pure: no I/O.

A stage's ``needs`` lists the stages it waits for; without it (``None``) a stage needs the
one before it in the file (the first stage: none), so a file written before ``needs:``
means what it meant; ``needs: []`` starts at once. Names may refer to stages before or after
it in the file.

The branch rule, which the runner follows:

- a stage **continues** its single need's branch (same session, same work directory) when it
  is that stage's only dependent and needs nothing else;
- a stage that needs several stages is a **join**: it continues the branch of the first stage
  it needs in file order (the main line) and merges the others (:meth:`StageGraph.joins`);
- any other stage **starts a new branch named after itself**, forked from the session of its
  single need (:meth:`StageGraph.forks_from`), or in a fresh session for ``needs: []``.

The first stage's branch is the main line. A sequential pipeline (every stage needs exactly
the one before it) is one branch, named after its first stage.

:meth:`StageGraph.of_stages` refuses (with
:class:`~phasegate._files.models.LocatedValueError` naming the stages) an unknown name in
``needs``, a stage needing itself, a name repeated in ``needs``, a cycle, and an
``on_fail.back_to`` that names a stage of another branch or one not before it in its branch.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass, field
from typing import Protocol

from phasegate._files import LocatedValueError


class _OnFail(Protocol):
    @property
    def back_to(self) -> str | None: ...


class GraphStage(Protocol):
    """What the graph reads of a stage: its name, its needs and where it goes back to."""

    @property
    def name(self) -> str:
        """Unique in the pipeline."""

    @property
    def needs(self) -> tuple[str, ...] | None:
        """The stages it waits for; ``None``: the one before it in the file."""

    @property
    def on_fail(self) -> _OnFail:
        """Its ``back_to`` is checked against the branches."""


class _Staged(Protocol):
    @property
    def stages(self) -> Sequence[GraphStage]: ...


@dataclass(frozen=True)
class StageGraph:
    """The stages (in file order) and the needs of each, defaults applied."""

    names: tuple[str, ...]
    _needs: dict[str, tuple[str, ...]] = field(repr=False)
    _dependents: dict[str, tuple[str, ...]] = field(init=False, repr=False)
    _branch: dict[str, str] = field(init=False, repr=False)

    def __post_init__(self) -> None:
        dependents: dict[str, list[str]] = {name: [] for name in self.names}
        for name in self.names:  # file order, so each dependents list is in file order
            for need in self._needs[name]:
                dependents[need].append(name)
        object.__setattr__(self, "_dependents", {k: tuple(v) for k, v in dependents.items()})
        object.__setattr__(self, "_branch", {})

    @classmethod
    def of(cls, pipeline: _Staged) -> StageGraph:
        """The graph of a loaded :class:`~phasegate.Pipeline` (which has passed every check
        below, so this raises nothing)."""
        return cls.of_stages(pipeline.stages)

    @classmethod
    def of_stages(cls, stages: Sequence[GraphStage]) -> StageGraph:
        """The graph of ``stages``, in file order.

        Raises :class:`~phasegate._files.models.LocatedValueError` located at the stage's
        index (``2.needs``, ``3.on_fail.back_to``) for a load error, naming the stages. (A
        :class:`~phasegate.Pipeline` refuses repeated names and unknown ``back_to`` targets
        first, in its own words; they are refused here too, for any other caller.)
        """
        names = tuple(stage.name for stage in stages)
        for index, stage in enumerate(stages):
            if names.index(stage.name) != index:
                raise LocatedValueError(
                    f"stage names must be unique; repeated: {stage.name}", location=(index,)
                )
            if stage.on_fail.back_to is not None and stage.on_fail.back_to not in names:
                raise LocatedValueError(
                    f"stage {stage.name!r}: on_fail.back_to names {stage.on_fail.back_to!r}, "
                    f"which is not a stage; stages: {', '.join(names)}",
                    location=(index, "on_fail", "back_to"),
                )
        needs: dict[str, tuple[str, ...]] = {}
        for index, stage in enumerate(stages):
            needs[stage.name] = _checked_needs(stage, index, names)
        graph = cls(names, needs)
        graph._refuse_cycles({stage.name for stage in stages if stage.needs is not None})
        for name in graph.order():
            graph._branch[name] = graph._branch_rule(name)
        for index, stage in enumerate(stages):
            graph._check_back_to(stage, index)
        return graph

    # --- the graph -----------------------------------------------------------------------

    def needs(self, name: str) -> tuple[str, ...]:
        """The stages ``name`` waits for (defaults applied), in file order."""
        return self._needs[name]

    def dependents(self, name: str) -> tuple[str, ...]:
        """The stages that wait for ``name``, in file order."""
        return self._dependents[name]

    def order(self) -> tuple[str, ...]:
        """A topological order: each stage after all it needs, file order among equals."""
        done: list[str] = []
        placed: set[str] = set()
        while len(done) < len(self.names):
            for name in self.names:
                if name not in placed and all(need in placed for need in self._needs[name]):
                    done.append(name)
                    placed.add(name)
                    break
        return tuple(done)

    def levels(self) -> tuple[tuple[str, ...], ...]:
        """The stages by depth: level 0 needs nothing, each other stage sits one level below
        the deepest stage it needs; file order within a level. Stages of one level can run
        at once."""
        depth: dict[str, int] = {}
        for name in self.order():
            depth[name] = 1 + max((depth[need] for need in self._needs[name]), default=-1)
        count = 1 + max(depth.values())
        return tuple(tuple(n for n in self.names if depth[n] == level) for level in range(count))

    @property
    def sequential(self) -> bool:
        """True when every stage needs exactly the one before it (the first: nothing): the
        pipeline runs as it always has, one stage after another in one session."""
        return all(
            self._needs[name] == self.names[index - 1 : index]
            for index, name in enumerate(self.names)
        )

    def ready(self, accepted: Collection[str], running: Collection[str]) -> tuple[str, ...]:
        """Stages not accepted nor running whose needs are all accepted, in file order."""
        return tuple(
            name
            for name in self.names
            if name not in accepted
            and name not in running
            and all(need in accepted for need in self._needs[name])
        )

    # --- branches ------------------------------------------------------------------------

    def branch_of(self, name: str) -> str:
        """The branch ``name`` runs on: the name of the stage that started it."""
        return self._branch[name]

    def starts_branch(self, name: str) -> bool:
        """True when ``name`` is the first stage of its branch (forked, or fresh)."""
        return self._branch[name] == name

    def forks_from(self, name: str) -> str | None:
        """The stage whose session a new branch forks from (its single need); ``None`` for a
        stage that continues a branch (a join included) or starts fresh (``needs: []``)."""
        needs = self._needs[name]
        return needs[0] if self.starts_branch(name) and needs else None

    def is_join(self, name: str) -> bool:
        """True when ``name`` needs several stages."""
        return len(self._needs[name]) > 1

    def joins(self, name: str) -> tuple[str, ...]:
        """For a join, the stages whose branches it merges into its own: every stage it needs
        but the first in file order (whose branch it continues); empty for any other stage."""
        return self._needs[name][1:] if self.is_join(name) else ()

    @property
    def branches(self) -> tuple[str, ...]:
        """Every branch's name, in file order of the stage that starts it."""
        return tuple(name for name in self.names if self.starts_branch(name))

    def stages_of(self, branch: str) -> tuple[str, ...]:
        """The stages on ``branch``, in the order they run."""
        return tuple(name for name in self.order() if self._branch[name] == branch)

    def outline(self, max_parallel: int | None = None) -> tuple[str, ...]:
        """The graph as lines of text, a level per line: each stage with its branch, where a
        branch forks from and what a join merges, so a user sees what runs at once
        (``max_parallel``: the pipeline's bound, shown when given)."""
        if self.sequential:
            return (
                f"sequential: {len(self.names)} stage(s) one after another in one session "
                f"({' -> '.join(self.names)})",
            )
        levels = self.levels()
        bound = f", at most {max_parallel} at once" if max_parallel is not None else ""
        lines = [
            f"{len(levels)} level(s), {len(self.branches)} branch(es){bound}; a stage starts "
            "once every stage it needs is accepted, so the stages of a level can run at once:"
        ]
        for number, level in enumerate(levels, start=1):
            lines.append(f"  level {number}: {', '.join(self._shown(n) for n in level)}")
        return tuple(lines)

    def _shown(self, name: str) -> str:
        needs = self._needs[name]
        if self.is_join(name):
            how = f"joins {', '.join(needs)} on branch {self._branch[name]}"
        elif not self.starts_branch(name):
            how = f"continues branch {self._branch[name]} after {needs[0]}"
        elif needs:
            how = f"new branch, forked from {needs[0]}"
        elif name == self.names[0]:
            how = "main line"
        else:
            how = "new branch, fresh session"
        return f"{name} ({how})"

    def _branch_rule(self, name: str) -> str:
        needs = self._needs[name]
        if len(needs) > 1:  # a join continues its main line (needs are in file order)
            return self._branch[needs[0]]
        if len(needs) == 1 and self._dependents[needs[0]] == (name,):
            return self._branch[needs[0]]
        return name

    # --- load errors ---------------------------------------------------------------------

    def _refuse_cycles(self, explicit: Collection[str]) -> None:
        """Refuse a cycle, located at the first of its stages (file order) that writes its
        needs (a default need always points back, so every cycle has one)."""
        visiting: list[str] = []
        finished: set[str] = set()

        def visit(name: str) -> None:
            if name in finished:
                return
            if name in visiting:
                cycle = [*visiting[visiting.index(name) :], name]
                first = min((n for n in cycle if n in explicit), key=self.names.index)
                raise LocatedValueError(
                    f"stages {' -> '.join(repr(n) for n in cycle)} need each other in a "
                    "cycle, so none of them can start; drop one of these needs",
                    location=(self.names.index(first), "needs"),
                )
            visiting.append(name)
            for need in self._needs[name]:
                visit(need)
            visiting.pop()
            finished.add(name)

        for name in self.names:
            visit(name)

    def _check_back_to(self, stage: GraphStage, index: int) -> None:
        target = stage.on_fail.back_to
        if target is None:
            return
        where = (index, "on_fail", "back_to")
        branch, theirs = self._branch[stage.name], self._branch[target]
        if branch != theirs:
            raise LocatedValueError(
                f"stage {stage.name!r} (branch {branch!r}) goes back to stage {target!r}, which "
                f"runs on another branch ({theirs!r}); on_fail.back_to must name an earlier "
                f"stage of the same branch: {', '.join(self.stages_of(branch))}",
                location=where,
            )
        line = self.stages_of(branch)
        if line.index(target) >= line.index(stage.name):
            raise ValueError(
                f"stage {stage.name!r}: on_fail.back_to must name an earlier stage, "
                f"not {target!r} (a stage retries itself with on_fail.retry)"
            )


def _checked_needs(stage: GraphStage, index: int, names: tuple[str, ...]) -> tuple[str, ...]:
    """The stage's needs in file order, defaults applied; refuses unknown, self and repeats."""
    if stage.needs is None:
        return names[index - 1 : index]
    where = (index, "needs")
    seen: set[str] = set()
    for need in stage.needs:
        if need == stage.name:
            raise LocatedValueError(
                f"stage {stage.name!r} needs itself; a stage retries itself with on_fail.retry",
                location=where,
            )
        if need not in names:
            raise LocatedValueError(
                f"stage {stage.name!r} needs {need!r}, which is not a stage; stages: "
                f"{', '.join(names)}",
                location=where,
            )
        if need in seen:
            raise LocatedValueError(
                f"stage {stage.name!r} needs {need!r} twice; name each stage once",
                location=where,
            )
        seen.add(need)
    return tuple(sorted(stage.needs, key=names.index))
