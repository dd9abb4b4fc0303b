package config

import (
	"encoding/json"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"strings"
)

// LogValue implements slog.LogValuer: the whole configuration as a group,
// with the database password and the HS256 secret redacted.
func (c Config) LogValue() slog.Value {
	str := slog.String
	expires := "none"
	if p := c.Cache.Settings.ExpiresIn; p != nil {
		expires = durationText(*p)
	}
	secret := "unset"
	if c.Auth.HS256Secret.IsSet() {
		secret = redacted
	}
	return slog.GroupValue(
		str("addr", c.Addr),
		str("database", c.RedactedDatabase()),
		str("metricsAddr", c.MetricsAddr),
		str("accessTokenTTL", durationText(c.AccessTokenTTL)),
		str("refreshTokenTTL", durationText(c.RefreshTokenTTL)),
		str("shutdownTimeout", durationText(c.ShutdownTimeout)),
		str("configFile", c.ConfigFile),
		str("trustedProxies", strings.Join(c.TrustedProxies, ",")),
		str("auditRetention", durationText(c.AuditRetention)),
		str("auditFoldWindow", durationText(c.AuditFoldWindow)),
		slog.Group("cors",
			str("origins", strings.Join(c.CORS.Origins, ",")),
			slog.Bool("credentials", c.CORS.Credentials)),
		slog.Group("cache",
			str("entities", sortedText(c.Cache.Entities, func(e Entity) string { return e.Table })),
			str("assignments", sortedText(c.Cache.Settings.Assignments, func(a Assignment) string { return a.EntityKey + "/" + a.Policy.String() })),
			str("expiresIn", expires)),
		slog.Group("auth",
			slog.Bool("enableGuards", c.Auth.EnableGuards),
			str("issuer", c.Auth.Issuer),
			str("audience", c.Auth.Audience),
			str("clientId", c.Auth.ClientID),
			str("keyPublishAhead", durationText(c.Auth.KeyPublishAhead)),
			str("hs256Secret", secret),
			str("hs256SecretFile", c.Auth.HS256SecretFile),
			str("usernameField", c.Auth.UsernameField),
			str("passwordField", c.Auth.PasswordField),
			str("refreshFrom", c.Auth.RefreshFrom.String()),
			str("passwordAlgorithm", string(c.Auth.PasswordAlgorithm)),
			slog.Int("bcryptCost", c.Auth.BcryptCost),
			str("refreshReuseGrace", durationText(c.Auth.RefreshReuseGrace)),
			slog.Group("throttle",
				slog.Int("usernameLimit", c.Auth.Throttle.UsernameLimit),
				slog.Int("addressLimit", c.Auth.Throttle.AddressLimit),
				str("window", durationText(c.Auth.Throttle.Window)))),
		slog.Group("limits",
			slog.Int64("bodyBytes", c.Limits.BodyBytes),
			slog.Int64("headerBytes", c.Limits.HeaderBytes),
			slog.Int64("dataBytes", c.Limits.DataBytes),
			slog.Int("listMax", c.Limits.ListMax),
			slog.Int("listDefault", c.Limits.ListDefault)),
		slog.Group("log",
			str("format", string(c.Log.Format)),
			str("level", c.Log.Level.String())),
		slog.Group("sweep",
			str("interval", durationText(c.Sweep.Interval)),
			slog.Int("batch", c.Sweep.Batch)),
		slog.Group("events",
			str("retention", durationText(c.Events.Retention)),
			str("heartbeat", durationText(c.Events.Heartbeat)),
			str("retry", durationText(c.Events.Retry))),
		slog.Group("caps",
			slog.Int("listsPerUser", c.Caps.ListsPerUser),
			slog.Int("streamsPerUser", c.Caps.StreamsPerUser),
			slog.Int("connsPerAddress", c.Caps.ConnsPerAddress)),
	)
}

// sortedText lists m as "key=text" by sorted key: the entities as
// "key=table", the assignments as "name=entityKey/policy".
func sortedText[V any](m map[string]V, text func(V) string) string {
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(m)) {
		parts = append(parts, k+"="+text(m[k]))
	}
	return strings.Join(parts, " ")
}

// plain is Config without its methods, so Format can print the fields.
type plain Config

// Format prints c as fmt would, with any verb, but with the database
// password redacted (the HS256 secret redacts itself): safe to log.
func (c Config) Format(f fmt.State, verb rune) {
	p := plain(c)
	p.Database = c.RedactedDatabase()
	_, _ = fmt.Fprintf(f, fmt.FormatString(f, verb), p)
}

// MarshalJSON encodes c with the database password redacted (the HS256
// secret redacts itself).
func (c Config) MarshalJSON() ([]byte, error) {
	p := plain(c)
	p.Database = c.RedactedDatabase()
	return json.Marshal(p)
}
