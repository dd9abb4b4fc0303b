package callers

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/cachegate/cachegate/domain"
)

// queued waits until n calls wait in p's queue.
func queued(t *testing.T, p *connTokens, n int) {
	t.Helper()
	for {
		p.mu.Lock()
		got := len(p.queue)
		p.mu.Unlock()
		if got == n {
			return
		}
		if t.Context().Err() != nil {
			t.Fatalf("never %d calls queued", n)
		}
		time.Sleep(time.Millisecond)
	}
}

// noToken fails when got delivers before the queue's state settled: a
// call that must keep waiting took a token.
func noToken(t *testing.T, got <-chan error, what string) {
	t.Helper()
	select {
	case err := <-got:
		t.Fatalf("%s: got a token (%v), want it to keep waiting", what, err)
	case <-time.After(20 * time.Millisecond):
	}
}

func TestCallsOfSpentCallersWaitBehindTheOthers(t *testing.T) {
	t.Parallel()
	p := newConnTokens(1)
	if err := p.takeFor(t.Context(), who("holder"), true); err != nil {
		t.Fatal(err)
	}
	served := make(chan string, 3)
	n := 0
	wait := func(caller string, spent bool) {
		go func() {
			if err := p.takeFor(context.Background(), who(caller), spent); err == nil {
				served <- caller
			}
		}()
		// Queue the calls in this order.
		n++
		queued(t, p, n)
	}
	wait("spent", true)
	wait("first", false)
	wait("second", false)
	canceled, cancel := context.WithCancel(t.Context())
	cancel()
	if err := p.takeFor(canceled, who("late"), false); !errors.Is(err, context.Canceled) {
		t.Fatalf("take with an ended context = %v, want context.Canceled", err)
	}
	var order []string
	for _, gave := range []struct {
		caller string
		spent  bool
	}{{"holder", true}, {"first", false}, {"second", false}} {
		p.give(who(gave.caller), gave.spent)
		order = append(order, <-served)
	}
	if want := []string{"first", "second", "spent"}; !slices.Equal(order, want) {
		t.Errorf("served %v, want %v: callers with budget first, in turn", order, want)
	}
	p.give(who("spent"), true)
	if p.free != 1 || p.spentHeld != 0 || len(p.queue) != 0 || len(p.held) != 0 {
		t.Errorf("%d tokens free, %d calls queued, %d callers holding after every call gave its back, want 1, 0, 0",
			p.free, len(p.queue), len(p.held))
	}
}

func TestSpentCallersHoldAtMostHalfTheConnections(t *testing.T) {
	t.Parallel()
	p := newConnTokens(4)
	for _, c := range []string{"s1", "s2"} {
		if err := p.takeFor(t.Context(), who(c), true); err != nil {
			t.Fatal(err)
		}
	}
	short, cancel := context.WithTimeout(t.Context(), 20*time.Millisecond)
	defer cancel()
	if err := p.takeFor(short, who("s3"), true); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("a third spent call with two of four tokens free = %v, want it to wait", err)
	}
	for _, c := range []string{"a", "b"} {
		if err := p.takeFor(t.Context(), who(c), false); err != nil {
			t.Fatalf("a call with budget left beside two spent ones = %v, want a token", err)
		}
	}
	got := make(chan error, 1)
	go func() { got <- p.takeFor(context.Background(), who("s3"), true) }()
	queued(t, p, 1)
	p.give(who("a"), false)
	noToken(t, got, "a spent call while spent calls held their share")
	p.give(who("s1"), true)
	if err := <-got; err != nil {
		t.Fatal(err)
	}
}

func TestTheLastQuarterOfTheConnectionsWaitsForACallerWithNoneInFlight(t *testing.T) {
	t.Parallel()
	p := newConnTokens(4)
	// Three callers' calls, then each caller's second call: the seconds
	// find only the reserve free and wait.
	for _, c := range []string{"a", "b", "c"} {
		if err := p.takeFor(t.Context(), who(c), false); err != nil {
			t.Fatal(err)
		}
	}
	short, cancel := context.WithTimeout(t.Context(), 20*time.Millisecond)
	defer cancel()
	if err := p.takeFor(short, who("a"), false); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("a caller's second call with only the reserve free = %v, want it to wait", err)
	}
	got := make(chan error, 1)
	go func() { got <- p.takeFor(context.Background(), who("b"), false) }()
	queued(t, p, 1)
	// A caller with nothing on a connection takes the reserve at once.
	if err := p.takeFor(t.Context(), who("victim"), false); err != nil {
		t.Fatalf("a call of a caller holding none with the reserve free = %v, want the token", err)
	}
	// Its token back makes the reserve again: b's waiting second call
	// does not get it; a token above the reserve goes to it.
	p.give(who("victim"), false)
	noToken(t, got, "b's second call with only the reserve free")
	p.give(who("c"), false)
	if err := <-got; err != nil {
		t.Fatal(err)
	}
	if p.free != 1 {
		t.Errorf("%d tokens free, want the reserve of 1", p.free)
	}
}

// A caller whose calls queue behind each other (requests arriving while
// one of its calls waits) is judged when a token comes free: once its
// earlier call gave its token back, its next call takes the reserve,
// ahead of the others' calls queued before it.
func TestACallersQueuedCallTakesTheReserveOnceItsEarlierCallIsDone(t *testing.T) {
	t.Parallel()
	p := newConnTokens(4)
	for _, c := range []string{"a", "b", "c"} {
		if err := p.takeFor(t.Context(), who(c), false); err != nil {
			t.Fatal(err)
		}
	}
	// The victim's first call takes the reserve.
	if err := p.takeFor(t.Context(), who("victim"), false); err != nil {
		t.Fatal(err)
	}
	served := make(chan string, 2)
	wait := func(caller string, n int) {
		go func() {
			if err := p.takeFor(context.Background(), who(caller), false); err == nil {
				served <- caller
			}
		}()
		queued(t, p, n)
	}
	wait("a", 1)      // a's second call, before the victim's
	wait("victim", 2) // arrives while the victim's first call holds a token
	p.give(who("victim"), false)
	select {
	case got := <-served:
		if got != "victim" {
			t.Fatalf("the reserve went to %s's second call, want the victim's", got)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the victim's queued call got no token when its first call gave the reserve back")
	}
	p.give(who("victim"), false)
	p.give(who("b"), false)
	if got := <-served; got != "a" {
		t.Fatalf("served %s, want a", got)
	}
}

// who names a user caller.
func who(user string) domain.Caller { return domain.Caller{User: user} }
