package application

import "github.com/cachegate/cachegate/ports"

// NopMetrics records nothing; use cases use it when given no metrics.
type NopMetrics struct{}

// LoginOutcome implements ports.Metrics.
func (NopMetrics) LoginOutcome(string) {}

// RefreshOutcome implements ports.Metrics.
func (NopMetrics) RefreshOutcome(string) {}

// CacheEntryCreated implements ports.Metrics.
func (NopMetrics) CacheEntryCreated(string) {}

// CacheRowsSwept implements ports.Metrics.
func (NopMetrics) CacheRowsSwept(string, int) {}

// AuditEvent implements ports.Metrics.
func (NopMetrics) AuditEvent(string) {}

func metricsOrNop(m ports.Metrics) ports.Metrics {
	if m == nil {
		return NopMetrics{}
	}
	return m
}
