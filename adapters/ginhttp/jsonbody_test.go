package ginhttp

import (
	"strings"
	"testing"
)

// probeBody is a request type of a test: adding a member to a body is one
// tagged field (jsonbody.go).
type probeBody struct {
	Name  jsonString   `json:"name"`
	Blob  jsonValue    `json:"blob"`
	TTL   jsonDuration `json:"ttl"`
	Owner struct {
		jsonObject
		ID   jsonString `json:"id"`
		Kind jsonString `json:"kind"`
	} `json:"owner"`
}

var probeTable = newBodyTable[probeBody]()

func TestABodyTableReadsTheMembersItsTypeTags(t *testing.T) {
	t.Parallel()
	b, err := probeTable.decode([]byte(`{"name":"n","blob":[1,{"x":null}],"ttl":"1h","owner":{"id":"i","kind":"k"}}`))
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
		_, err := probeTable.decode([]byte(body))
		if err == nil || !strings.HasSuffix(err.Error(), want) {
			t.Errorf("%s: %v, want a problem %q", body, err, want)
		}
	}
}

func TestABodyTableRefusesATypeItCannotRead(t *testing.T) {
	t.Parallel()
	for name, build := range map[string]func(){
		"an untagged field": func() {
			newBodyTable[struct{ Name jsonString }]()
		},
		"a plain string field": func() {
			newBodyTable[struct {
				Name string `json:"name"`
			}]()
		},
		"a nested struct without jsonObject": func() {
			newBodyTable[struct {
				O struct {
					ID jsonString `json:"id"`
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
