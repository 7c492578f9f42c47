package racetest_test

import (
	"runtime/debug"
	"testing"

	"github.com/urldedupd/urldedupd/internal/racetest"
)

// Enabled agrees with the build settings the toolchain recorded in the
// test binary, and SkipSequential and SkipAllocations skip exactly when it
// is true.
func TestSkipSequential(t *testing.T) {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		t.Fatal("no build info in the test binary")
	}
	race := false
	for _, s := range info.Settings {
		if s.Key == "-race" {
			race = s.Value == "true"
		}
	}
	if racetest.Enabled != race {
		t.Fatalf("Enabled = %v, the build settings say -race=%v", racetest.Enabled, race)
	}
	for name, skip := range map[string]func(testing.TB){"sequential": racetest.SkipSequential, "allocations": racetest.SkipAllocations} {
		ran := false
		t.Run(name, func(t *testing.T) {
			skip(t)
			ran = true
		})
		if ran == race {
			t.Fatalf("%s: under the race detector: %v; the test ran: %v", name, race, ran)
		}
	}
}
