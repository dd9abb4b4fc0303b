package e2e

import (
	"database/sql"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	// The pure-Go SQLite driver, as the binary uses, registers "sqlite".
	_ "modernc.org/sqlite"
)

// Issue 13: `cachegate backup` copies a running SQLite database: taken
// under write load, the copy passes integrity_check, holds every entry
// acknowledged before the backup began, and serves as it is (restore =
// start on the copy).
func TestBackupUnderWriteLoadIsConsistentAndComplete(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	db := "sqlite:" + filepath.Join(dir, "live.db")
	s := startServer(t, serverConfig{Dir: dir, YAML: publicYAML, Args: []string{"--database", db}})
	load := startWriteLoad(t, s.URL, 4, 200)
	load.waitAcked(t, 500, 30*time.Second)

	load.mu.Lock()
	before := append([]ack(nil), load.acks...)
	load.mu.Unlock()
	copyPath := filepath.Join(t.TempDir(), "copy.db")
	r := runCLI(t, dir, "", nil, "backup", "--out", copyPath, "--database", db, "--config", filepath.Join(dir, "cachegate.yaml"))
	if r.Code != 0 {
		t.Fatalf("backup: status %d: %s", r.Code, r.Stderr)
	}
	during := load.acked.Load() - int64(len(before))
	load.finish()
	if during == 0 {
		t.Error("no write was acknowledged while the backup ran: it was not taken under load")
	}
	if st, err := os.Stat(copyPath); err != nil || st.Mode().Perm() != 0o600 {
		t.Errorf("backup file: %v, mode %v; want 0600", err, st.Mode().Perm())
	}

	copyDB, err := sql.Open("sqlite", "file:"+copyPath+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer copyDB.Close()
	var check string
	if err := copyDB.QueryRow("PRAGMA integrity_check").Scan(&check); err != nil || check != "ok" {
		t.Fatalf("integrity_check of the copy: %q, %v", check, err)
	}
	have := map[string]bool{}
	rows, err := copyDB.Query("SELECT id FROM user_cache")
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			t.Fatal(err)
		}
		have[id] = true
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	rows.Close()
	missing := 0
	for _, a := range before {
		if !have[a.id] {
			missing++
		}
	}
	t.Logf("%d entries acknowledged before the backup, %d while it ran; the copy holds %d", len(before), during, len(have))
	if missing > 0 {
		t.Fatalf("%d of %d entries acknowledged before the backup are missing from the copy", missing, len(before))
	}

	// A second backup to the same path is refused, never overwriting.
	if r := runCLI(t, dir, "", nil, "backup", "--out", copyPath, "--database", db); r.Code != 1 || !strings.Contains(r.Stderr, "exists") {
		t.Errorf("backup over an existing file: status %d, %q", r.Code, r.Stderr)
	}

	// Restoring is starting on the copy.
	s.stop(t)
	restored := startServer(t, serverConfig{YAML: publicYAML, Args: []string{"--database", "sqlite:" + copyPath}})
	verifyAcks(t, restored.URL, before[:min(50, len(before))])
	mustSend(t, newClient(), http.MethodGet, restored.URL+"/readyz", nil).want(t, http.StatusOK)
}
