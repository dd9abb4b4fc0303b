package prom

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/cachegate/cachegate/ports"
)

// FeedLagBuckets are the delivery-lag histogram's buckets, in seconds.
var FeedLagBuckets = []float64{0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10}

// feedMetrics are the change feed's metrics.
type feedMetrics struct {
	subscribers prometheus.Gauge
	sent        prometheus.Counter
	dropped     prometheus.Counter
	lag         prometheus.Histogram
}

var _ ports.FeedMetrics = (*Metrics)(nil)

func newFeedMetrics() feedMetrics {
	return feedMetrics{
		subscribers: prometheus.NewGauge(prometheus.GaugeOpts{Namespace: Namespace, Subsystem: "feed", Name: "subscribers",
			Help: "Open change-feed subscriptions (event streams and Go Watch calls) in this process."}),
		sent: prometheus.NewCounter(prometheus.CounterOpts{Namespace: Namespace, Subsystem: "feed", Name: "events_sent_total",
			Help: "Change events handed to subscribers."}),
		dropped: prometheus.NewCounter(prometheus.CounterOpts{Namespace: Namespace, Subsystem: "feed", Name: "subscribers_dropped_total",
			Help: "Subscribers disconnected for not keeping up."}),
		lag: prometheus.NewHistogram(prometheus.HistogramOpts{Namespace: Namespace, Subsystem: "feed", Name: "delivery_lag_seconds",
			Help:    "Time from a change's record in the log to its delivery to a subscriber.",
			Buckets: FeedLagBuckets}),
	}
}

func (f feedMetrics) collectors() []prometheus.Collector {
	return []prometheus.Collector{f.subscribers, f.sent, f.dropped, f.lag}
}

// FeedSubscribers implements ports.FeedMetrics.
func (m *Metrics) FeedSubscribers(n int) { m.feed.subscribers.Set(float64(n)) }

// FeedEventSent implements ports.FeedMetrics.
func (m *Metrics) FeedEventSent() { m.feed.sent.Inc() }

// FeedSubscriberDropped implements ports.FeedMetrics.
func (m *Metrics) FeedSubscriberDropped() { m.feed.dropped.Inc() }

// FeedDeliveryLag implements ports.FeedMetrics.
func (m *Metrics) FeedDeliveryLag(d time.Duration) { m.feed.lag.Observe(max(d, 0).Seconds()) }
