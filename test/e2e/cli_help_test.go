package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// helpCommands returns the command lines `cachegate --help` lists, each as
// "cachegate NAME SYNOPSIS" without the summary.
func helpCommands(t *testing.T) []string {
	t.Helper()
	r := runCLI(t, t.TempDir(), "", nil, "--help")
	if r.Code != 0 || r.Stderr != "" {
		t.Fatalf("cachegate --help: status %d, stderr %q; want 0 and nothing on stderr", r.Code, r.Stderr)
	}
	var lines []string
	for _, l := range strings.Split(r.Stdout, "\n") {
		if strings.HasPrefix(l, "  cachegate ") {
			lines = append(lines, regexp.MustCompile(`\s{2,}`).Split(strings.TrimSpace(l), 2)[0])
		}
	}
	if len(lines) == 0 {
		t.Fatalf("cachegate --help lists no command:\n%s", r.Stdout)
	}
	return lines
}

// commandName is the words of a help line before its first operand or flag.
func commandName(line string) []string {
	var words []string
	for _, w := range strings.Fields(strings.TrimPrefix(line, "cachegate ")) {
		if strings.HasPrefix(w, "-") || strings.HasPrefix(w, "[") || strings.ToUpper(w) == w {
			break
		}
		words = append(words, w)
	}
	return words
}

func TestEveryCommandAnswersHelpWithItsUsageAndStatus0(t *testing.T) {
	t.Parallel()
	singleDash := regexp.MustCompile(`(?m)^\s+-[A-Za-z]`)
	groups := map[string]bool{}
	for _, line := range helpCommands(t) {
		name := commandName(line)
		if len(name) > 1 {
			groups[name[0]] = true
		}
		for _, flag := range []string{"-h", "--help"} {
			args := append(slices.Clone(name), flag)
			r := runCLI(t, t.TempDir(), "", nil, args...)
			want := "usage: " + line
			if r.Code != 0 || !strings.HasPrefix(r.Stdout, want) || r.Stderr != "" {
				t.Errorf("cachegate %s: status %d, stdout %q, stderr %q; want 0 and usage starting %q",
					strings.Join(args, " "), r.Code, r.Stdout, r.Stderr, want)
			}
			if singleDash.MatchString(r.Stdout) {
				t.Errorf("cachegate %s writes a flag with a single dash:\n%s", strings.Join(args, " "), r.Stdout)
			}
			if name[0] != "version" && !strings.Contains(r.Stdout, "\n  --database ") {
				t.Errorf("cachegate %s does not list the configuration flags (--database):\n%s", strings.Join(args, " "), r.Stdout)
			}
		}
	}
	if !groups["users"] {
		t.Fatalf("no users subcommand in cachegate --help")
	}
	for g := range groups {
		for _, flag := range []string{"-h", "--help"} {
			r := runCLI(t, t.TempDir(), "", nil, g, flag)
			if r.Code != 0 || !strings.HasPrefix(r.Stdout, "usage: cachegate "+g+" <command>") ||
				!strings.Contains(r.Stdout, "cachegate "+g+" ") || r.Stderr != "" {
				t.Errorf("cachegate %s %s: status %d, stdout %q, stderr %q; want 0 and the list of its subcommands",
					g, flag, r.Code, r.Stdout, r.Stderr)
			}
		}
	}
	for _, args := range [][]string{{"help"}, {"-h"}, {"help", "users"}, {"help", "users", "add"}} {
		if r := runCLI(t, t.TempDir(), "", nil, args...); r.Code != 0 || !strings.HasPrefix(r.Stdout, "usage: cachegate") {
			t.Errorf("cachegate %s: status %d, stdout %q; want 0 and usage", strings.Join(args, " "), r.Code, r.Stdout)
		}
	}
}

func TestBadCommandLinesExitWithStatus2AndSayWhy(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		args []string
		say  string
	}{
		{nil, "usage: cachegate <command>"},
		{[]string{"frobnicate"}, `unknown command "frobnicate"`},
		{[]string{"users"}, "users needs a command"},
		{[]string{"users", "frobnicate"}, `unknown command "users frobnicate"`},
		{[]string{"keys"}, "keys needs a command"},
		{[]string{"help", "frobnicate"}, `unknown command "frobnicate"`},
		{[]string{"serve", "--no-such-flag"}, "--no-such-flag"},
		{[]string{"serve", "extra"}, "takes no operand"},
		{[]string{"users", "disable"}, "users disable NAME"},
		{[]string{"users", "enable", "a", "b"}, "users enable NAME"},
		{[]string{"users", "add", "--username", "x"}, "--password-stdin"},
		{[]string{"users", "set-password", "x"}, "--password-stdin"},
		{[]string{"migrate", "--log-level", "loud"}, "log-level"},
	} {
		r := runCLI(t, t.TempDir(), "", nil, tc.args...)
		if r.Code != 2 || r.Stdout != "" || !strings.Contains(r.Stderr, tc.say) {
			t.Errorf("cachegate %s: status %d, stdout %q, stderr %q; want 2, nothing on stdout and %q on stderr",
				strings.Join(tc.args, " "), r.Code, r.Stdout, r.Stderr, tc.say)
		}
	}
}

// A failure once the configuration is loaded follows --log-format: with
// json it is one JSON object on standard error.
func TestAFatalStartUpErrorFollowsTheLogFormat(t *testing.T) {
	t.Parallel()
	db := "sqlite:" + filepath.Join(t.TempDir(), "missing", "dir", "x.db")
	r := runCLI(t, t.TempDir(), "", nil, "serve", "--addr", "127.0.0.1:0", "--database", db, "--log-format", "json")
	lines := strings.Split(strings.TrimRight(r.Stderr, "\n"), "\n")
	last := lines[len(lines)-1]
	if r.Code != 1 || !regexp.MustCompile(`^\{"time":"[^"]+","level":"ERROR","msg":"[^"]+","error":"[^"]*database`).MatchString(last) {
		t.Errorf("status %d, last line %q; want 1 and a JSON error object naming the database", r.Code, last)
	}
	for _, l := range lines {
		if !strings.HasPrefix(l, "{") {
			t.Errorf("a line that is not JSON with --log-format json: %q", l)
		}
	}
	r = runCLI(t, t.TempDir(), "", nil, "serve", "--addr", "127.0.0.1:0", "--database", db)
	if !strings.HasPrefix(r.Stderr[strings.LastIndex(strings.TrimRight(r.Stderr, "\n"), "\n")+1:], "cachegate: database") || r.Code != 1 {
		t.Errorf("text logs: status %d, stderr %q; want 1 and a last line \"cachegate: database…\"", r.Code, r.Stderr)
	}
}

// The README's command list is the real one: every line of its Commands
// block is a line of `cachegate --help`, and the other way round.
func TestTheREADMECommandListMatchesTheHelp(t *testing.T) {
	t.Parallel()
	readme, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	block := regexp.MustCompile("(?s)\n## Commands\n+```sh\n(.*?)```").FindSubmatch(readme)
	if block == nil {
		t.Fatal("README.md has no ```sh block right under \"## Commands\"")
	}
	var documented []string
	for _, l := range strings.Split(string(block[1]), "\n") {
		if l, _, _ = strings.Cut(l, "#"); strings.TrimSpace(l) != "" {
			documented = append(documented, strings.Join(strings.Fields(l), " "))
		}
	}
	help := helpCommands(t)
	for _, l := range documented {
		if !slices.Contains(help, l) {
			t.Errorf("README lists %q, which cachegate --help does not", l)
		}
	}
	for _, l := range help {
		if !slices.Contains(documented, l) {
			t.Errorf("cachegate --help lists %q, which README's Commands block does not", l)
		}
	}
}

// The binary is built with the nomsgpack tag, as the README says, so Gin's
// MessagePack codec (9 MB) is not in it (docs/binary-size.md).
func TestTheBinaryLinksNoMessagePackCodec(t *testing.T) {
	t.Parallel()
	out, err := exec.Command("go", "version", "-m", binary).CombinedOutput()
	if err != nil {
		t.Fatalf("go version -m: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "github.com/gin-gonic/gin") {
		t.Fatalf("go version -m does not list gin; cannot judge:\n%s", out)
	}
	if strings.Contains(string(out), "github.com/ugorji/go/codec") {
		t.Errorf("the binary links github.com/ugorji/go/codec: build it with -tags nomsgpack")
	}
}

// Every flag of `serve --help` says its default: "(default X)" from the
// flag itself, or "default none" in its text when it has none.
func TestServeHelpShowsEveryFlagsDefault(t *testing.T) {
	t.Parallel()
	r := runCLI(t, t.TempDir(), "", nil, "serve", "--help")
	if r.Code != 0 {
		t.Fatalf("serve --help: status %d, stderr %q", r.Code, r.Stderr)
	}
	blocks := regexp.MustCompile(`(?m)^  --(\S+).*\n      (.*)$`).FindAllStringSubmatch(r.Stdout, -1)
	if len(blocks) < 50 {
		t.Fatalf("serve --help lists %d flags; want at least 50:\n%s", len(blocks), r.Stdout)
	}
	for _, b := range blocks {
		if !strings.Contains(b[2], "(default ") {
			t.Errorf("--%s does not say its default: %q", b[1], b[2])
		}
	}
	for _, want := range []string{"(default 127.0.0.1:8080)", "(default sqlite:cachegate.db)", "(default 15m)", "(default 64MiB)"} {
		if !strings.Contains(r.Stdout, want) {
			t.Errorf("serve --help lacks %q", want)
		}
	}
}

// The README's quick start states the size of a release build; the
// binary the tests build is one, and the figure stays within 10 % of it.
func TestTheREADMEStatesTheBinarySize(t *testing.T) {
	t.Parallel()
	readme, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile("`-tags nomsgpack,grpcnotrace` \\(a ([0-9]+) MB binary").FindSubmatch(readme)
	if m == nil {
		t.Fatal("README.md no longer says \"`-tags nomsgpack,grpcnotrace` (a N MB binary\"; update this test")
	}
	stated, _ := strconv.ParseFloat(string(m[1]), 64)
	info, err := os.Stat(binary)
	if err != nil {
		t.Fatal(err)
	}
	if got := float64(info.Size()) / 1e6; got < stated*0.9 || got > stated*1.1 {
		t.Errorf("README.md says a %s MB binary; the release build is %.1f MB: measure again and update README.md and docs/binary-size.md", m[1], got)
	}
}
