//go:build pprofdiag

// A diagnostic build only: `go build -tags nomsgpack,grpcnotrace,pprofdiag`
// serves net/http/pprof on $CACHEGATE_PPROF_ADDR (e.g. 127.0.0.1:6061), for
// heap and goroutine profiles under load (test/bench/README.md,
// "Profiles"). Release builds leave this file out.

package main

import (
	"net/http"
	_ "net/http/pprof"
	"os"
)

func init() {
	if a := os.Getenv("CACHEGATE_PPROF_ADDR"); a != "" {
		go func() { _ = http.ListenAndServe(a, nil) }()
	}
}
