package domain_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/cachegate/cachegate/domain"
)

func TestQuotaAdmitsOnlyGrowthWithinItsLimits(t *testing.T) {
	t.Parallel()
	q := domain.Quota{MaxEntries: 3, MaxBytes: 100}
	for _, tc := range []struct {
		name           string
		q              domain.Quota
		u              domain.Usage
		entries, bytes int64
		want           string // "" admitted, else a word of the message
	}{
		{"room for one more entry", q, domain.Usage{Entries: 2, Bytes: 10}, 1, 10, ""},
		{"the last place and the last byte", q, domain.Usage{Entries: 2, Bytes: 90}, 1, 10, ""},
		{"one entry too many", q, domain.Usage{Entries: 3, Bytes: 10}, 1, 1, "3 entries"},
		{"one byte too many", q, domain.Usage{Entries: 1, Bytes: 90}, 1, 11, "100 bytes"},
		{"no growth passes over a lowered quota", q, domain.Usage{Entries: 9, Bytes: 900}, 0, 0, ""},
		{"shrinking passes over a lowered quota", q, domain.Usage{Entries: 9, Bytes: 900}, 0, -5, ""},
		{"bytes grow while the entries are over: only bytes are checked", q, domain.Usage{Entries: 9, Bytes: 50}, 0, 5, ""},
		{"zero limits nothing", domain.Quota{}, domain.Usage{Entries: 1 << 40, Bytes: 1 << 50}, 1, 1 << 20, ""},
		{"a zero entry limit still holds the bytes", domain.Quota{MaxBytes: 10}, domain.Usage{Entries: 1 << 40}, 1, 11, "10 bytes"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			err := tc.q.Admit(tc.u, tc.entries, tc.bytes)
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("Admit = %v, want nil", err)
			case tc.want == "":
			case !errors.Is(err, domain.ErrCacheQuotaExceeded) || domain.KindOf(err) != domain.KindForbidden:
				t.Fatalf("Admit = %v, want ErrCacheQuotaExceeded (forbidden)", err)
			case !strings.Contains(err.Error(), tc.want):
				t.Fatalf("message %q does not name %q", err.Error(), tc.want)
			}
		})
	}
}

func TestGrowthIsWhatAWriteAddsToItsAssignee(t *testing.T) {
	t.Parallel()
	cur := domain.Entry{AssigneeID: "a", Data: []byte(`"abc"`)}
	moved := cur
	moved.AssigneeID = "b"
	bigger := cur
	bigger.Data = []byte(`"abcdef"`)
	gone := cur
	now := time.Now()
	gone.DateDeleted = &now
	for _, tc := range []struct {
		name           string
		prev           *domain.Entry
		next           domain.Entry
		entries, bytes int64
	}{
		// cur's change keeps its 5 bytes of data and 256 more.
		{"a new entry", nil, cur, 1, 5 + 261},
		{"the same entry", &cur, cur, 0, 261},
		{"larger data", &cur, bigger, 0, 3 + 264},
		{"smaller data", &bigger, cur, 0, -3 + 261},
		{"moved to another assignee", &cur, moved, 1, 5 + 261},
		{"deleted", &cur, gone, 0, 0},
	} {
		if e, b := domain.Growth(tc.prev, tc.next); e != tc.entries || b != tc.bytes {
			t.Errorf("%s: Growth = %d entries, %d bytes; want %d, %d", tc.name, e, b, tc.entries, tc.bytes)
		}
	}
	keyed := cur
	keyed.Key, keyed.Type = "k", "tt"
	if got := domain.ChangeBytes(keyed); got != 5+1+2+domain.RetainedRowBytes {
		t.Errorf("ChangeBytes = %d, want data, key and type plus %d", got, domain.RetainedRowBytes)
	}
	if got := domain.RecordBytes("s/user:1", "key1", keyed); got != domain.ChangeBytes(keyed)+8+4 {
		t.Errorf("RecordBytes = %d, want the change's bytes plus the scope's and the key's", got)
	}
	if _, err := domain.NewQuota(-1, 0); err == nil {
		t.Error("NewQuota(-1, 0) succeeded")
	}
	if q, err := domain.NewQuota(0, 0); err != nil || !q.Unlimited() {
		t.Errorf("NewQuota(0, 0) = %+v, %v; want the unlimited quota", q, err)
	}
}
