"""The compiled kernels of StochasTok and Patok (`stochastok.c`; `patok.c` over `patok_states.c`): built on first
use, loaded by ctypes.

The per-token loops of the schemes (expansion attempts, Patok's contraction draws, splicing) cost about a
microsecond per token in Python, as much as the Rust tokenizer's own encoding. The kernels run them on int32
arrays, drawing from each document's numpy generator through numpy's `bitgen_t` interface in the order the
Python code draws: the same ids come out either way, which the tests check scheme by scheme.

The source is compiled once per machine with the system C compiler (`$CC`, else `cc`; no Python headers, so
one build serves every Python) into `<morphcpt cache>/native/` (`tokenization.cache`), keyed by the source's
hash, and written atomically so that the array tasks of one chunk set can start together.
`MORPHCPT_NATIVE` chooses:

    auto (default)  the kernels when they build, else the Python code with one warning (same output, slower)
    off             the Python code (the reference; tests compare against it)
    require         the kernels, or an error saying why they did not build

    kernels = native.load()          # a Kernels, or None (off, or no compiler)
"""

from __future__ import annotations

import atexit
import ctypes
import functools
import hashlib
import logging
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import weakref
from pathlib import Path

import numpy as np

log = logging.getLogger(__name__)

# Compiled together into one library; `kernels.h` is what they share.
SOURCES = tuple(sorted(Path(__file__).parent.glob("*.c")))
HEADERS = tuple(sorted(Path(__file__).parent.glob("*.h")))
FLAGS = ("-O2", "-std=c99", "-fPIC", "-shared", "-fno-fast-math", "-ffp-contract=off")
MODES = ("auto", "off", "require")

I32P = np.ctypeslib.ndpointer(np.int32, flags="C_CONTIGUOUS")
I64P = np.ctypeslib.ndpointer(np.int64, flags="C_CONTIGUOUS")
U8P = np.ctypeslib.ndpointer(np.uint8, flags="C_CONTIGUOUS")
F64P = np.ctypeslib.ndpointer(np.float64, flags="C_CONTIGUOUS")
# Patok's span encoding, called back: (span key, its length, where the ids go, how many fit) -> count (patok.h).
ENCODE_FN = ctypes.CFUNCTYPE(ctypes.c_int64, ctypes.c_void_p, ctypes.c_int64, ctypes.c_void_p, ctypes.c_int64)
CALLBACK_FAILED = -2  # what a callback returns when the Python it calls raised (kernels.h: MC_CALLBACK)
ERRORS = {
    -1: "out of memory",
    -2: "a callback failed",
    -3: "a bad argument (word groups or analyses it cannot take, or a state it does not have)",
    -4: "a word group without a state (not interned before the batch)",
    -5: "a span's encoding does not spell as many characters as the span",
}


class NativeUnavailable(RuntimeError):
    """The kernels were required (`MORPHCPT_NATIVE=require`) but could not be built or loaded."""


def mode() -> str:
    value = os.environ.get("MORPHCPT_NATIVE", "auto").strip().lower() or "auto"
    if value not in MODES:
        raise ValueError(f"MORPHCPT_NATIVE={value!r}: use one of {', '.join(MODES)}")
    return value


def load() -> Kernels | None:
    """The kernels, or None when `MORPHCPT_NATIVE=off` or (in `auto`) when they cannot be built here."""
    chosen = mode()
    if chosen == "off":
        return None
    kernels = _load_cached()
    if isinstance(kernels, NativeUnavailable):
        if chosen == "require":
            raise kernels
        _warn_once(str(kernels))
        return None
    return kernels


@functools.lru_cache(maxsize=1)
def _warn_once(reason: str) -> None:
    log.warning(
        "compiled kernels unavailable (%s): StochasTok and Patok run in Python (same output, slower)", reason
    )


@functools.lru_cache(maxsize=1)
def _load_cached() -> Kernels | NativeUnavailable:
    """The kernels of this process, or why they are unavailable (so a failed build is tried once)."""
    try:
        path = build()
        try:
            return Kernels(ctypes.CDLL(str(path)))
        except OSError as error:  # a damaged file in the cache: built again, once
            log.warning("cannot load %s (%s); compiling it again", path, error)
            path.unlink(missing_ok=True)
            return Kernels(ctypes.CDLL(str(build())))
    except NativeUnavailable as error:
        return error
    except OSError as error:
        return NativeUnavailable(f"cannot load the compiled kernels: {error}")


def build(folder: Path | None = None) -> Path:
    """The compiled library for this machine: from the cache when there, else compiled into it now."""
    source = b"".join(path.name.encode() + b"\0" + path.read_bytes() for path in (*SOURCES, *HEADERS))
    # The C library's version is in the key: a cache shared by a login node and a container holds one file each.
    target = f"{' '.join(FLAGS)}|{platform.machine()}|{'-'.join(platform.libc_ver())}"
    key = hashlib.sha256(source + target.encode()).hexdigest()[:16]
    if folder is None:
        from morphcpt.tokenization.cache import cache_root

        root = cache_root()
        folder = root / "native" if root is not None else _scratch_folder()
    path = folder / f"kernels-{key}-{sys.platform}-{platform.machine()}.so"
    if path.exists():
        return path
    compiler = os.environ.get("CC") or shutil.which("cc") or shutil.which("gcc")
    if not compiler:
        raise NativeUnavailable("no C compiler found: set CC or install gcc")
    try:
        folder.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=path.name, suffix=".tmp", dir=folder)
    except OSError as error:  # a read-only cache: build for this process only
        log.warning("cannot write to %s (%s); compiling into a temporary folder", folder, error)
        folder = _scratch_folder()
        path = folder / path.name
        fd, tmp = tempfile.mkstemp(prefix=path.name, suffix=".tmp", dir=folder)
    os.close(fd)
    try:
        done = subprocess.run(
            [compiler, *FLAGS, "-o", tmp, *map(str, SOURCES), "-lm"],
            capture_output=True,
            text=True,
            check=False,
        )
        if done.returncode != 0:
            names = ", ".join(path.name for path in SOURCES)
            raise NativeUnavailable(f"{compiler} failed on {names}: {done.stderr.strip()[-2000:]}")
        os.replace(tmp, path)  # atomic: concurrent builders each write their own file, the last rename wins
    except OSError as error:
        raise NativeUnavailable(f"cannot run {compiler}: {error}") from None
    finally:
        Path(tmp).unlink(missing_ok=True)
    log.info("compiled %s", path)
    return path


def _scratch_folder() -> Path:
    """A temporary folder for a build that has no cache to go to, removed when this process exits (the loaded
    library stays mapped): each process that builds without a cache would otherwise leave one behind in /tmp."""
    folder = Path(tempfile.mkdtemp(prefix="morphcpt-native-"))
    atexit.register(shutil.rmtree, folder, ignore_errors=True)
    return folder


_capsule_pointer = ctypes.pythonapi.PyCapsule_GetPointer
_capsule_pointer.restype = ctypes.c_void_p
_capsule_pointer.argtypes = (ctypes.py_object, ctypes.c_char_p)


def generators(rngs: list[np.random.Generator]) -> np.ndarray:
    """The `bitgen_t *` of each generator (numpy's public C interface), for the kernels to draw from.

    A numpy array, not a ctypes one: `c_void_p * n` makes a new ctypes type per length, and a type is a
    reference cycle, garbage that only the cyclic collector frees (see `preprocess._encode_batch`)."""
    return np.fromiter(
        (_capsule_pointer(rng.bit_generator.capsule, b"BitGenerator") for rng in rngs),
        dtype=np.uintp,
        count=len(rngs),
    )


class Kernels:
    """ctypes signatures of the kernels (`stochastok.c`, `patok.c`)."""

    def __init__(self, lib: ctypes.CDLL) -> None:
        self.lib = lib
        vp, i64, f64 = ctypes.c_void_p, ctypes.c_int64, ctypes.c_double
        lib.mc_stochastok_batch.restype = i64
        # Arrays as addresses (`address`) in the calls made per batch.
        lib.mc_stochastok_batch.argtypes = (vp, vp, i64, vp, f64, vp, vp, vp, vp, vp)
        lib.mc_patok_new.restype = vp
        lib.mc_patok_new.argtypes = (
            i64,
            U8P,
            U8P,
            I32P,
            I64P,
            I32P,
            I32P,
            f64,
            f64,
            f64,
            f64,
            i64,
            I64P,
            F64P,
            ENCODE_FN,
        )
        lib.mc_patok_reset.restype = None
        lib.mc_patok_reset.argtypes = (vp,)
        lib.mc_patok_free.restype = None
        lib.mc_patok_free.argtypes = (vp,)
        lib.mc_patok_add_groups.restype = i64
        lib.mc_patok_add_groups.argtypes = (vp, vp, vp, i64, vp, vp, vp, vp)
        lib.mc_patok_state.restype = i64
        lib.mc_patok_state.argtypes = (vp, i64, vp)
        for name in ("mc_patok_state_ids", "mc_patok_state_cuts"):
            getattr(lib, name).restype = vp
            getattr(lib, name).argtypes = (vp, i64)
        lib.mc_patok_counts.restype = None
        lib.mc_patok_counts.argtypes = (vp, vp)
        lib.mc_patok_unseen.restype = i64
        lib.mc_patok_unseen.argtypes = (vp, vp, vp, i64)
        lib.mc_patok_unseen_output.restype = vp
        lib.mc_patok_unseen_output.argtypes = (vp,)
        lib.mc_patok_num_states.restype = i64
        lib.mc_patok_num_states.argtypes = (vp,)
        lib.mc_patok_batch.restype = i64
        lib.mc_patok_batch.argtypes = (vp, vp, vp, i64, vp, vp)
        # An address, copied out by `copied` (memmove): no ctypes array type per length.
        lib.mc_patok_output.restype = vp
        lib.mc_patok_output.argtypes = (vp,)

    def stochastok(
        self, ids: np.ndarray, bounds: np.ndarray, rngs: list, expand_prop: float, table
    ) -> tuple[np.ndarray, np.ndarray]:
        """Expand documents `ids[bounds[d]:bounds[d+1]]` (int32, int64 bounds): (flat result, lengths)."""
        ids, bounds = checked(ids, bounds, rngs, table.size)
        lengths = np.diff(bounds)
        room = int(bounds[-1]) + int((lengths * expand_prop).astype(np.int64).sum())
        out = np.empty(room, dtype=np.int32)
        out_len = np.empty(len(lengths), dtype=np.int64)
        pointers = generators(rngs)  # kept in a name: alive until the call returns
        total = self.lib.mc_stochastok_batch(
            address(ids, np.int32),
            address(bounds, np.int64),
            len(lengths),
            address(pointers, np.uintp),
            expand_prop,
            address(table.offsets, np.int64),
            address(table.left, np.int32),
            address(table.right, np.int32),
            address(out, np.int32),
            address(out_len, np.int64),
        )
        check(total)
        return out[:total], out_len


def address(a: np.ndarray, dtype) -> int:
    """The address of `a`'s data, once its type and layout are checked (what an `ndpointer` argument checks).

    The calls made for every batch pass addresses: converting an `ndpointer` argument goes through numpy's
    `data_as`, which leaves a reference cycle per argument and call, garbage that only the cyclic collector frees
    (see `preprocess._encode_batch`). The caller keeps `a` alive until the call returns."""
    if a.dtype != dtype or not a.flags.c_contiguous:
        raise TypeError(f"expected a C-contiguous {np.dtype(dtype)} array, got {a.dtype}")
    return a.ctypes.data


def copied(pointer: int, count: int, dtype) -> np.ndarray:
    """A numpy copy of `count` items of `dtype` at `pointer`, a kernel's internal buffer (with memmove:
    `np.ctypeslib.as_array` would make a ctypes array type per length)."""
    out = np.empty(count, dtype=dtype)
    ctypes.memmove(out.ctypes.data, pointer, out.nbytes)
    return out


@functools.cache
def int32_array(n: int) -> type:
    """`ctypes.c_int32 * n`, made once per length: a ctypes array type made per call is garbage with reference
    cycles, which only the cyclic collector frees (see `preprocess._encode_batch`)."""
    return ctypes.c_int32 * n


def checked(ids, bounds, rngs: list, size: int) -> tuple[np.ndarray, np.ndarray]:
    """`ids` as int32 and `bounds` as int64 arrays, after the checks the C code relies on: every id in
    [0, size), bounds from 0 to len(ids) and never decreasing, one generator per document."""
    ids = np.ascontiguousarray(ids, dtype=np.int32)
    bounds = np.ascontiguousarray(bounds, dtype=np.int64)
    if bounds.ndim != 1 or len(bounds) < 1 or bounds[0] != 0 or bounds[-1] != len(ids):
        raise ValueError(f"bounds must run from 0 to {len(ids)} (the number of ids)")
    if (np.diff(bounds) < 0).any():
        raise ValueError("bounds must not decrease")
    if len(rngs) != len(bounds) - 1:
        raise ValueError(f"{len(bounds) - 1} documents but {len(rngs)} generators")
    if len(ids) and (ids.min() < 0 or ids.max() >= size):
        raise ValueError(f"token id out of range [0, {size}): min {ids.min()}, max {ids.max()}")
    return ids, bounds


def check(code: int) -> int:
    if code < 0:
        raise RuntimeError(f"native kernel failed: {ERRORS.get(code, code)}")
    return code


class PatokKernel:
    """One `patok_t` (`patok.c`): Patok's word states and steps, and the scheme's settings.

    The analyses come from Python. `intern_groups(ids, pairs)` is called before each batch with the batch's word
    groups that have no state yet ((start, length) pairs into `ids`, each group once), and must hand their
    analyses to `add_groups` (WordStates does). The kernel makes each group a state, with its affix mask and
    active flag, and makes the states that contraction steps lead to, sharing the analysis of the state they
    come from. A step's result depends only on its span's ids and the morpheme cuts inside it, so it is cached by
    the span (the span cache, `patok_states.c`; `char_len`: characters per piece, to place the cuts), and for a
    span not seen yet `encode_span(ids, cuts)` is called back for the canonical ids of its text cut at `cuts`
    (character offsets in the span), or None (WordStates.encode_span).
    """

    def __init__(
        self,
        kernels: Kernels,
        *,
        opens,
        closes,
        char_len,
        table,
        contract_prop,
        max_attempts_factor,
        affix_awareness,
        expand_prop,
        sizes,
        cdf,
        intern_groups,
        encode_span,
    ) -> None:
        self.lib = kernels.lib
        self.size = len(opens)  # the vocabulary's
        self._error: BaseException | None = None
        self._intern_groups = intern_groups
        self._encode_span = encode_span
        # The ctypes callback and the arrays the kernel points into must live as long as the handle.
        self._keep = (
            np.ascontiguousarray(opens, dtype=np.uint8),
            np.ascontiguousarray(closes, dtype=np.uint8),
            np.ascontiguousarray(char_len, dtype=np.int32),
            table,
            np.asarray(sizes, dtype=np.int64),
            np.asarray([*cdf, 0.0], dtype=np.float64),
            ENCODE_FN(self._guard(self._encode)),
        )
        opens_a, closes_a, char_len_a, _, sizes_a, cdf_a, encode_c = self._keep
        if len(char_len_a) != self.size:
            raise ValueError(f"char_len has {len(char_len_a)} entries for a vocabulary of {self.size}")
        self.handle = self.lib.mc_patok_new(
            self.size,
            opens_a,
            closes_a,
            char_len_a,
            table.offsets,
            table.left,
            table.right,
            contract_prop,
            max_attempts_factor,
            affix_awareness,
            expand_prop,
            len(sizes_a),
            sizes_a,
            cdf_a,
            encode_c,
        )
        if not self.handle:
            raise ValueError(f"the native kernel takes 1 to 64 span sizes, got {len(sizes_a)}")
        weakref.finalize(self, self.lib.mc_patok_free, self.handle)

    def _guard(self, fn):
        def call(*args):
            try:
                return fn(*args)
            except BaseException as error:  # raised again by `run`, after the kernel has stopped
                self._error = error
                return CALLBACK_FAILED

        return call

    def _encode(self, key: int, klen: int, out: int, cap: int) -> int:
        """The callback: the span key [n, ncuts, ids.., cuts..] at `key` -> `encode_span`'s ids at `out`."""
        flat = int32_array(klen).from_address(key)[:]
        n = flat[0]
        new = self._encode_span(flat[2 : 2 + n], tuple(flat[2 + n :]))
        if new is None or len(new) > cap:  # longer than the kernel would keep
            return -1
        if new:
            int32_array(len(new)).from_address(out)[:] = new
        return len(new)

    def add_groups(
        self,
        ids: np.ndarray,
        pairs: np.ndarray,
        cuts: list[int],
        ncuts: list[int],
        extents: list[int],
        nextents,
    ) -> None:
        """The groups `ids[s:s + n]` for the (s, n) pairs in `pairs` (flat, int64) as states, with their analyses:
        `ncuts[k]` morpheme cuts in `cuts` (-1: a group left alone, no analysis) and `nextents[k]` affix-morph
        extents, (start, end) pairs of character offsets, in `extents`, group after group."""
        if not len(ncuts):
            return
        ids = np.ascontiguousarray(ids, dtype=np.int32)
        pairs = np.ascontiguousarray(pairs, dtype=np.int64)
        if len(pairs) != 2 * len(ncuts) or len(nextents) != len(ncuts):
            raise ValueError(
                f"{len(pairs) // 2} groups, {len(ncuts)} cut counts, {len(nextents)} extent counts"
            )
        if len(pairs) and (pairs[0::2].min() < 0 or (pairs[0::2] + pairs[1::2]).max() > len(ids)):
            raise ValueError("a word group runs outside the ids")
        ncuts_a = np.asarray(ncuts, dtype=np.int64)
        nextents_a = np.asarray(nextents, dtype=np.int64)
        cuts_a = np.asarray(cuts, dtype=np.int32)
        extents_a = np.asarray(extents, dtype=np.int32)
        if ncuts_a.clip(0).sum() != len(cuts_a) or 2 * nextents_a.sum() != len(extents_a):
            raise ValueError("the cut or extent counts do not add up to the cuts and extents given")
        check(
            self.lib.mc_patok_add_groups(
                self.handle,
                address(ids, np.int32),
                address(pairs, np.int64),
                len(ncuts_a),
                address(cuts_a, np.int32),
                address(ncuts_a, np.int64),
                address(extents_a, np.int32),
                address(nextents_a, np.int64),
            )
        )

    def state(self, sid: int) -> tuple[tuple[int, ...], int, bool, tuple[int, ...] | None]:
        """State `sid`: its ids, affix mask, active flag and morpheme cuts (None: a state left alone)."""
        info = np.zeros(4, dtype=np.int64)
        check(self.lib.mc_patok_state(self.handle, sid, address(info, np.int64)))
        n, mask, active, ncut = info.tolist()
        ids = copied(self.lib.mc_patok_state_ids(self.handle, sid), n, np.int32)
        cuts = (
            copied(self.lib.mc_patok_state_cuts(self.handle, sid), ncut, np.int32).tolist()
            if ncut > 0
            else []
        )
        return tuple(ids.tolist()), mask & (1 << 64) - 1, bool(active), None if ncut < 0 else tuple(cuts)

    def counts(self) -> dict[str, int]:
        """Contraction steps the kernel took without its step cache (`steps`), how many of them the span cache
        answered (`shared`), and how many it asked Python for (`callbacks`), since it was made (resets keep
        counting)."""
        out = np.zeros(3, dtype=np.int64)
        self.lib.mc_patok_counts(self.handle, address(out, np.int64))
        return dict(zip(("steps", "shared", "callbacks"), out.tolist(), strict=True))

    def reset(self) -> None:
        self.lib.mc_patok_reset(self.handle)

    def num_states(self) -> int:
        return self.lib.mc_patok_num_states(self.handle)

    def run(self, ids: np.ndarray, bounds: np.ndarray, rngs: list) -> tuple[np.ndarray, np.ndarray]:
        """Patok on documents `ids[bounds[d]:bounds[d+1]]` (int32, int64 bounds), in order: (flat result,
        lengths)."""
        ids, bounds = checked(ids, bounds, rngs, self.size)
        out_len = np.empty(len(bounds) - 1, dtype=np.int64)
        unseen = check(
            self.lib.mc_patok_unseen(
                self.handle, address(ids, np.int32), address(bounds, np.int64), len(out_len)
            )
        )
        if unseen:
            self._intern_groups(
                ids, copied(self.lib.mc_patok_unseen_output(self.handle), 2 * unseen, np.int64)
            )
        self._error = None
        pointers = generators(rngs)  # kept in a name: alive until the call returns
        total = self.lib.mc_patok_batch(
            self.handle,
            address(ids, np.int32),
            address(bounds, np.int64),
            len(out_len),
            address(pointers, np.uintp),
            address(out_len, np.int64),
        )
        if self._error is not None:
            error, self._error = self._error, None
            raise error
        check(total)
        if total == 0:
            return np.zeros(0, dtype=np.int32), out_len
        return copied(self.lib.mc_patok_output(self.handle), total, np.int32), out_len
