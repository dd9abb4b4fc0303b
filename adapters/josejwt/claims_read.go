package josejwt

import (
	josejson "github.com/go-jose/go-jose/v4/json"
	"github.com/go-jose/go-jose/v4/jwt"
)

// decodeClaims decodes a claims set into pc as go-jose's JSON decoder
// does. The payloads this package writes (payload: one object, no
// whitespace, plain ASCII strings, whole-second times) are read by a
// scanner of that form alone, which makes the unchecked read of a refresh
// token cost a fraction of the reflective decoder; anything else — an
// escape, a space, an array, a repeated or unknown member — goes to
// go-jose's decoder. Both give the same claims for what the scanner
// accepts (FuzzDecodeClaims).
func decodeClaims(b []byte, pc *parsedClaims) error {
	var fast parsedClaims
	if scanClaims(b, &fast) {
		*pc = fast
		return nil
	}
	return josejson.Unmarshal(b, pc)
}

// scanClaims reads b when it has the form payload is written in, and
// reports whether it did. Its strings share one copy of b, its dates one
// array.
func scanClaims(b []byte, pc *parsedClaims) bool {
	if len(b) < 2 || b[0] != '{' || b[len(b)-1] != '}' {
		return false
	}
	text, dates := string(b), make([]jwt.NumericDate, 0, 4)
	var seen uint16
	for i := 1; i < len(b)-1; {
		if i > 1 {
			if b[i] != ',' {
				return false
			}
			i++
		}
		k, j, ok := scanString(b, i)
		if !ok || j >= len(b) || b[j] != ':' {
			return false
		}
		i = j + 1
		bit, str, date := claimField(pc, b[k.from:k.to])
		if bit == 0 || seen&bit != 0 {
			return false
		}
		seen |= bit
		var v span
		if date != nil {
			dates = append(dates, 0) // each of the four at most once
			d := &dates[len(dates)-1]
			*d, i, ok = scanDate(b, i)
			*date = d
		} else if v, i, ok = scanString(b, i); str != nil {
			*str = text[v.from:v.to]
		} else { // aud: one string
			pc.Audience = jwt.Audience{text[v.from:v.to]}
		}
		if !ok {
			return false
		}
	}
	return true
}

// claimField names the member key of pc: its bit among the members seen,
// and where a string or a date goes (both nil for aud). Bit 0 is an
// unknown member.
func claimField(pc *parsedClaims, key []byte) (bit uint16, str *string, date **jwt.NumericDate) {
	switch string(key) {
	case "iss":
		return 1 << 0, &pc.Issuer, nil
	case "sub":
		return 1 << 1, &pc.Subject, nil
	case "aud":
		return 1 << 2, nil, nil
	case "exp":
		return 1 << 3, nil, &pc.Expiry
	case "nbf":
		return 1 << 4, nil, &pc.NotBefore
	case "iat":
		return 1 << 5, nil, &pc.IssuedAt
	case "jti":
		return 1 << 6, &pc.ID, nil
	case "sid":
		return 1 << 7, &pc.Session, nil
	case "fam":
		return 1 << 8, &pc.Family, nil
	case "auth_time":
		return 1 << 9, nil, &pc.AuthTime
	case "client_id":
		return 1 << 10, &pc.ClientID, nil
	}
	return 0, nil, nil
}

// span is where a string's text lies in the claims set.
type span struct{ from, to int }

// scanString reads a string of printable ASCII without escapes at b[i]
// and returns where its text lies, with the index after it.
func scanString(b []byte, i int) (span, int, bool) {
	if i >= len(b) || b[i] != '"' {
		return span{}, i, false
	}
	for j := i + 1; j < len(b); j++ {
		switch c := b[j]; {
		case c == '"':
			return span{i + 1, j}, j + 1, true
		case c < 0x20 || c > 0x7e || c == '\\':
			return span{}, j, false
		}
	}
	return span{}, len(b), false
}

// scanDate reads a date of 1 to 15 digits without a leading zero (exact
// as the float64 go-jose reads it through) at b[i].
func scanDate(b []byte, i int) (jwt.NumericDate, int, bool) {
	var n int64
	j := i
	for ; j < len(b) && b[j] >= '0' && b[j] <= '9'; j++ {
		n = n*10 + int64(b[j]-'0')
	}
	if j == i || j-i > 15 || (b[i] == '0' && j-i > 1) {
		return 0, j, false
	}
	return jwt.NumericDate(n), j, true
}
