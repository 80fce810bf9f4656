#!/usr/bin/env bash
# Lints coffer's management contract (proto/, buf's STANDARD rules) and checks it
# for breaking changes (FILE rules) against a git revision: $BUF_AGAINST, default
# HEAD~1, the previous commit. The old tree is read with git archive, so that this
# works in a worktree and needs no buf access to .git. When that revision does not
# exist (a shallow clone, the first commit) or has no proto/ (the commit that adds
# the contract), there is nothing to break: it says so and passes. Installs buf into
# $(go env GOPATH)/bin if it is missing.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$(go env GOPATH)/bin:$PATH"
command -v buf >/dev/null || go install github.com/bufbuild/buf/cmd/buf@v1.75.0

against=${BUF_AGAINST:-HEAD~1}
echo "buf lint proto"
(cd proto && buf lint)

old=$(mktemp -d)
trap 'rm -rf "$old"' EXIT
if ! git rev-parse --verify -q "$against^{commit}" >/dev/null; then
  echo "buf breaking: $against is not in this clone (shallow or first commit): nothing to compare"
  exit 0
fi
if ! git cat-file -e "$against:proto/buf.yaml" 2>/dev/null; then
  echo "buf breaking: $against has no proto/buf.yaml (the contract is new): nothing to compare"
  exit 0
fi
git archive "$against" proto | tar -x -C "$old"
echo "buf breaking proto against $against"
(cd proto && buf breaking --against "$old/proto")
