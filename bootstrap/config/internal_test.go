package config

import (
	"reflect"
	"testing"
)

func TestSettingDefaultsAgreeWithDefault(t *testing.T) {
	t.Parallel()
	var c Config
	for _, s := range settings() {
		if s.def == "" {
			continue
		}
		if err := s.parse(&c, s.def); err != nil {
			t.Fatalf("%s: default %q does not parse: %v", s.flag, s.def, err)
		}
	}
	want := Default()
	c.Cache.Entities, c.Cache.Settings.Assignments = want.Cache.Entities, want.Cache.Settings.Assignments
	if !reflect.DeepEqual(c, want) {
		t.Fatalf("the table's defaults give\n%+v\nDefault() is\n%+v", c, want)
	}
}

func FuzzParseFile(f *testing.F) {
	for _, seed := range []string{
		"", "addr: :1\n", "cache:\n  entities: {a: {table: t}}\n  settings: {assignments: {x: {entityKey: a}}}\n",
		"a: &x {b: *x}\n", "auth: *y\n", "- 1\n", "{", "cache: {entities: [1]}\n", "? [a]\n: b\n",
		"<<: {addr: x}\n", "auth:\n  throttle:\n    window: 1h\n",
	} {
		f.Add([]byte(seed))
	}
	known := keys()
	f.Fuzz(func(t *testing.T, data []byte) {
		fv, errs := parseFile(data, known)
		var c Config = Default()
		errs = append(errs, applyCache(&c, fv)...)
		for _, err := range errs {
			if err == nil {
				t.Fatal("nil error collected")
			}
		}
	})
}
