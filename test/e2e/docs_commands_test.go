package e2e

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// A command the README or docs/*.md shows, where it is shown.
type shownCommand struct {
	where string // file:line
	text  string // the command line, continuations joined
}

var (
	shellFence   = regexp.MustCompile("(?ms)^ *```(sh|bash|shell)\n(.*?)^ *```")
	anyFence     = regexp.MustCompile("(?ms)^ *```.*?^ *```")
	inlineCode   = regexp.MustCompile("`([^`]+)`")
	walkthroughs = regexp.MustCompile(`(?s)<!-- walkthrough:start -->.*?<!-- walkthrough:end -->`)
	// invokes finds a run of cachegate (the binary, ./cachegate or go run)
	// or of a script under test/.
	invokes = regexp.MustCompile(`(^|[\s|;&(])((\./)?cachegate|go run \./cmd/cachegate)(\s|$)|(^|\s)bash test/`)
)

// shownCommands extracts every command of README.md and docs/*.md that
// runs cachegate or a script of test/: the lines of their sh code blocks
// (the walk-through aside: TestREADMEWalkthroughWorksAsWritten runs it
// whole) and their inline code that starts with one. Inline code holding
// "…", "..." or "<" is a pattern (`cachegate users …`), not a command.
func shownCommands(t *testing.T) []shownCommand {
	t.Helper()
	files, err := filepath.Glob(filepath.Join("..", "..", "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	files = append([]string{filepath.Join("..", "..", "README.md")}, files...)
	var out []shownCommand
	seen := map[string]bool{}
	add := func(file, text string, at int, whole string) {
		text = strings.Join(strings.Fields(text), " ")
		if seen[text] {
			return
		}
		seen[text] = true
		rel, _ := filepath.Rel(filepath.Join("..", ".."), file)
		out = append(out, shownCommand{where: filepath.ToSlash(rel) + ":" + strconv.Itoa(strings.Count(whole[:at], "\n")+1), text: text})
	}
	for _, f := range files {
		raw, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		// Blank out the walk-through, keeping offsets for line numbers.
		text := walkthroughs.ReplaceAllStringFunc(string(raw), func(s string) string {
			return regexp.MustCompile(`[^\n]`).ReplaceAllString(s, " ")
		})
		for _, m := range shellFence.FindAllStringSubmatchIndex(text, -1) {
			body, start := text[m[4]:m[5]], m[4]
			lines := strings.Split(strings.ReplaceAll(body, "\\\n", "  "), "\n")
			offset := start
			for _, l := range lines {
				if c := strings.TrimSpace(l); c != "" && !strings.HasPrefix(c, "#") && invokes.MatchString(c) {
					add(f, c, offset, text)
				}
				offset += len(l) + 1
			}
		}
		prose := anyFence.ReplaceAllStringFunc(text, func(s string) string {
			return regexp.MustCompile(`[^\n]`).ReplaceAllString(s, " ")
		})
		for _, m := range inlineCode.FindAllStringSubmatchIndex(prose, -1) {
			c := strings.Join(strings.Fields(prose[m[2]:m[3]]), " ")
			if regexp.MustCompile(`^((\./)?cachegate |go run \./cmd/cachegate |bash test/)`).MatchString(c) &&
				!strings.ContainsAny(c, "…<") && !strings.Contains(c, "...") {
				add(f, c, m[0], prose)
			}
		}
	}
	return out
}

// notRun are the shown commands this test cannot run, each with why and
// what is checked instead.
var notRun = []struct {
	match, why string
}{
	{"bash test/run", "runs the whole suite (minutes, its own PostgreSQL) or go test with its arguments: only its syntax is checked (bash -n)"},
	{"bash test/bench/neighbour/run", "its --help builds the benchmark program and checks no argument: only its syntax is checked (bash -n)"},
	{"--src <main at", "a placeholder for a checkout of an older commit: only the script's syntax is checked (bash -n)"},
}

// sandboxPaths are paths of an operator's machine that a shown command
// names, and where the test puts them inside its sandbox.
var sandboxPaths = strings.NewReplacer("/etc/cachegate/key-secret", "key-secret", "/backups/", "backups/")

// placeholders turns a synopsis into a command line: optional parts are
// given, each placeholder has a value. NAME is an existing user, but the
// new one in users add; FILE is the sandbox's export for import, a new
// file otherwise.
func placeholders(cmd string) string {
	cmd = regexp.MustCompile(`\[([^\[\]]*)\]`).ReplaceAllString(cmd, "$1")
	cmd = regexp.MustCompile(`\s(\.\.\.|…)(\s|$)`).ReplaceAllString(cmd, " ")
	name, file := "docsuser", "docs-file.out"
	if strings.Contains(cmd, "users add") {
		name = "docsnew"
	}
	if strings.Contains(cmd, "cachegate import") {
		file = `"$DOCS_EXPORT"`
	}
	for word, value := range map[string]string{"NAME": name, "FILE": file, "KID": `"$DOCS_KID"`, "T": "login.failed", "DURATION": "1h", "N": "10"} {
		cmd = regexp.MustCompile(`(^|\s)`+word+`(\s|$)`).ReplaceAllString(cmd, "${1}"+strings.ReplaceAll(value, "$", "$$")+"${2}")
	}
	return sandboxPaths.Replace(strings.ReplaceAll(cmd, "go run ./cmd/cachegate", "cachegate"))
}

// dryRunLevel is a log level no command accepts: a command run with it
// parses its flags and operands, loads its whole configuration and stops
// there (status 2) before it touches a database.
const dryRunLevel = "dry-run-of-the-docs"

// TestEveryCommandTheDocsShowWorks runs every cachegate command README.md
// and docs/*.md show: for real in a sandbox (a copy of a small SQLite
// database with users, keys and an export) when it is self-contained, as
// a dry run (flags, operands and configuration checked) for serve, health and
// anything aimed at PostgreSQL; a script of test/ with its options and
// --help. So a shown command with a flag or operand the binary refuses,
// or a script that is not in the repository, fails here.
func TestEveryCommandTheDocsShowWorks(t *testing.T) {
	t.Parallel()
	commands := shownCommands(t)
	if len(commands) < 30 {
		t.Fatalf("only %d commands found in the docs: is the extraction still right?", len(commands))
	}
	groups := map[string]bool{}
	for _, l := range helpCommands(t) {
		if words := commandName(l); len(words) > 1 {
			groups[words[0]] = true
		}
	}
	template, kid := docsSandbox(t)
	for _, c := range commands {
		t.Run(c.where+" "+c.text, func(t *testing.T) {
			t.Parallel()
			for _, n := range notRun {
				if strings.Contains(c.text, n.match) {
					script := regexp.MustCompile(`test/\S+`).FindString(c.text)
					if out, err := exec.Command("bash", "-n", filepath.Join("..", "..", script)).CombinedOutput(); err != nil {
						t.Errorf("bash -n %s: %v\n%s", script, err, out)
					}
					return
				}
			}
			if strings.Contains(c.text, "bash test/") {
				checkScriptOptions(t, c.text)
				return
			}
			checkCachegateCommand(t, c.text, template, kid, groups)
		})
	}
}

// checkScriptOptions runs a shown `bash test/…` line from the
// repository's root with --help before its first "--" (or at its end):
// the script must exist and know every option before it.
func checkScriptOptions(t *testing.T, line string) {
	t.Helper()
	line, _, _ = strings.Cut(line, " #")
	words := strings.Fields(line)
	i := slices.Index(words, "bash")
	args := words[i+1:]
	if j := slices.Index(args, "--"); j >= 0 {
		args = slices.Insert(args, j, "--help")
	} else {
		args = append(args, "--help")
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", args...)
	cmd.Dir = filepath.Join("..", "..")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Errorf("bash %s: %v\n%s", strings.Join(args, " "), err, out)
	}
}

// checkCachegateCommand runs one shown cachegate command line with bash
// in a fresh copy of the sandbox.
func checkCachegateCommand(t *testing.T, line, template, kid string, groups map[string]bool) {
	t.Helper()
	cmdline := placeholders(line)
	sub := regexp.MustCompile(`cachegate\s+([a-z-]+)`).FindStringSubmatch(cmdline)
	if sub != nil && groups[sub[1]] && regexp.MustCompile(`cachegate\s+[a-z-]+\s*$`).MatchString(cmdline) {
		cmdline += " --help" // a group named alone, as prose does
	}
	// health asks a running server, and the sandbox runs none: its
	// flags and configuration are checked as serve's are.
	dry := strings.Contains(cmdline, "postgres://") || (sub != nil && (sub[1] == "serve" || sub[1] == "health"))
	dir := t.TempDir()
	importing := sub != nil && sub[1] == "import"
	if !importing { // import wants an empty database
		copyDir(t, template, dir)
	}
	if err := os.MkdirAll(filepath.Join(dir, "backups"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "key-secret"), []byte("a key-encryption secret of 44 bytes, or so.\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "bin")
	if err := os.MkdirAll(bin, 0o700); err != nil {
		t.Fatal(err)
	}
	for _, link := range []string{filepath.Join(bin, "cachegate"), filepath.Join(dir, "cachegate")} {
		if err := os.Symlink(binary, link); err != nil {
			t.Fatal(err)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), cliBound)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", "-euo", "pipefail", "-c", cmdline)
	cmd.Dir = dir
	cmd.Env = append(baseEnv(), fastHashing, "PATH="+bin+":"+os.Getenv("PATH"),
		"DOCS_KID="+kid, "DOCS_EXPORT="+filepath.Join(template, "export.jsonl"))
	if dry {
		cmd.Env = append(cmd.Env, "CACHEGATE_LOG_LEVEL="+dryRunLevel)
	}
	stdin := "a password of 27 bytes long\n"
	if importing {
		b, err := os.ReadFile(filepath.Join(template, "export.jsonl"))
		if err != nil {
			t.Fatal(err)
		}
		stdin = string(b)
	}
	cmd.Stdin = strings.NewReader(stdin)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	cmd.SysProcAttr = childAttr()
	err := cmd.Run()
	if ctx.Err() != nil {
		t.Fatalf("%s did not finish within %s", cmdline, cliBound)
	}
	if !dry {
		if err != nil {
			t.Errorf("%s: %v\nstderr: %s", cmdline, err, stderr.String())
		}
		return
	}
	// The dry run's one complaint must be its own log level: the command
	// line parsed and every other setting it gives is valid.
	problems := strings.Split(strings.TrimSpace(stderr.String()), "\n")
	if code := cmd.ProcessState.ExitCode(); code != 2 || len(problems) != 1 ||
		!strings.HasPrefix(problems[0], "cachegate: configuration: ") || !strings.Contains(problems[0], dryRunLevel) {
		t.Errorf("%s (dry run): status %d, stderr:\n%s\nwant 2 and only the dry run's own log level refused", cmdline, code, stderr.String())
	}
}

// docsSandbox makes the database the shown commands run on: the users
// docsuser and docsadmin (both admins, so either may be demoted), a key
// rotated ahead (so one is published, one signs) and an export of it all.
// It returns its directory and the id of a key to revoke.
func docsSandbox(t *testing.T) (dir, kid string) {
	t.Helper()
	dir = t.TempDir()
	for _, name := range []string{"docsuser", "docsadmin"} {
		if r := runCLI(t, dir, "a password of 27 bytes long\n", nil, "users", "add", "--username", name, "--admin", "--password-stdin"); r.Code != 0 {
			t.Fatalf("users add %s: %d %s", name, r.Code, r.Stderr)
		}
	}
	if r := runCLI(t, dir, "", nil, "keys", "rotate"); r.Code != 0 {
		t.Fatalf("keys rotate: %d %s", r.Code, r.Stderr)
	}
	r := runCLI(t, dir, "", nil, "keys", "list")
	for _, l := range strings.Split(r.Stdout, "\n")[1:] {
		// A key id starting with "-" needs "--" before it; the shown
		// command has none.
		if f := strings.Fields(l); len(f) > 0 && !strings.HasPrefix(f[0], "-") {
			kid = f[0]
			break
		}
	}
	if kid == "" {
		t.Fatalf("keys list shows no key to revoke:\n%s", r.Stdout)
	}
	if r := runCLI(t, dir, "", nil, "export", "--out", filepath.Join(dir, "export.jsonl")); r.Code != 0 {
		t.Fatalf("export: %d %s", r.Code, r.Stderr)
	}
	return dir, kid
}

// copyDir copies the regular files of from into to.
func copyDir(t *testing.T, from, to string) {
	t.Helper()
	entries, err := os.ReadDir(from)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if !e.Type().IsRegular() {
			continue
		}
		b, err := os.ReadFile(filepath.Join(from, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(to, e.Name()), b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
}
