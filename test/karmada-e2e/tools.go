//go:build tools

// Package karmadae2e pins Karmada's end-to-end suite; the harness builds it
// with `go test -c github.com/karmada-io/karmada/test/e2e/suites/base`.
package karmadae2e

import _ "github.com/karmada-io/karmada/test/e2e/suites/base"
