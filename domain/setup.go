package domain

// The refusals of the one-time set-up link that creates the first admin
// (docs/admin.md, "The first admin"), told apart so the set-up page can
// say what to do; only the holder of the link learns which.
var (
	// ErrSetupLinkInvalid is a token that is not this server's set-up
	// link: mistyped, from another replica or an earlier start, or no
	// link was made (an admin existed at start).
	ErrSetupLinkInvalid = &Error{Kind: KindForbidden, Code: "SETUP_LINK_INVALID",
		Message: "this set-up link is not valid on this server: use the link of its latest start-up log"}
	// ErrSetupLinkUsed is the set-up link's token used a second time.
	ErrSetupLinkUsed = &Error{Kind: KindForbidden, Code: "SETUP_LINK_USED",
		Message: "this set-up link was already used: sign in at /console/"}
	// ErrSetupLinkExpired is the set-up link's token after its validity.
	ErrSetupLinkExpired = &Error{Kind: KindForbidden, Code: "SETUP_LINK_EXPIRED",
		Message: "this set-up link has expired: restart the server for a new one, or use `cachegate users add --admin`"}
	// ErrSetupNotLocal is a set-up request that did not come from the
	// server's own machine (a loopback peer) while the link is loopback
	// only.
	ErrSetupNotLocal = &Error{Kind: KindForbidden, Code: "SETUP_NOT_LOCAL",
		Message: "the set-up link works only from the server's own machine (loopback)"}
	// ErrAdminExists is a set-up request when an active admin already
	// exists: the first admin is made once.
	ErrAdminExists = &Error{Kind: KindConflict, Code: "ADMIN_EXISTS",
		Message: "an admin already exists: sign in at /console/"}
)
