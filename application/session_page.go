package application

import "github.com/cachegate/cachegate/domain"

// SessionPage selects a page of a session list: at most Limit sessions
// (0: all) after the first Offset.
type SessionPage struct {
	Limit, Offset int
}

// SessionList is a page of a user's live sessions, the last used first.
type SessionList struct {
	Page []domain.Session
	// Total is how many live sessions the user has in all.
	Total int
	// Current is the session of the caller's token (self-service only).
	Current string
}

// sessionList cuts p's page out of every live session of a user, which
// are few (LoginDeps.MaxSessions).
func sessionList(all []domain.Session, p SessionPage) SessionList {
	page := all[min(max(p.Offset, 0), len(all)):]
	if p.Limit > 0 && len(page) > p.Limit {
		page = page[:p.Limit]
	}
	return SessionList{Page: page, Total: len(all)}
}
