package bunstore

import (
	"context"
	"database/sql"
	"errors"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/cachegate/cachegate/domain"
)

// openTwoHandles opens two handles of one SQLite file, as two processes
// would have (each its own pool and watch), with the table migrated.
func openTwoHandles(t *testing.T) (*CacheRepository, *CacheRepository, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "reads.db")
	one := migrateTable(t, openTestDB(t, "sqlite:"+path), "user_cache")
	two := migrateTable(t, openTestDB(t, "sqlite:"+path), "user_cache")
	return one, two, path
}

// getVersion reads id through r and returns its version and data.
func getVersion(t *testing.T, r *CacheRepository, id string, now time.Time) (int, string) {
	t.Helper()
	e, err := r.Get(t.Context(), id, now)
	if err != nil {
		t.Fatalf("Get: %v", err)
	}
	return e.Version, string(e.Data)
}

func setData(t *testing.T, r *CacheRepository, id, data string) {
	t.Helper()
	if _, err := r.Update(t.Context(), id, testNow, domain.Quota{}, func(e *domain.Entry) error {
		e.Data = []byte(data)
		return nil
	}); err != nil {
		t.Fatalf("Update: %v", err)
	}
}

// TestPointReadsAnswerRepeatedReadsFromTheCache: the second read of an
// unchanged file is a hit, and a reader changing what it got changes
// neither the cache nor the next reader's copy.
func TestPointReadsAnswerRepeatedReadsFromTheCache(t *testing.T) {
	t.Parallel()
	r, _, _ := openTwoHandles(t)
	e := testEntry(1)
	if err := r.Create(t.Context(), e, testNow, domain.Quota{}); err != nil {
		t.Fatal(err)
	}
	got, err := r.Get(t.Context(), e.ID, testNow)
	if err != nil {
		t.Fatal(err)
	}
	got.Data[0] = 'X'
	again, err := r.Get(t.Context(), e.ID, testNow)
	if err != nil {
		t.Fatal(err)
	}
	if r.reads.hits.Load() != 1 {
		t.Fatalf("hits = %d after two reads of an unchanged file, want 1", r.reads.hits.Load())
	}
	if string(again.Data) != string(e.Data) {
		t.Fatalf("data %s after the first reader changed its copy, want %s", again.Data, e.Data)
	}
}

// TestPointReadsSeeEveryCommittedWrite: an entry kept in the cache is
// never answered once a write to the file was acknowledged: a write
// through this handle, through another handle (another process), a plain
// connection that does not go through bunstore at all (the sqlite3 shell,
// an import), a delete, and expiry at the caller's instant.
func TestPointReadsSeeEveryCommittedWrite(t *testing.T) {
	t.Parallel()
	r, other, path := openTwoHandles(t)
	ctx := t.Context()
	e := testEntry(1)
	e.ExpiresAt = new(testNow.Add(time.Hour))
	if err := r.Create(ctx, e, testNow, domain.Quota{}); err != nil {
		t.Fatal(err)
	}
	warm := func() {
		t.Helper()
		getVersion(t, r, e.ID, testNow)
		before := r.reads.hits.Load()
		getVersion(t, r, e.ID, testNow)
		if r.reads.hits.Load() != before+1 {
			t.Fatal("a read of an unchanged file missed the cache")
		}
	}

	warm()
	setData(t, r, e.ID, `"own"`)
	if v, d := getVersion(t, r, e.ID, testNow); v != 2 || d != `"own"` {
		t.Fatalf("after this handle's write: version %d data %s, want 2 \"own\"", v, d)
	}

	warm()
	setData(t, other, e.ID, `"other"`)
	if v, d := getVersion(t, r, e.ID, testNow); v != 3 || d != `"other"` {
		t.Fatalf("after another handle's write: version %d data %s, want 3 \"other\"", v, d)
	}

	warm()
	plain, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer plain.Close()
	if _, err := plain.ExecContext(ctx, `UPDATE user_cache SET data = '"plain"', version = 4 WHERE id = ?`, e.ID); err != nil {
		t.Fatal(err)
	}
	if v, d := getVersion(t, r, e.ID, testNow); v != 4 || d != `"plain"` {
		t.Fatalf("after a plain connection's write: version %d data %s, want 4 \"plain\"", v, d)
	}

	warm()
	if _, err := r.Get(ctx, e.ID, e.ExpiresAt.Add(-time.Microsecond)); err != nil {
		t.Fatalf("a microsecond before expiry: %v", err)
	}
	if _, err := r.Get(ctx, e.ID, *e.ExpiresAt); !errors.Is(err, domain.ErrCacheNotFound) {
		t.Fatalf("at expiry: %v, want ErrCacheNotFound", err)
	}

	warm()
	if _, err := other.Delete(ctx, e.ID, testNow, func(domain.Entry) error { return nil }); err != nil {
		t.Fatal(err)
	}
	if _, err := r.Get(ctx, e.ID, testNow); !errors.Is(err, domain.ErrCacheNotFound) {
		t.Fatalf("after another handle's delete: %v, want ErrCacheNotFound", err)
	}
}

// TestPointReadsAreLinearizableUnderConcurrentWrites: while readers read
// one entry all the time (so the cache is warm), another handle updates
// it; every read that begins after an update was acknowledged returns
// that version or a later one.
func TestPointReadsAreLinearizableUnderConcurrentWrites(t *testing.T) {
	t.Parallel()
	r, other, _ := openTwoHandles(t)
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	e := testEntry(1)
	if err := r.Create(ctx, e, testNow, domain.Quota{}); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for ctx.Err() == nil {
				_, _ = r.Get(ctx, e.ID, testNow)
			}
		})
	}
	for i := 2; i <= 60; i++ {
		setData(t, other, e.ID, strconv.Itoa(i))
		for range 3 {
			if v, d := getVersion(t, r, e.ID, testNow); v < i || d != strconv.Itoa(v) {
				t.Fatalf("read after the write of version %d acknowledged: version %d data %s", i, v, d)
			}
		}
	}
	cancel()
	wg.Wait()
	if r.reads.hits.Load() == 0 {
		t.Fatal("no read was answered from the cache")
	}
}
