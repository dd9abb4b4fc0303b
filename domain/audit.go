package domain

import "time"

// AuditType names a security event of the audit trail (CONTRACT.md
// section 7).
type AuditType string

// The audit event types.
const (
	AuditLoginSucceeded      AuditType = "login.succeeded"
	AuditLoginFailed         AuditType = "login.failed"
	AuditLoginThrottled      AuditType = "login.throttled"
	AuditRefreshReused       AuditType = "refresh.reused"
	AuditLogout              AuditType = "logout"
	AuditSessionExpired      AuditType = "session.expired"
	AuditUserAdded           AuditType = "user.added"
	AuditUserDisabled        AuditType = "user.disabled"
	AuditUserEnabled         AuditType = "user.enabled"
	AuditUserPasswordChanged AuditType = "user.password_changed"
	AuditKeyRotated          AuditType = "key.rotated"
	AuditKeyRevoked          AuditType = "key.revoked"
	AuditReasonUnknownUser             = "unknown_user"
	AuditReasonBadPassword             = "bad_password"
	AuditReasonInactive                = "inactive"
)

// AuditTypes lists every audit event type.
func AuditTypes() []AuditType {
	return []AuditType{AuditLoginSucceeded, AuditLoginFailed, AuditLoginThrottled, AuditRefreshReused,
		AuditLogout, AuditSessionExpired, AuditUserAdded, AuditUserDisabled, AuditUserEnabled,
		AuditUserPasswordChanged, AuditKeyRotated, AuditKeyRevoked}
}

// Valid reports whether t is one of AuditTypes.
func (t AuditType) Valid() bool {
	for _, v := range AuditTypes() {
		if t == v {
			return true
		}
	}
	return false
}

// AuditEvent is one security event. Fields that are not known are empty;
// no field ever holds a password or a token. Family is a refresh family
// (session) id; for key events it holds the key id.
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
}
