#!/usr/bin/env bash
# Lints coffer's management contract (proto/, buf's STANDARD rules) and checks it
# for breaking changes (FILE rules) against a git revision: $BUF_AGAINST, default
# HEAD~1, the previous commit. The old tree is read with git archive, so that this
# works in a worktree and needs no buf access to .git. In a shallow clone (CI's
# usual checkout) the revision is fetched first (git fetch --deepen=1). When it
# still cannot be had (no history, no reachable origin), it prints a warning and
# passes: a checkout without history cannot tell a break from a change, and the test
# command must pass on any fresh checkout of the repository. A first commit, or one whose parent has no
# proto/ (the commit that adds the contract), has nothing to break. Installs buf
# into $(go env GOPATH)/bin if it is missing.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$(go env GOPATH)/bin:$PATH"
command -v buf >/dev/null || go install github.com/bufbuild/buf/cmd/buf@v1.75.0

against=${BUF_AGAINST:-HEAD~1}
echo "buf lint proto"
(cd proto && buf lint)

old=$(mktemp -d)
trap 'rm -rf "$old"' EXIT
have() { git rev-parse --verify -q "$against^{commit}" >/dev/null; }
if ! have && [ "$(git rev-parse --is-shallow-repository)" = true ]; then
  echo "buf breaking: shallow clone: fetching one more commit"
  git fetch -q --deepen=1 || true
fi
if ! have; then
  if [ "$(git rev-list --count HEAD)" = 1 ] && [ "$(git rev-parse --is-shallow-repository)" = false ]; then
    echo "buf breaking: $against does not exist (the first commit): nothing to compare"
    exit 0
  fi
  echo "buf breaking: WARNING: $against is not in this clone and could not be fetched: NOT COMPARED" >&2
  exit 0
fi
if ! git cat-file -e "$against:proto/buf.yaml" 2>/dev/null; then
  echo "buf breaking: $against has no proto/buf.yaml (the contract is new): nothing to compare"
  exit 0
fi
git archive "$against" proto | tar -x -C "$old"
echo "buf breaking proto against $against"
(cd proto && buf breaking --against "$old/proto")
