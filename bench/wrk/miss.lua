-- Cache misses: each request asks for the next path of BENCH_PATHS (one per line, each distinct),
-- so no answer can come from a cache. Reports how many were sent and the pool size: a run that
-- sent more requests than the pool holds wrapped around and is flagged by bench/http.py.

dofile(os.getenv("BENCH_WRK_DIR") .. "/report.lua")

local threads = {}

function setup(thread)
  thread:set("first", #threads)
  threads[#threads + 1] = thread
end

function init(args)
  paths = {}
  for line in io.lines(os.getenv("BENCH_PATHS")) do
    paths[#paths + 1] = line
  end
  pool_size = #paths
  stride = tonumber(os.getenv("BENCH_THREADS") or "1")
  sent = 0
end

function request()
  -- Thread t of n takes paths t, t + n, t + 2n, ... so threads never share one.
  local at = (first + sent * stride) % #paths + 1
  sent = sent + 1
  return wrk.format("GET", paths[at])
end

function done(summary, latency, requests)
  local total, pool = 0, 0
  for _, thread in ipairs(threads) do
    total = total + thread:get("sent")
    pool = thread:get("pool_size")
  end
  bench_report(summary, latency, { sent = total, pool = pool })
end
