package bunstore

import (
	"encoding/json"
	"path/filepath"
	"testing"
	"time"

	"github.com/cachegate/cachegate/adapters/bunstore/internal/engine"
	"github.com/cachegate/cachegate/domain"
	"github.com/cachegate/cachegate/ports"
	"github.com/cachegate/cachegate/test/pgtest"
)

// TestIdempotencyRecordsKeepTheirDataAsSentAndReadOlderOnes checks the
// record's data column (the data as sent, not base64 in the answer, so
// that what it keeps is what the quota counts) and that a record written
// before the column, with its data in the answer, still reads back.
func TestIdempotencyRecordsKeepTheirDataAsSentAndReadOlderOnes(t *testing.T) {
	t.Parallel()
	for _, name := range []string{"sqlite", "postgres"} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			dsn := "sqlite:" + filepath.Join(t.TempDir(), "idem.db")
			if name == "postgres" {
				dsn = pgtest.New(t)
			}
			db := openTestDB(t, dsn)
			repo := migrateTable(t, db, "idem_cache")
			ctx := t.Context()
			e := testEntry(1)
			e.Data = []byte(`{"greeting":"héllo"}`)
			rec := ports.IdempotencyRecord{Scope: "s", Key: "k", RequestHash: "h", Entry: e, ExpiresAt: testNow.Add(time.Hour)}
			if err := repo.CreateIdempotent(ctx, e, testNow, domain.Quota{}, rec); err != nil {
				t.Fatal(err)
			}
			var answer, data string
			if err := db.sql.QueryRowContext(ctx, "SELECT answer, data FROM "+idempotencyTable+" WHERE key = 'k'").Scan(&answer, &data); err != nil {
				t.Fatal(err)
			}
			if data != string(e.Data) {
				t.Errorf("data column %q, want the data as sent %q", data, e.Data)
			}
			var a idemAnswer
			if err := json.Unmarshal([]byte(answer), &a); err != nil || len(a.Data) != 0 {
				t.Errorf("the answer %s holds the data again (%v)", answer, err)
			}
			// A record of before the column: its data in the answer.
			old := toIdemAnswer(testEntry(2))
			oldAnswer, _ := json.Marshal(old)
			if _, err := db.sql.ExecContext(ctx, "INSERT INTO "+idempotencyTable+" (scope, key, request_hash, entry_id, answer, created_at, expires_at) "+
				"VALUES ('s', 'old', 'h', ?, ?, ?, ?)", old.ID, string(oldAnswer), engine.TimeArg(testNow), engine.TimeArg(testNow.Add(time.Hour))); err != nil {
				t.Fatal(err)
			}
			for key, want := range map[string]domain.Entry{"k": e, "old": testEntry(2)} {
				got, ok, err := repo.IdempotencyRecord(ctx, "s", key, testNow)
				if err != nil || !ok || string(got.Entry.Data) != string(want.Data) || got.Entry.ID != want.ID {
					t.Errorf("record %s = %s %s, %v, %v; want %s %s", key, got.Entry.ID, got.Entry.Data, ok, err, want.ID, want.Data)
				}
			}
		})
	}
}
