package prom_test

import (
	"testing"

	dto "github.com/prometheus/client_model/go"

	"github.com/cachegate/cachegate/adapters/prom"
)

// newMetrics returns a Metrics with default options.
func newMetrics(t *testing.T) *prom.Metrics {
	t.Helper()
	m, err := prom.New(prom.Options{})
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return m
}

// sample returns the value of the series of family name whose labels are
// exactly labels: a counter's or gauge's value, a histogram's sample
// count. ok is false when there is no such series.
func sample(t *testing.T, m *prom.Metrics, name string, labels map[string]string) (v float64, ok bool) {
	t.Helper()
	families, err := m.Registry().Gather()
	if err != nil {
		t.Fatalf("Gather: %v", err)
	}
	for _, f := range families {
		if f.GetName() != name {
			continue
		}
		for _, s := range f.GetMetric() {
			if !sameLabels(s.GetLabel(), labels) {
				continue
			}
			switch {
			case s.Counter != nil:
				return s.Counter.GetValue(), true
			case s.Gauge != nil:
				return s.Gauge.GetValue(), true
			case s.Histogram != nil:
				return float64(s.Histogram.GetSampleCount()), true
			}
			t.Fatalf("%s%v: unexpected metric type %v", name, labels, f.GetType())
		}
	}
	return 0, false
}

// value is sample that fails the test when the series does not exist.
func value(t *testing.T, m *prom.Metrics, name string, labels map[string]string) float64 {
	t.Helper()
	v, ok := sample(t, m, name, labels)
	if !ok {
		t.Fatalf("no series %s%v", name, labels)
	}
	return v
}

// sameLabels reports whether pairs are exactly want.
func sameLabels(pairs []*dto.LabelPair, want map[string]string) bool {
	if len(pairs) != len(want) {
		return false
	}
	for _, p := range pairs {
		if w, ok := want[p.GetName()]; !ok || w != p.GetValue() {
			return false
		}
	}
	return true
}

// newBenchMetrics returns a Metrics with default options for a benchmark.
func newBenchMetrics(b *testing.B) *prom.Metrics {
	b.Helper()
	m, err := prom.New(prom.Options{})
	if err != nil {
		b.Fatalf("New: %v", err)
	}
	return m
}
