"""Hidden text: invisible and bidi characters, comments, CSS-hidden elements, outside and inline images."""

from __future__ import annotations

from tests.safety.helpers import described


def test_bidi_controls_are_high_and_each_run_is_spanned() -> None:
    assert described("a\u202eb\u202cc") == [
        ("hidden.bidi_control", "high", "\u202e"),
        ("hidden.bidi_control", "high", "\u202c"),
    ]
    assert described("x\u2066y\u2069") == [
        ("hidden.bidi_control", "high", "\u2066"),
        ("hidden.bidi_control", "high", "\u2069"),
    ]


def test_zero_width_characters_are_medium_but_emoji_joiners_and_a_leading_bom_are_not() -> None:
    assert described("zero\u200b\u200bwidth") == [("hidden.zero_width", "medium", "\u200b\u200b")]
    assert described("family 👨\u200d👩\u200d👧 emoji") == []
    assert described("\ufeffBOM at the start") == []


def test_direction_marks_are_low_in_text_without_right_to_left_script() -> None:
    assert described("price\u200e list") == [("hidden.direction_mark", "low", "\u200e")]
    assert described("שלום\u200f world") == []


def test_html_comments_are_hidden_text_but_tool_markers_are_not() -> None:
    assert described("x<!-- a note only agents read -->y") == [
        ("hidden.html_comment", "medium", "<!-- a note only agents read -->")
    ]
    assert described("<!-- TOC -->\n# Title") == []
    assert described("```html\n<!-- sample -->\n```") == []


def test_markdown_comment_idioms_are_hidden_text() -> None:
    assert described("[//]: # (hidden words here)") == [
        ("hidden.markdown_comment", "medium", "[//]: # (hidden words here)")
    ]


def test_css_hidden_elements_span_to_their_closing_tag() -> None:
    text = '<span style="display:none">secret</span> after'
    assert described(text) == [("hidden.css_hidden", "medium", '<span style="display:none">secret</span>')]
    assert ("hidden.css_hidden", "medium", "<div hidden>words</div>") in described("<div hidden>words</div>")


def test_images_from_outside_hosts_and_data_uris_are_hidden_text() -> None:
    outside = "![d](https://images.cdn-host.xyz/a.png)"
    assert ("hidden.remote_image", "medium", outside) in described(outside)
    assert described("![d](https://evergreen.example.com/a.png)") == []
    inline = "![d](data:image/png;base64,iVBORw0KGgo=)"
    assert described(inline) == [("hidden.data_image", "medium", inline)]
