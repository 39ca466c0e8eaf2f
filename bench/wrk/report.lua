-- wrk's summary as one line of JSON (prefixed "BENCH ") so bench/http.py need not parse wrk's text.
-- Other scripts dofile() this one and may pass extra fields (numbers) to bench_report.

function bench_report(summary, latency, extra)
  local errors = summary.errors
  local fields = {
    string.format('"requests":%d', summary.requests),
    string.format('"duration_us":%d', summary.duration),
    string.format('"bytes":%d', summary.bytes),
    string.format('"p50_us":%d', latency:percentile(50)),
    string.format('"p99_us":%d', latency:percentile(99)),
    string.format('"errors":%d', errors.connect + errors.read + errors.write + errors.status + errors.timeout),
    string.format('"bad_status":%d', errors.status),
  }
  for name, value in pairs(extra or {}) do
    fields[#fields + 1] = string.format('"%s":%d', name, value)
  end
  io.write("BENCH {" .. table.concat(fields, ",") .. "}\n")
end

function done(summary, latency, requests)
  bench_report(summary, latency)
end
