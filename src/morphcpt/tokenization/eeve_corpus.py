"""The corpus of an EEVE expansion (`morphcpt.tokenization.eeve`): its texts from sources as `prepare` reads them,
and the language checks of `--candidates morphemes`.

    for text in read_texts(["corpus/tl_ui.txt?txt=block", "chunks/*.jsonl"], max_documents=None): ...
    check_language("morphemes", "nl")      # ExpansionError: no language pack for 'nl'
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Iterator
from pathlib import Path

from morphcpt.errors import UserError

log = logging.getLogger(__name__)


class ExpansionError(UserError, ValueError):
    """The expansion cannot be made as asked; the message says why and what to change."""


def read_texts(
    sources: Iterable[str | Path], max_documents: int | None, language: str | None = None
) -> Iterator[str]:
    """The texts of the corpus sources (see the module docstring), at most `max_documents`. With `language`
    (morpheme candidates), a document tagged with a language that pack does not cover is refused."""
    from morphcpt.corpus.sources import SourceError, SourceSpec, read_source
    from morphcpt.morphology import LANGUAGE_PACKS

    covered = {
        code for code, pack in LANGUAGE_PACKS.items() if language and pack is LANGUAGE_PACKS.get(language)
    }
    n = skipped = 0
    for source in sources:
        try:
            for record in read_source(SourceSpec.parse(str(source))):
                if not record.text:
                    skipped += 1
                    continue
                if covered and record.lang is not None and record.lang not in covered:
                    raise ExpansionError(
                        f"{record.where}: a document tagged lang={record.lang}, but --candidates morphemes cuts "
                        f"words with the {language} language pack ({', '.join(sorted(covered))}); give text in "
                        "that language only, or use --candidates frequent"
                    )
                if max_documents is not None and n >= max_documents:
                    return
                n += 1
                yield record.text
        except SourceError as error:
            raise ExpansionError(f"corpus {source}: {error}") from None
    if skipped:
        log.warning("skipped %d records without text (unreadable, empty or not text)", skipped)


def check_language(candidates: str, language: str) -> None:
    """Morpheme candidates need the corpus language's morphology pack; say which languages have one."""
    from morphcpt.morphology import LANGUAGE_PACKS

    if candidates == "morphemes" and language not in LANGUAGE_PACKS:
        raise ExpansionError(
            f"--candidates morphemes cuts words at the morpheme boundaries of a language pack, and there is none "
            f"for {language!r} (packs: {', '.join(sorted(LANGUAGE_PACKS))}, Filipino); use --candidates frequent"
        )
