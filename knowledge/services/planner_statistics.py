"""Fresh planner statistics after a bulk write, so the build that follows it gets good query plans.

PostgreSQL plans from statistics that ANALYZE gathers, which autovacuum runs only once a table has
changed by ANALYZE_BASE rows plus ANALYZE_SHARE of its size, and then only at its next round (a
minute apart by default; never where autovacuum is off). A bulk import is followed at once by a
release build, whose snapshot joins every live entry to its version: planned on the statistics of a
near-empty table (one row expected), it ran as a nested loop and took 0.45 s at 100,000 entries
where the hash join it gets with statistics takes 0.20 s, on every build until the next ANALYZE.
So a write as large as would make autovacuum analyse a table analyses it before the build is queued.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence

from django.db import DatabaseError, connection, models

logger = logging.getLogger(__name__)

# PostgreSQL's defaults for autovacuum_analyze_threshold and autovacuum_analyze_scale_factor.
ANALYZE_BASE = 50
ANALYZE_SHARE = 0.1


def planner_statistics_refresh(tables: Sequence[type[models.Model]], *, written: int) -> list[str]:
    """Analyse those of `tables` that `written` new or changed rows make stale by autovacuum's rule
    (their size as the last ANALYZE counted it; a table never analysed has none). The names analysed;
    none on other databases, or when the database refuses (logged: only a slower plan is at stake)."""
    if connection.vendor != "postgresql" or written <= ANALYZE_BASE:
        return []
    names = [table._meta.db_table for table in tables]
    try:
        with connection.cursor() as cursor:
            # By oid, as the search path finds the tables (a name alone may be another schema's table).
            cursor.execute("SELECT relname, reltuples FROM pg_class WHERE oid = ANY(%s::regclass[])", [names])
            counted = {name: max(float(rows), 0.0) for name, rows in cursor.fetchall()}
            stale = [name for name in names if written > ANALYZE_BASE + ANALYZE_SHARE * counted.get(name, 0.0)]
            for name in stale:
                cursor.execute(f"ANALYZE {connection.ops.quote_name(name)}")
    except DatabaseError as error:
        logger.warning("The planner statistics of %s were not refreshed: %s", ", ".join(names), error)
        return []
    return stale
