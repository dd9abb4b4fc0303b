package prom

import (
	"strconv"
	"strings"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
)

// goCollector is the Go runtime collector without its gauge
// go_memstats_alloc_bytes (the value of go_memstats_heap_alloc_bytes): in
// OpenMetrics it and the counter go_memstats_alloc_bytes_total would be
// two families of one name, which a strict parser refuses.
func goCollector() prometheus.Collector {
	return without{collectors.NewGoCollector(), "go_memstats_alloc_bytes"}
}

// without is a collector without the metrics of one family.
type without struct {
	prometheus.Collector
	name string
}

// drops reports whether d is the family's: a Desc shows its name only in
// its String.
func (w without) drops(d *prometheus.Desc) bool {
	return strings.HasPrefix(d.String(), "Desc{fqName: "+strconv.Quote(w.name)+",")
}

func (w without) Describe(ch chan<- *prometheus.Desc) {
	forward(w.Collector.Describe, ch, func(d *prometheus.Desc) bool { return !w.drops(d) })
}

func (w without) Collect(ch chan<- prometheus.Metric) {
	forward(w.Collector.Collect, ch, func(m prometheus.Metric) bool { return !w.drops(m.Desc()) })
}

// forward sends on ch what produce sends that keep accepts.
func forward[T any](produce func(chan<- T), ch chan<- T, keep func(T) bool) {
	all := make(chan T)
	go func() {
		produce(all)
		close(all)
	}()
	for v := range all {
		if keep(v) {
			ch <- v
		}
	}
}
