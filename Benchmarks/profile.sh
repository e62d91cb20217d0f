#!/usr/bin/env bash
# Profiles one contender's store workloads with callgrind on the release build, at a smaller N,
# and prints the top functions by inclusive instruction count, with file:line.
#
#   bash Benchmarks/profile.sh [objectgraph|grdb|raw|fluent] [N] [--only-workloads store]
# The raw callgrind file stays in /tmp/callgrind.<contender>.out for callgrind_annotate.
set -euo pipefail
cd "$(dirname "$0")/.."
[ -x /opt/swift/usr/bin/swift ] && export PATH=/opt/swift/usr/bin:$PATH
CONTENDER=${1:-objectgraph}
COUNT=${2:-10000}
command -v valgrind >/dev/null || apt-get install -y valgrind
swift build -c release --package-path Benchmarks --product Benchmarks
BIN=$(swift build -c release --package-path Benchmarks --show-bin-path)
OUT=/tmp/callgrind.$CONTENDER.out
valgrind --tool=callgrind --callgrind-out-file="$OUT" --dump-instr=no \
    "$BIN/Benchmarks" --only store --contenders "$CONTENDER" --count "$COUNT" --rounds 1 --reps 20 --search-reps 5 \
    --json /tmp/profile-results.json
callgrind_annotate --inclusive=yes --threshold=99 "$OUT" 2>/dev/null | head -80
echo "Per line: callgrind_annotate --inclusive=yes --auto=yes $OUT | less"
