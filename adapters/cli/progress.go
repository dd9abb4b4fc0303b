package cli

import (
	"fmt"
	"io"
	"os"
	"strings"
	"time"
)

// progress reports a long command's advance: on a terminal, one line
// redrawn in place (a bar when the total is known); else a line per plainEvery.
type progress struct {
	w     io.Writer
	label string
	tty   bool
	total int64 // bytes expected; 0 when unknown
	start time.Time
	last  time.Time
}

const (
	ttyEvery   = 100 * time.Millisecond
	plainEvery = 5 * time.Second
)

func newProgress(w io.Writer, label string, total int64) *progress {
	now := time.Now()
	return &progress{w: w, label: label, tty: isTerminal(w), total: total, start: now, last: now}
}

func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

// update reports records done and bytes moved, when it is time to.
func (p *progress) update(records int, bytes int64) {
	now := time.Now()
	every := plainEvery
	if p.tty {
		every = ttyEvery
	}
	if now.Sub(p.last) < every {
		return
	}
	p.last = now
	p.print(records, bytes, now)
}

// done prints the last state and ends the line.
func (p *progress) done(records int, bytes int64) {
	p.print(records, bytes, time.Now())
	if p.tty {
		fmt.Fprintln(p.w)
	}
}

func (p *progress) print(records int, bytes int64, now time.Time) {
	secs := now.Sub(p.start).Seconds()
	rate := 0.0
	if secs > 0 {
		rate = float64(records) / secs
	}
	text := fmt.Sprintf("%s: %d records, %.1f MB, %.0f records/s, %.1fs", p.label, records, float64(bytes)/1e6, rate, secs)
	if !p.tty {
		fmt.Fprintln(p.w, text)
		return
	}
	if p.total > 0 {
		frac := min(float64(bytes)/float64(p.total), 1)
		const width = 30
		n := int(frac * width)
		text = fmt.Sprintf("%s [%s%s] %3.0f%%  %s", p.label, strings.Repeat("#", n), strings.Repeat(".", width-n), 100*frac,
			strings.TrimPrefix(text, p.label+": "))
	}
	fmt.Fprintf(p.w, "\r\033[K%s", text)
}

// countingWriter and countingReader count the bytes that pass.
type countingWriter struct {
	w io.Writer
	n int64
}

func (c *countingWriter) Write(b []byte) (int, error) {
	n, err := c.w.Write(b)
	c.n += int64(n)
	return n, err
}

type countingReader struct {
	r io.Reader
	n int64
}

func (c *countingReader) Read(b []byte) (int, error) {
	n, err := c.r.Read(b)
	c.n += int64(n)
	return n, err
}
