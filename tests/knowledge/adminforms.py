"""Read an admin page's form as a browser would submit it, so tests can replay a real POST."""

from __future__ import annotations

from html.parser import HTMLParser
from typing import Any

from django.test import Client

FormData = dict[str, list[str]]


class _FormParser(HTMLParser):
    """Collects the successful controls of the form whose id is `form_id` (or of the first form)."""

    def __init__(self, form_id: str | None) -> None:
        super().__init__(convert_charrefs=True)
        self.form_id = form_id
        self.depth = 0  # > 0 while inside the wanted form
        self.done = False
        self.data: FormData = {}
        self._select: str | None = None
        self._select_first: str | None = None
        self._select_chosen = False
        self._option: dict[str, Any] | None = None
        self._textarea: str | None = None
        self._text: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = {k: v or "" for k, v in attrs}
        if tag == "form" and not self.done and self.depth == 0:
            if self.form_id is None or a.get("id") == self.form_id:
                self.depth = 1
            return
        if not self.depth:
            return
        name = a.get("name")
        if tag == "input" and name and "disabled" not in a:
            kind = a.get("type", "text").lower()
            if kind in {"submit", "button", "image", "reset", "file"}:
                return
            if kind in {"checkbox", "radio"} and "checked" not in a:
                return
            self.data.setdefault(name, []).append(a.get("value", "on" if kind in {"checkbox", "radio"} else ""))
        elif tag == "select" and name:
            self._select, self._select_first, self._select_chosen = name, None, False
            self.data.setdefault(name, [])
        elif tag == "option" and self._select is not None:
            self._option = a
            self._text = []
        elif tag == "textarea" and name:
            self._textarea, self._text = name, []

    def handle_data(self, data: str) -> None:
        if self._textarea is not None or self._option is not None:
            self._text.append(data)

    def handle_endtag(self, tag: str) -> None:
        if not self.depth:
            return
        if tag == "form":
            self.depth, self.done = 0, True
        elif tag == "textarea" and self._textarea is not None:
            text = "".join(self._text)
            self.data.setdefault(self._textarea, []).append(text[1:] if text.startswith("\n") else text)
            self._textarea = None
        elif tag == "option" and self._select is not None and self._option is not None:
            value = self._option.get("value", "".join(self._text).strip())
            if self._select_first is None:
                self._select_first = value
            if "selected" in self._option:
                self.data[self._select].append(value)
                self._select_chosen = True
            self._option = None
        elif tag == "select" and self._select is not None:
            if not self._select_chosen and self._select_first is not None:
                self.data[self._select].append(self._select_first)
            self._select = None


def form_data(html: str, form_id: str | None = None) -> FormData:
    parser = _FormParser(form_id)
    parser.feed(html)
    return parser.data


def admin_form(client: Client, url: str) -> FormData:
    """The change or add form at `url` as the client sees it (the admin form's id ends in _form)."""
    response = client.get(url)
    assert response.status_code == 200, f"{url} answered {response.status_code}"
    for line in response.text.splitlines():
        if "<form " in line and '_form"' in line:
            form_id = line.split('id="', 1)[1].split('"', 1)[0]
            return form_data(response.text, form_id)
    return form_data(response.text)


def as_user(user: Any) -> Client:
    client = Client()
    client.force_login(user)
    return client
