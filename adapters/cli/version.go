package cli

import (
	"context"
	"fmt"
	"runtime/debug"
	"strings"
)

var versionCommand = Command{
	Name:     "version",
	Summary:  "print the version",
	NoConfig: true,
	Run: func(_ context.Context, env *Env) error {
		v := env.Version
		if v == "" {
			info, _ := debug.ReadBuildInfo()
			v = Version("", info)
		}
		fmt.Fprintln(env.Stdout, "cachegate", v)
		return nil
	},
}

// Version is the one-word version `cachegate version` prints
// (docs/operations.md, "Commands"). set is the version given at build
// time; when it is empty or "dev", the build information fills in: the
// main module's version and, when that does not already carry it, the VCS
// revision (12 digits) and "dirty": "devel+3f2a9c1b7d4e.dirty".
func Version(set string, info *debug.BuildInfo) string {
	if set != "" && set != "dev" {
		return set
	}
	v := "devel"
	if info == nil {
		return v
	}
	if mv := info.Main.Version; mv != "" && mv != "(devel)" {
		v = mv
	}
	var rev string
	var dirty bool
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			dirty = s.Value == "true"
		}
	}
	if len(rev) > 12 {
		rev = rev[:12]
	}
	if rev == "" || strings.Contains(v, rev) {
		return v
	}
	v += "+" + rev
	if dirty {
		v += ".dirty"
	}
	return v
}
