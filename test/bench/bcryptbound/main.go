// Command bcryptbound measures how many bcrypt password checks per second
// this machine does at a cost, with one checker per core (GOMAXPROCS): the
// upper bound of the login rate, which test/bench/run compares login against.
// It checks through adapters/passhash, the hasher the service uses.
//
//	bcryptbound [--cost 10] [--duration 3s]
//
// prints one line: `RESULT cost=10 workers=2 checks=… per_s=… ms_per_check=…`.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cachegate/cachegate/adapters/passhash"
	"github.com/cachegate/cachegate/ports"
)

func main() {
	cost := flag.Int("cost", passhash.DefaultBcryptCost, "bcrypt cost")
	duration := flag.Duration("duration", 3*time.Second, "how long to measure")
	flag.Parse()
	if err := run(*cost, *duration); err != nil {
		fmt.Fprintln(os.Stderr, "bcryptbound:", err)
		os.Exit(1)
	}
}

// run hashes one password at cost, then checks it on GOMAXPROCS goroutines
// for about d and prints the rate.
func run(cost int, d time.Duration) error {
	ctx := context.Background()
	h, err := passhash.New(passhash.Options{BcryptCost: cost})
	if err != nil {
		return err
	}
	const password = "bench password"
	hash, _, err := h.Hash(ctx, password)
	if err != nil {
		return err
	}
	in := ports.PasswordCheck{Password: password, PasswordHash: hash}
	workers := runtime.GOMAXPROCS(0)
	var (
		checks atomic.Int64
		failed atomic.Bool
		wg     sync.WaitGroup
	)
	start := time.Now()
	deadline := start.Add(d)
	for range workers {
		wg.Go(func() {
			for time.Now().Before(deadline) {
				if ok, err := h.Validate(ctx, in); !ok || err != nil {
					failed.Store(true)
					return
				}
				checks.Add(1)
			}
		})
	}
	wg.Wait()
	if failed.Load() {
		return fmt.Errorf("a check of the right password failed")
	}
	secs := time.Since(start).Seconds()
	n := checks.Load()
	fmt.Printf("RESULT cost=%d workers=%d checks=%d per_s=%.1f ms_per_check=%.1f\n",
		cost, workers, n, float64(n)/secs, secs*1000*float64(workers)/float64(max(n, 1)))
	return nil
}
