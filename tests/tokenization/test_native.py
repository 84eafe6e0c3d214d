"""The compiled kernels (`tokenization/native`): they build here, and every scheme gives the same ids through them
as through the Python reference, whatever the batch, the generators' sharing, the caches or a failing callback."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from morphcpt.tokenization import native
from morphcpt.tokenization.schemes import (
    SchemeConfig,
    build_scheme,
    document_rng,
    flatten,
    transform_documents,
    transform_flat,
)
from morphcpt.tokenization.schemes.patok import PatokScheme

CONFIGS = {
    "stochastok": {"name": "stochastok"},
    "stochastok_half": {"name": "stochastok", "expand_prop": 0.5},
    "patok": {"name": "patok"},
    "patok_aware": {"name": "patok", "affix_awareness": 1.0, "expand_prop": 0.5},
    "patok_blind": {"name": "patok", "affix_awareness": 0.0},
    "patok_wide": {
        "name": "patok",
        "affix_awareness": 0.5,
        "contract_prop": 2.0,
        "max_attempts_factor": 3.0,
        "num_toks_to_cont": [1, 2, 5],
        "contract_prob": [0.2, 0.5, 0.3],
    },
    "patok_no_expansion": {"name": "patok", "expand_prop": 0.0},
}
ADVERSARIAL = [
    "mag " * 600,
    "pinagsisikapan" * 80,
    "ma-" * 500,
    "umuulan naglalaro " * 300,
    "",
    "a",
    "\n\n",
    "kumain ng isda\n" * 40,
    "\u2581magluto \u2581\u2581",
    "😀 <eos> <0x41> ñ",
]


@pytest.fixture(scope="module")
def documents(vocab, sample_corpus) -> list[list[int]]:
    with open(sample_corpus, encoding="utf-8") as f:
        texts = [json.loads(line)["text"] for line in f][:300]
    return vocab.encode_batch(texts + ADVERSARIAL)


def build(config: dict, vocab, monkeypatch, mode: str, **kwargs):
    monkeypatch.setenv("MORPHCPT_NATIVE", mode)
    if config["name"] == "patok":
        scheme = PatokScheme(SchemeConfig(**config), vocab, **kwargs)
    else:
        scheme = build_scheme(SchemeConfig(**config), vocab)
    assert scheme.native == (mode != "off")
    return scheme


@pytest.mark.skipif(not (shutil.which("cc") or shutil.which("gcc")), reason="no C compiler on this machine")
def test_the_kernels_build_with_the_system_compiler(tmp_path, monkeypatch):
    path = native.build(tmp_path)
    assert path.parent == tmp_path and path.stat().st_size > 0
    assert native.build(tmp_path) == path  # the second call finds it
    monkeypatch.setenv("MORPHCPT_NATIVE", "require")
    assert isinstance(native.load(), native.Kernels)
    assert {p.name for p in native.SOURCES} == {"stochastok.c", "patok.c", "patok_states.c"}
    assert {p.name for p in native.HEADERS} == {"kernels.h", "patok.h"}
    # The library's key covers the shared header too: a changed header is compiled under a new name.
    changed = tmp_path / "changed.h"
    changed.write_text("/* changed */\n")
    monkeypatch.setattr(native, "HEADERS", (*native.HEADERS, changed))
    assert native.build(tmp_path) != path


@pytest.mark.skipif(not (shutil.which("cc") or shutil.which("gcc")), reason="no C compiler on this machine")
def test_a_damaged_library_in_the_cache_is_compiled_again(tmp_path, monkeypatch):
    monkeypatch.setenv("MORPHCPT_CACHE_DIR", str(tmp_path))
    path = native.build()
    path.write_bytes(b"not a shared library")
    native._load_cached.cache_clear()
    try:
        assert isinstance(native._load_cached(), native.Kernels)
        assert path.stat().st_size > 1000
    finally:
        native._load_cached.cache_clear()


@pytest.mark.skipif(not (shutil.which("cc") or shutil.which("gcc")), reason="no C compiler on this machine")
def test_an_unwritable_cache_builds_into_a_temporary_folder_that_goes_with_the_process(tmp_path):
    (tmp_path / "file").write_text("not a folder")
    path = native.build(tmp_path / "file" / "native")
    assert path.is_file() and not path.is_relative_to(tmp_path)
    # in a process of its own: the folder is there while the library is loaded, and gone once the process ends
    script = (
        "import ctypes, sys\n"
        "from pathlib import Path\n"
        "from morphcpt.tokenization import native\n"
        "path = native.build(Path(sys.argv[1]))\n"
        "ctypes.CDLL(str(path))\n"
        "print(path, path.is_file())\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script, str(tmp_path / "file" / "native")], capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    built, existed = done.stdout.split()
    assert existed == "True" and not Path(built).parent.exists()


def test_a_compiler_that_fails_is_reported_and_auto_falls_back(tmp_path, monkeypatch, caplog):
    monkeypatch.setenv("CC", "false")
    with pytest.raises(native.NativeUnavailable, match="false failed"):
        native.build(tmp_path)
    assert not list(tmp_path.iterdir())  # no half-written library is left behind

    monkeypatch.setattr(native, "_load_cached", lambda: native.NativeUnavailable("no C compiler found"))
    native._warn_once.cache_clear()
    monkeypatch.setenv("MORPHCPT_NATIVE", "auto")
    assert native.load() is None
    assert "run in Python" in caplog.text
    monkeypatch.setenv("MORPHCPT_NATIVE", "require")
    with pytest.raises(native.NativeUnavailable):
        native.load()
    monkeypatch.setenv("MORPHCPT_NATIVE", "fast")
    with pytest.raises(ValueError, match="MORPHCPT_NATIVE"):
        native.load()


@pytest.mark.parametrize("name", sorted(CONFIGS))
def test_the_kernels_give_the_python_ids(name, vocab, documents, monkeypatch):
    """Batches of several sizes, two documents sharing each generator (the parts of a long text): transform_flat
    through the kernels equals the Python reference, document by document, and keeps the text."""
    config = CONFIGS[name]
    reference = build(config, vocab, monkeypatch, "off")
    kernel = build(config, vocab, monkeypatch, "require")
    owner = [i // 2 for i in range(len(documents))]  # documents 2k and 2k+1 share generator k

    def generators():
        shared = [document_rng(5, name, k) for k in range(owner[-1] + 1)]
        return [shared[k] for k in owner]

    expected = transform_documents(reference, documents, generators())
    rngs, got, at = generators(), [], 0
    for size in (1, 7, 64, 1000):  # a pair may straddle two batches: its generator goes on where it stopped
        batch = documents[at : at + size]
        ids, bounds = flatten(batch)
        flat, lengths = transform_flat(kernel, ids, bounds, rngs[at : at + len(batch)])
        assert flat.dtype == np.int32 and lengths.sum() == len(flat)
        got += [part.tolist() for part in np.split(flat, np.cumsum(lengths)[:-1])]
        at += len(batch)
    assert len(got) == len(documents)
    mismatched = [i for i, (a, b) in enumerate(zip(got, expected, strict=True)) if a != b]
    assert not mismatched, f"{len(mismatched)} documents differ, first {mismatched[:5]}"
    assert all(vocab.decode(out) == vocab.decode(ids) for out, ids in zip(got, documents, strict=True))
    assert sum(a != b for a, b in zip(got, documents, strict=True)) > len(documents) // 3  # it did transform


def test_patok_kernel_with_tiny_caches_gives_the_python_ids(vocab, documents, monkeypatch):
    """The word-state tables forgotten every 16 states, on both sides at once: the same ids."""
    reference = build(CONFIGS["patok"], vocab, monkeypatch, "off")
    tiny = build(CONFIGS["patok"], vocab, monkeypatch, "require", cache_size=8)
    for i in range(0, len(documents), 5):
        batch = documents[i : i + 5]
        rngs = [document_rng(1, "patok", j) for j in range(i, i + len(batch))]
        again = [document_rng(1, "patok", j) for j in range(i, i + len(batch))]
        assert tiny.transform_many(batch, rngs) == reference.transform_many(batch, again), i
    assert tiny.words.num_states() == tiny._kernel.num_states() <= 16 + 4 * max(map(len, documents))
    assert not tiny.words.states  # the kernel keeps them


def test_a_failing_analysis_raises_and_leaves_the_kernel_usable(vocab, documents, monkeypatch):
    """An error in the Python the kernel relies on (here: the analyser, while the batch's new groups are
    interned) comes out of `transform` as itself; the tables of both sides are reset, so later documents still
    get the Python ids."""
    scheme = build(CONFIGS["patok"], vocab, monkeypatch, "require")
    reference = build(CONFIGS["patok"], vocab, monkeypatch, "off")
    spans = scheme.pack.spans

    def broken(word):
        if word == "pinagsisikapanpinagsisikapan":
            raise KeyError("analyser broke")
        return spans(word)

    scheme.words.pack = type("Pack", (), {"spans": staticmethod(broken)})()
    with pytest.raises(KeyError, match="analyser broke"):
        scheme.transform(vocab.encode("Magandang araw. " + "pinagsisikapan" * 2), document_rng(0, "patok", 0))
    assert len(scheme.words.states) == scheme._kernel.num_states() == 0
    scheme.words.pack = reference.pack
    for i in range(20):
        assert scheme.transform(documents[i], document_rng(2, "patok", i)) == reference.transform(
            documents[i], document_rng(2, "patok", i)
        ), i


def _groups(scheme, docs: list[list[int]]) -> list[tuple[int, ...]]:
    """The word groups of `docs`, in order, by the scheme's own opener and closer tables."""
    groups = []
    for doc in docs:
        starts = [i for i in range(len(doc)) if i == 0 or scheme._opens[doc[i]] or scheme._closes[doc[i - 1]]]
        groups += [tuple(doc[a:b]) for a, b in zip(starts, starts[1:] + [len(doc)], strict=True)]
    return groups


def test_a_batch_hands_each_new_word_group_to_python_once(vocab, monkeypatch):
    """Before a batch the kernel lists the groups it has no state for: each once, in order of first appearance,
    however often it recurs (here 3,000 distinct words, twice each, so the kernel's set over them grows); a batch
    of groups all known lists none. The results are the Python ids, and the kernel holds those states and the
    ones contraction made."""
    scheme = build(CONFIGS["patok"], vocab, monkeypatch, "require")
    reference = build(CONFIGS["patok"], vocab, monkeypatch, "off")
    letters = "abcdefghijklmnopqrstuvwxyz"
    text = " ".join(f"pag{letters[i % 26]}{letters[i // 26 % 26]}{letters[i // 676]}an" for i in range(3000))
    docs = [vocab.encode(text), vocab.encode("Magandang araw. " + text[:2000])]
    listed: list[list[tuple[int, ...]]] = []
    intern_groups = scheme.words.intern_groups

    def spy(ids, pairs):
        flat = ids.tolist()
        listed.append([tuple(flat[s : s + n]) for s, n in pairs.reshape(-1, 2).tolist()])
        intern_groups(ids, pairs)

    monkeypatch.setattr(scheme._kernel, "_intern_groups", spy)
    for round_ in range(2):
        rngs = [document_rng(3, "patok", round_ * 2 + d) for d in range(2)]
        again = [document_rng(3, "patok", round_ * 2 + d) for d in range(2)]
        assert scheme.transform_many(docs, rngs) == reference.transform_many(docs, again)
    assert len(listed) == 1  # the second round knew every group
    assert listed[0] == list(dict.fromkeys(_groups(scheme, docs)))
    assert len(listed[0]) > 3000
    assert scheme._kernel.num_states() > len(listed[0])  # and contraction's


def test_the_kernel_refuses_a_batch_with_a_group_nobody_interned(vocab, monkeypatch):
    """`mc_patok_batch` called without the listing before it fails with its own code, not with wrong ids."""
    scheme = build(CONFIGS["patok"], vocab, monkeypatch, "require")
    kernel = scheme._kernel
    ids, bounds = flatten([vocab.encode("kumain ng isda")])
    rngs = native.generators([document_rng(0, "patok", 0)])
    out_len = np.empty(1, dtype=np.int64)
    code = kernel.lib.mc_patok_batch(
        kernel.handle,
        native.address(ids, np.int32),
        native.address(bounds, np.int64),
        1,
        native.address(rngs, np.uintp),
        native.address(out_len, np.int64),
    )
    with pytest.raises(RuntimeError, match="not interned before the batch"):
        native.check(code)


def test_a_failing_contraction_step_raises_and_leaves_the_kernel_usable(vocab, documents, monkeypatch):
    """An error in the step callback (Python's fragment encoding) comes out of `transform` as itself, after the
    kernel has stopped; both sides' tables are reset and later documents get the Python ids."""
    scheme = build(CONFIGS["patok"], vocab, monkeypatch, "require")
    reference = build(CONFIGS["patok"], vocab, monkeypatch, "off")

    def broken(text, cuts):
        raise ValueError("step broke")

    monkeypatch.setattr(scheme.words, "_encode_fragments", broken)
    with pytest.raises(ValueError, match="step broke"):
        for i in range(20):
            scheme.transform(documents[i], document_rng(4, "patok", i))
    assert len(scheme.words.states) == scheme._kernel.num_states() == 0
    monkeypatch.undo()
    monkeypatch.setenv("MORPHCPT_NATIVE", "require")
    for i in range(20):
        assert scheme.transform(documents[i], document_rng(4, "patok", i)) == reference.transform(
            documents[i], document_rng(4, "patok", i)
        ), i


def test_states_with_a_common_span_share_its_steps(vocab, documents, monkeypatch, span_steps):
    """A step's result depends only on its span (ids and the cuts inside it), so the kernel answers a span it has
    seen in one state for every other state holding it (" kumain" and " kumain," alike) without calling Python:
    the counts add up, Python is asked exactly `callbacks` times, and the ids are the Python ones."""
    asked = span_steps
    scheme = build(CONFIGS["patok_wide"], vocab, monkeypatch, "require")
    reference = build(CONFIGS["patok_wide"], vocab, monkeypatch, "off")
    asked.clear()
    for i in range(0, len(documents), 8):
        batch = documents[i : i + 8]
        rngs = [document_rng(6, "patok", j) for j in range(i, i + len(batch))]
        again = [document_rng(6, "patok", j) for j in range(i, i + len(batch))]
        got = scheme.transform_many(batch, rngs)
        calls = len(asked)
        assert got == reference.transform_many(batch, again), i
        del asked[calls:]  # the reference's own steps
    counts = scheme._kernel.counts()
    assert counts["callbacks"] == len(asked) and counts["steps"] == counts["shared"] + counts["callbacks"]
    assert counts["shared"] > counts["steps"] // 10, counts


@pytest.mark.parametrize(
    "answer, error",
    [("one letter", "does not spell as many characters"), ("out of range", "a callback failed")],
)
def test_a_wrong_span_encoding_is_refused(answer, error, vocab, documents, monkeypatch):
    """Python's encoding of a span that spells fewer characters than the span (the kernel would splice it into a
    state), or holds an id outside the vocabulary, is refused with its own error; the tables are reset and later
    documents are right."""
    from morphcpt.tokenization.schemes.patok_words import WordStates

    letter = vocab.piece_id("a")
    bogus = {"one letter": (letter,), "out of range": (vocab.size + 3,)}[answer]
    encode_span = WordStates.encode_span
    wrong = [True]
    monkeypatch.setattr(
        WordStates, "encode_span", lambda self, *args: bogus if wrong else encode_span(self, *args)
    )
    scheme = build(CONFIGS["patok"], vocab, monkeypatch, "require")
    reference = build(CONFIGS["patok"], vocab, monkeypatch, "off")
    with pytest.raises(RuntimeError, match=error):
        for i in range(40):
            scheme.transform(documents[i], document_rng(5, "patok", i))
    assert len(scheme.words.states) == scheme._kernel.num_states() == 0
    wrong.clear()
    for i in range(20):
        assert scheme.transform(documents[i], document_rng(5, "patok", i)) == reference.transform(
            documents[i], document_rng(5, "patok", i)
        ), i


def test_the_kernels_states_carry_pythons_analysis(vocab, documents, monkeypatch):
    """Every state the kernel holds, the word groups Python analysed and the states contraction steps made from
    them, has the affix mask, activity and morpheme cuts that Python's own analysis gives its ids."""
    scheme = build(CONFIGS["patok_aware"], vocab, monkeypatch, "require")
    scheme.transform_many(documents[:120], [document_rng(7, "patok", i) for i in range(120)])
    kernel, words = scheme._kernel, scheme.words
    groups = set(_groups(scheme, documents[:120]))
    derived = 0
    for sid in range(kernel.num_states()):
        ids, mask, active, cuts = kernel.state(sid)
        fresh = words.word_info(ids)
        assert (mask, active) == (fresh.affix_mask, fresh.active), (sid, ids)
        assert cuts == (fresh.cuts if fresh.offsets else None), (sid, ids)
        derived += ids not in groups
    assert derived > 100 and sum(kernel.state(sid)[1] != 0 for sid in range(kernel.num_states())) > 100
    with pytest.raises(RuntimeError, match="a bad argument"):
        kernel.state(kernel.num_states())


@pytest.mark.parametrize("name", ["stochastok", "patok"])
def test_bad_arrays_are_refused_before_the_kernel_reads_them(name, vocab, monkeypatch):
    scheme = build(CONFIGS[name], vocab, monkeypatch, "require")
    ids, bounds = flatten([[5, 6, 7], [8]])
    rngs = [document_rng(0, name, 0), document_rng(0, name, 1)]
    with pytest.raises(ValueError, match="out of range"):
        scheme.transform_flat(np.array([5, vocab.size, 7, 8], dtype=np.int32), bounds, rngs)
    with pytest.raises(ValueError, match="bounds must run"):
        scheme.transform_flat(ids, np.array([0, 3, 5]), rngs)
    with pytest.raises(ValueError, match="must not decrease"):
        scheme.transform_flat(ids, np.array([0, 3, 2, 4]), [*rngs, rngs[0]])
    with pytest.raises(ValueError, match="2 documents but 1 generators"):
        scheme.transform_flat(ids, bounds, rngs[:1])
    docs = [vocab.encode("Nagluto siya ng pagkain."), vocab.encode("kumakain")]
    ids, bounds = flatten(docs)
    rngs = [document_rng(0, name, 0), document_rng(0, name, 1)]
    flat, lengths = scheme.transform_flat(
        ids.astype(np.int64), bounds.tolist(), rngs
    )  # converted, not refused
    reference = build(CONFIGS[name], vocab, monkeypatch, "off")
    expected = [reference.transform(ids, document_rng(0, name, i)) for i, ids in enumerate(docs)]
    assert (
        np.split(flat, [lengths[0]])[0].tolist() == expected[0] and flat[lengths[0] :].tolist() == expected[1]
    )
