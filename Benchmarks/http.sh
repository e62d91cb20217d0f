#!/usr/bin/env bash
# HTTP benchmark: the release `snippetbox` on a store seeded with N generated snippets (default
# 100,000), loaded with wrk on loopback: list page, a filtered list, searches (rare and common word)
# and a snippet page. Reports requests/s and p50/p99 latency per URL, startup time and the server's
# peak RSS under load (VmHWM). Writes Benchmarks/results/http-latest.json.
#
#   bash Benchmarks/http.sh [N]        (run.sh calls it; SNIPPETBOX=path skips the build,
#                                       SEEDED_STORE=path/snippetbox.store skips the seeding)
#   WRK_CONNECTIONS=4 WRK_THREADS=2 WRK_DURATION=10s WRK_TIMEOUT=10s
set -euo pipefail
cd "$(dirname "$0")/.."
[ -x /opt/swift/usr/bin/swift ] && export PATH=/opt/swift/usr/bin:$PATH
COUNT=${1:-100000}
CONNECTIONS=${WRK_CONNECTIONS:-4}
THREADS=${WRK_THREADS:-2}
DURATION=${WRK_DURATION:-10s}
PORT=${BENCH_PORT:-18181}
ADMIN_PASSWORD=${ADMIN_PASSWORD:-benchmark-admin-password}
export ADMIN_PASSWORD

if ! command -v wrk >/dev/null; then
    echo "Installing wrk (Debian package)…"
    apt-get install -y wrk >/dev/null 2>&1 || { apt-get update >/dev/null && apt-get install -y wrk >/dev/null; }
fi
if [ -z "${SNIPPETBOX:-}" ]; then
    # SwiftPM reuses its build plan when a source file is added to the app (a path dependency here),
    # and then builds without the new file: start from a fresh plan.
    rm -f Benchmarks/.build/release.yaml
    swift build -c release --package-path Benchmarks --product snippetbox
    SNIPPETBOX="$(swift build -c release --package-path Benchmarks --show-bin-path)/snippetbox"
fi

DATA=$(mktemp -d /tmp/snippetbox-http-XXXXXX)
SERVER_PID=
cleanup() {
    if [ -n "$SERVER_PID" ]; then kill "$SERVER_PID" 2>/dev/null || true; wait "$SERVER_PID" 2>/dev/null || true; fi
    rm -rf "$DATA"
}
trap cleanup EXIT

if [ -n "${SEEDED_STORE:-}" ]; then
    # A store seeded before with `snippetbox seed N` (seeding 100,000 takes a while): copied, not touched.
    echo "Copying $SEEDED_STORE to $DATA…"
    sqlite3 "$SEEDED_STORE" ".backup '$DATA/snippetbox.store'"
else
    echo "Seeding $COUNT snippets in $DATA…"
    DATA_DIR=$DATA "$SNIPPETBOX" seed "$COUNT" | tail -1
fi

start=$(date +%s.%N)
DATA_DIR=$DATA HOST=127.0.0.1 PORT=$PORT LOG_LEVEL=warning "$SNIPPETBOX" >"$DATA/server.log" 2>&1 &
SERVER_PID=$!
BASE=http://127.0.0.1:$PORT
for _ in $(seq 1 3000); do
    if curl -s -o /dev/null "$BASE/snippets"; then break; fi
    sleep 0.01
done
ready=$(date +%s.%N)
STARTUP=$(echo "$ready - $start" | bc -l)

# Log in when the app has a login page.
COOKIE=
if [ "$(curl -s -o /dev/null -w '%{http_code}' "$BASE/login")" != 404 ]; then
    JAR="$DATA/cookies"
    CSRF=$(curl -s -c "$JAR" -b "$JAR" "$BASE/login" | grep -o '<input[^>]*name="csrf"[^>]*>' | sed -n 's/.*value="\([^"]*\)".*/\1/p' | head -1)
    curl -s -o /dev/null -c "$JAR" -b "$JAR" --data-urlencode "username=admin" \
        --data-urlencode "password=$ADMIN_PASSWORD" --data-urlencode "csrf=$CSRF" "$BASE/login"
    COOKIE=$(awk 'BEGIN { ORS = "" } !/^#/ || /^#HttpOnly_/ { if (NF >= 7) { printf "%s%s=%s", sep, $6, $7; sep = "; " } }' "$JAR")
    echo "Logged in (cookie ${COOKIE%%=*}=…)"
fi
HEADER=()
[ -n "$COOKIE" ] && HEADER=(-H "Cookie: $COOKIE")

LIST=$(curl -s "${HEADER[@]}" "$BASE/snippets")
SNIPPET=$(echo "$LIST" | grep -o 'href="[^"]*/snippets/[0-9A-Fa-f-]\{36\}"' | head -1 | sed 's/href="\([^"]*\)"/\1/')
[ -n "$SNIPPET" ] || { echo "no snippet link on the list page" >&2; exit 1; }

URLS=("$SNIPPET" "/snippets" "/snippets?language=swift&favorites=1" "/snippets?q=4242" "/snippets?q=parsing")
NAMES=("snippet page" "list page" "filtered list (language + favourites)" "search, rare word" "search, common word")

echo
echo "wrk -t$THREADS -c$CONNECTIONS -d$DURATION --latency, $COUNT snippets, $(nproc) cores, server started in ${STARTUP}s"
printf '| %-38s | %10s | %9s | %9s |\n' "URL" "req/s" "p50" "p99"
printf '|%s|%s|%s|%s|\n' "----------------------------------------" "------------" "-----------" "-----------"
JSON_ROWS=()
RAW=Benchmarks/results/http-latest-wrk.txt
mkdir -p Benchmarks/results
: > "$RAW"
for i in "${!URLS[@]}"; do
    url=${URLS[$i]}
    # Requests wrk gave up on are still worked through by the server: wait until it is idle.
    for _ in $(seq 1 15); do
        t=$(curl -s -o /dev/null --max-time 2 -w '%{time_total}' "${HEADER[@]}" "$BASE$SNIPPET" || echo 2)
        if [ "$(echo "$t < 0.5" | bc -l)" = 1 ]; then break; fi
    done
    curl -s -o /dev/null "${HEADER[@]}" "$BASE$url"
    out=$(wrk -t"$THREADS" -c"$CONNECTIONS" -d"$DURATION" --timeout "${WRK_TIMEOUT:-10s}" --latency "${HEADER[@]}" "$BASE$url")
    rps=$(echo "$out" | awk '/Requests\/sec/ { print $2 }')
    p50=$(echo "$out" | awk '$1 == "50%" { print $2 }')
    p99=$(echo "$out" | awk '$1 == "99%" { print $2 }')
    errors=$(echo "$out" | awk '/Non-2xx|Socket errors/ { print }' | tr '\n' ' ')
    echo "$out" >> "$RAW"
    printf '| %-38s | %10s | %9s | %9s |%s\n' "${NAMES[$i]}" "$rps" "$p50" "$p99" "${errors:+ $errors}"
    JSON_ROWS+=("{\"name\": \"${NAMES[$i]}\", \"url\": \"$url\", \"requestsPerSecond\": $rps, \"p50\": \"$p50\", \"p99\": \"$p99\", \"errors\": \"$errors\"}")
done
HWM=$(awk '/VmHWM/ { print $2 }' "/proc/$SERVER_PID/status")
RSS=$(awk '/VmRSS/ { print $2 }' "/proc/$SERVER_PID/status")
echo
echo "server startup (process start → first answer): ${STARTUP}s"
echo "server peak RSS under load (VmHWM): $((HWM / 1024)) MB; RSS now: $((RSS / 1024)) MB"

mkdir -p Benchmarks/results
{
    echo "{"
    echo "  \"date\": \"$(date -u +%Y-%m-%dT%H:%M:%SZ)\","
    echo "  \"command\": \"bash Benchmarks/http.sh $COUNT\","
    echo "  \"snippets\": $COUNT, \"cores\": $(nproc), \"wrk\": \"-t$THREADS -c$CONNECTIONS -d$DURATION --latency\","
    echo "  \"startupSeconds\": $(printf "%.6f" "$STARTUP"), \"peakRSSKilobytes\": $HWM, \"rssKilobytes\": $RSS,"
    echo "  \"gitCommit\": \"$(git rev-parse --short HEAD)\","
    echo "  \"results\": ["
    for i in "${!JSON_ROWS[@]}"; do
        sep=,; [ "$i" -eq $((${#JSON_ROWS[@]} - 1)) ] && sep=
        echo "    ${JSON_ROWS[$i]}$sep"
    done
    echo "  ]"
    echo "}"
} > Benchmarks/results/http-latest.json
echo "Wrote Benchmarks/results/http-latest.json"
