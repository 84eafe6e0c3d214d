"""Errors the user can fix, and how entry points report them: one sentence, no traceback.

An exception class that inherits `UserError` says: the message names the file or setting and the fix, so the
entry point prints it as it is and exits 1. Anything else is a bug and keeps its traceback.

    class DataNotReady(UserError, FileNotFoundError): ...

    def main(argv=None):
        with reported("morphcpt train"):
            ...
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager


class UserError(Exception):
    """Bad input or state that the message explains, with the way on; shown without a traceback."""


@contextmanager
def reported(prog: str, status: int = 1) -> Iterator[None]:
    """Print a `UserError` raised inside as `prog: error: message` on stderr and exit with `status`."""
    try:
        yield
    except UserError as error:
        print(f"{prog}: error: {error}", file=sys.stderr, flush=True)
        raise SystemExit(status) from None
