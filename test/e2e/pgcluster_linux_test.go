package e2e

import (
	"context"
	"database/sql"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	// The pgx driver registers itself as "pgx".
	_ "github.com/jackc/pgx/v5/stdlib"
)

// pgCluster is a throwaway PostgreSQL server a test starts for itself,
// on a free port of 127.0.0.1, so that it may freeze, kill or promote it
// without disturbing any other test. As root it runs as the postgres user
// (PostgreSQL refuses root), like test/run's cluster.
type pgCluster struct {
	bin  string // directory of initdb, postgres, pg_basebackup, pg_ctl
	dir  string // holds data/ and the socket
	Port int
	// KeepPort makes start retry on Port rather than on another free
	// port: a restarted server stays where its clients look.
	KeepPort bool

	cred   *syscall.Credential // nil unless run as root
	cmd    *exec.Cmd
	exited chan struct{}
}

// pgBinDir returns the newest /usr/lib/postgresql/*/bin, or skips the
// test loudly (fails under CI, where test/run installs PostgreSQL).
func pgBinDir(t *testing.T) string {
	t.Helper()
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	var found []string
	for _, d := range dirs {
		if _, err := os.Stat(filepath.Join(d, "initdb")); err == nil {
			found = append(found, d)
		}
	}
	if len(found) == 0 {
		if os.Getenv("CI") != "" {
			t.Fatal("PostgreSQL server binaries are required under CI (test/run installs them)")
		}
		t.Skip("SKIPPED, NO POSTGRESQL SERVER BINARIES in /usr/lib/postgresql/*/bin")
	}
	sort.Slice(found, func(i, j int) bool { return pgMajor(found[i]) < pgMajor(found[j]) })
	return found[len(found)-1]
}

func pgMajor(binDir string) int {
	n, _ := strconv.Atoi(filepath.Base(filepath.Dir(binDir)))
	return n
}

// newPGCluster creates a cluster directory (initdb) without starting it;
// conf lines are appended to postgresql.conf.
func newPGCluster(t *testing.T, conf ...string) *pgCluster {
	t.Helper()
	c := &pgCluster{bin: pgBinDir(t)}
	c.cred = pgCredential(t)
	c.dir = c.makeDir(t)
	c.run(t, "initdb", "-D", c.data(), "-U", "postgres", "--auth=trust", "--encoding=UTF8", "--no-locale", "--no-sync")
	c.appendConf(t, conf...)
	return c
}

// makeDir returns a new directory under /tmp that the cluster's user owns
// (t.TempDir is private to root).
func (c *pgCluster) makeDir(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("/tmp", "cachegate-e2e-pg-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	if c.cred != nil {
		if err := os.Chown(dir, int(c.cred.Uid), int(c.cred.Gid)); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func (c *pgCluster) data() string { return filepath.Join(c.dir, "data") }

func (c *pgCluster) appendConf(t *testing.T, lines ...string) {
	t.Helper()
	f, err := os.OpenFile(filepath.Join(c.data(), "postgresql.conf"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	base := []string{"listen_addresses = '127.0.0.1'", "unix_socket_directories = '" + c.dir + "'",
		"max_connections = 100", "shared_buffers = 16MB"}
	if _, err := f.WriteString("\n" + strings.Join(append(base, lines...), "\n") + "\n"); err != nil {
		t.Fatal(err)
	}
}

// pgCredential is the postgres user's when we are root, else nil.
func pgCredential(t *testing.T) *syscall.Credential {
	t.Helper()
	if os.Geteuid() != 0 {
		return nil
	}
	u, err := user.Lookup("postgres")
	if err != nil {
		t.Fatalf("running as root needs a postgres user to run PostgreSQL (test/run creates it): %v", err)
	}
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)
	return &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}
}

// run runs one of the cluster's programs to completion as its user.
func (c *pgCluster) run(t *testing.T, prog string, args ...string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, filepath.Join(c.bin, prog), args...)
	cmd.Dir = c.dir
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: c.cred, Pdeathsig: syscall.SIGKILL}
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%s: %v\n%s", prog, err, out)
	}
}

// start runs the server on a free port and waits until it accepts
// connections. Cleanup stops it.
func (c *pgCluster) start(t *testing.T) {
	t.Helper()
	for attempt := 0; ; attempt++ {
		if c.Port == 0 || attempt > 0 && !c.KeepPort {
			c.Port = freePort(t)
		}
		logf, err := os.Create(filepath.Join(c.dir, "server.log"))
		if err != nil {
			t.Fatal(err)
		}
		_ = os.Chown(logf.Name(), int(credOr(c.cred).Uid), int(credOr(c.cred).Gid))
		c.cmd = exec.Command(filepath.Join(c.bin, "postgres"), "-D", c.data(), "-p", strconv.Itoa(c.Port))
		c.cmd.Dir = c.dir
		c.cmd.Stdout, c.cmd.Stderr = logf, logf
		c.cmd.SysProcAttr = &syscall.SysProcAttr{Credential: c.cred, Setpgid: true, Pdeathsig: syscall.SIGKILL}
		if err := c.cmd.Start(); err != nil {
			t.Fatalf("start postgres: %v", err)
		}
		c.exited = make(chan struct{})
		go func(cmd *exec.Cmd, exited chan struct{}, f *os.File) {
			_ = cmd.Wait()
			_ = f.Close()
			close(exited)
		}(c.cmd, c.exited, logf)
		if err := c.waitAccepting(30 * time.Second); err == nil {
			break
		} else if attempt == 3 {
			log, _ := os.ReadFile(filepath.Join(c.dir, "server.log"))
			t.Fatalf("postgres did not start: %v\n%s", err, log)
		}
		c.stop()
		if c.KeepPort {
			time.Sleep(time.Second)
		}
	}
	t.Cleanup(c.stop)
}

func credOr(c *syscall.Credential) syscall.Credential {
	if c == nil {
		return syscall.Credential{Uid: uint32(os.Getuid()), Gid: uint32(os.Getgid())}
	}
	return *c
}

// waitAccepting waits until a query succeeds.
func (c *pgCluster) waitAccepting(bound time.Duration) error {
	deadline := time.Now().Add(bound)
	for {
		err := c.query("SELECT 1", nil)
		if err == nil {
			return nil
		}
		select {
		case <-c.exited:
			return fmt.Errorf("postgres exited: %w", err)
		default:
		}
		if time.Now().After(deadline) {
			return err
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// query runs one statement on the postgres database, scanning one row into
// dest when it is not nil.
func (c *pgCluster) query(q string, dest any) error {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	db, err := sql.Open("pgx", c.URL("postgres")+"&connect_timeout=2")
	if err != nil {
		return err
	}
	defer db.Close()
	if dest == nil {
		_, err = db.ExecContext(ctx, q)
		return err
	}
	return db.QueryRowContext(ctx, q).Scan(dest)
}

// URL returns the URL of database db on this cluster.
func (c *pgCluster) URL(db string) string {
	return fmt.Sprintf("postgres://postgres@127.0.0.1:%d/%s?sslmode=disable", c.Port, db)
}

// signal sends sig to the postmaster, then to each of its children.
// PostgreSQL puts every backend in a session of its own (setsid), so one
// process group does not hold them. The postmaster goes first: stopped,
// it starts no new backend while its children are being signalled.
func (c *pgCluster) signal(sig syscall.Signal) {
	if c.cmd == nil || c.cmd.Process == nil {
		return
	}
	pid := c.cmd.Process.Pid
	_ = syscall.Kill(pid, sig)
	for range 2 {
		for _, child := range childPIDs(pid) {
			_ = syscall.Kill(child, sig)
		}
	}
}

// childPIDs lists the processes whose parent is pid, from /proc.
func childPIDs(pid int) []int {
	entries, _ := os.ReadDir("/proc")
	var out []int
	for _, e := range entries {
		n, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		stat, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		// pid (comm) state ppid …; comm may hold spaces and parentheses.
		rest := string(stat[strings.LastIndexByte(string(stat), ')')+1:])
		f := strings.Fields(rest)
		if len(f) > 1 && f[1] == strconv.Itoa(pid) {
			out = append(out, n)
		}
	}
	return out
}

// freeze stops every process of the server (SIGSTOP); thaw resumes them.
func (c *pgCluster) freeze() { c.signal(syscall.SIGSTOP) }
func (c *pgCluster) thaw()   { c.signal(syscall.SIGCONT) }

// kill ends the server at once, as a crash of its machine would.
func (c *pgCluster) kill() {
	c.signal(syscall.SIGKILL)
	if c.exited != nil {
		<-c.exited
	}
}

// stop shuts the server down (fast shutdown), killing it when it lingers.
func (c *pgCluster) stop() {
	if c.cmd == nil || c.exited == nil {
		return
	}
	select {
	case <-c.exited:
		return
	default:
	}
	c.thaw()
	_ = c.cmd.Process.Signal(syscall.SIGINT)
	select {
	case <-c.exited:
	case <-time.After(15 * time.Second):
		c.kill()
	}
}

// freePort returns a port of 127.0.0.1 that nothing listened on a moment
// ago.
func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}
