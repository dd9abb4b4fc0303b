package config

import (
	"fmt"
	"net"
	"strconv"
	"strings"
	"time"

	"github.com/cachegate/cachegate/domain"
)

// parseDuration accepts the project's duration grammar and Go's, positive
// only; a bare number is rejected.
func parseDuration(v string) (time.Duration, error) {
	if d, err := domain.ParseDuration(v); err == nil {
		return d, nil
	}
	if d, err := time.ParseDuration(strings.TrimSpace(v)); err == nil && d > 0 {
		return d, nil
	}
	return 0, fmt.Errorf("%q must be a duration such as 15m or 30d", v)
}

// parseDurationOrZero is parseDuration that also accepts "0" (and Go's
// "0s"), for settings where zero means off.
func parseDurationOrZero(v string) (time.Duration, error) {
	if d, err := time.ParseDuration(strings.TrimSpace(v)); err == nil && d == 0 {
		return 0, nil
	}
	d, err := parseDuration(v)
	if err != nil {
		return 0, fmt.Errorf("%q must be 0 (off) or a duration such as 500ms or 1m", v)
	}
	return d, nil
}

func parseInt[T int | int64](v string) (T, error) {
	n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
	if err != nil {
		return 0, fmt.Errorf("%q must be a whole number", v)
	}
	return T(n), nil
}

// parseBool parses true/false, 1/0 and t/f in any case.
func parseBool(v string) (bool, error) {
	b, err := strconv.ParseBool(strings.TrimSpace(v))
	if err != nil {
		return false, fmt.Errorf("%q must be true or false", v)
	}
	return b, nil
}

// sizeUnits are the units of byte sizes, longest first so "KiB" is not
// read as "B".
var sizeUnits = []struct {
	suffix string
	factor int64
}{
	{"kib", 1 << 10}, {"mib", 1 << 20}, {"gib", 1 << 30},
	{"kb", 1000}, {"mb", 1000 * 1000}, {"gb", 1000 * 1000 * 1000},
	{"k", 1 << 10}, {"m", 1 << 20}, {"g", 1 << 30},
	{"b", 1},
}

// maxSize bounds every byte size but the quota's, so products cannot
// overflow.
const maxSize = 1 << 30

// maxQuotaBytes and maxQuotaEntries bound the quota settings.
const (
	maxQuotaBytes   = 1 << 40
	maxQuotaEntries = 1 << 40
)

// parseSize parses a byte size: "1048576", "1MiB", "256 KiB", "1MB".
// A bare k, m or g means KiB, MiB or GiB.
func parseSize(v string) (int64, error) { return parseSizeUpTo(v, maxSize) }

func parseQuotaSize(v string) (int64, error) { return parseSizeUpTo(v, maxQuotaBytes) }

// parseSizeUpTo is parseSize with limit as the largest size accepted.
func parseSizeUpTo(v string, limit int64) (int64, error) {
	bad := fmt.Errorf("%q must be a size in bytes such as 1048576, 256KiB or 1MiB", v)
	s := strings.ToLower(strings.TrimSpace(v))
	factor := int64(1)
	for _, u := range sizeUnits {
		if strings.HasSuffix(s, u.suffix) {
			s, factor = strings.TrimSpace(strings.TrimSuffix(s, u.suffix)), u.factor
			break
		}
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n < 0 || n > limit/factor {
		return 0, bad
	}
	return n * factor, nil
}

// checkAddr checks a listen address: host:port with a numeric port; the
// host may be empty to listen on every interface.
func checkAddr(a string) error {
	_, port, err := net.SplitHostPort(a)
	if err == nil {
		var p int
		p, err = strconv.Atoi(port)
		if err == nil && (p < 0 || p > 65535) {
			err = strconv.ErrRange
		}
	}
	if err != nil {
		return fmt.Errorf("%q must be host:port, such as 127.0.0.1:8080 or :8080", a)
	}
	return nil
}

func checkRange(n, lo, hi int64) error {
	if n < lo || n > hi {
		return fmt.Errorf("%d must be between %d and %d", n, lo, hi)
	}
	return nil
}

// durationText prints d in whole days when it is some ("30d"), else as Go
// does ("15m0s").
func durationText(d time.Duration) string {
	if d > 0 && d%domain.Day == 0 {
		return strconv.FormatInt(int64(d/domain.Day), 10) + "d"
	}
	return d.String()
}
