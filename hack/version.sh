#!/usr/bin/env bash
# Prints the -ldflags that stamp osm-apiserver's version into
# k8s.io/component-base/version (served on /version, printed by --version):
# the nearest v* tag, or v0.0.0-<commit> without one, with -dirty for local
# changes. The date is the commit's, so that the same commit builds the same
# binary (and image).
#   hack/version.sh                         the -ldflags
#   hack/version.sh version|commit|date     one of them (make image labels the image)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
commit=$(git rev-parse HEAD 2>/dev/null || echo unknown)
state=clean
if [ -n "$(git status --porcelain --untracked-files=no 2>/dev/null)" ]; then state=dirty; fi
version=${VERSION:-$(git describe --tags --match 'v*' 2>/dev/null || echo "v0.0.0-${commit:0:12}")}
[ "$state" = dirty ] && [ -z "${VERSION:-}" ] && version="$version-dirty"
date=$(TZ=UTC git log -1 --format=%cd --date=format-local:%Y-%m-%dT%H:%M:%SZ 2>/dev/null || echo 1970-01-01T00:00:00Z)
major=$(echo "${version#v}" | cut -d. -f1)
minor=$(echo "${version#v}" | cut -d. -f2)
pkg=k8s.io/component-base/version
case "${1:-ldflags}" in
  version) echo "$version"; exit 0 ;;
  commit) echo "$commit"; exit 0 ;;
  date) echo "$date"; exit 0 ;;
  ldflags) ;;
  *) echo "usage: $0 [ldflags|version|commit|date]" >&2; exit 2 ;;
esac
echo "-s -w -X $pkg.gitVersion=$version -X $pkg.gitCommit=$commit -X $pkg.gitTreeState=$state -X $pkg.buildDate=$date -X $pkg.gitMajor=$major -X $pkg.gitMinor=$minor"
