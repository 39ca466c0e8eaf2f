"""Charts as server-rendered SVG: pure Python, no Django, no script; each names itself for screen readers."""
