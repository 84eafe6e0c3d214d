"""How the Filipino analyser ranks the readings of one word (`filipino.FilipinoPack._best_reading` sorts by
`ReadingRanks._score`): a root some frequency or curated list knows before one only a dictionary lists, then the
longest root, then the least marked reading, then the fewest morphs, then a root the lists show as a verb, then the
more frequent root; and the readings whose affixes do not fit their root (`ReadingRanks._misfit`) last. Three
second looks follow: a curated root written far more often (`_curated_alternative`; for i- alone on an unwritten
root, a common one), the root inside a curated derived one (`_read_through`: nagpa|dala, not nag|padala), and the
linker after a listed word (`_linked_alternative`: na|pili|ng, not na|piling). A mixin: the pack it is mixed into
holds the root tiers and the frequencies."""

from __future__ import annotations

from collections.abc import Callable

from morphcpt.morphology.affixes import (
    COPY_LIKE_PREFIXES,
    ISA_LABELS,
    ISA_PREFIXES,
    PREFIXES,
    SYNCOPE,
    is_vowel,
)
from morphcpt.morphology.fallback import COMMON_ROOT_ZIPF, common_root
from morphcpt.morphology.reading import D_SUBSTITUTED, E_RAISED, _Reading
from morphcpt.morphology.syllabify import folded_first_syllable_cv

# `_curated_alternative`: how much more often (Zipf) a curated root must be written to outweigh a longer cut
_FAR_MORE_OFTEN = 1.5
# Pronouns and particles that take no affix (the lists hold them as roots): a reading with one as its root misfits
_PRONOUNS = frozenset({"namin", "natin", "ninyo", "niyon", "nito", "naman", "nila", "niya"})
_N_FINAL_STEMS = tuple(stem for stem in SYNCOPE if stem.endswith("n"))  # kun (kuha), tamn, tingn, ...
# curated roots that are prefixes too (pinaka): no root for a suffix; isa (one) is a root first (isa|hin)
_PREFIX_ROOTS = frozenset(PREFIXES) - ISA_PREFIXES
# the causative prefixes whose pa a pl-/pr- loan's copy may spell (nag|pa|praktis, not nagpa|praktis)
_CAUSATIVE_PA = frozenset({"magpa", "nagpa", "pagpa"})
# the first prefixes that take no -in (`ReadingRanks._misfit`)
_NO_IN_PREFIXES = frozenset({("mag",), ("nag",), ("magka",), ("nagka",), ("na",), ("naka",)})


def _suffix_after_pinaka(r: _Reading) -> bool:
    """Whether the superlative pinaka- stands before a word whose suffix is its own: an adjective of ka-...-an or
    maka-...-an (pinaka|maka|bulu|han, pinaka|ka|raniw|an; not p|in|a|ka|maka|..., a causative before ka-), or a
    verb's copy and suffix right after it (pinaka|ma|mahal|in, pinaka|ta|tangkilik|in)."""
    i = r.prefixes.index("pinaka")
    if r.suffix in ("an", "han") and r.prefixes[i + 1 : i + 2] in (("ka",), ("maka",)):
        return True
    kinds = [kind for _, _, kind in r.spans]
    return r.prefixes[-1] == "pinaka" and kinds[:2] == ["prefix", "reduplicant"]


class ReadingRanks:
    """The ranking of `FilipinoPack`'s readings; `_roots`, `_trusted`, `_rare` and `_zipf` are the pack's."""

    _roots: frozenset[str] | None
    _trusted: frozenset[str] | None
    _rare: frozenset[str]
    _zipf: dict[str, float]
    _derived_roots: dict[str, bool]  # `_derived`'s answers
    _shown_as_verb: Callable[[str], bool]  # `root_evidence.RootEvidence`'s
    _shown_past_linker: Callable[[str], bool]  # `root_evidence.RootEvidence`'s

    def _score(self, f: str, r: _Reading) -> tuple[int, int, int, int, int, int, float]:
        """A root that some frequency or curated list knows before one only a dictionary lists (in|alis, not
        i|nalis); then the longest root; then the least marked reading (a root only known from the headword list, a
        restored nasal-deleted consonant, bare -an/-in after a vowel, which needs an unwritten glottal stop);
        then the fewest morphs; then a root the lists show as a verb (`_shown_as_verb`: nakaw|an, as ninakaw is
        listed, not na|kawan on kawan, a flock); last, the more frequent root (titik|an, not ti|tikan). kinain is
        k|in|ain (root kain), not kina|in."""
        root_chars = sum(e - s for s, e, k in r.spans if k == "root")
        # d -> n weighs twice: at the same cut, a t- or s-root wins (man|alo <- talo, not dalo)
        marked = int(bool(r.restored)) + int(r.restored == D_SUBSTITUTED) + int(r.root not in self._trusted)
        spans = r.spans
        for i, ((s, e, kind), (_, _, after)) in enumerate(zip(spans, spans[1:], strict=False)):
            if kind == "prefix" and after == "root":
                if i >= 2 and spans[i - 1][2] == "infix" and spans[i - 2][2] == "prefix":
                    s = spans[i - 2][0]  # m|in|a: the prefix around the infix (`INFIXED_PREFIXES`)
                tail = COPY_LIKE_PREFIXES.get(f[s:e])
                if tail and folded_first_syllable_cv(f[e:]) == tail and not self._stative_naka(f[s:e], r):
                    marked += 1  # na|ki|kita, not naki|kita; p|in|a|pansin, not pina|pansin
                elif (
                    f[s:e] in _CAUSATIVE_PA
                    and f[e : e + 2] in ("pl", "pr")
                    and folded_first_syllable_cv(f[e:]) == "pa"
                ):
                    # before a loan's pl-/pr- the pa is its copy (nag|pa|praktis), which the causative's
                    # imperfective would repeat (nagpa|pa|praktis)
                    marked += 1
            elif kind == "prefix" and f[s:e] in ("nagsi", "magsi") and after == "reduplicant":
                marked += 2  # nagsi- with its own copy (nagsi|si|sayaw) only where the copy is no root's: nag|si|sipa|an
            elif (
                kind == "prefix"
                and after == "prefix"
                and f[s:e] in ("nagka", "magka")
                and f.startswith("kanda", e)
            ):
                marked += 1  # nag|ka|kanda|hulog: the ka is kanda-'s copy, not nagka-'s
        # a raised e (ataki|hin <- atake) only where no reading of the spelling as written fits
        misfit = self._misfit(r) + (r.restored == E_RAISED)
        if r.suffix in ("an", "in", "nin", "nan"):
            start = next(s for s, _, k in reversed(r.spans) if k == "suffix" and f.startswith(r.suffix, s))
            if len(r.suffix) == 2:
                marked += is_vowel(f[start - 1])
            else:  # -nin after an irregular stem's n is its -in: ku|kun|in, not kuku|nin
                misfit += f[: start + 1].endswith(_N_FINAL_STEMS)
        stacked = max(len(r.prefixes) - 1, 0)  # na|gi|gipit, not nag|i|gipit
        if r.prefixes and not ISA_LABELS.isdisjoint(r.prefixes):
            # after an i- reading of a sa-root: i|sa|sama, i|s|in|auli|ng (not isa|sama, isina|uling)
            marked += 2
        # last, of readings that tie on everything else, the root the lists show as a verb, then the root written
        # more often (katatagan is ka|tatag|an, not ka|ta|tagan)
        return (
            int(r.root in self._rare) + misfit,
            -root_chars,
            marked,
            len(r.spans),
            stacked,
            int(not self._shown_as_verb(r.root)),
            -self._zipf.get(r.root, 0.0),
        )

    def _curated_alternative(self, f: str, best: _Reading, candidates: list[_Reading]) -> _Reading:
        """`best`, or where its root is no curated one, the best reading of `candidates` on a curated root that is
        written `_FAR_MORE_OFTEN` more (Zipf): nam|atay <- patay (data/gold), not na|matay on a dictionary's matay;
        na|gaw|an <- gawa, not nag|awan; pag|ma|ma|laki, not pag|mam|alaki <- balaki. Not a reading the ranking
        calls a misfit, nor one of isa- or the rare -nan/-nin (whose cuts are the likeliest to be wrong). Where `best`
        is i- alone on a root no frequency list knows (i|punin, i|bahin: a dictionary's listed forms of puno and baha),
        a common root (`fallback.common_root`: Zipf 3 or more) serves as well as a curated one: ipun|in <- ipon, iba|hin."""
        if best.root in self._trusted:
            return best
        floor = self._zipf.get(best.root, 0.0) + _FAR_MORE_OFTEN
        # i|punin, i|bahin: i- alone on a root no frequency list knows
        lone_i = best.prefixes == ("i",) and not best.infix and not self._zipf.get(best.root)
        better = [
            r
            for r in candidates
            if (r.root in self._trusted or (lone_i and common_root(self, r.root)))
            and self._zipf.get(r.root, 0.0) >= floor
            and r.suffix not in ("nan", "nin")
            and ISA_LABELS.isdisjoint(r.prefixes)
            and not self._misfit(r)
        ]
        return min(better, key=lambda r: self._score(f, r)) if better else best

    def _read_through(self, f: str, best: _Reading, candidates: list[_Reading]) -> _Reading:
        """`best`, or where it adds affixes to a curated root derived from another curated root (`_derived`: padala
        <- dala, paalam <- alam, laruan <- laro, listed so the noun stays whole), the best reading of `candidates`
        on no such root, if the ranking finds no fault in it: nagpa|dala, ipina|alam, pa|laru|an, data/gold's
        ipina|dala and pang|ulo. Not a reading the ranking calls a misfit or puts on a rare root."""
        if (
            best.restored  # a nasal took the derived root's first sound (mam|aalam <- paalam): nothing to read through
            or not best.affixed
            or not self._derived(best.root)
        ):
            return best
        return self._faultless(f, best, [r for r in candidates if not (self._derived(r.root) and r.affixed)])

    def _linked_alternative(self, f: str, best: _Reading, candidates: list[_Reading]) -> _Reading:
        """`best`, or where it ends on a root with -ng after a vowel and the word less the -ng is a common listed word
        (napili, mahaba), the reading with the same affixes on the root before the linker: na|pili|ng, ma|haba|ng,
        i|t|in|akda|ng (not na|piling, ma|habang, i|t|in|akdang); not where the lists show `best`'s root as a verb
        by a form no linker explains (`_shown_past_linker`: t|um|ulong, as tulungan is listed). Not a reading the
        ranking calls a misfit or puts on a rare root."""
        root = best.root
        if (
            best.linker
            or not best.affixed
            or len(root) < 4
            or not root.endswith("ng")
            or not is_vowel(root[-3])
            or best.spans[-1][1:] != (len(f), "root")
            or self._zipf.get(f[:-2], 0.0) < COMMON_ROOT_ZIPF
        ):
            return best
        linked = [
            r
            for r in candidates
            if r.linker == "ng"
            and r.spans[-1] == (len(f) - 2, len(f), "suffix")
            and r.prefixes == best.prefixes
            and r.infix == best.infix
            and r.reduplicant == best.reduplicant
            and not r.suffix
        ]
        if not linked or self._shown_past_linker(root):
            return best
        return self._faultless(f, best, linked)

    def _faultless(self, f: str, best: _Reading, others: list[_Reading]) -> _Reading:
        """The best of `others` where the ranking finds no fault in it (no misfit, no rare root), else `best`."""
        if not others:
            return best
        other = min(others, key=lambda r: self._score(f, r))
        return other if self._score(f, other)[0] == 0 else best

    def _derived(self, root: str) -> bool:
        """Whether the curated `root` reads itself as affixes on another curated root that is no pronoun (padala is
        pa|dala, laruan laru|an; kaniya, with niya, is none), with no sound put back, no linker and nothing the
        ranking calls a misfit. Cached per root."""
        known = self._derived_roots.get(root)
        if known is None:
            known = root in self._trusted and any(
                r.root != root
                and r.root in self._trusted
                and r.root not in _PRONOUNS
                and (r.prefixes or r.infix or r.suffix)
                and not r.restored
                and not r.linker  # bilang is no bil|an|g <- bili
                and not self._misfit(r)
                for r in self._readings(root)
            )
            self._derived_roots[root] = known
        return known

    def _stative_naka(self, prefix: str, r: _Reading) -> bool:
        """naka-/maka- on a ka-root with no suffix, where the copy reading would win: naka|kabit (attached),
        naka|kandado, maka|kapit (can hold on); not where the root's ma-/na- form is written more often than its
        naka-/maka- form, so na|ka|kamit (makamit), na|ka|kagat and ma|ka|kapal keep the copy; a suffix keeps it too
        (na|ka|kabit|an)."""
        if prefix not in ("naka", "maka") or r.suffix:
            return False

        def written(*prefixes: str) -> float:
            return max(self._zipf.get(p + r.root, 0.0) for p in prefixes)

        return written("ma", "na") <= written("naka", "maka")

    def _misfit(self, r: _Reading) -> int:
        """1 for a reading whose affixes do not fit its root: the superlative pinaka- takes no -an/-in but an
        adjective's of ka-/maka-...-an or a verb's after its copy (`_suffix_after_pinaka`), nor does a prefix read as a
        root (pinakain is p|in|a|kain, not pinaka|in; pinakasalan p|in|a|kasal|an), and a root that is a CV copy of
        another root (lalaki <- laki) is the noun only where no affix asks for the copy: -um-/-in-, -in and the plural
        adjective's ma- do (l|um|a|laki, pa|la|laki|hin, ma|la|laki), ka-...-han and pagka- do not (ka|lalaki|han); the
        same for a copy of an irregular stem before any suffix (`SYNCOPE`: ku|kun|in, not a listed kukun); a pronoun
        takes no affix (`_PRONOUNS`); i- never comes before ma-/na-, mag-, mang-, maka- (inalisan is in|alis|an, not
        i|na|lisan), nor takes -an alone with it (inasahan is in|asa|han, not i|nasa|han); -in stands neither with
        -in- nor after a first prefix of `_NO_IN_PREFIXES` (nakasalin is naka|salin, not na|kasal|in) or one that
        starts with i (ipangilin is ipa|ngilin, not i|pangil|in)."""
        if r.suffix and (("pinaka" in r.prefixes and not _suffix_after_pinaka(r)) or r.root in _PREFIX_ROOTS):
            return 1
        # i- comes after ma-/na- (na|i|lagay), never before them nor before mag-, mang-, maka-: inalisan is in|alis|an
        if r.prefixes[:1] == ("i",) and r.prefixes[1:2] and r.prefixes[1][0] in "mn":
            return 1
        # inamin is in|amin (admitted), not i|namin (our); the linker alone still follows a pronoun (naming)
        if r.root in _PRONOUNS and r.affixed:
            return 1
        # the conveyance i- takes no -an: inasahan is in|asa|han, not i|nasa|han (nasa, desire)
        if r.prefixes == ("i",) and r.suffix in ("an", "han", "nan") and r.spans[0][2] == "prefix":
            return 1
        # -in marks a verb not yet done, and drops in the done forms -in- and na- make: no -in with -in-, na-, naka-,
        # mag-, nag-, magka- or nagka- first (binilin is b|in|ilin, nakasalin naka|salin, magbilin mag|bilin)
        if r.suffix in ("in", "hin") and (r.infix == "in" or r.prefixes[:1] in _NO_IN_PREFIXES):
            return 1
        # nor after i-, ipa-, ipag-, ika-, ...: ipangilin is ipa|ngilin (pangilin, observed day), not i|pangil|in
        if r.suffix in ("in", "hin", "nin") and r.prefixes[:1] and r.prefixes[0].startswith("i"):
            return 1
        root = r.root
        if not (len(root) > 4 and root[0] == root[2] and root[:2] == folded_first_syllable_cv(root[2:])):
            return 0
        asks_for_copy = bool(r.infix) or r.suffix in ("in", "hin") or r.prefixes[-1:] == ("ma",)
        # the copy of an irregular stem before a suffix: kukun|in is ku|kun|in <- kuha
        return int((root[2:] in self._roots and asks_for_copy) or (root[2:] in SYNCOPE and bool(r.suffix)))
