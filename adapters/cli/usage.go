package cli

import (
	"flag"
	"fmt"
	"io"
	"log/slog"
	"reflect"
	"strings"
	"text/tabwriter"
	"time"
)

// stopTimeout bounds stopping the core after an administrative command.
const stopTimeout = 30 * time.Second

// line is the command's name and synopsis: "users disable NAME".
func (c *CLI) line(cmd *Command) string {
	if cmd.Synopsis == "" {
		return cmd.Name
	}
	return cmd.Name + " " + cmd.Synopsis
}

// usage is the list of commands, of every command when group is empty,
// else of the group's subcommands.
func (c *CLI) usage(group string) string {
	var b strings.Builder
	if group == "" {
		b.WriteString("usage: cachegate <command> [flags]\n\ncommands:\n")
	} else {
		fmt.Fprintf(&b, "usage: cachegate %s <command> [flags]\n\ncommands:\n", group)
	}
	w := tabwriter.NewWriter(&b, 0, 4, 3, ' ', 0)
	for i := range c.Commands {
		cmd := &c.Commands[i]
		if group != "" && !strings.HasPrefix(cmd.Name, group+" ") {
			continue
		}
		fmt.Fprintf(w, "  cachegate %s\t%s\n", c.line(cmd), cmd.Summary)
	}
	w.Flush()
	if group == "" {
		b.WriteString("\nRun \"cachegate <command> --help\" for a command's flags, \"cachegate --help\" for this list.\n")
	} else {
		fmt.Fprintf(&b, "\nRun \"cachegate %s <command> --help\" for a command's flags.\n", group)
	}
	return b.String()
}

// commandUsage is one command's usage: its line, what it does, its own
// flags and the configuration flags, written --double-dash.
func (c *CLI) commandUsage(cmd *Command, p parsed) string {
	var own, config []*flag.Flag
	p.fs.VisitAll(func(f *flag.Flag) {
		if p.config[f.Name] {
			config = append(config, f)
		} else {
			own = append(own, f)
		}
	})
	var b strings.Builder
	more := ""
	if len(own)+len(config) > 0 {
		more = " [flags]"
	}
	fmt.Fprintf(&b, "usage: cachegate %s%s\n\n%s\n", c.line(cmd), more, upperFirst(cmd.Summary))
	if len(own) > 0 {
		b.WriteString("\nflags:\n")
		writeFlags(&b, own)
	}
	if len(config) > 0 {
		b.WriteString("\nconfiguration flags (each also a CACHEGATE_* environment variable and a YAML key):\n")
		writeFlags(&b, config)
	}
	return b.String()
}

// writeFlags writes flags, in the order given, as flag.PrintDefaults
// does but with "--": a line each, then the indented usage and default.
func writeFlags(w io.Writer, flags []*flag.Flag) {
	for _, f := range flags {
		arg, usage := flag.UnquoteUsage(f)
		if isBool(f) {
			arg = ""
		}
		line := "  --" + f.Name
		if arg != "" {
			line += " " + arg
		}
		if !isZeroValue(f) {
			usage += " (default " + f.DefValue + ")"
		}
		fmt.Fprintf(w, "%s\n      %s\n", line, usage)
	}
}

// isZeroValue reports whether f's default is its type's zero value, which
// flag.PrintDefaults leaves unsaid too: "", false, 0.
func isZeroValue(f *flag.Flag) bool {
	t := reflect.TypeOf(f.Value)
	var z reflect.Value
	if t.Kind() == reflect.Pointer {
		z = reflect.New(t.Elem())
	} else {
		z = reflect.Zero(t)
	}
	v, ok := z.Interface().(flag.Value)
	return ok && f.DefValue == v.String()
}

func isBool(f *flag.Flag) bool {
	b, ok := f.Value.(interface{ IsBoolFlag() bool })
	return ok && b.IsBoolFlag()
}

func upperFirst(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:] + "."
}

// printError writes a fatal error: "cachegate: …" as text, or one slog
// JSON object of level ERROR when the configuration asks for JSON logs.
func printError(w io.Writer, asJSON bool, msg string) {
	if !asJSON {
		fmt.Fprintf(w, "cachegate: %s\n", msg)
		return
	}
	slog.New(slog.NewJSONHandler(w, nil)).Error("cachegate failed", "error", msg)
}
