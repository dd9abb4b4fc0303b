package bootstrap

import (
	"testing"

	"github.com/cachegate/cachegate/adapters/cli"
	"github.com/cachegate/cachegate/bootstrap/config"
)

// TestUsesAreGroups pins what ConfigFlags relies on: each of the CLI's
// groups of settings is the configuration's group of the same name.
func TestUsesAreGroups(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		uses  cli.Uses
		group config.Group
	}{
		{cli.UsesStorage, config.GroupStorage}, {cli.UsesPasswords, config.GroupPasswords},
		{cli.UsesKeys, config.GroupKeys}, {cli.UsesServer, config.GroupServer}, {cli.UsesData, config.GroupData},
		{cli.UsesAll, config.GroupAll},
	} {
		if config.Group(c.uses) != c.group {
			t.Errorf("cli.Uses %b is config.Group %b, want %b", c.uses, config.Group(c.uses), c.group)
		}
	}
}
