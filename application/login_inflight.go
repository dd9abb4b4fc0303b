package application

import (
	"context"
	"sync"
	"time"

	"github.com/cachegate/cachegate/ports"
)

// DefaultInFlightWait bounds how long a login waits for the attempts in
// flight that fill its throttle limit (LoginDeps.InFlightWait).
const DefaultInFlightWait = 5 * time.Second

// inFlight tracks this process's login attempts that are being reserved
// in the throttle or whose password is being checked, per throttle key.
//
// The throttle counts an attempt before its password is checked and a
// success gives its place back afterwards, so parallel logins with the
// right password can find the limit reached by attempts about to succeed.
// An attempt refused while attempts of its keys are in flight here waits
// for them (at most InFlightWait) and tries again each time one gives its
// place back; when none is left, the refusal stands. Attempts in flight on
// other replicas are not known here (ARCHITECTURE.md, "Threat model").
//
// An attempt is registered before it calls Reserve, and deregistered at
// once when Reserve refuses it, so an attempt refused by a count holding
// another attempt of this process always finds that one registered,
// without a lock held across the store's call.
type inFlight struct {
	mu   sync.Mutex
	keys map[string]*flights
}

// flights are the attempts in flight under one key.
type flights struct {
	n       int
	changed chan struct{} // closed, and replaced, when an attempt under the key ends
	frees   uint64        // attempts that ended by giving their place back
}

func newInFlight() *inFlight { return &inFlight{keys: map[string]*flights{}} }

// add registers one attempt in flight under every key.
func (f *inFlight) add(keys []ports.ThrottleKey) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, k := range keys {
		fl := f.keys[k.Key]
		if fl == nil {
			fl = &flights{changed: make(chan struct{})}
			f.keys[k.Key] = fl
		}
		fl.n++
	}
}

// done ends an attempt added under keys; freed says whether it gave its
// place back (a success). Waiters under those keys wake.
func (f *inFlight) done(keys []ports.ThrottleKey, freed bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, k := range keys {
		fl := f.keys[k.Key]
		if fl == nil {
			continue
		}
		fl.n--
		if freed {
			fl.frees++
		}
		close(fl.changed)
		fl.changed = make(chan struct{})
		if fl.n == 0 {
			delete(f.keys, k.Key)
		}
	}
}

// wait waits until an attempt in flight under keys gives its place back
// (true: try again), or until none is left in flight, stop fires or ctx
// ends (false: the refusal stands).
func (f *inFlight) wait(ctx context.Context, keys []ports.ThrottleKey, stop <-chan time.Time) bool {
	for {
		f.mu.Lock()
		var (
			chans []chan struct{}
			flis  []*flights
			frees []uint64
		)
		for _, k := range keys {
			if fl := f.keys[k.Key]; fl != nil {
				chans = append(chans, fl.changed)
				flis = append(flis, fl)
				frees = append(frees, fl.frees)
			}
		}
		f.mu.Unlock()
		if len(chans) == 0 {
			return false
		}
		if !waitAny(ctx, stop, chans) {
			return false
		}
		f.mu.Lock()
		freed := false
		for i, fl := range flis {
			freed = freed || fl.frees != frees[i]
		}
		f.mu.Unlock()
		if freed {
			return true
		}
	}
}

// waitAny waits for one of chans to close (true), or for stop or ctx
// (false). There are at most two keys per attempt.
func waitAny(ctx context.Context, stop <-chan time.Time, chans []chan struct{}) bool {
	var second chan struct{}
	if len(chans) > 1 {
		second = chans[1]
	}
	select {
	case <-chans[0]:
		return true
	case <-second:
		return true
	case <-stop:
		return false
	case <-ctx.Done():
		return false
	}
}
