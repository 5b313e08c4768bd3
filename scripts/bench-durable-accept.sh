#!/usr/bin/env bash
# Accepted events per second through the gateway (POST /api/events/{token}, answered 202), with
# the embedded SQLite store and without a store, on the same release build, one after the other:
#   scripts/bench-durable-accept.sh            (CONNECTIONS=32 SECONDS_EACH=10 PORT=47650)
# Needs wrk (Debian: apt-get install wrk). The coordinator hosts the "tally" root of
# durability-test-daemon (a count, no remote child); the store file is under a temporary directory
# on the same disk as /tmp, removed afterwards with the coordinator.
set -euo pipefail
cd "$(dirname "$0")/.."
command -v wrk >/dev/null || { echo "bench-durable-accept.sh needs wrk (apt-get install wrk)" >&2; exit 1; }
CONNECTIONS=${CONNECTIONS:-32}
SECONDS_EACH=${SECONDS_EACH:-10}
PORT=${PORT:-47650}
scratch="${BENCH_SCRATCH:-.build}"
swift build -c release --scratch-path "$scratch" --product durability-test-daemon >&2
bin="$(swift build -c release --scratch-path "$scratch" --show-bin-path)/durability-test-daemon"
dir=$(mktemp -d)
pid=""
cleanup() {
  [[ -n $pid ]] && { kill -TERM "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; }
  rm -rf "$dir"
}
trap cleanup EXIT
cat >"$dir/post.lua" <<'LUA'
-- POSTs "1" to the tally's sink; a token retired by later renderings (404/410) is read again
-- from GET /api/rendering before the next POST.
local token, refresh = nil, false
local function encode(text)
  return (text:gsub("[^%w]", function(c) return string.format("%%%02X", string.byte(c)) end))
end
function init(args) token = args[1] end
function request()
  if refresh then return wrk.format("GET", "/api/rendering") end
  return wrk.format("POST", "/api/events/" .. token, { ["Content-Type"] = "application/json" }, "1")
end
function response(status, headers, body)
  if refresh then
    local fresh = body:match('"add":"([^"]+)"')
    if fresh then token, refresh = encode(fresh), false end
  elseif status ~= 202 then
    refresh = true
  end
end
LUA
run() { # kind: sqlite or none
  cat >"$dir/cluster.json" <<JSON
{ "coordinator": { "endpoint": "ipc://$dir/endpoint", "root": "tally" },
  "log": { "level": "warning", "format": "text" },
  "gateway": { "listen": "127.0.0.1:$PORT" },
  "store": { "kind": "$1", "path": "store.sqlite" } }
JSON
  rm -f "$dir"/store.sqlite*
  "$bin" --config "$dir/cluster.json" 2>"$dir/coordinator-$1.log" &
  pid=$!
  local url="http://127.0.0.1:$PORT" token=""
  for _ in $(seq 200); do
    token=$(curl -sf "$url/api/rendering" | python3 -c 'import json,sys,urllib.parse; print(urllib.parse.quote(json.load(sys.stdin)["rendering"]["add"], safe=""))' 2>/dev/null) && break
    sleep 0.1
  done
  [[ -n $token ]] || { echo "the coordinator did not serve; its log:" >&2; cat "$dir/coordinator-$1.log" >&2; exit 1; }
  wrk -t2 -c"$CONNECTIONS" -d"${SECONDS_EACH}s" -s "$dir/post.lua" "$url" -- "$token" >"$dir/wrk-$1.out"
  local count
  count=$(curl -sf "$url/api/rendering" | python3 -c 'import json,sys; print(json.load(sys.stdin)["rendering"]["count"])')
  kill -TERM "$pid"; wait "$pid" || true; pid=""
  # Accepted events are what the count shows (every accepted POST adds 1), per second of load.
  echo "$1 $(python3 -c "print(round($count / $SECONDS_EACH))") $count"
}

echo "machine: $(nproc) cores; $CONNECTIONS connections, ${SECONDS_EACH}s each"
durable=$(run sqlite)
plain=$(run none)
read -r _ durable_rate durable_count <<<"$durable"
read -r _ plain_rate plain_count <<<"$plain"
echo "accepted events/s with the SQLite store: $durable_rate ($durable_count in ${SECONDS_EACH}s)"
echo "accepted events/s without a store:       $plain_rate ($plain_count in ${SECONDS_EACH}s)"
python3 -c "print(f'ratio: {float($durable_rate)/float($plain_rate):.2f}')"
