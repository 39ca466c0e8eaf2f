"""The shared sliding window, asked in batches: each process leases slots from Redis and spends them locally.

A request used to cost one Redis script; at thousands of requests a second that round trip was half
the cost of a replayed answer. Now a process asks Redis for a *lease* of several slots of a client's
window at once and admits the next requests from it in memory, with no Redis call, until the lease
is spent or LEASE_SECONDS old. How many slots a lease asks for follows the client's pace in this
process: one at first, twice as many each time a lease is spent before it lapses, as many as were
used when one lapses. Redis grants at most 1/LEASE_SHARE of what is left of the window, so within
2 x LEASE_SHARE slots of the limit every request asks Redis again, one slot at a time.

Why the limit stays exact on the strict side: Redis records a lease at the moment it *expires*
(its grant time + LEASE_SECONDS) and counts all its slots from the grant on, so every request
admitted from it is counted, at a time no earlier than its own, for a full window. A lease of one
slot is spent by the request that asked for it, so it is recorded at its grant time: near the limit,
where every lease is one slot, the window and its Retry-After are exactly those of one script per request. Hence at most
`limit` requests are admitted in any window of `window` seconds, across every process sharing the
Redis, exactly as with one script per request.

The tolerance is on the generous side of the client, and small:

- slots leased to one process and not used yet are unavailable to the others, so a client spread
  over several workers may be refused while another worker still holds a few of its slots. A lease
  is at most 1/LEASE_SHARE of what was left when it was granted (MAX_LEASE at most) and lapses
  after LEASE_SECONDS; the unused slots of a lapsed lease are handed back on that process's next
  call for the same client;
- a slot of a lease of several slots is freed up to LEASE_SECONDS (at most a tenth of the window)
  later than its request's own window would free it;
- the `RateLimit` header's remaining count is what Redis said when this process last asked, minus
  what the process spent since (exact with one process; an upper bound with several).
"""

from __future__ import annotations

import itertools
import math
import os
import threading
import time
import uuid
from dataclasses import dataclass
from typing import Any

from evergreen_site.settings.env import Rate

LEASE_SECONDS = 1.0
LEASE_SHARE = 8
MAX_LEASE = 1024
LOCAL_LEASES_MAX = 100_000

# KEYS[1]: the window's sorted set of leases (member "<id>:<slots>", score = the lease's expiry in ms; a
# one-slot lease's grant time),
# KEYS[2]: the number of slots those leases hold. ARGV: limit, window ms, lease ms, slots wanted,
# this lease's id, and a lapsed lease to hand back ("" for none) with the slots it used.
# Returns {slots granted (0: refused), slots left after the grant, ms until the oldest lease leaves}.
LEASED_WINDOW_LUA = """
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local limit = tonumber(ARGV[1])
local window = tonumber(ARGV[2])
local lease = tonumber(ARGV[3])
local wanted = tonumber(ARGV[4])
local held = tonumber(redis.call('GET', KEYS[2]) or '0')
local function slots(member)
  return tonumber(string.match(member, ':(%d+)$'))
end
for _, member in ipairs(redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', now - window)) do
  held = held - slots(member)
end
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - window)
if ARGV[6] ~= '' then
  local score = redis.call('ZSCORE', KEYS[1], ARGV[6])
  if score then
    local used = tonumber(ARGV[7])
    held = held - slots(ARGV[6]) + used
    redis.call('ZREM', KEYS[1], ARGV[6])
    if used > 0 then
      local kept = string.gsub(ARGV[6], ':%d+$', ':' .. used)
      redis.call('ZADD', KEYS[1], score, kept)
    end
  end
end
if held < 0 then held = 0 end
local left = limit - held
local granted = math.min(wanted, math.max(1, math.floor(left / tonumber(ARGV[8]))), left)
if granted < 0 then granted = 0 end
if granted > 0 then
  local counted = now + lease
  if granted == 1 then counted = now end
  redis.call('ZADD', KEYS[1], counted, ARGV[5] .. ':' .. granted)
  held = held + granted
end
redis.call('SET', KEYS[2], held, 'PX', window + lease)
redis.call('PEXPIRE', KEYS[1], window + lease)
local oldest = redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')
local reset = window
if oldest[2] then reset = tonumber(oldest[2]) + window - now end
return {granted, limit - held, reset}
"""


@dataclass(slots=True)
class Lease:
    """Slots of one client's window this process may admit without asking Redis."""

    member: str  # the lease's member in the window's sorted set: "<id>:<granted>"
    granted: int
    used: int
    expires: float  # time.monotonic() after which it is not spent any more
    left: int  # slots left in the window, for everyone, when Redis granted it
    reset_at: float  # time.monotonic() at which the oldest counted lease leaves the window

    def spendable(self, now: float) -> bool:
        return self.used < self.granted and now < self.expires

    def remaining(self) -> int:
        return max(0, self.left + self.granted - self.used)

    def reset(self, now: float) -> int:
        return max(1, math.ceil(self.reset_at - now))


class LeaseBook:
    """Per-process leases by window key, and the next lease size for each (thread-safe)."""

    def __init__(self, max_keys: int = LOCAL_LEASES_MAX) -> None:
        self._leases: dict[str, Lease] = {}
        self._wanted: dict[str, int] = {}
        self._lock = threading.Lock()
        self._max_keys = max_keys
        self._ids = itertools.count()
        self._process = f"{os.getpid()}-{uuid.uuid4().hex[:8]}"

    def spend(self, key: str) -> Lease | None:
        """Take one slot of this process's lease for `key`; None when Redis must be asked."""
        now = time.monotonic()
        with self._lock:
            lease = self._leases.get(key)
            if lease is None or not lease.spendable(now):
                return None
            lease.used += 1
            return lease

    def ask(self, key: str) -> tuple[int, str, str, int]:
        """(slots to ask for, the new lease's id, a lapsed lease to hand back or "", the slots it used)."""
        with self._lock:
            lease = self._leases.get(key)
            wanted = self._wanted.get(key, 1)
            if lease is not None:
                # Spent in time: the client is faster than the lease, ask for twice as much. Lapsed: as much as it used.
                wanted = min(MAX_LEASE, lease.granted * 2) if lease.used >= lease.granted else max(1, lease.used)
                self._wanted[key] = wanted
            returned = lease.member if lease is not None and lease.used < lease.granted else ""
            used = lease.used if lease is not None else 0
            return wanted, f"{self._process}-{next(self._ids)}", returned, used

    def granted(self, key: str, lease: Lease) -> None:
        """Keep a lease Redis granted (its first slot is already spent by the request that asked)."""
        with self._lock:
            if key not in self._leases and len(self._leases) >= self._max_keys:
                self._prune(time.monotonic())
            self._leases[key] = lease

    def refused(self, key: str) -> None:
        """Redis refused: the lapsed lease (if any) was handed back, so forget it."""
        with self._lock:
            self._leases.pop(key, None)
            self._wanted.pop(key, None)

    def _prune(self, now: float) -> None:
        """Forget lapsed leases so many clients cannot grow memory for ever (their slots lapse in Redis too)."""
        self._leases = {k: v for k, v in self._leases.items() if v.expires > now}
        self._wanted = {k: v for k, v in self._wanted.items() if k in self._leases}

    def clear(self) -> None:
        with self._lock:
            self._leases.clear()
            self._wanted.clear()


def lease_args(rate: Rate, seconds: float, wanted: int, member_id: str, returned: str, used: int) -> list[Any]:
    """The script's ARGV for one call: a lease of `wanted` slots to spend within `seconds`."""
    return [
        rate.limit,
        rate.window * 1000,
        max(1, int(seconds * 1000)),
        wanted,
        member_id,
        returned,
        used,
        LEASE_SHARE,
    ]
