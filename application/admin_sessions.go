package application

import (
	"context"
	"errors"

	"github.com/cachegate/cachegate/domain"
	"github.com/cachegate/cachegate/ports"
)

// AdminSession is a session of the admin API's list of every user's
// sessions, with its user's name ("" for a user deleted since).
type AdminSession struct {
	domain.Session
	Username string
}

// AllSessionList is a page of every user's live sessions, the last used
// first.
type AllSessionList struct {
	Page []AdminSession
	// Total is how many sessions are live in all.
	Total int
}

// byIDThreshold is how many distinct users a page may name before their
// names are read with one ListUsers rather than one UserByID each.
const byIDThreshold = 16

// AllSessions returns page p of every user's live sessions, the last
// used first, each with its user's name (docs/admin.md, "Sessions");
// domain.ErrNotImplemented when the refresh store cannot list them all.
func (a *Users) AllSessions(ctx context.Context, p SessionPage) (AllSessionList, error) {
	dir, ok := a.refresh.(ports.SessionDirectory)
	if !ok {
		return AllSessionList{}, domain.ErrNotImplemented
	}
	page, total, err := dir.AllSessions(ctx, a.clock.Now(), p.Limit, p.Offset)
	if err != nil {
		return AllSessionList{}, err
	}
	names, err := a.usernames(ctx, page)
	if err != nil {
		return AllSessionList{}, err
	}
	out := AllSessionList{Page: make([]AdminSession, len(page)), Total: total}
	for i, s := range page {
		out.Page[i] = AdminSession{Session: s, Username: names[s.UserID]}
	}
	return out, nil
}

// usernames returns the names of the users the sessions belong to, by
// id; a user deleted since has none.
func (a *Users) usernames(ctx context.Context, sessions []domain.Session) (map[string]string, error) {
	names := map[string]string{}
	for _, s := range sessions {
		names[s.UserID] = ""
	}
	if len(names) > byIDThreshold && a.dir != nil {
		users, err := a.dir.ListUsers(ctx)
		if err != nil {
			return nil, err
		}
		for _, u := range users {
			if _, ok := names[u.ID]; ok {
				names[u.ID] = u.Username
			}
		}
		return names, nil
	}
	for id := range names {
		u, err := a.users.UserByID(ctx, id)
		switch {
		case err == nil:
			names[id] = u.Username
		case !errors.Is(err, domain.ErrUserNotFound):
			return nil, err
		}
	}
	return names, nil
}
