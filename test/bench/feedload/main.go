// Command feedload measures the change feed (docs/benchmarks.md, "Change
// feed"): it starts cachegate on a fresh SQLite file, opens N event
// streams (one per assignee, as owners watching their own entries do),
// writes at a fixed rate spread over those assignees, and reports the
// delivery latency (from the moment a write was due to the moment its
// event was read), the write latency, and the server's peak RSS. With
// -subscribers 0 it measures the writes alone.
//
//	go run ./test/bench/feedload -subscribers 1000 -rate 500 -duration 30s
//
// It raises its own open-file limit, which the server inherits. It is run
// by hand, not by the test suite.
package main

import (
	"bufio"
	"bytes"
	"context"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

func main() {
	subs := flag.Int("subscribers", 1000, "event streams to open")
	rate := flag.Int("rate", 500, "writes per second")
	dur := flag.Duration("duration", 30*time.Second, "how long to write")
	bin := flag.String("binary", "", "cachegate binary (default: go build ./cmd/cachegate)")
	flag.Parse()
	if err := run(*subs, *rate, *dur, *bin); err != nil {
		fmt.Fprintln(os.Stderr, "feedload:", err)
		os.Exit(1)
	}
}

func run(subs, rate int, dur time.Duration, bin string) error {
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err == nil {
		lim.Cur = lim.Max
		if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
			return fmt.Errorf("raise the open-file limit: %w", err)
		}
		if int(lim.Cur) < subs+200 {
			return fmt.Errorf("open-file limit %d is too low for %d subscribers", lim.Cur, subs)
		}
	}
	dir, err := os.MkdirTemp("", "feedload-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	if bin == "" {
		bin = filepath.Join(dir, "cachegate")
		build := exec.Command("go", "build", "-o", bin, "./cmd/cachegate")
		build.Stdout, build.Stderr = os.Stderr, os.Stderr
		if err := build.Run(); err != nil {
			return fmt.Errorf("build: %w", err)
		}
	}
	yaml := filepath.Join(dir, "cachegate.yaml")
	if err := os.WriteFile(yaml, []byte("cache:\n  entities:\n    userCache: {}\n  settings:\n    assignments:\n"+
		"      user: {entityKey: userCache, policy: public}\n"), 0o600); err != nil {
		return err
	}
	addr, err := freeAddr()
	if err != nil {
		return err
	}
	// Quotas off: with few subscribers, one assignee gets every write.
	srv := exec.Command(bin, "serve", "--addr", addr, "--config", yaml, "--database", "sqlite:"+filepath.Join(dir, "feed.db"),
		"--log-level", "warn", "--quota-max-entries", "0", "--quota-max-bytes", "0")
	srv.Stdout, srv.Stderr = os.Stderr, os.Stderr
	if err := srv.Start(); err != nil {
		return err
	}
	defer func() { _ = srv.Process.Signal(syscall.SIGTERM); _ = srv.Wait() }()
	base := "http://" + addr
	if err := waitReady(base); err != nil {
		return err
	}
	rss := &rssWatch{pid: srv.Process.Pid}
	go rss.run()

	// Subscribers: one assignee each; writes without subscribers use as
	// many assignees.
	n := subs
	if n == 0 {
		n = 1000
	}
	assignees := make([]string, n)
	for i := range assignees {
		assignees[i] = fmt.Sprintf("a55194ee-0000-4000-8000-%012d", i)
	}
	total := int(dur.Seconds() * float64(rate))
	// Per write: when it was due, when its answer came, when its event
	// arrived (UnixNano; 0 = not yet).
	dueAt, ackAt, arrAt := make([]atomic.Int64, total), make([]atomic.Int64, total), make([]atomic.Int64, total)
	var got atomic.Int64
	start := time.Now()
	var wg sync.WaitGroup
	ready := make(chan error, subs)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	for i := range subs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			subscribe(ctx, addr, assignees[i], ready, func(key string, at time.Time) {
				w, err := strconv.Atoi(strings.TrimPrefix(key, "w"))
				if err == nil && w >= 0 && w < total && arrAt[w].CompareAndSwap(0, at.UnixNano()) {
					got.Add(1)
				}
			})
		}()
	}
	for range subs {
		if err := <-ready; err != nil {
			return fmt.Errorf("subscribe: %w", err)
		}
	}
	fmt.Printf("%d subscribers connected in %s; server RSS %.0f MB\n", subs, time.Since(start).Round(time.Millisecond), rss.current())
	rss.reset()

	writes := &samples{}
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64, MaxConnsPerHost: 64}, Timeout: 30 * time.Second}
	interval := time.Second / time.Duration(rate)
	jobs := make(chan int, total)
	var failed atomic.Int64
	var ww sync.WaitGroup
	t0 := time.Now()
	for range 32 {
		ww.Add(1)
		go func() {
			defer ww.Done()
			for i := range jobs {
				due := t0.Add(time.Duration(i) * interval)
				time.Sleep(time.Until(due))
				key := "w" + strconv.Itoa(i)
				dueAt[i].Store(due.UnixNano())
				body := fmt.Sprintf(`{"key":%q,"type":"t","data":{"n":%d,"text":"a setting changed on a phone"},"assignee":{"id":%q},"expiresIn":null}`,
					key, i, assignees[i%n])
				resp, err := client.Post(base+"/cache/user", "application/json", strings.NewReader(body))
				if err != nil {
					failed.Add(1)
					continue
				}
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if resp.StatusCode != http.StatusCreated {
					failed.Add(1)
					continue
				}
				ackAt[i].Store(time.Now().UnixNano())
				writes.add(time.Since(due))
			}
		}()
	}
	for i := range total {
		jobs <- i
	}
	close(jobs)
	ww.Wait()
	elapsed := time.Since(t0)
	// Let the last events arrive.
	deadline := time.Now().Add(5 * time.Second)
	for subs > 0 && got.Load() < int64(total)-failed.Load() && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	cancel()
	fmt.Printf("writes: %d in %s (%.0f/s), %d failed; latency p50 %s p99 %s max %s\n", total, elapsed.Round(time.Millisecond),
		float64(total)/elapsed.Seconds(), failed.Load(), writes.q(0.5), writes.q(0.99), writes.q(1))
	if subs > 0 {
		fromDue, fromAck := &samples{}, &samples{}
		for i := range total {
			arr, ack := arrAt[i].Load(), ackAt[i].Load()
			if arr == 0 || ack == 0 {
				continue
			}
			fromDue.add(time.Duration(arr - dueAt[i].Load()))
			fromAck.add(max(0, time.Duration(arr-ack)))
		}
		fmt.Printf("delivery: %d of %d events\n", got.Load(), total)
		fmt.Printf("  from the write being due (write + delivery): p50 %s p99 %s max %s\n", fromDue.q(0.5), fromDue.q(0.99), fromDue.q(1))
		fmt.Printf("  after the write's answer (0 if before):      p50 %s p99 %s max %s\n", fromAck.q(0.5), fromAck.q(0.99), fromAck.q(1))
	}
	fmt.Printf("server peak RSS while writing: %.0f MB\n", rss.peakMB())
	wg.Wait()
	return nil
}

// subscribe opens one stream for assignee and reports each event's key
// and arrival time.
func subscribe(ctx context.Context, addr, assignee string, ready chan<- error, seen func(key string, at time.Time)) {
	var d net.Dialer
	conn, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		ready <- err
		return
	}
	defer conn.Close()
	go func() { <-ctx.Done(); conn.Close() }()
	if _, err := fmt.Fprintf(conn, "GET /cache/user/events?assignee.id=%s HTTP/1.1\r\nHost: bench\r\n\r\n", assignee); err != nil {
		ready <- err
		return
	}
	r := bufio.NewReaderSize(conn, 4096)
	status, err := r.ReadString('\n')
	if err != nil || !strings.Contains(status, " 200 ") {
		ready <- fmt.Errorf("status %q: %v", strings.TrimSpace(status), err)
		return
	}
	ready <- nil
	for {
		line, err := r.ReadSlice('\n')
		if err != nil {
			return
		}
		if !bytes.HasPrefix(line, []byte("data: ")) {
			continue
		}
		at := time.Now()
		if m := keyRE.FindSubmatch(line); m != nil {
			seen(string(m[1]), at)
		}
	}
}

var keyRE = regexp.MustCompile(`"key":"([^"]+)"`)

// samples collects durations.
type samples struct {
	mu sync.Mutex
	d  []time.Duration
}

func (s *samples) add(d time.Duration) {
	s.mu.Lock()
	s.d = append(s.d, d)
	s.mu.Unlock()
}

// q returns the quantile q (0..1), rounded for printing.
func (s *samples) q(q float64) time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.d) == 0 {
		return 0
	}
	slices.Sort(s.d)
	i := min(int(q*float64(len(s.d))), len(s.d)-1)
	return s.d[i].Round(100 * time.Microsecond)
}

// rssWatch samples a process's resident set size.
type rssWatch struct {
	pid  int
	mu   sync.Mutex
	peak float64
}

func (w *rssWatch) run() {
	for {
		mb := w.current()
		if mb == 0 {
			return
		}
		w.mu.Lock()
		w.peak = max(w.peak, mb)
		w.mu.Unlock()
		time.Sleep(100 * time.Millisecond)
	}
}

func (w *rssWatch) reset() { w.mu.Lock(); w.peak = 0; w.mu.Unlock() }

func (w *rssWatch) peakMB() float64 { w.mu.Lock(); defer w.mu.Unlock(); return w.peak }

// current returns VmRSS in MB, or 0 when the process is gone.
func (w *rssWatch) current() float64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", w.pid))
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if f := strings.Fields(line); len(f) >= 2 && f[0] == "VmRSS:" {
			kb, _ := strconv.ParseFloat(f[1], 64)
			return kb / 1024
		}
	}
	return 0
}

func freeAddr() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer l.Close()
	return l.Addr().String(), nil
}

func waitReady(base string) error {
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		if resp, err := http.Get(base + "/readyz"); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	return fmt.Errorf("cachegate not ready at %s", base)
}
