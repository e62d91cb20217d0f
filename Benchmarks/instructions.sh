#!/usr/bin/env bash
# Counts, with callgrind, the instructions raw SQLite and ObjectGraph spend per snippet on the two
# workloads issue 8 wants within 2× of raw SQLite (insert, fetch all), split by where they run:
# SQLite itself, libc (malloc and free, mostly), the Swift runtime with Foundation, and the
# benchmark binary's own code (the contender, with ObjectGraph and GRDB compiled into it).
#
#   bash Benchmarks/instructions.sh [N]     (default 5000)
#
# Both contenders run the same data in the same order (`--profile-raw N`, `--profile-objectgraph N`):
# a plain insert of N snippets, fetch all, and an insert of N more into a store with a full-text
# index; "insert" counts both inserts, so it is per 2 × N snippets. A binary run the same way counts
# the same every time (SWIFT_DETERMINISTIC_HASHING), where times on this machine vary by several
# percent; between builds and shells, libc's malloc moves by up to 2% of the fetch (the heap's
# history differs), so compare builds run alike, one after the other. The ratio of instructions is
# not the ratio of times (ObjectGraph allocates more, and misses the cache more), which run.sh measures.
# A last row, "typed sketch", is no contender: it reads ObjectGraph's store into models whose values
# are typed (TypedFetchSketch.swift), what a redesign of ObjectGraph's storage could reach.
set -euo pipefail
cd "$(dirname "$0")/.."
[ -x /opt/swift/usr/bin/swift ] && export PATH=/opt/swift/usr/bin:$PATH
COUNT=${1:-5000}
command -v valgrind >/dev/null || apt-get install -y valgrind
# A fresh build plan, as run.sh makes: SwiftPM reuses its plan when a file is added to ObjectGraph
# (a path dependency here) and then fails to build, or builds without the new file.
rm -f Benchmarks/.build/release.yaml
swift build -c release --package-path Benchmarks --product Benchmarks 2>&1 | grep -v "DecodingError.dataCorrupted" | tail -1
BIN=$(swift build -c release --package-path Benchmarks --show-bin-path)
PROFILED=/tmp/Benchmarks.instructions
cp "$BIN/Benchmarks" "$PROFILED"
# valgrind 3.19 cannot read the toolchain's debug info (see profile.sh).
strip --strip-debug "$PROFILED"
OUT=$(mktemp -d /tmp/instructions.XXXX)

# Instructions under `symbol`, by the object they ran in: "total sqlite libc runtime binary".
count() { # option symbol
    local file="$OUT/$1-${2:0:40}.out"
    SWIFT_DETERMINISTIC_HASHING=1 valgrind --tool=callgrind --callgrind-out-file="$file" \
        --toggle-collect="$2" "$PROFILED" "$1" "$COUNT" > /dev/null 2>&1
    callgrind_annotate --threshold=100 "$file" 2>/dev/null | awk '
        /PROGRAM TOTALS/ { gsub(",", "", $1); total = $1; next }
        /^ *[0-9,]+ +\(/ {
            gsub(",", "", $1)
            if ($0 ~ /libsqlite3/) sqlite += $1
            else if ($0 ~ /libc\.so/) libc += $1
            else if ($0 ~ /\/opt\/swift\//) runtime += $1
            else if ($0 ~ /Benchmarks\.instructions/) binary += $1
        }
        END { print total + 0, sqlite + 0, libc + 0, runtime + 0, binary + 0 }' > "$file.counts"
    # A renamed or inlined workload function collects nothing: say so rather than print zeros.
    if [ "$(cut -d' ' -f1 "$file.counts")" = 0 ]; then
        echo "instructions.sh: nothing ran under $2 (renamed or inlined?)" >&2
        exit 1
    fi
    cat "$file.counts"
}

row() { # workload contender per total sqlite libc runtime binary
    awk -v w="$1" -v c="$2" -v n="$3" -v t="$4" -v s="$5" -v l="$6" -v r="$7" -v b="$8" 'BEGIN {
        printf "| %-9s | %-12s | %9.0f | %9.0f | %9.0f | %9.0f | %9.0f |\n", w, c, t / n, s / n, l / n, r / n, b / n }'
}

RAW=('$s10Benchmarks18RawSQLiteContenderC9insertNowyyAA7DatasetVKF' '$s10Benchmarks18RawSQLiteContenderC11fetchAllNowSiyKF')
OBJECTGRAPH=('$s10Benchmarks20ObjectGraphContenderC9insertNowyyAA7DatasetVKF' '$s10Benchmarks20ObjectGraphContenderC11fetchAllNowSiyKF')
# Counted first, each in an assignment, so that a failed count stops the script (set -e).
RAW_INSERT=$(count --profile-raw "${RAW[0]}")
OBJECTGRAPH_INSERT=$(count --profile-objectgraph "${OBJECTGRAPH[0]}")
RAW_FETCH=$(count --profile-raw "${RAW[1]}")
OBJECTGRAPH_FETCH=$(count --profile-objectgraph "${OBJECTGRAPH[1]}")
# Not a contender: the fetch with values typed in generated storage (TypedFetchSketch.swift), the
# floor a redesign of ObjectGraph's storage would reach, on the store ObjectGraph wrote.
SKETCH_FETCH=$(count --profile-typed-sketch '$s10Benchmarks16TypedFetchSketchC11fetchAllNowSiyKF')
echo "Instructions per snippet, N = $COUNT (callgrind files in $OUT)"
echo
echo "| workload  | contender    |     total |    SQLite |      libc | Swift rt. |    binary |"
echo "|-----------|--------------|-----------|-----------|-----------|-----------|-----------|"
row insert "raw SQLite" $((2 * COUNT)) $RAW_INSERT
row insert ObjectGraph $((2 * COUNT)) $OBJECTGRAPH_INSERT
row "fetch all" "raw SQLite" "$COUNT" $RAW_FETCH
row "fetch all" ObjectGraph "$COUNT" $OBJECTGRAPH_FETCH
row "fetch all" "typed sketch" "$COUNT" $SKETCH_FETCH
