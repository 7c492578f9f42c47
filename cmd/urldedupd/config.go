package main

import (
	"bufio"
	"fmt"
	"os"
	"strings"

	"github.com/spf13/pflag"
)

// envName is the environment variable for a flag: URLDEDUPD_ and the flag's
// name in upper case with dashes as underscores (--max-batch:
// URLDEDUPD_MAX_BATCH).
func envName(flag string) string {
	return "URLDEDUPD_" + strings.ToUpper(strings.ReplaceAll(flag, "-", "_"))
}

// applyEnvAndConfig fills every flag not given on the command line from
// its environment variable, else from the config file: lines of
// "name = value" (a flag's name), '#' comments, a repeated name for a
// repeatable flag. Precedence: command line, environment, file, default.
func applyEnvAndConfig(fs *pflag.FlagSet, path string) error {
	file := map[string][]string{}
	if path != "" {
		f, err := os.Open(path)
		if err != nil {
			return usageError(fmt.Errorf("--config: %w", err))
		}
		defer f.Close()
		sc := bufio.NewScanner(f)
		for n := 1; sc.Scan(); n++ {
			line := strings.TrimSpace(sc.Text())
			if line == "" || strings.HasPrefix(line, "#") {
				continue
			}
			k, v, ok := strings.Cut(line, "=")
			k, v = strings.TrimSpace(k), strings.Trim(strings.TrimSpace(v), `"`)
			if !ok || fs.Lookup(k) == nil {
				return usageError(fmt.Errorf("%s:%d: %q is not \"flag = value\" for a known flag", path, n, line))
			}
			file[k] = append(file[k], v)
		}
		if err := sc.Err(); err != nil {
			return fmt.Errorf("--config %s: %w", path, err)
		}
	}
	var err error
	fs.VisitAll(func(f *pflag.Flag) {
		if err != nil || f.Changed {
			return
		}
		var vals []string
		if v, ok := os.LookupEnv(envName(f.Name)); ok {
			vals = []string{v}
		} else {
			vals = file[f.Name]
		}
		for _, v := range vals {
			if e := fs.Set(f.Name, v); e != nil {
				err = usageError(fmt.Errorf("%s (from %s or the config file): %w", f.Name, envName(f.Name), e))
				return
			}
		}
	})
	return err
}
