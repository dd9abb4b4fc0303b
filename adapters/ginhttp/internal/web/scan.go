package web

import (
	"strconv"
	"unicode/utf16"
	"unicode/utf8"
)

// scanner is a small strict JSON reader over a complete body. It validates
// as it goes (RFC 8259 grammar; the body's UTF-8 is checked once up front
// by the caller) and lets the decoders above it take string values
// unescaped and any other value as its raw bytes. It never allocates except
// for the strings it returns.
type scanner struct {
	b []byte
	i int
}

// MaxDepth bounds nesting so a hostile body cannot exhaust the stack.
const MaxDepth = 256

// syntaxError is a malformed body; off is the byte offset of the problem.
type syntaxError struct {
	off int
	msg string
}

func (e *syntaxError) Error() string {
	return e.msg + " at byte " + strconv.Itoa(e.off)
}

func (s *scanner) fail(msg string) error { return &syntaxError{off: s.i, msg: msg} }

func (s *scanner) skipSpace() {
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case ' ', '\t', '\n', '\r':
			s.i++
		default:
			return
		}
	}
}

// peek returns the next non-space byte without consuming it, or 0 at the
// end of the input.
func (s *scanner) peek() byte {
	s.skipSpace()
	if s.i >= len(s.b) {
		return 0
	}
	return s.b[s.i]
}

// expect consumes c after optional space.
func (s *scanner) expect(c byte, what string) error {
	if s.peek() != c {
		if s.i >= len(s.b) {
			return s.fail("unexpected end of JSON, want " + what)
		}
		return s.fail("invalid character, want " + what)
	}
	s.i++
	return nil
}

// members is object with each member's name as bytes: a slice of the
// input when the name has no escape (no allocation), a fresh copy
// unescaped otherwise. The scanner knows no member names; the request
// types do (decode.go).
func (s *scanner) members(field func(name []byte) error) error {
	if err := s.expect('{', "'{'"); err != nil {
		return err
	}
	if s.peek() == '}' {
		s.i++
		return nil
	}
	for {
		if s.peek() != '"' {
			return s.fail("invalid character, want a member name")
		}
		name, err := s.memberName()
		if err != nil {
			return err
		}
		if err := s.expect(':', "':'"); err != nil {
			return err
		}
		if err := field(name); err != nil {
			return err
		}
		switch s.peek() {
		case ',':
			s.i++
		case '}':
			s.i++
			return nil
		default:
			return s.fail("invalid character, want ',' or '}'")
		}
	}
}

// memberName reads a string whose opening quote is next, unescaped, as
// bytes: a slice of the input when it has no escape.
func (s *scanner) memberName() ([]byte, error) {
	raw, escaped, err := s.scanString()
	if err != nil || !escaped {
		return raw, err
	}
	return unescape(raw), nil
}

// str reads a string whose opening quote is next and returns it unescaped.
// Lone surrogates become U+FFFD, as with encoding/json.
func (s *scanner) str() (string, error) {
	s.skipSpace()
	raw, err := s.memberName()
	return string(raw), err
}

// scanString validates a string whose quote is at s.i and moves past it. It
// returns the string's bytes between the quotes, still escaped, and
// whether any escape appeared.
func (s *scanner) scanString() (raw []byte, escaped bool, err error) {
	s.i++ // opening quote
	start := s.i
	for s.i < len(s.b) {
		c := s.b[s.i]
		switch {
		case c == '"':
			s.i++
			return s.b[start : s.i-1], escaped, nil
		case c == '\\':
			escaped = true
			if s.i+1 >= len(s.b) {
				s.i++
				return nil, false, s.fail("unexpected end of JSON in a string")
			}
			switch s.b[s.i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				s.i += 2
			case 'u':
				if s.i+6 > len(s.b) || hex4(s.b[s.i+2:]) < 0 {
					return nil, false, s.fail(`invalid \u escape in a string`)
				}
				s.i += 6
			default:
				return nil, false, s.fail("invalid escape in a string")
			}
		case c < 0x20:
			return nil, false, s.fail("control character in a string")
		default:
			s.i++
		}
	}
	return nil, false, s.fail("unexpected end of JSON in a string")
}

func hexVal(c byte) rune {
	switch {
	case c >= '0' && c <= '9':
		return rune(c - '0')
	case c >= 'a' && c <= 'f':
		return rune(c - 'a' + 10)
	case c >= 'A' && c <= 'F':
		return rune(c - 'A' + 10)
	}
	return -1
}

// hex4 reads four hex digits; it is negative when one is not.
func hex4(b []byte) rune {
	return hexVal(b[0])<<12 | hexVal(b[1])<<8 | hexVal(b[2])<<4 | hexVal(b[3])
}

// unescape decodes the body of a string that scanString validated.
func unescape(raw []byte) []byte {
	out := make([]byte, 0, len(raw))
	for i := 0; i < len(raw); {
		c := raw[i]
		if c != '\\' {
			out = append(out, c)
			i++
			continue
		}
		switch raw[i+1] {
		case 'b':
			out = append(out, '\b')
		case 'f':
			out = append(out, '\f')
		case 'n':
			out = append(out, '\n')
		case 'r':
			out = append(out, '\r')
		case 't':
			out = append(out, '\t')
		case 'u':
			r := hex4(raw[i+2:])
			i += 6
			if utf16.IsSurrogate(r) {
				if i+6 <= len(raw) && raw[i] == '\\' && raw[i+1] == 'u' {
					if r2 := utf16.DecodeRune(r, hex4(raw[i+2:])); r2 != utf8.RuneError {
						out = utf8.AppendRune(out, r2)
						i += 6
						continue
					}
				}
				r = utf8.RuneError
			}
			out = utf8.AppendRune(out, r)
			continue
		default: // '"', '\\', '/'
			out = append(out, raw[i+1])
		}
		i += 2
	}
	return out
}

// value skips one value of any kind, validating it, and returns its raw
// bytes (without surrounding space).
func (s *scanner) value() ([]byte, error) {
	s.skipSpace()
	start := s.i
	if err := s.skip(0); err != nil {
		return nil, err
	}
	return s.b[start:s.i], nil
}

func (s *scanner) skip(depth int) error {
	switch c := s.peek(); c {
	case '"':
		_, _, err := s.scanString()
		return err
	case '{', '[':
		if depth >= MaxDepth {
			return s.fail("JSON nested too deeply")
		}
		if c == '{' {
			return s.members(func([]byte) error { return s.skip(depth + 1) })
		}
		s.i++
		if s.peek() == ']' {
			s.i++
			return nil
		}
		for {
			if err := s.skip(depth + 1); err != nil {
				return err
			}
			switch s.peek() {
			case ',':
				s.i++
			case ']':
				s.i++
				return nil
			default:
				return s.fail("invalid character, want ',' or ']'")
			}
		}
	case 't':
		return s.literal("true")
	case 'f':
		return s.literal("false")
	case 'n':
		return s.literal("null")
	case 0:
		return s.fail("unexpected end of JSON, want a value")
	default:
		return s.number()
	}
}

func (s *scanner) literal(lit string) error {
	if len(s.b)-s.i < len(lit) || string(s.b[s.i:s.i+len(lit)]) != lit {
		return s.fail("invalid literal")
	}
	s.i += len(lit)
	return nil
}

// number skips -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?.
func (s *scanner) number() error {
	b, i := s.b, s.i
	if i < len(b) && b[i] == '-' {
		i++
	}
	switch {
	case i < len(b) && b[i] == '0':
		i++
	case i < len(b) && b[i] >= '1' && b[i] <= '9':
		for i < len(b) && IsDigit(b[i]) {
			i++
		}
	default:
		s.i = i
		return s.fail("invalid character, want a value")
	}
	if i < len(b) && b[i] == '.' {
		i++
		if i >= len(b) || !IsDigit(b[i]) {
			s.i = i
			return s.fail("invalid number")
		}
		for i < len(b) && IsDigit(b[i]) {
			i++
		}
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		if i >= len(b) || !IsDigit(b[i]) {
			s.i = i
			return s.fail("invalid number")
		}
		for i < len(b) && IsDigit(b[i]) {
			i++
		}
	}
	s.i = i
	return nil
}

func IsDigit(c byte) bool { return c >= '0' && c <= '9' }

// KindName names the JSON type starting with c, for error messages.
func KindName(c byte) string {
	switch c {
	case '"':
		return "a string"
	case '{':
		return "an object"
	case '[':
		return "an array"
	case 't', 'f':
		return "a boolean"
	case 'n':
		return "null"
	}
	return "a number"
}
