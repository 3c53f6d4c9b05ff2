#!/usr/bin/env bash
# SQL lives in the store layer, src/server/store/ (typed row functions that take
# a Db&): services call those, so the schema is read and written in one place.
# Fails, listing them, on statements prepared or run, or SQLite called, anywhere
# else in src/ (tests aside).
#   tests/no_sql_outside_store.sh [SOURCE_DIR]
set -u
src=${1:-$(dirname "$0")/..}/src
hits=$(grep -rnE '\.(Prepare|Exec|QueryInt|QueryText) *\(|\bsqlite3_[a-z_0-9]+ *\(|\.raw\(\)|#include <sqlite3\.h>' \
  "$src" --include='*.cc' --include='*.h' \
  | grep -vE '_test\.cc:|test_util[^/]*:|/server/store/')
if [ -n "$hits" ]; then
  echo "SQL outside src/server/store (add a row function to the store layer):"
  echo "$hits"
  exit 1
fi
echo "no SQL outside src/server/store"
