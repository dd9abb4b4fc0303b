package application

import (
	"cmp"
	"fmt"
	"strings"
	"time"

	"github.com/cachegate/cachegate/domain"
	"github.com/cachegate/cachegate/ports"
)

// Assignment is one configured route family /cache/<Name>, backed by the
// repository of entity EntityKey.
type Assignment struct {
	// Name is the assignment name (the route segment).
	Name string
	// EntityKey names the entity (table) that backs the assignment.
	EntityKey string
	// Table is the entity's table, which its changes are logged under.
	Table  string
	Repo   ports.CacheRepository
	Policy domain.Policy
	// DefaultExpiresIn applies to entries created or replaced with
	// expiresIn null; zero means they never expire.
	DefaultExpiresIn time.Duration
	// Quota bounds what each assignee may keep through this assignment;
	// the zero Quota limits nothing. Assignments sharing an entity share
	// its counts, each holding writes through it to its own limits.
	Quota domain.Quota
}

// Assignments resolves assignment names (or entity keys) to assignments;
// it is read-only once built.
type Assignments struct {
	byName   map[string]*Assignment
	byEntity map[string]*Assignment
	names    []string
}

// NewAssignments validates and indexes the configured assignments.
func NewAssignments(stores ...Assignment) (*Assignments, error) {
	s := &Assignments{byName: map[string]*Assignment{}, byEntity: map[string]*Assignment{}}
	for i := range stores {
		st := stores[i]
		switch {
		case st.Name == "" || strings.ContainsAny(st.Name, "/?#% "):
			return nil, fmt.Errorf("cache assignment %q: name must be a non-empty path segment", st.Name)
		case st.Repo == nil:
			return nil, fmt.Errorf("cache assignment %q: no repository", st.Name)
		case st.DefaultExpiresIn < 0 || st.DefaultExpiresIn > domain.MaxExpiresIn:
			return nil, fmt.Errorf("cache assignment %q: default expiry out of range", st.Name)
		case st.Quota.MaxEntries < 0 || st.Quota.MaxBytes < 0:
			return nil, fmt.Errorf("cache assignment %q: negative quota", st.Name)
		case s.byName[st.Name] != nil:
			return nil, fmt.Errorf("cache assignment %q: configured twice", st.Name)
		}
		if _, ok := domain.ParsePolicy(st.Policy.String()); !ok {
			return nil, fmt.Errorf("cache assignment %q: unknown policy", st.Name)
		}
		s.byName[st.Name] = &st
		if st.EntityKey != "" && s.byEntity[st.EntityKey] == nil {
			s.byEntity[st.EntityKey] = &st
		}
		s.names = append(s.names, st.Name)
	}
	if len(s.names) == 0 {
		return nil, fmt.Errorf("no cache assignment configured")
	}
	return s, nil
}

// Names returns the assignment names in configuration order.
func (s *Assignments) Names() []string { return append([]string(nil), s.names...) }

// Lookup returns the store of an assignment name or, failing that, of an
// entity key (docs/api.md, "The Go API": Go callers may name either). It returns
// domain.ErrUnknownAssignment when neither matches.
func (s *Assignments) Lookup(name string) (*Assignment, error) {
	if st := s.byName[name]; st != nil {
		return st, nil
	}
	if st := s.byEntity[name]; st != nil {
		return st, nil
	}
	return nil, domain.ErrUnknownAssignment
}

// Repos returns one repository per entity, for the sweeper. Assignments
// that share an entity key share its repository.
func (s *Assignments) Repos() []ports.CacheRepository {
	seen := map[string]bool{}
	var out []ports.CacheRepository
	for _, n := range s.names {
		st := s.byName[n]
		key := cmp.Or(st.EntityKey, "assignment:"+st.Name)
		if !seen[key] {
			seen[key] = true
			out = append(out, st.Repo)
		}
	}
	return out
}
