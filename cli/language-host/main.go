// Command language-host is this repository's stand-in for Pulumi's language plugins, which the Go module proxy
// does not serve (github.com/pulumi/pulumi/sdk/nodejs/cmd/pulumi-language-nodejs/v3 and its siblings are refused).
// cli/build.sh installs it next to the CLI as pulumi-language-nodejs, pulumi-language-python and
// pulumi-language-go; the name it is started under is the language it serves.
//
// For Node.js it runs programs, plugins and policy packs the way Pulumi's own host does (through the entry points
// of the @pulumi/pulumi installed in the project: cmd/run, cmd/run-plugin, cmd/run-policy-pack), installs
// dependencies with npm, and generates code (SDKs from a schema, programs for `pulumi import`) with Pulumi's own
// code generators. For Go it builds programs with the machine's Go and runs them (golang.go), as Pulumi's Go host does.
// For Python it only generates code: running Python programs needs Pulumi's own Python host.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"

	"github.com/blang/semver"
	"github.com/hashicorp/hcl/v2"
	"github.com/pulumi/pulumi/pkg/v3/codegen/cgstrings"
	gogen "github.com/pulumi/pulumi/pkg/v3/codegen/go"
	hclsyntax "github.com/pulumi/pulumi/pkg/v3/codegen/hcl2/syntax"
	nodejsgen "github.com/pulumi/pulumi/pkg/v3/codegen/nodejs"
	"github.com/pulumi/pulumi/pkg/v3/codegen/pcl"
	pythongen "github.com/pulumi/pulumi/pkg/v3/codegen/python"
	"github.com/pulumi/pulumi/pkg/v3/codegen/schema"
	sdk "github.com/pulumi/pulumi/sdk/v3"
	"github.com/pulumi/pulumi/sdk/v3/go/common/apitype"
	"github.com/pulumi/pulumi/sdk/v3/go/common/resource/config"
	"github.com/pulumi/pulumi/sdk/v3/go/common/resource/plugin"
	"github.com/pulumi/pulumi/sdk/v3/go/common/util/rpcutil"
	"github.com/pulumi/pulumi/sdk/v3/go/common/version"
	"github.com/pulumi/pulumi/sdk/v3/nodejs/npm"
	pulumirpc "github.com/pulumi/pulumi/sdk/v3/proto/go"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/emptypb"
)

// Exit code of @pulumi/pulumi's cmd/run after it has shown the user an actionable message itself.
const exitedAfterShowingMessage = 32

type host struct {
	pulumirpc.UnimplementedLanguageRuntimeServer
	language string
	cancel   context.Context
	stop     context.CancelFunc
}

func main() {
	language := strings.TrimPrefix(filepath.Base(os.Args[0]), "pulumi-language-")
	if language != "nodejs" && language != "python" && language != "go" {
		fmt.Fprintf(os.Stderr, "%s: start me as pulumi-language-nodejs, -python or -go\n", os.Args[0])
		os.Exit(2)
	}
	if len(os.Args) > 1 && (os.Args[1] == "-version" || os.Args[1] == "--version") {
		fmt.Println(version.Version)
		return
	}
	cancel, stop := context.WithCancel(context.Background())
	h := &host{language: language, cancel: cancel, stop: stop}
	handle, err := rpcutil.ServeWithOptions(rpcutil.ServeOptions{
		Init: func(srv *grpc.Server) error {
			pulumirpc.RegisterLanguageRuntimeServer(srv, h)
			return nil
		},
	})
	if err != nil {
		fmt.Fprintf(os.Stderr, "could not start the language host: %v\n", err)
		os.Exit(1)
	}
	// The engine reads the port from the first line of stdout.
	fmt.Printf("%d\n", handle.Port)
	if err := <-handle.Done; err != nil {
		fmt.Fprintf(os.Stderr, "the language host stopped: %v\n", err)
		os.Exit(1)
	}
}

func (h *host) nodeOnly(what string) error {
	if h.language == "nodejs" {
		return nil
	}
	return status.Errorf(codes.Unimplemented,
		"this build's pulumi-language-%s does not do %s; that needs Pulumi's own %s language host",
		h.language, what, h.language)
}

func (h *host) Handshake(
	context.Context, *pulumirpc.LanguageHandshakeRequest,
) (*pulumirpc.LanguageHandshakeResponse, error) {
	return &pulumirpc.LanguageHandshakeResponse{}, nil
}

func (h *host) GetPluginInfo(context.Context, *emptypb.Empty) (*pulumirpc.PluginInfo, error) {
	return &pulumirpc.PluginInfo{Version: strings.TrimPrefix(version.Version, "v")}, nil
}

// GetRequiredPlugins and GetRequiredPackages list nothing: the engine then loads each plugin when a resource first
// needs it (from the project's `plugins:` section, the plugin cache or PATH), which is all this host's users need.
func (h *host) GetRequiredPlugins(
	context.Context, *pulumirpc.GetRequiredPluginsRequest,
) (*pulumirpc.GetRequiredPluginsResponse, error) {
	return &pulumirpc.GetRequiredPluginsResponse{}, nil
}

func (h *host) GetRequiredPackages(
	context.Context, *pulumirpc.GetRequiredPackagesRequest,
) (*pulumirpc.GetRequiredPackagesResponse, error) {
	return &pulumirpc.GetRequiredPackagesResponse{}, nil
}

// resolve finds an entry point of the @pulumi/pulumi installed for the program in dir.
func resolve(dir, module string) (string, error) {
	script := fmt.Sprintf("process.stdout.write(require.resolve(%q))", module)
	cmd := exec.Command("node", "-e", script)
	cmd.Dir = dir
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("cannot find %s from %s (is @pulumi/pulumi installed there? run npm install): %w",
			module, dir, err)
	}
	return string(out), nil
}

// programEnv is the environment of a Node.js program: the stack's config as @pulumi/pulumi's cmd/run reads it
// (keys in the `<package>:config:<name>` form it still accepts from every host), and TypeScript settings.
func programEnv(req *pulumirpc.RunRequest) ([]string, error) {
	cfg := map[string]string{}
	for key, value := range req.GetConfig() {
		parsed, err := config.ParseKey(key)
		if err != nil {
			return nil, err
		}
		cfg[parsed.Namespace()+":config:"+parsed.Name()] = value
	}
	cfgJSON, err := json.Marshal(cfg)
	if err != nil {
		return nil, err
	}
	secrets := req.GetConfigSecretKeys()
	if secrets == nil {
		secrets = []string{}
	}
	secretsJSON, err := json.Marshal(secrets)
	if err != nil {
		return nil, err
	}
	env := append(os.Environ(), "PULUMI_CONFIG="+string(cfgJSON), "PULUMI_CONFIG_SECRET_KEYS="+string(secretsJSON))
	return append(env, typescriptEnv(req.GetInfo().GetOptions().AsMap())...), nil
}

// typescriptEnv turns the runtime options of Pulumi.yaml (`typescript`, `tsconfig`) into the variables @pulumi/pulumi
// reads.
func typescriptEnv(options map[string]any) []string {
	var env []string
	if ts, ok := options["typescript"].(bool); !ok || ts {
		env = append(env, "PULUMI_NODEJS_TYPESCRIPT=true")
	}
	if path, ok := options["tsconfig"].(string); ok && path != "" {
		env = append(env, "PULUMI_NODEJS_TSCONFIG_PATH="+path)
	}
	return env
}

func (h *host) Run(ctx context.Context, req *pulumirpc.RunRequest) (*pulumirpc.RunResponse, error) {
	if h.language == "go" {
		return h.runGo(ctx, req)
	}
	if err := h.nodeOnly("running a program"); err != nil {
		return nil, err
	}
	info := req.GetInfo()
	entry, err := resolve(info.GetProgramDirectory(), "@pulumi/pulumi/cmd/run")
	if err != nil {
		return &pulumirpc.RunResponse{Error: err.Error()}, nil
	}
	env, err := programEnv(req)
	if err != nil {
		return &pulumirpc.RunResponse{Error: fmt.Sprintf("cannot pass the stack's config: %v", err)}, nil
	}
	args := []string{entry}
	flag := func(name, value string) {
		if value != "" {
			args = append(args, "--"+name, value)
		}
	}
	flag("monitor", req.GetMonitorAddress())
	flag("engine", engineAddress())
	flag("organization", req.GetOrganization())
	flag("project", req.GetProject())
	flag("root-directory", info.GetRootDirectory())
	flag("stack", req.GetStack())
	flag("pwd", info.GetProgramDirectory())
	if req.GetDryRun() {
		args = append(args, "--dry-run")
	}
	flag("parallel", strconv.Itoa(int(req.GetParallel())))
	args = append(append(args, info.GetEntryPoint()), req.GetArgs()...)

	cmdCtx, cmdStop := context.WithCancel(h.cancel)
	defer cmdStop()
	context.AfterFunc(ctx, cmdStop)
	cmd := exec.CommandContext(cmdCtx, "node", args...)
	cmd.Cancel = func() error { return cmd.Process.Signal(os.Interrupt) }
	cmd.Env = env
	// Through wrappers: Node.js may switch its stdio to non-blocking mode, which must not reach ours.
	cmd.Stdout = struct{ io.Writer }{os.Stdout}
	cmd.Stderr = struct{ io.Writer }{os.Stderr}
	err = cmd.Run()
	var exit *exec.ExitError
	switch {
	case err == nil:
		return &pulumirpc.RunResponse{}, nil
	case errors.As(err, &exit) && exit.ExitCode() == exitedAfterShowingMessage:
		return &pulumirpc.RunResponse{Bail: true}, nil
	case errors.As(err, &exit):
		return &pulumirpc.RunResponse{Error: fmt.Sprintf("Program exited with non-zero exit code: %d", exit.ExitCode())}, nil
	default:
		return &pulumirpc.RunResponse{Error: fmt.Sprintf("could not run node: %v", err)}, nil
	}
}

// engineAddressOf is the engine's address: the CLI starts language hosts with it as their last argument.
func engineAddress() string {
	for i := len(os.Args) - 1; i > 0; i-- {
		if !strings.HasPrefix(os.Args[i], "-") {
			return os.Args[i]
		}
	}
	return ""
}

func (h *host) RunPlugin(req *pulumirpc.RunPluginRequest, server pulumirpc.LanguageRuntime_RunPluginServer) error {
	if err := h.nodeOnly("running a plugin"); err != nil {
		return err
	}
	ctx := server.Context()
	closer, stdout, stderr, err := rpcutil.MakeRunPluginStreams(server, false)
	if err != nil {
		return err
	}
	defer closer.Close()

	dir := req.GetInfo().GetProgramDirectory()
	analyzer := req.GetKind() == string(apitype.AnalyzerPlugin)
	module := "@pulumi/pulumi/cmd/run-plugin"
	if analyzer {
		module = "@pulumi/pulumi/cmd/run-policy-pack"
	}
	entry, err := resolve(dir, module)
	if err != nil {
		return err
	}
	env := append(req.GetEnv(), typescriptEnv(req.GetInfo().GetOptions().AsMap())...)
	// A provider gets its directory first and then its arguments; a policy pack its arguments and then its directory.
	args := []string{entry, dir}
	args = append(args, req.GetArgs()...)
	var proxy *sdk.PolicyProxy
	if analyzer {
		args = append(append([]string{entry}, req.GetArgs()...), dir)
		// The engine configures a policy pack through the plugin's own connection; a proxy receives that call so
		// that the stack's config reaches the pack's process as the Node.js SDK expects it (PULUMI_CONFIG and co).
		proxy, stdout, err = sdk.NewPolicyProxy(ctx, stdout)
		if err != nil {
			return fmt.Errorf("could not start the policy pack proxy: %w", err)
		}
		stack, err := proxy.AwaitConfiguration(ctx)
		if err != nil {
			return fmt.Errorf("could not get the stack's configuration: %w", err)
		}
		env = append(env, policyEnv(stack)...)
	}

	cmd := exec.CommandContext(ctx, "node", args...)
	cmd.Dir = req.GetPwd()
	if analyzer {
		cmd.Dir = dir
	}
	cmd.Env = env
	cmd.Stdout, cmd.Stderr = stdout, stderr
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("could not start node: %w", err)
	}
	if proxy != nil {
		if err := proxy.Attach(ctx, cmd); err != nil {
			return fmt.Errorf("could not attach the policy pack proxy: %w", err)
		}
		return closer.Close()
	}
	if err := cmd.Wait(); err != nil {
		var exit *exec.ExitError
		if errors.As(err, &exit) {
			if ws, ok := exit.Sys().(syscall.WaitStatus); ok {
				return fmt.Errorf("plugin exited with non-zero exit code: %d", ws.ExitStatus())
			}
		}
		return fmt.Errorf("plugin failed: %w", err)
	}
	return closer.Close()
}

func policyEnv(stack *pulumirpc.AnalyzerStackConfigureRequest) []string {
	if stack == nil {
		return nil
	}
	var env []string
	add := func(k, v string) {
		if v != "" {
			env = append(env, k+"="+v)
		}
	}
	add("PULUMI_NODEJS_ORGANIZATION", stack.GetOrganization())
	add("PULUMI_NODEJS_PROJECT", stack.GetProject())
	add("PULUMI_NODEJS_STACK", stack.GetStack())
	add("PULUMI_NODEJS_DRY_RUN", strconv.FormatBool(stack.GetDryRun()))
	if stack.GetConfig() != nil {
		if cfg, err := json.Marshal(stack.GetConfig()); err == nil {
			add("PULUMI_CONFIG", string(cfg))
		}
	}
	return env
}

func (h *host) InstallDependencies(
	req *pulumirpc.InstallDependenciesRequest, server pulumirpc.LanguageRuntime_InstallDependenciesServer,
) error {
	if h.language != "go" {
		if err := h.nodeOnly("installing dependencies"); err != nil {
			return err
		}
	}
	closer, stdout, stderr, err := rpcutil.MakeInstallDependenciesStreams(server, req.GetIsTerminal())
	if err != nil {
		return err
	}
	defer closer.Close()
	dir := req.GetInfo().GetProgramDirectory()
	if h.language == "go" {
		if err := installGo(server.Context(), dir, stdout, stderr); err != nil {
			return err
		}
		return closer.Close()
	}
	// A plugin (`pulumi package add <directory>`, get-schema, gen-sdk) needs only what it runs with. When each of its
	// dependencies resolves from its directory as Node.js resolves it (its own node_modules or one above: the
	// project's, for a package installed there, or the checkout's), there is nothing to install; `npm install` inside
	// an installed package would put a second copy of them, and its devDependencies, under it.
	if req.GetIsPlugin() {
		missing, err := unresolvedDependencies(dir)
		if err != nil {
			return err
		}
		if len(missing) == 0 {
			fmt.Fprintf(stdout, "The plugin's dependencies are installed (they resolve from %s)\n", dir)
			return closer.Close()
		}
		fmt.Fprintf(stdout, "Installing the plugin's dependencies (%s not found from %s)\n", strings.Join(missing, ", "), dir)
	}
	cmd := exec.CommandContext(server.Context(), "npm", "install", "--no-audit", "--no-fund")
	cmd.Dir = dir
	cmd.Stdout, cmd.Stderr = stdout, stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("npm install in %s failed: %w", cmd.Dir, err)
	}
	return closer.Close()
}

// unresolvedDependencies lists the packages that the package.json in dir depends on (its dependencies, and its peer
// dependencies that are not optional) and that Node.js would not find from dir: in no node_modules directory of dir
// or of a directory above it.
func unresolvedDependencies(dir string) ([]string, error) {
	data, err := os.ReadFile(filepath.Join(dir, "package.json"))
	if err != nil {
		return nil, err
	}
	var manifest struct {
		Dependencies         map[string]string                  `json:"dependencies"`
		PeerDependencies     map[string]string                  `json:"peerDependencies"`
		PeerDependenciesMeta map[string]struct{ Optional bool } `json:"peerDependenciesMeta"`
	}
	if err := json.Unmarshal(data, &manifest); err != nil {
		return nil, fmt.Errorf("%s: %w", filepath.Join(dir, "package.json"), err)
	}
	var needed []string
	for name := range manifest.Dependencies {
		needed = append(needed, name)
	}
	for name := range manifest.PeerDependencies {
		if !manifest.PeerDependenciesMeta[name].Optional {
			needed = append(needed, name)
		}
	}
	var missing []string
	for _, name := range needed {
		if !resolvable(dir, name) {
			missing = append(missing, name)
		}
	}
	sort.Strings(missing)
	return missing, nil
}

// resolvable reports whether Node.js finds the package name from dir (node_modules lookups up the directory tree).
func resolvable(dir, name string) bool {
	for d := dir; ; d = filepath.Dir(d) {
		if filepath.Base(d) != "node_modules" {
			if _, err := os.Stat(filepath.Join(d, "node_modules", name, "package.json")); err == nil {
				return true
			}
		}
		if filepath.Dir(d) == d {
			return false
		}
	}
}

func (h *host) About(context.Context, *pulumirpc.AboutRequest) (*pulumirpc.AboutResponse, error) {
	if h.language == "go" {
		return aboutGo()
	}
	if h.language != "nodejs" {
		return &pulumirpc.AboutResponse{}, nil
	}
	out, err := exec.Command("node", "--version").Output()
	if err != nil {
		return nil, fmt.Errorf("node --version: %w", err)
	}
	return &pulumirpc.AboutResponse{Executable: "node", Version: strings.TrimSpace(strings.TrimPrefix(string(out), "v"))}, nil
}

// GetProgramDependencies lists the dependencies that the program's package.json declares.
func (h *host) GetProgramDependencies(
	_ context.Context, req *pulumirpc.GetProgramDependenciesRequest,
) (*pulumirpc.GetProgramDependenciesResponse, error) {
	if err := h.nodeOnly("listing dependencies"); err != nil {
		return nil, err
	}
	data, err := os.ReadFile(filepath.Join(req.GetInfo().GetProgramDirectory(), "package.json"))
	if err != nil {
		return nil, err
	}
	var manifest struct {
		Dependencies    map[string]string `json:"dependencies"`
		DevDependencies map[string]string `json:"devDependencies"`
	}
	if err := json.Unmarshal(data, &manifest); err != nil {
		return nil, fmt.Errorf("package.json: %w", err)
	}
	resp := &pulumirpc.GetProgramDependenciesResponse{}
	for _, deps := range []map[string]string{manifest.Dependencies, manifest.DevDependencies} {
		for name, version := range deps {
			resp.Dependencies = append(resp.Dependencies, &pulumirpc.DependencyInfo{Name: name, Version: version})
		}
	}
	return resp, nil
}

func (h *host) Cancel(context.Context, *emptypb.Empty) (*emptypb.Empty, error) {
	h.stop()
	return &emptypb.Empty{}, nil
}

// Link adds SDKs generated for the project (`pulumi package add`) to its package.json as `file:` dependencies, with
// the package manager the project uses (the runtime option `packagemanager`, else the lockfile found), and returns
// how to import them: what Pulumi's own Node.js host does.
func (h *host) Link(ctx context.Context, req *pulumirpc.LinkRequest) (*pulumirpc.LinkResponse, error) {
	if err := h.nodeOnly("linking a package"); err != nil {
		return nil, err
	}
	loader, err := schema.NewLoaderClient(req.GetLoaderTarget())
	if err != nil {
		return nil, err
	}
	defer loader.Close()
	cached := schema.NewCachedLoader(loader)
	dir := req.GetInfo().GetProgramDirectory()
	options := req.GetInfo().GetOptions().AsMap()
	manager, _ := options["packagemanager"].(string)
	pm, err := npm.ResolvePackageManager(npm.PackageManagerType(manager), dir)
	if err != nil {
		return nil, err
	}
	typescript := true
	if ts, ok := options["typescript"].(bool); ok {
		typescript = ts
	}
	instructions := "You can import the SDK in your JavaScript code with:\n\n"
	if typescript {
		instructions = "You can import the SDK in your TypeScript code with:\n\n"
	}
	for _, dep := range req.GetPackages() {
		wanted := dep.GetPackage()
		descriptor := &schema.PackageDescriptor{Name: wanted.GetName(), DownloadURL: wanted.GetServer()}
		if v, err := semver.New(wanted.GetVersion()); err == nil {
			descriptor.Version = v
		}
		if p := wanted.GetParameterization(); p != nil {
			descriptor.Parameterization = &schema.ParameterizationDescriptor{Name: p.GetName(), Value: p.GetValue()}
			if v, err := semver.New(p.GetVersion()); err == nil {
				descriptor.Parameterization.Version = *v
			}
		}
		ref, err := schema.LoadPackageReferenceV2(ctx, cached, descriptor)
		if err != nil {
			return nil, err
		}
		pkg, err := ref.Definition()
		if err != nil {
			return nil, err
		}
		if err := pkg.ImportLanguages(map[string]schema.Language{"nodejs": nodejsgen.Importer}); err != nil {
			return nil, err
		}
		name := "@pulumi/" + pkg.Name
		if pkg.Namespace != "" {
			name = "@" + pkg.Namespace + "/" + pkg.Name
		}
		if info, ok := pkg.Language["nodejs"].(nodejsgen.NodePackageInfo); ok && info.PackageName != "" {
			name = info.PackageName
		}
		if err := pm.Link(ctx, dir, name, dep.GetPath()); err != nil {
			return nil, err
		}
		if typescript {
			instructions += fmt.Sprintf("  import * as %s from %q;\n", cgstrings.Camel(ref.Name()), name)
		} else {
			instructions += fmt.Sprintf("  const %s = require(%q);\n", cgstrings.Camel(ref.Name()), name)
		}
	}
	return &pulumirpc.LinkResponse{ImportInstructions: instructions}, nil
}

// GenerateProgram turns the PCL that `pulumi import` writes into a program in this host's language.
func (h *host) GenerateProgram(
	_ context.Context, req *pulumirpc.GenerateProgramRequest,
) (*pulumirpc.GenerateProgramResponse, error) {
	loader, err := schema.NewLoaderClient(req.GetLoaderTarget())
	if err != nil {
		return nil, err
	}
	defer loader.Close()
	parser := hclsyntax.NewParser()
	for path, contents := range req.GetSource() {
		if err := parser.ParseFile(strings.NewReader(contents), path); err != nil {
			return nil, err
		}
		if parser.Diagnostics.HasErrors() {
			return nil, parser.Diagnostics
		}
	}
	var options []pcl.BindOption
	if h.language == "nodejs" {
		options = append(options, pcl.PreferOutputVersionedInvokes)
	}
	if !req.GetStrict() {
		options = append(options, pcl.NonStrictBindOptions()...)
	}
	program, diags, err := pcl.BindProgram(parser.Files, schema.NewCachedLoader(loader), options...)
	if err != nil {
		return nil, err
	}
	if diags.HasErrors() || program == nil {
		return &pulumirpc.GenerateProgramResponse{Diagnostics: plugin.HclDiagnosticsToRPCDiagnostics(diags)}, nil
	}
	var files map[string][]byte
	var more hcl.Diagnostics
	switch h.language {
	case "nodejs":
		files, more, err = nodejsgen.GenerateProgramWithOptions(program, nodejsgen.ProgramOptions{Runtime: "nodejs"})
	case "python":
		files, more, err = pythongen.GenerateProgram(program)
	default:
		files, more, err = gogen.GenerateProgram(program)
	}
	if err != nil {
		return nil, err
	}
	return &pulumirpc.GenerateProgramResponse{
		Source:      files,
		Diagnostics: plugin.HclDiagnosticsToRPCDiagnostics(append(diags, more...)),
	}, nil
}

// GeneratePackage writes the SDK of a package schema in this host's language (`pulumi package gen-sdk`).
func (h *host) GeneratePackage(
	_ context.Context, req *pulumirpc.GeneratePackageRequest,
) (*pulumirpc.GeneratePackageResponse, error) {
	loader, err := schema.NewLoaderClient(req.GetLoaderTarget())
	if err != nil {
		return nil, err
	}
	defer loader.Close()
	var spec schema.PackageSpec
	if err := json.Unmarshal([]byte(req.GetSchema()), &spec); err != nil {
		return nil, fmt.Errorf("the schema: %w", err)
	}
	cached := schema.NewCachedLoader(loader)
	pkg, diags, err := schema.BindSpec(spec, cached, schema.ValidationOptions{AllowDanglingReferences: true})
	if err != nil {
		return nil, err
	}
	if diags.HasErrors() {
		return &pulumirpc.GeneratePackageResponse{Diagnostics: plugin.HclDiagnosticsToRPCDiagnostics(diags)}, nil
	}
	tool := "pulumi-language-" + h.language
	var files map[string][]byte
	switch h.language {
	case "nodejs":
		files, err = nodejsgen.GeneratePackage(tool, pkg, req.GetExtraFiles(), req.GetLocalDependencies(), req.GetLocal(), cached)
	case "python":
		files, err = pythongen.GeneratePackage(tool, pkg, req.GetExtraFiles(), cached)
	default:
		files, err = gogen.GeneratePackage(tool, pkg, req.GetLocalDependencies())
	}
	if err != nil {
		return nil, err
	}
	for name, data := range files {
		path := filepath.Join(req.GetDirectory(), name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return nil, err
		}
		if err := os.WriteFile(path, data, 0o644); err != nil {
			return nil, err
		}
	}
	return &pulumirpc.GeneratePackageResponse{Diagnostics: plugin.HclDiagnosticsToRPCDiagnostics(diags)}, nil
}
