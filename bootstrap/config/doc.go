// Package config is cachegate's one typed configuration: the settings of
// the README's configuration table, merged from command-line flags, CACHEGATE_*
// environment variables and an optional YAML file, in that order of
// precedence, over built-in defaults. Nothing outside bootstrap reads the
// environment: Load takes a getenv.
//
// Every scalar setting has a flag in kebab case (--access-token-ttl), an
// environment variable (CACHEGATE_ACCESS_TOKEN_TTL) and a YAML key path of
// the lowerCamel forms of the Config fields, initialisms kept
// (auth.throttle.usernameLimit). The HS256 secret itself has no flag (a
// command line is visible to every local user). The cache entities and
// assignments are maps and exist only in YAML, in the shape of the README's
// YAML example ("Configuration").
//
// Durations accept domain.ParseDuration's grammar and Go's, not a bare
// number; settings where zero means "off" also accept "0". Byte sizes take
// an optional unit (B, KB, KiB, MB, MiB, GB, GiB). An empty environment
// variable, like a YAML null, counts as unset.
//
// Load reports every problem at once, one line each, starting with the
// setting's name as the user wrote it. Only the winning value of each
// setting is parsed, so a flag can override a broken environment variable;
// the YAML file must still be well-formed and hold no unknown key.
package config
