"""What every import command does with its file: read it, or report each bad line and stop."""

from __future__ import annotations

from pathlib import Path
from typing import Sequence

from django.core.management.base import BaseCommand, CommandError

from problems.bank_io import LineError


def read_input(path: Path) -> bytes:
    try:
        return path.read_bytes()
    except OSError as exc:
        raise CommandError(f"cannot read {path}: {exc.strerror}") from exc


def refuse_bad_lines(command: BaseCommand, path: Path, errors: Sequence[LineError], what: str = "nothing was imported") -> None:
    """Print `FILE:LINE: reason` for each bad line and fail the command; a no-op without errors."""
    if not errors:
        return
    for error in errors:
        command.stderr.write(f"{path}:{error.line}: {error.reason}")
    raise CommandError(f"{path}: {len(errors)} bad line(s); {what}")
