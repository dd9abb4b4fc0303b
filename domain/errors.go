package domain

import (
	"errors"
	"log/slog"
	"strings"
	"time"
)

// Kind is the closed set of error categories. The HTTP adapter maps each
// kind to one status code in exactly one table.
type Kind uint8

// The error kinds.
const (
	KindInternal Kind = iota
	KindInvalid
	KindNotFound
	KindConflict
	KindPreconditionFailed
	KindUnauthenticated
	KindForbidden
	KindTooMany
	// KindUnavailable is a dependency (the database) that does not answer
	// now; the same request may succeed later.
	KindUnavailable
	// KindStorageFull is storage that has no room for a write; reads still
	// work.
	KindStorageFull
	// KindTooExpensive is a valid request whose work exceeds what the
	// service spends on one (a list query past its time bound): the same
	// request will fail again.
	KindTooExpensive
	// KindUnprocessable is a well-formed request the server will not
	// carry out as it stands (an idempotency key reused).
	KindUnprocessable
	// KindNotImplemented is an operation the configured adapter cannot do
	// (a swapped user store without listing or deleting; docs/admin.md).
	KindNotImplemented
)

var kindNames = [...]string{"internal", "invalid", "not found", "conflict", "precondition failed", "unauthenticated",
	"forbidden", "too many", "unavailable", "storage full", "too expensive", "unprocessable", "not implemented"}

// String returns the kind's name.
func (k Kind) String() string {
	if int(k) < len(kindNames) {
		return kindNames[k]
	}
	return "internal"
}

// FieldError names one invalid field and what is wrong with it.
type FieldError struct {
	Field   string
	Message string
}

// Error is cachegate's one error type. Code is a stable upper-snake
// identifier for clients; Message is safe to show to a client and never
// carries a secret.
type Error struct {
	Kind    Kind
	Code    string
	Message string
	// Details lists per-field problems of a validation error.
	Details []FieldError
	// RetryAfter tells a client when to try again (KindTooMany,
	// KindUnavailable).
	RetryAfter time.Duration
}

// Error implements error. It is the client-safe message alone, which is
// what the command line prints; String and LogValue add the code.
func (e *Error) Error() string { return e.Message }

// String returns "CODE: message".
func (e *Error) String() string { return e.Code + ": " + e.Message }

// LogValue makes slog print the error as a group of its code, kind and
// message (and the throttle delay and invalid fields when set), so a log
// line can be searched by code.
func (e *Error) LogValue() slog.Value {
	attrs := []slog.Attr{slog.String("code", e.Code), slog.String("kind", e.Kind.String()),
		slog.String("message", e.Message)}
	if e.RetryAfter > 0 {
		attrs = append(attrs, slog.Duration("retry_after", e.RetryAfter))
	}
	if len(e.Details) > 0 {
		fields := make([]string, len(e.Details))
		for i, d := range e.Details {
			fields[i] = d.Field
		}
		attrs = append(attrs, slog.String("fields", strings.Join(fields, ",")))
	}
	return slog.GroupValue(attrs...)
}

// Is reports whether target is an *Error with the same code, so sentinels
// match errors that carry extra details.
func (e *Error) Is(target error) bool {
	t, ok := target.(*Error)
	return ok && t.Code == e.Code
}

// Sentinel errors. Compare with errors.Is.
var (
	ErrCacheEntityAlreadyExists = &Error{Kind: KindConflict, Code: "CACHE_ENTITY_ALREADY_EXISTS",
		Message: "a cache entry with this key, type and assignee already exists"}
	ErrCacheIDTaken = &Error{Kind: KindConflict, Code: "CACHE_ID_TAKEN",
		Message: "a cache entry with this id already exists"}
	ErrCacheNotFound = &Error{Kind: KindNotFound, Code: "CACHE_ENTITY_NOT_FOUND",
		Message: "cache entry not found"}
	// ErrCacheQuotaExceeded is a write that would take an assignee past its
	// quota in an assignment (see Quota).
	ErrCacheQuotaExceeded = &Error{Kind: KindForbidden, Code: "CACHE_QUOTA_EXCEEDED",
		Message: "the assignee's quota in this assignment is used up"}
	ErrUnknownAssignment = &Error{Kind: KindNotFound, Code: "CACHE_ASSIGNMENT_NOT_FOUND",
		Message: "unknown cache assignment"}
	ErrVersionMismatch = &Error{Kind: KindPreconditionFailed, Code: "CACHE_VERSION_MISMATCH",
		Message: "the entry's version does not match the precondition"}
	ErrEntryExists = &Error{Kind: KindPreconditionFailed, Code: "CACHE_ENTITY_EXISTS",
		Message: "an entry with this id exists and If-None-Match: * forbids replacing it"}
	ErrForbidden = &Error{Kind: KindForbidden, Code: "FORBIDDEN",
		Message: "Forbidden"}
	ErrUnauthenticated = &Error{Kind: KindUnauthenticated, Code: "UNAUTHORIZED",
		Message: "Unauthorized"}
	ErrAccessTokenFailedValidation = &Error{Kind: KindInvalid, Code: "ACCESS_TOKEN_FAILED_VALIDATION",
		Message: "the access token was verified but failed further validation"}
	ErrRefreshTokenFailedValidation = &Error{Kind: KindInvalid, Code: "REFRESH_TOKEN_FAILED_VALIDATION",
		Message: "the refresh token was verified but failed further validation"}
	ErrUserExists = &Error{Kind: KindConflict, Code: "USER_ALREADY_EXISTS",
		Message: "a user with this username already exists"}
	ErrUserNotFound = &Error{Kind: KindNotFound, Code: "USER_NOT_FOUND",
		Message: "user not found"}
	ErrTooManyAttempts = &Error{Kind: KindTooMany, Code: "TOO_MANY_ATTEMPTS",
		Message: "too many failed login attempts; try again later"}
	ErrSigningKeyNotFound = &Error{Kind: KindNotFound, Code: "SIGNING_KEY_NOT_FOUND",
		Message: "no signing key has this id"}
	// ErrDatabaseUnavailable is a database that did not answer within the
	// configured bound, refused the connection or lost it. Stores wrap it
	// around the driver's error, which stays in the chain for logs.
	ErrDatabaseUnavailable = &Error{Kind: KindUnavailable, Code: "DATABASE_UNAVAILABLE",
		Message: "the database is unavailable; try again later", RetryAfter: DatabaseRetryAfter}
	// ErrQueryTooExpensive is a list whose query ran past the bound the
	// database may spend on one list statement (KindTooExpensive).
	ErrQueryTooExpensive = &Error{Kind: KindTooExpensive, Code: "QUERY_TOO_EXPENSIVE",
		Message: "the query took longer than the database may spend on it; narrow the filter or use a smaller limit"}
	// ErrStorageFull is a write refused because the database's disk is full.
	ErrStorageFull = &Error{Kind: KindStorageFull, Code: "STORAGE_FULL",
		Message: "the database's storage is full; reads still work, writes fail until space is freed"}
	// ErrIdempotencyKeyReused is an Idempotency-Key sent again with another
	// request (README, "Idempotent retries").
	ErrIdempotencyKeyReused = &Error{Kind: KindUnprocessable, Code: "IDEMPOTENCY_KEY_REUSED",
		Message: "this Idempotency-Key was used with another request body"}
	// ErrIdempotencyKeyInProgress is a request whose Idempotency-Key belongs
	// to a request still in flight, whose answer is not stored yet.
	ErrIdempotencyKeyInProgress = &Error{Kind: KindConflict, Code: "IDEMPOTENCY_KEY_IN_PROGRESS",
		Message: "a request with this Idempotency-Key is still in progress; retry later"}
	// ErrNotImplemented is an admin operation the configured user store
	// cannot carry out (docs/admin.md).
	ErrNotImplemented = &Error{Kind: KindNotImplemented, Code: "NOT_IMPLEMENTED",
		Message: "the configured user store cannot do this"}
	// ErrSessionNotFound is a session (refresh family) that does not exist
	// or is not the caller's.
	ErrSessionNotFound = &Error{Kind: KindNotFound, Code: "SESSION_NOT_FOUND",
		Message: "session not found"}
	// ErrOwnAdminChange is an admin disabling, demoting or deleting
	// themself (docs/admin.md: the last admin would lock everyone out).
	ErrOwnAdminChange = &Error{Kind: KindConflict, Code: "CANNOT_CHANGE_OWN_ADMIN",
		Message: "an admin cannot disable, demote or delete themself"}
	// ErrLastAdmin is disabling, demoting or deleting the last active
	// admin (docs/admin.md); the stores check it in the change's
	// transaction.
	ErrLastAdmin = &Error{Kind: KindConflict, Code: "LAST_ADMIN",
		Message: "at least one active admin must remain: make another user an admin first"}
)

// DatabaseRetryAfter is the pause ErrDatabaseUnavailable suggests: short,
// since a restarted or promoted database answers within seconds.
const DatabaseRetryAfter = 2 * time.Second

// CodeValidation is the code of every validation error.
const CodeValidation = "VALIDATION_FAILED"

// Invalid returns a validation error listing every field problem. It
// returns nil when details is empty, so callers can collect problems and
// return Invalid(problems...) unconditionally.
func Invalid(details ...FieldError) error {
	if len(details) == 0 {
		return nil
	}
	parts := make([]string, len(details))
	for i, d := range details {
		parts[i] = d.Field + ": " + d.Message
	}
	return &Error{Kind: KindInvalid, Code: CodeValidation,
		Message: "invalid request: " + strings.Join(parts, "; "), Details: details}
}

// InvalidField is Invalid with one field problem.
func InvalidField(field, message string) error {
	return Invalid(FieldError{Field: field, Message: message})
}

// KindOf returns the kind of err: the kind of the first *Error in its
// chain, or KindInternal for anything else (including nil's absence of one).
func KindOf(err error) Kind {
	var e *Error
	if errors.As(err, &e) {
		return e.Kind
	}
	return KindInternal
}

// TooMany returns a throttling error telling the client when to retry.
func TooMany(retryAfter time.Duration) error {
	e := *ErrTooManyAttempts
	e.RetryAfter = retryAfter
	return &e
}
