package e2e

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/cachegate/cachegate/test/contract"
)

// newClient returns a client that keeps enough idle connections for the
// concurrent tests.
func newClient() *http.Client {
	return &http.Client{
		Timeout:   30 * time.Second,
		Transport: &http.Transport{MaxIdleConns: 128, MaxIdleConnsPerHost: 64},
	}
}

// reply is one HTTP answer.
type reply struct {
	Status int
	Header http.Header
	Body   []byte
}

// send makes one request; body nil sends none, otherwise it is JSON.
// hdr are name, value pairs. It returns an error rather than failing the
// test, so goroutines can call it.
func send(c *http.Client, method, url string, body []byte, hdr ...string) (reply, error) {
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequest(method, url, rd)
	if err != nil {
		return reply{}, err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := c.Do(req)
	if err != nil {
		return reply{}, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return reply{}, fmt.Errorf("%s %s: reading the answer: %w", method, req.URL.Path, err)
	}
	return reply{Status: resp.StatusCode, Header: resp.Header, Body: b}, nil
}

// mustSend is send for the test goroutine.
func mustSend(t *testing.T, c *http.Client, method, url string, body []byte, hdr ...string) reply {
	t.Helper()
	r, err := send(c, method, url, body, hdr...)
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	return r
}

// want fails the test unless r has status.
func (r reply) want(t *testing.T, status int) reply {
	t.Helper()
	if r.Status != status {
		t.Fatalf("status %d, want %d: %s", r.Status, status, short(r.Body))
	}
	return r
}

func short(b []byte) string {
	if len(b) > 300 {
		return string(b[:300]) + "…"
	}
	return string(b)
}

// entry is an entry as the service returns it.
type entry = contract.Entry

// entry decodes r's body as an entry.
func (r reply) entry(t *testing.T) entry {
	t.Helper()
	var e entry
	if err := json.Unmarshal(r.Body, &e); err != nil {
		t.Fatalf("not an entry: %v: %s", err, short(r.Body))
	}
	return e
}

// errorCode returns the errorCode of an error envelope, or "" when the
// body is not one.
func (r reply) errorCode() string {
	var env struct {
		ErrorCode string `json:"errorCode"`
	}
	_ = json.Unmarshal(r.Body, &env)
	return env.ErrorCode
}

// sameFields reports which top-level fields of two JSON objects differ,
// comparing each value byte for byte (data must come back exactly as it
// was given).
func sameFields(a, b []byte) ([]string, error) {
	var ma, mb map[string]json.RawMessage
	if err := json.Unmarshal(a, &ma); err != nil {
		return nil, err
	}
	if err := json.Unmarshal(b, &mb); err != nil {
		return nil, err
	}
	var diff []string
	for k, v := range ma {
		if w, ok := mb[k]; !ok || !bytes.Equal(v, w) {
			diff = append(diff, k)
		}
	}
	for k := range mb {
		if _, ok := ma[k]; !ok {
			diff = append(diff, k)
		}
	}
	slices.Sort(diff)
	return diff, nil
}

// body builds a POST/PUT body; data and expiresIn are raw JSON.
func body(key, typ, assignee, data, expiresIn string) []byte {
	k, _ := json.Marshal(key)
	ty, _ := json.Marshal(typ)
	return fmt.Appendf(nil, `{"key":%s,"type":%s,"data":%s,"assignee":{"id":%q},"expiresIn":%s}`,
		k, ty, data, assignee, expiresIn)
}

// newUUID returns a random version 4 UUID.
func newUUID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	h := hex.EncodeToString(b[:])
	return h[0:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:]
}
