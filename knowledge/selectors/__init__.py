"""Reads: keyword-only functions named <entity>_<verb> that never write."""
