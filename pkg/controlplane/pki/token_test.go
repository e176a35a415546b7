package pki

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/apiserver/pkg/authentication/token/tokenfile"
)

func TestNewTokenIsRandom(t *testing.T) {
	a, err := NewToken()
	if err != nil {
		t.Fatal(err)
	}
	b, err := NewToken()
	if err != nil {
		t.Fatal(err)
	}
	if a == b || len(a) != 43 {
		t.Errorf("tokens %q and %q: want two different 43-character tokens", a, b)
	}
}

func TestWriteTokenFile(t *testing.T) {
	token, err := NewToken()
	if err != nil {
		t.Fatal(err)
	}
	cases := map[string]struct {
		user, token string
		wantErr     string
	}{
		"controller-manager": {user: "atoll-controller-manager", token: token},
		"no user":            {user: "", token: token, wantErr: "user name"},
		"comma in user":      {user: "a,system:masters", token: token, wantErr: "user name"},
		"line break in user": {user: "a\nb", token: token, wantErr: "user name"},
		"short token":        {user: "u", token: "abc", wantErr: "256-bit"},
		"token with a comma": {user: "u", token: token[:20] + "," + token[21:], wantErr: "256-bit"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "tokens.csv")
			err := WriteTokenFile(path, tc.user, tc.token)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want one naming %q", err, tc.wantErr)
				}
				if _, statErr := os.Stat(path); !os.IsNotExist(statErr) {
					t.Errorf("a rejected entry left %s behind (%v)", path, statErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if info, err := os.Stat(path); err != nil || info.Mode().Perm() != 0o600 {
				t.Fatalf("token file mode: %v %v, want 0600", info, err)
			}
			// The API server's own reader: the token authenticates as the
			// user, with no group beyond those every user gets later.
			auth, err := tokenfile.NewCSV(path)
			if err != nil {
				t.Fatalf("kube-apiserver rejects the token file: %v", err)
			}
			resp, ok, err := auth.AuthenticateToken(context.Background(), tc.token)
			if err != nil || !ok {
				t.Fatalf("the token does not authenticate: %v %v", ok, err)
			}
			if got := resp.User.GetName(); got != tc.user {
				t.Errorf("user %q, want %q", got, tc.user)
			}
			if groups := resp.User.GetGroups(); len(groups) != 0 {
				t.Errorf("groups %v, want none", groups)
			}
			if _, ok, _ := auth.AuthenticateToken(context.Background(), tc.token+"x"); ok {
				t.Error("another token authenticates too")
			}
		})
	}
}
