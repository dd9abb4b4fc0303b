package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"syscall"
	"time"
)

// run does one benchmark: server, seeding, the phases, the report.
func run(ctx context.Context, c config) error {
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err == nil && lim.Cur < lim.Max {
		lim.Cur = lim.Max
		_ = syscall.Setrlimit(syscall.RLIMIT_NOFILE, &lim)
	}
	dir, err := os.MkdirTemp("", "cachegate-neighbour-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	if c.out == "" {
		c.out = filepath.Join("test", "bench", "out", time.Now().Format("20060102-150405"))
	}
	if err := os.MkdirAll(c.out, 0o755); err != nil {
		return err
	}

	srv, err := newServer(ctx, c, dir)
	if err != nil {
		return err
	}
	defer srv.close()
	victimID, victimPass, err := srv.addUser(ctx, "victim")
	if err != nil {
		return err
	}
	// The victim's logins are another account's: each login is a new
	// session, and past --max-sessions-per-user (100) the oldest ends,
	// which after 50 s would be the session of the victim's GETs.
	_, loginsPass, err := srv.addUser(ctx, "victim-logins")
	if err != nil {
		return err
	}
	attackerID, attackerPass, err := srv.addUser(ctx, "attacker")
	if err != nil {
		return err
	}
	var heavyIDs, heavyPasswords []string
	if slices.Contains(c.phases, "heavy") {
		for i := range heavyAccounts {
			id, pass, err := srv.addUser(ctx, heavyName(i))
			if err != nil {
				return err
			}
			heavyIDs, heavyPasswords = append(heavyIDs, id), append(heavyPasswords, pass)
		}
	}
	accounts, err := addAccounts(ctx, srv, c)
	if err != nil {
		return err
	}
	if err := srv.start(ctx); err != nil {
		return err
	}
	defer func() {
		if tail := lastLines(readFile(srv.logPath), 50); tail != "" {
			_ = os.WriteFile(filepath.Join(c.out, "cachegate-log-tail.txt"), []byte(tail+"\n"), 0o644)
		}
	}()

	vclient := newClient(c.victimAddr, 64, 10*time.Second)
	aclient := newClient(c.attackAddr, 16, 60*time.Second)
	base := srv.base
	vtoken, err := login(ctx, vclient, base, "victim", victimPass)
	if err != nil {
		return err
	}
	atoken, err := login(ctx, aclient, base, "attacker", attackerPass)
	if err != nil {
		return err
	}
	t0 := time.Now()
	vids, err := createEntries(ctx, vclient, base, vtoken, victimID, c.victimEntries, func(i int) (string, any) {
		return fmt.Sprintf("victim-%04d", i), map[string]any{"theme": "dark", "n": i}
	})
	if err != nil {
		return fmt.Errorf("seed the victim: %w", err)
	}
	keys := make([]string, c.attackEntries)
	for i := range keys {
		keys[i] = attackerKey(i)
	}
	if _, err := createEntries(ctx, aclient, base, atoken, attackerID, c.attackEntries, func(i int) (string, any) {
		return keys[i], map[string]any{"blob": blob(i, c.dataBytes)}
	}); err != nil {
		return fmt.Errorf("seed the attacker: %w", err)
	}
	heavy, err := seedHeavy(ctx, c, aclient, base, heavyIDs, heavyPasswords)
	if err != nil {
		return err
	}
	// The victim's login account starts at the session cap, so that each
	// of its logins in every phase, the quiet one too, also ends its
	// oldest session (and records session.evicted).
	for range sessionCap() {
		if _, err := login(ctx, vclient, base, "victim-logins", loginsPass); err != nil {
			return fmt.Errorf("seed the victim's sessions: %w", err)
		}
	}
	fmt.Fprintf(os.Stderr, "seeded %d victim and %d attacker entries (and %d of each of %d heavy accounts) through POST in %s\n",
		c.victimEntries, c.attackEntries, c.attackEntries, len(heavy), time.Since(t0).Round(time.Millisecond))

	var head bytes.Buffer
	writeHeader(&head, c)
	os.Stdout.Write(head.Bytes())

	v := &victim{client: vclient, base: base, token: vtoken, ids: vids, username: "victim-logins", password: loginsPass,
		getRate: c.victimRate, logins: c.victimLogins}
	a := &attacker{addr: srv.addr, base: base, from: c.attackAddr, token: atoken, keys: keys, heavy: heavy, accounts: accounts}
	var results []phaseResult
	for _, p := range c.phases {
		if _, ok := churnVariants[p]; ok {
			if err := beforeChurn(ctx, c, srv, v, vclient, aclient); err != nil {
				return err
			}
		}
		r, err := runPhase(ctx, c, srv, v, a, p)
		if err != nil {
			return fmt.Errorf("phase %s: %w", p, err)
		}
		results = append(results, r)
		fmt.Fprintf(os.Stderr, "%s: victim %d requests, %.2f %% ok, p99 %s ms; attacker %s\n", p, r.victim.n,
			r.victim.successPct, ms(r.victim.p99), formatCounts(r.attacker))
		if !sleep(ctx, c.settle) {
			return ctx.Err()
		}
		if waited, calm := v.waitCalm(ctx, 30*time.Second); !calm {
			fmt.Fprintf(os.Stderr, "after %s: the server still answered slowly %s later; the next phase starts anyway\n", p, waited)
		}
	}
	var table bytes.Buffer
	writeTable(&table, results)
	fmt.Fprintln(os.Stdout)
	os.Stdout.Write(table.Bytes())
	file := filepath.Join(c.out, "neighbour.txt")
	if err := os.WriteFile(file, append(append(head.Bytes(), '\n'), table.Bytes()...), 0o644); err != nil {
		return err
	}
	fmt.Fprintln(os.Stdout, "report:", file)
	return nil
}

// phaseDuration is how long phase runs: --churn-duration for the churn
// phases, --duration for the others.
func phaseDuration(c config, phase string) time.Duration {
	if _, ok := churnVariants[phase]; ok {
		return c.churnDuration
	}
	return c.duration
}

// measured reports whether a phase's database growth is measured: the
// login flood's, and the quiet run's, which is the victim's own (its
// successful logins are audit events too) and is taken off the flood's.
func measured(phase string) bool { return phase == "logins" || phase == "quiet" }

// runPhase runs the victim's load for c.duration beside phase's abuse
// (none for quiet). The attacker starts c.warmup before the victim, so
// that its connections are in place, and stops after it.
func runPhase(ctx context.Context, c config, srv *server, v *victim, a *attacker, phase string) (phaseResult, error) {
	r := phaseResult{name: phase}
	abuse := abuses[phase]
	a.counts = &statuses{}
	d := phaseDuration(c, phase)
	var before sizes
	if measured(phase) || phase == "sessions" {
		var err error
		if before, err = srv.measure(ctx); err != nil {
			return r, fmt.Errorf("measure the database: %w", err)
		}
	}
	_, churning := churnVariants[phase]
	var churnBefore churnSizes
	if churning {
		var err error
		if churnBefore, err = srv.measureChurn(ctx, churnAccounts(a)); err != nil {
			return r, fmt.Errorf("measure the database: %w", err)
		}
	}
	actx, stop := context.WithCancel(ctx)
	done := make(chan struct{})
	started := time.Now()
	if abuse != nil {
		go func() { defer close(done); abuse(actx, a, c) }()
		if !sleep(ctx, c.warmup) {
			stop()
			<-done
			return r, ctx.Err()
		}
	} else {
		close(done)
	}
	// Halfway through a logins phase the sizes are taken again: the
	// second half's growth is the one judged (growth.late).
	var (
		mid     sizes
		midAt   time.Time
		midErr  error
		midDone = make(chan struct{})
	)
	if measured(phase) {
		go func() {
			defer close(midDone)
			if sleep(ctx, d/2) {
				midAt = time.Now()
				mid, midErr = srv.measure(ctx)
			}
		}()
	} else {
		close(midDone)
	}
	samples := v.run(ctx, d)
	<-midDone
	stop()
	<-done
	elapsed := time.Since(started)
	if err := ctx.Err(); err != nil {
		return r, err
	}
	r.victim = summarise(samples)
	r.attacker = a.counts.snapshot()
	if churning {
		after, err := srv.measureChurn(ctx, churnAccounts(a))
		if err != nil {
			return r, fmt.Errorf("measure the database: %w", err)
		}
		r.churn = &churnResult{quota: int64(c.churnQuotaMiB) << 20, before: churnBefore, after: after,
			accepted: r.attacker["201"], quot: r.attacker["403quota"]}
	}
	if phase == "sessions" {
		after, err := srv.measure(ctx)
		if err != nil {
			return r, fmt.Errorf("measure the database: %w", err)
		}
		if r.sessions, err = finishSessions(ctx, c, a, before, after); err != nil {
			return r, fmt.Errorf("count the sessions: %w", err)
		}
	}
	if measured(phase) {
		after, err := srv.measure(ctx)
		if err != nil {
			return r, fmt.Errorf("measure the database: %w", err)
		}
		r.growth = &growth{seconds: elapsed.Seconds(), db: after.db - before.db, audit: after.audit - before.audit,
			rows: after.rows - before.rows, tables: after.tables}
		if midErr == nil && !midAt.IsZero() {
			r.growth.late = &growth{seconds: time.Since(midAt).Seconds(), db: after.db - mid.db, audit: after.audit - mid.audit,
				rows: after.rows - mid.rows, tables: after.tables}
		}
	}
	return r, nil
}

// writeHeader prints what was run where: the figures are only comparable
// with the machine's load and the commit beside them.
func writeHeader(w io.Writer, c config) {
	load, _ := os.ReadFile("/proc/loadavg")
	commit, _ := exec.Command("git", "rev-parse", "--short", "HEAD").Output()
	fmt.Fprintf(w, "# cachegate noisy-neighbour benchmark, %s\n", time.Now().UTC().Format(time.RFC3339))
	fmt.Fprintf(w, "machine: %d cores, load average %s; %s, commit %s\n", runtime.NumCPU(),
		strings.Join(strings.Fields(string(load))[:min(3, len(strings.Fields(string(load))))], " "),
		runtime.Version(), strings.TrimSpace(string(commit)))
	fmt.Fprintf(w, "run: db=%s duration=%s per phase, victim %d GET/s + %d logins/s over %d entries; attacker %d entries "+
		"(250-character non-ASCII keys, %d bytes of data); lists %d, fold %d, logins %d, streams %d, heavy %d×%d; bcrypt cost %d\n",
		c.db, c.duration, c.victimRate, c.victimLogins, c.victimEntries, c.attackEntries, c.dataBytes,
		c.slowReaders, c.foldWorkers, c.loginWorkers, c.streams, heavyAccounts, c.heavyWorkers, c.bcryptCost)
	fmt.Fprintf(w, "run: sessions %d login loop(s) of one account; churn %s per variant, %d loops of one account each, "+
		"%d-%d KiB values, the server restarted with --quota-max-bytes %dMiB before the first\n",
		c.loopWorkers, c.churnDuration, c.churnWorkers, churnMinBytes>>10, churnMaxBytes>>10, c.churnQuotaMiB)
}
