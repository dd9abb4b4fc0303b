package josejwt

import (
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
