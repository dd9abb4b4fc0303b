package domain

import "time"

// Policy says who may use the entries of one cache assignment.
type Policy uint8

// The access policies.
const (
	// PolicyOwner lets a caller see and change only entries whose assignee
	// is the caller's own subject; others' entries are invisible.
	PolicyOwner Policy = iota + 1
	// PolicyAuthenticated lets any authenticated caller use every entry.
	PolicyAuthenticated
	// PolicyPublic lets anyone, even without a token, use every entry.
	PolicyPublic
)

var policyNames = [...]string{PolicyOwner: "owner", PolicyAuthenticated: "authenticated", PolicyPublic: "public"}

// ParsePolicy parses "owner", "authenticated" or "public".
func ParsePolicy(s string) (Policy, bool) {
	for p, name := range policyNames {
		if p > 0 && name == s {
			return Policy(p), true
		}
	}
	return 0, false
}

// String returns the policy's configuration name.
func (p Policy) String() string {
	if p > 0 && int(p) < len(policyNames) {
		return policyNames[p]
	}
	return "unknown"
}

// Actor is who performs an operation: the system itself (a trusted Go
// caller, to whom no policy applies), an anonymous HTTP client, or an
// authenticated principal; and where from (Client).
type Actor struct {
	kind      actorKind
	Principal Principal
	// Client is where the actor's request comes from; zero for the system.
	Client Client
}

// Client is where a request comes from, as the driving adapter saw it:
// the client's address (behind trusted proxies, the one they name) and
// its User-Agent. The audit trail records the address, a session both.
type Client struct {
	Address, UserAgent string
}

// From returns a acting from c.
func (a Actor) From(c Client) Actor {
	a.Client = c
	return a
}

// Caller is whose database work a store call is: the key by which storage
// shares the database fairly (README, "Fair share of the database"). It
// is a fairness key, never an authorisation. The zero Caller (the system
// actor: background work, in-process calls as the system) is not bounded.
type Caller struct {
	// User is the authenticated user's id; Address, when User is empty,
	// an anonymous client's address.
	User, Address string
}

// Caller returns whose database work a's operation is: its principal's,
// or an anonymous actor's client address; the zero Caller for the system.
func (a Actor) Caller() Caller {
	switch a.kind {
	case actorUser:
		return Caller{User: a.Principal.ID}
	case actorAnonymous:
		return Caller{Address: a.Client.Address}
	}
	return Caller{}
}

type actorKind uint8

const (
	actorSystem actorKind = iota
	actorAnonymous
	actorUser
)

// System is the trusted actor of in-process Go calls; the zero Actor.
func System() Actor { return Actor{kind: actorSystem} }

// Anonymous is a caller without a valid token.
func Anonymous() Actor { return Actor{kind: actorAnonymous} }

// AsPrincipal is an authenticated caller.
func AsPrincipal(p Principal) Actor { return Actor{kind: actorUser, Principal: p} }

// IsSystem reports whether a is the trusted system actor.
func (a Actor) IsSystem() bool { return a.kind == actorSystem }

// Authenticated reports whether a carries a principal.
func (a Actor) Authenticated() bool { return a.kind == actorUser }

// Principal is an authenticated caller as the user lookup's BySubject
// returned it.
type Principal struct {
	// ID is the token subject: the user's id.
	ID       string
	Username string
	// Value is whatever an integrator's lookup wants handlers to see; the
	// default lookup leaves it nil.
	Value any
	// FamilyID is the refresh-token family of the session the access token
	// was issued for; empty when unknown.
	FamilyID string
	// ExpiresAt is when the access token the principal came from expires
	// (zero when unknown); long-lived streams end then.
	ExpiresAt time.Time
	// KeyID names the key that signed that access token (empty when
	// unknown), so a long-lived stream ends when the key is revoked.
	KeyID string
	// Admin is what the lookup knows of the user's admin role (the default
	// lookup reads it from the user), written into the tokens a refresh
	// issues; never an authorisation (docs/admin.md).
	Admin bool
}
