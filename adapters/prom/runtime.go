package prom

import (
	"strconv"
	"strings"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
)

// goCollector is the Go runtime collector without its gauge
// go_memstats_alloc_bytes. OpenMetrics names a counter's family without
// the _total suffix, so that gauge and the counter
// go_memstats_alloc_bytes_total would be two families of one name, which
// a strict OpenMetrics parser refuses. The gauge's value is also
// go_memstats_heap_alloc_bytes.
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
	all := make(chan *prometheus.Desc)
	go func() {
		w.Collector.Describe(all)
		close(all)
	}()
	for d := range all {
		if !w.drops(d) {
			ch <- d
		}
	}
}

func (w without) Collect(ch chan<- prometheus.Metric) {
	all := make(chan prometheus.Metric)
	go func() {
		w.Collector.Collect(all)
		close(all)
	}()
	for m := range all {
		if !w.drops(m.Desc()) {
			ch <- m
		}
	}
}
