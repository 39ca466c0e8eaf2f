"""The knowledge domain: namespaces, entries, versions under review, releases."""
