package domain

import (
	"errors"
	"math"
	"strconv"
	"strings"
	"time"
)

// MaxExpiresIn is the longest expiry an entry may be given.
const MaxExpiresIn = 100 * Year

// Day, Week and Year are the calendar-free units of the duration grammar:
// a day is 24 hours, a week 7 days and a year 365.25 days, as in the
// NestJS "ms" package the original service used.
const (
	Day  = 24 * time.Hour
	Week = 7 * Day
	Year = Day*365 + Day/4
)

var unitTable = map[string]time.Duration{
	"ms": time.Millisecond, "msec": time.Millisecond, "msecs": time.Millisecond,
	"millisecond": time.Millisecond, "milliseconds": time.Millisecond,
	"s": time.Second, "sec": time.Second, "secs": time.Second, "second": time.Second, "seconds": time.Second,
	"m": time.Minute, "min": time.Minute, "mins": time.Minute, "minute": time.Minute, "minutes": time.Minute,
	"h": time.Hour, "hr": time.Hour, "hrs": time.Hour, "hour": time.Hour, "hours": time.Hour,
	"d": Day, "day": Day, "days": Day,
	"w": Week, "week": Week, "weeks": Week,
	"y": Year, "yr": Year, "yrs": Year, "year": Year, "years": Year,
}

// maxDurationInput bounds the text ParseDuration looks at, so a huge
// string costs nothing.
const maxDurationInput = 64

// ErrBadDuration is what every ParseDuration error is (errors.Is): text
// that is not a duration of the grammar. The error's own message says
// what is wrong, for a client to act on.
var ErrBadDuration = errors.New(`must be a positive duration such as "30s", "15m", "1.5h", "7d" or "1h30m"`)

// durationError is an ErrBadDuration with a more precise message.
type durationError string

func (e durationError) Error() string        { return string(e) }
func (e durationError) Is(target error) bool { return target == ErrBadDuration }

var (
	errBareNumber   = durationError(`needs a unit, such as "30s", "15m" or "2d": a bare number is not accepted`)
	errOverMax      = durationError("must be at most 100 years")
	errNotPositive  = durationError("must be more than zero")
	errNegativeSign = durationError("must be positive, without a sign")
)

// ParseDuration parses an expiry such as "1h", "2 days", "1.5h" or "1h30m":
// one or more terms, each a number (integer or decimal) followed by a unit,
// with optional spaces, case-insensitive. A bare number is rejected (the
// NestJS modules read it as milliseconds, which surprises everyone), and so
// is zero, a negative value and anything above MaxExpiresIn.
func ParseDuration(s string) (time.Duration, error) {
	if len(s) > maxDurationInput {
		return 0, ErrBadDuration
	}
	// Only ASCII white space is trimmed: the OpenAPI document's pattern
	// for expiresIn can say exactly that (adapters/ginhttp/openapi.json).
	s = strings.ToLower(strings.Trim(s, " \t\n\r"))
	if s == "" {
		return 0, ErrBadDuration
	}
	var total float64
	for s != "" {
		i := 0
		for i < len(s) && (s[i] >= '0' && s[i] <= '9' || s[i] == '.') {
			i++
		}
		num := s[:i]
		if num == "" && (s[0] == '-' || s[0] == '+') {
			return 0, errNegativeSign
		}
		if num == "" || num == "." || strings.Count(num, ".") > 1 || num[len(num)-1] == '.' {
			return 0, ErrBadDuration
		}
		s = strings.TrimLeft(s[i:], " ")
		j := 0
		for j < len(s) && s[j] >= 'a' && s[j] <= 'z' {
			j++
		}
		unit, ok := unitTable[s[:j]]
		if !ok {
			if j == 0 && s == "" && total == 0 {
				return 0, errBareNumber
			}
			return 0, ErrBadDuration
		}
		s = strings.TrimLeft(s[j:], " ")
		v, err := strconv.ParseFloat(num, 64)
		if err != nil {
			return 0, ErrBadDuration
		}
		total += v * float64(unit)
		if total > float64(MaxExpiresIn) || math.IsNaN(total) {
			return 0, errOverMax
		}
	}
	if total <= 0 {
		return 0, errNotPositive
	}
	// A positive total under half a nanosecond is the shortest duration,
	// not zero: the text is positive, as the OpenAPI document's pattern
	// for expiresIn says (adapters/ginhttp/openapi.json).
	d := max(time.Duration(math.Round(total)), 1)
	return d, nil
}
