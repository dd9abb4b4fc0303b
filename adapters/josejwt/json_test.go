package josejwt

import (
	"encoding/json"
	"reflect"
	"testing"

	josejson "github.com/go-jose/go-jose/v4/json"
)

// claimsSeeds are claims sets as this package writes them and near them.
var claimsSeeds = []string{
	`{"iss":"cachegate","sub":"0b5e7c1e-4d2a-4e8f-9a57-3f4c9e2d1a00","aud":"cachegate:refresh","exp":1767225600,"iat":1764633600,"jti":"9f1c","sid":"f3","auth_time":1764633600}`,
	`{"iss":"cachegate","sub":"u","aud":"cachegate","exp":1767225600,"iat":1764633600,"jti":"j","sid":"s","auth_time":1,"client_id":"c","roles":["admin"]}`,
	`{"iss":"i","sub":"u","aud":["a","b"],"exp":2,"iat":1}`,
	`{"sub":"u","sub":"v"}`, `{"Sub":"u"}`, `{"sub":"\u0075"}`, `{"exp":1.5}`, `{"exp":-1}`, `{"exp":01}`,
	`{"exp":0}`, `{"exp":1e3}`, `{"exp":1234567890123456}`, `{"aud":null}`, `{"fam":"f","nbf":3}`,
	`{}`, `{ }`, `{"iss":"x"} `, `{"iss":"x",}`, `{"iss":"é"}`, `[]`, `{"iss":"x"}}`, `{"iss":x}`, ``,
}

func TestDecodeClaimsReadsWhatGoJoseReads(t *testing.T) {
	t.Parallel()
	for _, s := range claimsSeeds {
		checkDecodeClaims(t, []byte(s))
	}
	var pc parsedClaims
	if !scanClaims([]byte(claimsSeeds[0]), &pc) || pc.Subject != "0b5e7c1e-4d2a-4e8f-9a57-3f4c9e2d1a00" ||
		pc.AuthTime == nil || int64(*pc.AuthTime) != 1764633600 || len(pc.Audience) != 1 {
		t.Fatalf("the scanner did not take a refresh token's claims as written: %+v", pc)
	}
	if scanClaims([]byte(claimsSeeds[1]), &parsedClaims{}) {
		t.Fatal("the scanner took a member it does not know (roles)")
	}
}

func FuzzDecodeClaims(f *testing.F) {
	for _, s := range claimsSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) { checkDecodeClaims(t, b) })
}

// checkDecodeClaims fails t unless decodeClaims reads b as go-jose does.
func checkDecodeClaims(t *testing.T, b []byte) {
	t.Helper()
	var got, want parsedClaims
	errGot, errWant := decodeClaims(b, &got), josejson.Unmarshal(b, &want)
	if (errGot == nil) != (errWant == nil) {
		t.Fatalf("%q: decodeClaims err %v, go-jose err %v", b, errGot, errWant)
	}
	if errWant == nil && !reflect.DeepEqual(got, want) {
		t.Fatalf("%q: decodeClaims read %+v, go-jose %+v", b, got, want)
	}
}

func BenchmarkDecodeClaims(b *testing.B) {
	p := []byte(claimsSeeds[0])
	b.Run("scanner", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			var pc parsedClaims
			_ = decodeClaims(p, &pc)
		}
	})
	b.Run("go-jose", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			var pc parsedClaims
			_ = josejson.Unmarshal(p, &pc)
		}
	})
}

// payloadSeeds are payloads as sign fills them, and strings encoding/json
// escapes.
var payloadSeeds = []payload{
	{Issuer: "cachegate", Subject: "0b5e7c1e-4d2a-4e8f-9a57-3f4c9e2d1a00", Audience: "cachegate:refresh", Expiry: 1767225600,
		IssuedAt: 1764633600, ID: "9f1c", Session: "f3", AuthTime: 1764633600},
	{Issuer: "https://auth.example/", Subject: "u", Audience: "api", Expiry: 2, IssuedAt: 1, ID: "j", Session: "s",
		ClientID: "client", Roles: []string{"admin"}},
	{Issuer: "<i>&\"q\"", Subject: "\u2028é\x00\xff", Audience: "a\tb", Expiry: -1, ID: "\\", Roles: []string{"a", "<b>"}},
	{},
}

func TestPayloadIsWhatJSONWrites(t *testing.T) {
	t.Parallel()
	for _, p := range payloadSeeds {
		checkPayload(t, p)
	}
}

func FuzzPayload(f *testing.F) {
	for _, p := range payloadSeeds {
		f.Add(p.Issuer, p.Subject, p.ID, p.Expiry, p.AuthTime, p.ClientID, len(p.Roles) > 0)
	}
	f.Fuzz(func(t *testing.T, iss, sub, id string, exp, authTime int64, client string, admin bool) {
		p := payload{Issuer: iss, Subject: sub, Audience: iss + sub, Expiry: exp, IssuedAt: -exp, ID: id, Session: id,
			AuthTime: authTime, ClientID: client}
		if admin {
			p.Roles = []string{client, sub}
		}
		checkPayload(t, p)
	})
}

// checkPayload fails t unless appendJSON writes p as encoding/json does.
func checkPayload(t *testing.T, p payload) {
	t.Helper()
	want, err := json.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	if got := p.appendJSON(nil); string(got) != string(want) {
		t.Fatalf("appendJSON wrote %s, encoding/json %s", got, want)
	}
}
