package e2e

import (
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
)

// Twenty simultaneous logins of one user with the right password all get
// 201 from the binary, at the default throttle limit of 10, with the
// default bcrypt cost so the checks overlap (README.md, "Fair share").
func TestConcurrentLoginsWithTheRightPasswordAllSucceed(t *testing.T) {
	t.Parallel()
	for _, db := range authDatabases {
		t.Run(db.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			url, _, _ := db.open(t, dir)
			const cost = "CACHEGATE_BCRYPT_COST=10"
			if r := runCLI(t, dir, "a fine password\n", []string{cost}, "users", "add", "--username", "ada",
				"--password-stdin", "--database", url); r.Code != 0 {
				t.Fatalf("users add: %s", r.Stderr)
			}
			s := startServer(t, serverConfig{Dir: dir, Args: []string{"--database", url}, Env: []string{cost}})
			const n = 20
			statuses := make([]int, n)
			var wg sync.WaitGroup
			start := make(chan struct{})
			for i := range n {
				wg.Go(func() {
					<-start
					res, err := http.Post(s.URL+"/auth/login", "application/json",
						strings.NewReader(`{"username":"ada","password":"a fine password"}`))
					if err != nil {
						t.Error(err)
						return
					}
					_, _ = io.Copy(io.Discard, res.Body)
					res.Body.Close()
					statuses[i] = res.StatusCode
				})
			}
			close(start)
			wg.Wait()
			for i, st := range statuses {
				if st != http.StatusCreated {
					t.Errorf("login %d answered %d, want 201 (all: %v)", i, st, statuses)
					break
				}
			}
		})
	}
}
