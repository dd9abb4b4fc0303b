package cli

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"math"
	"strings"
	"text/tabwriter"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/cachegate/cachegate/application"
	"github.com/cachegate/cachegate/domain"
)

var auditCommand = Command{
	Name:     "audit",
	Synopsis: "[--user NAME] [--type T] [--since DURATION] [--json]",
	Summary:  "list the security events of the audit trail, newest first",
	Uses:     UsesStorage,
	Setup: func(fs *flag.FlagSet) RunFunc {
		user := fs.String("user", "", "only events of the username `NAME`")
		typ := fs.String("type", "", "only events of type `T` (login.failed, refresh.reused, ...)")
		since := fs.String("since", "", "only events of the last `DURATION` (30m, 24h, 7d)")
		asJSON := fs.Bool("json", false, "one JSON object per line")
		limit := fs.Int("limit", 1000, "at most `N` events")
		return func(ctx context.Context, env *Env) error {
			q := application.AuditQuery{Username: *user, Type: domain.AuditType(*typ), Limit: *limit}
			if *since != "" {
				d, err := domain.ParseDuration(*since)
				if err != nil || d <= 0 {
					return usageErrorf("audit: --since %q must be a duration such as 30m, 24h or 7d", *since)
				}
				q.Since = d
			}
			if *limit < 1 || *limit > math.MaxInt32 {
				return usageErrorf("audit: --limit must be positive")
			}
			s, err := env.Services(ctx)
			if err != nil {
				return err
			}
			if !s.Audit.Stored() {
				return fmt.Errorf("audit: this build keeps no audit trail")
			}
			events, err := s.Audit.List(ctx, q)
			if err != nil {
				return err
			}
			if *asJSON {
				for _, e := range events {
					line, err := json.Marshal(toAuditJSON(e))
					if err != nil {
						return err
					}
					if _, err := env.Stdout.Write(append(escapeJSONControls(line), '\n')); err != nil {
						return err
					}
				}
				return nil
			}
			w := tabwriter.NewWriter(env.Stdout, 0, 4, 2, ' ', 0)
			fmt.Fprintln(w, "TIME\tTYPE\tUSERNAME\tUSER ID\tADDRESS\tREQUEST ID\tFAMILY\tREASON\tCOUNT\tLAST SEEN")
			for _, e := range events {
				last := "-"
				if !e.LastSeen.IsZero() {
					last = e.LastSeen.Format(time.RFC3339Nano)
				}
				fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%d\t%s\n", e.Time.Format(time.RFC3339Nano),
					cell(string(e.Type)), cell(e.Username), cell(e.UserID), cell(e.Address), cell(e.RequestID),
					cell(e.Family), cell(e.Reason), e.Attempts(), last)
			}
			return w.Flush()
		}
	},
}

// auditJSON is one line of `cachegate audit --json`: every field always
// present, "" when unknown; count 1 and lastSeen its time for a single event.
type auditJSON struct {
	Time      time.Time `json:"time"`
	Type      string    `json:"type"`
	UserID    string    `json:"userId"`
	Username  string    `json:"username"`
	Address   string    `json:"address"`
	RequestID string    `json:"requestId"`
	Family    string    `json:"family"`
	Reason    string    `json:"reason"`
	Count     int       `json:"count"`
	LastSeen  time.Time `json:"lastSeen"`
}

func toAuditJSON(e domain.AuditEvent) auditJSON {
	j := auditJSON{Time: e.Time, Type: string(e.Type), UserID: e.UserID, Username: e.Username,
		Address: e.Address, RequestID: e.RequestID, Family: e.Family, Reason: e.Reason,
		Count: e.Attempts(), LastSeen: e.LastSeen}
	if j.LastSeen.IsZero() {
		j.LastSeen = e.Time
	}
	return j
}

// cell is a stored string as the table prints it: "-" when empty, else
// escaped (escapeText).
func cell(s string) string {
	if s == "" {
		return "-"
	}
	return escapeText(s)
}

// escapeText escapes what a terminal would act on or that would break
// the table's lines and columns (docs/operations.md, "Audit trail"), and
// the backslash itself, so that every escape reads one way. Stored
// usernames are the attacker's text (a failed login names anything).
func escapeText(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case r == '\\':
			b.WriteString(`\\`)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == '\t':
			b.WriteString(`\t`)
		case r < 0x80 && unicode.IsControl(r):
			fmt.Fprintf(&b, `\x%02x`, r)
		case unsafeRune(r):
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	return b.String()
}

// unsafeRune reports a character outside ASCII that a terminal acts on or
// that reorders or breaks what follows: C1 controls (U+009B is CSI),
// bidirectional controls, line and paragraph separators.
func unsafeRune(r rune) bool {
	return unicode.IsControl(r) || unicode.Is(unicode.Bidi_Control, r) || unicode.In(r, unicode.Zl, unicode.Zp)
}

// escapeJSONControls rewrites, in a line encoding/json wrote, the
// characters it leaves raw that escapeText escapes (DEL, C1 and bidi
// controls) as \uNNNN: the same JSON value, safe on a terminal.
func escapeJSONControls(line []byte) []byte {
	s := string(line)
	if !strings.ContainsFunc(s, unsafeRune) {
		return line
	}
	var b strings.Builder
	for _, r := range s {
		if unsafeRune(r) {
			fmt.Fprintf(&b, `\u%04x`, r)
		} else {
			b.WriteRune(r)
		}
	}
	return []byte(b.String())
}
