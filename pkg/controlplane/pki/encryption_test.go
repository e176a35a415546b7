package pki

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/server/options/encryptionconfig"
	"k8s.io/apiserver/pkg/storage/value"
)

func TestEnsureEncryptionConfig(t *testing.T) {
	cases := map[string]struct {
		existing    []byte // file content before the call; nil = absent
		wantCreated bool
	}{
		"absent file is created":          {wantCreated: true},
		"existing file is kept as it is":  {existing: []byte("# edited by an operator\n")},
		"empty existing file is kept too": {existing: []byte{}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			files := Files{Dir: filepath.Join(t.TempDir(), "pki")}
			if tc.existing != nil {
				if err := os.MkdirAll(files.Dir, 0o700); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(files.EncryptionConfig(), tc.existing, 0o600); err != nil {
					t.Fatal(err)
				}
			}
			created, err := EnsureEncryptionConfig(files)
			if err != nil {
				t.Fatal(err)
			}
			if created != tc.wantCreated {
				t.Errorf("created = %v, want %v", created, tc.wantCreated)
			}
			got, err := os.ReadFile(files.EncryptionConfig())
			if err != nil {
				t.Fatal(err)
			}
			if tc.existing != nil && !bytes.Equal(got, tc.existing) {
				t.Errorf("existing file rewritten:\n%s", got)
			}
			// A second call never regenerates the key.
			if created, err := EnsureEncryptionConfig(files); err != nil || created {
				t.Errorf("second call: created = %v, err = %v; want false, nil", created, err)
			}
			again, _ := os.ReadFile(files.EncryptionConfig())
			if !bytes.Equal(got, again) {
				t.Error("encryption config changed on the second call; Secrets written with the old key would be lost")
			}
			if info, err := os.Stat(files.EncryptionConfig()); err != nil || (tc.existing == nil && info.Mode().Perm() != 0o600) {
				t.Errorf("encryption config mode %v (%v), want 0600", info.Mode().Perm(), err)
			}
			if info, err := os.Stat(files.Dir); err != nil || info.Mode().Perm() != 0o700 {
				t.Errorf("pki dir mode %v (%v), want 0700", info.Mode().Perm(), err)
			}
		})
	}
}

// TestEncryptionConfigLoadsInKubeAPIServer reads the written file with
// kube-apiserver's own loader: Secrets are written with secretbox under
// atoll's key, and values stored before encryption was on still read.
func TestEncryptionConfigLoadsInKubeAPIServer(t *testing.T) {
	ctx := context.Background()
	files := Files{Dir: t.TempDir()}
	if _, err := EnsureEncryptionConfig(files); err != nil {
		t.Fatal(err)
	}
	loaded, err := encryptionconfig.LoadEncryptionConfig(ctx, files.EncryptionConfig(), false, "test")
	if err != nil {
		t.Fatalf("kube-apiserver rejects the encryption config: %v", err)
	}
	transformer, ok := loaded.Transformers[schema.GroupResource{Resource: "secrets"}]
	if !ok {
		t.Fatalf("no transformer for secrets; have %v", loaded.Transformers)
	}
	if _, ok := loaded.Transformers[schema.GroupResource{Resource: "configmaps"}]; ok {
		t.Error("configmaps are encrypted too; only secrets were meant to be")
	}
	dataCtx := value.DefaultContext("/registry/secrets/ns/name")
	plain := []byte("cluster-admin-token")
	stored, err := transformer.TransformToStorage(ctx, plain, dataCtx)
	if err != nil {
		t.Fatal(err)
	}
	if want := "k8s:enc:secretbox:v1:" + EncryptionKeyName + ":"; !strings.HasPrefix(string(stored), want) {
		t.Errorf("stored value %q does not start with %q", stored, want)
	}
	if bytes.Contains(stored, plain) {
		t.Error("stored value contains the plaintext")
	}
	back, _, err := transformer.TransformFromStorage(ctx, stored, dataCtx)
	if err != nil || !bytes.Equal(back, plain) {
		t.Errorf("decrypting: %q, %v", back, err)
	}
	old, stale, err := transformer.TransformFromStorage(ctx, plain, dataCtx)
	if err != nil || !bytes.Equal(old, plain) {
		t.Errorf("a value stored before encryption no longer reads: %q, %v", old, err)
	}
	if !stale {
		t.Error("an unencrypted value is not reported stale, so it would never be rewritten encrypted")
	}

	// Two data dirs get two different keys.
	other := Files{Dir: t.TempDir()}
	if _, err := EnsureEncryptionConfig(other); err != nil {
		t.Fatal(err)
	}
	a, _ := os.ReadFile(files.EncryptionConfig())
	b, _ := os.ReadFile(other.EncryptionConfig())
	if bytes.Equal(a, b) {
		t.Error("two data dirs got the same encryption key")
	}
}
