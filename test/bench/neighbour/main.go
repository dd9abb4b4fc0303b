// Command neighbour is the noisy-neighbour benchmark (docs/benchmarks.md,
// "Noisy neighbours"; test/bench/README.md says how to run it). It starts
// cachegate on a throw-away database, seeds a victim user and an attacker
// user, and runs the victim's fixed-rate load (GET by id of its own
// entries and logins) first alone, then beside each abuse in turn:
//
//	lists    slow readers of the attacker's multi-MB list, reading nothing
//	fold     closed loops of case-insensitive ($contL, $eqL …) paged queries
//	logins   a flood of failed logins, each naming a new 300-character username
//	streams  200 change-feed streams of the attacker, kept open
//	heavy    three more accounts, each running closed loops of 49-condition
//	         case-insensitive lists over its own entries
//	sessions one account logging in again and again (login loop)
//	churn-*  one account under a 4 MiB quota creating entries that leave
//	         nothing live: expiring at once, the same with an
//	         Idempotency-Key each, deleted at once (churn.go)
//
// For each phase it prints the victim's success rate, p50, p99 and p99
// against the quiet run, the attacker's answers by status, and (logins)
// how fast the database and its audit tables grew; (sessions) the live
// sessions left; (churn) the database's growth against the quota. The victim is judged:
// 429 and 422 answers to the attacker are what a defended server gives.
//
//	go run ./test/bench/neighbour                       # SQLite, 15 s per phase
//	go run ./test/bench/neighbour --db pg --duration 10s
//
// It is run by hand (or through test/bench/neighbour/run), not by go test.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"
)

// config is what one run was asked to do.
type config struct {
	db            string
	pgURL         string
	binary        string
	out           string
	duration      time.Duration
	settle        time.Duration
	warmup        time.Duration
	phases        []string
	victimRate    int
	victimLogins  int
	victimEntries int
	attackEntries int
	dataBytes     int
	slowReaders   int
	foldWorkers   int
	loginWorkers  int
	streams       int
	heavyWorkers  int
	bcryptCost    int
	victimAddr    string
	attackAddr    string
	accountAddr   string
	churnDuration time.Duration
	churnQuotaMiB int
	churnWorkers  int
	loopWorkers   int
}

// phaseNames are the phases --phases accepts, in their default order.
var phaseNames = []string{"quiet", "lists", "fold", "logins", "streams", "heavy", "sessions", "churn-expire", "churn-idem", "churn-delete"}

func main() {
	c, err := parseFlags(os.Args[1:], os.Stderr)
	if errors.Is(err, flag.ErrHelp) {
		return
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "neighbour:", err)
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, c); err != nil {
		fmt.Fprintln(os.Stderr, "neighbour:", err)
		os.Exit(1)
	}
}

// parseFlags reads the command line; the PostgreSQL URL comes from the
// environment, as test/bench/run takes it.
func parseFlags(args []string, stderr io.Writer) (config, error) {
	var c config
	fs := flag.NewFlagSet("neighbour", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintln(stderr, `usage: go run ./test/bench/neighbour [options]   (from the repository's root)

Starts cachegate on a temporary database and measures a victim user's
GET-by-id and login load alone (quiet) and beside each abuse. --db pg needs
CACHEGATE_BENCH_POSTGRES (or CACHEGATE_TEST_POSTGRES): the URL of a server
where a throw-away database is created and dropped. CACHEGATE_* variables
reach the server (its settings). Options:`)
		fs.PrintDefaults()
	}
	fs.StringVar(&c.db, "db", "sqlite", "database: sqlite (a temporary file) or pg")
	fs.StringVar(&c.binary, "binary", "", "cachegate binary (default: go build ./cmd/cachegate into the temporary directory)")
	fs.StringVar(&c.out, "out", "", "directory of the report (default test/bench/out/<date-time>)")
	fs.DurationVar(&c.duration, "duration", 15*time.Second, "length of each phase")
	fs.DurationVar(&c.warmup, "warmup", time.Second, "how long each abuse runs before the victim's load starts")
	fs.DurationVar(&c.settle, "settle", 2*time.Second, "pause after each phase, once the attacker has let go")
	phases := fs.String("phases", strings.Join(phaseNames, ","), "comma-separated phases, in order; quiet is the reference and runs first if left out")
	fs.IntVar(&c.victimRate, "victim-rate", 50, "victim's GET-by-id requests per second (open loop)")
	fs.IntVar(&c.victimLogins, "victim-logins", 2, "victim's logins per second (open loop)")
	fs.IntVar(&c.victimEntries, "victim-entries", 100, "entries the victim owns")
	fs.IntVar(&c.attackEntries, "attacker-entries", 3000, "entries the attacker owns (keys of 250 non-ASCII characters)")
	fs.IntVar(&c.dataBytes, "data-bytes", 6000, "size of each attacker entry's data")
	fs.IntVar(&c.slowReaders, "slow-readers", 16, "lists phase: lists held open unread")
	fs.IntVar(&c.foldWorkers, "fold-workers", 16, "fold phase: concurrent query loops")
	fs.IntVar(&c.loginWorkers, "login-workers", 8, "logins phase: concurrent failed-login loops")
	fs.IntVar(&c.streams, "streams", 200, "streams phase: change-feed streams held open")
	fs.IntVar(&c.heavyWorkers, "heavy-workers", 4, "heavy phase: concurrent list loops of each of the three accounts")
	fs.IntVar(&c.bcryptCost, "bcrypt-cost", 4, "the server's bcrypt cost (low, so that logins are cheap)")
	fs.StringVar(&c.victimAddr, "victim-addr", "127.0.0.1", "loopback address the victim connects from")
	fs.StringVar(&c.attackAddr, "attacker-addr", "127.0.0.2", "loopback address the attacker connects from")
	fs.StringVar(&c.accountAddr, "accounts-addr", "127.0.0.3", "loopback address the accounts of the sessions and churn phases connect from "+
		"(not the attacker's: after the logins phase the throttle refuses its logins for --throttle-window)")
	fs.IntVar(&c.loopWorkers, "loop-workers", 1, "sessions phase: concurrent login loops of one account")
	fs.DurationVar(&c.churnDuration, "churn-duration", 45*time.Second, "length of each churn phase")
	fs.IntVar(&c.churnQuotaMiB, "churn-quota-mib", 4, "churn phases: the server's --quota-max-bytes, in MiB (it restarts with it before the first)")
	fs.IntVar(&c.churnWorkers, "churn-workers", 2, "churn phases: concurrent create loops of the churning account")
	if err := fs.Parse(args); err != nil {
		return c, err
	}
	if fs.NArg() > 0 {
		return c, fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	var problems []error
	switch c.db {
	case "sqlite":
	case "pg":
		c.pgURL = os.Getenv("CACHEGATE_BENCH_POSTGRES")
		if c.pgURL == "" {
			c.pgURL = os.Getenv("CACHEGATE_TEST_POSTGRES")
		}
		if c.pgURL == "" {
			problems = append(problems, errors.New("--db pg needs CACHEGATE_BENCH_POSTGRES (or CACHEGATE_TEST_POSTGRES)"))
		}
	default:
		problems = append(problems, errors.New("--db must be sqlite or pg"))
	}
	ps, err := parsePhases(*phases)
	if err != nil {
		problems = append(problems, err)
	}
	c.phases = ps
	if c.duration < time.Second || c.duration > time.Hour || c.churnDuration < time.Second || c.churnDuration > time.Hour {
		problems = append(problems, errors.New("--duration and --churn-duration must be 1s to 1h"))
	}
	for _, n := range []struct {
		name string
		v    int
	}{{"--victim-rate", c.victimRate}, {"--victim-entries", c.victimEntries}, {"--attacker-entries", c.attackEntries},
		{"--data-bytes", c.dataBytes}, {"--slow-readers", c.slowReaders}, {"--fold-workers", c.foldWorkers},
		{"--login-workers", c.loginWorkers}, {"--streams", c.streams}, {"--heavy-workers", c.heavyWorkers}, {"--loop-workers", c.loopWorkers},
		{"--churn-quota-mib", c.churnQuotaMiB}, {"--churn-workers", c.churnWorkers}} {
		if n.v < 1 {
			problems = append(problems, fmt.Errorf("%s must be at least 1", n.name))
		}
	}
	if c.victimLogins < 0 || c.settle < 0 || c.warmup < 0 {
		problems = append(problems, errors.New("--victim-logins, --settle and --warmup must not be negative"))
	}
	return c, errors.Join(problems...)
}

// parsePhases reads --phases: known names, quiet first (added when left
// out, as every other phase is compared with it).
func parsePhases(s string) ([]string, error) {
	var out []string
	for _, p := range strings.Split(s, ",") {
		p = strings.TrimSpace(p)
		if p == "" {
			continue
		}
		known := false
		for _, n := range phaseNames {
			known = known || n == p
		}
		if !known {
			return nil, fmt.Errorf("unknown phase %q (want %s)", p, strings.Join(phaseNames, ","))
		}
		out = append(out, p)
	}
	if len(out) == 0 || out[0] != "quiet" {
		out = append([]string{"quiet"}, out...)
	}
	return out, nil
}
