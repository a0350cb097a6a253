#!/usr/bin/env bash
# Builds the pinned Pulumi CLI (the version of github.com/pulumi/pulumi/pkg/v3 in go.mod) and its launchers into a
# cache outside the repository, once per version; prints as its last line the directory that holds `pulumi`:
#   PATH="$(npm run --silent cli | tail -1):$PATH"
# The cache is $CLOUDINFRA_CLI_CACHE, else ${XDG_CACHE_HOME:-~/.cache}/cloudinfra/pulumi-cli; nothing is committed.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
version=$(awk '{ for (i = 1; i < NF; i++) if ($i == "github.com/pulumi/pulumi/pkg/v3") { print $(i + 1); exit } }' "$here/go.mod")
[ -n "$version" ] || { echo "cli/build.sh: no github.com/pulumi/pulumi/pkg/v3 requirement in $here/go.mod" >&2; exit 1; }
cache=${CLOUDINFRA_CLI_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/cloudinfra/pulumi-cli}
dir="$cache/$version"

if [ -x "$dir/pulumi" ] && "$dir/pulumi" version >/dev/null 2>&1; then
  echo "pulumi $version: cached in $dir" >&2
else
  command -v go >/dev/null || { echo "cli/build.sh: no \`go\` on PATH: the Pulumi CLI is built from its Go modules" >&2; exit 1; }
  echo "pulumi $version: building from Go modules (the first build takes several minutes)..." >&2
  started=$(date +%s)
  mkdir -p "$cache"
  partial=$(mktemp -d "$cache/.build-XXXXXX")
  trap 'rm -rf "$partial"' EXIT
  # Pulumi's own release flags; without the version ldflag `pulumi version` prints nothing and the Automation API
  # refuses the CLI. GOTOOLCHAIN=local: never download another Go; GOFLAGS=-mod=readonly: go.sum is the truth.
  (cd "$here" && GOTOOLCHAIN=local GOFLAGS=-mod=readonly CGO_ENABLED=0 go build -trimpath \
    -tags osusergo,grpcnotrace \
    -ldflags "-X github.com/pulumi/pulumi/sdk/v3/go/common/version.Version=$version" \
    -o "$partial/pulumi" github.com/pulumi/pulumi/pkg/v3/cmd/pulumi)
  rm -rf "$dir"
  mv "$partial" "$dir"
  trap - EXIT
  echo "pulumi $version: built in $(( $(date +%s) - started )) s" >&2
fi

# The launchers Pulumi ships as shell scripts next to the CLI, written anew each time (they are a few lines): each
# runs the entry point of the @pulumi/pulumi installed where the engine starts it (the project or the policy pack).
launcher() { # name, module
  cat > "$dir/$1" <<SCRIPT
#!/bin/sh
# Pulumi starts this plugin in the project's (or policy pack's) directory: run $2 from the @pulumi/pulumi found there.
entry=\$(node -e "process.stdout.write(require.resolve('$2'))") || exit 1
exec node "\$entry" "\$@"
SCRIPT
  chmod +x "$dir/$1"
}
launcher pulumi-resource-pulumi-nodejs @pulumi/pulumi/cmd/dynamic-provider
launcher pulumi-analyzer-policy-nodejs @pulumi/pulumi/cmd/run-policy-pack
echo "$dir"
