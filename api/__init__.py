"""The agent read surface: /api/context, entries, the llms.txt family, pages and policy files."""
