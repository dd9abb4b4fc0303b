package config_test

import (
	"strings"
	"testing"
	"time"
)

func TestAuditFoldWindowIsBetweenASecondAndAnHour(t *testing.T) {
	t.Parallel()
	if c := mustLoad(t, input{}); c.AuditFoldWindow != time.Minute {
		t.Errorf("default %v, want 1m", c.AuditFoldWindow)
	}
	if c := mustLoad(t, input{env: map[string]string{"CACHEGATE_AUDIT_FOLD_WINDOW": "10m"}}); c.AuditFoldWindow != 10*time.Minute {
		t.Errorf("from the environment %v, want 10m", c.AuditFoldWindow)
	}
	for _, bad := range []string{"500ms", "2h"} {
		_, err := load(t, input{args: []string{"--audit-fold-window", bad}})
		if got := lines(err); len(got) != 1 || !strings.Contains(got[0], "audit-fold-window") || !strings.Contains(got[0], "between 1s and 1h") {
			t.Errorf("--audit-fold-window %s: %q, want one error naming the bounds", bad, got)
		}
	}
}
