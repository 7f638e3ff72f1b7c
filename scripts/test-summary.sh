#!/usr/bin/env bash
# Summarises a `go test` log written by `make test`: packages passed, failed and without
# tests, the failing tests by name, and total statement coverage from the profile.
# Usage: scripts/test-summary.sh LOG [PROFILE] [STATUS]
set -euo pipefail

log=${1:?usage: test-summary.sh LOG [PROFILE] [STATUS]}
profile=${2:-}
status=${3:-0}

ok=$(grep -cE '^ok[[:space:]]' "$log" || true)
failed=$(grep -cE '^FAIL[[:space:]]+[^[:space:]]+[[:space:]]' "$log" || true)
# Without tests: "?" lines, or (since Go 1.22, with -coverprofile) a bare coverage line.
notests=$(grep -cE '^\?[[:space:]]|^[[:space:]]+[^[:space:]]+[[:space:]]+coverage: ' "$log" || true)

echo
echo "==> make test summary"
printf '  packages ok:        %s\n' "$ok"
printf '  packages failed:    %s\n' "$failed"
printf '  without test files: %s\n' "$notests"
if grep -qE '^\s*--- FAIL: ' "$log"; then
  echo '  failing tests:'
  grep -E '^\s*--- FAIL: ' "$log" | sed -E 's/^\s*--- FAIL: /    /' | sort -u
fi
if grep -qE '\[(build|setup) failed\]' "$log"; then
  echo '  packages that did not build:'
  grep -E '\[(build|setup) failed\]' "$log" | sed 's/^/    /' | sort -u
fi
if grep -qE '^panic: |test timed out after' "$log"; then
  echo '  panics or timeouts:'
  grep -E '^panic: |test timed out after' "$log" | sed 's/^/    /' | sort -u
fi
if [[ -n $profile && -s $profile ]]; then
  total=$(go tool cover -func="$profile" 2>/dev/null | awk '/^total:/ {print $NF}' || true)
  printf '  total coverage:     %s (profile %s)\n' "${total:-unknown}" "$profile"
fi
if [[ $status -eq 0 ]]; then
  echo '  result:             PASS'
else
  echo "  result:             FAIL (go test exit status $status; full log: $log)"
fi
