package apifuzz_test

import (
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"math/rand/v2"
	"regexp/syntax"
	"slices"
	"strings"
	"time"

	"github.com/getkin/kin-openapi/openapi3"
)

// gen draws values from schemas. Every value it calls valid is checked
// with the schema itself (VisitJSON) before use, and every request with
// the whole document (openapi3filter.ValidateRequest): a generator bug
// cannot turn into a false finding.
type gen struct {
	r *rand.Rand
}

// Strings are drawn from these pools: plain, then the awkward (Unicode,
// NUL and control characters, JSON and query metacharacters), which a
// schema without a pattern admits.
var (
	plainRunes   = []rune("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_.")
	awkwardRunes = []rune("\x00\x01\x1f\x7f \t\"\\/|,$%&=+?#[]{}:'<>éßǅÄ\u2028\U0001F600\uFFFD")
)

func (g *gen) chance(n int) bool { return g.r.IntN(n) == 0 }

// str is a random string of length in [min, max] (max < 0: unbounded).
func (g *gen) str(minLen, maxLen int) string {
	if maxLen < 0 || maxLen > minLen+24 {
		maxLen = minLen + 24
	}
	n := minLen + g.r.IntN(maxLen-minLen+1)
	awkward := g.chance(4)
	var sb strings.Builder
	for range n {
		pool := plainRunes
		if awkward && g.chance(3) {
			pool = awkwardRunes
		}
		sb.WriteRune(pool[g.r.IntN(len(pool))])
	}
	return sb.String()
}

// value draws a value valid against s; ok is false when none was found.
func (g *gen) value(s *openapi3.Schema) (any, bool) {
	for range 20 {
		v := g.draw(s, 0)
		if s.VisitJSON(v, openapi3.MultiErrors()) == nil {
			return v, true
		}
	}
	return nil, false
}

func (g *gen) draw(s *openapi3.Schema, depth int) any {
	if s.Nullable && g.chance(8) {
		return nil
	}
	if len(s.Enum) > 0 {
		return s.Enum[g.r.IntN(len(s.Enum))]
	}
	if alts := append(slices.Clone(s.AnyOf), s.OneOf...); len(alts) > 0 {
		return g.draw(alts[g.r.IntN(len(alts))].Value, depth)
	}
	if s.Example != nil && g.chance(4) {
		return s.Example
	}
	switch {
	case s.Type.Is("string"):
		return g.drawString(s)
	case s.Type.Is("integer"):
		lo, hi := bound(s.Min, -1<<20), bound(s.Max, 1<<20)
		if g.chance(3) {
			return float64([]int64{lo, hi, lo + 1}[g.r.IntN(3)])
		}
		return float64(lo + g.r.Int64N(min(hi-lo, 1<<20)+1))
	case s.Type.Is("number"):
		return g.r.Float64() * 1000
	case s.Type.Is("boolean"):
		return g.chance(2)
	case s.Type.Is("array"):
		n := int(s.MinItems) + g.r.IntN(3)
		if s.MaxItems != nil {
			n = min(n, int(*s.MaxItems))
		}
		out := make([]any, 0, n)
		for range n {
			out = append(out, g.draw(s.Items.Value, depth+1))
		}
		return out
	case s.Type.Is("object"):
		out := map[string]any{}
		// An object of many optional members (the operators of s) gets
		// about two, and a deep one none: recursive schemas (s nests) stay
		// small, within the bounds the document states in prose.
		odds := max(2, len(s.Properties)/2)
		if depth > 4 {
			odds = 0
		}
		for _, name := range slices.Sorted(maps.Keys(s.Properties)) { // in order: a seed reproduces a run
			if slices.Contains(s.Required, name) || odds > 0 && g.chance(odds) {
				out[name] = g.draw(s.Properties[name].Value, depth+1)
			}
		}
		return out
	}
	return g.anyJSON(depth) // no type: any JSON value, null included
}

func bound(p *float64, def int64) int64 {
	if p == nil {
		return def
	}
	return int64(*p)
}

func (g *gen) drawString(s *openapi3.Schema) string {
	maxLen := -1
	if s.MaxLength != nil {
		maxLen = int(*s.MaxLength)
	}
	switch s.Format {
	case "uuid":
		b := make([]byte, 16)
		for i := range b {
			b[i] = byte(g.r.IntN(256))
		}
		b[6], b[8] = b[6]&0x0f|0x70, b[8]&0x3f|0x80
		return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:])
	case "date-time":
		if g.chance(4) {
			return g.edgeTime()
		}
		return time.Unix(g.r.Int64N(4e9), 0).UTC().Format(time.RFC3339)
	}
	if s.Pattern != "" {
		if re, err := syntax.Parse(s.Pattern, syntax.Perl); err == nil {
			var sb strings.Builder
			g.fromRegexp(re.Simplify(), &sb)
			return sb.String()
		}
	}
	return g.str(int(s.MinLength), maxLen)
}

// edgeTime is an RFC 3339 time at an edge: in the first or the last days
// of the years 0001 to 9999, with an offset of up to 23:59 either way
// (0001-01-01T00:00:00+23:59 is in 1 BC once in UTC) and a fraction of
// up to nine digits.
func (g *gen) edgeTime() string {
	year, month, day := 1, 1, 1+g.r.IntN(2)
	if g.chance(2) {
		year, month, day = 9999, 12, 30+g.r.IntN(2)
	}
	s := fmt.Sprintf("%04d-%02d-%02dT%02d:%02d:%02d", year, month, day, g.r.IntN(24), g.r.IntN(60), g.r.IntN(60))
	if g.chance(2) {
		s += "." + strings.Repeat("9", 1+g.r.IntN(9))
	}
	if g.chance(3) {
		return s + "Z"
	}
	return s + fmt.Sprintf("%c%02d:%02d", "+-"[g.r.IntN(2)], 23, g.r.IntN(60))
}

// fromRegexp writes a string matching re.
func (g *gen) fromRegexp(re *syntax.Regexp, sb *strings.Builder) {
	repeat := func(lo, hi int) {
		if hi < 0 || hi > lo+3 {
			hi = lo + 3
		}
		for range lo + g.r.IntN(hi-lo+1) {
			g.fromRegexp(re.Sub[0], sb)
		}
	}
	switch re.Op {
	case syntax.OpLiteral:
		sb.WriteString(string(re.Rune))
	case syntax.OpCharClass:
		i := g.r.IntN(len(re.Rune) / 2)
		lo, hi := re.Rune[2*i], re.Rune[2*i+1]
		if hi-lo > 200 {
			hi = lo + 200
		}
		sb.WriteRune(lo + rune(g.r.IntN(int(hi-lo)+1)))
	case syntax.OpAnyChar, syntax.OpAnyCharNotNL:
		sb.WriteRune(awkwardRunes[g.r.IntN(len(awkwardRunes))])
	case syntax.OpCapture:
		g.fromRegexp(re.Sub[0], sb)
	case syntax.OpStar:
		repeat(0, 3)
	case syntax.OpPlus:
		repeat(1, 3)
	case syntax.OpQuest:
		repeat(0, 1)
	case syntax.OpRepeat:
		repeat(re.Min, re.Max)
	case syntax.OpConcat:
		for _, s := range re.Sub {
			g.fromRegexp(s, sb)
		}
	case syntax.OpAlternate:
		g.fromRegexp(re.Sub[g.r.IntN(len(re.Sub))], sb)
	}
}

// anyJSON is a small random JSON value of any kind.
func (g *gen) anyJSON(depth int) any {
	k := g.r.IntN(7)
	if depth > 2 && k >= 5 {
		k = 0
	}
	switch k {
	case 0:
		return g.str(0, 12)
	case 1:
		return float64(g.r.IntN(2000) - 1000)
	case 2:
		return g.chance(2)
	case 3:
		return nil
	case 4:
		return math.Round(g.r.NormFloat64()*1e6) / 1e3
	case 5:
		return []any{g.anyJSON(depth + 1), g.anyJSON(depth + 1)}
	}
	return map[string]any{g.str(1, 6): g.anyJSON(depth + 1)}
}

// invalid draws a value that s refuses, with a word on how; ok is false
// when the schema admits everything tried.
func (g *gen) invalid(s *openapi3.Schema) (v any, how string, ok bool) {
	for range 20 {
		v, how = g.mutate(s)
		if how != "" && s.VisitJSON(v) != nil {
			return v, how, true
		}
	}
	return nil, "", false
}

func (g *gen) mutate(s *openapi3.Schema) (any, string) {
	valid, _ := g.value(s)
	switch k := g.r.IntN(4); {
	case k == 0 && !s.Nullable && g.chance(3):
		return nil, "null where the schema is not nullable"
	case k == 0 && !s.Nullable && s.Type != nil && len(*s.Type) > 0:
		if s.Type.Is("string") {
			return 12345.0, "a number for a string"
		}
		return "not-" + (*s.Type)[0], "a string for a " + (*s.Type)[0]
	case k == 1 && s.Type.Is("object") && len(s.Required) > 0:
		obj, _ := valid.(map[string]any)
		name := s.Required[g.r.IntN(len(s.Required))]
		delete(obj, name)
		return obj, "without the required " + name
	case k == 1 && s.Type.Is("object") && s.AdditionalProperties.Has != nil && !*s.AdditionalProperties.Has:
		obj, _ := valid.(map[string]any)
		if obj == nil {
			obj = map[string]any{}
		}
		obj["zzUnknown"] = 1.0
		return obj, "with an undeclared member"
	case k == 2 && s.Type.Is("object") && len(s.Properties) > 0:
		obj, _ := valid.(map[string]any)
		names := slices.Sorted(maps.Keys(s.Properties))
		name := names[g.r.IntN(len(names))]
		if v, how, ok := g.invalid(s.Properties[name].Value); ok && obj != nil {
			obj[name] = v
			return obj, name + ": " + how
		}
	case k == 3 && s.Pattern != "":
		return g.str(0, 12), "off the pattern"
	case k == 3 && s.MaxLength != nil:
		return strings.Repeat("x", int(*s.MaxLength)+1), "longer than maxLength"
	case k == 3 && s.Max != nil:
		return *s.Max + 1, "above the maximum"
	case k == 3 && s.Min != nil:
		return *s.Min - 1, "below the minimum"
	case k == 3 && len(s.Enum) > 0:
		return "zz-not-listed", "not in the enum"
	}
	return nil, ""
}

func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}
