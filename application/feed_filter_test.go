package application_test

import (
	"testing"

	"github.com/cachegate/cachegate/application"
	"github.com/cachegate/cachegate/domain"
)

// TestAWatcherOfOneTypeOrKeyNeverReceivesAnother pins the feed's filters
// in the package that applies them (application/change_feed.go, changeFilter):
// a subscriber for type A (or key A) never receives a change of another
// type (key), neither live nor replayed from the log. The other entries
// are written first, so a change let through would be the first event.
func TestAWatcherOfOneTypeOrKeyNeverReceivesAnother(t *testing.T) {
	t.Parallel()
	alice := domain.AsPrincipal(domain.Principal{ID: feedAlice})
	write := func(t *testing.T, f *feedFixture, key, typ string) domain.Entry {
		t.Helper()
		e, err := f.cache.Create(t.Context(), "mine", application.CacheInput{Key: key, Type: typ, AssigneeID: feedAlice, Data: []byte(`1`)})
		if err != nil {
			t.Fatal(err)
		}
		return e
	}
	for _, filter := range []struct {
		name string
		in   application.WatchCachesInput
		// wanted and other write an entry the filter keeps, or not.
		wanted, other func(t *testing.T, f *feedFixture, i string) domain.Entry
	}{
		{"type", application.WatchCachesInput{Type: "A"},
			func(t *testing.T, f *feedFixture, i string) domain.Entry { return write(t, f, "k"+i, "A") },
			func(t *testing.T, f *feedFixture, i string) domain.Entry { return write(t, f, "k"+i, "B") }},
		{"key", application.WatchCachesInput{Key: "A"},
			func(t *testing.T, f *feedFixture, i string) domain.Entry { return write(t, f, "A", "t"+i) },
			func(t *testing.T, f *feedFixture, i string) domain.Entry { return write(t, f, "B", "t"+i) }},
	} {
		for _, replay := range []bool{false, true} {
			name := filter.name + " filter, live"
			if replay {
				name = filter.name + " filter, replayed"
			}
			t.Run(name, func(t *testing.T) {
				t.Parallel()
				f := newFeedFixture(t, 0)
				in := filter.in
				in.Assignment, in.Actor = "mine", alice
				var want []domain.Entry
				writeAll := func() {
					for _, i := range []string{"1", "2"} {
						filter.other(t, f, i)
						want = append(want, filter.wanted(t, f, i))
						filter.other(t, f, i+"x")
					}
				}
				if replay {
					writeAll()
					zero := int64(0)
					in.Since = &zero
				}
				s, err := f.ops.Watch.Execute(t.Context(), in)
				if err != nil {
					t.Fatal(err)
				}
				defer s.Close()
				if !replay {
					writeAll()
				}
				for _, w := range want {
					ev, err := next(t, s)
					if err != nil {
						t.Fatal(err)
					}
					if ev.Change.Entry.ID != w.ID {
						t.Fatalf("received %s of key %q type %q, want %s: the %s filter let another through",
							ev.Change.Entry.ID, ev.Change.Entry.Key, ev.Change.Entry.Type, w.ID, filter.name)
					}
				}
			})
		}
	}
}
