#!/usr/bin/env bash
# The one benchmark command: builds the Benchmarks package (and the app's `snippetbox`) in RELEASE,
# runs workloads 1-7 and the in-process list page benchmark (table on stdout, JSON in
# Benchmarks/results/latest.json), then the HTTP benchmark under wrk (Benchmarks/http.sh, JSON in
# Benchmarks/results/http-latest.json).
#
#   bash Benchmarks/run.sh                      # everything, 100,000 snippets
#   bash Benchmarks/run.sh --count 10000        # a quicker pass (options: --help)
#   SKIP_HTTP=1 bash Benchmarks/run.sh          # without the wrk part
set -euo pipefail
cd "$(dirname "$0")/.."
[ -x /opt/swift/usr/bin/swift ] && export PATH=/opt/swift/usr/bin:$PATH

# SwiftPM reuses its build plan when a source file is added to the app (a path dependency here),
# and then builds without the new file: start from a fresh plan.
rm -f Benchmarks/.build/release.yaml
swift build -c release --package-path Benchmarks --product Benchmarks
swift build -c release --package-path Benchmarks --product snippetbox
BIN=$(swift build -c release --package-path Benchmarks --show-bin-path)

# The record of a run of this script is results/latest.json unless --json says otherwise (the binary
# alone writes .build/last-run.json, so that a partial run does not replace the record).
json=(--json Benchmarks/results/latest.json)
for argument in "$@"; do [ "$argument" = --json ] && json=(); done
"$BIN/Benchmarks" --snippetbox "$BIN/snippetbox" "${json[@]}" "$@"

if [ "${SKIP_HTTP:-0}" != 1 ]; then
    COUNT=100000
    args=("$@")
    for ((i = 0; i < ${#args[@]}; i++)); do
        [ "${args[$i]}" = --count ] && COUNT=${args[$((i + 1))]}
    done
    SNIPPETBOX="$BIN/snippetbox" bash Benchmarks/http.sh "$COUNT"
fi
