"""Reading a command's input file as UTF-8 lines, with a clear error that names the line of a bad byte."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from django.core.management.base import CommandError

NOT_UTF8 = (
    "{path}:{line}: byte {byte} at column {column} is not UTF-8; nothing was done. "
    "Convert the file to UTF-8 (e.g. iconv -f GB18030 -t UTF-8 {path} > fixed.jsonl) and use that."
)


def text_lines(path: Path) -> Iterator[str]:
    """The file's lines as text (a leading UTF-8 byte-order mark is dropped); CommandError on other encodings."""
    with path.open("rb") as handle:
        for line_no, line in enumerate(handle, start=1):
            raw = line.removeprefix(b"\xef\xbb\xbf") if line_no == 1 else line
            try:
                yield raw.decode("utf-8")
            except UnicodeDecodeError as error:
                byte = f"0x{raw[error.start]:02X}"
                raise CommandError(
                    NOT_UTF8.format(path=path, line=line_no, byte=byte, column=error.start + 1)
                ) from None
