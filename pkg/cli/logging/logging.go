// Package logging configures klog for atoll's commands.
package logging

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strconv"

	"k8s.io/klog/v2"
)

// Setup sends klog output to file (standard error when file is empty) at
// the given verbosity. With a file, only fatal messages also reach standard
// error: embedded components log harmless start-up errors that would bury
// what the user needs to see.
func Setup(file string, verbosity int) error {
	fs := flag.NewFlagSet("klog", flag.ContinueOnError)
	klog.InitFlags(fs)
	set := map[string]string{"v": strconv.Itoa(verbosity)}
	if file != "" {
		if err := os.MkdirAll(filepath.Dir(file), 0o700); err != nil {
			return fmt.Errorf("creating log directory for %s: %w", file, err)
		}
		set["logtostderr"] = "false"
		set["alsologtostderr"] = "false"
		set["log_file"] = file
		set["stderrthreshold"] = "FATAL"
		set["one_output"] = "true"
	}
	for k, v := range set {
		if err := fs.Set(k, v); err != nil {
			return fmt.Errorf("setting klog %s: %w", k, err)
		}
	}
	return nil
}
