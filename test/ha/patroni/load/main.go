// Command load is the write + refresh load of the Patroni recipe
// (test/ha/patroni/run; docs/ha.md has the method and the figures). It
// drives writers (POST /cache/user with unique keys, remembering every
// acknowledged 201) and refreshers (refresh-token exchanges, through each
// replica in turn) against the cachegate replicas it is given; after
// --warmup it runs the command after "--" (the script's: kill the
// PostgreSQL leader), keeps the load going until the first success after
// the outage the kill causes, plus --tail, then lists every entry through each replica and
// reports acknowledged writes, lost writes, the statuses answered during
// the election, the seconds from the kill to the first success, every
// answer other than 503 DATABASE_UNAVAILABLE, and whether a watched
// cachegate process restarted. It exits 1 when the goal is missed, 2 on a
// usage error.
//
//	load --urls http://127.0.0.1:8081,http://127.0.0.1:8082 --username ha --password-file FILE \
//	     [--pids 123,456] [--idempotency-key] -- bash kill-leader
//
// Only the standard library: it is built with the repository's go.mod.
package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"flag"
	"fmt"
	"io"
	"log"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"time"
)

type options struct {
	urls         []string
	username     string
	passwordFile string
	pids         []int
	warmup       time.Duration
	tail         time.Duration
	maxOutage    time.Duration
	goal         time.Duration
	writers      int
	refreshers   int
	pace         time.Duration
	timeout      time.Duration
	idempotency  bool
	killCommand  []string
}

func parse(args []string, stderr io.Writer) (options, error) {
	var o options
	fs := flag.NewFlagSet("load", flag.ContinueOnError)
	fs.SetOutput(stderr)
	urls := fs.String("urls", "", "comma-separated base URLs of the cachegate replicas (required)")
	fs.StringVar(&o.username, "username", "ha", "user to log in as (its entries are listed at the end)")
	fs.StringVar(&o.passwordFile, "password-file", "", "file whose first line is the user's password (required)")
	pids := fs.String("pids", "", "comma-separated PIDs of the cachegate processes, checked for a restart at the end")
	fs.DurationVar(&o.warmup, "warmup", 15*time.Second, "load before the kill")
	fs.DurationVar(&o.tail, "tail", 10*time.Second, "load after the first success that follows the kill")
	fs.DurationVar(&o.maxOutage, "max-outage", 90*time.Second, "stop waiting for a success after the kill after this long")
	fs.DurationVar(&o.goal, "goal", 30*time.Second, "longest acceptable time from the kill to the first success")
	fs.IntVar(&o.writers, "writers", 4, "concurrent writers, spread over the replicas")
	fs.IntVar(&o.refreshers, "refreshers", 2, "concurrent refresh-token exchangers, each through every replica in turn")
	fs.DurationVar(&o.pace, "pace", 50*time.Millisecond, "pause of each worker between two requests")
	fs.DurationVar(&o.timeout, "timeout", 15*time.Second, "client timeout of one request (cachegate's own bound is --database-timeout)")
	fs.BoolVar(&o.idempotency, "idempotency-key", false, "send Idempotency-Key on every POST and retry a write answered 503 or not answered with the same key")
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	for _, u := range strings.Split(*urls, ",") {
		if u = strings.TrimRight(strings.TrimSpace(u), "/"); u != "" {
			if !strings.HasPrefix(u, "http://") && !strings.HasPrefix(u, "https://") {
				return o, fmt.Errorf("--urls: %q is not an http(s) URL", u)
			}
			o.urls = append(o.urls, u)
		}
	}
	if len(o.urls) == 0 {
		return o, fmt.Errorf("--urls is required")
	}
	if o.passwordFile == "" {
		return o, fmt.Errorf("--password-file is required")
	}
	if *pids != "" {
		for _, p := range strings.Split(*pids, ",") {
			n, err := strconv.Atoi(strings.TrimSpace(p))
			if err != nil || n <= 0 {
				return o, fmt.Errorf("--pids: %q is not a PID", p)
			}
			o.pids = append(o.pids, n)
		}
	}
	if o.writers < 1 || o.refreshers < 0 || o.warmup <= 0 || o.tail < 0 || o.maxOutage <= 0 || o.timeout <= 0 {
		return o, fmt.Errorf("--writers must be at least 1; --warmup, --max-outage and --timeout positive")
	}
	o.killCommand = fs.Args()
	if len(o.killCommand) == 0 {
		return o, fmt.Errorf("the kill command (after --) is required")
	}
	return o, nil
}

func main() {
	log.SetFlags(log.Ltime | log.Lmicroseconds)
	log.SetPrefix("load: ")
	o, err := parse(os.Args[1:], os.Stderr)
	if err == flag.ErrHelp {
		os.Exit(0)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "load:", err)
		os.Exit(2)
	}
	ok, err := run(o, os.Stdout)
	if err != nil {
		log.Print(err)
		os.Exit(1)
	}
	if !ok {
		os.Exit(1)
	}
}

// run runs the load, the kill and the report; false when the goal was missed.
func run(o options, out io.Writer) (bool, error) {
	ctx := context.Background()
	pw, err := os.ReadFile(o.passwordFile)
	if err != nil {
		return false, fmt.Errorf("password file: %w", err)
	}
	nonce := make([]byte, 4)
	_, _ = rand.Read(nonce)
	l := &load{
		urls: o.urls, username: o.username, password: strings.TrimSpace(strings.SplitN(string(pw), "\n", 2)[0]),
		nonce: hex.EncodeToString(nonce), pace: o.pace, idempotency: o.idempotency, recovered: make(chan struct{}),
		client: &http.Client{Timeout: o.timeout, Transport: &http.Transport{
			MaxIdleConnsPerHost: o.writers + o.refreshers + 2, IdleConnTimeout: time.Minute}},
	}
	starts := map[int]string{}
	for _, pid := range o.pids {
		if starts[pid] = procStart(pid); starts[pid] == "" {
			return false, fmt.Errorf("cachegate process %d is not running", pid)
		}
	}

	writerTokens := make([]string, o.writers)
	for i := range writerTokens {
		t, ok := l.login(ctx, i%len(o.urls))
		if !ok {
			return false, fmt.Errorf("login as %s through replica %d failed before the kill", o.username, i%len(o.urls)+1)
		}
		writerTokens[i] = t.AccessToken
	}
	if l.userID, err = subject(writerTokens[0]); err != nil {
		return false, err
	}

	begin := time.Now()
	for i := range o.writers {
		l.wg.Add(1)
		go l.writer(ctx, i, writerTokens[i])
	}
	for i := range o.refreshers {
		l.wg.Add(1)
		go l.refresher(ctx, i)
	}
	log.Printf("%d writers and %d refreshers on %d replicas; the kill in %s", o.writers, o.refreshers, len(o.urls), o.warmup)
	time.Sleep(o.warmup)

	// The kill's instant is when the command returns: the leader is dead
	// by then, and a request sent while the command was still finding it
	// may rightly succeed (it counts as in flight at the kill).
	cmdStart := time.Now()
	cmd := exec.Command(o.killCommand[0], o.killCommand[1:]...)
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	killErr := cmd.Run()
	killAt := time.Now()
	killTook := killAt.Sub(cmdStart)
	l.markKill(killAt)
	if killErr != nil {
		l.stopped.Store(true)
		l.wg.Wait()
		return false, fmt.Errorf("kill command %q: %w", strings.Join(o.killCommand, " "), killErr)
	}
	log.Printf("kill command done in %s; waiting for the first success", killTook.Round(time.Millisecond))
	select {
	case <-l.recovered:
		log.Printf("first success after the outage, %s after the kill; %s more load", time.Since(killAt).Round(time.Millisecond), o.tail)
		time.Sleep(o.tail)
	case <-time.After(o.maxOutage):
		log.Printf("no outage ended within %s of the kill", o.maxOutage)
	}
	l.stopped.Store(true)
	l.wg.Wait()
	end := time.Now()

	outs, acks, unacked, retries, selfConflicts := l.snapshot()
	type listing struct{ lost, anyway, stored int }
	var lists []listing
	worstLost := 0
	for r := range o.urls {
		ids, keys, err := l.listAll(ctx, r, writerTokens[r%len(writerTokens)])
		if err != nil {
			return false, err
		}
		lost := lostWrites(acks, ids)
		for _, a := range lost[:min(5, len(lost))] {
			log.Printf("lost through replica %d: key %s id %s", r+1, a.Key, a.ID)
		}
		worstLost = max(worstLost, len(lost))
		lists = append(lists, listing{lost: len(lost), anyway: storedAnyway(unacked, keys), stored: len(ids)})
	}
	var restarted []string
	for _, pid := range o.pids {
		if procStart(pid) != starts[pid] {
			restarted = append(restarted, strconv.Itoa(pid))
		}
	}

	e := analyse(outs, killAt)
	fails := failures(outs)
	why := verdict(e, fails, worstLost, selfConflicts, restarted, o.idempotency, o.goal)

	byKind := map[string]counts{}
	var longest time.Duration
	for _, x := range outs {
		if byKind[x.Kind] == nil {
			byKind[x.Kind] = counts{}
		}
		byKind[x.Kind][x.label()]++
		longest = max(longest, x.Done.Sub(x.Sent))
	}
	since := func(t time.Time) string {
		if t.IsZero() {
			return "none"
		}
		return fmt.Sprintf("%.2f s", t.Sub(killAt).Seconds())
	}
	p := func(format string, a ...any) { fmt.Fprintf(out, format+"\n", a...) }
	p("cachegate behind HAProxy and Patroni: %d replicas, %d writers, %d refreshers, pace %s, Idempotency-Key %s",
		len(o.urls), o.writers, o.refreshers, o.pace, map[bool]string{true: "on (503 and unanswered writes retried)", false: "off"}[o.idempotency])
	p("load %s before the kill; the leader killed at %s (the command took %s); load stopped %.1f s after the kill",
		cmdStart.Sub(begin).Round(100*time.Millisecond), killAt.UTC().Format("15:04:05.000 UTC"), killTook.Round(time.Millisecond), end.Sub(killAt).Seconds())
	p("first failure sent after the kill: %s; first success after it: %s (writes %s, refreshes %s)",
		since(e.OutageStart), since(e.Recovered), since(e.PerKind[kindWrite]), since(e.PerKind[kindRefresh]))
	for r := range o.urls {
		p("  replica %d (%s): first success %s", r+1, o.urls[r], since(e.PerReplica[r]))
	}
	p("answered during the election (sent after the kill, answered before that first success): %s", e.During)
	p("  how long they took: median %s, 99th percentile %s, longest %s",
		e.percentile(50).Round(time.Microsecond), e.percentile(99).Round(time.Microsecond), e.percentile(100).Round(time.Microsecond))
	p("in flight at the kill (sent before, answered after): %s", e.InFlight)
	p("longest request: %.2f s", longest.Seconds())
	for _, k := range []string{kindWrite, kindRefresh, kindLogin} {
		p("%s answers over the whole run: %s", k, byKind[k])
	}
	p("writes: %d acknowledged (201), %d not acknowledged; write retries with the same Idempotency-Key: %d",
		len(acks), len(unacked), retries)
	for r, li := range lists {
		p("  through replica %d: %d entries listed, lost writes (acknowledged, not listed): %d; not acknowledged but stored anyway: %d",
			r+1, li.stored, li.lost, li.anyway)
	}
	p("self-conflicts (409 CACHE_ENTITY_ALREADY_EXISTS on a retry of one's own write): %d", selfConflicts)
	p("answers other than success and 503 DATABASE_UNAVAILABLE with Retry-After: %s", fails)
	if len(o.pids) > 0 {
		if len(restarted) == 0 {
			p("cachegate processes %v: running since before the load, none restarted", o.pids)
		} else {
			p("cachegate processes restarted or gone: %s", strings.Join(restarted, ", "))
		}
	}
	goal := fmt.Sprintf("0 lost, only 503 during the election, first success within %.0f s, no restart", o.goal.Seconds())
	if o.idempotency {
		goal += ", 0 self-conflicts"
	}
	if len(why) == 0 {
		p("goal (%s): met", goal)
		return true, nil
	}
	p("goal (%s): MISSED: %s", goal, strings.Join(why, "; "))
	return false, nil
}
