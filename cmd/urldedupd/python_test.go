package main_test

import (
	"github.com/urldedupd/urldedupd/internal/redistest"

	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// The Python package in clients/python (a client on redis-py and a Scrapy
// dupefilter), tested by its own unittest suite run with Debian's python3
// against a real serve --resp-listen on loopback.

// pythonClient is the package's directory, from this one.
const pythonClient = "../../clients/python"

// needScrapy skips the test when python3-scrapy is missing
// (scripts/install-deps.sh installs it).
func needScrapy(t *testing.T) {
	t.Helper()
	needRESPClients(t)
	if err := exec.Command(pyRedis, "-c", "import scrapy").Run(); err != nil {
		t.Skip("python3-scrapy not installed (scripts/install-deps.sh)")
	}
}

// pythonEnv is the environment for /usr/bin/python3 with PYTHONPATH set
// (the environment's own PYTHONPATH left out) and extra added.
func pythonEnv(pythonPath string, extra ...string) []string {
	env := []string{"PYTHONPATH=" + pythonPath, "PYTHONDONTWRITEBYTECODE=1"}
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "PYTHONPATH=") {
			env = append(env, kv)
		}
	}
	return append(env, extra...)
}

// The suite in clients/python/tests, through PYTHONPATH, against one serve
// on a TCP port and a Unix socket and another that wants a token. Every
// test must run: a skipped one (the environment not passed) fails here.
func TestPythonClient(t *testing.T) {
	t.Parallel()
	needScrapy(t)
	sock := filepath.Join(t.TempDir(), "resp.sock")
	_, _, port := serveRESP(t, "--resp-socket", sock)
	const token = "py-t0ken"
	_, _, tokenPort := serveRESP(t, "--token", token)
	redisURL := redistest.Server(t) // task pools of the protocol
	abs, err := filepath.Abs(pythonClient)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, pyRedis, "-m", "unittest", "discover", "-v", "-s", "tests", "-t", ".")
	cmd.Dir = abs
	cmd.Env = pythonEnv(abs,
		"URLDEDUPD_TEST_URL=redis://127.0.0.1:"+port,
		"URLDEDUPD_TEST_SOCKET_URL=unix://"+sock,
		"URLDEDUPD_TEST_TOKEN_URL=redis://127.0.0.1:"+tokenPort,
		"URLDEDUPD_TEST_TOKEN="+token,
		"URLDEDUPD_TEST_REDIS_URL="+redisURL)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("python3 -m unittest: %v\n%s", err, out)
	}
	ran := regexp.MustCompile(`(?m)^Ran (\d+) tests?`).FindSubmatch(out)
	if ran == nil || string(ran[1]) == "0" || strings.Contains(string(out), "skipped") {
		t.Fatalf("python3 -m unittest: every test must run\n%s", out)
	}
	t.Logf("clients/python: ran %s tests", ran[1])
}

// pip installs the package from its pyproject.toml (setuptools, offline:
// no build isolation, no dependencies fetched), and the installed copy
// imports with nothing else on the path.
func TestPythonClientInstalls(t *testing.T) {
	t.Parallel()
	needScrapy(t)
	if err := exec.Command(pyRedis, "-m", "pip", "--version").Run(); err != nil {
		t.Skip("pip not installed for /usr/bin/python3")
	}
	tmp := t.TempDir()
	src := filepath.Join(tmp, "src")
	// A copy: a build writes build/ and *.egg-info next to the sources.
	if out, err := exec.Command("cp", "-r", pythonClient, src).CombinedOutput(); err != nil {
		t.Fatalf("cp: %v %s", err, out)
	}
	target := filepath.Join(tmp, "site")
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	pip := exec.CommandContext(ctx, pyRedis, "-m", "pip", "install", "-q", "--no-build-isolation", "--no-deps",
		"--no-index", "--target", target, src)
	pip.Env = pythonEnv("", "PIP_DISABLE_PIP_VERSION_CHECK=1", "PIP_ROOT_USER_ACTION=ignore")
	if out, err := pip.CombinedOutput(); err != nil {
		t.Fatalf("pip install: %v\n%s", err, out)
	}
	imp := exec.CommandContext(ctx, pyRedis, "-c",
		"import urldedupd, urldedupd.scrapy; print(urldedupd.__file__); print(urldedupd.scrapy.DupeFilter.__name__)")
	imp.Dir = tmp // not the sources' directory
	imp.Env = pythonEnv(target)
	out, err := imp.CombinedOutput()
	want := filepath.Join(target, "urldedupd", "__init__.py") + "\nDupeFilter\n"
	if err != nil || string(out) != want {
		t.Fatalf("import of the installed package: %v\n%s\nwant %q", err, out, want)
	}
}
