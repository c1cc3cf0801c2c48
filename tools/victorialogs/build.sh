#!/usr/bin/env bash
# Builds the VictoriaLogs server pinned by this folder's go.mod into the
# repository's git-ignored `.tools/` once, and prints the binary's path.
#
# The binary is rebuilt only when go.mod, go.sum, tools.go or this script
# change (a stamp file next to it records their hash), so CI and tests can
# call it on every run. Needs the Go toolchain named in go.mod (or newer);
# the sources come from the Go module proxy.
#
#   tools/victorialogs/build.sh            # prints /…/.tools/victoria-logs
#   LOKIVL_VL_BIN=$(tools/victorialogs/build.sh) cargo test --workspace
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
out="$root/.tools"
bin="$out/victoria-logs"
stamp="$out/victoria-logs.stamp"

hash_inputs() {
    cat "$here/go.mod" "$here/go.sum" "$here/tools.go" "$here/build.sh" |
        { sha256sum 2>/dev/null || shasum -a 256; } | cut -d' ' -f1
}

want="$(hash_inputs)"
if [[ -x "$bin" && -f "$stamp" && "$(cat "$stamp")" == "$want" ]]; then
    echo "$bin"
    exit 0
fi

if ! command -v go >/dev/null 2>&1; then
    echo "build.sh: the Go toolchain is needed to build VictoriaLogs (https://go.dev/dl/);" >&2
    echo "          or download a victoria-logs release binary and set LOKIVL_VL_BIN to it" >&2
    exit 1
fi

mkdir -p "$out"
cd "$here"
module=github.com/VictoriaMetrics/VictoriaLogs
version="$(go list -m -f '{{.Version}}' "$module")"
# The version string a release binary carries, so that `vm_app_version` in
# VictoriaLogs' /metrics names the version (lokivl reads it at start).
buildinfo="-X github.com/VictoriaMetrics/VictoriaMetrics/lib/buildinfo.Version=victoria-logs-lokivl-tags-${version}"
echo "build.sh: building victoria-logs ${version} into $out (once)" >&2
CGO_ENABLED=0 go build -trimpath -ldflags "$buildinfo" -o "$bin.tmp" "$module/app/victoria-logs"
mv "$bin.tmp" "$bin"
echo "$want" >"$stamp"
echo "$bin"
