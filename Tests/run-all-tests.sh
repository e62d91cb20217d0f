#!/usr/bin/env bash
# Runs every test of the package: ObjectGraph's behaviour and macro expansion tests, the app's
# HTTP and browser tests, then the system tests in Tests/system/ (Python scripts, each counted as one
# test: a crash test, a command-line test, a large-import test and a load test that run the real
# server binary, and a check that ObjectGraph compiled as a release build needs no symbol the
# toolchain's libraries do not export). Installs what a
# fresh Debian machine lacks (headless Chromium and its WebDriver for the browser journeys, Python 3,
# the sqlite3 shell and binutils' nm for the system tests) first. Prints "N passed, N failed" last and exits
# non-zero when anything failed.
set -uo pipefail
cd "$(dirname "$0")/.."
export PATH="/opt/swift/usr/bin:$PATH"

missing=()
command -v chromium >/dev/null 2>&1 || missing+=(chromium)
command -v chromedriver >/dev/null 2>&1 || missing+=(chromium-driver)
command -v python3 >/dev/null 2>&1 || missing+=(python3)
command -v sqlite3 >/dev/null 2>&1 || missing+=(sqlite3)
command -v nm >/dev/null 2>&1 || missing+=(binutils)
if [ ${#missing[@]} -gt 0 ]; then
    echo "Installing ${missing[*]} for the browser and system tests…"
    if [ "$(id -u)" = 0 ]; then apt_get="apt-get"; else apt_get="sudo apt-get"; fi
    $apt_get update -qq && DEBIAN_FRONTEND=noninteractive $apt_get install -y -qq "${missing[@]}" >/dev/null \
        || { echo "could not install ${missing[*]}"; exit 1; }
fi

log=$(mktemp)
swift test --disable-swift-testing 2>&1 | tee "$log"
status=${PIPESTATUS[0]}
# -a: the test output may hold a control character a test sent (a NUL in a URL), which made grep
# call it binary and print no line, so the count was wrong.
summary=$(grep -a -E "^\s*Executed [0-9]+ tests?, with [0-9]+ failures?" "$log" | tail -1)
total=$(echo "$summary" | sed -E 's/.*Executed ([0-9]+) tests?.*/\1/')
failed=$(echo "$summary" | sed -E 's/.*with ([0-9]+) failures?.*/\1/')
rm -f "$log"
if [ -z "$summary" ]; then
    # The XCTest run did not get as far as a summary (a build error, a crash): one failure.
    passed=0
    failed=1
else
    passed=$((total - failed))
fi

# System tests, each one test: four build and run the snippetbox binary themselves; the release check
# compiles ObjectGraph with -O from the debug build's plan, which `swift test` just wrote.
for script in Tests/system/crash_test.py Tests/system/cli_test.py Tests/system/large_import_test.py Tests/system/load_test.py Tests/system/release_symbols_test.py; do
    echo
    echo "== python3 $script"
    if python3 "$script"; then
        passed=$((passed + 1))
    else
        echo "== $script failed"
        failed=$((failed + 1))
    fi
done

echo "$passed passed, $failed failed"
if [ "$status" -ne 0 ] || [ "$failed" -ne 0 ]; then
    exit 1
fi
exit 0
