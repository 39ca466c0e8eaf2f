"""Conditional loading (issue 16 §2): entries that apply only to the files an agent is working on.

An entry may carry path globs; a request may name the paths it works on. The globs are matched with
wcmatch's ``globmatch`` (a maintained glob library) under one fixed set of flags, so an editor's
preview, the release and every channel agree:

- ``/`` is the only separator, in globs and paths alike; a request path written with ``\\`` (Windows)
  has it turned into ``/``, while in a glob ``\\`` escapes the next character. Paths are relative to
  the project root: ``./`` in front is dropped, absolute paths and ``..`` are refused.
- ``*`` and ``?`` never cross a ``/``; ``**`` as a whole segment spans any number of directories,
  none included (``src/api/**/*.py`` matches ``src/api/x.py`` and ``src/api/v1/x.py``);
  ``docs/**`` matches everything under ``docs/`` but not a file named ``docs``.
- A glob without ``/`` matches the file name at any depth, as in ``.gitignore`` and Cursor rules:
  ``*.sql`` matches ``db/migrations/0001.sql``. A glob with ``/`` is anchored at the project root.
- Matching is case-sensitive (``*.SQL`` does not match ``a.sql``), as on Linux and in Git.
- ``*`` and ``**`` match names that begin with a dot (``**/*.yml`` matches ``.github/ci.yml``);
  ``{a,b}`` alternatives and ``[...]`` classes work; there is no ``!`` negation.

Pure: no Django. Editors' globs are checked by ``glob_problem``, agents' paths by ``paths_normalize``.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Protocol

import numpy as np
from wcmatch import glob

from knowledge.retrieval.contract.shapes import PATH_MAX_LENGTH, PATHS_MAX

FLAGS = glob.GLOBSTAR | glob.MATCHBASE | glob.DOTGLOB | glob.BRACE | glob.FORCEUNIX
GLOBS_MAX = 20  # per entry
GLOB_MAX_LENGTH = 200

GLOB_EMPTY = "A path glob is empty; remove it."
GLOB_TOO_LONG = f"The path glob {{glob!r}} is longer than {GLOB_MAX_LENGTH} characters."
GLOB_ABSOLUTE = "The path glob {glob!r} starts with /; globs are relative to the project root (write src/*.py)."
GLOB_NEGATED = "The path glob {glob!r} starts with !; exclusions are not supported, list the globs that apply."
GLOB_CONTROL = "The path glob {glob!r} contains control characters."
GLOB_PARENT = "The path glob {glob!r} contains '..'; globs are relative to the project root."
GLOBS_TOO_MANY = f"An entry has at most {GLOBS_MAX} path globs."

PATH_EMPTY = "paths holds an empty path; send each path relative to the project root, e.g. src/api/users.py."
PATH_TOO_LONG = f"A path is longer than {PATH_MAX_LENGTH} characters."
PATH_ABSOLUTE = "The path {path!r} is absolute; send paths relative to the project root (src/api/users.py)."
PATH_PARENT = "The path {path!r} contains '..'; send paths relative to the project root."
PATH_CONTROL = "A path contains control characters; send plain text."
PATHS_TOO_MANY = f"paths names more than {PATHS_MAX} paths; send the files the task is about."


def _control(text: str) -> bool:
    return any(unicodedata.category(char) == "Cc" for char in text)


def glob_problem(pattern: str) -> str | None:
    """Why an editor's glob cannot be used, or None. The review form and imports show the message."""
    if not pattern.strip():
        return GLOB_EMPTY
    if len(pattern) > GLOB_MAX_LENGTH:
        return GLOB_TOO_LONG.format(glob=pattern[:40])
    checks = (
        (_control(pattern), GLOB_CONTROL),
        (pattern.startswith("/"), GLOB_ABSOLUTE),
        (pattern.startswith("!"), GLOB_NEGATED),
        (".." in pattern.split("/"), GLOB_PARENT),
    )
    return next((message.format(glob=pattern) for failed, message in checks if failed), None)


def globs_normalize(globs: Iterable[str]) -> tuple[str, ...]:
    """An entry's globs, trimmed, de-duplicated, in the editor's order; raises ValueError on a bad one."""
    kept = tuple(dict.fromkeys(g.strip() for g in globs if g.strip()))
    if len(kept) > GLOBS_MAX:
        raise ValueError(GLOBS_TOO_MANY)
    for pattern in kept:
        problem = glob_problem(pattern)
        if problem is not None:
            raise ValueError(problem)
    return kept


def path_normalize(path: str) -> str:
    """One request path as the globs see it; raises ValueError with the message an agent gets."""
    if _control(path):
        raise ValueError(PATH_CONTROL)
    text = path.strip().replace("\\", "/")
    if len(text) > PATH_MAX_LENGTH:
        raise ValueError(PATH_TOO_LONG)
    while "//" in text:
        text = text.replace("//", "/")
    while text.startswith("./"):
        text = text[2:]
    if not text or text == ".":
        raise ValueError(PATH_EMPTY)
    if text.startswith("/") or (len(text) > 1 and text[1] == ":" and text[0].isalpha()):
        raise ValueError(PATH_ABSOLUTE.format(path=path.strip()[:80]))
    if ".." in text.split("/"):
        raise ValueError(PATH_PARENT.format(path=path.strip()[:80]))
    return text


def paths_normalize(paths: Iterable[str]) -> tuple[str, ...]:
    """A request's paths, normalized, de-duplicated and sorted (the answer does not depend on their order)."""
    listed = list(paths)
    if len(listed) > PATHS_MAX:
        raise ValueError(PATHS_TOO_MANY)
    return tuple(sorted({path_normalize(path) for path in listed}))


def globs_match(globs: Sequence[str], path: str) -> bool:
    """Whether any of `globs` matches one normalized path (the editor's preview uses this too)."""
    return bool(globs) and glob.globmatch(path, list(globs), flags=FLAGS)


class Scoped(Protocol):
    """What the scope reads of an entry (an EntryRecord)."""

    @property
    def paths(self) -> tuple[str, ...]: ...

    @property
    def confidence(self) -> float: ...

    @property
    def layer(self) -> str | None: ...


@dataclass(frozen=True, slots=True)
class Applicable:
    """An entry whose globs match: its index position and the request paths they matched."""

    position: int
    paths: tuple[str, ...]


class PathScope:
    """The entries of one release that carry globs, compiled once, in their index positions.

    ``scoped`` marks them: with ``paths`` they never rank by topic; they are loaded when their globs
    match and left out when they do not. Entries without globs are not in the scope at all.
    """

    def __init__(self, entries: Sequence[Scoped]) -> None:
        scoped = [(position, e.paths, e.confidence) for position, e in enumerate(entries) if e.paths]
        self._compile([e.layer for e in entries], scoped)

    @classmethod
    def of(cls, layers: Sequence[str | None], scoped: Iterable[tuple[int, Sequence[str], float]]) -> PathScope:
        """The scope from columns: every entry's layer, and (position, globs, confidence) of those with globs."""
        scope = cls.__new__(cls)
        scope._compile(layers, scoped)
        return scope

    def _compile(self, layers: Sequence[str | None], scoped: Iterable[tuple[int, Sequence[str], float]]) -> None:
        # Priority order (issue 16 §2): the namespace's own layer before its bases, in their declared
        # order (issue 16 §1); within a layer the higher confidence first, then ID order (index position).
        scoped = list(scoped)
        ranks: dict[str | None, int] = {}
        for layer in layers:
            ranks.setdefault(layer, len(ranks))
        globs = {position: paths for position, paths, _ in scoped}
        ranked = sorted((ranks[layers[p]], -confidence, p) for p, _, confidence in scoped)
        self.scoped = np.zeros(len(layers), dtype=bool)
        self.scoped[list(globs)] = True
        self._matchers = [(position, glob.compile(list(globs[position]), flags=FLAGS)) for _, _, position in ranked]

    def __bool__(self) -> bool:
        return bool(self._matchers)

    def applicable(self, paths: Sequence[str]) -> list[Applicable]:
        """The scoped entries some path matches, in priority order, each with the paths it matched."""
        found: list[Applicable] = []
        for position, matcher in self._matchers:
            matched = tuple(path for path in paths if matcher.match(path))
            if matched:
                found.append(Applicable(position, matched))
        return found


def glob_example(pattern: str) -> str | None:
    """A path the glob matches, for the editor's preview ("with paths src/api/x.py an agent gets …"),
    or None when this simple reading of the glob does not produce one (then the preview names the glob).

    Wildcards become ``x``, ``**/`` nothing, ``{a,b}`` its first alternative, ``[...]`` its first
    character; the result is checked with the matcher itself, so a wrong example is never shown.
    """
    text = re.sub(r"\{([^{},]*)(?:,[^{}]*)?\}", r"\1", pattern)
    text = re.sub(r"\[!?\^?([^\]])[^\]]*\]", r"\1", text)
    text = text.replace("**/", "").replace("**", "x").replace("*", "x").replace("?", "x")
    text = text.rstrip("/") or "x"
    return text if globs_match((pattern,), text) else None
