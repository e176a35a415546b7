// Command harness holds the two steps of `make karmada-e2e` that are easier
// in Go than in shell: writing the kubeconfig Karmada's suite expects, and
// summarising its ginkgo JSON report.
//
//	harness kubeconfig OUT CONTROL-PLANE-KUBECONFIG NAME=MEMBER-KUBECONFIG...
//	harness summary REPORT.json ATOLL-COMMIT > summary.md
package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/onsi/ginkgo/v2/types"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

func main() {
	if len(os.Args) < 2 {
		fail("usage: harness kubeconfig|summary ...")
	}
	var err error
	switch os.Args[1] {
	case "kubeconfig":
		err = kubeconfig(os.Args[2:])
	case "summary":
		err = summary(os.Args[2:])
	default:
		err = fmt.Errorf("unknown command %q (kubeconfig or summary)", os.Args[1])
	}
	if err != nil {
		fail(err.Error())
	}
}

func fail(msg string) {
	fmt.Fprintln(os.Stderr, "harness:", msg)
	os.Exit(1)
}

// kubeconfig writes one file with the contexts Karmada's suite reads:
// karmada-apiserver and karmada-host (both atoll's control plane; atoll has
// no separate host cluster) and one context per member, named as the member.
func kubeconfig(args []string) error {
	if len(args) < 2 {
		return fmt.Errorf("usage: harness kubeconfig OUT CONTROL-PLANE-KUBECONFIG [NAME=MEMBER-KUBECONFIG...]")
	}
	out := clientcmdapi.NewConfig()
	add := func(path string, names ...string) error {
		cfg, err := clientcmd.LoadFromFile(path)
		if err != nil {
			return err
		}
		ctx, ok := cfg.Contexts[cfg.CurrentContext]
		if !ok {
			return fmt.Errorf("%s: no current context", path)
		}
		cluster, user := cfg.Clusters[ctx.Cluster], cfg.AuthInfos[ctx.AuthInfo]
		if cluster == nil || user == nil {
			return fmt.Errorf("%s: current context %q lacks its cluster or user", path, cfg.CurrentContext)
		}
		if err := inline(cluster, user, filepath.Dir(path)); err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		for _, name := range names {
			out.Clusters[name] = cluster
			out.AuthInfos[name] = user
			out.Contexts[name] = &clientcmdapi.Context{Cluster: name, AuthInfo: name}
		}
		return nil
	}
	if err := add(args[1], "karmada-apiserver", "karmada-host"); err != nil {
		return err
	}
	for _, m := range args[2:] {
		name, path, ok := strings.Cut(m, "=")
		if !ok {
			return fmt.Errorf("member %q: want NAME=KUBECONFIG", m)
		}
		if err := add(path, name); err != nil {
			return err
		}
	}
	out.CurrentContext = "karmada-apiserver"
	return clientcmd.WriteToFile(*out, args[0])
}

// inline reads the files a kubeconfig names into the config, so the merged
// file does not depend on relative paths.
func inline(c *clientcmdapi.Cluster, u *clientcmdapi.AuthInfo, dir string) error {
	read := func(path string) ([]byte, error) {
		if !filepath.IsAbs(path) {
			path = filepath.Join(dir, path)
		}
		return os.ReadFile(path)
	}
	var err error
	if c.CertificateAuthority != "" {
		if c.CertificateAuthorityData, err = read(c.CertificateAuthority); err != nil {
			return err
		}
		c.CertificateAuthority = ""
	}
	if u.ClientCertificate != "" {
		if u.ClientCertificateData, err = read(u.ClientCertificate); err != nil {
			return err
		}
		u.ClientCertificate = ""
	}
	if u.ClientKey != "" {
		if u.ClientKeyData, err = read(u.ClientKey); err != nil {
			return err
		}
		u.ClientKey = ""
	}
	if u.TokenFile != "" {
		tok, err := read(u.TokenFile)
		if err != nil {
			return err
		}
		u.Token, u.TokenFile = strings.TrimSpace(string(tok)), ""
	}
	return nil
}

// tally counts one file's specs by outcome.
type tally struct{ passed, failed, skipped int }

// summary prints a Markdown summary of a ginkgo JSON report: totals, a table
// per spec file and the list of every spec with its outcome.
func summary(args []string) error {
	if len(args) != 2 {
		return fmt.Errorf("usage: harness summary REPORT.json ATOLL-COMMIT")
	}
	raw, err := os.ReadFile(args[0])
	if err != nil {
		return err
	}
	var reports []types.Report
	if err := json.Unmarshal(raw, &reports); err != nil {
		return fmt.Errorf("%s: %w", args[0], err)
	}
	files := map[string]*tally{}
	var total tally
	var lines []string
	var start time.Time
	var took time.Duration
	for _, r := range reports {
		start, took = r.StartTime, r.RunTime
		for _, s := range r.SpecReports {
			if s.LeafNodeType != types.NodeTypeIt {
				continue
			}
			file := filepath.Base(s.LeafNodeLocation.FileName)
			t := files[file]
			if t == nil {
				t = &tally{}
				files[file] = t
			}
			outcome := "skipped"
			switch {
			case s.State.Is(types.SpecStatePassed):
				t.passed++
				total.passed++
				outcome = "passed"
			case s.State.Is(types.SpecStateFailureStates):
				t.failed++
				total.failed++
				outcome = "FAILED"
			default:
				t.skipped++
				total.skipped++
			}
			lines = append(lines, fmt.Sprintf("| %s | %s | %s |", file, cell(s.FullText()), outcome))
		}
	}
	names := make([]string, 0, len(files))
	for f := range files {
		names = append(names, f)
	}
	sort.Strings(names)
	sort.Strings(lines)

	ran := total.passed + total.failed
	fmt.Printf("Run %s (%s) against atoll %s.\n\n", start.UTC().Format("2006-01-02 15:04 MST"), took.Round(time.Second), args[1])
	pct := 0.0
	if ran > 0 {
		pct = 100 * float64(total.passed) / float64(ran)
	}
	fmt.Printf("**%d passed, %d failed** of %d specs run (%.1f %% passing); %d skipped.\n\n", total.passed, total.failed, ran, pct, total.skipped)
	fmt.Println("| file | passed | failed | skipped |")
	fmt.Println("|---|---|---|---|")
	for _, f := range names {
		t := files[f]
		fmt.Printf("| %s | %d | %d | %d |\n", f, t.passed, t.failed, t.skipped)
	}
	fmt.Println("\n| file | spec | outcome |")
	fmt.Println("|---|---|---|")
	for _, l := range lines {
		fmt.Println(l)
	}
	return nil
}

// cell makes a spec's text safe inside a Markdown table cell.
func cell(s string) string {
	return strings.NewReplacer("|", "\\|", "\n", " ").Replace(s)
}
