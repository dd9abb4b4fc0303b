package main

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"
)

// call is one HTTP request of the load.
type call struct {
	kind    string
	replica int
	method  string
	path    string
	token   string // bearer token, if any
	body    any    // marshalled as JSON, if not nil
	idemKey string // Idempotency-Key header, if any
}

// send makes the request and returns its outcome and the answer's body
// (at most 4 MiB). A request that gets no answer within the client's
// timeout is the outcome "timeout"; any other error "transport error".
func (l *load) send(ctx context.Context, c call) (outcome, []byte) {
	o := outcome{Kind: c.kind, Replica: c.replica}
	var rd io.Reader
	if c.body != nil {
		b, err := json.Marshal(c.body)
		if err != nil {
			panic(err) // our own request bodies always marshal
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, c.method, l.urls[c.replica]+c.path, rd)
	if err != nil {
		panic(err) // the URLs were checked at start
	}
	if c.body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	if c.idemKey != "" {
		req.Header.Set("Idempotency-Key", c.idemKey)
	}
	o.Sent = time.Now()
	resp, err := l.client.Do(req)
	var body []byte
	if err == nil {
		body, err = io.ReadAll(io.LimitReader(resp.Body, 4<<20))
		resp.Body.Close()
	}
	o.Done = time.Now()
	switch {
	case err != nil && (errors.Is(err, context.DeadlineExceeded) || isTimeout(err)):
		o.Err = "timeout"
	case err != nil:
		o.Err = "transport error"
		l.noteTransportError(err)
	default:
		o.Status = resp.StatusCode
		o.RetryAfter = resp.Header.Get("Retry-After") != ""
		if o.Status >= 400 {
			var e struct {
				ErrorCode string `json:"errorCode"`
			}
			if json.Unmarshal(body, &e) == nil {
				o.Code = e.ErrorCode
			}
		}
	}
	return o, body
}

func isTimeout(err error) bool {
	var t interface{ Timeout() bool }
	return errors.As(err, &t) && t.Timeout()
}

// tokens is the answer of login and refresh.
type tokens struct {
	AccessToken  string `json:"accessToken"`
	RefreshToken string `json:"refreshToken"`
}

// subject reads the sub claim of a JWT without verifying it: the load only
// needs its own user id for the entries' assignee.
func subject(jwt string) (string, error) {
	parts := strings.Split(jwt, ".")
	if len(parts) != 3 {
		return "", errors.New("access token is not a JWT")
	}
	raw, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil {
		return "", fmt.Errorf("access token payload: %w", err)
	}
	var claims struct {
		Sub string `json:"sub"`
	}
	if err := json.Unmarshal(raw, &claims); err != nil || claims.Sub == "" {
		return "", errors.New("access token carries no sub claim")
	}
	return claims.Sub, nil
}

// entryPage is one page of GET /cache/user?page=N.
type entryPage struct {
	Data []struct {
		ID  string `json:"id"`
		Key string `json:"key"`
	} `json:"data"`
	PageCount int `json:"pageCount"`
	Total     int `json:"total"`
}

// listAll reads every entry of the user through one replica, page by page
// in id order, and returns their ids and keys. A 503 (the database still
// settling) is retried for up to a minute.
func (l *load) listAll(ctx context.Context, replica int, token string) (ids, keys map[string]bool, err error) {
	ids, keys = map[string]bool{}, map[string]bool{}
	deadline := time.Now().Add(time.Minute)
	for page := 1; ; {
		o, body := l.send(ctx, call{kind: "list", replica: replica, method: http.MethodGet,
			path: fmt.Sprintf("/cache/user?page=%d&limit=1000&sort=id,ASC", page), token: token})
		if o.Status == http.StatusServiceUnavailable || o.Status == 0 {
			if time.Now().After(deadline) {
				return nil, nil, fmt.Errorf("list page %d through replica %d: %s for a minute", page, replica+1, o.label())
			}
			time.Sleep(time.Second)
			continue
		}
		if o.Status != http.StatusOK {
			return nil, nil, fmt.Errorf("list page %d through replica %d: %s", page, replica+1, o.label())
		}
		var p entryPage
		if err := json.Unmarshal(body, &p); err != nil {
			return nil, nil, fmt.Errorf("list page %d through replica %d: %w", page, replica+1, err)
		}
		for _, e := range p.Data {
			ids[e.ID], keys[e.Key] = true, true
		}
		if page >= p.PageCount {
			if len(ids) != p.Total {
				return nil, nil, fmt.Errorf("listed %d entries through replica %d, the page says %d", len(ids), replica+1, p.Total)
			}
			return ids, keys, nil
		}
		page++
	}
}
