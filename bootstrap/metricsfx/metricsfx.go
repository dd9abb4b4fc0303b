// Package metricsfx is the fx module of Prometheus metrics: it watches
// the database pool and serves GET /metrics on its own listen address when
// one is configured (open: a private network's scrapers), else on the main
// server for the metrics token or an administrator (README.md, "What the
// API does").
//
// Provides: *prom.Metrics, ports.Metrics, ports.FeedMetrics, ginhttp.RequestObserver and,
// without an address of its own, *ginhttp.MetricsOptions for httpfx.
package metricsfx

import (
	"log/slog"
	"net/http"
	"time"

	"go.uber.org/fx"

	"github.com/cachegate/cachegate/adapters/bunstore"
	"github.com/cachegate/cachegate/adapters/ginhttp"
	"github.com/cachegate/cachegate/adapters/prom"
	"github.com/cachegate/cachegate/bootstrap/httpfx"
	"github.com/cachegate/cachegate/ports"
)

// Module serves metrics; addr is the separate listen address, or "" to
// serve /metrics on the main server to a request bearing token (none when
// empty) or an administrator.
func Module(addr, token string) fx.Option {
	opts := []fx.Option{
		fx.Provide(
			func(log *slog.Logger) (*prom.Metrics, error) { return prom.New(prom.Options{Logger: log}) },
			func(m *prom.Metrics) ports.Metrics { return m },
			func(m *prom.Metrics) ports.FeedMetrics { return m },
			func(m *prom.Metrics) ginhttp.RequestObserver { return m },
		),
		fx.Invoke(watchDB),
	}
	if addr == "" {
		opts = append(opts, fx.Provide(func(m *prom.Metrics) *ginhttp.MetricsOptions {
			// Admin stays nil: there are no admin roles yet.
			return &ginhttp.MetricsOptions{Handler: m.Handler(), Token: token}
		}))
	} else {
		opts = append(opts, fx.Invoke(func(lc fx.Lifecycle, m *prom.Metrics, log *slog.Logger) {
			serve(lc, addr, m.Handler(), log)
		}))
	}
	return fx.Module("metrics", opts...)
}

type dbParams struct {
	fx.In
	DB *bunstore.DB `optional:"true"`
	M  *prom.Metrics
}

func watchDB(p dbParams) {
	if p.DB != nil {
		p.M.WatchDB("main", p.DB.Bun().Stats)
	}
}

// serve runs the metrics server on its own address. Its stop is bounded
// only by the app's stop timeout: a scrape is short.
func serve(lc fx.Lifecycle, addr string, h http.Handler, log *slog.Logger) {
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", h)
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	lc.Append(httpfx.ServerHook(srv, httpfx.Listen{Addr: addr, Setting: "metrics-addr",
		Log: log.With("server", "metrics")}))
}
