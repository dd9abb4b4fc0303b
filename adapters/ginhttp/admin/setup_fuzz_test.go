package admin

import (
	"bytes"
	"encoding/json"
	"errors"
	"testing"
	"unicode/utf8"

	"github.com/cachegate/cachegate/adapters/ginhttp/internal/web"
	"github.com/cachegate/cachegate/domain"
)

// FuzzDecodeSetupBody holds the set-up body's decoding (the table
// decoder of jsonbody.go on setupBody) to encoding/json: a body it
// accepts is one JSON object that encoding/json reads, strictly, to the
// same strings; a body it refuses is a validation error naming a field.
func FuzzDecodeSetupBody(f *testing.F) {
	for _, s := range []string{`{"token":"t","username":"root","password":"a password"}`, `{}`, `{"token":null}`,
		`{"token":1}`, `{"admin":true}`, `[]`, `{"username":"\u0000"}`, `{"token":"a","token":"b"}`, `{"password":"\ud83d\ude00"}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		dto, err := setupBodyTable.Decode(b)
		if err != nil {
			var de *domain.Error
			if !errors.As(err, &de) || de.Kind != domain.KindInvalid || len(de.Details) == 0 {
				t.Fatalf("rejection is not a validation error with details: %#v", err)
			}
			return
		}
		if !json.Valid(b) || !utf8.Valid(b) {
			t.Fatalf("accepted a body encoding/json rejects")
		}
		var std struct{ Token, Username, Password *string }
		dec := json.NewDecoder(bytes.NewReader(b))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&std); err != nil {
			t.Fatalf("accepted a body encoding/json cannot read strictly: %v", err)
		}
		for _, m := range []struct {
			got web.String
			std *string
		}{{dto.Token, std.Token}, {dto.Username, std.Username}, {dto.Password, std.Password}} {
			if m.got.Given && (m.std == nil || *m.std != m.got.Value) {
				t.Fatal("a member differs from encoding/json's reading")
			}
		}
	})
}
