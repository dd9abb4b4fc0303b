package prom_test

import (
	"testing"
	"time"
)

func BenchmarkObserveRequest(b *testing.B) {
	m := newBenchMetrics(b)
	m.ObserveRequest("GET", "/cache/:assignment/:id", 200, time.Millisecond)
	b.ReportAllocs()
	for b.Loop() {
		m.ObserveRequest("GET", "/cache/:assignment/:id", 200, time.Millisecond)
	}
}

func BenchmarkObserveRequestParallel(b *testing.B) {
	m := newBenchMetrics(b)
	routes := []string{"/cache/:assignment/:id", "/cache/:assignment", "/auth/login", "/auth/refresh", ""}
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		i := 0
		for pb.Next() {
			m.ObserveRequest("GET", routes[i%len(routes)], 200+i%2, time.Millisecond)
			i++
		}
	})
}

func BenchmarkLoginOutcome(b *testing.B) {
	m := newBenchMetrics(b)
	b.ReportAllocs()
	for b.Loop() {
		m.LoginOutcome("success")
	}
}
