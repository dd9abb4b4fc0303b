package apifuzz_test

import (
	"context"
	"database/sql"
	"net/http"
	"testing"
	"time"

	_ "modernc.org/sqlite" // the driver bunstore uses, to hold the database's write lock

	"github.com/cachegate/cachegate/bootstrap/config"
)

// TestAnswersDuringAnOutageAreDocumented holds the SQLite database's
// write lock from outside the service, as another program or a backup
// would, and sends every writing operation: each must answer 503 (the
// wait runs out), and the answer must be documented like any other. The
// database timeout is 300 ms here instead of 5 s, only to be quick.
func TestAnswersDuringAnOutageAreDocumented(t *testing.T) {
	t.Parallel()
	tgt := startTarget(t, func(c *config.Config) { c.DatabaseTimeout = 300 * time.Millisecond })
	f := newFuzzer(t, tgt, *seedFlag)
	f.outage = true
	f.login()
	_, _ = f.exchange(f.step("createCacheEntry", "", f.entryBody())) // an entry to replace, patch and delete
	db, err := sql.Open("sqlite", tgt.dbPath)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() })
	conn, err := db.Conn(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := conn.ExecContext(context.Background(), "BEGIN IMMEDIATE"); err != nil {
		t.Fatalf("take the write lock: %v", err)
	}
	t.Cleanup(func() { _, _ = conn.ExecContext(context.Background(), "ROLLBACK"); _ = conn.Close() })
	id := "0190a000-0000-7000-8000-00000000f00d"
	if len(f.st.ids) > 0 {
		id = f.st.ids[0]
	}
	steps := []*request{
		f.step("login", "", map[string]string{"username": fuzzUsername, "password": fuzzPassword}),
		f.step("refresh", "", map[string]string{"refreshToken": f.st.refresh}),
		f.step("tokenRefresh", "", map[string]string{"refreshToken": f.st.refresh}),
		f.step("createCacheEntry", "", f.entryBody()),
		f.step("replaceCacheEntry", id, f.entryBody()),
		f.step("patchCacheEntry", id, map[string]any{"data": "x"}),
		f.step("deleteCacheEntry", id, nil),
		f.step("logout", "", nil),
	}
	for _, r := range steps {
		if a, err := f.exchange(r); err == nil && a.status != http.StatusServiceUnavailable {
			t.Errorf("%s answered %d while the database was locked, want 503", r.op.id, a.status)
		}
	}
	f.report(*seedFlag, 0)
}
