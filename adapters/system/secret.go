package system

import (
	"crypto/rand"

	"github.com/cachegate/cachegate/ports"
)

// Secrets reads secrets from crypto/rand.
type Secrets struct{}

var _ ports.SecretSource = Secrets{}

// Secret returns n random bytes from crypto/rand.
func (Secrets) Secret(n int) ([]byte, error) {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		return nil, err
	}
	return b, nil
}
