package application_test

import (
	"context"
	"testing"
	"time"

	"github.com/cachegate/cachegate/application"
	"github.com/cachegate/cachegate/domain"
	"github.com/cachegate/cachegate/ports"
)

// heldValidator holds every check until release closes, after telling
// started.
type heldValidator struct {
	ports.UserValidator
	started chan struct{}
	release chan struct{}
}

func (v heldValidator) ValidateUser(ctx context.Context, in ports.LoginInput) (domain.User, error) {
	v.started <- struct{}{}
	<-v.release
	return v.UserValidator.ValidateUser(ctx, in)
}

// heldLogin is a Login at limit 1 per username whose first check is held.
func heldLogin(t *testing.T, wait time.Duration) (*application.Login, heldValidator) {
	t.Helper()
	e := newAuthEnv(t, authOpts{})
	e.addUser(t, "ada", pw, true)
	inner, err := application.NewCredentialValidator(context.Background(), application.RepoUserLookup{Users: e.users}, e.hasher, e.hasher)
	if err != nil {
		t.Fatal(err)
	}
	v := heldValidator{UserValidator: inner, started: make(chan struct{}, 1), release: make(chan struct{})}
	t.Cleanup(func() { close(v.release) })
	login, err := application.NewLogin(application.LoginDeps{Validator: v, Tokens: e.tokens, Throttle: e.throttle,
		Limits: application.ThrottleLimits{PerUsername: 1, Window: time.Hour}, InFlightWait: wait})
	if err != nil {
		t.Fatal(err)
	}
	return login, v
}

func TestALoginWaitingForAttemptsInFlightIsBounded(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name string
		wait time.Duration
		ctx  func() context.Context
	}{
		{"the wait ends at InFlightWait", 20 * time.Millisecond, context.Background},
		{"a negative InFlightWait does not wait", -1, context.Background},
		{"the caller's context ends the wait", time.Hour, func() context.Context {
			ctx, cancel := context.WithCancel(context.Background())
			cancel()
			return ctx
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			login, v := heldLogin(t, c.wait)
			go func() {
				_, _ = login.Execute(context.Background(), application.LoginInput{Username: "ada", Password: pw})
			}()
			<-v.started
			// The first attempt is held in its check for the whole test:
			// the second finds the limit reached by it, and must still
			// answer, throttled, without a password check of its own.
			_, err := login.Execute(c.ctx(), application.LoginInput{Username: "ada", Password: pw})
			if domain.KindOf(err) != domain.KindTooMany {
				t.Fatalf("err = %v, want too many attempts", err)
			}
			select {
			case <-v.started:
				t.Fatal("the throttled attempt checked a password")
			default:
			}
		})
	}
}
