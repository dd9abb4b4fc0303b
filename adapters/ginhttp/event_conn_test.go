package ginhttp

import (
	"bufio"
	"io"
	"net/http/httputil"
	"strings"
	"testing"
)

// frameChunk's output is a chunk net/http's own reader takes back, for
// payloads around the sizes where the hex length gains a digit.
func TestFrameChunkWritesOneHTTPChunk(t *testing.T) {
	t.Parallel()
	for _, n := range []int{0, 1, 15, 16, 255, 256, 4095, 4096, 70000} {
		payload := strings.Repeat("x", n)
		b := append(make([]byte, chunkHead), payload...)
		framed := string(frameChunk(b))
		r := httputil.NewChunkedReader(bufio.NewReader(strings.NewReader(framed + string(lastChunk))))
		got, err := io.ReadAll(r)
		if err != nil || string(got) != payload {
			t.Fatalf("payload of %d bytes: read back %d bytes, %v; framed %.40q", n, len(got), err, framed)
		}
		if n > 0 && !strings.HasSuffix(framed, payload+"\r\n") {
			t.Fatalf("payload of %d bytes: chunk does not end in the payload and CRLF", n)
		}
	}
}
