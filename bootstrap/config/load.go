package config

import (
	"cmp"
	"errors"
	"flag"
	"fmt"
)

// The layers a value can come from, lowest precedence first.
const (
	fromDefault = iota
	fromFile
	fromEnv
	fromFlag
)

// origin is the winning text of one setting and where it came from.
type origin struct {
	layer int
	name  string // the setting's name in that layer, for messages
	text  string
	line  int // in the YAML file
}

// Load builds the configuration from the flags of fs that were set (f is
// what RegisterGroups returned for fs), the environment as getenv reads it, and
// the YAML file named by --config or CACHEGATE_CONFIG, in that order of
// precedence over the defaults. fs and f may be nil (no flags), and
// getenv may be nil (an empty environment). It reports every problem at
// once, joined, and then returns the zero Config: never a half-valid one.
// Of the HS256 secret and its file, the one from the higher layer wins;
// both in the same layer is an error.
func Load(fs *flag.FlagSet, f *Flags, getenv func(string) string) (Config, error) {
	if getenv == nil {
		getenv = func(string) string { return "" }
	}
	flags := f.set(fs)
	c := Default()
	var errs []error

	var fv file
	c.ConfigFile = cmp.Or(flags[configFlag], getenv(envName(configFlag)))
	if c.ConfigFile != "" {
		var ferrs []error
		fv, ferrs = readFile(c.ConfigFile)
		errs = append(errs, ferrs...)
	}

	table := settings(&c)
	won := make([]origin, len(table))
	byFlag := map[string]int{}
	for i, s := range table {
		byFlag[s.flag] = i
		if v, ok := flags[s.flag]; ok && !s.noFlag {
			won[i] = origin{layer: fromFlag, name: s.flag, text: v}
		} else if v := getenv(s.env()); v != "" {
			won[i] = origin{layer: fromEnv, name: s.env(), text: v}
		} else if l := fv.leaves[s.key]; l.set {
			won[i] = origin{layer: fromFile, name: s.key, text: l.text, line: l.line}
		}
	}
	sec, sfile := &won[byFlag[secretFlag]], &won[byFlag[secretFileFlag]]
	switch {
	case sec.layer == fromDefault || sfile.layer == fromDefault:
	case sec.layer == sfile.layer:
		errs = append(errs, fmt.Errorf("%s: set only one of %s and %s", sec.name, sec.name, sfile.name))
		*sec, *sfile = origin{}, origin{}
	case sec.layer > sfile.layer:
		*sfile = origin{}
	default:
		*sec = origin{}
	}

	for i, s := range table {
		o := won[i]
		if o.layer == fromDefault {
			continue
		}
		err := s.parse(o.text)
		if err == nil && s.check != nil {
			err = s.check()
		}
		if err != nil {
			errs = append(errs, o.wrap(err))
		}
	}
	errs = append(errs, applyCache(&c, fv)...)
	errs = append(errs, c.crossCheck()...)
	if len(errs) > 0 {
		return Config{}, errors.Join(errs...)
	}
	return c, nil
}

// wrap names the setting, and the file line for a YAML value.
func (o origin) wrap(err error) error {
	if o.layer == fromFile {
		return fmt.Errorf("%s: %w (config line %d)", o.name, err, o.line)
	}
	return fmt.Errorf("%s: %w", o.name, err)
}

// Validate checks a Config built in code as Load checks what it loads,
// and reports every problem, each naming the setting by its YAML path.
func (c Config) Validate() error {
	var errs []error
	for _, s := range settings(&c) {
		// The secret file's check is the secret's; report it once.
		if s.check == nil || s.flag == secretFileFlag {
			continue
		}
		if err := s.check(); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", s.key, err))
		}
	}
	errs = append(errs, c.checkCache()...)
	errs = append(errs, c.crossCheck()...)
	return errors.Join(errs...)
}

// crossCheck checks the rules between scalar settings.
func (c Config) crossCheck() []error {
	var errs []error
	if c.MetricsAddr != "" && c.MetricsAddr == c.Addr {
		errs = append(errs, fmt.Errorf("metricsAddr: %q must differ from addr (leave it empty to serve /metrics on addr)", c.MetricsAddr))
	}
	if c.Auth.UsernameField == c.Auth.PasswordField {
		errs = append(errs, fmt.Errorf("auth.passwordField: %q must differ from auth.usernameField", c.Auth.PasswordField))
	}
	if c.Limits.DataBytes > c.Limits.BodyBytes {
		errs = append(errs, fmt.Errorf("limits.dataBytes: %d must not exceed limits.bodyBytes (%d)", c.Limits.DataBytes, c.Limits.BodyBytes))
	}
	if c.Limits.ListDefault > c.Limits.ListMax {
		errs = append(errs, fmt.Errorf("limits.listDefault: %d must not exceed limits.listMax (%d)", c.Limits.ListDefault, c.Limits.ListMax))
	}
	return errs
}
