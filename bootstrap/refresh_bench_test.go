package bootstrap_test

import (
	"context"
	"io"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
	"time"

	"go.uber.org/fx"

	"github.com/cachegate/cachegate/application"
	"github.com/cachegate/cachegate/bootstrap"
	"github.com/cachegate/cachegate/bootstrap/config"
	"github.com/cachegate/cachegate/domain"
)

// BenchmarkRefreshSQLite measures the refresh use case as the binary runs
// it, without HTTP: the default wiring (EdDSA keys, bunstore on an SQLite
// file, reuse grace as configured by default), 64 sessions refreshed by
// as many goroutines, each presenting the token its previous refresh
// returned, as test/bench/run's refresh path does. It reports the CPU time
// per refresh (cpu-ns/op) beside the wall time. A fixed count keeps a
// loaded machine from stopping the benchmark at a tiny b.N. For a CPU
// profile:
//
//	go test -run '^$' -bench RefreshSQLite -benchtime 3000x -count 6 -cpuprofile cpu.out ./bootstrap/
//	go tool pprof -top -cum bootstrap.test cpu.out
func BenchmarkRefreshSQLite(b *testing.B) {
	cfg := config.Default()
	cfg.Database = "sqlite:" + filepath.Join(b.TempDir(), "bench.db")
	cfg.Auth.BcryptCost = 4
	var (
		admin   *application.Users
		login   *application.Login
		refresh *application.Refresh
	)
	app, err := bootstrap.Start(bootstrap.Core(cfg, io.Discard), fx.Populate(&admin, &login, &refresh))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = bootstrap.Stop(app, 10*time.Second) })
	ctx := context.Background()
	const pw = "Bench-passw0rd!"
	if _, err := admin.Add(ctx, domain.System(), application.AddUserInput{Username: "bench", Password: pw, Active: true}); err != nil {
		b.Fatal(err)
	}
	const sessions = 64
	tokens := make(chan string, sessions)
	for range sessions {
		p, err := login.Execute(ctx, application.LoginInput{Username: "bench", Password: pw})
		if err != nil {
			b.Fatal(err)
		}
		tokens <- p.RefreshToken
	}
	b.ReportAllocs()
	b.SetParallelism(sessions / 2) // GOMAXPROCS is 2 here: 64 goroutines
	var once sync.Once
	b.ResetTimer()
	cpu0 := cpuTime(b)
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			tok := <-tokens
			p, err := refresh.Execute(ctx, tok)
			if err != nil {
				once.Do(func() { b.Error(err) })
				tokens <- tok
				return
			}
			tokens <- p.RefreshToken
		}
	})
	// On a shared machine the wall time per refresh says more about the
	// neighbours than about the code; the process's CPU time per refresh
	// (user and system, all goroutines) much less.
	b.ReportMetric(float64((cpuTime(b)-cpu0).Nanoseconds())/float64(b.N), "cpu-ns/op")
}

// cpuTime returns the CPU time the process has used so far.
func cpuTime(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
