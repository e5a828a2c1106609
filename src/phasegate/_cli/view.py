"""``phasegate view``: a recorded run's page, written from its recording folder."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from phasegate._cli.output import cannot_write, print_result


def view(
    folder: Annotated[
        Path, typer.Argument(metavar="DIR", help="A recording folder (phasegate run --record).")
    ],
    output: Annotated[
        Path | None,
        typer.Option("--output", "-o", help="Write the page here instead of DIR/index.html."),
    ] = None,
) -> None:
    """Write a recorded run's page (one HTML file, no network, no script) and print its path."""
    from phasegate.recording.page import write_page

    try:
        written = write_page(folder, output)
    except OSError as exc:
        where = output if output is not None else folder / "index.html"
        raise cannot_write(exc, f"cannot write the page to {where}") from None
    print_result(str(written))
