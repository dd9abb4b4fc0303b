package main

import (
	"database/sql"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
	"github.com/uptrace/bun"
	"golang.org/x/crypto/bcrypt"
)

// The seeded user's credentials, and the HS256 keys of the two kinds of
// token (fixed: the ceiling guards nothing).
const (
	username = "user"
	password = "Test1234!"
)

var (
	accessKey  = []byte("access-secret-0123456789abcdef0123456789abcdef")
	refreshKey = []byte("refresh-secret-0123456789abcdef0123456789abcdef")
	algorithms = []jose.SignatureAlgorithm{jose.HS256}
)

// server serves the hot paths on db.
type server struct {
	db              *bun.DB
	access, refresh jose.Signer
	userHash        []byte
}

func newServer(db *bun.DB, cost int) (*server, error) {
	s := &server{db: db}
	var err error
	opts := (&jose.SignerOptions{}).WithType("JWT")
	if s.access, err = jose.NewSigner(jose.SigningKey{Algorithm: jose.HS256, Key: accessKey}, opts); err != nil {
		return nil, err
	}
	if s.refresh, err = jose.NewSigner(jose.SigningKey{Algorithm: jose.HS256, Key: refreshKey}, opts); err != nil {
		return nil, err
	}
	if s.userHash, err = bcrypt.GenerateFromPassword([]byte(password), cost); err != nil {
		return nil, err
	}
	return s, nil
}

func (s *server) routes() http.Handler {
	gin.SetMode(gin.ReleaseMode)
	r := gin.New()
	r.GET("/token", func(c *gin.Context) {
		t, err := sign(s.access, "user-1", 24*time.Hour)
		if err != nil {
			c.String(http.StatusInternalServerError, err.Error())
			return
		}
		c.String(http.StatusOK, t)
	})
	r.GET("/ids", s.ids)
	r.POST("/auth/login", s.login)
	r.POST("/auth/refresh", s.refreshPair)
	g := r.Group("/", bearer)
	g.GET("/cache/:id", s.get)
	g.POST("/cache", s.create)
	return r
}

func sign(signer jose.Signer, sub string, ttl time.Duration) (string, error) {
	now := time.Now()
	return jwt.Signed(signer).Claims(jwt.Claims{Subject: sub, IssuedAt: jwt.NewNumericDate(now),
		Expiry: jwt.NewNumericDate(now.Add(ttl)), ID: newID()}).Serialize()
}

func verify(token string, key []byte) (jwt.Claims, error) {
	var c jwt.Claims
	t, err := jwt.ParseSigned(token, algorithms)
	if err != nil {
		return c, err
	}
	if err := t.Claims(key, &c); err != nil {
		return c, err
	}
	return c, c.ValidateWithLeeway(jwt.Expected{Time: time.Now()}, 0)
}

func bearer(c *gin.Context) {
	token, ok := strings.CutPrefix(c.GetHeader("Authorization"), "Bearer ")
	if !ok {
		c.AbortWithStatusJSON(http.StatusUnauthorized, gin.H{"message": "Unauthorized"})
		return
	}
	if _, err := verify(token, accessKey); err != nil {
		c.AbortWithStatusJSON(http.StatusUnauthorized, gin.H{"message": "Unauthorized"})
		return
	}
	c.Next()
}

// pair answers 201 with a new access and refresh token of sub.
func (s *server) pair(c *gin.Context, sub string) {
	a, err := sign(s.access, sub, time.Hour)
	if err == nil {
		var r string
		if r, err = sign(s.refresh, sub, 24*time.Hour); err == nil {
			c.JSON(http.StatusCreated, gin.H{"accessToken": a, "refreshToken": r})
			return
		}
	}
	c.JSON(http.StatusInternalServerError, gin.H{"message": err.Error()})
}

func (s *server) login(c *gin.Context) {
	var in struct {
		Username string `json:"username" binding:"required"`
		Password string `json:"password" binding:"required"`
	}
	if err := c.ShouldBindJSON(&in); err != nil {
		c.JSON(http.StatusBadRequest, gin.H{"message": err.Error()})
		return
	}
	if in.Username != username || bcrypt.CompareHashAndPassword(s.userHash, []byte(in.Password)) != nil {
		c.JSON(http.StatusUnauthorized, gin.H{"message": "Unauthorized"})
		return
	}
	s.pair(c, "user-1")
}

func (s *server) refreshPair(c *gin.Context) {
	var in struct {
		RefreshToken string `json:"refreshToken" binding:"required"`
	}
	if err := c.ShouldBindJSON(&in); err != nil {
		c.JSON(http.StatusBadRequest, gin.H{"message": err.Error()})
		return
	}
	claims, err := verify(in.RefreshToken, refreshKey)
	if err != nil {
		c.JSON(http.StatusUnauthorized, gin.H{"message": "Unauthorized"})
		return
	}
	s.pair(c, claims.Subject)
}

func (s *server) ids(c *gin.Context) {
	n, err := strconv.Atoi(c.DefaultQuery("n", "1000"))
	if err != nil || n < 1 {
		c.String(http.StatusBadRequest, "n must be a positive number")
		return
	}
	var ids []string
	if err := s.db.NewSelect().Model((*entry)(nil)).Column("id").OrderExpr("key").Limit(int64(n)).Scan(c, &ids); err != nil {
		c.String(http.StatusInternalServerError, err.Error())
		return
	}
	c.String(http.StatusOK, strings.Join(ids, "\n")+"\n")
}

// entryOut is an entry as the API shows it, with its assignee.
type entryOut struct {
	*entry
	Assignee struct {
		ID string `json:"id"`
	} `json:"assignee"`
}

func show(e *entry) entryOut {
	out := entryOut{entry: e}
	out.Assignee.ID = e.AssigneeID
	return out
}

func (s *server) get(c *gin.Context) {
	e := new(entry)
	err := s.db.NewSelect().Model(e).Where("id = ?", c.Param("id")).Scan(c)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		c.JSON(http.StatusNotFound, gin.H{"message": "Not Found"})
	case err != nil:
		c.JSON(http.StatusInternalServerError, gin.H{"message": err.Error()})
	default:
		c.JSON(http.StatusOK, show(e))
	}
}

func (s *server) create(c *gin.Context) {
	var in struct {
		Key       string `json:"key" binding:"required,max=255"`
		Type      string `json:"type" binding:"required,max=255"`
		Data      string `json:"data"`
		ExpiresIn string `json:"expiresIn"`
		Assignee  struct {
			ID string `json:"id" binding:"required"`
		} `json:"assignee" binding:"required"`
	}
	if err := c.ShouldBindJSON(&in); err != nil {
		c.JSON(http.StatusBadRequest, gin.H{"message": err.Error()})
		return
	}
	ttl := time.Hour
	if in.ExpiresIn != "" {
		var err error
		if ttl, err = time.ParseDuration(in.ExpiresIn); err != nil {
			c.JSON(http.StatusBadRequest, gin.H{"message": fmt.Sprintf("bad expiresIn %q", in.ExpiresIn)})
			return
		}
	}
	now := time.Now().UTC()
	exp := now.Add(ttl)
	e := &entry{ID: newID(), Key: in.Key, Type: in.Type, Data: in.Data, AssigneeID: in.Assignee.ID,
		ExpirationDate: &exp, DateCreated: now, DateUpdated: now, Version: 1}
	if _, err := s.db.NewInsert().Model(e).Exec(c); err != nil {
		c.JSON(http.StatusConflict, gin.H{"message": err.Error()})
		return
	}
	c.JSON(http.StatusCreated, show(e))
}
