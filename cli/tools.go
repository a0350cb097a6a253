//go:build tools

// Package tools records the commands this module builds, so `go mod tidy` keeps their requirements.
package tools

import (
	_ "github.com/pulumi/pulumi/pkg/v3/cmd/pulumi"
)
