-- With a file named after the URL (wrk ... URL FILE), every request is a POST of its JSON.
init = function(args)
  if args[1] then
    local file = assert(io.open(args[1], "rb"))
    wrk.method, wrk.body = "POST", file:read("*a")
    wrk.headers["Content-Type"] = "application/json"
    file:close()
  end
end

-- Print wrk's summary as one JSON line after the run, for benchmarks/runner.py to parse.
-- Latencies are in microseconds; wrk keeps them for completed requests only.
done = function(summary, latency, requests)
  local e = summary.errors
  io.write(string.format(
    'BENCH_JSON {"requests":%d,"duration_us":%d,"bytes":%d,' ..
    '"errors":{"connect":%d,"read":%d,"write":%d,"status":%d,"timeout":%d},' ..
    '"latency_us":{"mean":%.1f,"max":%d,"p50":%d,"p90":%d,"p99":%d}}\n',
    summary.requests, summary.duration, summary.bytes,
    e.connect, e.read, e.write, e.status, e.timeout,
    latency.mean, latency.max,
    latency:percentile(50), latency:percentile(90), latency:percentile(99)))
end
