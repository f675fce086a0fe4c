"""What every import command does with its file: read it, or report each bad line and stop."""

from __future__ import annotations

from pathlib import Path
from typing import Iterable, Sequence

from django.core.management.base import BaseCommand, CommandError

from problems.bank_io import LineError


def read_input(path: Path) -> bytes:
    try:
        return path.read_bytes()
    except OSError as exc:
        raise CommandError(f"cannot read {path}: {exc.strerror}") from exc


def known_collection(name: str) -> str:
    """`name` if the bank has a problem in that collection; else a CommandError naming the ones it has,
    so that an export with a mistyped --collection stops rather than writing an empty file."""
    from problems.selectors import unknown_collection

    message = unknown_collection(name)
    if message:
        raise CommandError(message)
    return name


def write_output(command: BaseCommand, target: str, lines: Iterable[str], what: str) -> None:
    """Write export lines to the file `target`, or to standard output when it is "-"."""
    if target == "-":
        for line in lines:
            command.stdout.write(line, ending="")
        return
    count = 0
    try:
        with open(target, "w", encoding="utf-8", newline="") as out:
            for line in lines:
                out.write(line)
                count += 1
    except OSError as exc:  # a missing folder, no permission, a full disk: say so, not a traceback
        raise CommandError(f"cannot write {target}: {exc.strerror or exc}") from exc
    command.stderr.write(f"wrote {count} {what} to {target}")


def refuse_bad_lines(command: BaseCommand, path: Path, errors: Sequence[LineError], what: str = "nothing was imported") -> None:
    """Print `FILE:LINE: reason` for each bad line and fail the command; a no-op without errors."""
    if not errors:
        return
    for error in errors:
        command.stderr.write(f"{path}:{error.line}: {error.reason}")
    raise CommandError(f"{path}: {len(errors)} bad line(s); {what}")
