package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net/url"
	"strings"

	"github.com/jackc/pgx/v5"
)

// benchDBPrefix starts the name of every database createDatabase makes, so
// dropDatabase refuses to drop anything else.
const benchDBPrefix = "cachegate_bench_"

// createDatabase creates an empty database on the server of base (a
// postgres:// URL) and returns base with its database replaced by the new
// one. Errors never repeat the URL, which may hold a password.
func createDatabase(ctx context.Context, base string) (string, error) {
	u, err := url.Parse(base)
	if err != nil || (u.Scheme != "postgres" && u.Scheme != "postgresql") {
		return "", fmt.Errorf("createdb: want a postgres:// URL")
	}
	var b [6]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", fmt.Errorf("createdb: %w", err)
	}
	name := benchDBPrefix + hex.EncodeToString(b[:])
	conn, err := pgx.Connect(ctx, base)
	if err != nil {
		return "", fmt.Errorf("createdb: connect: %w", err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, "CREATE DATABASE "+pgx.Identifier{name}.Sanitize()); err != nil {
		return "", fmt.Errorf("createdb: %w", err)
	}
	u.Path = "/" + name
	return u.String(), nil
}

// dropDatabase drops the database named by target, which createDatabase
// made, connecting to the server's postgres database to do it.
func dropDatabase(ctx context.Context, target string) error {
	u, err := url.Parse(target)
	if err != nil {
		return fmt.Errorf("dropdb: want a postgres:// URL")
	}
	name := strings.TrimPrefix(u.Path, "/")
	if !strings.HasPrefix(name, benchDBPrefix) {
		return fmt.Errorf("dropdb: refusing to drop a database not made by createdb")
	}
	u.Path = "/postgres"
	conn, err := pgx.Connect(ctx, u.String())
	if err != nil {
		return fmt.Errorf("dropdb: connect: %w", err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, "DROP DATABASE IF EXISTS "+pgx.Identifier{name}.Sanitize()+" WITH (FORCE)"); err != nil {
		return fmt.Errorf("dropdb: %w", err)
	}
	return nil
}
