package contract

import (
	"context"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cachegate/cachegate/adapters/josejwt"
	"github.com/cachegate/cachegate/adapters/memstore"
	"github.com/cachegate/cachegate/adapters/passhash"
	"github.com/cachegate/cachegate/adapters/system"
	"github.com/cachegate/cachegate/application"
	"github.com/cachegate/cachegate/domain"
	"github.com/cachegate/cachegate/ports"
)

// LoginBurst runs bursts of parallel logins through application.Login
// over the throttles newReplicas returns: one per replica, all sharing one
// store (two handles on one PostgreSQL database are two replicas). It
// counts password verifications with a counting hasher (docs/api.md,
// "Authentication", "the throttle is atomic"): N parallel wrong attempts at limit L
// cost at most L verifications, and no attempt past a limit reached by
// failures succeeds, not even with the right password; but parallel
// logins with the right password all succeed, since an attempt refused
// while the limit is filled by attempts still in flight in its process
// waits for them (README.md, "Fair share").
func LoginBurst(t *testing.T, newReplicas func(t *testing.T) []ports.LoginThrottle) {
	t.Helper()
	const limit, tries = 10, 30

	t.Run("30 parallel wrong logins at limit 10 cost at most 10 password checks", func(t *testing.T) {
		t.Parallel()
		b := newBurst(t, newReplicas(t), limit, 0)
		statuses := b.fire(t, tries, func(int) string { return "wrong password!" })
		if got := b.checks.Load(); got > limit {
			t.Errorf("%d password checks for %d parallel wrong logins at limit %d, want at most %d", got, tries, limit, limit)
		}
		if statuses[domain.KindUnauthenticated] > limit || statuses[domain.KindTooMany] < tries-limit {
			t.Errorf("outcomes %v, want at most %d unauthenticated and the rest throttled", statuses, limit)
		}
	})

	t.Run("the right password past the limit is refused while the first attempts are being checked", func(t *testing.T) {
		t.Parallel()
		// The first `limit` attempts are held inside their password check,
		// so their failures are not known yet; every attempt fired meanwhile
		// must already be throttled.
		b := newBurst(t, newReplicas(t), limit, limit)
		held := make(chan map[domain.Kind]int, 1)
		go func() { held <- b.fire(t, limit, func(int) string { return "wrong password!" }) }()
		b.waitHeld(t)
		// These wait for the held attempts (they fill the limit while in
		// flight); once those fail, the limit is made of failures.
		later := make(chan map[domain.Kind]int, 1)
		go func() {
			later <- b.fire(t, tries-limit, func(i int) string {
				if i == (tries-limit)/2 {
					return burstPassword
				}
				return "wrong password!"
			})
		}()
		b.waitReserving(t, tries-limit)
		close(b.release)
		statuses := <-later
		if statuses[domain.KindTooMany] != tries-limit {
			t.Errorf("attempts past the limit: %v, want all %d throttled (the right password among them)", statuses, tries-limit)
		}
		if first := <-held; first[domain.KindUnauthenticated] != limit {
			t.Errorf("the first %d attempts: %v, want all unauthenticated", limit, first)
		}
		if got := b.checks.Load(); got != limit {
			t.Errorf("%d password checks, want %d", got, limit)
		}
	})

	t.Run("20 parallel logins with the right password at limit 10 all succeed", func(t *testing.T) {
		t.Parallel()
		// One replica: an attempt waits for the attempts in flight in its
		// own process; another replica's are not known to it.
		// The first `limit` checks are held until the other attempts have
		// found the limit reached by them, so the test does not depend on
		// how fast a check is.
		b := newBurst(t, newReplicas(t)[:1], limit, limit)
		const n = 20
		all := make(chan map[domain.Kind]int, 1)
		go func() { all <- b.fire(t, n, func(int) string { return burstPassword }) }()
		b.waitHeld(t)
		b.waitReserving(t, n-limit)
		close(b.release)
		statuses := <-all
		if statuses[burstSucceeded] != n {
			t.Errorf("outcomes %v, want all %d succeeded", statuses, n)
		}
		if got := b.checks.Load(); got != n {
			t.Errorf("%d password checks, want %d", got, n)
		}
	})

}

// burstSucceeded is the outcome key of a successful login.
const burstSucceeded domain.Kind = 255

// burstPassword is the password of the burst's user.
const burstPassword = "correct horse battery"

// burst is a user "alice" and one application.Login per replica.
type burst struct {
	logins   []*application.Login
	checks   atomic.Int32
	reserves atomic.Int32  // calls of the throttles' Reserve
	hold     int32         // how many first checks wait for release
	release  chan struct{} // closed to let held checks finish
}

func newBurst(t *testing.T, throttles []ports.LoginThrottle, limit int, hold int32) *burst {
	t.Helper()
	ctx := context.Background()
	b := &burst{hold: hold, release: make(chan struct{})}
	t.Cleanup(func() {
		select {
		case <-b.release:
		default:
			close(b.release)
		}
	})
	h, err := passhash.New(passhash.Options{BcryptCost: passhash.MinBcryptCost})
	if err != nil {
		t.Fatal(err)
	}
	refresh, clock, ids := memstore.NewRefreshStore(nil), system.Clock{}, system.UUIDv7{}
	users := memstore.NewUserRepository(nil, refresh)
	check, err := application.NewAdminCheck(users, clock)
	if err != nil {
		t.Fatal(err)
	}
	admin, err := application.NewUsers(application.UsersDeps{Users: users, Hasher: h, Clock: clock, IDs: ids, Check: check, Refresh: refresh})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := admin.Add(ctx, domain.System(), application.AddUserInput{Username: "alice", Password: burstPassword, Active: true}); err != nil {
		t.Fatal(err)
	}
	tok, err := josejwt.New(ctx, josejwt.Options{HS256Secret: []byte(strings.Repeat("s", 32)), Clock: clock})
	if err != nil {
		t.Fatal(err)
	}
	validator, err := application.NewCredentialValidator(ctx, application.RepoUserLookup{Users: users}, countingPasswords{h, b}, h)
	if err != nil {
		t.Fatal(err)
	}
	for _, th := range throttles {
		login, err := application.NewLogin(application.LoginDeps{Validator: validator,
			Tokens:   application.TokenDeps{Issuer: tok.Issuer(), Refresh: refresh, Clock: clock, IDs: ids},
			Throttle: countingThrottle{th, b}, Limits: application.ThrottleLimits{PerUsername: limit, PerAddress: 1000, Window: time.Hour}})
		if err != nil {
			t.Fatal(err)
		}
		b.logins = append(b.logins, login)
	}
	return b
}

// fire runs n logins of " Alice" (the username in another case and with
// spaces, as clients send it) at once, spread over the replicas, and
// counts the outcomes by error kind; a success counts under
// burstSucceeded.
func (b *burst) fire(t *testing.T, n int, password func(i int) string) map[domain.Kind]int {
	var (
		mu  sync.Mutex
		out = map[domain.Kind]int{}
		wg  sync.WaitGroup
	)
	start := make(chan struct{})
	for i := range n {
		wg.Go(func() {
			<-start
			_, err := b.logins[i%len(b.logins)].Execute(context.Background(),
				application.LoginInput{Username: []string{" Alice", "alice", "ALICE "}[i%3], Password: password(i), ClientAddr: "192.0.2.1"})
			kind := burstSucceeded
			if err != nil {
				kind = domain.KindOf(err)
				if kind != domain.KindUnauthenticated && kind != domain.KindTooMany {
					t.Errorf("login: %v", err)
				}
			}
			mu.Lock()
			out[kind]++
			mu.Unlock()
		})
	}
	close(start)
	wg.Wait()
	return out
}

// waitHeld waits until the held checks have all started.
func (b *burst) waitHeld(t *testing.T) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for b.checks.Load() < b.hold {
		if time.Now().After(deadline) {
			t.Fatalf("only %d of %d password checks started", b.checks.Load(), b.hold)
		}
		time.Sleep(time.Millisecond)
	}
}

// waitReserving waits until n more Reserve calls than the held checks
// were made: the attempts fired after the held ones were each refused
// once (and now wait for those in flight).
func (b *burst) waitReserving(t *testing.T, n int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for b.reserves.Load() < b.hold+int32(n) {
		if time.Now().After(deadline) {
			t.Fatalf("only %d Reserve calls, want %d", b.reserves.Load(), b.hold+int32(n))
		}
		time.Sleep(time.Millisecond)
	}
}

// countingThrottle counts Reserve calls.
type countingThrottle struct {
	ports.LoginThrottle
	b *burst
}

// For counts the calls of the throttle bound to caller.
func (c countingThrottle) For(caller domain.Caller) ports.LoginThrottle {
	return countingThrottle{c.LoginThrottle.For(caller), c.b}
}

func (c countingThrottle) Reserve(ctx context.Context, keys []ports.ThrottleKey, now, since time.Time) (bool, time.Time, error) {
	c.b.reserves.Add(1)
	return c.LoginThrottle.Reserve(ctx, keys, now, since)
}

// countingPasswords is the real hasher, counting password checks and
// holding the first b.hold of them until b.release closes.
type countingPasswords struct {
	*passhash.Hasher
	b *burst
}

func (c countingPasswords) check() {
	if c.b.checks.Add(1) <= c.b.hold {
		select {
		case <-c.b.release:
		case <-time.After(20 * time.Second):
		}
	}
}

func (c countingPasswords) Validate(ctx context.Context, in ports.PasswordCheck) (bool, error) {
	c.check()
	return c.Hasher.Validate(ctx, in)
}

func (c countingPasswords) ValidateObject(ctx context.Context, pw string, u domain.User) (bool, error) {
	c.check()
	return c.Hasher.ValidateObject(ctx, pw, u)
}
