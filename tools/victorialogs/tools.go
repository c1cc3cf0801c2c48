//go:build tools

// Package tools pins the VictoriaLogs server that lokivl's tests and users
// run: `go build` of the imported package yields the `victoria-logs` binary.
package tools

import _ "github.com/VictoriaMetrics/VictoriaLogs/app/victoria-logs"
