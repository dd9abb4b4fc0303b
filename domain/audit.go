package domain

import (
	"crypto/sha256"
	"encoding/hex"
	"slices"
	"strconv"
	"time"
	"unicode/utf8"
)

// AuditType names a security event of the audit trail (README.md, "Audit
// trail").
type AuditType string

// The audit event types.
const (
	AuditLoginSucceeded      AuditType = "login.succeeded"
	AuditLoginFailed         AuditType = "login.failed"
	AuditLoginThrottled      AuditType = "login.throttled"
	AuditRefreshReused       AuditType = "refresh.reused"
	AuditLogout              AuditType = "logout"
	AuditSessionExpired      AuditType = "session.expired"
	AuditSessionEvicted      AuditType = "session.evicted"
	AuditUserAdded           AuditType = "user.added"
	AuditUserDisabled        AuditType = "user.disabled"
	AuditUserEnabled         AuditType = "user.enabled"
	AuditUserPasswordChanged AuditType = "user.password_changed"
	AuditKeyRotated          AuditType = "key.rotated"
	AuditKeyRevoked          AuditType = "key.revoked"
	AuditUserDeleted         AuditType = "user.deleted"
	AuditSessionRevoked      AuditType = "session.revoked"
	AuditUserAdminGranted    AuditType = "user.admin_granted"
	AuditUserAdminRevoked    AuditType = "user.admin_revoked"
	// An admin changed or deleted an entry of any assignee over the
	// admin API (docs/admin.md, "Entries of any assignee").
	AuditEntryUpdated AuditType = "entry.updated"
	AuditEntryDeleted AuditType = "entry.deleted"
	// Types not recorded any more, valid in queries for the events stored
	// with them (docs/admin.md, "Audit event types").
	AuditAdminUserAdded       AuditType = "admin.user_added"
	AuditAdminUserUpdated     AuditType = "admin.user_updated"
	AuditAdminPasswordSet     AuditType = "admin.user_password_set"
	AuditAdminUserDeleted     AuditType = "admin.user_deleted"
	AuditAdminSessionsRevoked AuditType = "admin.sessions_revoked"
	AuditAdminKeyRotated      AuditType = "admin.key_rotated"
	AuditAdminKeyRevoked      AuditType = "admin.key_revoked"
	AuditReasonUnknownUser              = "unknown_user"
	AuditReasonBadPassword              = "bad_password"
	AuditReasonInactive                 = "inactive"
)

// AuditTypes lists every audit event type.
func AuditTypes() []AuditType {
	return []AuditType{AuditLoginSucceeded, AuditLoginFailed, AuditLoginThrottled, AuditRefreshReused,
		AuditLogout, AuditSessionExpired, AuditSessionEvicted, AuditUserAdded, AuditUserDisabled, AuditUserEnabled,
		AuditUserPasswordChanged, AuditKeyRotated, AuditKeyRevoked,
		AuditAdminUserAdded, AuditAdminUserUpdated, AuditAdminPasswordSet, AuditAdminUserDeleted,
		AuditAdminSessionsRevoked, AuditAdminKeyRotated, AuditAdminKeyRevoked, AuditSessionRevoked,
		AuditUserAdminGranted, AuditUserAdminRevoked, AuditUserDeleted, AuditEntryUpdated, AuditEntryDeleted}
}

// Valid reports whether t is one of AuditTypes.
func (t AuditType) Valid() bool { return slices.Contains(AuditTypes(), t) }

// AuditEvent is one security event. Fields that are not known are empty;
// no field ever holds a password or a token. Family is a refresh family
// (session) id; for key events it holds the key id.
//
// An event may stand for several login attempts folded together (see
// AuditFold): Time is then the first attempt's, LastSeen the last one's
// and Count how many there were. A single event has Count 0 and LastSeen
// zero; Attempts reads both alike.
type AuditEvent struct {
	ID        string
	Time      time.Time
	Type      AuditType
	UserID    string
	Username  string
	Address   string
	RequestID string
	Family    string
	Reason    string
	Count     int
	LastSeen  time.Time
	// ActorID and ActorUsername name the admin who made the change over
	// the admin API (docs/admin.md); empty when the command line or the
	// user themself made it.
	ActorID       string
	ActorUsername string
	// Detail is a short text an event may carry ("all" for every
	// session of a user); never a password or a token.
	Detail string
}

// Attempts is how many attempts e stands for: Count, or 1 for a single
// event.
func (e AuditEvent) Attempts() int { return max(e.Count, 1) }

// MaxAuditUsernameLen bounds the usernames the audit trail stores, in
// characters: a failed login may name anything up to MaxUsernameLen, and
// that name is the attacker's, not an account's.
const MaxAuditUsernameLen = 64

// CutAuditUsername returns s cut to its first MaxAuditUsernameLen
// characters (at a character boundary; bytes that are not UTF-8 count as
// one character each).
func CutAuditUsername(s string) string {
	n := 0
	for i := 0; i < len(s); n++ {
		if n == MaxAuditUsernameLen {
			return s[:i]
		}
		_, size := utf8.DecodeRuneInString(s[i:])
		i += size
	}
	return s
}

// AuditFold is the rule that bounds what failed and throttled logins add
// to the audit trail (docs/operations.md, "Audit trail", which also says
// what a folded event keeps). Within one window of Window (counted from
// the Unix epoch, so every replica cuts alike), throttled logins of one
// address fold into one event; failed ones of one reason, username (as
// logins compare it) and address into one; and once an address has
// Distinct events of failures, its further ones into one event of the
// address. So one address adds at most Distinct+2 events a window.
type AuditFold struct {
	Window   time.Duration
	Distinct int
}

// DefaultAuditFold is the folding rule the service uses unless configured
// (--audit-fold-window).
var DefaultAuditFold = AuditFold{Window: time.Minute, Distinct: 5}

// Folds reports whether e is an event the rule folds: a failed or
// throttled login, with a window of a microsecond at least.
func (f AuditFold) Folds(e AuditEvent) bool {
	return f.Window.Microseconds() > 0 && (e.Type == AuditLoginFailed || e.Type == AuditLoginThrottled)
}

// Start returns the start of the window t falls in.
func (f AuditFold) Start(t time.Time) time.Time {
	w := f.Window.Microseconds()
	if w <= 0 {
		return t.UTC()
	}
	us := t.UnixMicro()
	start := us - us%w
	if us%w < 0 {
		start -= w
	}
	return time.UnixMicro(start).UTC()
}

// Keys returns the fold keys of e, an event f folds: own is the key of
// the events e folds with, shared that of its address's event (the two
// are equal for a throttled login). Keys are 32 hex digits: a hash of the
// type, reason, username, address and window, so rows that fold carry no
// more of the attacker's text than their fields.
func (f AuditFold) Keys(e AuditEvent) (own, shared string) {
	start := strconv.FormatInt(f.Start(e.Time).UnixMicro(), 10) + "/" + strconv.FormatInt(f.Window.Microseconds(), 10)
	shared = foldKey(string(e.Type), "*", "*", e.Address, start)
	if e.Type == AuditLoginThrottled {
		return shared, shared
	}
	return foldKey(string(e.Type), e.Reason, NormalizeUsername(CutAuditUsername(e.Username)), e.Address, start), shared
}

func foldKey(parts ...string) string {
	h := sha256.New()
	for _, p := range parts {
		h.Write([]byte(strconv.Itoa(len(p))))
		h.Write([]byte{':'})
		h.Write([]byte(p))
	}
	return hex.EncodeToString(h.Sum(nil)[:16])
}
