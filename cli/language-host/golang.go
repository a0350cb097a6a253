package main

// Go programs (`runtime: go`): built with the machine's Go and run with the engine's environment, as Pulumi's own Go
// language host does (github.com/pulumi/pulumi/sdk/go/pulumi-language-go, which the module proxy does not serve).

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/pulumi/pulumi/sdk/v3/go/common/constant"
	"github.com/pulumi/pulumi/sdk/v3/go/pulumi"
	pulumirpc "github.com/pulumi/pulumi/sdk/v3/proto/go"
)

// goOptions are the `runtime.options` of a Go project that Pulumi's Go host reads: `binary`, a program built
// beforehand (run as it is), or `buildTarget`, where to write the program that is built (kept after the run).
type goOptions struct {
	binary      string
	buildTarget string
}

func parseGoOptions(options map[string]any) (goOptions, error) {
	var opts goOptions
	for name, target := range map[string]*string{"binary": &opts.binary, "buildTarget": &opts.buildTarget} {
		if value, ok := options[name]; ok {
			text, isText := value.(string)
			if !isText {
				return opts, fmt.Errorf("Pulumi.yaml: runtime.options.%s must be a string (a path), not %v", name, value)
			}
			*target = text
		}
	}
	if opts.binary != "" && opts.buildTarget != "" {
		return opts, errors.New("Pulumi.yaml: runtime.options has both `binary` and `buildTarget`: " +
			"keep `binary` to run a program built beforehand, or `buildTarget` to say where to build it")
	}
	return opts, nil
}

// goEnv is the environment of the `go` commands this host runs: the machine's Go only (GOTOOLCHAIN=local: never a
// downloaded toolchain), modules resolved as go.mod says and recorded in go.sum when one is missing there (-mod=mod,
// unless GOFLAGS already chooses), and a build cache outside the project: $GOCACHE when set, else
// ${XDG_CACHE_HOME:-~/.cache}/cloudinfra/go-build. GOPROXY and the rest come from the environment.
func goEnv() []string {
	env := append(os.Environ(), "GOTOOLCHAIN=local")
	if flags := os.Getenv("GOFLAGS"); !strings.Contains(flags, "-mod=") {
		env = append(env, strings.TrimSpace("GOFLAGS="+flags+" -mod=mod"))
	}
	if os.Getenv("GOCACHE") == "" {
		env = append(env, "GOCACHE="+goBuildCache())
	}
	return env
}

// goBuildCache is the build cache of Go programs when GOCACHE is not set (test/go-cache.ts prepares the same one).
func goBuildCache() string {
	base := os.Getenv("XDG_CACHE_HOME")
	if base == "" {
		if home, err := os.UserHomeDir(); err == nil {
			base = filepath.Join(home, ".cache")
		} else {
			base = os.TempDir()
		}
	}
	return filepath.Join(base, "cloudinfra", "go-build")
}

// goProgramEnv is the environment of the program: what the Go SDK's pulumi.Run reads (the PULUMI_* variables).
func goProgramEnv(req *pulumirpc.RunRequest) ([]string, error) {
	env := os.Environ()
	set := func(name, value string) {
		if value != "" {
			env = append(env, name+"="+value)
		}
	}
	if cfg := req.GetConfig(); cfg != nil {
		text, err := json.Marshal(cfg)
		if err != nil {
			return nil, err
		}
		set(pulumi.EnvConfig, string(text))
	}
	secrets := req.GetConfigSecretKeys()
	if secrets == nil {
		secrets = []string{}
	}
	text, err := json.Marshal(secrets)
	if err != nil {
		return nil, err
	}
	set(pulumi.EnvConfigSecretKeys, string(text))
	set(pulumi.EnvOrganization, req.GetOrganization())
	set(pulumi.EnvProject, req.GetProject())
	set(pulumi.EnvPulumiRootDirectory, req.GetInfo().GetRootDirectory())
	set(pulumi.EnvStack, req.GetStack())
	set(pulumi.EnvDryRun, strconv.FormatBool(req.GetDryRun()))
	set(pulumi.EnvParallel, strconv.Itoa(int(req.GetParallel())))
	set(pulumi.EnvMonitor, req.GetMonitorAddress())
	set(pulumi.EnvEngine, engineAddress())
	return env, nil
}

// buildGoProgram runs `go build` in the program's directory and returns the executable, and a function that removes it
// when it was written to a temporary file. What `go build` says on failure is the error, as the compiler printed it.
func buildGoProgram(ctx context.Context, dir, target string) (string, func(), error) {
	if sources, _ := filepath.Glob(filepath.Join(dir, "*.go")); len(sources) == 0 {
		return "", nil, fmt.Errorf("no Go files in %s: a `runtime: go` project holds its main package next to Pulumi.yaml", dir)
	}
	cleanup := func() {}
	out := target
	if out == "" {
		f, err := os.CreateTemp("", "pulumi-go-program-*")
		if err != nil {
			return "", nil, fmt.Errorf("cannot create the program's executable: %w", err)
		}
		_ = f.Close()
		out = f.Name()
		cleanup = func() { _ = os.Remove(out) }
	} else if !filepath.IsAbs(out) {
		out = filepath.Join(dir, out)
	}
	// -trimpath: the compiled packages do not depend on where the project is, so a copy of it builds from the cache.
	cmd := exec.CommandContext(ctx, "go", "build", "-buildvcs=false", "-trimpath", "-ldflags=-w -s", "-o", out, ".")
	cmd.Dir = dir
	cmd.Env = goEnv()
	var output bytes.Buffer
	cmd.Stdout, cmd.Stderr = &output, &output
	if err := cmd.Run(); err != nil {
		cleanup()
		var exit *exec.ExitError
		if errors.As(err, &exit) {
			return "", nil, fmt.Errorf("`go build` of the program in %s failed:\n%s", dir, strings.TrimSpace(output.String()))
		}
		return "", nil, fmt.Errorf("cannot run `go build` (is Go installed and on PATH?): %w", err)
	}
	return out, cleanup, nil
}

func (h *host) runGo(ctx context.Context, req *pulumirpc.RunRequest) (*pulumirpc.RunResponse, error) {
	info := req.GetInfo()
	opts, err := parseGoOptions(info.GetOptions().AsMap())
	if err != nil {
		return &pulumirpc.RunResponse{Error: err.Error()}, nil
	}
	env, err := goProgramEnv(req)
	if err != nil {
		return &pulumirpc.RunResponse{Error: fmt.Sprintf("cannot pass the stack's config: %v", err)}, nil
	}
	cmdCtx, cmdStop := context.WithCancel(h.cancel)
	defer cmdStop()
	context.AfterFunc(ctx, cmdStop)

	program := opts.binary
	if program != "" {
		if strings.ContainsRune(program, filepath.Separator) && !filepath.IsAbs(program) {
			program = filepath.Join(info.GetProgramDirectory(), program)
		} else if found, err := exec.LookPath(program); err == nil {
			program = found
		}
	} else {
		built, cleanup, err := buildGoProgram(cmdCtx, info.GetProgramDirectory(), opts.buildTarget)
		if err != nil {
			return &pulumirpc.RunResponse{Error: err.Error()}, nil
		}
		defer cleanup()
		program = built
	}

	cmd := exec.CommandContext(cmdCtx, program, req.GetArgs()...)
	cmd.Dir = req.GetPwd()
	if cmd.Dir == "" {
		cmd.Dir = info.GetProgramDirectory()
	}
	cmd.Env = env
	cmd.Cancel = func() error { return cmd.Process.Signal(os.Interrupt) }
	cmd.WaitDelay = 5 * time.Second
	cmd.Stdout = struct{ io.Writer }{os.Stdout}
	cmd.Stderr = struct{ io.Writer }{os.Stderr}
	err = cmd.Run()
	var exit *exec.ExitError
	switch {
	case err == nil:
		return &pulumirpc.RunResponse{}, nil
	case errors.As(err, &exit) && exit.ExitCode() == constant.ExitStatusLoggedError:
		// The program told the engine what went wrong already.
		return &pulumirpc.RunResponse{Bail: true}, nil
	case errors.As(err, &exit):
		return &pulumirpc.RunResponse{Error: fmt.Sprintf("program exited with non-zero exit code: %d", exit.ExitCode())}, nil
	default:
		return &pulumirpc.RunResponse{Error: fmt.Sprintf("could not run the program %s: %v", program, err)}, nil
	}
}

// installGo is `pulumi install` (and `pulumi new`) for a Go project: `go mod tidy`, which downloads the modules the
// program imports and writes go.sum.
func installGo(ctx context.Context, dir string, stdout, stderr io.Writer) error {
	fmt.Fprintf(stdout, "Installing the Go program's modules (go mod tidy in %s)\n", dir)
	cmd := exec.CommandContext(ctx, "go", "mod", "tidy")
	cmd.Dir = dir
	cmd.Env = goEnv()
	cmd.Stdout, cmd.Stderr = stdout, stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("`go mod tidy` in %s failed (what go printed is above): %w", dir, err)
	}
	return nil
}

// aboutGo names the Go that builds programs (`pulumi about`).
func aboutGo() (*pulumirpc.AboutResponse, error) {
	cmd := exec.Command("go", "env", "GOVERSION")
	cmd.Env = goEnv()
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("go env GOVERSION: %w", err)
	}
	return &pulumirpc.AboutResponse{Executable: "go", Version: strings.TrimPrefix(strings.TrimSpace(string(out)), "go")}, nil
}
