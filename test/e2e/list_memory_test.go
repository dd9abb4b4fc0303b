package e2e

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cachegate/cachegate/test/pgtest"
)

// peakRSS returns the peak resident set size of process pid (VmHWM), in
// bytes.
func peakRSS(t *testing.T, pid int) int64 {
	t.Helper()
	f, err := os.Open("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		t.Skipf("no /proc status to read the peak RSS from: %v", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), "VmHWM:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 10, 64)
			if err != nil {
				t.Fatalf("VmHWM %q: %v", rest, err)
			}
			return kb << 10
		}
	}
	t.Fatal("no VmHWM in /proc/<pid>/status")
	return 0
}

// Lists are streamed (docs/api.md, "Listing"): 1000 entries of 250 KiB,
// listed four times at once, take the server's peak RSS nowhere near the
// 1 GB the four answers weigh together; the bound is 150 MB, seeding
// included.
func TestListsAreStreamedInBoundedMemory(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name     string
		database func(t *testing.T, dir string) string
	}{
		{"on a SQLite file", func(_ *testing.T, dir string) string { return "sqlite:" + filepath.Join(dir, "big.db") }},
		{"on PostgreSQL", func(t *testing.T, _ string) string { return pgtest.New(t) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			s := startServer(t, serverConfig{Dir: dir, YAML: publicYAML, Args: []string{"--database", tc.database(t, dir)}})
			client := newClient()
			client.Timeout = 5 * time.Minute
			const entries, dataBytes, assignees = 1000, 250 << 10, 8
			data := `"` + strings.Repeat("x", dataBytes-2) + `"`
			start := time.Now()
			var (
				wg   sync.WaitGroup
				mu   sync.Mutex
				errs []string
			)
			for w := range 4 {
				wg.Go(func() {
					for i := w; i < entries; i += 4 {
						// Spread over several assignees, so no per-assignee
						// quota stands in the way.
						body := fmt.Sprintf(`{"key":"k%04d","type":"t","data":%s,"assignee":{"id":"a55194ee-0000-4000-8000-%012d"},"expiresIn":null}`,
							i, data, i%assignees)
						resp, err := postHonouringRetryAfter(client, s.URL+"/cache/user", body)
						if err != nil || resp.StatusCode != http.StatusCreated {
							mu.Lock()
							errs = append(errs, fmt.Sprintf("create %d: %v %v", i, err, resp.StatusCode))
							mu.Unlock()
							return
						}
					}
				})
			}
			wg.Wait()
			if len(errs) > 0 {
				t.Fatalf("seeding failed: %v", errs)
			}
			seeded := peakRSS(t, s.cmd.Process.Pid)
			seeding := time.Since(start)
			start = time.Now()

			for range 4 {
				wg.Go(func() {
					resp, err := client.Get(s.URL + "/cache/user")
					if err != nil {
						mu.Lock()
						errs = append(errs, err.Error())
						mu.Unlock()
						return
					}
					defer resp.Body.Close()
					// Read it as a client would, without keeping it.
					n, err := countEntries(resp.Body)
					if resp.StatusCode != http.StatusOK || err != nil || n != entries {
						mu.Lock()
						errs = append(errs, fmt.Sprintf("list: status %d, %d entries, %v", resp.StatusCode, n, err))
						mu.Unlock()
					}
				})
			}
			wg.Wait()
			if len(errs) > 0 {
				t.Fatalf("listing failed: %v", errs)
			}
			peak := peakRSS(t, s.cmd.Process.Pid)
			t.Logf("peak RSS after seeding (%v) %d MiB, after four parallel lists of %d × %d KiB (%v): %d MiB",
				seeding.Round(time.Second), seeded>>20, entries, dataBytes>>10, time.Since(start).Round(time.Second), peak>>20)
			if peak >= 150e6 {
				t.Errorf("the server's peak RSS is %d MB, want under 150 MB", peak/1e6)
			}
		})
	}
}

// countEntries reads a list answer, one buffer at a time, and returns
// how many entries it holds: it checks the array's brackets and counts the
// members "key" (the data, all x, cannot hold one).
func countEntries(r io.Reader) (int, error) {
	br := bufio.NewReaderSize(r, 64<<10)
	const member = `"key":"k`
	var (
		n      int
		window []byte
		first  = true
		last   byte
	)
	buf := make([]byte, 64<<10)
	for {
		m, err := br.Read(buf)
		chunk := buf[:m]
		if first && m > 0 {
			if chunk[0] != '[' {
				return 0, fmt.Errorf("the answer starts with %q, not an array", chunk[0])
			}
			first = false
		}
		if m > 0 {
			window = append(window, chunk...)
			n += bytes.Count(window, []byte(member))
			// Keep the tail that may hold the start of a member cut in two.
			keep := min(len(window), len(member)-1)
			if bytes.HasSuffix(window, []byte(member)) {
				keep = 0
			}
			window = window[len(window)-keep:]
			last = chunk[m-1]
		}
		if err == io.EOF {
			if last != ']' {
				return n, fmt.Errorf("the answer ends with %q, not a closed array", last)
			}
			return n, nil
		}
		if err != nil {
			return n, err
		}
	}
}

// postHonouringRetryAfter posts body as a well-behaved client does: a 429
// (README, "Fair share": the caller's budget of database time, which 1000
// creates of 250 KiB from one address spend) is retried after its
// Retry-After, a few times. The body of the last answer is drained.
func postHonouringRetryAfter(client *http.Client, url, body string) (*http.Response, error) {
	for try := 1; ; try++ {
		resp, err := client.Post(url, "application/json", strings.NewReader(body))
		if err != nil {
			return nil, err
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusTooManyRequests || try == 20 {
			return resp, nil
		}
		wait, err := strconv.Atoi(resp.Header.Get("Retry-After"))
		if err != nil || wait < 1 {
			wait = 1
		}
		time.Sleep(time.Duration(wait) * time.Second)
	}
}
