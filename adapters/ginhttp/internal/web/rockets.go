package web

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/cachegate/cachegate/domain"
)

// ErrorFormat chooses how 400 validation errors are rendered (README.md,
// "Coming from Rockets").
type ErrorFormat string

const (
	// ErrorFormatCachegate is the default envelope: message a string,
	// the field problems in details.
	ErrorFormatCachegate ErrorFormat = "cachegate"
	// ErrorFormatRockets renders a 400 VALIDATION_FAILED the way Rockets
	// clients parse it: message an array of {property, constraints:
	// {<rule>: <text>}} (NestJS class-validator's shape). Every other
	// error keeps the default envelope.
	ErrorFormatRockets ErrorFormat = "rockets"
)

// ParseErrorFormat accepts "", cachegate and rockets.
func ParseErrorFormat(f ErrorFormat) (ErrorFormat, error) {
	switch f {
	case "", ErrorFormatCachegate:
		return ErrorFormatCachegate, nil
	case ErrorFormatRockets:
		return ErrorFormatRockets, nil
	}
	return "", fmt.Errorf("ginhttp: ErrorFormat %q: want %q or %q", f, ErrorFormatCachegate, ErrorFormatRockets)
}

// rocketsRules maps the start of a field problem's text to the
// class-validator rule a Rockets client reads as the constraint's name;
// the first match wins. A problem matching none is "isValid" (README.md,
// "Coming from Rockets").
var rocketsRules = []struct{ prefix, rule string }{
	{"is not a known field", "whitelistValidation"},
	{"unknown field", "whitelistValidation"},
	{"is required", "isNotEmpty"},
	{"must not be empty", "isNotEmpty"},
	{"must be a non-empty", "isNotEmpty"},
	{"must not be null", "isDefined"},
	{"must be a string", "isString"},
	{"must be a UUID", "isUuid"},
	{"must be at most", "maxLength"},
	{"must be at least", "minLength"},
	{"must be an integer", "isInt"},
	{"must be one of", "isIn"},
	{"must be a JSON object", "isObject"},
	{"must be an object", "isObject"},
	{"must be a JSON value", "isJSON"},
	{"is not valid JSON", "isJSON"},
	{"must be valid UTF-8", "matches"},
	{"must be UTF-8", "matches"},
	{"must not contain the NUL", "matches"},
	{"is larger than the limit", "maxLength"},
}

// rocketsRule names the rule field problem msg breaks.
func rocketsRule(msg string) string {
	for _, r := range rocketsRules {
		if strings.HasPrefix(msg, r.prefix) {
			return r.rule
		}
	}
	return "isValid"
}

// appendRocketsValidation appends the Rockets shape of a 400 validation
// error: {"statusCode":400,"message":[{"property":…,"constraints":{…}}],
// "error":"Bad Request","errorCode":…}. Problems of one field share one
// item, one constraint per rule (the first text of a rule wins, as an
// object cannot repeat a name).
func appendRocketsValidation(b []byte, status int, code string, details []domain.FieldError) []byte {
	b = append(b, `{"statusCode":`...)
	b = strconv.AppendInt(b, int64(status), 10)
	b = append(b, `,"message":[`...)
	done := make([]bool, len(details))
	first := true
	for i, d := range details {
		if done[i] {
			continue
		}
		if !first {
			b = append(b, ',')
		}
		first = false
		b = append(b, `{"property":`...)
		b = AppendString(b, d.Field)
		b = append(b, `,"constraints":{`...)
		var rules []string
		for j := i; j < len(details); j++ {
			if details[j].Field != d.Field {
				continue
			}
			done[j] = true
			rule := rocketsRule(details[j].Message)
			if slices.Contains(rules, rule) {
				continue
			}
			if len(rules) > 0 {
				b = append(b, ',')
			}
			rules = append(rules, rule)
			b = AppendString(b, rule)
			b = append(b, ':')
			b = AppendString(b, d.Field+" "+details[j].Message)
		}
		b = append(b, `}}`...)
	}
	b = append(b, `],"error":"Bad Request","errorCode":`...)
	b = AppendString(b, code)
	return append(b, '}')
}
