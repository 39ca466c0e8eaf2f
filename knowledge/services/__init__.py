"""Writes: keyword-only functions named <entity>_<verb>; each runs in a transaction and audits."""
