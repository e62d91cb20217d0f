#!/usr/bin/env bash
# Profiles ObjectGraph's store workloads with callgrind on the release build at a small N, and
# prints the functions with the most inclusive instructions (demangled).
#
#   bash Benchmarks/profile.sh [N]          (default 2000)
#
# valgrind 3.19 (Debian 12) cannot read the toolchain's debug info and crashes at the first
# suspension of an async main, so the profile runs a stripped copy of the binary through
# `--profile-objectgraph N`, a synchronous entry point. The callgrind file stays in
# /tmp/callgrind.objectgraph.out.
set -euo pipefail
cd "$(dirname "$0")/.."
[ -x /opt/swift/usr/bin/swift ] && export PATH=/opt/swift/usr/bin:$PATH
COUNT=${1:-2000}
command -v valgrind >/dev/null || apt-get install -y valgrind
# SwiftPM reuses its build plan when a source file is added to the app (a path dependency here),
# and then builds without the new file: start from a fresh plan.
rm -f Benchmarks/.build/release.yaml
swift build -c release --package-path Benchmarks --product Benchmarks
BIN=$(swift build -c release --package-path Benchmarks --show-bin-path)
cp "$BIN/Benchmarks" /tmp/Benchmarks.profile
strip --strip-debug /tmp/Benchmarks.profile
OUT=/tmp/callgrind.objectgraph.out
valgrind --tool=callgrind --callgrind-out-file="$OUT" /tmp/Benchmarks.profile --profile-objectgraph "$COUNT" 2>/dev/null
callgrind_annotate --inclusive=yes --threshold=100 "$OUT" 2>/dev/null | swift demangle --simplified \
    | grep -E "Benchmarks.profile|replacingOccurrences|swift_dynamicCast|sqlite3_step" \
    | grep -v "thunk\|partial apply\|SerializedDatabase\|DatabasePool\|DatabaseWriter\|_main\|async_Main" | head -60
