# lib.sh: helpers for the GPU test scripts (sourced). Reads results with
# python3's sqlite3 module (the GPU machine has python3 but maybe no sqlite3 CLI).
OUT_DIR="${OUT:-${TMPDIR:-/tmp}}"
mkdir -p "$OUT_DIR" || { echo "FAIL: cannot create $OUT_DIR"; exit 1; }
fail() { echo "FAIL: $*"; exit 1; }
sql() { python3 -c 'import sqlite3,sys; c=sqlite3.connect(sys.argv[1]); [print("|".join("" if v is None else str(v) for v in r)) for r in c.execute(sys.argv[2])]' "$@"; }
