package bootstrap

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"strconv"
	"time"

	"go.uber.org/fx"

	"github.com/cachegate/cachegate/adapters/ginhttp"
	"github.com/cachegate/cachegate/adapters/system"
	"github.com/cachegate/cachegate/application"
	"github.com/cachegate/cachegate/domain"
	"github.com/cachegate/cachegate/ports"
)

// SetupLink provides the first admin's one-time set-up link (docs/admin.md,
// "The first admin"), whose route httpfx mounts; serve issues it.
func SetupLink(o application.FirstAdminOptions) fx.Option {
	return fx.Module("setup", fx.Provide(func(users *application.Users, clock ports.Clock) (*application.FirstAdmin, error) {
		return application.NewFirstAdmin(users, users.HasAdmin, clock, system.Secrets{}, o)
	}))
}

// hintFirstAdmin logs, when no active admin exists, how to make the first
// one (README.md, "Web console"). With the console on, it also issues the
// one-time set-up link and logs it on a line of its own: the one log line
// that holds a secret, by design (docs/admin.md, "The first admin"). A
// store that cannot tell says nothing.
func hintFirstAdmin(ctx context.Context, log *slog.Logger, admins *application.Users, link *application.FirstAdmin, addr func() string, console bool) {
	if has, err := admins.HasAdmin(ctx); err != nil || has {
		return
	}
	then := "then use the admin API (docs/admin.md)"
	if console {
		then = "then sign in at /console/"
	}
	log.Info("no admin exists: create the first with `cachegate users add --username NAME --admin --password-stdin` on this database, " + then)
	if !console || link == nil {
		return
	}
	l, err := link.Issue(ctx)
	if err != nil {
		if !errors.Is(err, domain.ErrAdminExists) {
			log.Warn("no set-up link for the first admin", "err", err)
		}
		return
	}
	from := "from this machine only"
	if link.FromAnywhere() {
		from = "from any address (--setup-from-anywhere)"
	}
	log.Info("or open this one-time set-up link to create the first admin (one use, valid "+
		strconv.Itoa(int(application.SetupLinkTTL/time.Minute))+" minutes, "+from+")",
		"link", setupURL(addr())+"#token="+l.Token, "expires", l.Expires.UTC().Format(time.RFC3339))
}

// setupURL is the console's set-up page on the bound address addr; an
// unspecified host (0.0.0.0, ::) is shown as 127.0.0.1, where the link
// works by default.
func setupURL(addr string) string {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return "http://" + addr + ginhttp.ConsoleSetupPath
	}
	if ip := net.ParseIP(host); ip != nil && ip.IsUnspecified() {
		host = "127.0.0.1"
	}
	return "http://" + net.JoinHostPort(host, port) + ginhttp.ConsoleSetupPath
}
