package config

import (
	"flag"

	"github.com/cachegate/cachegate/adapters/cli"
)

// Flags is the handle RegisterGroups returns: the flag values Load reads back.
type Flags struct {
	values map[string]*flagValue
}

// flagValue keeps a flag's text; Load parses it, so every problem is
// reported together and in the same words as for the environment and YAML.
type flagValue struct {
	text   string
	isBool bool
}

func (v *flagValue) String() string {
	if v == nil {
		return ""
	}
	return v.text
}

func (v *flagValue) Set(s string) error { v.text = s; return nil }

// IsBoolFlag lets a boolean flag be given bare (--enable-guards).
func (v *flagValue) IsBoolFlag() bool { return v.isBool }

// RegisterGroups defines the flags of the settings of groups (cli.UsesAll:
// every setting), and --config, on fs. The usage text names each flag's
// environment variable and YAML key; Load still reads the other settings
// from those. Call it once per flag set, before fs.Parse.
func RegisterGroups(fs *flag.FlagSet, groups cli.Uses) *Flags {
	f := &Flags{values: map[string]*flagValue{}}
	define := func(name, def, usage string, isBool bool) {
		v := &flagValue{text: def, isBool: isBool}
		f.values[name] = v
		fs.Var(v, name, usage)
	}
	define(configFlag, "", "YAML configuration `file` (default none; env "+envName(configFlag)+")", false)
	for _, s := range settings(new(Config)) {
		if s.noFlag || s.group != 0 && s.group&groups == 0 {
			continue
		}
		arg := ""
		if s.arg != "" {
			arg = "`" + s.arg + "`; "
		}
		define(s.flag, s.def, s.usage+" ("+arg+"env "+s.env()+", YAML "+s.key+")", s.isBool)
	}
	return f
}

// set returns the text of every flag of f that was given on fs's command
// line, by name.
func (f *Flags) set(fs *flag.FlagSet) map[string]string {
	out := map[string]string{}
	if f == nil || fs == nil {
		return out
	}
	fs.Visit(func(fl *flag.Flag) {
		if v, ok := f.values[fl.Name]; ok && fl.Value == v {
			out[fl.Name] = v.text
		}
	})
	return out
}
