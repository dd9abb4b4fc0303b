package bunstore

import (
	"errors"
	"fmt"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/cachegate/cachegate/adapters/bunstore/internal/writegate"
	"github.com/cachegate/cachegate/domain"
	"github.com/cachegate/cachegate/ports"
)

// groupTestStore returns a refresh store on a new SQLite file and a
// record maker: token id of family "f-"+family, user u1.
func groupTestStore(t *testing.T) (*RefreshStore, *AuditLog, func(id, family string) domain.RefreshRecord) {
	t.Helper()
	db := openTestDB(t, "sqlite:"+filepath.Join(t.TempDir(), "group.db"))
	if err := Migrate(t.Context(), db, nil); err != nil {
		t.Fatal(err)
	}
	return NewRefreshStore(db), NewAuditLog(db), func(id, family string) domain.RefreshRecord {
		return domain.RefreshRecord{ID: id, FamilyID: "f-" + family, UserID: "u1", IssuedAt: groupNow, ExpiresAt: groupNow.Add(time.Hour)}
	}
}

var groupNow = time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)

// presentedOf returns the claims of the token r describes.
func presentedOf(r domain.RefreshRecord) domain.Claims {
	return domain.Claims{Kind: domain.RefreshToken, ID: r.ID, FamilyID: r.FamilyID, Subject: r.UserID,
		IssuedAt: r.IssuedAt, ExpiresAt: r.ExpiresAt}
}

// holdGateWhile holds s's write gate until want rotations are queued,
// starting them with start (which must not block), then lets them in.
func holdGateWhile(t *testing.T, s *RefreshStore, want int, start func()) {
	t.Helper()
	leave, err := writegate.Enter(t.Context(), s.db.gate, nil)
	if err != nil {
		t.Fatal(err)
	}
	start()
	for deadline := time.Now().Add(10 * time.Second); ; {
		queued := s.group.Queued()
		if queued == want {
			break
		}
		if time.Now().After(deadline) {
			leave()
			t.Fatalf("%d rotations queued, want %d", queued, want)
		}
		time.Sleep(time.Millisecond)
	}
	leave()
}

// TestRotationGroup holds SQLite's write gate while 30 rotations queue,
// so the one that gets the gate next commits them in one group. One of
// them fails (its successor's id is one its family holds, which the
// table's CHECK refuses): the group rolls back and every rotation runs
// alone, so the 29 others succeed and the failed one leaves its token
// live.
func TestRotationGroup(t *testing.T) {
	t.Parallel()
	s, _, rec := groupTestStore(t)
	const n, bad = 30, 7
	for i := range n {
		if err := s.SaveRefresh(t.Context(), rec(fmt.Sprintf("t%d", i), fmt.Sprint(i))); err != nil {
			t.Fatal(err)
		}
		if rot, err := s.RotateRefresh(t.Context(), presentedOf(rec(fmt.Sprintf("t%d", i), fmt.Sprint(i))),
			rec(fmt.Sprintf("t%d-b", i), fmt.Sprint(i)), groupNow, 0); err != nil || rot.Outcome != domain.RefreshRotate {
			t.Fatal(rot.Outcome, err)
		}
	}
	rots, errs := make([]ports.Rotation, n), make([]error, n)
	var wg sync.WaitGroup
	holdGateWhile(t, s, n, func() {
		for i := range n {
			wg.Go(func() {
				next := rec(fmt.Sprintf("t%d-next", i), fmt.Sprint(i))
				if i == bad {
					next.ID = fmt.Sprintf("t%d", i)
				}
				rots[i], errs[i] = s.RotateRefresh(t.Context(), presentedOf(rec(fmt.Sprintf("t%d-b", i), fmt.Sprint(i))), next, groupNow, 0)
			})
		}
	})
	wg.Wait()
	for i, err := range errs {
		switch {
		case i == bad && err == nil:
			t.Errorf("rotation %d to an id its family holds succeeded", i)
		case i == bad && domain.KindOf(err) == domain.KindUnauthenticated:
			t.Errorf("rotation %d to an id its family holds = %v, want an internal error", i, err)
		case i != bad && (err != nil || rots[i].Outcome != domain.RefreshRotate):
			t.Errorf("rotation %d = %v, %v; want a rotation", i, rots[i].Outcome, err)
		}
	}
	// The failed rotation left t7-b live; the others replaced theirs.
	if rot, err := s.RotateRefresh(t.Context(), presentedOf(rec("t7-b", "7")), rec("t7-again", "7"), groupNow, 0); err != nil || rot.Outcome != domain.RefreshRotate {
		t.Errorf("rotating the token of the failed rotation: %v, %v", rot.Outcome, err)
	}
	if rot, err := s.RotateRefresh(t.Context(), presentedOf(rec("t3-b", "3")), rec("t3-again", "3"), groupNow, 0); err != nil || rot.Outcome != domain.RefreshReused {
		t.Errorf("rotating a token its group used = %v, %v; want reuse", rot.Outcome, err)
	}
}

// TestRotationGroupJudgesInArrivalOrder queues, in this order, a rotation
// of a family's live token, a second presentation of that token outside
// any grace, with its refresh.reused event, and a third presentation
// within grace: one group commits them as consecutive transactions would.
// The first rotates; the second finds the token used, revokes the family
// and stores its event in the group's transaction; the third finds the
// family revoked.
func TestRotationGroupJudgesInArrivalOrder(t *testing.T) {
	t.Parallel()
	s, log, rec := groupTestStore(t)
	if err := s.SaveRefresh(t.Context(), rec("t1", "1")); err != nil {
		t.Fatal(err)
	}
	event := domain.AuditEvent{ID: "e1", Time: groupNow, Type: domain.AuditRefreshReused, UserID: "u1", Family: "f-1"}
	calls := []func() (ports.Rotation, error){
		func() (ports.Rotation, error) {
			return s.RotateRefresh(t.Context(), presentedOf(rec("t1", "1")), rec("t2", "1"), groupNow, 0)
		},
		func() (ports.Rotation, error) {
			return s.RotateRefresh(t.Context(), presentedOf(rec("t1", "1")), rec("t2b", "1"), groupNow, 0, event)
		},
		func() (ports.Rotation, error) {
			return s.RotateRefresh(t.Context(), presentedOf(rec("t1", "1")), rec("t2c", "1"), groupNow, time.Minute)
		},
	}
	rots, errs := make([]ports.Rotation, len(calls)), make([]error, len(calls))
	var wg sync.WaitGroup
	holdGateWhile(t, s, len(calls), func() {
		for i, call := range calls {
			wg.Go(func() { rots[i], errs[i] = call() })
			// Queue one at a time, so the group's order is the calls' order.
			for deadline := time.Now().Add(10 * time.Second); ; {
				queued := s.group.Queued()
				if queued == i+1 || time.Now().After(deadline) {
					break
				}
				time.Sleep(time.Millisecond)
			}
		}
	})
	wg.Wait()
	if errors.Join(errs...) != nil || rots[0].Outcome != domain.RefreshRotate || rots[1].Outcome != domain.RefreshReused ||
		rots[2].Outcome != domain.RefreshRefused {
		t.Fatalf("answers %+v, %v; want rotated, reused, refused", rots, errs)
	}
	events, err := log.Events(t.Context(), ports.AuditFilter{})
	if err != nil || len(events) != 1 || events[0].ID != "e1" {
		t.Fatalf("events %+v, %v; want the one refresh.reused event", events, err)
	}
}
