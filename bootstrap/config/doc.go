// Package config is cachegate's one typed configuration: the settings of
// the README's configuration table, merged from command-line flags, CACHEGATE_*
// environment variables and an optional YAML file, in that order of
// precedence, over built-in defaults.
//
// Nothing outside bootstrap reads the environment: bootstrap.Main has the
// CLI adapter call RegisterGroups on each command's flag set, parse the
// arguments, and then Load with os.Getenv. Tests pass their own getenv.
//
// # Names
//
// Every scalar setting has three names, all listed in --help:
//
//   - a flag, in kebab case: --access-token-ttl;
//   - an environment variable: CACHEGATE_ followed by the flag name in
//     upper case with dashes as underscores: CACHEGATE_ACCESS_TOKEN_TTL;
//   - a YAML key path whose every segment is the lowerCamel form of the
//     matching Config field, initialisms kept: accessTokenTTL,
//     auth.throttle.usernameLimit, cache.settings.expiresIn.
//
// Two exceptions: the HS256 secret itself has no flag (a command line is
// visible to every local user); set CACHEGATE_HS256_SECRET, the YAML key
// auth.hs256Secret or --hs256-secret-file. The cache entities and
// assignments are maps and exist only in YAML, in exactly the shape of
// the README's YAML example ("Configuration").
//
// # Values
//
// Durations accept the project's grammar (domain.ParseDuration: "15m",
// "30d", "1h30m", "2 days") and Go's (time.ParseDuration: "1h0m0s",
// "250us"); a bare number such as "10" is rejected. Settings where zero
// means "off" also accept "0". Byte sizes accept a plain number of bytes or
// a number with a unit (B, KB, KiB, MB, MiB, GB, GiB). Booleans accept
// true/false (and 1/0, t/f). An empty environment variable counts as unset,
// and so does a YAML null; cache.settings.expiresIn also accepts "none".
//
// # Errors
//
// Load reports every problem at once, joined with errors.Join, one line
// each, starting with the name of the setting as the user wrote it: the flag
// name, the environment variable or the YAML path. Only the winning value of
// each setting is parsed, so a flag can override a broken environment
// variable; the YAML file itself must still be well-formed and hold no
// unknown key.
package config
