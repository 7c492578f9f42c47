package buildinfo

import (
	"runtime/debug"
	"testing"
)

func TestFromInfo(t *testing.T) {
	rev := []debug.BuildSetting{{Key: "vcs.revision", Value: "73fffdb1a2b3c4d5e6f708192a3b4c5d6e7f8091"}}
	for _, tc := range []struct {
		name string
		bi   debug.BuildInfo
		want string
	}{
		{"go install of a tag", debug.BuildInfo{Main: debug.Module{Version: "v0.1.0"}}, "v0.1.0"},
		{"pseudo-version", debug.BuildInfo{Main: debug.Module{Version: "v0.0.0-20261127085600-73fffdb1a2b3+dirty"}}, "v0.0.0-20261127085600-73fffdb1a2b3+dirty"},
		{"devel with a revision", debug.BuildInfo{Main: debug.Module{Version: "(devel)"}, Settings: rev}, "73fffdb1a2b3"},
		{"devel, modified", debug.BuildInfo{Main: debug.Module{Version: "(devel)"}, Settings: append(rev, debug.BuildSetting{Key: "vcs.modified", Value: "true"})}, "73fffdb1a2b3+dirty"},
		{"nothing", debug.BuildInfo{Main: debug.Module{Version: "(devel)"}}, Dev},
	} {
		if got := fromInfo(&tc.bi); got != tc.want {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
	if got := Version("v9.9.9"); got != "v9.9.9" {
		t.Errorf("Version with a linked version: %q", got)
	}
}
