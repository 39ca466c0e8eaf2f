"""Renderers of release artifacts: pure functions from a Snapshot and a ReleaseStamp to bytes."""
