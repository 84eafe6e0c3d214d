"""Stream one language of SEA-PILE v2 (`aisingapore/SEA-PILE-v2`) to a JSONL file of `{"text": ...}` lines.

    python -m morphcpt.corpus.download --output data/corpora/seapile-v2-filipino.jsonl --language fil [--limit N]
    python -m morphcpt.corpus.download --output x.jsonl --language fil --from-parquet /path/to/SEA-PILE-v2

The dataset keeps one folder of parquet shards per language (`tl/` for Filipino; `fil`, `tl`, `tgl`, `filipino`
and `tagalog` all mean that folder; any other code is used as the folder name). From the Hub (gated: needs
`HF_TOKEN`), the shards of that folder are listed and downloaded one at a time into a temporary folder next to
the output, read row group by row group with pyarrow, and deleted. `--from-parquet` reads a local copy instead
(the folder itself or its `<language>/` subfolder).

One row becomes one line, in shard order, so the download is resumable: a rerun counts the complete lines already
in the output, skips that many rows (whole shards by their footer's row count, without downloading them), and
appends. A last line cut off by an interruption is removed first. `--limit N` caps the output at N lines.
`<output>.source.json` records where the lines come from (the Hub or a local folder, and the language folder): a
resume from another source is refused. A shard that cannot be read stops the download with its name.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import logging
import tempfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

from morphcpt import paths
from morphcpt.errors import reported
from morphcpt.jsonio import read_json

log = logging.getLogger(__name__)

REPO_ID = "aisingapore/SEA-PILE-v2"
LANGUAGE_DIRS = {"fil": "tl", "tl": "tl", "tgl": "tl", "filipino": "tl", "tagalog": "tl"}
_BLOCK = 1 << 20


def language_dir(language: str) -> str:
    """The dataset folder of a language code or name (`fil` → `tl`)."""
    return LANGUAGE_DIRS.get(language.lower(), language)


def complete_lines(output: Path) -> int:
    """Count the complete lines of `output`, cutting off a final line that lacks its newline (a torn write)."""
    if not output.exists():
        return 0
    with open(output, "r+b") as handle:
        count, last_newline, position = 0, -1, 0
        while block := handle.read(_BLOCK):
            count += block.count(b"\n")
            found = block.rfind(b"\n")
            if found >= 0:
                last_newline = position + found
            position += len(block)
        if position != last_newline + 1:
            handle.truncate(last_newline + 1)
    return count


@dataclass
class Shard:
    """One parquet shard: its name, its row count (from the footer alone) and a way to get it as a local file."""

    name: str
    num_rows: Callable[[], int]
    local: Callable[[], contextlib.AbstractContextManager[Path]]


def local_shards(folder: str | Path, data_dir: str) -> list[Shard]:
    import pyarrow.parquet as pq

    folder = Path(folder)
    base = folder / data_dir if (folder / data_dir).is_dir() else folder
    files = sorted(base.rglob("*.parquet"))
    if not files:
        raise FileNotFoundError(f"no .parquet files under {base}")
    return [
        Shard(
            name=str(path.relative_to(folder)),
            num_rows=lambda path=path: pq.read_metadata(path).num_rows,
            local=lambda path=path: contextlib.nullcontext(path),
        )
        for path in files
    ]


def hub_shards(data_dir: str, token: str, scratch: Path) -> list[Shard]:
    import pyarrow.parquet as pq
    from huggingface_hub import HfApi, HfFileSystem, hf_hub_download

    files = sorted(
        name
        for name in HfApi(token=token).list_repo_files(REPO_ID, repo_type="dataset")
        if name.startswith(f"{data_dir}/") and name.endswith(".parquet")
    )
    if not files:
        raise FileNotFoundError(f"{REPO_ID} has no parquet shards under {data_dir}/")
    filesystem = HfFileSystem(token=token)

    def num_rows(name: str) -> int:
        with filesystem.open(f"datasets/{REPO_ID}/{name}", "rb") as remote:  # reads only the footer
            return pq.ParquetFile(remote).metadata.num_rows

    @contextlib.contextmanager
    def local(name: str) -> Iterator[Path]:
        with tempfile.TemporaryDirectory(dir=scratch, prefix=".download-") as tmp:
            yield Path(hf_hub_download(REPO_ID, name, repo_type="dataset", token=token, local_dir=tmp))

    return [Shard(name, lambda n=name: num_rows(n), lambda n=name: local(n)) for name in files]


def iter_texts(path: Path, skip: int = 0, column: str = "text") -> Iterator[object]:
    """The `column` values of a parquet file, row group by row group, after skipping `skip` rows."""
    import pyarrow.parquet as pq

    parquet = pq.ParquetFile(path)
    for group in range(parquet.num_row_groups):
        rows = parquet.metadata.row_group(group).num_rows
        if skip >= rows:
            skip -= rows
            continue
        values = parquet.read_row_group(group, columns=[column]).column(column).to_pylist()
        yield from values[skip:]
        skip = 0


def download_seapile(
    output: str | Path,
    language: str = "fil",
    limit: int | None = None,
    token: str | None = None,
    from_parquet: str | Path | None = None,
    progress: bool = True,
) -> int:
    """Append the language's rows to `output` (resuming after its complete lines); return the lines added."""
    from tqdm import tqdm

    output = Path(output)
    output.parent.mkdir(parents=True, exist_ok=True)
    done = complete_lines(output)
    if limit is not None and done >= limit:
        return 0
    data_dir = language_dir(language)
    if from_parquet is not None:
        shards = local_shards(from_parquet, data_dir)
    else:
        token = token or paths.env_setting("HF_TOKEN")  # the environment, else the checkout's .env
        if not token:
            raise RuntimeError(
                f"HF_TOKEN is not set: {REPO_ID} is gated. Accept its terms on the Hub, then put HF_TOKEN=... in "
                ".env (or export it), pass --token, or read a local copy with --from-parquet"
            )
        shards = hub_shards(data_dir, token, output.parent)
    source = (
        f"parquet:{Path(from_parquet).resolve()}:{data_dir}"
        if from_parquet is not None
        else f"hub:{REPO_ID}:{data_dir}"
    )
    check_source(output, source, done)
    added, skip = 0, done
    with open(output, "ab") as out, tqdm(initial=done, total=limit, unit="doc", disable=not progress) as bar:
        for shard in shards:
            try:
                if skip and skip >= (rows := shard.num_rows()):
                    skip -= rows
                    continue
                bar.set_postfix_str(shard.name)
                with shard.local() as path:
                    for text in iter_texts(path, skip):
                        out.write((json.dumps({"text": text}, ensure_ascii=False) + "\n").encode("utf-8"))
                        added += 1
                        bar.update()
                        if limit is not None and done + added >= limit:
                            return added
            except (
                OSError,
                ValueError,
            ) as error:  # pyarrow's ArrowInvalid is a ValueError, ArrowIOError an OSError
                raise ShardError(
                    f"parquet shard {shard.name} cannot be read ({error}); the {done + added} lines before it are "
                    f"kept in {output}: replace the shard (or fetch it again) and rerun to resume"
                ) from error
            skip = 0
    return added


class ShardError(RuntimeError):
    """A parquet shard is corrupt or unreadable; the message names it."""


def source_record(output: Path) -> Path:
    return output.with_name(output.name + ".source.json")


def check_source(output: Path, source: str, done: int) -> None:
    """Record where `output`'s lines come from; refuse to append lines of another source to them.

    A resume counts lines and skips that many rows: from another source (another language, another local copy)
    it would silently append the wrong rows after the right ones."""
    record = source_record(output)
    if record.exists() and done:
        fix = f"delete {record.name} and {output.name} to start the download over"
        recorded = read_json(record, keys=("source",), what="where the download's lines come from", fix=fix)[
            "source"
        ]
        if recorded != source:
            raise ValueError(
                f"{output} holds {done} lines from {recorded}; resuming from {source} would append another "
                f"source's rows. Use another --output, or delete {output} and {record.name} to start over"
            )
    elif done:
        log.warning("%s has %d lines from an unrecorded source; assuming %s", output, done, source)
    record.write_text(json.dumps({"source": source}) + "\n", encoding="utf-8")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--output", required=True, help="JSONL file to write (appended to when it exists)")
    parser.add_argument("--language", default="fil", help="language code or dataset folder (fil/tl → tl)")
    parser.add_argument("--limit", type=int, default=None, help="stop when the output holds this many lines")
    parser.add_argument("--token", default=None, help="Hugging Face token (default: $HF_TOKEN)")
    parser.add_argument(
        "--from-parquet", default=None, help="read a local folder of the dataset's parquet shards"
    )
    args = parser.parse_args(argv)
    with reported("download"):
        added = download_seapile(args.output, args.language, args.limit, args.token, args.from_parquet)
    print(f"{args.output}: {added} lines added, {complete_lines(Path(args.output))} in total")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
