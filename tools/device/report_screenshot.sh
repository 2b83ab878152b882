#!/bin/sh
# report_screenshot.sh REPORT_DIR OUT.png [WIDTHxHEIGHT]: a screenshot of a `kcurate report` page in
# headless Chromium (Debian's chromium from make deps), e.g. for docs/results/ after a GPU run
# whose report was made on the build machine from the database it brought back.
set -eu
dir=$(cd "$1" && pwd)
size=${3:-1280x2400}
profile=$(mktemp -d)
trap 'rm -rf "$profile"' EXIT
timeout 90 chromium --headless --no-sandbox --disable-gpu --disable-background-networking \
    --no-first-run --user-data-dir="$profile" --hide-scrollbars --window-size="$(echo "$size" | tr x ,)" \
    --virtual-time-budget=5000 --screenshot="$2" "file://$dir/index.html" >/dev/null 2>&1
echo "screenshot: $2 ($(wc -c <"$2") bytes)"
