package logbuf_test

import (
	"bytes"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cachegate/cachegate/bootstrap/internal/logbuf"
)

// sink records each write it receives.
type sink struct {
	mu     sync.Mutex
	writes []string
}

func (s *sink) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.writes = append(s.writes, string(p))
	return len(p), nil
}

func (s *sink) all() (string, int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return strings.Join(s.writes, ""), len(s.writes)
}

func TestLinesStayWholeAndInOrderUnderConcurrency(t *testing.T) {
	var out sink
	w := logbuf.New(&out, 1000, time.Hour)
	const writers, lines = 8, 500
	var wg sync.WaitGroup
	for g := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range lines {
				fmt.Fprintf(w, "g=%d i=%04d %s\n", g, i, strings.Repeat("x", i%50))
			}
		}()
	}
	wg.Wait()
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	next := make([]int, writers)
	total := 0
	for _, wr := range out.writes {
		if len(wr) > 1000 || !strings.HasSuffix(wr, "\n") {
			t.Fatalf("a write of %d bytes does not end a line: %q", len(wr), wr)
		}
		for _, l := range strings.Split(strings.TrimSuffix(wr, "\n"), "\n") {
			var g, i int
			if _, err := fmt.Sscanf(l, "g=%d i=%d", &g, &i); err != nil || i != next[g] || len(l) != len(fmt.Sprintf("g=%d i=%04d ", g, i))+i%50 {
				t.Fatalf("line %q out of order or torn (want i=%d)", l, next[g])
			}
			next[g]++
			total++
		}
	}
	if total != writers*lines {
		t.Errorf("%d lines written, want %d", total, writers*lines)
	}
	if len(out.writes) > total/5 {
		t.Errorf("%d writes for %d lines: not batched", len(out.writes), total)
	}
}

func TestLineLargerThanBufferFollowsEarlierLines(t *testing.T) {
	var out sink
	w := logbuf.New(&out, 16, time.Hour)
	big := strings.Repeat("y", 40) + "\n"
	for _, l := range []string{"a\n", big, "b\n"} {
		if _, err := w.Write([]byte(l)); err != nil {
			t.Fatal(err)
		}
	}
	_ = w.Close()
	if got, _ := out.all(); got != "a\n"+big+"b\n" {
		t.Errorf("got %q", got)
	}
	if len(out.writes) != 3 || out.writes[1] != big {
		t.Errorf("writes %q, want the large line alone", out.writes)
	}
}

func TestWarnIsWrittenAtOnce(t *testing.T) {
	var out sink
	w := logbuf.New(&out, 1<<16, time.Hour)
	log := slog.New(logbuf.FlushAt(slog.NewTextHandler(w, nil), w, slog.LevelWarn).WithAttrs([]slog.Attr{slog.String("a", "b")}))
	log.Info("first")
	if got, _ := out.all(); got != "" {
		t.Fatalf("an info line was written at once: %q", got)
	}
	log.Warn("second")
	got, n := out.all()
	if n != 1 || !strings.Contains(got, "msg=first a=b\n") || !strings.Contains(got, "msg=second a=b\n") {
		t.Errorf("after a warning, %d writes: %q", n, got)
	}
}

func TestInfoIsWrittenWithinTheInterval(t *testing.T) {
	var out sink
	w := logbuf.New(&out, 1<<16, 50*time.Millisecond)
	defer w.Close()
	start := time.Now()
	w.Write([]byte("one\n"))
	for {
		if got, _ := out.all(); got == "one\n" {
			break
		}
		if time.Since(start) > 2*time.Second {
			t.Fatal("the line was not written within 2 s")
		}
		time.Sleep(5 * time.Millisecond)
	}
	if d := time.Since(start); d < 40*time.Millisecond {
		t.Errorf("written after %s, before the interval", d)
	}
	// And again, once the timer has fired.
	w.Write([]byte("two\n"))
	time.Sleep(300 * time.Millisecond)
	if got, _ := out.all(); got != "one\ntwo\n" {
		t.Errorf("got %q", got)
	}
}

func TestCloseFlushesAndLaterLinesPassThrough(t *testing.T) {
	var out bytes.Buffer
	w := logbuf.New(&out, 1<<16, time.Hour)
	w.Write([]byte("a\n"))
	if out.Len() != 0 {
		t.Fatal("written before Close")
	}
	if err := w.Close(); err != nil || out.String() != "a\n" {
		t.Fatalf("Close: %v, out %q", err, out.String())
	}
	w.Write([]byte("b\n"))
	if out.String() != "a\nb\n" {
		t.Errorf("after Close: %q", out.String())
	}
}
