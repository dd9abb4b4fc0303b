package apifuzz_test

import (
	"bufio"
	"fmt"
	"io"
	"mime"
	"net"
	"net/http"
	"regexp"
	"strings"
	"time"
)

// answer is what the server said.
type answer struct {
	status int
	header http.Header
	body   []byte
	// stream: an event stream, whose body is not read (it stays open).
	stream bool
}

// answerWait bounds one exchange: a server that has not answered by then
// is reported as hanging (a finding, not a timing measurement).
const answerWait = 10 * time.Second

// send writes req on a fresh connection and reads the answer. The
// request is written as is (Request.Write), not through http.Client,
// whose transport refuses header values with control characters: the
// document admits them, so the server must be asked.
func send(addr string, req *http.Request) (answer, error) {
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		return answer{}, err
	}
	defer conn.Close()
	if err := conn.SetDeadline(time.Now().Add(answerWait)); err != nil {
		return answer{}, err
	}
	req.Close = true
	if err := req.Write(conn); err != nil {
		return answer{}, fmt.Errorf("write: %w", err)
	}
	resp, err := http.ReadResponse(bufio.NewReader(conn), req)
	if err != nil {
		return answer{}, fmt.Errorf("no answer: %w", err)
	}
	a := answer{status: resp.StatusCode, header: resp.Header}
	if mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type")); mt == "text/event-stream" {
		// Close the connection, not the body: closing the body would read
		// the stream to its end.
		a.stream = true
		return a, conn.Close()
	}
	defer resp.Body.Close()
	a.body, err = io.ReadAll(resp.Body)
	if err != nil {
		return a, fmt.Errorf("read the answer: %w", err)
	}
	return a, nil
}

// redactor keeps secrets out of reports: every token the fuzzer has
// seen and the user's password are replaced by a placeholder.
type redactor struct {
	secrets map[string]string
}

func (r *redactor) add(secret, placeholder string) {
	if len(secret) >= 8 {
		r.secrets[secret] = placeholder
	}
}

// clean redacts s; it runs before anything is shortened, so no secret is
// cut where it would no longer match. Anything shaped like a JWT is
// redacted too, known or not.
func (r *redactor) clean(s string) string {
	for secret, ph := range r.secrets {
		s = strings.ReplaceAll(s, secret, ph)
	}
	return jwtShape.ReplaceAllString(s, "<a token>")
}

var jwtShape = regexp.MustCompile(`eyJ[A-Za-z0-9_-]*\.[A-Za-z0-9_-]*(\.[A-Za-z0-9_-]*)?`)

// describe is the reproducible account of one exchange: method, target,
// headers (the Authorization value named, never shown), body, status and
// the answer's body when it is an error (a token pair is never shown).
func (f *fuzzer) describe(r *request, a answer) string {
	var b strings.Builder
	fmt.Fprintf(&b, "    %s %s\n", r.op.method, f.red.clean(r.target()))
	switch {
	case r.auth == authValid && r.token != "":
		b.WriteString("    Authorization: Bearer <a throwaway user's access token>\n")
	case r.auth == authValid && (r.op.admin || r.who == whoAdmin):
		b.WriteString("    Authorization: Bearer <the admin's access token>\n")
	case r.auth == authValid, r.auth == authNonAdmin:
		b.WriteString("    Authorization: Bearer <the user's access token>\n")
	case r.auth == authGarbage:
		b.WriteString("    Authorization: Bearer not.a-token\n")
	}
	for _, kv := range r.header {
		fmt.Fprintf(&b, "    %s: %q\n", kv[0], f.red.clean(kv[1]))
	}
	if r.hasBody {
		fmt.Fprintf(&b, "    Content-Type: %s\n    body: %s\n", r.contentType, clip(f.red.clean(string(r.body))))
	}
	if r.mutation != "" {
		fmt.Fprintf(&b, "    (made invalid: %s)\n", r.mutation)
	}
	fmt.Fprintf(&b, "    -> %d %s", a.status, a.header.Get("Content-Type"))
	if a.status >= 400 {
		fmt.Fprintf(&b, " %s", clip(f.red.clean(string(a.body))))
	}
	return f.red.clean(b.String())
}

func clip(s string) string {
	if len(s) > 300 {
		return s[:300] + "…"
	}
	return s
}
