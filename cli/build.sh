#!/usr/bin/env bash
# Builds the pinned Pulumi CLI (the version of github.com/pulumi/pulumi/pkg/v3 in go.mod), this repository's language
# host (cli/language-host), Pulumi's YAML language host (cli/yaml) and the plugin launchers into a cache outside the
# repository, once per version; prints as its last line the directory that holds `pulumi`:
#   PATH="$(npm run --silent cli | tail -1):$PATH"
# The cache is $CLOUDINFRA_CLI_CACHE, else ${XDG_CACHE_HOME:-~/.cache}/cloudinfra/pulumi-cli; nothing is committed.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
version=$(awk '{ for (i = 1; i < NF; i++) if ($i == "github.com/pulumi/pulumi/pkg/v3") { print $(i + 1); exit } }' "$here/go.mod")
[ -n "$version" ] || { echo "cli/build.sh: no github.com/pulumi/pulumi/pkg/v3 requirement in $here/go.mod" >&2; exit 1; }
cache=${CLOUDINFRA_CLI_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/cloudinfra/pulumi-cli}
dir="$cache/$version"

# Pulumi's release flags; without the version ldflag `pulumi version` prints nothing and the Automation API refuses
# the CLI. GOTOOLCHAIN=local: never download another Go; GOFLAGS=-mod=readonly: go.sum is the truth.
gobuild() { # output, package
  (cd "$here" && GOTOOLCHAIN=local GOFLAGS=-mod=readonly CGO_ENABLED=0 go build -trimpath \
    -tags osusergo,grpcnotrace \
    -ldflags "-X github.com/pulumi/pulumi/sdk/v3/go/common/version.Version=$version" \
    -o "$1" "$2")
}
need_go() {
  command -v go >/dev/null || { echo "cli/build.sh: no \`go\` on PATH: the Pulumi CLI is built from its Go modules" >&2; exit 1; }
}

if [ -x "$dir/pulumi" ] && "$dir/pulumi" version >/dev/null 2>&1; then
  echo "pulumi $version: cached in $dir" >&2
else
  need_go
  echo "pulumi $version: building from Go modules (the first build takes several minutes)..." >&2
  started=$(date +%s)
  mkdir -p "$cache"
  partial=$(mktemp -d "$cache/.build-XXXXXX")
  trap 'rm -rf "$partial"' EXIT
  gobuild "$partial/pulumi" github.com/pulumi/pulumi/pkg/v3/cmd/pulumi
  rm -rf "$dir"
  mv "$partial" "$dir"
  trap - EXIT
  echo "pulumi $version: built in $(( $(date +%s) - started )) s" >&2
fi

# The language host (cli/language-host), rebuilt when its sources change: one binary, installed under the names of
# the languages it serves.
source_digest=$(cat "$here/go.mod" "$here/go.sum" "$here"/language-host/*.go | sha256sum | cut -d' ' -f1)
if [ "$(cat "$dir/.language-host" 2>/dev/null)" != "$source_digest" ] || [ ! -x "$dir/pulumi-language-nodejs" ]; then
  need_go
  started=$(date +%s)
  gobuild "$dir/pulumi-language-nodejs.partial" ./language-host
  mv "$dir/pulumi-language-nodejs.partial" "$dir/pulumi-language-nodejs"
  ln -sf pulumi-language-nodejs "$dir/pulumi-language-python"
  ln -sf pulumi-language-nodejs "$dir/pulumi-language-go"
  echo "$source_digest" > "$dir/.language-host"
  echo "language host: built in $(( $(date +%s) - started )) s" >&2
fi

# Pulumi's YAML language host, pinned by cli/yaml/go.mod (a module of its own: pulumi-yaml does not compile against
# the CLI's pkg/v3), built when missing or when the pin changes. Its version ldflag is the one Pulumi's releases set.
yaml_version=$(awk '$1 == "require" && $2 == "github.com/pulumi/pulumi-yaml" { print $3 }' "$here/yaml/go.mod")
[ -n "$yaml_version" ] || { echo "cli/build.sh: no github.com/pulumi/pulumi-yaml requirement in $here/yaml/go.mod" >&2; exit 1; }
yaml_digest=$(cat "$here/yaml/go.mod" "$here/yaml/go.sum" | sha256sum | cut -d' ' -f1)
if [ "$(cat "$dir/.language-yaml" 2>/dev/null)" != "$yaml_digest" ] || [ ! -x "$dir/pulumi-language-yaml" ]; then
  need_go
  echo "pulumi-language-yaml $yaml_version: building from Go modules..." >&2
  started=$(date +%s)
  (cd "$here/yaml" && GOTOOLCHAIN=local GOFLAGS=-mod=readonly CGO_ENABLED=0 go build -trimpath \
    -ldflags "-X github.com/pulumi/pulumi-yaml/pkg/version.Version=$yaml_version" \
    -o "$dir/pulumi-language-yaml.partial" github.com/pulumi/pulumi-yaml/cmd/pulumi-language-yaml)
  mv "$dir/pulumi-language-yaml.partial" "$dir/pulumi-language-yaml"
  echo "$yaml_digest" > "$dir/.language-yaml"
  echo "pulumi-language-yaml $yaml_version: built in $(( $(date +%s) - started )) s" >&2
fi

# The dynamic-provider plugin: Pulumi ships it as a shell script next to the CLI, written anew each time (a few lines).
# The engine starts it in the project's directory: it runs the @pulumi/pulumi installed there.
cat > "$dir/pulumi-resource-pulumi-nodejs" <<'SCRIPT'
#!/bin/sh
entry=$(node -e "process.stdout.write(require.resolve('@pulumi/pulumi/cmd/dynamic-provider'))") || exit 1
exec node "$entry" "$@"
SCRIPT
chmod +x "$dir/pulumi-resource-pulumi-nodejs"
rm -f "$dir/pulumi-analyzer-policy-nodejs" # policy packs run through the language host now
echo "$dir"
