package pki

import (
	"crypto/rand"
	"encoding/base64"
	"fmt"
	"path/filepath"
	"strings"
)

// TokenFile is kube-apiserver's static token file (--token-auth-file).
// The control plane writes it at every start with a new token and removes
// it once the API server has read it, so it holds no credential at rest.
func (f Files) TokenFile() string { return filepath.Join(f.Dir, "tokens.csv") }

// NewToken returns a random bearer token: 256 bits, base64url without
// padding (no character the token file's CSV would have to quote).
func NewToken() (string, error) {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("generating a token: %w", err)
	}
	return base64.RawURLEncoding.EncodeToString(b), nil
}

// WriteTokenFile writes path (mode 0600) as a token file with one entry:
// token authenticates as user, with user as its uid and no groups (RBAC
// binds the user by name, as it bound the client certificate's common
// name before).
func WriteTokenFile(path, user, token string) error {
	if user == "" || strings.ContainsAny(user, ",\"\r\n") {
		return fmt.Errorf("token file %s: user name %q is empty or holds a comma, quote or line break", path, user)
	}
	if _, err := base64.RawURLEncoding.DecodeString(token); err != nil || len(token) < 43 {
		return fmt.Errorf("token file %s: the token for %s is not a 256-bit base64url token (NewToken)", path, user)
	}
	return WriteFileAtomic(path, []byte(token+","+user+","+user+"\n"), 0o600)
}
