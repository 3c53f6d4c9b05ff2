#!/usr/bin/env bash
# One place maps a Status to an HTTP status (net::HttpStatusFor, through
# HttpResponse::FromStatus): the server's handlers return Status errors and never
# pick a 4xx/5xx code themselves. Fails, listing them, on handlers in src/server
# that do (tests aside).
#   tests/one_status_mapping.sh [SOURCE_DIR]
set -u
src=${1:-$(dirname "$0")/..}/src
hits=$(grep -rnE 'HttpResponse::(Error|Json|Text) *\( *[45][0-9][0-9]' "$src/server" \
  --include='*.cc' --include='*.h' | grep -vE '_test\.cc:|test_util[^/]*:')
if [ -n "$hits" ]; then
  echo "HTTP error codes picked by hand in src/server (return HttpResponse::FromStatus(Status::...)):"
  echo "$hits"
  exit 1
fi
echo "every error response of src/server comes from a Status"
