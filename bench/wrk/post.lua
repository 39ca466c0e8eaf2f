-- MCP tool calls that all miss: each request POSTs the next JSON-RPC body of BENCH_PATHS (one per line,
-- each distinct) to the target path, so no answer can come from a cache. Reports as miss.lua does.

dofile(os.getenv("BENCH_WRK_DIR") .. "/report.lua")

local threads = {}

function setup(thread)
  thread:set("first", #threads)
  threads[#threads + 1] = thread
end

function init(args)
  bodies = {}
  for line in io.lines(os.getenv("BENCH_PATHS")) do
    bodies[#bodies + 1] = line
  end
  pool_size = #bodies
  stride = tonumber(os.getenv("BENCH_THREADS") or "1")
  sent = 0
end

function request()
  local at = (first + sent * stride) % #bodies + 1
  sent = sent + 1
  return wrk.format("POST", nil, nil, bodies[at])
end

function done(summary, latency, requests)
  local total, pool = 0, 0
  for _, thread in ipairs(threads) do
    total = total + thread:get("sent")
    pool = thread:get("pool_size")
  end
  bench_report(summary, latency, { sent = total, pool = pool })
end
