"""The README works as written (issue 10 §5): every shell command in it goes through make or the project's
.venv, names make targets, management commands, options and files that exist, and the curl examples answer
the demo as the README says they do."""

from __future__ import annotations

import importlib.util
import re
import shlex
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest
from django.conf import settings
from django.core.management import get_commands, load_command_class

# The curl examples run against the demo, with the in-process caches of earlier tests cleared.
from tests.servingfixtures import clean_serving_state, demo  # noqa: F401

ROOT = Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text(encoding="utf-8")
LOCAL = "http://127.0.0.1:8000"
ASSIGNMENT = re.compile(r"^[A-Z_][A-Z0-9_]*=")


def shell_blocks() -> list[str]:
    """Every command of the ```sh blocks (indented ones too), continuation lines joined."""
    commands: list[str] = []
    for block in re.findall(r"^( *)```sh\n(.*?)^\1```", README, flags=re.M | re.S):
        text = block[1].replace("\\\n", " ")
        commands += [line.strip() for line in text.splitlines() if line.strip() and not line.strip().startswith("#")]
    return commands


def words(command: str) -> list[str]:
    """The command's words up to a pipe, without leading VAR=value assignments and comments."""
    tokens = shlex.split(command, comments=True)
    tokens = tokens[: tokens.index("|")] if "|" in tokens else tokens
    while tokens and ASSIGNMENT.match(tokens[0]):
        if "$(" in tokens[0]:  # VAR=$(a command substitution …): skip to its closing parenthesis
            while not tokens[0].endswith(")"):
                tokens = tokens[1:]
        tokens = tokens[1:]
    return tokens


# Lines that only set a shell variable (EG=http://…) run nothing.
COMMANDS = [command for command in shell_blocks() if words(command)]
TABLE = re.findall(r"^\| `(\.venv/bin/python manage\.py [^`]+)`", README, flags=re.M)


def test_the_readme_has_commands_to_check() -> None:
    assert len(COMMANDS) >= 15
    assert len(TABLE) >= 10


@pytest.mark.parametrize("command", COMMANDS)
def test_every_shell_command_runs_through_make_the_venv_curl_or_docker(command: str) -> None:
    program = words(command)[0]

    assert program in {"make", "curl", "docker", "$EDITOR"} or program.startswith(".venv/bin/"), (
        f"{command!r} needs the project's environment: write it as `.venv/bin/python manage.py …` or a make target"
    )


def test_no_bare_manage_py_command_anywhere() -> None:
    assert not re.search(r"^\s*manage\.py ", README, flags=re.M)
    assert not re.findall(r"\| `manage\.py ", README)


def test_make_targets_exist() -> None:
    makefile = (ROOT / "Makefile").read_text()
    targets = set(re.findall(r"^([a-z][a-z-]*):", makefile, flags=re.M))
    mentioned = set(re.findall(r"`make ([a-z]+)`", README)) | {
        words(c)[1] for c in COMMANDS if words(c)[0] == "make" and len(words(c)) > 1
    }

    assert mentioned and mentioned <= targets


def _expand(token: str) -> str:
    return token.replace("${EVERGREEN_DATASETS:-../shared/datasets}", str(settings.EVERGREEN.datasets))


def _parser(name: str) -> Any:
    commands = get_commands()
    assert name in commands, f"no management command {name}"
    return load_command_class(commands[name], name).create_parser("manage.py", name)


@pytest.mark.parametrize("command", [c for c in COMMANDS if "manage.py" in c and words(c)[0].startswith(".venv")])
def test_management_commands_parse_and_their_files_exist(command: str) -> None:
    tokens = [_expand(token) for token in words(command)]
    name, args = tokens[2], tokens[3:]

    _parser(name).parse_args(args)  # raises CommandError on an unknown option or a missing argument
    for path in (arg for arg in args if arg.endswith(".jsonl")):
        where = Path(path) if Path(path).is_absolute() else ROOT / path
        if "datasets" not in path or where.parent.parent.exists():  # shared datasets are optional here
            assert where.is_file(), f"{command!r}: no file {path}"


@pytest.mark.parametrize("row", TABLE, ids=[row.split()[2] for row in TABLE])
def test_the_commands_table_names_real_commands_and_options(row: str) -> None:
    name = row.split()[2]
    options = {o for action in _parser(name)._actions for o in action.option_strings}

    for option in re.findall(r"(?<![\w-])(--[a-z][a-z-]*)", row):
        assert option in options, f"{name} has no option {option}"


@pytest.mark.parametrize("command", [c for c in COMMANDS if words(c)[:2] == [".venv/bin/python", "-m"]])
def test_bench_invocations_name_real_modules_and_parts(command: str) -> None:
    from bench.__main__ import PARTS

    module, *args = words(command)[2:]
    assert importlib.util.find_spec(module) is not None
    if module == "bench":
        assert {arg for arg in args if not arg.startswith("-")} <= set(PARTS)


def _request(tokens: list[str]) -> tuple[str, str, dict[str, str], str | None]:
    method, headers, data, url = "GET", {}, None, ""
    words_left = iter(tokens[1:])
    for token in words_left:
        if token == "-X":
            method = next(words_left)
        elif token == "-H":
            name, _, value = next(words_left).partition(":")
            headers[name.strip()] = value.strip()
        elif token == "-d":
            data = next(words_left)
        elif token.startswith(LOCAL):
            url = token[len(LOCAL) :]
    return method, url, headers, data


def _layered_demo() -> None:
    from django.contrib.auth import get_user_model

    from knowledge.services.demo import DEMO_USERS
    from knowledge.services.demo_layers import demo_layers_load
    from knowledge.services.releases import release_build

    users = get_user_model().objects
    for namespace in demo_layers_load(people={name: users.get(username=name) for name, _ in DEMO_USERS}).namespaces:
        release_build(namespace_id=namespace.pk)


CURLS = [c for c in COMMANDS if words(c)[0] == "curl" and LOCAL in c]
CURLS += re.findall(r"`(curl '[^`]+)`", README)


@pytest.mark.django_db
@pytest.mark.parametrize("command", CURLS)
def test_the_curl_examples_answer_the_demo_as_the_readme_says(client: Any, demo: Any, command: str) -> None:  # noqa: F811
    method, url, headers, data = _request(words(command))
    expected = 404 if "# 404" in command else 200
    parts = urlsplit(url)
    path = parts.path + (f"?{parts.query}" if parts.query else "")
    if path.startswith("/t/acme"):
        _layered_demo()  # as `make run` loads it after the default namespace

    if method == "POST":
        response = client.post(path, data, content_type=headers.pop("Content-Type"), headers=headers)
    else:
        response = client.get(path, headers=headers)

    assert response.status_code == expected, (command, response.content[:300])
