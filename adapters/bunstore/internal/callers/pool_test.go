package callers

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"
)

func TestCallsOfSpentCallersWaitBehindTheOthers(t *testing.T) {
	t.Parallel()
	p := newConnTokens(1)
	if err := p.take(t.Context(), true); err != nil {
		t.Fatal(err)
	}
	served := make(chan string, 3)
	queued := 0
	wait := func(name string, spent bool) {
		go func() {
			if err := p.take(context.Background(), spent); err == nil {
				served <- name
			}
		}()
		// Queue the calls in this order.
		queued++
		for {
			p.mu.Lock()
			n := len(p.high) + len(p.low)
			p.mu.Unlock()
			if n == queued {
				return
			}
			time.Sleep(time.Millisecond)
		}
	}
	wait("spent", true)
	wait("first", false)
	wait("second", false)
	canceled, cancel := context.WithCancel(t.Context())
	cancel()
	if err := p.take(canceled, false); !errors.Is(err, context.Canceled) {
		t.Fatalf("take with an ended context = %v, want context.Canceled", err)
	}
	var order []string
	for i := range 3 {
		p.give(i == 0)
		order = append(order, <-served)
	}
	if want := []string{"first", "second", "spent"}; !slices.Equal(order, want) {
		t.Errorf("served %v, want %v: callers with budget first, in turn", order, want)
	}
	p.give(true)
	if p.free != 1 || p.spentHeld != 0 || len(p.high)+len(p.low) != 0 {
		t.Errorf("%d tokens free and %d calls queued after every call gave its back, want 1 and 0", p.free, len(p.high)+len(p.low))
	}
}

func TestSpentCallersHoldAtMostHalfTheConnections(t *testing.T) {
	t.Parallel()
	p := newConnTokens(4)
	for range 2 {
		if err := p.take(t.Context(), true); err != nil {
			t.Fatal(err)
		}
	}
	short, cancel := context.WithTimeout(t.Context(), 20*time.Millisecond)
	defer cancel()
	if err := p.take(short, true); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("a third spent call with two of four tokens free = %v, want it to wait", err)
	}
	for range 2 {
		if err := p.take(t.Context(), false); err != nil {
			t.Fatalf("a call with budget left beside two spent ones = %v, want a token", err)
		}
	}
	got := make(chan error, 1)
	go func() { got <- p.take(context.Background(), true) }()
	for {
		p.mu.Lock()
		n := len(p.low)
		p.mu.Unlock()
		if n == 1 {
			break
		}
		time.Sleep(time.Millisecond)
	}
	p.give(false)
	select {
	case err := <-got:
		t.Fatalf("a spent call got a token while spent calls held their share: %v", err)
	case <-time.After(20 * time.Millisecond):
	}
	p.give(true)
	if err := <-got; err != nil {
		t.Fatal(err)
	}
}

func TestTheLastQuarterOfTheConnectionsWaitsForACallerWithNoneInFlight(t *testing.T) {
	t.Parallel()
	p := newConnTokens(4)
	// Three callers' lone calls, then each caller's second call: the
	// seconds find only the reserve free and wait.
	for range 3 {
		if err := p.takeFor(t.Context(), false, true); err != nil {
			t.Fatal(err)
		}
	}
	short, cancel := context.WithTimeout(t.Context(), 20*time.Millisecond)
	defer cancel()
	if err := p.takeFor(short, false, false); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("a caller's second call with only the reserve free = %v, want it to wait", err)
	}
	got := make(chan error, 1)
	go func() { got <- p.takeFor(context.Background(), false, false) }()
	for {
		p.mu.Lock()
		n := len(p.mid)
		p.mu.Unlock()
		if n == 1 {
			break
		}
		time.Sleep(time.Millisecond)
	}
	// A caller with nothing in flight takes the reserve at once.
	if err := p.takeFor(t.Context(), false, true); err != nil {
		t.Fatalf("a lone call with the reserve free = %v, want the token", err)
	}
	// Its token back makes the reserve again: the waiting second call
	// does not get it; a token above the reserve goes to it.
	p.give(false)
	select {
	case err := <-got:
		t.Fatalf("a second call took the reserve: %v", err)
	case <-time.After(20 * time.Millisecond):
	}
	p.give(false)
	if err := <-got; err != nil {
		t.Fatal(err)
	}
	if p.free != 1 {
		t.Errorf("%d tokens free, want the reserve of 1", p.free)
	}
}
