package ginhttp

import (
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/cachegate/cachegate/domain"
)

// entityTags is a parsed If-Match or If-None-Match header.
type entityTags struct {
	present bool
	// any is the wildcard "*".
	any bool
	// strong lists the versions of the well-formed strong tags "<n>".
	strong []int
	// weak lists the versions of the weak tags W/"<n>".
	weak []int
}

// parseEntityTags reads every value of header name as a comma-separated
// list. Elements that are not "*", "<n>" or W/"<n>" are kept as nothing:
// they match no version, so a malformed If-Match always fails (412).
func parseEntityTags(h http.Header, name string) entityTags {
	vs := h.Values(name)
	t := entityTags{present: len(vs) > 0}
	for _, v := range vs {
		for _, el := range strings.Split(v, ",") {
			el = strings.TrimSpace(el)
			if el == "*" {
				t.any = true
				continue
			}
			weak := strings.HasPrefix(el, "W/")
			if n, ok := parseTagVersion(strings.TrimPrefix(el, "W/")); ok {
				if weak {
					t.weak = append(t.weak, n)
				} else {
					t.strong = append(t.strong, n)
				}
			}
		}
	}
	return t
}

// parseTagVersion parses the quoted decimal version of an entity tag.
func parseTagVersion(s string) (int, bool) {
	if len(s) < 3 || len(s) > 20 || s[0] != '"' || s[len(s)-1] != '"' {
		return 0, false
	}
	digits := s[1 : len(s)-1]
	if strings.Trim(digits, "0123456789") != "" {
		return 0, false
	}
	n, err := strconv.Atoi(digits)
	return n, err == nil
}

// single returns the one strong version of an If-Match that names exactly
// that, the case the use cases check atomically.
func (t entityTags) single() (int, bool) {
	if !t.any && len(t.strong) == 1 && len(t.weak) == 0 {
		return t.strong[0], true
	}
	return 0, false
}

// matchesStrong reports whether an If-Match condition holds for version,
// with the strong comparison RFC 9110 requires for If-Match.
func (t entityTags) matchesStrong(version int) bool {
	return t.any || slices.Contains(t.strong, version)
}

// matchesWeak reports whether an If-None-Match condition matches version,
// with the weak comparison RFC 9110 requires for If-None-Match.
func (t entityTags) matchesWeak(version int) bool {
	return t.matchesStrong(version) || slices.Contains(t.weak, version)
}

// errIfNoneMatch is If-None-Match where cachegate cannot honour it; it is
// refused rather than ignored, so no client believes it is protected.
func errIfNoneMatch(method string) error {
	if method == http.MethodPut {
		return domain.InvalidField("If-None-Match", "only * is supported on PUT")
	}
	return domain.InvalidField("If-None-Match", "is not supported on "+method)
}
