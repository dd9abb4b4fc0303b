package application

import "github.com/cachegate/cachegate/ports"

// nopMetrics records nothing; use cases use it when given no metrics.
type nopMetrics struct{}

// LoginOutcome implements ports.Metrics.
func (nopMetrics) LoginOutcome(string) {}

// RefreshOutcome implements ports.Metrics.
func (nopMetrics) RefreshOutcome(string) {}

// CacheEntryCreated implements ports.Metrics.
func (nopMetrics) CacheEntryCreated(string) {}

// CacheRowsSwept implements ports.Metrics.
func (nopMetrics) CacheRowsSwept(string, int) {}

// AuditEvent implements ports.Metrics.
func (nopMetrics) AuditEvent(string) {}

func metricsOrNop(m ports.Metrics) ports.Metrics {
	if m == nil {
		return nopMetrics{}
	}
	return m
}
