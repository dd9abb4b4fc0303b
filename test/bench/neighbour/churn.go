package main

import (
	"bytes"
	"cmp"
	"context"
	"database/sql"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/cachegate/cachegate/domain"
)

// The churn phases: one account under a small quota (--churn-quota-mib,
// given to the server as --quota-max-bytes) creates entries of 200–250
// KiB in closed loops, each phase in its own way of leaving nothing live
// behind (README, "Quotas": what the quota counts):
//
//	churn-expire  creates that expire at once (expiresIn 1ms)
//	churn-idem    the same, each with a fresh Idempotency-Key
//	churn-delete  a create, then a DELETE of it
//
// Each phase has an account of its own (named as the phase), so that one
// phase's retained copies do not refuse the next one's creates. The goal
// (docs/benchmarks.md, "Noisy neighbours") is that the database grows by
// at most the quota plus churnSlack over the phase.
var churnVariants = map[string]churnVariant{
	"churn-expire": {expire: true},
	"churn-idem":   {expire: true, idempotent: true},
	"churn-delete": {delete: true},
}

// churnVariant is what each create of a churn phase does.
type churnVariant struct {
	expire     bool // expiresIn 1ms
	idempotent bool // a fresh Idempotency-Key each
	delete     bool // DELETE the entry once created
}

// churnSlack is what the database may grow by beyond the quota over a
// churn phase: 12 MiB (with a 4 MiB quota, at most 16 MiB in all).
const churnSlack = 12 << 20

// The sizes of a churned entry's data, as sent.
const (
	churnMinBytes = 200 << 10
	churnMaxBytes = 250 << 10
)

// entityTable is the table of the default assignment, user.
const entityTable = "user_cache"

// account is a user of the extra abuses (churn, the login loop), made
// before the server starts; each phase logs in itself.
type account struct {
	id, password string
	mu           sync.Mutex
	token        string // the last access token a login loop got
}

// extraAccounts names the accounts the phases of c need: one per churn
// phase and the login loop's.
func extraAccounts(phases []string) []string {
	var out []string
	for _, p := range phases {
		if _, ok := churnVariants[p]; ok || p == "sessions" {
			out = append(out, p)
		}
	}
	return out
}

// addAccounts creates the accounts of extraAccounts(c.phases) with
// random passwords; the server must not run yet.
func addAccounts(ctx context.Context, srv *server, c config) (map[string]*account, error) {
	out := map[string]*account{}
	for _, name := range extraAccounts(c.phases) {
		id, password, err := srv.addUser(ctx, name)
		if err != nil {
			return nil, err
		}
		out[name] = &account{id: id, password: password}
	}
	return out, nil
}

// beforeChurn restarts the server with the churn quota before the first
// churn phase (the attacker's seed of the other phases is above it), and
// waits until the victim's GETs are fast again.
func beforeChurn(ctx context.Context, c config, srv *server, v *victim, clients ...*http.Client) error {
	if srv.churnQuota {
		return nil
	}
	if err := srv.restart(ctx, "--quota-max-bytes", strconv.Itoa(c.churnQuotaMiB)+"MiB"); err != nil {
		return fmt.Errorf("restart the server with the churn quota: %w", err)
	}
	srv.churnQuota = true
	for _, cl := range clients {
		cl.CloseIdleConnections()
	}
	if waited, calm := v.waitCalm(ctx, 30*time.Second); !calm {
		fmt.Fprintf(os.Stderr, "after the restart: the server still answered slowly %s later; the churn starts anyway\n", waited)
	}
	return nil
}

// churn returns the abuse of variant: c.churnWorkers closed loops of
// creates by the phase's account. The counts: 201 and, for creates, 403
// with CACHE_QUOTA_EXCEEDED as "403quota"; the DELETEs as "del-<status>".
func churn(phase string, variant churnVariant) func(ctx context.Context, a *attacker, c config) {
	return func(ctx context.Context, a *attacker, c config) {
		acc := a.accounts[phase]
		client := newClient(c.accountAddr, c.churnWorkers, 30*time.Second)
		defer client.CloseIdleConnections()
		token, err := login(ctx, client, a.base, phase, acc.password)
		if err != nil {
			a.counts.add("login-failed")
			return
		}
		var wg sync.WaitGroup
		for w := range c.churnWorkers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				r := rand.New(rand.NewPCG(uint64(w), uint64(time.Now().UnixNano())))
				for i := 0; ctx.Err() == nil; i++ {
					churnOnce(ctx, client, a, token, acc.id, variant, churnBody(r, fmt.Sprintf("churn-%d-%d", w, i), acc.id, variant),
						fmt.Sprintf("%s-%d-%d-%x", phase, w, i, r.Uint64()))
				}
			}()
		}
		wg.Wait()
	}
}

// churnOnce sends one create (and, for churn-delete, its DELETE) and
// counts the answers.
func churnOnce(ctx context.Context, client *http.Client, a *attacker, token, assignee string, variant churnVariant, body []byte, idemKey string) {
	var h http.Header
	if variant.idempotent {
		h = http.Header{"Idempotency-Key": {idemKey}}
	}
	code, answer, err := doRaw(ctx, client, http.MethodPost, a.base+"/cache/user", token, h, body)
	switch {
	case ctx.Err() != nil:
		return
	case err != nil:
		a.counts.add("err")
		return
	}
	a.counts.add(churnStatus(code, answer))
	if code != http.StatusCreated || !variant.delete {
		return
	}
	var e struct {
		ID string `json:"id"`
	}
	if json.Unmarshal(answer, &e) != nil || e.ID == "" {
		a.counts.add("no-id")
		return
	}
	code, _, err = doRaw(ctx, client, http.MethodDelete, a.base+"/cache/user/"+e.ID, token, nil, nil)
	switch {
	case ctx.Err() != nil:
	case err != nil:
		a.counts.add("del-err")
	default:
		a.counts.add("del-" + strconv.Itoa(code))
	}
}

// churnStatus is the count a create's answer goes to: its status, or
// "403quota" for 403 CACHE_QUOTA_EXCEEDED.
func churnStatus(code int, body []byte) string {
	var e struct {
		ErrorCode string `json:"errorCode"`
	}
	if code == http.StatusForbidden && json.Unmarshal(body, &e) == nil && e.ErrorCode == "CACHE_QUOTA_EXCEEDED" {
		return "403quota"
	}
	return strconv.Itoa(code)
}

// churnBody returns a create's JSON body for assignee under key: data
// {"b": "<random base64>"} of churnMinBytes to churnMaxBytes bytes, which
// neither database can compress, expiring at once for variant.expire.
func churnBody(r *rand.Rand, key, assignee string, variant churnVariant) []byte {
	n := churnMinBytes + r.IntN(churnMaxBytes-churnMinBytes+1)
	const wrap = len(`{"b":""}`)
	raw := make([]byte, base64.RawStdEncoding.DecodedLen(n-wrap))
	for i := range raw {
		raw[i] = byte(r.Uint32())
	}
	var b bytes.Buffer
	b.Grow(n + 200)
	expires := "null"
	if variant.expire {
		expires = `"1ms"`
	}
	fmt.Fprintf(&b, `{"key":%q,"type":"churn","assignee":{"id":%q},"expiresIn":%s,"data":{"b":"`, key, assignee, expires)
	enc := base64.NewEncoder(base64.RawStdEncoding, &b)
	_, _ = enc.Write(raw)
	enc.Close()
	b.WriteString(`"}}`)
	return b.Bytes()
}

// doRaw sends one request with body (nil: none), the bearer token and
// the headers h, and returns the status and the answer's body.
func doRaw(ctx context.Context, c *http.Client, method, url, token string, h http.Header, body []byte) (int, []byte, error) {
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, url, rd)
	if err != nil {
		return 0, nil, err
	}
	for k, vs := range h {
		req.Header[k] = vs
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := c.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp.StatusCode, b, err
}

// churnSizes is what the database and the churning accounts keep at one
// moment.
type churnSizes struct {
	db     int64            // as sizes.db
	tables map[string]int64 // bytes of each table with its indexes
	// tuples are PostgreSQL's counts of each table's rows inserted (also
	// by transactions rolled back) and dead (pg_stat_user_tables), which
	// say what the space a table grew by holds.
	tuples map[string][2]int64
	usage  int64 // the accounts' bytes in the quota (cache_usage)
	// The accounts' copies: their entries (live or not yet removed), their
	// changes in the change log and their idempotency records.
	entries, changes, records copies
}

// copies is what one kind of copy of the churning accounts takes: rows,
// and the bytes the quota counts for them (domain.ChangeBytes,
// domain.RecordBytes; an entry counts its data).
type copies struct{ rows, counted int64 }

// copyTables are the tables of entries, changes and idempotency records.
var copyTables = [3]string{entityTable, "cache_changes", "cachegate_idempotency"}

func (z churnSizes) kinds() [3]copies { return [3]copies{z.entries, z.changes, z.records} }

// churnResult is the growth of one churn phase.
type churnResult struct {
	quota          int64
	before, after  churnSizes
	accepted, quot int // creates answered 201, and 403 CACHE_QUOTA_EXCEEDED
}

// growth is the database's growth over the phase.
func (r churnResult) growth() int64 { return r.after.db - r.before.db }

// missed reports whether the growth passed the goal.
func (r churnResult) missed() bool { return r.growth() > r.quota+churnSlack }

// tablesGrowth returns the tables that grew by at least 64 KiB, the
// most first.
func (r churnResult) tablesGrowth() []tableGrowth {
	var out []tableGrowth
	for t, b := range r.after.tables {
		if d := b - r.before.tables[t]; d >= 64<<10 {
			out = append(out, tableGrowth{t, d})
		}
	}
	slices.SortFunc(out, func(x, y tableGrowth) int {
		return cmp.Or(cmp.Compare(y.bytes, x.bytes), cmp.Compare(x.name, y.name))
	})
	return out
}

type tableGrowth struct {
	name  string
	bytes int64
}

// uncounted returns, for the table of each kind of copy, what each row
// the phase added (or removed) takes on disk beyond what the quota counts
// for it: the table's growth less the counted bytes' growth, over the
// rows' growth; ok is false for a kind whose rows did not change.
func (r churnResult) uncounted() (perRow [3]float64, ok [3]bool) {
	b, a := r.before.kinds(), r.after.kinds()
	for i, t := range copyTables {
		if rows := a[i].rows - b[i].rows; rows != 0 {
			disk := r.after.tables[t] - r.before.tables[t]
			perRow[i], ok[i] = float64(disk-(a[i].counted-b[i].counted))/float64(rows), true
		}
	}
	return perRow, ok
}

// writeChurn prints a churn phase's growth lines. The rows and counts
// are those of every churning account: the sweeper removes an earlier
// phase's expired entries during a later one, logging their expiry.
func writeChurn(w io.Writer, r *churnResult) {
	fmt.Fprintf(w, "%-8s creates accepted %d, refused 403 CACHE_QUOTA_EXCEEDED %d\n", "", r.accepted, r.quot)
	fmt.Fprintf(w, "%-8s growth: database %s (goal ≤ %s: the quota and %s); counted in quotas %s\n", "",
		mib(float64(r.growth())), mib(float64(r.quota+churnSlack)), mib(churnSlack), mib(float64(r.after.usage-r.before.usage)))
	var b bytes.Buffer
	for i, t := range r.tablesGrowth() {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "%s %s", t.name, mib(float64(t.bytes)))
		if a, ok := r.after.tuples[t.name]; ok {
			p := r.before.tuples[t.name]
			fmt.Fprintf(&b, " (%+d rows inserted, %+d dead)", a[0]-p[0], a[1]-p[1])
		}
	}
	if b.Len() == 0 {
		b.WriteString("none by 64 KiB or more")
	}
	fmt.Fprintf(w, "%-8s tables grown: %s\n", "", b.String())
	b.Reset()
	before, after := r.before.kinds(), r.after.kinds()
	perRow, ok := r.uncounted()
	for i, t := range copyTables {
		if i > 0 {
			b.WriteString("; ")
		}
		fmt.Fprintf(&b, "%s %+d rows, counted %s", t, after[i].rows-before[i].rows, mib(float64(after[i].counted-before[i].counted)))
		if ok[i] {
			fmt.Fprintf(&b, ", uncounted %.0f B/row", perRow[i])
		}
	}
	fmt.Fprintf(w, "%-8s churning accounts' copies: %s\n", "", b.String())
}

// measureChurn reads the database's size, each table's, and what the
// accounts assignees keep and are counted for (as measure reads them).
func (s *server) measureChurn(ctx context.Context, assignees []string) (churnSizes, error) {
	z := churnSizes{tables: map[string]int64{}, tuples: map[string][2]int64{}}
	var (
		one   func(q string, args ...any) (int64, error)
		place func(n int) string
		list  string
	)
	if s.pgDB != "" {
		conn, err := pgx.Connect(ctx, s.pgDB)
		if err != nil {
			return z, fmt.Errorf("connect: %w", err)
		}
		defer conn.Close(ctx)
		one = func(q string, args ...any) (n int64, err error) {
			err = conn.QueryRow(ctx, q, args...).Scan(&n)
			return
		}
		place = func(n int) string { return "$" + strconv.Itoa(n) }
		list = "SELECT tablename, pg_total_relation_size(format('%I', tablename)::regclass) FROM pg_tables WHERE schemaname = current_schema()"
		rows, err := conn.Query(ctx, list)
		if err != nil {
			return z, err
		}
		for rows.Next() {
			var t string
			var b int64
			if err := rows.Scan(&t, &b); err != nil {
				rows.Close()
				return z, err
			}
			z.tables[t] = b
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return z, err
		}
		if z.db, err = one("SELECT pg_database_size(current_database())"); err != nil {
			return z, err
		}
		rows, err = conn.Query(ctx, "SELECT relname, n_tup_ins, n_dead_tup FROM pg_stat_user_tables WHERE schemaname = current_schema()")
		if err != nil {
			return z, err
		}
		for rows.Next() {
			var t string
			var ins, dead int64
			if err := rows.Scan(&t, &ins, &dead); err != nil {
				rows.Close()
				return z, err
			}
			z.tuples[t] = [2]int64{ins, dead}
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return z, err
		}
	} else {
		for _, p := range []string{s.sqlite, s.sqlite + "-wal"} {
			if fi, err := os.Stat(p); err == nil {
				z.db += fi.Size()
			}
		}
		db, err := sql.Open("sqlite", "file:"+s.sqlite+"?mode=ro&_pragma=busy_timeout(5000)")
		if err != nil {
			return z, err
		}
		defer db.Close()
		one = func(q string, args ...any) (n int64, err error) {
			err = db.QueryRowContext(ctx, q, args...).Scan(&n)
			return
		}
		place = func(int) string { return "?" }
		rows, err := db.QueryContext(ctx, "SELECT m.tbl_name, sum(d.pgsize) FROM dbstat d JOIN sqlite_master m ON d.name = m.name GROUP BY m.tbl_name")
		if err != nil {
			return z, err
		}
		for rows.Next() {
			var t string
			var b int64
			if err := rows.Scan(&t, &b); err != nil {
				rows.Close()
				return z, err
			}
			z.tables[t] = b
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return z, err
		}
	}
	in := make([]string, len(assignees))
	args := make([]any, len(assignees))
	for i, id := range assignees {
		in[i], args[i] = place(i+1), id
	}
	of := " WHERE assignee_id IN (" + strings.Join(in, ", ") + ")"
	for _, q := range []struct {
		into *int64
		sql  string
	}{
		{&z.usage, "SELECT coalesce(sum(bytes), 0) FROM cache_usage" + of},
		{&z.entries.rows, "SELECT count(*) FROM " + entityTable + of},
		{&z.entries.counted, "SELECT coalesce(sum(octet_length(data)), 0) FROM " + entityTable + of},
		{&z.changes.rows, "SELECT count(*) FROM cache_changes" + of},
		{&z.changes.counted, "SELECT coalesce(sum(octet_length(data) + octet_length(key) + octet_length(type) + " +
			strconv.Itoa(domain.RetainedRowBytes) + "), 0) FROM cache_changes" + of},
		{&z.records.rows, "SELECT count(*) FROM cachegate_idempotency" + of},
		{&z.records.counted, "SELECT coalesce(sum(cost), 0) FROM cachegate_idempotency" + of},
	} {
		n, err := one(q.sql, args...)
		if err != nil {
			return z, fmt.Errorf("measure the churning accounts: %w", err)
		}
		*q.into = n
	}
	return z, nil
}

// churnAccounts returns the ids of the accounts of the churn phases.
func churnAccounts(a *attacker) []string {
	var out []string
	for name, acc := range a.accounts {
		if _, ok := churnVariants[name]; ok {
			out = append(out, acc.id)
		}
	}
	slices.Sort(out)
	return out
}
