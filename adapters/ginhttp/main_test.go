package ginhttp

import (
	"os"
	"testing"

	"github.com/gin-gonic/gin"
)

// Gin's mode is the caller's to set (bootstrap sets release mode); the
// tests set test mode, which keeps Gin's debug printing out of their output.
func TestMain(m *testing.M) {
	gin.SetMode(gin.TestMode)
	os.Exit(m.Run())
}
