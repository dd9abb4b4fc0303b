package application

import (
	"cmp"

	"github.com/cachegate/cachegate/ports"
)

// nopMetrics records nothing; use cases use it when given no metrics. Its
// methods implement ports.Metrics.
type nopMetrics struct{}

func (nopMetrics) LoginOutcome(string)        {}
func (nopMetrics) RefreshOutcome(string)      {}
func (nopMetrics) CacheEntryCreated(string)   {}
func (nopMetrics) CacheRowsSwept(string, int) {}
func (nopMetrics) AuditEvent(string)          {}

func metricsOrNop(m ports.Metrics) ports.Metrics { return cmp.Or[ports.Metrics](m, nopMetrics{}) }
