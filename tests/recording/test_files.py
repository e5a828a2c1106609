"""The manifest a recording's files are built from (pure): its figures add up (with the
report's grader sessions, in no part), its unowned entries are exactly what no part owns."""

from __future__ import annotations

import json

from hypothesis import given
from hypothesis import strategies as st

from phasegate.evidence.transcript import ToolResult, Transcript, Usage, UserText
from phasegate.recording.files import ENTRY_CHARS, recording_files
from phasegate.recording.model import PartRecord, RunRecord

_TOKENS = st.integers(min_value=0, max_value=10**7)
_COST = st.integers(min_value=0, max_value=10**8).map(lambda micro: micro / 1_000_000)


@st.composite
def _runs(draw: st.DrawFn) -> RunRecord:
    """A run with parts that own some windows of its transcript, with figures whose sum is
    at most the run's total (the report's split), and sometimes grader sessions (part of the
    total, in no part)."""
    length = draw(st.integers(min_value=0, max_value=30))
    cuts = sorted(draw(st.lists(st.integers(min_value=0, max_value=length), max_size=8)))
    parts = []
    for number, (start, end) in enumerate(zip(cuts[::2], cuts[1::2], strict=False), start=1):
        usage = Usage(input_tokens=draw(_TOKENS), output_tokens=draw(_TOKENS), cost_usd=draw(_COST))
        parts.append(
            PartRecord(
                kind="phase",
                index=number,
                name=f"p{number}",
                visit=None,
                status="accepted",
                attempts=1,
                start=start,
                end=end,
                usage=usage,
                duration_ms=0,
                no_diff="none here",
            )
        )
    grader = draw(
        st.just(Usage())
        | st.builds(Usage, input_tokens=_TOKENS, output_tokens=_TOKENS, cost_usd=_COST)
    )
    owned = sum((p.usage for p in parts), grader)
    total = Usage(
        input_tokens=owned.input_tokens + draw(_TOKENS),
        output_tokens=owned.output_tokens + draw(_TOKENS),
        cost_usd=round(
            sum(p.usage.cost_usd or 0 for p in parts) + (grader.cost_usd or 0) + draw(_COST), 6
        ),
    )
    entries = tuple(UserText(text=str(n)) for n in range(length))
    return RunRecord(kind="task", name="t", run_id="r", verdict="accepted", mode="gate",
                     report_json="{}", transcript=Transcript(entries=entries),
                     parts=tuple(parts), total=total, grader=grader)  # fmt: skip


@given(_runs())
def test_the_parts_and_unowned_add_up_to_the_reports_totals(run: RunRecord) -> None:
    """Tokens exactly, cost within a millionth of a dollar (the grader's sessions in no part
    and never in ``unowned``); unowned ranges are what no part owns, each position once."""
    manifest, _ = recording_files(run, None, written_at="now", phasegate_version=None)
    parts, unowned, grader = manifest["parts"], manifest["unowned"], run.grader
    for name in ("input_tokens", "output_tokens"):
        shares = sum(p[name] for p in parts) + unowned[name] + getattr(grader, name)
        assert shares == getattr(run.total, name)
    assert run.total.cost_usd is not None
    cost = sum(p["cost_usd"] for p in parts) + unowned["cost_usd"] + (grader.cost_usd or 0)
    assert abs(cost - run.total.cost_usd) < 1e-6
    owned = {i for p in parts for i in range(*p["entries"])}
    loose = [i for start, end in unowned["entries"] for i in range(start, end)]
    assert sorted(loose) == loose and set(loose) == set(range(len(run.transcript))) - owned
    assert len(loose) == len(set(loose))


def test_a_huge_tool_result_is_cut_in_the_transcript_and_the_cut_is_said() -> None:
    """A tool result of a million characters keeps its first 256 Ki characters; the
    manifest's cut names the entry; a short entry is kept whole."""
    entries = (
        UserText(text="Read it."),
        ToolResult(tool_use_id="t1", ok=True, content="x" * 1_000_000),
    )
    run = RunRecord(kind="task", name="t", run_id="r", verdict="accepted", mode="gate",
                    report_json="{}", transcript=Transcript(entries=entries), parts=(),
                    total=Usage())  # fmt: skip

    manifest, files = recording_files(run, None, written_at="now", phasegate_version=None)

    first, second = (json.loads(line) for line in files["transcript.jsonl"].splitlines())
    assert first == {"i": 0, "kind": "user", "text": "Read it."}
    assert second["content"] == "x" * ENTRY_CHARS and second["tool_use_id"] == "t1"
    assert manifest["cut"] == [
        f"Entry 1: its content was cut at {ENTRY_CHARS} of its 1000000 characters."
    ]
