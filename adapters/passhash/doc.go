// Package passhash hashes and verifies passwords with bcrypt and argon2id
// (golang.org/x/crypto). One Hasher implements both ports.PasswordHasher
// and ports.PasswordValidator.
//
// New hashes use the configured algorithm. Verification accepts either
// algorithm whatever the setting, so switching the setting never locks a
// user out; NeedsRehash tells the login use case when to upgrade a hash.
// Hashes made by the NestJS modules (bcryptjs) verify unchanged.
//
// Stored hashes are untrusted input: their cost parameters are bounded
// before any work is done, so a corrupt or hostile row cannot make a login
// allocate gigabytes or run for minutes.
package passhash
