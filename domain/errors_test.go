package domain_test

import (
	"bytes"
	"errors"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/cachegate/cachegate/domain"
)

func TestErrorsShowTheirCodeInLogsButNotInTheirMessage(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	log := slog.New(slog.NewTextHandler(&buf, nil))
	log.Info("refused", "err", domain.ErrUserExists)
	if got := buf.String(); !strings.Contains(got, "err.code=USER_ALREADY_EXISTS") || !strings.Contains(got, "err.kind=conflict") {
		t.Errorf("log line %q lacks the code and kind", got)
	}
	if strings.Contains(domain.ErrUserExists.Error(), "USER_ALREADY_EXISTS") {
		t.Errorf("Error() %q carries the code; it is the client-safe message alone", domain.ErrUserExists.Error())
	}
	if got := domain.ErrUserExists.String(); !strings.HasPrefix(got, "USER_ALREADY_EXISTS: ") {
		t.Errorf("String() = %q, want CODE: message", got)
	}

	buf.Reset()
	var de *domain.Error
	if !errors.As(domain.Invalid(domain.FieldError{Field: "key", Message: "too long"}), &de) {
		t.Fatal("Invalid is not a *domain.Error")
	}
	de.RetryAfter = 2 * time.Second
	log.Info("refused", "err", de)
	if got := buf.String(); !strings.Contains(got, "err.fields=key") || !strings.Contains(got, "err.retry_after=2s") {
		t.Errorf("log line %q lacks the fields and retry delay", got)
	}
}

func TestNormalizedPutsEveryTimeOfAnEntryInUTCMicroseconds(t *testing.T) {
	t.Parallel()
	at := time.Date(2030, 1, 2, 3, 4, 5, 678901234, time.FixedZone("X", 3600))
	e := domain.Entry{DateCreated: at, DateUpdated: at, ExpiresAt: &at}.Normalized()
	want := time.Date(2030, 1, 2, 2, 4, 5, 678901000, time.UTC)
	for name, got := range map[string]time.Time{"created": e.DateCreated, "updated": e.DateUpdated, "expires": *e.ExpiresAt} {
		if !got.Equal(want) || got.Location() != time.UTC || got.Nanosecond() != want.Nanosecond() {
			t.Errorf("%s = %v, want %v", name, got, want)
		}
	}
	if e.DateDeleted != nil {
		t.Error("a nil time became non-nil")
	}
	if e.ExpiresAt == &at {
		t.Error("Normalized shares the caller's time")
	}
}
