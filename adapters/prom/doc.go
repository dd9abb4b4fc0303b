// Package prom implements ports.Metrics with the Prometheus client library
// and adds what the HTTP edge and the database need: request counts and
// latencies by route template, database pool statistics read at scrape
// time, and an http.Handler serving it all in the Prometheus text format.
//
// Every Metrics owns its own prometheus.Registry (never the global default
// one), so tests and several instances in one process do not collide.
// Every label takes values from a bounded set: routes are templates,
// methods and outcomes outside the known sets are counted as "other".
package prom
