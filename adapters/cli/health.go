package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"time"
	"unicode"
)

// healthCommand asks the running service whether it is ready, for a
// container's health check without shell or curl (docs/deployment.md).
var healthCommand = Command{
	Name:     "health",
	Synopsis: "[--url URL] [--timeout DURATION]",
	Summary:  "exit 0 when the service at --addr (or --url) answers GET /readyz with 200, else 1",
	// The server's settings for --addr; the storage group's for the log
	// format of its error (it never opens the database).
	Uses: UsesStorage | UsesServer,
	Setup: func(fs *flag.FlagSet) RunFunc {
		url := fs.String("url", "", "the readiness `URL` to ask (default: /readyz at --addr, a wildcard host asked on loopback)")
		timeout := fs.Duration("timeout", 5*time.Second, "give up and exit 1 after `DURATION`")
		return func(ctx context.Context, env *Env) error {
			target := *url
			if target == "" {
				target = ReadyURL(env.Runtime.Addr())
			}
			if *timeout <= 0 {
				return usageErrorf("health: --timeout must be positive")
			}
			if err := checkReady(ctx, target, *timeout); err != nil {
				return err
			}
			fmt.Fprintf(env.Stdout, "ready: %s\n", target)
			return nil
		}
	},
}

// ReadyURL is the URL of GET /readyz on the listen address addr: a
// wildcard or empty host (0.0.0.0:8080, [::]:8080, :8080) is asked on the
// loopback address of its family.
func ReadyURL(addr string) string {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return "http://" + addr + "/readyz"
	}
	switch host {
	case "", "0.0.0.0":
		host = "127.0.0.1"
	case "::":
		host = "::1"
	}
	return "http://" + net.JoinHostPort(host, port) + "/readyz"
}

// checkReady GETs url, bypassing any proxy of the environment, and returns
// nil on 200, else an error saying what answered.
func checkReady(ctx context.Context, url string, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return usageErrorf("health: --url: %v", err)
	}
	client := &http.Client{Transport: &http.Transport{Proxy: nil, DisableKeepAlives: true}}
	resp, err := client.Do(req)
	if err != nil {
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			return fmt.Errorf("not ready: %s: no answer within %s", url, timeout)
		}
		return fmt.Errorf("not ready: %w", err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("not ready: %s answered %s: %s", url, resp.Status, printable(body))
	}
	return nil
}

// printable is an answer's body as one line of printable text.
func printable(b []byte) string {
	return strings.TrimSpace(strings.Map(func(r rune) rune {
		if unicode.IsPrint(r) {
			return r
		}
		return ' '
	}, string(b)))
}
