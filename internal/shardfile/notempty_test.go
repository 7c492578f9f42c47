package shardfile_test

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/urldedupd/urldedupd/internal/shardfile"
)

// A state is created only in an empty directory (lost+found aside); one
// holding other files is refused with ErrNotEmpty and left as it was.
func TestCreateOnlyInEmptyDirectory(t *testing.T) {
	for _, tt := range []struct {
		name  string
		files []string
		dirs  []string
		ok    bool
	}{
		{"empty", nil, nil, true},
		{"lost+found", nil, []string{"lost+found"}, true},
		{"a file", []string{".profile"}, nil, false},
		{"a directory", nil, []string{"src"}, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			for _, f := range tt.files {
				os.WriteFile(filepath.Join(dir, f), nil, 0o644)
			}
			for _, d := range tt.dirs {
				os.Mkdir(filepath.Join(dir, d), 0o755)
			}
			d, err := shardfile.Open(dir, &shardfile.Options{Create: true})
			if tt.ok {
				if err != nil {
					t.Fatal(err)
				}
				d.Close()
				return
			}
			if !errors.Is(err, shardfile.ErrNotEmpty) {
				t.Fatalf("Open with Create in a directory holding %v %v: %v, want ErrNotEmpty", tt.files, tt.dirs, err)
			}
			if ents, _ := os.ReadDir(dir); len(ents) != len(tt.files)+len(tt.dirs) {
				t.Fatalf("the refused directory now holds %d entries", len(ents))
			}
		})
	}
}
