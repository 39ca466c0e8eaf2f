"""The request log: what agents asked and got, recorded off the hot path (buffered, shipped in batches)."""
