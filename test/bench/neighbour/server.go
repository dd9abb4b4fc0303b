package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"
)

// server is one cachegate process on a throw-away database.
type server struct {
	bin      string
	dir      string
	database string // cachegate's --database
	sqlite   string // the SQLite file, when on SQLite
	pgDB     string // the database createDatabase made, dropped by close
	base     string // http://127.0.0.1:port
	addr     string
	cmd      *exec.Cmd
	logPath  string
	env      []string
	args     []string // settings of serve beyond the defaults (restart)
	// churnQuota is set once the server runs with the churn phases'
	// quota (beforeChurn).
	churnQuota bool
}

// benchDBPrefix starts the name of every database this program creates
// (the same as test/bench/seed's), so dropDatabase drops nothing else.
const benchDBPrefix = "cachegate_bench_"

// newServer builds cachegate when c.binary is empty, creates the database
// and migrates it; start runs the server.
func newServer(ctx context.Context, c config, dir string) (*server, error) {
	s := &server{bin: c.binary, dir: dir, logPath: filepath.Join(dir, "cachegate.log")}
	if s.bin == "" {
		if _, err := os.Stat("go.mod"); err != nil {
			return nil, errors.New("run from the repository's root, or give --binary")
		}
		s.bin = filepath.Join(dir, "cachegate")
		build := exec.CommandContext(ctx, "go", "build", "-tags", "nomsgpack,grpcnotrace", "-o", s.bin, "./cmd/cachegate")
		build.Stdout, build.Stderr = os.Stderr, os.Stderr
		if err := build.Run(); err != nil {
			return nil, fmt.Errorf("build cachegate: %w", err)
		}
	}
	if c.db == "pg" {
		u, err := createDatabase(ctx, c.pgURL)
		if err != nil {
			return nil, err
		}
		s.pgDB, s.database = u, u
	} else {
		s.sqlite = filepath.Join(dir, "cachegate.db")
		s.database = "sqlite:" + s.sqlite
	}
	// The server's other settings are its defaults, or the caller's
	// CACHEGATE_* variables; the bcrypt cost is low so that logins measure
	// the service rather than bcrypt.
	s.env = append(os.Environ(), "CACHEGATE_DATABASE="+s.database, "CACHEGATE_BCRYPT_COST="+strconv.Itoa(c.bcryptCost))
	if out, err := s.command(ctx, nil, "migrate"); err != nil {
		s.close()
		return nil, fmt.Errorf("cachegate migrate: %w: %s", err, lastLines(out, 5))
	}
	return s, nil
}

func (s *server) command(ctx context.Context, stdin []byte, args ...string) ([]byte, error) {
	cmd := exec.CommandContext(ctx, s.bin, args...)
	cmd.Env = s.env
	cmd.Stdin = bytes.NewReader(stdin)
	return cmd.CombinedOutput()
}

var uuidRE = regexp.MustCompile(`[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}`)

// addUser creates a user with a random password and returns its id and
// password (which is never printed).
func (s *server) addUser(ctx context.Context, name string) (id, password string, err error) {
	var b [18]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", "", err
	}
	password = base64.RawURLEncoding.EncodeToString(b[:])
	out, err := s.command(ctx, []byte(password+"\n"), "users", "add", "--username", name, "--password-stdin")
	if err != nil {
		return "", "", fmt.Errorf("cachegate users add %s: %w: %s", name, err, lastLines(out, 5))
	}
	id = uuidRE.FindString(string(out))
	if id == "" {
		return "", "", fmt.Errorf("cachegate users add %s printed no user id", name)
	}
	return id, password, nil
}

// start runs `cachegate serve` on a free port of 127.0.0.1 (which the
// other 127/8 addresses the victim and attacker connect from reach too)
// and waits for /readyz.
func (s *server) start(ctx context.Context) error {
	if s.addr == "" {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return err
		}
		s.addr = l.Addr().String()
		l.Close()
		s.base = "http://" + s.addr
	}
	logf, err := os.OpenFile(s.logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	defer logf.Close()
	// One access token lasts the run (streams end when theirs expires).
	s.cmd = exec.Command(s.bin, append([]string{"serve", "--addr", s.addr, "--access-token-ttl", "2h"}, s.args...)...)
	s.cmd.Env = s.env
	s.cmd.Stdout, s.cmd.Stderr = logf, logf
	if err := s.cmd.Start(); err != nil {
		return err
	}
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		if err := ctx.Err(); err != nil {
			return err
		}
		if resp, err := http.Get(s.base + "/readyz"); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		if s.cmd.ProcessState != nil {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	return fmt.Errorf("cachegate did not become ready: %s", lastLines(readFile(s.logPath), 10))
}

// restart stops the server and starts it again on the same address and
// database with args added to its settings.
func (s *server) restart(ctx context.Context, args ...string) error {
	s.stop()
	s.args = append(s.args, args...)
	return s.start(ctx)
}

// stop ends the server process, if it runs.
func (s *server) stop() {
	if s.cmd != nil && s.cmd.Process != nil {
		_ = s.cmd.Process.Signal(syscall.SIGTERM)
		done := make(chan struct{})
		go func() { _ = s.cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(20 * time.Second):
			_ = s.cmd.Process.Kill()
			<-done
		}
	}
	s.cmd = nil
}

// close stops the server and drops the PostgreSQL database.
func (s *server) close() {
	s.stop()
	if s.pgDB != "" {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := dropDatabase(ctx, s.pgDB); err != nil {
			fmt.Fprintln(os.Stderr, "neighbour: could not drop the benchmark database:", err)
		}
	}
}

// createDatabase creates an empty database on the server of base (a
// postgres:// URL) and returns base naming it. Errors never repeat the
// URL, which may hold a password.
func createDatabase(ctx context.Context, base string) (string, error) {
	u, err := url.Parse(base)
	if err != nil || (u.Scheme != "postgres" && u.Scheme != "postgresql") {
		return "", errors.New("createdb: want a postgres:// URL")
	}
	var b [6]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", err
	}
	name := benchDBPrefix + hex.EncodeToString(b[:])
	conn, err := pgx.Connect(ctx, base)
	if err != nil {
		return "", fmt.Errorf("createdb: connect: %w", err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, "CREATE DATABASE "+pgx.Identifier{name}.Sanitize()); err != nil {
		return "", fmt.Errorf("createdb: %w", err)
	}
	u.Path = "/" + name
	return u.String(), nil
}

// dropDatabase drops the database target names, if createDatabase made it.
func dropDatabase(ctx context.Context, target string) error {
	u, err := url.Parse(target)
	if err != nil {
		return errors.New("dropdb: want a postgres:// URL")
	}
	name := strings.TrimPrefix(u.Path, "/")
	if !strings.HasPrefix(name, benchDBPrefix) {
		return errors.New("dropdb: refusing to drop a database this program did not create")
	}
	u.Path = "/postgres"
	conn, err := pgx.Connect(ctx, u.String())
	if err != nil {
		return fmt.Errorf("dropdb: connect: %w", err)
	}
	defer conn.Close(ctx)
	_, err = conn.Exec(ctx, "DROP DATABASE IF EXISTS "+pgx.Identifier{name}.Sanitize()+" WITH (FORCE)")
	return err
}

func readFile(path string) []byte {
	b, _ := os.ReadFile(path)
	return b
}

// lastLines returns the last n lines of b, for error messages.
func lastLines(b []byte, n int) string {
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
