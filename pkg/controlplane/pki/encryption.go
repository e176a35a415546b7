package pki

import (
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"os"

	apiserverv1 "k8s.io/apiserver/pkg/apis/apiserver/v1"
	"sigs.k8s.io/yaml"
)

// EncryptionKeyName names the first key of the encryption configuration;
// it appears in every stored value it encrypted, after the provider prefix
// (k8s:enc:secretbox:v1:<name>:).
const EncryptionKeyName = "atoll-1"

// EncryptedResources are the resources kube-apiserver encrypts at rest.
var EncryptedResources = []string{"secrets"}

// EnsureEncryptionConfig writes, once, the EncryptionConfiguration that
// makes kube-apiserver encrypt Secrets at rest (--encryption-provider-config)
// with a new random 32-byte secretbox key. A file that exists is left
// untouched, whatever it holds: it carries the only copy of the key, and an
// operator may have edited it to rotate keys. The identity provider comes
// last so values written before encryption was turned on stay readable.
// It reports whether it created the file.
func EnsureEncryptionConfig(f Files) (created bool, err error) {
	path := f.EncryptionConfig()
	if _, err := os.Stat(path); err == nil {
		return false, nil
	} else if !errors.Is(err, os.ErrNotExist) {
		return false, fmt.Errorf("checking %s: %w", path, err)
	}
	if err := os.MkdirAll(f.Dir, 0o700); err != nil {
		return false, fmt.Errorf("creating pki dir %s: %w", f.Dir, err)
	}
	key := make([]byte, 32)
	if _, err := rand.Read(key); err != nil {
		return false, fmt.Errorf("generating encryption key: %w", err)
	}
	data, err := encryptionConfigYAML(key)
	if err != nil {
		return false, err
	}
	if err := WriteFileAtomic(path, data, 0o600); err != nil {
		return false, err
	}
	return true, nil
}

func encryptionConfigYAML(key []byte) ([]byte, error) {
	cfg := apiserverv1.EncryptionConfiguration{
		Resources: []apiserverv1.ResourceConfiguration{{
			Resources: EncryptedResources,
			Providers: []apiserverv1.ProviderConfiguration{
				{Secretbox: &apiserverv1.SecretboxConfiguration{Keys: []apiserverv1.Key{{
					Name:   EncryptionKeyName,
					Secret: base64.StdEncoding.EncodeToString(key),
				}}}},
				{Identity: &apiserverv1.IdentityConfiguration{}},
			},
		}},
	}
	cfg.APIVersion = apiserverv1.SchemeGroupVersion.String()
	cfg.Kind = "EncryptionConfiguration"
	data, err := yaml.Marshal(cfg)
	if err != nil {
		return nil, fmt.Errorf("encoding encryption configuration: %w", err)
	}
	header := "# Encrypts Secrets at rest (kube-apiserver --encryption-provider-config).\n" +
		"# The key below is the only copy: losing this file loses every Secret.\n"
	return append([]byte(header), data...), nil
}
