package web

import (
	"strings"
	"testing"
)

// probeBody is a request type of a test: adding a member to a body is one
// tagged field (decode.go).
type probeBody struct {
	Name  String   `json:"name"`
	Blob  Raw      `json:"blob"`
	TTL   Duration `json:"ttl"`
	Owner struct {
		Object
		ID   String `json:"id"`
		Kind String `json:"kind"`
	} `json:"owner"`
}

var probeTable = NewTable[probeBody]()

func TestABodyTableReadsTheMembersItsTypeTags(t *testing.T) {
	t.Parallel()
	b, err := probeTable.Decode([]byte(`{"name":"n","blob":[1,{"x":null}],"ttl":"1h","owner":{"id":"i","kind":"k"}}`))
	if err != nil {
		t.Fatal(err)
	}
	if b.Name.Value != "n" || string(b.Blob.Value) != `[1,{"x":null}]` || b.TTL.Value == nil || *b.TTL.Value != "1h" ||
		!b.Owner.Given || b.Owner.ID.Value != "i" || b.Owner.Kind.Value != "k" {
		t.Errorf("decoded %+v", b)
	}
	for body, want := range map[string]string{
		`{"Name":"n"}`:               "Name: is not a known field", // exact case only
		`{"name":"a","name":"b"}`:    "name: is given more than once",
		`{"owner":"x"}`:              "owner: must be an object with a string id, a string kind, not a string",
		`{"owner":{"id":"i","x":1}}`: "owner.x: is not a known field",
		`{"owner":{"kind":2}}`:       "owner.kind: must be a string, not a number",
		`{"ttl":5}`:                  `ttl: must be a duration string with a unit, such as "30s" or "1h", or null; a bare number is not accepted`,
		`{"blob":null}`:              "blob: must not be null",
	} {
		_, err := probeTable.Decode([]byte(body))
		if err == nil || !strings.HasSuffix(err.Error(), want) {
			t.Errorf("%s: %v, want a problem %q", body, err, want)
		}
	}
}

func TestABodyTableRefusesATypeItCannotRead(t *testing.T) {
	t.Parallel()
	for name, build := range map[string]func(){
		"an untagged field": func() {
			NewTable[struct{ Name String }]()
		},
		"a plain string field": func() {
			NewTable[struct {
				Name string `json:"name"`
			}]()
		},
		"a nested struct without Object": func() {
			NewTable[struct {
				O struct {
					ID String `json:"id"`
				} `json:"o"`
			}]()
		},
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s: the table was built", name)
				}
			}()
			build()
		}()
	}
}

func TestRenamedTableReadsTheNewNames(t *testing.T) {
	t.Parallel()
	tb, err := loginProbeTable.Renamed(map[string]string{"username": "email", "password": "secret"})
	if err != nil {
		t.Fatal(err)
	}
	v, err := tb.Decode([]byte(`{"email":"a@b","secret":"pw"}`))
	if err != nil || v.Username.Value != "a@b" || v.Password.Value != "pw" {
		t.Errorf("decoded %+v, %v", v, err)
	}
	if _, err := tb.Decode([]byte(`{"username":"a"}`)); err == nil || !strings.HasSuffix(err.Error(), "username: is not a known field") {
		t.Errorf("the old name: %v", err)
	}
	if _, err := loginProbeTable.Renamed(map[string]string{"username": "password"}); err == nil {
		t.Error("two members named alike were accepted")
	}
}

func TestBoolMembers(t *testing.T) {
	t.Parallel()
	type flags struct {
		On  Bool `json:"on"`
		Off Bool `json:"off"`
	}
	tb := NewTable[flags]()
	v, err := tb.Decode([]byte(`{"on":true,"off":false}`))
	if err != nil || !v.On.Value || v.Off.Value || !v.On.Given || !v.Off.Given || v.On.Ptr() == nil || *v.Off.Ptr() {
		t.Errorf("decoded %+v, %v", v, err)
	}
	if v, _ := tb.Decode([]byte(`{}`)); v.On.Ptr() != nil {
		t.Error("an absent member has a value")
	}
	for body, want := range map[string]string{
		`{"on":"yes"}`: "on: must be a boolean, not a string",
		`{"on":null}`:  "on: must be a boolean, not null",
		`{"on":1}`:     "on: must be a boolean, not a number",
		`{"on":tru}`:   "malformed JSON",
	} {
		if _, err := tb.Decode([]byte(body)); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want %q", body, err, want)
		}
	}
}

func TestASecretStringMayHoldNUL(t *testing.T) {
	t.Parallel()
	type body struct {
		Name     String `json:"name"`
		Password String `json:"password,secret"`
	}
	tb := NewTable[body]()
	v, err := tb.Decode([]byte(`{"password":"a\u0000b"}`))
	if err != nil || v.Password.Value != "a\x00b" {
		t.Errorf("a secret with NUL: %+v, %v", v, err)
	}
	if _, err := tb.Decode([]byte(`{"name":"a\u0000b"}`)); err == nil || !strings.HasSuffix(err.Error(), "name: must not contain the NUL character") {
		t.Errorf("a name with NUL: %v", err)
	}
}
