#!/usr/bin/env bash
# Runs every test of the package: ObjectGraph's behaviour and macro expansion tests, and the app's
# HTTP and browser tests. Installs what a fresh Debian machine lacks (headless Chromium and its
# WebDriver, for the browser journeys) first. Prints "N passed, N failed" last.
set -uo pipefail
cd "$(dirname "$0")/.."
export PATH="/opt/swift/usr/bin:$PATH"

if ! command -v chromium >/dev/null 2>&1 || ! command -v chromedriver >/dev/null 2>&1; then
    echo "Installing chromium and chromium-driver for the browser tests…"
    if [ "$(id -u)" = 0 ]; then apt_get="apt-get"; else apt_get="sudo apt-get"; fi
    $apt_get update -qq && DEBIAN_FRONTEND=noninteractive $apt_get install -y -qq chromium chromium-driver >/dev/null \
        || { echo "could not install chromium and chromium-driver"; exit 1; }
fi

log=$(mktemp)
swift test --disable-swift-testing 2>&1 | tee "$log"
status=${PIPESTATUS[0]}
summary=$(grep -E "^\s*Executed [0-9]+ tests?, with [0-9]+ failures?" "$log" | tail -1)
total=$(echo "$summary" | sed -E 's/.*Executed ([0-9]+) tests?.*/\1/')
failed=$(echo "$summary" | sed -E 's/.*with ([0-9]+) failures?.*/\1/')
rm -f "$log"
if [ -z "$summary" ]; then
    echo "0 passed, 1 failed"
    exit 1
fi
echo "$((total - failed)) passed, $failed failed"
exit "$status"
