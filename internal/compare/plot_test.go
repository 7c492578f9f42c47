package compare_test

import (
	"bytes"
	"errors"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/urldedupd/urldedupd/internal/compare"
)

// A plot of measured curves is a real SVG and a real PNG, naming the
// layouts in its legend; a plot of nothing, or to another format, is an
// error.
func TestPlot(t *testing.T) {
	res, err := compare.Run(compare.Options{Synthetic: 30_000, HeldOutSynthetic: 30_000, Memory: 16 << 10, Curve: true,
		Layouts: []string{"bloom-patent", "hashtable"}})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	svg, pngPath := filepath.Join(dir, "p.svg"), filepath.Join(dir, "p.png")
	for _, p := range []string{svg, pngPath} {
		if err := compare.Plot(res, p); err != nil {
			t.Fatal(err)
		}
	}
	b, _ := os.ReadFile(svg)
	if !bytes.Contains(b, []byte("<svg")) || !bytes.Contains(b, []byte("bloom-patent measured")) || !bytes.Contains(b, []byte("hashtable formula")) {
		t.Errorf("SVG lacks its legend:\n%.300s", b)
	}
	f, _ := os.Open(pngPath)
	defer f.Close()
	if img, err := png.Decode(f); err != nil || img.Bounds().Dx() < 300 {
		t.Errorf("PNG: %v", err)
	}
	if err := compare.Plot(res, filepath.Join(dir, "p.gif")); !errors.Is(err, compare.ErrInput) {
		t.Errorf("gif: %v", err)
	}
	exact, _ := compare.Run(compare.Options{Synthetic: 1000, HeldOutSynthetic: 1000, Layouts: []string{"exact"}, Curve: true})
	if err := compare.Plot(exact, svg+"2.svg"); err == nil || !strings.Contains(err.Error(), "no rate above 0") {
		t.Errorf("plot of zeros: %v", err)
	}
}
